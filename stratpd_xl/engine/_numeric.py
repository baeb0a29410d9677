"""StratPD for a numeric x_j: leaf slopes, their average over x, and the integral.

Averaging over unique x uses difference arrays instead of the reference's
|unique x| x |slopes| matrix: a slope over [x_a, x_b) adds itself at index a and removes
itself at index b, and one cumulative sum gives every x's total.  Sorting x dominates
(O(n log n)); the rows are then ordered by leaf and x with two counting sorts (O(n)), once
for any number of targets over the same strata (:meth:`SlopeField.for_target`).  Memory is
O(n).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .._backend import get_backend, njit


@dataclass(frozen=True)
class _Groups:
    """The rows grouped by (leaf, unique x): what a slope field needs besides the target.

    Made from the rows (:func:`slope_field`: ``order`` and ``start`` locate each group's
    rows) or from cells of rows already summed (:func:`field_from_cells`: ``sums`` holds
    each group's sum of every target, ``leaf`` its stratum)."""

    order: np.ndarray | None  # rows sorted by leaf, then x (ties in row order)
    start: np.ndarray | None  # first position in ``order`` of each (leaf, x) group
    g_cnt: np.ndarray  # rows in each group
    same: np.ndarray  # neighbouring groups in the same leaf (one slope each)
    a: np.ndarray  # unique-x index where each slope starts
    b: np.ndarray  # ... and where it ends
    dx: np.ndarray  # ux[b] - ux[a]
    w: np.ndarray | None = None  # each slope's weight (None: all alike)
    sums: np.ndarray | None = None  # (targets, groups): each group's sum of each target
    leaf: np.ndarray | None = None  # each group's stratum

    def means(self, y: np.ndarray | int) -> np.ndarray:
        """Each group's mean of the target ``y``: the rows' values, or the index of one of
        the targets summed in ``sums``."""
        if isinstance(y, (int, np.integer)):
            return self.sums[y] / self.g_cnt
        return np.add.reduceat(y[self.order], self.start) / self.g_cnt


@dataclass(frozen=True)
class SlopeField:
    """Average leaf slope at every unique x value."""

    ux: np.ndarray  # unique x, ascending
    ux_rows: np.ndarray  # rows at each unique x
    row_ux: np.ndarray | None  # each row's position in ux (None: made from cells)
    slope: np.ndarray  # mean slope over [ux[k], next ux) (NaN where no slope covers ux[k])
    count: np.ndarray  # number of leaf slopes averaged at ux[k]
    n_ignored: int  # rows in leaves where x did not vary: no slope possible
    n_leaves: int
    groups: _Groups = dataclasses.field(repr=False, compare=False)

    #: Which target the slopes are of: the rows' values, or an index into ``groups.sums``.
    target: np.ndarray | int | None = dataclasses.field(default=None, repr=False,
                                                         compare=False)

    def for_target(self, y: np.ndarray | int) -> SlopeField:
        """The field of another target over the same x and strata (the plain target beside
        an adjusted one): the rows' grouping is reused, only the slopes are taken again.
        ``y``: the rows' values, or (a field made from cells) the index of a summed target."""
        slope = _mean_slopes(self.groups, y, self.ux.size, self.count)
        return dataclasses.replace(self, slope=slope, target=y)


#: Most groups of rows along x inside one stratum when the slopes are weighted by the
#: strata's rows (yes/no targets, see :func:`slope_field`).  Measured at 2 % positives with a
#: covariate correlated 0.55 with x (20,000 rows, 8 seeds): 10-90 % rise 0.98 +- 0.14 of the
#: truth with 20 groups, 1.11 +- 0.99 with every x value its own group (docs/method.md).
GROUPS_PER_LEAF = 20


@njit
def _counting_order(keys, n_keys, rows):  # pragma: no cover - compiled
    # ``rows`` stably sorted by ``keys[rows]`` (0..n_keys-1): a counting sort, O(n + keys).
    at = np.zeros(n_keys + 1, np.int64)
    for i in range(rows.shape[0]):
        at[keys[rows[i]] + 1] += 1
    for k in range(n_keys):
        at[k + 1] += at[k]
    out = np.empty(rows.shape[0], np.int64)
    for i in range(rows.shape[0]):
        r = rows[i]
        out[at[keys[r]]] = r
        at[keys[r]] += 1
    return out


@dataclass(frozen=True)
class UniqueX:
    """Distinct values of x and where each row sits among them, made once per feature."""

    ux: np.ndarray  # distinct values, ascending
    xi: np.ndarray  # each row's position in ux
    by_x: np.ndarray | None  # rows in order of x, ties in row order (numba backend only)
    # ux's positions among the distinct x of all rows (:func:`unique_of_rows`), else None.
    at: np.ndarray | None = None


def unique_x(x: np.ndarray) -> UniqueX:
    """:class:`UniqueX` of ``x``."""
    ux, xi = np.unique(x, return_inverse=True)
    xi = xi.reshape(-1).astype(np.int64, copy=False)
    by_x = None
    if get_backend(x.size) == "numba":
        by_x = _counting_order(xi, ux.size, np.arange(xi.size, dtype=np.int64))
    return UniqueX(ux, xi, by_x)


def unique_sorted_x(x: np.ndarray) -> UniqueX:
    """:func:`unique_x` of an ascending ``x``, the same arrays without a sort: the distinct
    values where x changes, each row's position a running count, and the rows in order of
    x (numba backend) simply the rows in order."""
    n = x.size
    if n == 0:
        return unique_x(x)
    new = np.empty(n, bool)
    new[0] = True
    np.not_equal(x[1:], x[:-1], out=new[1:])
    xi = np.cumsum(new, dtype=np.int64) - 1
    by_x = np.arange(n, dtype=np.int64) if get_backend(n) == "numba" else None
    return UniqueX(x[new], xi, by_x)


def unique_of_rows(u: UniqueX, pick: np.ndarray) -> UniqueX:
    """:func:`unique_x` of ``x[pick]`` (``pick`` ascending) from ``u``, x's own, without a
    sort: the distinct values the picked rows have, in order, and their positions among
    them (a trial's half of the rows takes its distinct x from the full data's)."""
    xi_full = u.xi[pick]
    present = np.zeros(u.ux.size, bool)
    present[xi_full] = True
    rank = np.cumsum(present, dtype=np.int64) - 1
    ux = u.ux[present]
    xi = rank[xi_full]
    by_x = None
    if get_backend(pick.size) == "numba":
        by_x = _counting_order(xi, ux.size, np.arange(xi.size, dtype=np.int64))
    return UniqueX(ux, xi, by_x, np.flatnonzero(present))


def _leaf_x_order(leaf: np.ndarray, u: UniqueX) -> np.ndarray:
    """Rows sorted by leaf, then x, ties in row order: the same permutation from both
    backends (numba: a counting sort of the rows in x order by leaf, O(n))."""
    if u.by_x is not None:
        n_leaves = int(leaf.max()) + 1 if leaf.size else 0
        return _counting_order(np.ascontiguousarray(leaf, np.int64), n_leaves, u.by_x)
    return np.argsort(leaf.astype(np.int64) * u.ux.size + u.xi, kind="stable")


def _mean_slopes(g: _Groups, y: np.ndarray | int, nux: int, count: np.ndarray
                 ) -> np.ndarray:
    """Each unique x's mean over the leaf forward-difference slopes of ``y`` covering it."""
    g_mean = g.means(y)
    slopes = (g_mean[1:] - g_mean[:-1])[g.same] / g.dx
    if g.w is not None:
        slopes = slopes * g.w
        count = _cover(g.a, g.b, nux, g.w)
    # Difference arrays: each slope covers unique-x indices a .. b-1.
    total = _cover(g.a, g.b, nux, slopes)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)


