"""A band from the strata themselves, beside today's trial band: coverage, width and CPU.

Usage::

    python benchmarks/band_from_strata.py                    # 30 seeds, 20 trials / groups
    python benchmarks/band_from_strata.py --seeds 10 --trials 10

docs/engine.md proposes a band that needs no pass and no tree beyond the curve's own (the
band of the streamed and Dask engines, and a cheaper band in memory): the strata are dealt
at random into ``T`` groups, and the curve is recomputed from the same rows and strata
with one group left out at a time (a grouped, delete-a-group jackknife); the full curve's
standard deviation is ``(T - 1) / sqrt(T)`` times the spread of those ``T`` curves, and the
pointwise and simultaneous bands are the engine's own (``_band._band``,
``_band._simultaneous_band``, with the smoothing bias where the engine counts it) on that
spread.  The variant "disjoint groups" recomputes the
curve from each group alone (batch means, ``1 / sqrt(T)``).  Today's band
(``n_trials=T``: halves of the rows, trees re-grown, the adjustment refitted) is computed in
the same run on the same data.

This is a prototype outside the engine: the curve's rows, adjusted target and strata are
taken from a normal ``sx.stratpd`` call by wrapping ``stages.slope_field`` (and the centring
weights from ``stages._centred``), then the grouped curves are made with the engine's
``slope_field`` / ``curve_on_grid``.  The cases and the scoring are those of
``benchmarks/accuracy.py --only coverage`` (the truth centred on the rows; every point of
the full-resolution curve).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accuracy import COVERAGE_CASES  # noqa: E402  (this folder, as bench_versions does)

METHODS = ("today's trials", "strata, jackknife", "strata, disjoint groups")


def _captured(df: Any, target: str, feature: str, seed: int) -> tuple[Any, dict[str, Any]]:
    """The full-resolution curve, and the x, adjusted y, strata and centring weights the
    engine used for it."""
    import stratpd_xl as sx
    from stratpd_xl.engine import api, stages

    got: dict[str, Any] = {}
    slope_field, centred, table = stages.slope_field, stages._centred, api._table

    def first_field(x, y, leaf, unique=None, **kw):
        if "x" not in got:
            got.update(x=x, y=y, leaf=leaf, kw=kw)
        return slope_field(x, y, leaf, unique, **kw)

    def first_weights(values, weights):
        got.setdefault("weights", weights)
        return centred(values, weights)

    def the_table(*args, **kwargs):
        got["table"] = table(*args, **kwargs)
        return got["table"]

    stages.slope_field, stages._centred, api._table = first_field, first_weights, the_table
    try:
        curve = sx.stratpd(df, target, feature, random_state=seed, max_points=None)
    finally:
        stages.slope_field, stages._centred, api._table = slope_field, centred, table
    return curve, got


def strata_band(got: dict[str, Any], grid: np.ndarray, centre: np.ndarray, groups: int,
                seed: int, jackknife: bool, min_slopes_per_x: int = 5
                ) -> tuple[np.ndarray, ...]:
    """Pointwise and simultaneous bands (engine units) from ``groups`` groups of strata,
    widened by the curve's smoothing bias as today's band is (where the engine has it)."""
    from stratpd_xl.engine import _band, _finish, _numeric
    from stratpd_xl.engine._numeric import curve_on_grid, integrate, slope_field

    leaf = got["leaf"]
    group = np.random.default_rng(seed).permutation(int(leaf.max()) + 1)[leaf] % groups
    trials = np.empty((groups, grid.size))
    for t in range(groups):
        rows = np.flatnonzero(group != t if jackknife else group == t)
        field = slope_field(got["x"][rows], got["y"][rows], leaf[rows], **got["kw"])
        # A group alone holds 1/T of the strata, so 1/T of the slopes behind a point.
        need = min_slopes_per_x if jackknife else max(1, min_slopes_per_x // groups)
        trials[t] = _finish._centred(curve_on_grid(field, need, grid), got["weights"])
    mean = np.nanmean(trials, axis=0)
    factor = (groups - 1) / math.sqrt(groups) if jackknife else 1 / math.sqrt(groups)
    # The engine's bands take the trials' spread as the full curve's (halves): rescaled.
    spread = mean + (trials - mean) * factor
    n = got["y"].size
    bias = ()
    if hasattr(_numeric, "resmoothed"):  # the engine's bands count the smoothing bias
        field = slope_field(got["x"], got["y"], leaf, **got["kw"])
        curve = integrate(field, min_slopes_per_x)
        bias = (_finish._centred(_numeric.resmoothed(field, curve), got["weights"])
                - _finish._centred(curve.pd, got["weights"]),)
    low, high = _band._band(spread, centre, n, *bias)
    s_low, s_high, _ = _band._simultaneous_band(spread, centre, n, *bias)
    return low, high, s_low, s_high


def run(case: str, seeds: int, groups: int) -> dict[str, dict[str, list[float]]]:
    import stratpd_xl as sx

    make, target, feature, truth_of = COVERAGE_CASES[case]
    out: dict[str, dict[str, list[float]]] = {m: {} for m in METHODS}
    for seed in range(seeds):
        df = make(seed)
        c0 = time.process_time()
        today = sx.stratpd(df, target, feature, random_state=seed, n_trials=groups,
                           max_points=None)
        cpu_today = time.process_time() - c0
        c0 = time.process_time()
        curve, got = _captured(df, target, feature, seed)
        cpu_curve = time.process_time() - c0
        y_scale = got["table"].y_scale
        x = curve["x"].to_numpy(float)
        # The curve's x in the engine's units (x divided by a power of two).
        used = df[[target, feature]].dropna()[feature].to_numpy(float)
        grid = x / (np.abs(used).max() / np.abs(got["x"]).max())
        centre = curve["pd"].to_numpy() / y_scale
        bands = {"today's trials": (today["pd_low"], today["pd_high"], today["curve_low"],
                                    today["curve_high"])}
        cpu = {"today's trials": cpu_today}
        for method, jack in ((METHODS[1], True), (METHODS[2], False)):
            c0 = time.process_time()
            bands[method] = tuple(b * y_scale for b in strata_band(
                got, grid, centre, groups, seed + 1, jack))
            cpu[method] = cpu_curve + time.process_time() - c0
        truth = truth_of(x)
        rows = df[feature].to_numpy(float)
        truth = truth - np.interp(rows[(rows >= x[0]) & (rows <= x[-1])], x, truth).mean()
        tol = 1e-9 * np.ptp(truth)  # a noise-free linear case is exact: allow for rounding
        for method, (lo, hi, s_lo, s_hi) in bands.items():
            score = out[method]
            score.setdefault("cpu", []).append(cpu[method])
            for name, (a, b) in (("pointwise", (lo, hi)), ("simultaneous", (s_lo, s_hi))):
                a, b = np.asarray(a, float), np.asarray(b, float)
                hit = (truth >= a - tol) & (truth <= b + tol)
                score.setdefault(f"{name} point", []).append(hit.mean())
                score.setdefault(f"{name} whole", []).append(float(hit.all()))
                score.setdefault(f"{name} width", []).append(np.mean(b - a) / np.ptp(truth))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--trials", type=int, default=20, help="trials of today's band and "
                    "groups of strata (default %(default)s, as accuracy.py's coverage)")
    args = ap.parse_args()
    print(f"band_from_strata.py, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{args.seeds} seeds, {args.trials} trials / groups, load average "
          f"{open('/proc/loadavg').read().split()[0]}\n")
    run(next(iter(COVERAGE_CASES)), 1, 2)  # imports and numba's kernels before the clock
    print("| case | band | pointwise: per point | whole curve | width / effect "
          "| simultaneous: per point | whole curve | width / effect | CPU s per curve |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for case in COVERAGE_CASES:
        for method, score in run(case, args.seeds, args.trials).items():
            m = {k: float(np.mean(v)) for k, v in score.items()}
            print(f"| {case} | {method} | {m['pointwise point']:.0%} "
                  f"| {m['pointwise whole']:.0%} | {m['pointwise width']:.3f} "
                  f"| {m['simultaneous point']:.0%} | {m['simultaneous whole']:.0%} "
                  f"| {m['simultaneous width']:.3f} | {m['cpu']:.3f} |", flush=True)
    print(f"\nload average after: {open('/proc/loadavg').read().split()[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
