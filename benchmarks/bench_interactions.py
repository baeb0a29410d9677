"""Interactions on known truth: the ranking, the two-way surface and by-group slopes.

Synthetic tables whose true function is known (products, conditional effects, additive
functions, correlated columns).  For each: StratPD's interaction ranking (``sx.interactions``)
against Friedman's H^2 of the *true* function, the two-way surface (``sx.stratpd2``) against
the true two-way partial dependence, and, when :mod:`stratpd_xl.model` is installed, the
model-based counterparts from one fitted gradient-boosting model (its two-way partial
dependence and Friedman's H^2) side by side.  Then by-group slopes, and the ranking's time on
a 100,000-row, 10-column table.

Usage::

    python benchmarks/bench_interactions.py            # the table (about 3-4 minutes)
    python benchmarks/bench_interactions.py --quick    # smaller tables, a sanity run
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

import stratpd_xl as sx

try:  # the model-comparison package; absent on older checkouts
    from stratpd_xl import model as mdl
except ImportError:  # pragma: no cover - depends on the checkout
    mdl = None

Truth = Callable[[pd.DataFrame], np.ndarray]


@dataclass(frozen=True)
class Case:
    name: str
    frame: pd.DataFrame  # columns x0..x5 and y
    f: Truth  # the noiseless target
    pair: tuple[str, str] | None  # the true interacting pair


def _uniform(n: int, rng: np.random.Generator) -> pd.DataFrame:
    return pd.DataFrame(rng.uniform(-1, 1, (n, 6)), columns=[f"x{i}" for i in range(6)])


def _correlated(n: int, rng: np.random.Generator) -> pd.DataFrame:
    # x0, x1, x2 correlated 0.7 with each other; uniform margins on [-1, 1].
    from scipy.stats import norm

    cov = np.eye(6)
    cov[:3, :3] = 0.7
    np.fill_diagonal(cov, 1.0)
    z = rng.multivariate_normal(np.zeros(6), cov, size=n)
    return pd.DataFrame(2 * norm.cdf(z) - 1, columns=[f"x{i}" for i in range(6)])


def cases(n: int, seed: int = 0) -> list[Case]:
    rng = np.random.default_rng(seed)
    out = []

    def add(name: str, x: pd.DataFrame, f: Truth, pair: tuple[str, str] | None,
            noise: float) -> None:
        frame = x.copy()
        frame["y"] = f(x) + rng.normal(0, noise, n)
        out.append(Case(name, frame, f, pair))

    add("product", _uniform(n, rng),
        lambda d: d["x0"] * d["x1"] + d["x2"] + 0.5 * d["x3"] ** 2, ("x0", "x1"), 0.1)
    add("conditional", _uniform(n, rng),
        lambda d: d["x0"] + np.where(d["x4"] > 0, 3.0, 1.0) * d["x1"] + d["x2"],
        ("x1", "x4"), 0.3)
    add("additive", _uniform(n, rng),
        lambda d: d["x0"] + d["x1"] + d["x2"] + 0.5 * d["x3"] ** 2 + np.sin(2 * d["x4"]),
        None, 0.3)
    add("correlated, additive", _correlated(n, rng),
        lambda d: d["x0"] + d["x1"] + d["x2"] + d["x3"], None, 0.3)
    add("correlated, product", _correlated(n, rng),
        lambda d: 2 * d["x0"] * d["x3"] + d["x1"] + d["x2"], ("x0", "x3"), 0.3)
    return out


# --------------------------------------------------------------------------- truth


def true_pd2(case: Case, a: str, b: str, va: np.ndarray, vb: np.ndarray,
             background: int = 400) -> np.ndarray:
    """The true two-way partial dependence at the points (va[i], vb[i]):
    mean over background rows of f with a and b set (Friedman's definition)."""
    rows = case.frame.sample(min(background, len(case.frame)), random_state=0)
    out = np.empty(va.size)
    for i in range(va.size):
        d = rows.copy()
        d[a], d[b] = va[i], vb[i]
        out[i] = float(np.mean(case.f(d)))
    return out


def true_h2(case: Case, a: str, b: str, n: int = 300) -> float:
    """Friedman's H^2 of the true function for the pair (a, b), over n rows."""
    rows = case.frame.sample(n, random_state=1)
    bg = case.frame.sample(300, random_state=2)
    va, vb = rows[a].to_numpy(), rows[b].to_numpy()
    joint, pa, pb = np.empty(n), np.empty(n), np.empty(n)
    for i in range(n):
        d = bg.copy()
        d[a], d[b] = va[i], vb[i]
        joint[i] = np.mean(case.f(d))
        d = bg.copy()
        d[a] = va[i]
        pa[i] = np.mean(case.f(d))
        d = bg.copy()
        d[b] = vb[i]
        pb[i] = np.mean(case.f(d))
    joint, pa, pb = joint - joint.mean(), pa - pa.mean(), pb - pb.mean()
    return float(np.sum((joint - pa - pb) ** 2) / np.sum(joint**2))


def _relative_error(estimate: np.ndarray, truth: np.ndarray, weights: np.ndarray) -> float:
    """Weighted RMS of (estimate - truth) over the truth's weighted sd, both centred."""
    ok = np.isfinite(estimate) & np.isfinite(truth) & (weights > 0)
    w = weights[ok]
    e = estimate[ok] - np.average(estimate[ok], weights=w)
    t = truth[ok] - np.average(truth[ok], weights=w)
    return float(np.sqrt(np.average((e - t) ** 2, weights=w) / np.average(t**2, weights=w)))


# --------------------------------------------------------------------------- one case


def run_case(case: Case, grid: int) -> dict[str, object]:
    frame = case.frame
    t = time.perf_counter()
    ranking = sx.interactions(frame, "y", random_state=0)
    seconds = time.perf_counter() - t
    top = ranking.iloc[0]
    top_pair = {str(top["feature_1"]), str(top["feature_2"])}
    is_true = ranking.apply(
        lambda r: case.pair is not None and {r["feature_1"], r["feature_2"]} == set(case.pair),
        axis=1)
    row: dict[str, object] = {
        "case": case.name,
        "true pair": " x ".join(case.pair) if case.pair else "none",
        "true H2": round(true_h2(case, *case.pair), 3) if case.pair else 0.0,
        "StratPD top": " x ".join(sorted(top_pair)),
        "StratPD H2-like": round(float(ranking.loc[is_true, "strength"].iloc[0]), 3)
        if is_true.any() else None,
        "StratPD max other": round(float(ranking.loc[~is_true, "strength"].max()), 3),
        "ranking s": round(seconds, 1),
    }
    pair = case.pair or ("x0", "x1")
    surface = sx.stratpd2(frame, "y", *pair, grid=grid, random_state=0)
    # Truth per cell: the true two-way PD at the grid x1, averaged over the band's rows.
    band_of = _band_of(frame[pair[1]], grid)
    band_rows = {b: frame[pair[1]].to_numpy()[band_of == k]
                 for k, b in enumerate(dict.fromkeys(surface["band"]))}
    truth = np.array([
        np.mean(true_pd2(case, *pair, np.full(40, x1),
                         np.random.default_rng(0).choice(band_rows[band], 40)))
        for x1, band in zip(surface["x1"], surface["band"], strict=True)
    ])
    weights = surface["n_rows"].to_numpy(float) * ~surface["thin"].to_numpy(bool)
    row["StratPD2 error"] = round(_relative_error(surface["pd"].to_numpy(float), truth,
                                                  weights), 3)
    if mdl is not None:
        fitted = mdl.fit_model(frame, "y", random_state=0)
        h2 = {}
        for a, b in itertools.combinations([c for c in frame.columns if c != "y"], 2):
            h2[(a, b)] = mdl.pair_table(fitted, (a, b)).attrs["h2"]
        true_key = tuple(sorted(case.pair)) if case.pair else None
        others = [v for k, v in h2.items() if k != true_key]
        best = max(h2, key=h2.get)
        row["model top"] = " x ".join(best)
        row["model H2"] = round(float(h2[true_key]), 3) if true_key else None
        row["model max other"] = round(float(max(others)), 3)
        grids = (np.unique(surface["x1"].to_numpy(float)),
                 np.unique(surface["x2"].to_numpy(float)))
        pd2 = mdl.two_way_partial_dependence(fitted, pair, grids)
        i = np.searchsorted(grids[0], surface["x1"].to_numpy(float))
        k = np.searchsorted(grids[1], surface["x2"].to_numpy(float))
        row["model PDP error"] = round(_relative_error(pd2[i, k], truth, weights), 3)
        row["model R2"] = round(float(fitted.score.get("r2", np.nan)), 3)
    return row


def _band_of(values: pd.Series, bands: int) -> np.ndarray:
    """Each row's band of the surface's second feature: quantile bands, as stratpd2 cuts."""
    v = values.to_numpy(float)
    edges = np.unique(np.quantile(v, np.linspace(0, 1, bands + 1)))[1:-1]
    return np.searchsorted(edges, v, side="right")


def by_group_rows(n: int) -> list[dict[str, object]]:
    """Slopes of price per region (truth 1, 2 and 0.5) from by-group curves and the model."""
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"price": rng.uniform(0, 10, n),
                          "region": rng.choice(["north", "south", "west"], n),
                          "ads": rng.normal(size=n)})
    frame["ads"] += 0.5 * frame["price"] / 10  # a control that moves with price
    truth = {"north": 1.0, "south": 2.0, "west": 0.5}
    slope = frame["region"].map(truth)
    frame["sales"] = slope * frame["price"] + 3 * frame["ads"] + rng.normal(0, 1, n)
    curve = sx.stratpd(frame, "sales", "price", by="region", n_trials=10, random_state=0)
    model_slopes = {}
    if mdl is not None:
        fitted = mdl.fit_model(frame, "sales", random_state=0)
        grid = np.quantile(frame["price"], np.linspace(0.05, 0.95, 10))
        codes = {c: i for i, c in enumerate(fitted.categories["region"])}
        pd2 = mdl.two_way_partial_dependence(
            fitted, ("price", "region"), (grid, np.arange(len(codes), dtype=float)))
        model_slopes = {g: float(np.polyfit(grid, pd2[:, codes[g]], 1)[0]) for g in truth}
    rows = []
    for g, true in truth.items():
        rows.append({"region": g, "true slope": true,
                     "StratPD by group": round(curve.attrs["group_slopes"][g], 3),
                     "model PDP": round(model_slopes[g], 3) if model_slopes else None})
    print("finding:", *curve.attrs["findings"])
    return rows