@dataclass(frozen=True)
class StrataSlopes:
    """Every slope of an unweighted :class:`SlopeField` with the row its stratum starts at:
    what :func:`grid_curves_of_strata` picks whole strata from."""

    field: SlopeField
    leaf: np.ndarray  # each row's stratum
    slopes: np.ndarray  # in the field's order
    first_row: np.ndarray  # a row of each slope's stratum


def strata_slopes(field: SlopeField, y: np.ndarray, leaf: np.ndarray) -> StrataSlopes:
    """:class:`StrataSlopes` of ``field`` (made from ``y`` and ``leaf``), once per field."""
    g = field.groups
    assert g.w is None, "for unweighted fields only"
    g_mean = np.add.reduceat(y[g.order], g.start) / g.g_cnt
    slopes = (g_mean[1:] - g_mean[:-1])[g.same] / g.dx  # as _mean_slopes takes them
    return StrataSlopes(field, leaf, slopes, g.order[g.start[:-1]][g.same])


def grid_curves_of_strata(s: StrataSlopes, picks: list[np.ndarray], min_slopes_per_x: int,
                          grid_at: np.ndarray) -> list[np.ndarray]:
    """``curve_on_grid(slope_field(x[p], y[p], leaf[p]), min_slopes_per_x, grid)`` for each
    row mask ``p`` of ``picks`` that holds whole strata (and some row), without a field
    per pick: the same numbers.  ``grid`` is ``s.field.ux[grid_at]`` (a curve of the field:
    ``Curve.at``).

    A slope joins two x values inside one stratum, so a pick of whole strata has exactly
    the field's slopes of its strata, found in the same order; summed over the field's
    distinct x instead of the pick's own, each sum only gains exact zeros where the pick has
    no x value, and those x values are not read.
    """
    field, g = s.field, s.field.groups
    nux = field.ux.size
    grid = field.ux[grid_at]
    out = []
    for pick in picks:
        mine = pick[s.first_row]  # whole strata: any row of one tells
        a, b, w = g.a[mine], g.b[mine], s.slopes[mine]
        count = np.cumsum(np.bincount(a, minlength=nux + 1)
                          - np.bincount(b, minlength=nux + 1))[:nux]
        present = np.zeros(nux, bool)
        present[field.row_ux[pick]] = True
        need = max(1, min(min_slopes_per_x, int(s.leaf[pick].max()) + 1))
        kept = present & (count >= need)
        keep = np.flatnonzero(kept)
        if keep.size == 0 or grid.size == 0:
            out.append(np.full(grid.shape, np.nan))
            continue
        total = _cover(a, b, nux, w)
        sl = total[keep] / count[keep]
        # searchsorted(ux[keep], grid[:-1], side="right") - 1, counted on the distinct x
        # both are taken from.
        pos = np.clip(np.cumsum(kept)[grid_at[:-1]] - 1, 0, keep.size - 1)
        out.append(np.r_[0.0, np.cumsum(sl[pos] * np.diff(grid))])
    return out


