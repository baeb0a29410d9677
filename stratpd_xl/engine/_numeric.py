"""StratPD for a numeric x_j: leaf slopes, their average over x, and the integral.

Averaging over unique x uses difference arrays instead of the reference's
|unique x| x |slopes| matrix: a slope over [x_a, x_b) adds itself at index a and removes
itself at index b, and one cumulative sum gives every x's total.  Sorting dominates, so the
whole step is O(n log n) time and O(n) memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SlopeField:
    """Average leaf slope at every unique x value."""

    ux: np.ndarray  # unique x, ascending
    ux_rows: np.ndarray  # rows at each unique x
    row_ux: np.ndarray  # each row's position in ux
    slope: np.ndarray  # mean slope over [ux[k], next ux) (NaN where no slope covers ux[k])
    count: np.ndarray  # number of leaf slopes averaged at ux[k]
    n_ignored: int  # rows in leaves where x did not vary: no slope possible
    n_leaves: int


def slope_field(x: np.ndarray, y: np.ndarray, leaf: np.ndarray) -> SlopeField:
    """Leaf forward-difference slopes of ``y`` on ``x``, averaged at each unique ``x``.

    Parameters
    ----------
    x, y : float arrays (n,)
        Feature and target, no missing values.
    leaf : int array (n,)
        Stratum of every row (0..n_leaves-1).
    """
    n = x.shape[0]
    ux, xi = np.unique(x, return_inverse=True)
    xi = xi.reshape(-1)
    nux = ux.size
    key = leaf.astype(np.int64) * nux + xi
    order = np.argsort(key, kind="stable")
    ks = key[order]
    start = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    g_cnt = np.diff(np.r_[start, n])
    g_mean = np.add.reduceat(y[order], start) / g_cnt
    g_leaf = ks[start] // nux
    g_xi = ks[start] % nux
    # Forward differences between neighbouring unique x inside the same leaf.
    same = g_leaf[1:] == g_leaf[:-1]
    a = g_xi[:-1][same]
    b = g_xi[1:][same]
    slopes = (g_mean[1:] - g_mean[:-1])[same] / (ux[b] - ux[a])
    groups_per_leaf = np.bincount(g_leaf)
    n_ignored = int(g_cnt[groups_per_leaf[g_leaf] == 1].sum())
    # Difference arrays: each slope covers unique-x indices a .. b-1.
    total = np.cumsum(
        np.bincount(a, weights=slopes, minlength=nux + 1)
        - np.bincount(b, weights=slopes, minlength=nux + 1)
    )[:nux]
    count = np.cumsum(np.bincount(a, minlength=nux + 1) - np.bincount(b, minlength=nux + 1))[:nux]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return SlopeField(ux, np.bincount(xi, minlength=nux), xi, mean, count, n_ignored,
                      int(groups_per_leaf.size))


@dataclass(frozen=True)
class Curve:
    """An integrated partial dependence curve."""

    x: np.ndarray
    pd: np.ndarray
    slope: np.ndarray  # NaN on the closing point, which has no forward slope of its own
    count: np.ndarray


def kept_points(field: SlopeField, min_slopes_per_x: int) -> np.ndarray:
    """Indices of the unique x values backed by enough leaf slopes.

    A leaf contributes at most one slope at any x, so a threshold above the number of leaves
    could never be met (a table with one yes/no column besides x has four honest strata):
    the threshold is capped at the number of leaves instead of silently emptying the curve.
    """
    need = max(1, min(min_slopes_per_x, field.n_leaves))
    return np.flatnonzero(field.count >= need)


def integrate(field: SlopeField, min_slopes_per_x: int) -> Curve | None:
    """Integrate the slopes at the x values backed by at least ``min_slopes_per_x`` slopes.

    The curve starts at 0 at the first kept x (the public API then centres it on the rows).
    Each kept slope is carried over the gap to
    the next kept x (as in Parr & Wilson's Algorithm 1), and the curve closes at the unique
    x right after the last kept one, so the largest value of a discrete x (e.g. the top
    product size) is not lost to the forward difference.  Returns None when no x qualifies.
    """
    keep = kept_points(field, min_slopes_per_x)
    if keep.size == 0:
        return None
    xs = field.ux[keep]
    sl = field.slope[keep]
    cnt = field.count[keep]
    last = keep[-1]
    if last + 1 < field.ux.size:
        xs = np.r_[xs, field.ux[last + 1]]
        sl = np.r_[sl, np.nan]
        cnt = np.r_[cnt, field.count[last + 1]]
    pd = np.r_[0.0, np.cumsum(sl[:-1] * np.diff(xs))] if xs.size > 1 else np.zeros(1)
    return Curve(xs, pd, sl, cnt)


def curve_on_grid(field: SlopeField, min_slopes_per_x: int, grid: np.ndarray) -> np.ndarray:
    """Integrate one (trial's) slope field over a given x grid, starting at 0.

    On each grid interval the slope is the field's kept slope at the nearest kept x at or
    to the left (the first kept slope left of its support), so every trial yields a
    curve on the same points and the trials can be averaged point by point.
    """
    keep = kept_points(field, min_slopes_per_x)
    if keep.size == 0 or grid.size == 0:
        return np.full(grid.shape, np.nan)
    xs = field.ux[keep]
    sl = field.slope[keep]
    pos = np.clip(np.searchsorted(xs, grid[:-1], side="right") - 1, 0, xs.size - 1)
    return np.r_[0.0, np.cumsum(sl[pos] * np.diff(grid))]
