"""The adjustment's design: the other columns as the linear fit reads them (indicator
columns of pooled categories, gaps filled along the feature, standardised, hinges at
quartiles), made once per table where features can share it."""

from __future__ import annotations

import hashlib
import math
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
    curved: bool = False  # numeric with over two values: its hinges enter too (see _hinges)


def _compact(table: Table, name: str) -> _Compact:
    cached = table.linear_blocks.get(name)
    if cached is not None:
        return cached
    if table.kinds[name] == NUMERIC:
        values = as_float(table.frame[name])
        # A power of two first keeps its squares finite for any input (standardised later).
        values = values / power_of_two_scale(values)
        # A value strictly between the smallest and the largest (NaN compares false).
        lo, hi = np.fmin.reduce(values), np.fmax.reduce(values)
        curved = bool(np.any((values > lo) & (values < hi))) if values.size else False
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
    if shared is None:
        return _design_of(blocks, index, own, n_curved > 0)
    names, spans, design, hinges = shared
    others = [c for c in names if c != feature]
    keep = np.concatenate([np.arange(*spans[c]) for c in others])
    curved = [c for c in others if _compact(table, c).curved]
    if not (n_curved and curved):
        return np.take(design, keep, axis=0).T, "", 0  # column-major, as a design made alone
    # A column's hinges depend on it alone: made once for the features sharing it.
    for c in curved:
        if c not in hinges:
            hinges[c] = _hinges(design[spans[c][0]])
    bends = [h for c in curved for h in hinges[c]]
    return _assembled([design[j] for j in keep], bends, n), "", len(bends)


def _hinges(column: np.ndarray) -> list[np.ndarray]:
    """Hinges ``max(z - knot, 0)`` of one standardised column at its ``OTHERS_KNOTS``
    quantiles (those strictly inside its range), not yet standardised: with the column
    itself, a piecewise-linear fit of its effect."""
    knots = np.unique(np.quantile(column, OTHERS_KNOTS))
    knots = knots[(knots > column.min()) & (knots < column.max())]
    return [np.maximum(column - k, 0.0) for k in knots]


def _assembled(columns: list[np.ndarray], hinges: list[np.ndarray], n: int) -> np.ndarray:
    """The column-major design ``[columns | hinges]`` (see :func:`_design_of`), each hinge
    centred and scaled on its own as the columns are (:func:`_standardise_column`).

    A stack of the hinges standardised row-major (numpy's sums over the rows of a 30,000 x
    27 array, one row at a time) and transposed took two thirds of a 30,000-row design."""
    k = len(columns)
    out = np.empty((k + len(hinges), n))
    for j, column in enumerate(columns):
        out[j] = column
    work = np.empty(n)
    for row, hinge in zip(out[k:], hinges, strict=True):
        row[:] = hinge
        _standardise_column(row, work)
    return out.T


def _design_of(blocks: list[tuple[str, _Compact]], index: np.ndarray, own: np.ndarray,
               with_hinges: bool = False) -> tuple[np.ndarray, str, int]:
    """The design of ``blocks`` for ``index`` rows (see :func:`_others_design`), with the
    hinges of its numeric columns of over two values (``_Compact.curved``) when asked and
    there are any; returns the design, "" and how many of its last columns are hinges.

    The design is column-major (Fortran order: each column contiguous), made a column at a
    time: each is read (or made from a category's codes), its gaps filled along ``own``,
    centred and scaled, and written once.  Row-major, each column was written across the
    rows and read back to be standardised, after the blocks were expanded and stacked:
    1,048,576 rows x 22 columns took 0.6-0.9 s of CPU, now 0.13 s.  Its users read it
    either way (the kernels of engine/_adjust.py row by row, numpy's products through
    BLAS, whose sums may round differently in the last bit).
    """
    n = index.size
    every_row = n == len(blocks[0][1].values)  # index: ascending, distinct (flatnonzero)
    read = []
    for _, b in blocks:
        values = b.values if every_row else b.values[index]
        read.append((b, values, bool(np.isnan(values).any() if not b.categorical
                                     else (values < 0).any())))
    # Columns in an order set by the values used, not by names or unused rows, so renaming,
    # reordering or blanking another row's cell changes no bit of the result.
    read.sort(key=lambda bvg: _block_order(*bvg))
    width = sum(b.width for b, _, _ in read)
    hinged = with_hinges and any(b.curved for b, _, _ in read)
    # Written where they stay: a million rows' fresh temporaries cost page faults.
    out = np.empty((width, n))
    work = np.empty(n)
    columns, bends = [], []
    line = whole = None
    at = 0
    for block, values, gaps in read:
        rows = out[at:at + block.width]
        at += block.width
        _write_block(block, values, gaps, rows)
        for column in rows:
            if gaps:
                gap = np.isnan(column)
                if gap.any():
                    if line is None:
                        line = np.column_stack([np.ones(n), own - own.mean(axis=0)])
                        whole = line.T @ line
                    _fill_column(column, gap, line, whole)
            _standardise_column(column, work)
            if hinged:
                columns.append(column)
                if block.curved:
                    bends += _hinges(column)
    if hinged:
        return _assembled(columns, bends, n), "", len(bends)
    return out.T, "", 0