def _cover(a: np.ndarray, b: np.ndarray, nux: int, weights: np.ndarray) -> np.ndarray:
    """Sum of ``weights`` of the spans [a, b) covering each unique-x index."""
    return np.cumsum(np.bincount(a, weights=weights, minlength=nux + 1)
                     - np.bincount(b, weights=weights, minlength=nux + 1))[:nux]


def slope_field(x: np.ndarray, y: np.ndarray, leaf: np.ndarray,
                unique: UniqueX | None = None, by_rows: bool = False) -> SlopeField:
    """Leaf forward-difference slopes of ``y`` on ``x``, averaged at each unique ``x``.

    ``by_rows`` (yes/no targets): each stratum's slopes count by its rows, not alike, and
    a stratum's rows are taken along x in at most :data:`GROUPS_PER_LEAF` groups.  A tree
    grown on a 0/1 target stops at pure nodes, so its strata are large where the
    positives are rare and small where they occur; counted alike, the small strata, where
    the chance and its slope are highest, outweigh the rows they hold (2 % positives, a
    covariate correlated 0.55 with x: rise 1.9 times the truth, even with the true chance
    as the target over the same strata).  Counted by rows, a large stratum's forward
    differences between single rows would carry its weight with one row's noise; its
    groups' means carry it with theirs.

    Parameters
    ----------
    x, y : float arrays (n,)
        Feature and target, no missing values.
    leaf : int array (n,)
        Stratum of every row (0..n_leaves-1).
    unique : UniqueX, optional
        :func:`unique_x` of ``x``, when the caller has it already.
    """
    n = x.shape[0]
    u = unique_x(x) if unique is None else unique
    ux, xi, nux = u.ux, u.xi, u.ux.size
    order = _leaf_x_order(leaf, u)
    key = leaf[order].astype(np.int64) * nux + xi[order]
    start = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    if by_rows and n:
        start, g_xi = _row_groups(order, start, leaf, xi)
    g_cnt = np.diff(np.r_[start, n])
    g_leaf = key[start] // nux
    if not by_rows:
        g_xi = key[start] % nux
    # Forward differences between neighbouring unique x inside the same leaf.
    same = g_leaf[1:] == g_leaf[:-1]
    a = g_xi[:-1][same]
    b = g_xi[1:][same]
    w = None
    if by_rows:
        w = np.bincount(leaf, minlength=int(g_leaf.max()) + 1)[g_leaf[:-1][same]].astype(float)
    groups = _Groups(order, start, g_cnt, same, a, b, ux[b] - ux[a], w)
    groups_per_leaf = np.bincount(g_leaf)
    n_ignored = int(g_cnt[groups_per_leaf[g_leaf] == 1].sum())
    count = np.cumsum(np.bincount(a, minlength=nux + 1) - np.bincount(b, minlength=nux + 1))[:nux]
    return SlopeField(ux, np.bincount(xi, minlength=nux), xi, _mean_slopes(groups, y, nux, count),
                      count, n_ignored, int(groups_per_leaf.size), groups, y)


