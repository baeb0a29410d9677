"""The adjustment's design: the other columns as the linear fit reads them (indicator
columns of pooled categories, gaps filled along the feature, standardised, hinges at
quartiles), made once per table where features can share it."""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._adjust import ROWS_PER_COEF, basis_knots, hinge_basis
from ._table import NUMERIC, Table, as_float, codes_among, power_of_two_scale

# Categorical columns with more levels stay out of the adjustment (the strata hold them).
MAX_ADJUST_LEVELS = 50
# Most cells (rows x columns) of the adjustment's design: beyond it the curve is estimated
# without the adjustment (attrs say why), so its memory is bounded whatever the table.
MAX_ADJUST_CELLS = 40_000_000
# Quantiles where a numeric other column's piecewise-linear part bends in the adjustment
# (when there are ROWS_PER_COEF rows for those coefficients too).  Squares instead gave
# exponential and cubic effects of a codependent column a worse fit than straight lines
# (category effects 0.77-0.85 of the truth against 0.89-1.00; hinges 0.97-1.02).
OTHERS_KNOTS = (0.25, 0.5, 0.75)
# Most cells of the design with those hinges (beyond it, straight lines only): they quadruple
# a numeric table's design, and a million rows' curve is already mostly the adjustment's time.
MAX_BENDS_CELLS = 8_000_000
# Categories of another column with fewer rows share one indicator column.
RARE_LEVEL_ROWS = 30


@dataclass(frozen=True)
class _Compact:
    """One column as the adjustment reads it (all rows), made once per table."""

    values: np.ndarray  # floats (NaN missing) or category codes (-1 missing)
    width: int  # columns it becomes in the design (0: left out)
    categorical: bool
    curved: bool = False  # numeric with over two values: its hinges enter too (see _bends)


def _compact(table: Table, name: str) -> _Compact:
    cached = table.linear_blocks.get(name)
    if cached is not None:
        return cached
    if table.kinds[name] == NUMERIC:
        values = as_float(table.frame[name])
        # A power of two first keeps its squares finite for any input (standardised later).
        values = values / power_of_two_scale(values)
        have = values[~np.isnan(values)]
        curved = bool(have.size) and bool(np.any((have != have.min()) & (have != have.max())))
        block = _Compact(values, 1, False, curved)
    else:
        # Categories as indicator columns (first dropped): left out of the fit, a strong
        # category would be noise that the other columns' coefficients soak up.
        codes, cats = table.category_codes(name)
        width = 0
        if 2 <= len(cats) <= MAX_ADJUST_LEVELS:
            codes, width = _pooled_codes(codes, len(cats))
        block = _Compact(codes, width, True)
    table.linear_blocks[name] = block
    return block


