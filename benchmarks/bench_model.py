"""Time ``sx.compare`` (model fit included) on one feature beside scikit-learn and PyALE.

Usage::

    python benchmarks/bench_model.py [--rows 200000] [--skip-peers]

Two tables of ``--rows`` rows x 10 columns (9 features and the target): one all numbers (the
model's partial dependence uses scikit-learn's tree recursion), one with two text columns (the
recursion ignores categorical splits, so partial dependence averages predictions over 500
rows).  For each: ``sx.compare`` end to end, its parts (StratPD alone, the model fit, PDP,
ALE, the extrapolation check), and on the same fitted model scikit-learn's own
``partial_dependence`` (recursion; brute force over every row on a 20-point grid) and PyALE's
``ale`` (100 bins, no confidence band).  PyALE is not a dependency: install it into the venv
(``pip install PyALE``) or pass ``--skip-peers``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

import stratpd_xl as sx
from stratpd_xl import engine, model
from stratpd_xl.model._effects import ALE_ROWS, BRUTE_ROWS
from stratpd_xl.model.api import extrapolation_share


def table(rows: int, text: bool, seed: int = 0) -> pd.DataFrame:
    """9 features (x1 with a correlated partner x2) and y; two text columns if ``text``."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, (rows, 9))
    x[:, 1] = x[:, 0] + rng.normal(0, 1, rows)
    frame = pd.DataFrame(x, columns=[f"x{i}" for i in range(1, 10)])
    y = x[:, 0] ** 2 / 10 + x[:, 1] + np.sin(x[:, 2]) + x[:, 3] * x[:, 4] / 10
    if text:
        region = rng.choice(["north", "south", "east", "west"], rows)
        shop = rng.choice([f"shop {i}" for i in range(30)], rows)
        frame["x8"], frame["x9"] = region, shop
        y = y + 3 * (region == "north")
    frame["y"] = y + rng.normal(0, 1, rows)
    return frame


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = call()
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--skip-peers", action="store_true")
    args = parser.parse_args()

    # Warm numba and scikit-learn once, off the clock.
    sx.compare(table(2_000, True), "y", "x1", random_state=0)
    print(f"{args.rows:,} rows x 10 columns, feature x1 (backend {engine.get_backend()})\n")
    print("| table | step | seconds | note |")
    print("|---|---|---:|---|")
    for text in (False, True):
        run(text, args.rows, args.skip_peers)


def run(text: bool, rows: int, skip_peers: bool) -> None:
    """The rows of one table."""
    from sklearn.inspection import partial_dependence

    name = "with 2 text columns" if text else "all numbers"
    frame = table(rows, text)
    total, result = timed(lambda: sx.compare(frame, "y", "x1", random_state=0))
    a = result.attrs
    print(f"| {name} | sx.compare, end to end | {total:.1f} | agreement "
          f"{a['agreement']:.2f}, model R² {a['model_r2']:.3f} |", flush=True)
    t, curve = timed(lambda: sx.stratpd(frame, "y", "x1", random_state=0))
    print(f"| {name} | StratPD alone | {t:.1f} | {len(curve)} points |", flush=True)
    t, fitted = timed(lambda: model.fit_model(frame, "y", random_state=0))
    print(f"| {name} | model fit (50,000 rows, early stopping) | {t:.1f} | "
          f"{fitted.score['n_iter']} rounds |", flush=True)
    grid = model.curve_grid(fitted, curve, "x1")
    t, _ = timed(lambda: model.partial_dependence(fitted, "x1", grid))
    method = f"brute, {BRUTE_ROWS:,} rows" if fitted.categories else "recursion"
    print(f"| {name} | PDP on StratPD's {grid.size} points | {t:.2f} | {method} |",
          flush=True)
    t, _ = timed(lambda: model.accumulated_local_effects(fitted, "x1", grid))
    print(f"| {name} | ALE (one predict call) | {t:.2f} | 100 bins, "
          f"{min(rows, ALE_ROWS):,} rows |", flush=True)
    t, _ = timed(lambda: extrapolation_share(fitted, "x1"))
    print(f"| {name} | extrapolation check | {t:.2f} | 5,000 + 5,000 rows |", flush=True)
    if skip_peers:
        return
    est, x = fitted.estimator, fitted.x
    j = fitted.index("x1")
    cats = [fitted.index(c) for c in fitted.categories] or None
    if not fitted.categories:
        t, _ = timed(lambda: partial_dependence(est, x, [j], method="recursion",
                                                grid_resolution=100))
        print(f"| {name} | scikit-learn partial_dependence, recursion | {t:.2f} | "
              "100-point grid |", flush=True)
    t, _ = timed(lambda: partial_dependence(est, x, [j], method="brute", grid_resolution=20,
                                            categorical_features=cats))
    print(f"| {name} | scikit-learn partial_dependence, brute | {t:.1f} | every row, "
          "20-point grid |", flush=True)
    from PyALE import ale

    columns = [str(c) for c in fitted.columns]

    class Wrapped:
        # PyALE calls predict on a DataFrame with the features' names.
        def predict(self, frame: pd.DataFrame) -> np.ndarray:
            return fitted.predict(frame[columns].to_numpy(float))

    x_frame = pd.DataFrame(x, columns=columns)
    t, _ = timed(lambda: ale(X=x_frame, model=Wrapped(), feature=["x1"], grid_size=100,
                             include_CI=False, plot=False))
    print(f"| {name} | PyALE ale | {t:.1f} | every row, 100 bins |", flush=True)



if __name__ == "__main__":
    main()