def field_from_cells(ux: np.ndarray, leaf: np.ndarray, xi: np.ndarray, rows: np.ndarray,
                     sums: np.ndarray, target: int = 0, by_rows: bool = False,
                     x_sum: np.ndarray | None = None) -> SlopeField:
    """:func:`slope_field` from rows already summed into cells (stratum, x).

    The same field as from the rows when each cell's sums are the sums of its rows taken in
    row order with ``np.add.reduceat``, as :func:`slope_field` takes them (one chunk of
    rows); sums of chunks added together agree to rounding.

    Parameters
    ----------
    ux : float array (nux,)
        The x of every cell's column, ascending; every one held by some cell.
    leaf, xi : int arrays (cells,)
        Each cell's stratum (0..n_leaves-1, labelled by first row) and its index in ``ux``;
        cells sorted by (leaf, xi), no two alike.
    rows : int array (cells,)
        Rows in each cell.
    sums : float array (targets, cells)
        Each cell's sum of each target; the field is of ``sums[target]``
        (:meth:`SlopeField.for_target` takes another).
    by_rows : bool
        As :func:`slope_field`: each stratum's cells taken along x in at most
        :data:`GROUPS_PER_LEAF` groups, its slopes counted by its rows (a group's sum is
        then the sum of its cells' sums, which agrees with the rows' to rounding).
    x_sum : float array (cells,), optional
        Each cell's sum of x, when a cell holds a range of x (bins), not one value: the
        slopes' steps are then between the cells' (groups') mean x, not between ``ux``.
    """
    nux = ux.size
    n = int(rows.sum())
    start = np.arange(leaf.size)
    if by_rows and leaf.size:
        # The rows' positions in leaf-then-x order, as _row_groups numbers them.
        pos = np.r_[0, np.cumsum(rows)[:-1]]
        new_leaf = np.r_[True, leaf[1:] != leaf[:-1]]
        leaf_first = pos[new_leaf][np.cumsum(new_leaf) - 1]
        leaf_rows = np.bincount(leaf, weights=rows).astype(np.int64)
        p = pos - leaf_first
        coarse = leaf.astype(np.int64) * (GROUPS_PER_LEAF + 1) + (
            p * GROUPS_PER_LEAF) // leaf_rows[leaf]
        keep = np.r_[True, coarse[1:] != coarse[:-1]]
        start = np.flatnonzero(keep)
        g_rows = np.add.reduceat(rows, start)
        # Each group sits at the x of its middle row.
        g_pos = pos[start]
        middle = g_pos + (g_rows - 1) // 2
        g_xi = xi[np.searchsorted(np.cumsum(rows), middle, side="right")]
        g_sums = np.add.reduceat(sums, start, axis=1)
        g_x = None if x_sum is None else np.add.reduceat(x_sum, start)
    else:
        g_rows, g_xi, g_sums, g_x = rows, xi, sums, x_sum
    g_cnt = np.asarray(g_rows, np.int64)
    g_leaf = leaf[start]
    same = g_leaf[1:] == g_leaf[:-1]
    a = g_xi[:-1][same]
    b = g_xi[1:][same]
    if g_x is None:
        dx = ux[b] - ux[a]
    else:
        mean_x = g_x / g_cnt
        dx = (mean_x[1:] - mean_x[:-1])[same]
    w = None
    if by_rows:
        w = np.bincount(leaf, weights=rows).astype(np.int64)[g_leaf[:-1][same]].astype(float)
    groups = _Groups(None, None, g_cnt, same, a, b, dx, w, g_sums, g_leaf)
    groups_per_leaf = np.bincount(g_leaf) if g_leaf.size else np.zeros(0, np.int64)
    n_ignored = int(g_cnt[groups_per_leaf[g_leaf] == 1].sum())
    count = np.cumsum(np.bincount(a, minlength=nux + 1) - np.bincount(b, minlength=nux + 1))[:nux]
    ux_rows = np.bincount(xi, weights=rows, minlength=nux).astype(np.int64)
    del n
    return SlopeField(ux, ux_rows, None, _mean_slopes(groups, target, nux, count), count,
                      n_ignored, int(groups_per_leaf.size), groups, target)


