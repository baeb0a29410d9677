"""Curves sized by information: a few hundred points out of a full-resolution curve.

A feature with 200,000 distinct values gives a curve of 200,000 points; nobody reads that
table and no chart needs it.  The points kept are points *of the full-resolution integrated
curve* (never re-estimated), chosen so that both the data and the range are covered:

* half of the budget at quantiles of the rows' x values, so dense regions keep their detail;
* half evenly spaced over the x range, so sparse tails keep their shape;
* always the first point (where the curve is 0) and the closing point.

Each kept point then summarises the full-resolution points from itself up to the next kept
one: its slope is their average slope (the rise of the full curve over that span divided by
its run, exactly), ``n_slopes`` the fewest slopes behind any of them, ``n_x`` how many there are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Summary:
    """Which full-resolution points are kept, and what each kept point stands for."""

    index: np.ndarray  # positions in the full curve, ascending, first and last included
    slope: np.ndarray  # average slope from each kept point to the next; NaN on the last
    n_slopes: np.ndarray  # fewest leaf slopes behind the points each kept point summarises
    n_x: np.ndarray  # full-resolution points each kept point summarises (last: 1)


def summary_points(curve_x: np.ndarray, row_x: np.ndarray, row_count: np.ndarray,
                   max_points: int, up_to: np.ndarray | None = None) -> np.ndarray:
    """Positions of at most ``max_points`` points of a curve, chosen by where rows and range lie.

    Parameters
    ----------
    curve_x : float array (m,)
        The full curve's x values, ascending.
    row_x, row_count : float array (k,), int array (k,)
        The feature's distinct values, ascending, and how many rows used hold each (their
        density places half the points).  Distinct values, not rows: searching sorted
        values is several times faster than 200,000 scattered ones.
    max_points : int
        Upper bound on the number of positions (at least 2).
    up_to : int array (k,), optional
        How many curve points lie at or below each ``row_x`` (when the curve's points are
        some of those values, see :meth:`Curve.points_up_to`); searched for when not given.
    """
    m = curve_x.size
    if m <= max_points:
        return np.arange(m)
    budget = max_points - 2
    by_rows = budget // 2
    by_range = budget - by_rows
    # Rows between two curve points belong to the left one (as its slope covers them).
    pos = (np.searchsorted(curve_x, row_x, side="right") if up_to is None else up_to) - 1
    mass = np.cumsum(np.bincount(pos[pos >= 0], weights=row_count[pos >= 0], minlength=m))
    quantiles = np.linspace(0, mass[-1], by_rows + 2)[1:-1]
    at_rows = np.searchsorted(mass, quantiles, side="left")
    grid = np.linspace(curve_x[0], curve_x[-1], by_range + 2)[1:-1]
    at_range = np.searchsorted(curve_x, grid, side="right") - 1
    keep = np.unique(np.concatenate([[0, m - 1], at_rows, at_range]))
    return keep[(keep >= 0) & (keep < m)]


def summarise(
    curve_x: np.ndarray, curve_pd: np.ndarray, count: np.ndarray, row_x: np.ndarray,
    row_count: np.ndarray, max_points: int, up_to: np.ndarray | None = None,
) -> Summary:
    """Kept points of a curve and what each summarises (see the module docstring).

    Parameters
    ----------
    curve_x, curve_pd : float arrays (m,)
        The full-resolution curve of the full data (not a bootstrap mean), so that the slopes
        reported are the data's own.
    count : int array (m,)
        Leaf slopes behind each full-resolution point.
    row_x, row_count : float array (k,), int array (k,)
        The feature's distinct values in the rows used, and how many rows hold each.
    max_points : int
        Most points to keep (at least 2).
    up_to : int array (k,), optional
        See :func:`summary_points`.
    """
    index = summary_points(curve_x, row_x, row_count, max_points, up_to)
    k = index.size
    n_x = np.ones(k, dtype=np.int64)
    n_x[:-1] = np.diff(index)
    slope = np.full(k, np.nan)
    if k > 1:
        slope[:-1] = np.diff(curve_pd[index]) / np.diff(curve_x[index])
    # Fewest slopes over each span [index[i], index[i+1]); the last point stands for itself.
    n_slopes = np.minimum.reduceat(count, index)
    return Summary(index, slope, n_slopes.astype(np.int64), n_x)