def _write_block(block: _Compact, values: np.ndarray, gaps: bool, rows: np.ndarray) -> None:
    """The design columns of ``block`` (its ``values`` for the rows used, with ``gaps``
    or not) written into ``rows``, one per row, NaN where missing: :func:`_expand`'s
    columns."""
    if not block.categorical:
        rows[0] = values
        return
    missing = values < 0 if gaps else None
    for code, row in enumerate(rows, start=1):
        np.equal(values, code, out=row)
        if gaps:
            row[missing] = np.nan


def _block_order(block: _Compact, values: np.ndarray, gaps: bool) -> tuple[int, float, float]:
    """:func:`_part_order` of ``_expand(block, ...)`` from the block's values for the rows
    used (with ``gaps`` or not), without expanding it: a numeric column's sums as
    ``np.nansum`` adds them; a categorical one's indicators sum (and square) to the count
    of rows in categories 1.. ."""
    if block.categorical:
        count = float(np.count_nonzero(values >= 1))
        return block.width, count, count
    if gaps:
        return 1, float(np.nansum(values)), float(np.nansum(values**2))
    return 1, float(np.sum(values)), float(np.sum(values * values))


def _fill_column(column: np.ndarray, gap: np.ndarray, line: np.ndarray,
                 whole: np.ndarray) -> None:
    """One column's gaps filled in place with its least-squares line on the feature
    (``line``: ``[1, own - its mean]``, ``whole``: its cross-products).

    A gap filled with the mean leaves that column's effect on y in the rows that lack it,
    and when the column moves with the feature, so does that effect: x1 with a twin
    x2 = x1 + N(0, 1) missing in 30 % of the rows gave a slope of 1.56 for a true 1.
    Filled along the feature, the part that travels with x is removed with the column's
    effect (slope 1.00); a part that does not travel with x cannot tilt the curve.
    """
    if gap.all():
        column[:] = 0.0  # no value to fill from: 0, the standardised column's mean
        return
    # Normal equations of the rows that have the column: all rows' products minus the
    # gaps' (one small solve instead of a least squares over every row).
    have = line[gap]
    gram = whole - have.T @ have
    rhs = line[~gap].T @ column[~gap]
    coef = np.linalg.lstsq(gram, rhs, rcond=1e-12)[0]
    column[gap] = have @ coef


def _standardise_column(column: np.ndarray, work: np.ndarray | None = None) -> None:
    """One contiguous column centred and scaled in place (a constant one only centred):
    ``column.mean()`` and ``column.std()``'s numbers, their squares made in ``work`` (an
    array as long, overwritten) rather than in a fresh one."""
    n = column.size
    column -= np.add.reduce(column) / n
    work = np.subtract(column, np.add.reduce(column) / n, out=work)
    np.multiply(work, work, out=work)
    scale = math.sqrt(np.add.reduce(work) / n)
    if scale > 0:
        column /= scale


def _shared_design(
    table: Table, index: np.ndarray
) -> tuple[list[str], dict[str, tuple[int, int]], np.ndarray, dict[str, list]] | None:
    """The design of every column the adjustment can use, for ``index`` rows, made once per
    table and set of rows: each feature's design is its columns but the feature's own.

    Only when none of those columns has a gap in these rows (gaps are filled along each
    feature) and the whole design fits in ``MAX_ADJUST_CELLS``.  Every column is centred
    and scaled on its own (:func:`_standardise_column`), so a feature's columns taken from
    it hold the same numbers as its design made alone.  Returns the columns in design
    order, each one's span of design columns, the design (one row per design column: a
    feature's design is the rows it takes, transposed) and a cache of the columns' hinges
    (see :func:`_hinges`); None when it cannot be shared.
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
        every_row = index.size == len(table.frame)
        read = [(c, b, b.values if every_row else b.values[index]) for c, b in blocks]
        # The order _design_of gives them: by the values used (see there); no gaps here.
        read.sort(key=lambda cbv: _block_order(cbv[1], cbv[2], False))
        design = np.empty((width, index.size))
        work = np.empty(index.size)
        spans, at = {}, 0
        for c, b, values in read:
            spans[c] = (at, at + b.width)
            _write_block(b, values, False, design[at:at + b.width])
            for column in design[at:at + b.width]:
                _standardise_column(column, work)
            at += b.width
        del read
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


def standardised_basis(x: np.ndarray, x_sorted: np.ndarray) -> np.ndarray:
    """:func:`_standardised` of ``numeric_basis(x, x_sorted)``, column-major (each column
    contiguous, summed pairwise): numpy sums the rows of a row-major array of five columns
    one row at a time (a million rows: 0.11 s, against 0.02 s a column at a time)."""
    knots = basis_knots(x_sorted)
    out = np.empty((1 + knots.size, x.size))
    out[0] = x
    for row, k in zip(out[1:], knots, strict=True):  # hinge_basis's columns
        np.subtract(x, k, out=row)
        np.maximum(row, 0.0, out=row)
    work = np.empty(x.size)
    for row in out:
        _standardise_column(row, work)
    return out.T


def _standardised(a: np.ndarray) -> np.ndarray:
    """``a`` (a fresh array, or a block of columns of one, overwritten) centred and scaled
    column by column."""
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
    mean: np.ndarray  # the design columns' standardisation (_standardise_column)
    scale: np.ndarray
    hinged: np.ndarray  # design columns with hinges, and each one's knots
    hinge_knots: list[np.ndarray]
    hinge_mean: np.ndarray  # the hinges' standardisation (_assembled)
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