def _row_groups(order: np.ndarray, start: np.ndarray, leaf: np.ndarray, xi: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """Groups of at most :data:`GROUPS_PER_LEAF` per stratum along x (rows of one x value
    always together): the first position of each in ``order`` (given ``start``, that of
    each (stratum, x) group), and the unique-x index of its middle row, where it sits.

    A (stratum, x) group starting at position p of a stratum of r rows goes to group
    ``p * G // r``, so a stratum of up to G rows keeps every x value apart, as without
    groups."""
    n = order.size
    lf = leaf[order]
    leaf_start = np.flatnonzero(np.r_[True, lf[1:] != lf[:-1]])
    rows = np.diff(np.r_[leaf_start, n])
    first = np.repeat(leaf_start, rows)  # each position's stratum's first position
    size = np.repeat(rows, rows)
    p = start - first[start]
    coarse = lf[start].astype(np.int64) * (GROUPS_PER_LEAF + 1) + (
        p * GROUPS_PER_LEAF) // size[start]
    keep = np.r_[True, coarse[1:] != coarse[:-1]]
    new_start = start[keep]
    middle = new_start + (np.diff(np.r_[new_start, n]) - 1) // 2
    return new_start, xi[order[middle]]


@dataclass(frozen=True)
class Curve:
    """An integrated partial dependence curve."""

    x: np.ndarray
    pd: np.ndarray
    slope: np.ndarray  # NaN on the closing point, which has no forward slope of its own
    count: np.ndarray
    at: np.ndarray | None = None  # each point's position among the field's unique x

    def points_up_to(self, n_unique: int) -> np.ndarray:
        """For each of the field's ``n_unique`` distinct x values (ascending), how many curve
        points lie at or below it: ``np.searchsorted(self.x, ux, side="right")`` without
        searching, as the points are some of those values."""
        marks = np.zeros(n_unique, np.int64)
        marks[self.at] = 1
        return np.cumsum(marks)


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
        keep = np.r_[keep, last + 1]
    pd = np.r_[0.0, np.cumsum(sl[:-1] * np.diff(xs))] if xs.size > 1 else np.zeros(1)
    return Curve(xs, pd, sl, cnt, keep)


def curve_on_grid(field: SlopeField, min_slopes_per_x: int, grid: np.ndarray,
                  at: tuple[np.ndarray, np.ndarray, int] | None = None) -> np.ndarray:
    """Integrate one (trial's) slope field over a given x grid, starting at 0.

    On each grid interval the slope is the field's kept slope at the nearest kept x at or
    to the left (the first kept slope left of its support), so every trial yields a
    curve on the same points and the trials can be averaged point by point.

    ``at``: ``(field_at, grid_at, n)``, the positions of the field's x and of the grid
    among ``n`` distinct x values both are taken from (a trial's half and the full data's
    curve): the same numbers, counted along those values instead of searched.
    """
    keep = kept_points(field, min_slopes_per_x)
    if keep.size == 0 or grid.size == 0:
        return np.full(grid.shape, np.nan)
    xs = field.ux[keep]
    sl = field.slope[keep]
    if at is None:
        pos = np.searchsorted(xs, grid[:-1], side="right") - 1
    else:
        field_at, grid_at, n = at
        marks = np.zeros(n, np.int64)
        marks[field_at[keep]] = 1
        pos = np.cumsum(marks)[grid_at[:-1]] - 1
    pos = np.clip(pos, 0, xs.size - 1)
    return np.r_[0.0, np.cumsum(sl[pos] * np.diff(grid))]


def resmoothed(field: SlopeField, curve: Curve) -> np.ndarray:
    """The curve passed once more through the estimator's own smoothing, on ``curve.x``.

    A leaf's slope over [x_a, x_b) is a secant: the mean of the true slope over that span,
    so the curve is the truth averaged over the spans of the leaves around each x (peaks
    flatten, steps smear).  Secants of the estimated curve over the same spans, averaged
    and integrated as the slopes are, give that averaging applied twice; the difference from
    the curve estimates the bias of the first (for a small smoothing, K(K f) - K f is about
    K f - f), with no re-run of the strata.
    """
    g = field.groups
    nux = field.ux.size
    if curve.x.size < 2:
        return np.zeros(curve.x.size)
    at = np.interp(field.ux, curve.x, curve.pd)
    # Only spans inside the curve: beyond its ends the curve is not known.
    inside = (g.a >= curve.at[0]) & (g.b <= curve.at[-1])
    a, b = g.a[inside], g.b[inside]
    w = np.ones(a.size) if g.w is None else g.w[inside]
    sec = (at[b] - at[a]) / g.dx[inside]
    total, count = _cover(a, b, nux, sec * w), _cover(a, b, nux, w)
    keep = curve.at[:-1]
    own = np.diff(curve.pd) / np.diff(curve.x)  # where no span lies inside: no correction
    c = count[keep]
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = np.where(c > 0, total[keep] / np.where(c > 0, c, 1), own)
    return np.r_[0.0, np.cumsum(slope * np.diff(curve.x))]


def _rise_prefix(field: SlopeField, curve: Curve, ends: tuple[float, float]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """What the curve's change from ``ends[0]`` to ``ends[1]`` gives each leaf slope.

    The change is a sum over the curve's intervals of (mean slope) x (length) and each mean
    is the (weighted) sum of the slopes covering it over their count, so a slope over
    unique-x indices [a, b) enters with ``w * (pa[b] - pa[a])``, where ``pa`` is the prefix
    sum of length / count over the unique x (and ``pb`` that of length x mean / count).
    Returns ``pa``, ``pb`` and the slopes' weights ``w``; None when there is no change.
    """
    g = field.groups
    nux = field.ux.size
    if curve.x.size < 2 or g.a.size == 0:
        return None
    w = np.ones(g.a.size) if g.w is None else g.w
    lo_x, hi_x = min(ends), max(ends)
    left, right = curve.x[:-1], curve.x[1:]
    length = np.clip(np.minimum(right, hi_x) - np.maximum(left, lo_x), 0.0, None)
    k = curve.at[:-1]
    # Unweighted, the count of slopes at each x is the field's own.
    count = (field.count if g.w is None else _cover(g.a, g.b, nux, w))[k]
    mean = field.slope[k]
    ok = (count > 0) & (length > 0) & np.isfinite(mean)
    per = np.zeros(nux)
    per_m = np.zeros(nux)
    per[k[ok]] = length[ok] / count[ok]
    per_m[k[ok]] = length[ok] * mean[ok] / count[ok]
    return np.r_[0.0, np.cumsum(per)], np.r_[0.0, np.cumsum(per_m)], w


def rise_se(field: SlopeField, curve: Curve, y: np.ndarray | None, leaf: np.ndarray | None,
            ends: tuple[float, float]) -> float:
    """Standard error of the curve's change from ``ends[0]`` to ``ends[1]``, from the strata.

    Linearised (see :func:`_rise_prefix`), every stratum adds its slopes' deviations from
    the means they enter, each scaled by length / count, and the strata are independent
    given the partition (honest strata: a row's stratum never saw its target), so the
    variance is the sum of the squared contributions of the strata.  No re-run: one pass
    over the slopes with prefix sums over x.  ``y`` and ``leaf`` None: the field's own
    target and strata (a field made from cells).
    """
    prefix = _rise_prefix(field, curve, ends)
    if prefix is None:
        return float("nan")
    pa, pb, w = prefix
    g = field.groups
    g_mean = g.means(field.target if y is None else y)
    slopes = (g_mean[1:] - g_mean[:-1])[g.same] / g.dx
    g_leaf = g.leaf if leaf is None else leaf[g.order[g.start]]
    s_leaf = g_leaf[:-1][g.same]
    contribution = w * (slopes * (pa[g.b] - pa[g.a]) - (pb[g.b] - pb[g.a]))
    phi = np.bincount(s_leaf, weights=contribution)
    return float(np.sqrt(np.sum(phi**2)))


def rise_weights(field: SlopeField, curve: Curve, ends: tuple[float, float]) -> np.ndarray:
    """Each row's weight in the curve's change from ``ends[0]`` to ``ends[1]``.

    The change is linear in the target over fixed strata: ``rise_weights(...) @ t`` is the
    change of the curve of any target ``t`` on the same field's slopes (the same points
    kept), so the change of the part another fit subtracts is one product with its
    columns instead of a slope field per column (see ``_adjust.Adjustment.size_move``).
    """
    g = field.groups
    n = g.order.size
    prefix = _rise_prefix(field, curve, ends)
    if prefix is None:
        return np.zeros(n)
    pa, _, w = prefix
    # A slope (mean of group j+1 - mean of group j) / dx enters with coef; each group's
    # rows share their group's weight.
    coef = w * (pa[g.b] - pa[g.a]) / g.dx
    first = np.flatnonzero(g.same)
    groups = g.start.size
    per_group = (np.bincount(first + 1, weights=coef, minlength=groups)
                 - np.bincount(first, weights=coef, minlength=groups))
    out = np.empty(n)
    out[g.order] = np.repeat(per_group / g.g_cnt, g.g_cnt)
    return out