def _pooled_codes(codes: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    """Codes of the indicator columns of a categorical other column: one per category with
    at least ``RARE_LEVEL_ROWS`` rows, the rarer ones pooled into one, and the most frequent
    as the baseline (code 0); -1 stays missing.  Returns the codes and the column count.

    A category of a handful of rows gets a coefficient that is those rows' noise; hundreds
    of them (Ames: 102 of 224 indicators under 30 rows) make the fit's noise swamp what it
    removes.
    """
    counts = np.bincount(codes[codes >= 0], minlength=k)
    common = counts >= RARE_LEVEL_ROWS
    group = np.where(common, np.cumsum(common) - 1, int(common.sum()))
    n_groups = int(common.sum()) + int((~common & (counts > 0)).any())
    group_rows = np.bincount(group, weights=counts, minlength=n_groups)
    base = int(np.argmax(group_rows))
    # Baseline group to 0, the others 1.. in their order.
    order = np.r_[base, np.delete(np.arange(n_groups), base)]
    rank = np.empty(n_groups, np.int64)
    rank[order] = np.arange(n_groups)
    out = np.where(codes >= 0, rank[group[np.maximum(codes, 0)]], -1)
    return out, n_groups - 1


def _expand(block: _Compact, index: np.ndarray) -> np.ndarray:
    """The design columns of ``block`` for ``index`` rows (NaN where missing)."""
    values = block.values[index]
    if not block.categorical:
        return values[:, None]
    out = (values[:, None] == np.arange(1, block.width + 1)).astype(float)
    out[values < 0] = np.nan
    return out


def _others_design(
    table: Table, feature: str, index: np.ndarray, own: np.ndarray
) -> tuple[np.ndarray | None, str, int]:
    """The other columns for ``index`` rows, standardised, gaps filled along ``own``, then
    the hinges of the numeric ones with over two values when there is room for them.

    Returns the design (or None), the reason there is none, and how many of its last
    columns are those hinges.  Its size is checked before anything is built: at least
    ``ROWS_PER_COEF`` rows per coefficient and at most ``MAX_ADJUST_CELLS`` cells, so a
    table of thousands of columns never builds it.
    """
    blocks = [(c, _compact(table, c)) for c in table.columns if c != feature]
    blocks = [(c, b) for c, b in blocks if b.width > 0]
    width = sum(b.width for _, b in blocks)
    n = index.size
    if width == 0:
        return None, "no other column can enter it", 0
    if n < ROWS_PER_COEF * (width + own.shape[1] + 1):
        return None, f"fewer than {ROWS_PER_COEF} rows per coefficient", 0
    if n * width > MAX_ADJUST_CELLS:
        return None, f"more than {MAX_ADJUST_CELLS:,} cells (rows x columns)", 0
    n_curved = len(OTHERS_KNOTS) * sum(b.curved for _, b in blocks)
    if (n < ROWS_PER_COEF * (width + n_curved + own.shape[1] + 1)
            or n * (width + n_curved) > MAX_BENDS_CELLS):
        n_curved = 0  # room for the straight lines only
    # Shared by the features of an analysis (see _each_feature); a lone curve makes its own.
    shared = None if table.linear_design is None else _shared_design(table, index)
    bends = None
    if shared is not None:
        names, spans, design, hinges = shared
        others = [c for c in names if c != feature]
        keep = np.concatenate([np.arange(*spans[c]) for c in others])
        curved = np.concatenate([np.full(spans[c][1] - spans[c][0], _compact(table, c).curved)
                                 for c in others])
        z = np.take(design, keep, axis=1)  # row-major, as a design made alone
        if n_curved and curved.any():
            # A column's hinges depend on it alone: made once for the features sharing it.
            for c in others:
                if _compact(table, c).curved and c not in hinges:
                    hinges[c] = _hinges(design[:, spans[c][0]])
            bends = _stacked([hinges[c] for c in others if _compact(table, c).curved], n)
    else:
        z, curved = _design_of(blocks, index, own)
    if n_curved and curved.any():
        # Inside a stratum a curved effect acts with the slope at the stratum's level, which
        # one straight line per column gets right only at the average level: the hinges
        # let the slope change at the column's quartiles.  Used only where they lower the
        # out-of-fold error (fit_adjustment).
        if bends is None:
            bends = _bends(z[:, curved])
        return np.column_stack([z, bends]), "", int(bends.shape[1])
    return z, "", 0


def _bends(z: np.ndarray) -> np.ndarray:
    """Hinges ``max(z - knot, 0)`` of each column of ``z`` at its ``OTHERS_KNOTS`` quantiles
    (those strictly inside its range), standardised: with the column itself, a
    piecewise-linear fit of its effect."""
    return _stacked([_hinges(z[:, j]) for j in range(z.shape[1])], z.shape[0])


def _hinges(column: np.ndarray) -> list[np.ndarray]:
    """The hinges of one column (see :func:`_bends`), not yet standardised."""
    knots = np.unique(np.quantile(column, OTHERS_KNOTS))
    knots = knots[(knots > column.min()) & (knots < column.max())]
    return [np.maximum(column - k, 0.0) for k in knots]


def _stacked(hinges: list[list[np.ndarray]], n: int) -> np.ndarray:
    cols = [h for each in hinges for h in each]
    return _standardised(np.column_stack(cols)) if cols else np.empty((n, 0))


def _design_of(blocks: list[tuple[str, _Compact]], index: np.ndarray,
               own: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The design of ``blocks`` for ``index`` rows (see :func:`_others_design`), and which
    of its columns are numeric with over two values (``_Compact.curved``)."""
    parts = [(_expand(b, index), b.curved) for _, b in blocks]
    # Columns in an order set by the values used, not by names or unused rows, so renaming,
    # reordering or blanking another row's cell changes no bit of the result.
    parts.sort(key=lambda ab: _part_order(ab[0]))
    curved = np.array([c for a, c in parts for _ in range(a.shape[1])], bool)
    z = np.column_stack([a for a, _ in parts])
    del parts
    gaps = np.isnan(z)
    if gaps.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-missing column
            means = np.nan_to_num(np.nanmean(z, axis=0))
        _fill_along(z, gaps, own - own.mean(axis=0), means)
    _standardise_columns(z)
    return z, curved


def _standardise_columns(z: np.ndarray) -> None:
    """Centre and scale every column of ``z`` in place (a constant column is only centred).

    Column by column, so that a column's numbers do not depend on which others stand
    beside it (numpy's sums over an axis of a 2-D array may), as a design shared by the
    features of an analysis needs.
    """
    for j in range(z.shape[1]):
        # On a contiguous copy: a column of a row-major design is strided, and four passes
        # over it cost 4 x what two strided copies do (1,048,576 x 22: 1.03 -> 0.27 s).
        column = z[:, j].copy()
        column -= column.mean()
        scale = column.std()
        if scale > 0:
            column /= scale
        z[:, j] = column


def _shared_design(
    table: Table, index: np.ndarray
) -> tuple[list[str], dict[str, tuple[int, int]], np.ndarray, dict[str, list]] | None:
    """The design of every column the adjustment can use, for ``index`` rows, made once per
    table and set of rows: each feature's design is its columns but the feature's own.

    Only when none of those columns has a gap in these rows (gaps are filled along each
    feature) and the whole design fits in ``MAX_ADJUST_CELLS``.  Every column is centred
    and scaled on its own (:func:`_standardise_columns`), so a feature's columns taken from
    it hold the same numbers as its design made alone.  Returns the columns in design
    order, each one's span of design columns, the design and a cache of the columns'
    hinges (see :func:`_bends`); None when it cannot be shared.
    """
    key = b"all" if index.size == len(table.frame) else hashlib.blake2b(
        index.tobytes(), digest_size=16).digest()
    cached = table.linear_design
    if cached is not None and cached[0] == key:
        return cached[1]
    blocks = [(c, _compact(table, c)) for c in table.columns]
    blocks = [(c, b) for c, b in blocks if b.width > 0]
    width = sum(b.width for _, b in blocks)
    shared = None
    if width and index.size * width <= MAX_ADJUST_CELLS and not any(
            _has_gap(b, index) for _, b in blocks):
        parts = [(c, _expand(b, index)) for c, b in blocks]
        # The order _design_of gives them: by the values used (see there).
        parts.sort(key=lambda ca: _part_order(ca[1]))
        spans, at = {}, 0
        for c, a in parts:
            spans[c] = (at, at + a.shape[1])
            at += a.shape[1]
        design = np.column_stack([a for _, a in parts])
        del parts
        _standardise_columns(design)
        # The hinges of each curved column, filled by the first feature that needs them.
        shared = (list(spans), spans, design, {})
    # Another thread may make the same design meanwhile: the same numbers, made twice.
    table.linear_design = (key, shared)
    return shared


def _has_gap(block: _Compact, index: np.ndarray) -> bool:
    values = block.values[index]
    return bool(np.isnan(values).any() if not block.categorical else (values < 0).any())


def _part_order(a: np.ndarray) -> tuple[int, float, float]:
    return a.shape[1], float(np.nansum(a)), float(np.nansum(a**2))


def _fill_along(z: np.ndarray, gaps: np.ndarray, own: np.ndarray, means: np.ndarray) -> None:
    """Fill each column's gaps (in place) with its least-squares line on the feature ``own``.

    A gap filled with the mean leaves that column's effect on y in the rows that lack it,
    and when the column moves with the feature, so does that effect: x1 with a twin
    x2 = x1 + N(0, 1) missing in 30 % of the rows gave a slope of 1.56 for a true 1.
    Filled along the feature, the part that travels with x is removed with the column's
    effect (slope 1.00); a part that does not travel with x cannot tilt the curve.
    """
    line = np.column_stack([np.ones(own.shape[0]), own])
    whole = line.T @ line
    for j in np.flatnonzero(gaps.any(axis=0)):
        gap = gaps[:, j]
        if gap.all():
            z[:, j] = means[j]
            continue
        # Normal equations of the rows that have the column: all rows' products minus the
        # gaps' (one small solve per column instead of a least squares over every row).
        have = line[gap]
        gram = whole - have.T @ have
        rhs = line[~gap].T @ z[~gap, j]
        coef = np.linalg.lstsq(gram, rhs, rcond=1e-12)[0]
        z[gap, j] = have @ coef


def _standardised(a: np.ndarray) -> np.ndarray:
    """``a`` (a fresh array, overwritten) centred and scaled column by column."""
    a -= a.mean(axis=0)
    scale = a.std(axis=0)
    a /= np.where(scale > 0, scale, 1.0)
    return a


@dataclass(frozen=True)
class _Column:
    """One other column as the design reads it (see :func:`_compact`)."""

    name: str
    categorical: bool
    scale: float  # numeric: the power of two its values are divided by
    cats: pd.Index | None  # categorical: the sample's categories ...
    pool: np.ndarray | None  # ... and each one's pooled code (0: the baseline)
    width: int


@dataclass(frozen=True)
class Design:
    """The adjustment's design fixed on a sample, to give the part of any other rows.

    Every constant the sample's design was made with (the columns' order, scales and pooled
    categories; each column's line on the feature that fills its gaps; the means and
    scales that standardise it; the knots of x's basis and of the other columns' hinges)
    and the coefficients ``beta``: :meth:`part` makes another row's design as the sample's
    was made and multiplies it by ``beta``.  A category the sample did not hold is a gap,
    filled along the feature as gaps are.
    """

    columns: list[_Column]
    knots: np.ndarray | None  # x's basis (numeric_basis); None: a categorical feature's
    n_categories: int  # ... indicators of categories 1..n_categories-1
    own_mean: np.ndarray  # ... standardised (_standardised) with these
    own_scale: np.ndarray
    own_centre: np.ndarray  # the standardised basis' mean, taken off before the fills
    fill: np.ndarray  # (columns, 1 + basis): each design column's line on [1, basis]
    constant: np.ndarray  # design columns missing in every sample row: their value
    missing: np.ndarray  # bool: which those are
    mean: np.ndarray  # the design columns' standardisation (_standardise_columns)
    scale: np.ndarray
    hinged: np.ndarray  # design columns with hinges, and each one's knots
    hinge_knots: list[np.ndarray]
    hinge_mean: np.ndarray  # the hinges' standardisation (_stacked)
    hinge_scale: np.ndarray
    beta: np.ndarray  # coefficients of the first len(beta) columns of [design | hinges]

    def part(self, frame: pd.DataFrame, x: np.ndarray) -> np.ndarray:
        """The adjustment's part of the target for the rows of ``frame`` whose feature is
        ``x`` (in the engine's units, divided by the feature's scale; a categorical
        feature's codes)."""
        n = len(frame)
        blocks = []
        for c in self.columns:
            if not c.categorical:
                blocks.append((as_float(frame[c.name]) / c.scale)[:, None])
                continue
            codes = codes_among(frame[c.name], c.cats)
            pooled = np.where(codes >= 0, c.pool[np.maximum(codes, 0)], -1)
            block = (pooled[:, None] == np.arange(1, c.width + 1)).astype(float)
            block[pooled < 0] = np.nan
            blocks.append(block)
        z = np.column_stack(blocks) if blocks else np.empty((n, 0))
        own = (((hinge_basis(x, self.knots) - self.own_mean) / self.own_scale)
               if self.knots is not None else _indicators(x, self.n_categories)
               ) - self.own_centre
        line = np.column_stack([np.ones(n), own])
        z[:, self.missing] = self.constant[self.missing]
        gaps = np.isnan(z)
        for j in np.flatnonzero(gaps.any(axis=0)):
            z[gaps[:, j], j] = line[gaps[:, j]] @ self.fill[j]
        z = (z - self.mean) / self.scale
        if self.beta.size > z.shape[1] and self.hinged.size:
            hinges = [np.maximum(z[:, j] - k, 0.0) for j, knots in
                      zip(self.hinged, self.hinge_knots, strict=True) for k in knots]
            z = np.column_stack([z, (np.column_stack(hinges) - self.hinge_mean)
                                 / self.hinge_scale])
        return z[:, : self.beta.size] @ self.beta


def _indicators(codes: np.ndarray, k: int) -> np.ndarray:
    """A categorical feature as the adjustment's own columns: categories 1..k-1."""
    return (codes[:, None] == np.arange(1, k)).astype(float)


def fit_design(table: Table, feature: str, index: np.ndarray, x: np.ndarray,
               x_sorted: np.ndarray | None, inputs: dict, n_categories: int = 0) -> Design:
    """The :class:`Design` of the feature's adjustment fitted on the ``index`` rows of
    ``table`` (its x ``x``, sorted ``x_sorted``; a categorical feature's codes ``x`` of
    ``n_categories``; ``inputs``: :class:`Adjustment`'s), made as :func:`_others_design`
    makes the sample's own design."""
    blocks = [(c, _compact(table, c)) for c in table.columns if c != feature]
    parts = [(c, b, _expand(b, index)) for c, b in blocks if b.width > 0]
    parts.sort(key=lambda cba: _part_order(cba[2]))  # the order of _design_of
    columns = []
    for c, b, _ in parts:
        if b.categorical:
            codes, cats = table.category_codes(c)
            pooled, _width = _pooled_codes(codes, len(cats))
            pool = np.full(len(cats), -1, np.int64)
            pool[codes[codes >= 0]] = pooled[codes >= 0]
            columns.append(_Column(c, True, 1.0, cats, pool, b.width))
        else:
            scale = power_of_two_scale(as_float(table.frame[c]))
            columns.append(_Column(c, False, scale, None, None, 1))
    z = np.column_stack([a for _, _, a in parts])
    if n_categories:
        knots, own = None, _indicators(x, n_categories)
        own_mean, own_scale = np.zeros(own.shape[1]), np.ones(own.shape[1])
    else:
        knots = basis_knots(x_sorted)
        basis = hinge_basis(x, knots)
        own_mean = basis.mean(axis=0)
        basis -= own_mean
        own_scale = basis.std(axis=0)
        own_scale = np.where(own_scale > 0, own_scale, 1.0)
        own = basis / own_scale
    own_centre = own.mean(axis=0)
    line = np.column_stack([np.ones(own.shape[0]), own - own_centre])
    gaps = np.isnan(z)
    missing = gaps.all(axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-missing column
        constant = np.nan_to_num(np.nanmean(z, axis=0))
    whole = line.T @ line
    fill = np.zeros((z.shape[1], line.shape[1]))
    for j in np.flatnonzero(~missing):
        gap = gaps[:, j]
        have = line[gap]
        gram = whole - have.T @ have
        fill[j] = np.linalg.lstsq(gram, line[~gap].T @ z[~gap, j], rcond=1e-12)[0]
        z[gap, j] = have @ fill[j]
    z[:, missing] = constant[missing]
    mean = z.mean(axis=0)
    z -= mean
    scale = z.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    z /= scale
    beta = np.asarray(inputs["beta"], float)
    hinged = np.flatnonzero(np.array(
        [b.curved for _, b, a in parts for _ in range(a.shape[1])], bool))
    hinge_knots, hinge_mean, hinge_scale = [], np.zeros(0), np.ones(0)
    if beta.size > z.shape[1] and hinged.size:
        for j in hinged:
            column = z[:, j]
            k = np.unique(np.quantile(column, OTHERS_KNOTS))
            hinge_knots.append(k[(k > column.min()) & (k < column.max())])
        hinges = np.column_stack([np.maximum(z[:, j] - k, 0.0)
                                  for j, ks in zip(hinged, hinge_knots, strict=True)
                                  for k in ks])
        hinge_mean = hinges.mean(axis=0)
        hinges -= hinge_mean
        hinge_scale = hinges.std(axis=0)
        hinge_scale = np.where(hinge_scale > 0, hinge_scale, 1.0)
    return Design(columns, knots, n_categories, own_mean, own_scale, own_centre, fill,
                  constant, missing,
                  mean, scale, hinged, hinge_knots, hinge_mean, hinge_scale, beta)
