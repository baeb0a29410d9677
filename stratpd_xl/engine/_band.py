"""The band: the trials (random halves of the rows, their strata and adjusted target) and
the pointwise and simultaneous bands made from them, and the rise with its band."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..params import Settings
from ._adjust import Adjustment
from ._stratify import stratify


def _half_samples(
    xb: np.ndarray, y: np.ndarray, p: Settings, rng: np.random.Generator, threads: bool = True
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``n_trials`` random halves of the rows (without replacement) and their strata.

    Halves, not bootstrap samples: the estimate ignores how often a row is repeated (a
    leaf's mean at an x value is that row's y however many copies it has), so a bootstrap
    sample acts as its ~63 % distinct rows, whose spread understates the full data's. For
    an estimate that is an average over rows, the spread of half-sample estimates equals the
    full sample's (the finite-population factor (n - m) / m is 1 at m = n / 2).
    """
    n = y.size
    m = n // 2
    for _ in range(p.n_trials):
        # The first m of a random permutation, in ascending order (marked, not sorted).
        chosen = np.zeros(n, bool)
        chosen[rng.permutation(n)[:m]] = True
        pick = np.flatnonzero(chosen)
        yield pick, stratify(xb[pick], y[pick], p.min_samples_leaf, rng, honest=p.honest,
                             threads=threads)


# Two-sided level of the band.
BAND_LEVEL = 0.95


