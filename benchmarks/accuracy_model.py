"""StratPD, the model's PDP and its ALE against the truth, and what ``agreement`` says, per case.

Usage::

    python benchmarks/accuracy_model.py [--seeds 3]

Each case has a known effect: a slope (numeric feature) or the range of the category effects
(categorical).  Every row gives the mean over seeds of each estimate divided by the truth
(1.00 = right) for StratPD, the model's partial dependence (PDP) and its accumulated local
effects (ALE), then the mean ``agreement`` of StratPD and PDP and the mean ``extrapolation``
(share of the rows partial dependence asks the model about that lie outside the data).  The
point: agreement is high where the columns are independent and low exactly where the model
has to extrapolate.

The data come from ``benchmarks/accuracy.py``'s generators (the same functions and seeds as the
StratPD-only benchmark) plus two cases of its own: independent columns, and x1 confined below
1 wherever x2 < 5.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import accuracy  # noqa: E402 - the shared generators, beside this file

import stratpd_xl as sx  # noqa: E402


def independent_data(seed: int) -> pd.DataFrame:
    """y = x1 + x2 + z + N(0, 0.5), every column independent U(0, 10)."""
    rng = np.random.default_rng(seed)
    n = 3000
    x1, x2, z = rng.uniform(0, 10, (3, n))
    return pd.DataFrame({"x1": x1, "x2": x2, "z": z, "y": x1 + x2 + z + rng.normal(0, 0.5, n)})


def confined_data(seed: int) -> pd.DataFrame:
    """y = x1 + x2 + z + N(0, 0.3) with x1 below 1 wherever x2 < 5 (no large x1 there)."""
    rng = np.random.default_rng(seed)
    n = 3000
    x2, z = rng.uniform(0, 10, (2, n))
    x1 = np.where(x2 < 5, rng.uniform(0, 1, n), rng.uniform(0, 10, n))
    return pd.DataFrame({"x1": x1, "x2": x2, "z": z, "y": x1 + x2 + z + rng.normal(0, 0.3, n)})


#: name -> (data, target, feature, truth, kind): a slope (numeric) or a range (categorical)
CASES = {
    "independent columns, x1 (slope 1)": (independent_data, "y", "x1", 1.0, "numeric"),
    "x1 confined below 1 where x2 < 5 (slope 1)": (confined_data, "y", "x1", 1.0, "numeric"),
    **{name: case for name, case in accuracy.CASES.items()},
}


def _effect(table: pd.DataFrame, column: str, kind: str) -> float:
    values = table[column].to_numpy(float)
    if kind == "categorical":
        return float(np.nanmax(values) - np.nanmin(values))
    ok = ~np.isnan(values)
    return float(np.polyfit(table["x"].to_numpy(float)[ok], values[ok], 1)[0])


def run_case(name: str, seeds: int) -> dict[str, float]:
    make, target, feature, truth, kind = CASES[name]
    rows = []
    for seed in range(seeds):
        data = make(seed)
        table = sx.compare(data, target, feature, random_state=seed,
                           categorical=[feature] if kind == "categorical" else ())
        rows.append({
            "stratpd": _effect(table, "stratpd", kind) / truth,
            "pdp": _effect(table, "pdp", kind) / truth,
            "ale": _effect(table, "ale", kind) / truth,
            "agreement": table.attrs["agreement"],
            "extrapolation": table.attrs["extrapolation"],
            "model_r2": table.attrs["model_r2"],
        })
    return pd.DataFrame(rows).mean().to_dict()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    start = time.perf_counter()
    print(f"estimate / truth, mean of {args.seeds} seeds (1.00 = right)\n")
    print("| case | StratPD | model PDP | model ALE | agreement | extrapolation | model R² |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in CASES:
        r = run_case(name, args.seeds)
        print(f"| {name} | {r['stratpd']:.2f} | {r['pdp']:.2f} | {r['ale']:.2f} | "
              f"{r['agreement']:.2f} | {r['extrapolation']:.0%} | {r['model_r2']:.3f} |",
              flush=True)
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
