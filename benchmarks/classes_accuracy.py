"""A curve per class against the truth, beside a classifier's partial dependence per class.

Usage::

    python benchmarks/classes_accuracy.py [--seeds 3] [--rows 3000]

The truth: three classes a, b, c with softmax chances of the logits (0, 3 x + z / 2,
z - 2 x), x uniform on [0, 1], z standard normal, and a third column g that does nothing.
Each class's true partial dependence on x (z averaged over the rows, in points, centred on
the rows) is compared, between x's 10th and 90th percentiles, with

* ours: ``stratpd(data, "y", "x", classes=True)`` (one stratification, no model);
* scikit-learn's ``HistGradientBoostingClassifier`` and ``partial_dependence`` per class
  (``predict_proba``), centred on the rows alike.

Columns: root mean square error and largest error (points) per class, averaged over seeds;
the largest |sum of the class curves| (ours: 0 to rounding by construction); CPU seconds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import stratpd_xl as sx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' shared cases
from tests.synthetic import three_class_truth, three_classes  # noqa: E402


def centred(values: np.ndarray, grid: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``values`` on ``grid`` less their mean over the rows' x (interpolated)."""
    return values - np.interp(x, grid, values).mean()


def errors(curves: np.ndarray, grid: np.ndarray, true: np.ndarray, x: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = np.percentile(x, [10, 90])
    inner = (grid >= lo) & (grid <= hi)
    diff = curves[:, inner] - true[inner].T
    return np.sqrt(np.mean(diff**2, axis=1)), np.abs(diff).max(axis=1)


def ours(frame: pd.DataFrame, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float]:
    start = time.process_time()
    table = sx.stratpd(frame, "y", "x", classes=True)
    cpu = time.process_time() - start
    parts = [p for _, p in table.groupby("class", observed=True)]
    grid = parts[0]["x"].to_numpy()
    curves = np.array([p["pd"].to_numpy() for p in parts])
    x = frame["x"].to_numpy()
    rmse, worst = errors(curves, grid, three_class_truth(grid, x, z), x)
    return rmse, worst, float(np.abs(curves.sum(axis=0)).max()), cpu


def model(frame: pd.DataFrame, z: np.ndarray, seed: int
          ) -> tuple[np.ndarray, np.ndarray, float, float]:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.inspection import partial_dependence

    start = time.process_time()
    features = frame[["x", "z", "g"]]
    fitted = HistGradientBoostingClassifier(random_state=seed).fit(features, frame["y"])
    x = frame["x"].to_numpy()
    grid = np.quantile(x, np.linspace(0, 1, 100))
    pd_ = partial_dependence(fitted, features, ["x"], custom_values={"x": grid},
                             kind="average", response_method="predict_proba",
                             method="brute")
    cpu = time.process_time() - start
    curves = np.array([centred(100 * row, grid, x) for row in pd_["average"]])
    rmse, worst = errors(curves, grid, three_class_truth(grid, x, z), x)
    return rmse, worst, float(np.abs(curves.sum(axis=0)).max()), cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--rows", type=int, default=3000)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}, {args.seeds} seeds, {args.rows:,} rows\n")
    print("| method | RMSE a / b / c (points) | largest error a / b / c | largest sum of "
          "the class curves | CPU s |")
    print("|---|---|---|---:|---:|")
    for name, run in (("stratpd-xl, classes=True", lambda f, z, s: ours(f, z)),
                      ("HistGradientBoostingClassifier + partial_dependence", model)):
        rows = [run(*three_classes(args.rows, seed, g_text=False), seed)
                for seed in range(args.seeds)]
        rmse = np.mean([r[0] for r in rows], axis=0)
        worst = np.mean([r[1] for r in rows], axis=0)
        total = max(r[2] for r in rows)
        cpu = np.median([r[3] for r in rows])
        print(f"| {name} | {' / '.join(f'{v:.1f}' for v in rmse)} | "
              f"{' / '.join(f'{v:.1f}' for v in worst)} | {total:.1e} | {cpu:.2f} |")


if __name__ == "__main__":
    main()