def _spread(trials: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per point (column) of ``trials``: how many trials have it (not NaN) and their sd
    (ddof 1; NaN below two)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # points with < 2 trials: no sd
        return np.sum(~np.isnan(trials), axis=0), np.nanstd(trials, axis=0, ddof=1)


def _t_quantiles(most: int) -> np.ndarray:
    """Student's t quantile of the band's level for 0..``most`` trials (``count - 1``
    degrees of freedom; 0 below two trials): one scipy call per count, not per point (the
    inverse is iterative, and a curve of 200,000 points has a few distinct counts)."""
    from scipy.special import stdtrit  # only with trials: the import takes ~0.2 s

    crit = np.zeros(most + 1)
    if most >= 2:
        crit[2:] = stdtrit(np.arange(1, most), 0.5 + BAND_LEVEL / 2)
    return crit


def _band(trials: np.ndarray | None, centre: np.ndarray, n: int,
          bias: np.ndarray | None = None,
          spread: tuple[np.ndarray, np.ndarray] | None = None
          ) -> tuple[np.ndarray, np.ndarray]:
    """``centre`` -/+ t quantile x the half-sample trials' sd, per point (NaN trials ignored),
    widened by ``|bias|`` (the curve's estimated smoothing bias, see
    :func:`_numeric.resmoothed`) where given.

    The sd is rescaled by sqrt((n - m) / m) for halves of m of the ``n`` rows (1 for even
    n); Student's t with (trials - 1) degrees of freedom allows for an sd estimated from
    few trials, where the 2.5 / 97.5 % of 20 trials cover about 86 % of their spread.
    Points with fewer than two trials get no width.  ``spread``: the trials' count and sd
    per point (:func:`_spread`) when already known; ``trials`` is then not read.
    """
    count, sd = _spread(trials) if spread is None else spread
    m = n // 2
    sd = sd * math.sqrt((n - m) / m)
    ok = count >= 2
    half = np.zeros(centre.shape)
    half[ok] = _t_quantiles(int(count.max(initial=0)))[count[ok]] * sd[ok]
    if bias is not None:
        half = half + np.abs(bias)
    return centre - half, centre + half


#: The percentiles of x between which a curve's rise is stated ("from the 10th to the 90th
#: percentile of area, price goes up by about 48,000"): wide enough to matter, narrow
#: enough to stay where the data are.
RISE_PERCENTILES = (10, 90)


def rise_ends(x: np.ndarray) -> np.ndarray:
    """Where a curve's rise is read (see :func:`_rise`): the 10th and 90th percentiles of
    ``x`` (the rows), values the rows have (``inverted_cdf``), so a whole-number feature
    rises from one age to another, not from 24.7; when they coincide (a feature that is
    mostly one value) the rows' smallest and largest values."""
    ends = np.percentile(x, RISE_PERCENTILES, method="inverted_cdf")
    if ends[0] == ends[1]:
        ends = np.array([x.min(), x.max()])
    return ends


def _rise(ends: np.ndarray, grid: np.ndarray, pd_values: np.ndarray,
          trials: np.ndarray | None, n: int, bias: np.ndarray | None = None) -> dict[str, Any]:
    """How much the curve moves between ``ends`` (:func:`rise_ends` of the rows' x).

    ``swing`` is the curve's largest minus smallest value between the two, so a curve that
    rises and falls back is not read as flat.  With trials, ``low``/``high`` is the 95 %
    band of the rise itself (the trials' rises, as :func:`_band`), not of either end.
    """
    at = np.interp(ends, grid, pd_values)
    inside = (grid > ends[0]) & (grid < ends[1])
    between = np.concatenate([at, pd_values[inside]])
    out: dict[str, Any] = {
        "percentiles": RISE_PERCENTILES,
        "x_from": float(ends[0]), "x_to": float(ends[1]),
        "change": float(at[1] - at[0]),
        "swing": float(between.max() - between.min()),
    }
    if trials is not None:
        rises = np.array([np.interp(ends[1], grid, t) - np.interp(ends[0], grid, t)
                          if np.isfinite(t).all() else np.nan for t in trials])
        off = None if bias is None else np.diff(np.interp(ends, grid, bias))
        low, high = _band(rises[:, None], np.array([out["change"]]), n, off)
        out.update(low=float(low[0]), high=float(high[0]))
    return out


# Points a simultaneous band's critical value is computed on (evenly spread over the curve:
# neighbouring points move together, so the largest deviation over these is the curve's),
# and the Gaussian draws it simulates.
SUP_POINTS = 400
SUP_DRAWS = 4000


def _simultaneous_band(trials: np.ndarray, centre: np.ndarray, n: int,
                       bias: np.ndarray | None = None,
                       spread: tuple[np.ndarray, np.ndarray] | None = None,
                       at: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """A band that holds the whole true curve at once (95 %), and its critical value.

    Sup-t: the per-point sd (as :func:`_band`) times one critical value c, the 95 %
    quantile of the largest |deviation| / sd over the points when the points vary together
    as the trials do.  c comes from Gaussian draws with the trials' correlation (a fixed
    seed, so the band is deterministic), widened by t over normal for the few trials;
    with 20 trials the 95 % quantile of their own 20 maxima would be a guess.  Pointwise
    c is 1.96-2.09; for a curve of many points it is typically 2.5-3.5.

    ``spread``: :func:`_spread` of ``trials`` when already known.  ``at``: the points the
    band is wanted at (a curve summarised to fewer points), ``centre`` and ``bias`` given
    at those; c is the whole curve's either way.
    """
    from scipy.special import ndtri, stdtrit

    count, sd = _spread(trials) if spread is None else spread
    t = trials.shape[0]
    full = np.flatnonzero((count == t) & (sd > 0))
    crit = float(stdtrit(t - 1, 0.5 + BAND_LEVEL / 2)) if t > 1 else 0.0
    if full.size > 1 and t > 2:
        pick = full[np.unique(np.linspace(0, full.size - 1, SUP_POINTS).round().astype(int))]
        dev = trials[:, pick] - trials[:, pick].mean(axis=0)
        z = dev / sd[pick]
        draws = np.random.default_rng(0).standard_normal((SUP_DRAWS, t)) @ z / math.sqrt(t - 1)
        gauss = float(np.quantile(np.abs(draws).max(axis=1), BAND_LEVEL))
        crit = max(crit, gauss * crit / float(ndtri(0.5 + BAND_LEVEL / 2)))
    if at is not None:
        count, sd = count[at], sd[at]
    m = n // 2
    half = np.where(count >= 2, crit * np.nan_to_num(sd) * math.sqrt((n - m) / m), 0.0)
    if bias is not None:
        half = half + np.abs(bias)
    return centre - half, centre + half, crit


def _trial_y(y: np.ndarray, adj: Adjustment | None, pick: np.ndarray, leaf: np.ndarray
             ) -> np.ndarray:
    """The target of a trial's half, adjusted (when the full data were) by a refit."""
    part = None if adj is None else adj.refit(pick, leaf)
    return y[pick] if part is None else y[pick] - part