def timing(n: int) -> float:
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (n, 10))
    frame = pd.DataFrame(x, columns=[f"x{i}" for i in range(10)])
    frame["y"] = x[:, 0] * x[:, 1] + x[:, 2] + 0.5 * x[:, 3] ** 2 + rng.normal(0, 0.1, n)
    t, cpu = time.perf_counter(), time.process_time()
    ranking = sx.interactions(frame, "y", random_state=0)
    seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
    top = ranking.iloc[0]
    # CPU time too: on a shared machine the wall clock mostly measures the other processes.
    print(f"{n:,} rows x 10 columns: top pair {top['feature_1']} x {top['feature_2']} "
          f"(strength {top['strength']:.2f}), {len(ranking)} pairs in {seconds:.1f} s "
          f"({cpu:.1f} s of CPU; load average {os.getloadavg()[0]:.1f})")
    return seconds


def markdown(table: pd.DataFrame) -> str:
    """A pipe table for docs/method.md (no tabulate dependency)."""
    def cell(v: object) -> str:
        return "" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)

    lines = ["| " + " | ".join(map(str, table.columns)) + " |",
             "|" + "|".join("---" for _ in table.columns) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |"
              for row in table.itertuples(index=False)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small tables (a sanity run)")
    args = parser.parse_args()
    n = 4000 if args.quick else 20_000
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 30)
    if mdl is None:
        print("stratpd_xl.model is not installed: the model-based columns are left out")
    rows = [run_case(case, grid=8) for case in cases(n)]
    print(markdown(pd.DataFrame(rows)))
    print()
    print(markdown(pd.DataFrame(by_group_rows(n))))
    print()
    timing(20_000 if args.quick else 100_000)


if __name__ == "__main__":
    main()
