"""An analysis in the four stages of docs/engine.md, "The engine as partial sums".

1. :func:`fit_strata` fits, on a sample of the rows (all of them when they fit), what
   depends on rows together: the other columns' bins, the two honest trees, x's bins, the
   adjustment, the leak, duplicate and gap checks and the band's trials.  The result, a
   :class:`Strata`, is picklable and holds fixed encodings, so every chunk is typed and
   binned as the sample was.
2. :func:`pass_chunk` reduces one chunk of rows (a ``DataFrame`` indexed by the rows'
   numbers in the whole input) to a :class:`Partial`: counts and sums per (stratum, x bin)
   and a few over all rows; no tree is grown.
3. ``Partial + Partial`` adds two (``sum(partials)`` adds many), in any order and grouping:
   chunks of a file, threads, Dask partitions.
4. :func:`finish` turns the sums of every row into the curve, its band and its warnings:
   the DataFrame :func:`stratpd_xl.stratpd` returns; :func:`analyse` finishes many
   features at once into the ranking of :func:`stratpd_xl.impact`.

The in-memory call is the same four stages with the table as the sample and as the one
chunk, and gives the same numbers as :func:`stratpd_xl.stratpd` to the bit; chunks of a
table that fits give them to rounding (1e-12).  Strata fitted on a sample of a larger
input put x into at most :data:`X_BINS` bins of the sample's quantiles, place each row
outside the sample with one of the two trees and give it the adjustment's part from the
design fixed on the sample (:class:`_design.Design`).

Examples
--------
>>> strata = fit_strata(sample, "price", "area", n_rows=rows_in_file)  # doctest: +SKIP
>>> total = sum(pass_chunk(strata, chunk) for chunk in chunks)  # doctest: +SKIP
>>> curve = finish(strata, total)  # doctest: +SKIP

CatStratPD goes through the same four functions (``kind="categorical"``, or a text
feature): its cells are (stratum, category), summed as :func:`category_effects` sums
them, with each cell's squares about its mean merged across chunks for the covariance.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from .._backend import get_backend
from ..errors import StratPDInputError
from ..params import Settings
from ..schema import MISSING, Note
from ._adjust import SIZE_ROWS, Adjustment, effects_scale, size_check
from ._band import (
    _band,
    _half_samples,
    _rise,
    _simultaneous_band,
    _spread,
    _trial_y,
    rise_ends,
)
from ._categorical import (
    category_cells,
    category_effects,
    contrast_weights,
    effects_of_cells,
)
from ._classes import CLASS, read_classes
from ._design import MAX_ADJUST_LEVELS, Design, fit_design, standardised_basis
from ._finish import (
    TableFacts,
    _adjust_attrs,
    _attrs,
    _centred,
    _contrast,
    _data_strip,
    _evidence_rows,
    _impact,
    _numeric_x_out,
    _params,
    _ranking,
    _row_weights,
    _scale_shape,
    _within,
    by_evidence,
)
from ._fit import _adjustment, _rows_for, _table
from ._groups import short_number
from ._leaks import Leak
from ._missing import (
    Blanks,
    missing_attrs,
    missing_effect_of_sums,
    with_missing_category,
    with_missing_row,
)
from ._numeric import (
    SlopeField,
    _counting_order,
    curve_on_grid,
    field_from_cells,
    integrate,
    resmoothed,
    rise_se,
    rise_weights,
    slope_field,
    unique_of_rows,
    unique_x,
)
from ._shape import curve_shape
from ._stratify import Placement, stratify
from ._summary import summarise
from ._table import (
    CATEGORICAL,
    NUMERIC,
    Table,
    as_float,
    bin_frame,
    codes_among,
    column_label,
    numbers_as_text,
    power_of_two_scale,
    require_column,
)
from ._uncertain import SMALL_ROWS, rare_outcome_note, small_table_note
from ._warnings import (
    CODEPENDENT_R2,
    FEW_ROWS,
    LOW_WITHIN_SHARE,
    _code_like,
    _duplicating,
    _gap_warnings,
    _leaks_of,
    _named,
    _order_check,
    _ordered_warnings,
    _raise_if_restated,
    _rise_check,
    check_ends,
    within_strata_share,
)

__all__ = ["Partial", "Strata", "analyse", "finish", "fit_strata", "pass_chunk",
           "ranked_features"]

#: Most x bins of a feature when the strata are fitted on a sample of the input, not all of
#: it: the sample's distinct values when it has no more, else bins between quantiles of the
#: sample (the trees' own resolution; a curve shows at most ``max_points`` points anyway).
X_BINS = 256

#: The band's trials: random halves of the rows with their trees re-grown (stage 1, every
#: row in the sample), or groups of the strata left out in turn (from the sums: no pass
#: per trial, so a sample of a larger input can have a band).
HALVES = "halves"
STRATA_BAND = "strata"


@dataclass(frozen=True)
class _TrialField:
    """What a trial's slope field gives its curve on the full data's grid
    (:func:`curve_on_grid`): a trial of the band (:func:`_half_samples`)."""

    ux: np.ndarray
    slope: np.ndarray
    count: np.ndarray
    n_leaves: int
    plain: np.ndarray | None  # the slopes of the plain target (an adjusted curve's trial)
    at: np.ndarray | None = None  # ux's positions among the full data's distinct x


@dataclass
class Strata:
    """Stage 1 of StratPD's curve (docs/engine.md, "The four stages"): everything a pass over
    the rows needs to give each row its stratum, its x bin and its adjustment, and what the
    finish needs besides the sums.

    Made by :func:`fit_strata` from a sample of the rows (all of them when they fit); small
    apart from the sample's rows (an id, a leaf key and an adjustment per row: 20 bytes a
    row) and picklable, so it can be sent to every worker of a cluster.  Holds fixed
    encodings (the other columns' bins, the categories, the target's reading, x's scale and
    bins), so that every chunk is typed and binned as the sample was.

    Attributes
    ----------
    feature : str
        The feature; ``settings`` the validated parameters, ``facts`` the table's own
        (target, its yes/no reading, its power-of-two scale, the columns left out).
    exact : bool
        The sample is the whole input: x's bins are its distinct values (as without
        chunks), and every row of a chunk must be one of the sample's.  Otherwise x is cut
        into at most :data:`X_BINS` bins of the sample's quantiles (``grid`` their upper
        edges) and a cell's x is the mean of its rows' x.
    """

    feature: str
    settings: Settings
    facts: TableFacts
    positive: Any  # the yes/no target's positive value (None: a number)
    feature_type: pd.Series  # an empty column of the feature's type, for the curve's x
    x_scale: float  # a power of two: x in the engine's units = x / x_scale
    columns: list[str]  # the other columns, in the trees' order
    encoders: list[tuple[Any, ...]]  # how each is binned (see _table.bin_frame)
    placement: Placement  # the trees
    seed: int  # which tree places a row outside the sample (see _tree_of)
    exact: bool
    grid: np.ndarray  # x bins: the distinct values (exact) or upper edges
    sample_ids: np.ndarray  # the sample's row ids with a target and an x, ascending
    sample_keys: np.ndarray  # ... their leaf keys (honest: by the tree not grown on them)
    sample_part: np.ndarray | None  # ... the adjustment's part of their target
    design: Design | None  # the adjustment's part of other rows (a sample of the input)
    adjustment: Adjustment | None  # without its rows (part, inputs); None: adjust=False
    x_share: float  # share of x's variance left inside the strata (of the sample)
    leaks: list[Leak]
    twins: list[str]  # the columns that nearly determine the feature, when asked for
    gap_notes: dict[bool, list[Note]]  # the other columns' gaps, worded with/without adjustment
    rise_ends: np.ndarray  # where the rise is read (see _band.rise_ends)
    check_ends: np.ndarray | None  # where the adjusted and plain curves are compared
    trials: list[_TrialField] | None  # the band's trials (n_trials > 1)
    kind: str = NUMERIC  # "categorical": CatStratPD, the cells are (stratum, category)
    band: str = HALVES  # how the band's trials are made (see fit_strata)
    categories: pd.Index | None = None  # a categorical feature's categories (its "bins")
    leaks_if_still: list[Leak] | None = None  # the leaks when the categories never meet
    # The last category is the feature's blanks, "(missing)" (engine/_missing.py).
    blank_category: bool = False
    # The standard error of the adjustment's move of the curve's change (from the sample's
    # rows: Adjustment.size_move); NaN when not adjusted.
    size_se: float = np.nan
    # The sample's rows as stage 1 typed them, for the pass of the sample itself (the
    # in-memory path): not pickled.
    _rows: dict[str, np.ndarray] | None = field(default=None, repr=False)
    # A numeric feature's blank rows placed in the strata, for its "(missing)" row: when
    # the sample is the whole input (exact), else None (the sums do not compare them yet).
    blanks: Blanks | None = None
    # A target read as classes (engine/_classes.py): every class the sample holds, in
    # order, and the positions of those shown; the cells sum each class's indicator.
    classes: list[Any] | None = None
    shown: list[int] | None = None
    # The sample's mean target (engine units): the pass's squares of y are about it, so
    # the finish's squares of y - pd(x) per stratum lose few digits (strata of a sample).
    y_shift: float = 0.0

    @property
    def adjusted(self) -> bool:
        """Whether the pass subtracts the adjustment's part (the finish may still show the
        plain curve: see :func:`_rise_check`)."""
        return self.sample_part is not None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_rows"] = None
        return state


@dataclass
class Partial:
    """Stage 2's sums of one chunk of rows, or of several added together (stage 3).

    Cells are (stratum, x bin) pairs, keyed ``leaf key * bins + bin`` (ascending); their
    sums are of the target (row 0) and of the target less the adjustment's part (row 1, when
    the strata are adjusted); ``bin_x`` holds each x bin's sum of x when bins hold ranges of
    x (a bin's x is its rows' mean: per bin, not per cell, which saved a fifth of the cells'
    bytes).  ``+`` adds two
    (or ``0``, so ``sum(partials)`` works): cells' counts and sums add, a stratum's first
    row is the earlier of the two, the target's moments merge (Chan et al.).  Addition is
    commutative exactly and associative to rounding.
    """

    n_rows: int  # rows read
    n_missing: int  # rows without a target or x value
    cell_key: np.ndarray
    cell_rows: np.ndarray
    cell_sums: np.ndarray  # (sums, cells)
    leaf_key: np.ndarray  # the strata met, ascending
    leaf_first: np.ndarray  # each one's first (smallest) row id
    y_n: int  # rows with a target and x
    y_sum: float  # their target's sum, mean and sum of squares about it
    y_mean: float
    y_m2: float
    y_positive: int  # rows with a target above 0 (a yes/no target's positives)
    cell_m2: np.ndarray | None = None  # (categories) each cell's squares about its mean
    n_target: int = 0  # rows with a target value (with or without x)
    bin_x: np.ndarray | None = None  # (bins,) each x bin's sum of x (strata from a sample)
    class_n: np.ndarray | None = None  # (classes,) rows of each class (with or without x)
    # Strata fitted on a sample (engine/_missing.py): each stratum's sum of squares of y
    # about Strata.y_shift (as leaf_key), and the blank rows (a target, no x) grouped by
    # their strata in the two trees (key of tree 0 << 32 | key of tree 1, ascending) with
    # each group's rows, sum of y and squares of y about its mean.
    leaf_y2: np.ndarray | None = None
    blank_key: np.ndarray | None = None
    blank_sums: np.ndarray | None = None

    def __add__(self, other: Partial | int) -> Partial:
        if isinstance(other, int) and other == 0:
            return self
        if not isinstance(other, Partial):
            return NotImplemented
        if self.cell_m2 is None and other.cell_m2 is None:
            return self._copy().__iadd__(other)
        keys, where = np.unique(np.r_[self.cell_key, other.cell_key], return_inverse=True)
        rows = np.zeros(keys.size, np.int64)
        np.add.at(rows, where, np.r_[self.cell_rows, other.cell_rows])
        both = np.concatenate([self.cell_sums, other.cell_sums], axis=1)
        sums = np.vstack([np.bincount(where, weights=s, minlength=keys.size) for s in both]
                         ) if both.shape[0] else np.zeros((0, keys.size))
        leaves, at = np.unique(np.r_[self.leaf_key, other.leaf_key], return_inverse=True)
        first = np.full(leaves.size, np.iinfo(np.int64).max, np.int64)
        np.minimum.at(first, at, np.r_[self.leaf_first, other.leaf_first])
        n = self.y_n + other.y_n
        if self.y_n == 0 or other.y_n == 0:
            mean, m2 = (other.y_mean, other.y_m2) if self.y_n == 0 else (self.y_mean, self.y_m2)
        else:  # Chan, Golub & LeVeque's update: no sum of squares as a difference
            delta = other.y_mean - self.y_mean
            mean = self.y_mean + delta * other.y_n / n
            m2 = self.y_m2 + other.y_m2 + delta * delta * self.y_n * other.y_n / n
        cell_m2 = None
        if self.cell_m2 is not None and other.cell_m2 is not None:
            # Each cell's squares about the merged mean (Chan et al., for many parts).
            part_rows = np.r_[self.cell_rows, other.cell_rows].astype(float)
            part_mean = both[0] / part_rows
            shift = part_mean - sums[0][where] / rows[where]
            cell_m2 = (np.bincount(where, weights=np.r_[self.cell_m2, other.cell_m2],
                                   minlength=keys.size)
                       + np.bincount(where, weights=part_rows * shift * shift,
                                     minlength=keys.size))
        return Partial(self.n_rows + other.n_rows, self.n_missing + other.n_missing, keys,
                       rows, sums, leaves, first, n, self.y_sum + other.y_sum, mean, m2,
                       self.y_positive + other.y_positive, cell_m2,
                       self.n_target + other.n_target,
                       _added(self.bin_x, other.bin_x), _added(self.class_n, other.class_n))

    __radd__ = __add__

    def __iadd__(self, other: Partial | int) -> Partial:
        """``other`` added into this Partial (a pass's running total): the cells both hold
        are added where they are, the new ones inserted in key order, so the merge holds
        the total once more at most (np.unique's merge of ``+`` held it about five times,
        and sorted it again for every chunk).  The same sums as ``+`` to the bit."""
        if isinstance(other, int) and other == 0:
            return self
        if not isinstance(other, Partial):
            return NotImplemented
        if self.cell_m2 is not None or other.cell_m2 is not None:
            # Category cells are few (strata x categories): their squares merge in ``+``.
            self.__dict__.update((self + other).__dict__)
            return self
        at, hit = _matches(self.cell_key, other.cell_key)
        self.cell_rows[at[hit]] += other.cell_rows[hit]
        self.cell_sums[:, at[hit]] += other.cell_sums[:, hit]
        new = ~hit
        if new.any():
            where = at[new]
            self.cell_key = np.insert(self.cell_key, where, other.cell_key[new])
            self.cell_rows = np.insert(self.cell_rows, where, other.cell_rows[new])
            self.cell_sums = np.insert(self.cell_sums, where, other.cell_sums[:, new], axis=1)
        at, hit = _matches(self.leaf_key, other.leaf_key)
        np.minimum.at(self.leaf_first, at[hit], other.leaf_first[hit])
        squares = self.leaf_y2 is not None and other.leaf_y2 is not None
        if squares:
            self.leaf_y2[at[hit]] += other.leaf_y2[hit]
        if not hit.all():
            where = at[~hit]
            self.leaf_key = np.insert(self.leaf_key, where, other.leaf_key[~hit])
            self.leaf_first = np.insert(self.leaf_first, where, other.leaf_first[~hit])
            if squares:
                self.leaf_y2 = np.insert(self.leaf_y2, where, other.leaf_y2[~hit])
        n = self.y_n + other.y_n
        if self.y_n == 0 or other.y_n == 0:
            if self.y_n == 0:
                self.y_mean, self.y_m2 = other.y_mean, other.y_m2
        else:  # as in ``+``
            delta = other.y_mean - self.y_mean
            mean = self.y_mean + delta * other.y_n / n
            self.y_m2 = self.y_m2 + other.y_m2 + delta * delta * self.y_n * other.y_n / n
            self.y_mean = mean
        self.n_rows += other.n_rows
        self.n_missing += other.n_missing
        self.y_n = n
        self.y_sum += other.y_sum
        self.y_positive += other.y_positive
        self.n_target += other.n_target
        if self.bin_x is not None and other.bin_x is not None:
            self.bin_x += other.bin_x
        if self.class_n is not None and other.class_n is not None:
            self.class_n += other.class_n
        self.blank_key, self.blank_sums = _blank_merged(self, other)
        return self

    def _copy(self) -> Partial:
        """A Partial whose arrays are its own (for ``+``, which leaves both parts alone)."""
        return replace(self, **{name: getattr(self, name).copy() for name in (
            "cell_key", "cell_rows", "cell_sums", "leaf_key", "leaf_first")},
            **{name: None if getattr(self, name) is None else getattr(self, name).copy()
               for name in ("bin_x", "class_n", "leaf_y2", "blank_key", "blank_sums")})


def _blank_merged(a: Partial, b: Partial) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The blank rows' groups of two Partials added: rows and sums add, the squares about
    each group's mean merge (Chan et al.)."""
    if b.blank_key is None or not b.blank_key.size:
        return a.blank_key, a.blank_sums
    if a.blank_key is None or not a.blank_key.size:
        return b.blank_key.copy(), b.blank_sums.copy()
    keys, where = np.unique(np.r_[a.blank_key, b.blank_key], return_inverse=True)
    both = np.concatenate([a.blank_sums, b.blank_sums], axis=1)
    rows = np.bincount(where, weights=both[0], minlength=keys.size)
    total = np.bincount(where, weights=both[1], minlength=keys.size)
    shift = both[1] / both[0] - (total / rows)[where]
    squares = np.bincount(where, weights=both[2] + both[0] * shift * shift,
                          minlength=keys.size)
    return keys, np.vstack([rows, total, squares])


def _blank_sums(strata: Strata, rows: pd.DataFrame, y: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """The blank rows of a chunk (``rows``, their target ``y``) placed by both trees (they
    grew neither) and grouped by the pair of strata: :attr:`Partial.blank_key` and
    ``blank_sums``."""
    if not y.size:
        return np.zeros(0, np.int64), np.zeros((3, 0))
    xb = bin_frame(rows, strata.columns, strata.encoders)
    placement = strata.placement
    first = placement.keys(xb, np.zeros(y.size, np.int64))
    second = (first if placement.in_a is None
              else placement.keys(xb, np.ones(y.size, np.int64)))
    keys, where = np.unique((first << np.int64(32)) | second, return_inverse=True)
    where = where.reshape(-1)
    n = np.bincount(where, minlength=keys.size).astype(np.float64)
    total = np.bincount(where, weights=y, minlength=keys.size)
    d = y - (total / n)[where]
    return keys, np.vstack([n, total, np.bincount(where, weights=d * d,
                                                  minlength=keys.size)])


def _added(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    """Two per-bin or per-class sums added (None when either has none)."""
    return None if a is None or b is None else a + b


def _matches(keys: np.ndarray, found: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of ``found`` (ascending, distinct) is or would go in ``keys`` (the same),
    and whether it is there."""
    at = np.searchsorted(keys, found)
    hit = at < keys.size
    hit[hit] = keys[at[hit]] == found[hit]
    return at, hit


def fit_strata(sample: pd.DataFrame, target: str, feature: str, *, n_rows: int | None = None,
               kind: str | None = None, band: str = HALVES, positive: Any = None,
               exclude: str | Iterable[str] | None = None, classes: Any = None,
               **params: Any) -> Strata:
    """Stage 1 of a curve: the strata, the bins and the adjustment, fitted on ``sample``.

    Parameters
    ----------
    sample : DataFrame
        Rows of the input, indexed by their row numbers in the whole input (the ids the
        chunks of :func:`pass_chunk` carry too); all rows when the input fits.
    target, feature : str
        As for :func:`stratpd_xl.stratpd`.
    kind : {"numeric", "categorical"}, optional
        StratPD's curve or CatStratPD's category effects, as
        :func:`stratpd_xl.partial_dependence` chooses (default: from the feature's column).
    n_rows : int, optional
        Rows in the whole input, when ``sample`` is a part of it (pass 0's count); None or
        ``len(sample)``: the sample is the input, and the curve is exactly
        :func:`stratpd_xl.stratpd`'s.
    band : {"halves", "strata"}
        How a band (``n_trials`` above 1) is made: ``"halves"``, :func:`stratpd_xl.stratpd`'s
        (random halves of the rows, trees re-grown: stage 1, so every row must be in the
        sample); ``"strata"``, from the sums: the strata dealt into ``n_trials`` groups by a
        hash of their key and left out one group at a time (a grouped jackknife), which
        leaves out the trees' own variability and is narrower (docs/engine.md, "The band").
    positive, exclude, classes, **params
        As for :func:`stratpd_xl.stratpd` (``min_samples_leaf``, ``min_slopes_per_x``,
        ``n_trials``, ``random_state``, ``max_points``, ``honest``, ``adjust``); not ``by``.
        ``classes`` reads the target as classes (engine/_classes.py): the cells then sum
        each class's indicator, one row of sums per class (the classes the sample holds).

    Returns
    -------
    Strata
        For :func:`pass_chunk` and :func:`finish`.

    Raises
    ------
    StratPDInputError
        As :func:`stratpd_xl.stratpd` does for the sample's rows; a band (``n_trials`` above
        1) from a sample that is not the whole input.
    """
    p = Settings.make(exclude=exclude, **params)
    if p.by is not None:
        raise StratPDInputError("by= is not a parameter of the strata: fit one per group")
    whole = n_rows is None or n_rows == len(sample)
    if band not in (HALVES, STRATA_BAND):
        raise StratPDInputError(f'band must be "{HALVES}" or "{STRATA_BAND}", not {band!r}')
    if not whole and p.n_trials > 1 and band == HALVES:
        raise StratPDInputError(
            f"a band of re-grown halves (n_trials={p.n_trials}) needs every row in the "
            f'sample of the strata; with a sample of the input, use band="{STRATA_BAND}" '
            "or n_trials=1"
        )
    ids = _row_ids(sample)
    if classes is not None and classes is not False:
        if positive is not None:
            raise StratPDInputError(
                "classes= gives a curve per class and positive= one class against the others; "
                "give one of them")
        strata = fit_classes(sample, target, feature, kind, p, classes, ids=ids, whole=whole,
                             halves=band == HALVES)
    else:
        table = _table(sample, target, positive, keep=[feature, *p.keep], exclude=p.exclude,
                       roles={column_label(feature, role="feature"): "feature"})
        feature, kind = _feature_of(table, feature, kind)
        if table.kept is not None:
            ids = ids[table.kept]
        fit = _fit_categories if kind == CATEGORICAL else _fit
        strata = fit(table, feature, p, ids=ids, whole=whole, halves=band == HALVES)
    strata.band = band
    return strata


def ranked_features(sample: pd.DataFrame, target: str, *, positive: Any = None,
                    keep: Iterable[str] = (), exclude: Iterable[str] = (),
                    classes: Any = None) -> list[str]:
    """The features :func:`stratpd_xl.impact` ranks when it is given none: every column of
    ``sample`` but the target, less the ``exclude`` columns and the identifier-like ones
    (row numbers, ids) not in ``keep``, read as the strata read them (with ``classes``,
    the target as its classes' codes: only the other columns are read here)."""
    if classes is not None and classes is not False and target in sample.columns:
        codes = pd.factorize(sample[target])[0]
        sample = sample.assign(**{target: np.where(codes >= 0, codes, np.nan)})
    table = _table(sample, target, positive, keep=keep, exclude=exclude)
    return [c for c in table.columns if c != table.target]


def _row_ids(frame: pd.DataFrame) -> np.ndarray:
    """The rows' ids: their index, which must be whole numbers (their row numbers)."""
    if not isinstance(frame, pd.DataFrame):
        raise StratPDInputError("the rows must be a pandas DataFrame")
    index = frame.index
    if not pd.api.types.is_integer_dtype(index.dtype):
        raise StratPDInputError(
            "the rows' index must be their row numbers in the whole input (whole numbers), "
            f"not {index.dtype}: number them, e.g. rows.index = range(first, first + len(rows))"
        )
    return index.to_numpy(np.int64)


def _fit(table: Table, feature: str, p: Settings, *, ids: np.ndarray | None = None,
         whole: bool = True, tree_threads: bool = True, halves: bool = True,
         class_code: np.ndarray | None = None, n_classes: int = 0) -> Strata:
    """Stage 1 on the rows of ``table`` (their ids ``ids``; default their positions);
    ``class_code``: each row's class (0..), when the target is read as classes (its
    ``y`` is then what the trees are grown on, engine/_classes.py)."""
    x_all = as_float(table.frame[feature])
    present = ~np.isnan(x_all)
    rows = _rows_for(table, feature, present, p)
    # Work on x and y divided by powers of two (exact), so slopes and sums of any finite
    # input stay finite; results are multiplied back at the end.
    x_scale = power_of_two_scale(x_all[rows.index])
    x = x_all[rows.index] / x_scale
    columns = table.strata_columns(feature)
    xb = table.strata_matrix(feature, rows.index)
    rng = np.random.default_rng(p.random_state)
    leaf, placement, keys = stratify(xb, rows.y, p.min_samples_leaf, rng, honest=p.honest,
                                     threads=tree_threads, placement=True)
    # Slopes are taken on y minus the other columns' part where that measurably helps
    # (see engine/_adjust.py): inside a stratum the other columns still vary a little, and
    # with many columns correlated with x that leftover variation rides along with x and
    # inflates its slope (x1 among 20 columns correlated 0.6: 1.73 for a true 1).
    # Its own stream: the trials' halves are the same with and without the adjustment.
    adj_rng = rng.spawn(1)[0]
    # x's distinct values once for the basis, the bins and the rise; its rows in order
    # (the same values) make its percentiles several times faster than x itself does.
    unique = unique_x(x)
    x_sorted = np.repeat(unique.ux, np.bincount(unique.xi, minlength=unique.ux.size))
    adj = (_adjustment(table, feature, rows.index,
                       standardised_basis(x, x_sorted), rows.y,
                       leaf, adj_rng, numeric=True) if p.adjust else None)
    part = None if adj is None else adj.part
    x_share = within_strata_share(x, leaf)
    codes = None if class_code is None else class_code[rows.index]
    if codes is None:
        leaks = _leaks_of(table, feature, rows.index, rows.y, leaf, adj,
                          feature_varies=x_share >= LOW_WITHIN_SHARE)
        r2 = np.nan if adj is None else adj.r2
        twins = (_duplicating(table, feature, rows.index)
                 if x_share < LOW_WITHIN_SHARE or r2 > CODEPENDENT_R2 else [])
        gaps = {part is not None: _gap_warnings(table, feature, NUMERIC, rows.index,
                                                part is not None)}
    else:  # the classes' checks are their own (engine/_classes.py): none of these
        leaks, twins, gaps = [], [], {False: []}
    if part is not None:  # the finish may fall back to the plain curve
        gaps[False] = (_gap_warnings(table, feature, NUMERIC, rows.index, False)
                       if gaps[True] else [])
    by_rows = bool(table.yes_no) or codes is not None
    size_se = np.nan
    if part is not None:
        # How much the adjustment's own noise could move the curve's change (the finish
        # keeps the plain curve where a large move is within it: _adjust.size_check).
        step = -(-rows.y.size // SIZE_ROWS)
        sub = np.arange(0, rows.y.size, step)
        plain_field = (slope_field(x, rows.y, leaf, unique, by_rows=by_rows) if step == 1
                       else slope_field(x[sub], rows.y[sub], leaf[sub],
                                        unique_of_rows(unique, sub), by_rows=by_rows))
        plain_curve = integrate(plain_field, p.min_slopes_per_x)
        if plain_curve is not None:
            size_se = adj.size_move(rise_weights(plain_field, plain_curve,
                                                 tuple(rise_ends(x_sorted))),
                                    None if step == 1 else sub)[1]
    trials = None
    if p.n_trials > 1 and halves:
        trials = []
        for pick, leaf_b in _half_samples(xb, rows.y, p, rng, tree_threads):
            # The half's distinct x from the full data's: no sort per trial.
            half_x = unique_of_rows(unique, pick)
            if codes is not None:  # each class's slopes on the half's one field
                trial = slope_field(x[pick], _indicator(codes[pick], 0), leaf_b, half_x,
                                    by_rows=True)
                slope = np.vstack([trial.slope] + [
                    trial.for_target(_indicator(codes[pick], c)).slope
                    for c in range(1, n_classes)])
                trials.append(_TrialField(trial.ux, slope, trial.count, trial.n_leaves, None,
                                          half_x.at))
                continue
            trial = slope_field(x[pick], _trial_y(rows.y, adj, pick, leaf_b), leaf_b,
                                half_x, by_rows=by_rows)
            plain = None if part is None else trial.for_target(rows.y[pick]).slope
            trials.append(_TrialField(trial.ux, trial.slope, trial.count, trial.n_leaves,
                                      plain, half_x.at))
    if whole:
        grid, xi = unique.ux, unique.xi
    else:
        grid = _x_edges(x_sorted)
        xi = _x_bins(grid, x)
    positions = rows.index if ids is None else ids[rows.index]
    order = np.argsort(positions, kind="stable")
    stored = None if adj is None else replace(adj, part=None, inputs={})
    design = (None if whole or part is None
              else fit_design(table, feature, rows.index, x, x_sorted, adj.inputs))
    strata = Strata(
        feature, p, TableFacts.of(table),
        table.yes_no.get("positive") if table.yes_no else None,
        table.frame[feature].iloc[:0], x_scale, columns, table.encoders(columns), placement,
        0 if p.random_state is None else int(p.random_state), whole, grid,
        positions[order], keys[order], None if part is None else part[order], design,
        stored,
        x_share, leaks, twins, gaps, rise_ends(x_sorted),
        None if part is None else check_ends(x_sorted), trials,
    )
    strata.size_se = size_se
    strata.y_shift = float(np.mean(rows.y))
    # The sample's own pass keys its strata by their labels (the same strata as the trees'
    # keys, already in the finish's order).
    strata._rows = {"ids": positions, "x": x, "y": rows.y, "keys": leaf, "part": part,
                    "xi": xi, "n_rows": np.int64(table.n_rows),
                    "n_missing": np.int64(rows.n_dropped_missing),
                    "n_target": np.int64(table.y.size), "code": codes}
    if whole and codes is None:  # rows without x never enter the slopes; the strata place
        strata.blanks = Blanks.of(table, feature, strata)  # them for their row
    return strata


def _indicator(codes: np.ndarray, c: int) -> np.ndarray:
    """Class ``c``'s indicator of the rows of class ``codes``: 100 or 0, so a class's curve
    is in percentage points of its chance (engine/_classes.py)."""
    return np.where(codes == c, 100.0, 0.0)


def _x_edges(x_sorted: np.ndarray) -> np.ndarray:
    """Upper edges of at most :data:`X_BINS` bins of x from the sample's sorted x: its
    distinct values when it has no more, else quantiles."""
    new_value = np.r_[True, x_sorted[1:] != x_sorted[:-1]]
    if np.count_nonzero(new_value) <= X_BINS:
        return x_sorted[new_value]
    at = np.linspace(0, 1, X_BINS + 1)[1:] * (x_sorted.size - 1)
    return np.unique(x_sorted[np.round(at).astype(np.int64)])


def _x_bins(grid: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Each x's bin of the upper edges ``grid`` (beyond the last: the last)."""
    return np.minimum(np.searchsorted(grid, x, side="left"), grid.size - 1).astype(np.int64)


def _tree_of(ids: np.ndarray, seed: int) -> np.ndarray:
    """Which tree (0 or 1) places a row outside the sample: a hash of its id and the seed,
    so it is the same in every chunk and on every machine.  No tree saw the row's target,
    so either is honest."""
    return (_mix(ids, seed) & np.uint64(1)).astype(np.int64)


def _mix(values: np.ndarray, seed: int) -> np.ndarray:
    """splitmix64's finaliser of ``values`` (whole numbers) and ``seed``."""
    with np.errstate(over="ignore"):
        z = values.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15) * np.uint64(seed + 1)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def pass_chunk(strata: Strata, chunk: pd.DataFrame) -> Partial:
    """Stage 2: the sums of one chunk of rows, typed, binned and stratified as the strata
    say (no tree is grown and nothing is sorted but the chunk's own cells).

    ``chunk`` holds the columns of the sample (others are ignored), indexed by the rows'
    numbers in the whole input (see :func:`fit_strata`).  A row of the sample keeps its
    stratum and adjustment from stage 1; another row is placed by one of the two trees
    (chosen by a hash of its id), its x put into the strata's x bins and its adjustment
    made by the strata's design.
    """
    facts = strata.facts
    ids = _row_ids(chunk)
    for name in (facts.target, strata.feature, *strata.columns):
        if name not in chunk.columns:
            raise StratPDInputError(f'the chunk has no column "{name}", which the sample had')
    class_n = None
    if strata.classes is not None:
        # Each row's class (a class the sample did not hold: as a missing target).
        column = chunk[facts.target]
        code = pd.Index(strata.classes, dtype=object).get_indexer(column.astype(object))
        code[~column.notna().to_numpy(bool)] = -1
        class_n = np.bincount(code[code >= 0], minlength=len(strata.classes))
        y = np.where(code >= 0, code, np.nan)
    elif strata.positive is not None:
        column = chunk[facts.target]
        y = np.where(column.notna().to_numpy(bool),
                     np.where((column.astype(object) == strata.positive).fillna(False)
                              .to_numpy(bool), 100.0, 0.0), np.nan)
    else:
        y = as_float(chunk[facts.target])
    if strata.classes is None:
        y = y / facts.y_scale
    n_target = int(np.count_nonzero(~np.isnan(y)))
    if strata.kind == CATEGORICAL:
        # A category the sample did not hold has no effect to add to: a missing value.
        x = codes_among(chunk[strata.feature], strata.categories)
        if strata.blank_category:  # blanks are a category of their own, the last
            x[chunk[strata.feature].isna().to_numpy(bool)] = len(strata.categories) - 1
        use = np.flatnonzero(~np.isnan(y) & (x >= 0))
    else:
        x = as_float(chunk[strata.feature]) / strata.x_scale
        use = np.flatnonzero(~np.isnan(y) & ~np.isnan(x))
    blank = None
    if _compares_blanks(strata):  # rows with a target and no x, for the "(missing)" row
        at = np.flatnonzero(~np.isnan(y) & np.isnan(x))
        blank = _blank_sums(strata, chunk.iloc[at], y[at])
    ids, x, y = ids[use], x[use], y[use]
    at = np.searchsorted(strata.sample_ids, ids)
    inside = at < strata.sample_ids.size
    inside[inside] = strata.sample_ids[at[inside]] == ids[inside]
    keys = np.empty(ids.size, np.int64)
    keys[inside] = strata.sample_keys[at[inside]]
    part = None
    if strata.adjusted:
        part = np.empty(ids.size)
        part[inside] = strata.sample_part[at[inside]]
    out = np.flatnonzero(~inside)
    if out.size:
        if strata.exact:
            raise StratPDInputError(
                f"{out.size:,} rows of the chunk (ids {ids[out[0]]}, ...) are not in the sample "
                "the strata were fitted on, which was said to be the whole input: give "
                "fit_strata n_rows, the rows in the whole input"
            )
        rows = chunk.iloc[use[out]]
        xb = bin_frame(rows, strata.columns, strata.encoders)
        keys[out] = strata.placement.keys(xb, _tree_of(ids[out], strata.seed))
        if strata.adjusted:
            part[out] = strata.design.part(rows, x[out])
    counts = len(chunk), len(chunk) - use.size, n_target
    code = None if class_n is None else y.astype(np.int64)
    if strata.kind == CATEGORICAL:
        found = _reduce_categories(strata, ids, y, keys, part, x, *counts, code=code)
    else:
        xi = np.searchsorted(strata.grid, x) if strata.exact else _x_bins(strata.grid, x)
        found = _reduce(strata, ids, x, y, keys, part, xi, *counts, code=code)
    found.class_n = class_n
    if blank is not None:
        found.blank_key, found.blank_sums = blank
    return found


def _compares_blanks(strata: Strata) -> bool:
    """Whether the pass adds up the blank rows for the "(missing)" row: a numeric feature's
    strata fitted on a sample (a sample that is the whole input places them at stage 1,
    as in memory: ``Strata.blanks``)."""
    return strata.kind == NUMERIC and not strata.exact and strata.classes is None


def _pass_sample(strata: Strata) -> Partial:
    """Stage 2 over the sample itself, as stage 1 typed it: the in-memory path's one chunk."""
    r = strata._rows
    counts = int(r["n_rows"]), int(r["n_missing"]), int(r["n_target"])
    code = r.get("code")
    y = r["y"] if code is None else code.astype(np.float64)  # as pass_chunk reads classes
    if strata.kind == CATEGORICAL:
        found = _reduce_categories(strata, r["ids"], y, r["keys"], r["part"], r["xi"],
                                   *counts, code=code)
    else:
        found = _reduce(strata, r["ids"], r["x"], y, r["keys"], r["part"], r["xi"],
                        *counts, code=code)
    found.class_n = r.get("class_n")
    return found


def _reduce(strata: Strata, ids: np.ndarray, x: np.ndarray, y: np.ndarray, keys: np.ndarray,
            part: np.ndarray | None, xi: np.ndarray, n_rows: int, n_missing: int,
            n_target: int, code: np.ndarray | None = None) -> Partial:
    """The rows' sums per cell, per stratum and over all; ``code``: each row's class, whose
    indicators are the sums (one row per class), not ``y``.

    A cell's sums are taken over its rows in row order with ``np.add.reduceat``, exactly
    as :func:`_numeric.slope_field` takes them, so one chunk of every row gives the same
    field to the bit."""
    targets = [y] + ([] if part is None else [y - part])
    n_sums = len(targets) if code is None else len(strata.classes)
    n = y.size
    bins = np.int64(strata.grid.size)
    bin_x = (None if strata.exact
             else np.bincount(xi, weights=x, minlength=int(bins)).astype(np.float64))
    squares = _compares_blanks(strata)
    if n == 0:
        return Partial(n_rows, n_missing, np.zeros(0, np.int64), np.zeros(0, np.int64),
                       np.zeros((n_sums, 0)), np.zeros(0, np.int64),
                       np.zeros(0, np.int64), 0, 0.0, 0.0, 0.0, 0, n_target=n_target,
                       bin_x=bin_x, leaf_y2=np.zeros(0) if squares else None)
    order = _cell_order(keys, xi, int(bins))
    sorted_key = keys[order] * bins + xi[order]
    start = np.flatnonzero(np.r_[True, sorted_key[1:] != sorted_key[:-1]])
    if code is None:
        sums = np.vstack([np.add.reduceat(t[order], start) for t in targets])
    else:  # each class's indicator, one at a time
        ordered = code[order]
        sums = np.vstack([np.add.reduceat(_indicator(ordered, c), start)
                          for c in range(n_sums)])
    # A stratum's rows are together in that order: its first row is their smallest id.
    sorted_leaf = keys[order]
    leaf_start = np.flatnonzero(np.r_[True, sorted_leaf[1:] != sorted_leaf[:-1]])
    leaves = sorted_leaf[leaf_start]
    first = np.minimum.reduceat(ids[order], leaf_start)
    leaf_y2 = None
    if squares:
        u = y[order] - strata.y_shift
        leaf_y2 = np.add.reduceat(u * u, leaf_start)
    # The target's mean and spread as np.mean and np.std take them (one chunk: the same).
    total = np.sum(y)
    mean = total / n
    d = y - mean
    return Partial(n_rows, n_missing, sorted_key[start], np.diff(np.r_[start, n]), sums,
                   leaves, first, n, float(total), float(mean), float(np.sum(d * d)),
                   int(np.count_nonzero(y > 0)), n_target=n_target, bin_x=bin_x,
                   leaf_y2=leaf_y2)


def analyse(strata: Sequence[Strata], partials: Sequence[Partial],
            skipped: dict[str, str] | None = None, target: str | None = None
            ) -> tuple[pd.DataFrame, dict[str, pd.DataFrame], dict[str, str]]:
    """Stage 4 of an impact ranking: each feature's result finished from its sums, and the
    ranking of :func:`stratpd_xl.impact` (its columns and ``attrs``).

    Parameters
    ----------
    strata, partials : sequences
        Each feature's :class:`Strata` (fitted on the same sample, with the same
        parameters) and the sum of its :class:`Partial` over every row.
    skipped : dict, optional
        Features whose strata could not be fitted, with the sentence saying why.
    target : str, optional
        The target as the caller named it (default: the strata's).

    Returns
    -------
    ranking : DataFrame
        As :func:`stratpd_xl.impact`; a feature's impact is the mean over the rows of
        ``|pd - mean pd|``, each x bin (category) weighted by its rows.
    curves : dict
        Each ranked feature's curve or category table, as :func:`finish` gives it.
    skipped : dict
        The features without one, and why.
    """
    if not strata:
        raise StratPDInputError("no feature to rank: fit the strata of at least one")
    skipped = dict(skipped or {})
    if strata[0].classes is not None:  # a target read as classes: ranked by class
        return rank_classes(list(strata), list(partials), skipped,
                            strata[0].facts.target if target is None else target)
    entries: list[dict[str, Any]] = []
    curves: dict[str, pd.DataFrame] = {}
    n_target = 0
    for s, partial in zip(strata, partials, strict=True):
        n_target = partial.n_target
        try:
            finished = _finish_categories if s.kind == CATEGORICAL else _finish_curve
            blanks = {} if s.kind == CATEGORICAL else {"blanks": s.blanks}
            curve, (values, rows) = finished(s, partial, row_pd=True, by_bins=True, **blanks)
        except StratPDInputError as exc:
            skipped[s.feature] = str(exc)
            continue
        curves[s.feature] = curve
        entries.append({"feature": s.feature, "kind": s.kind,
                        "impact": _impact(values, rows),
                        "rows": _evidence_rows(curve)})
    first = strata[0]
    facts = replace(first.facts, n_rows=partials[0].n_rows)
    ranking = _ranking(first.facts.target if target is None else target, facts,
                       first.settings, n_target, entries, skipped, curves)
    return ranking, curves, skipped


def _plain(value: Any) -> str:
    """A feature value in a note: a date as a date, a whole number below 10,000 (a year, a
    count) without separators, any other number as :func:`short_number` writes it."""
    if isinstance(value, pd.Timestamp):
        return str(value.date()) if value == value.normalize() else str(value)
    if isinstance(value, pd.Timedelta | str):
        return str(value)
    number = float(value)
    if number.is_integer() and abs(number) < 10_000:
        return str(int(number))
    return short_number(number)


def _cell_order(keys: np.ndarray, xi: np.ndarray, bins: int) -> np.ndarray:
    """The rows sorted by stratum, then x bin, ties in row order (as
    :func:`_numeric._leaf_x_order`): two counting sorts with numba, O(n)."""
    if get_backend() == "numba" and keys.min() >= 0:
        by_x = _counting_order(np.ascontiguousarray(xi, np.int64), bins,
                               np.arange(xi.size, dtype=np.int64))
        return _counting_order(np.ascontiguousarray(keys, np.int64), int(keys.max()) + 1,
                               by_x)
    return np.argsort(keys * np.int64(bins) + xi, kind="stable")


def finish(strata: Strata, partial: Partial) -> pd.DataFrame:
    """Stage 4: the curve from the sums of every row (:func:`stratpd_xl.stratpd`'s result,
    its columns and ``attrs``); of a target read as classes, the long table of
    :func:`stratpd_xl.stratpd` with ``classes``."""
    if strata.classes is not None:
        return finish_classes(strata, partial)[0]
    if strata.kind == CATEGORICAL:
        return _finish_categories(strata, partial)[0]
    return _finish_curve(strata, partial, blanks=strata.blanks)[0]


def _finish_curve(strata: Strata, partial: Partial, row_pd: bool = False,
                  by_bins: bool = False, blanks: Blanks | None = None
                  ) -> tuple[pd.DataFrame, Any]:
    """The curve, and with ``row_pd`` the pd of every row inside its range (from the
    sample's rows, the in-memory path) or, ``by_bins``, the pd at each x bin and its rows
    (the impact ranking of sums); ``blanks``: the feature's blank rows of the sample, for
    the row of their own (engine/_missing.py)."""
    p, facts, feature = strata.settings, strata.facts, strata.feature
    x_scale, y_scale = strata.x_scale, facts.y_scale
    if partial.y_n == 0:
        raise StratPDInputError(
            f'no row has values in both "{facts.target}" and "{feature}"; pass the rows to '
            "analyse"
        )
    field_ = _cell_field(strata, partial)
    curve = integrate(field_, p.min_slopes_per_x)
    adj = strata.adjustment
    applied = strata.adjusted
    trial_slopes = None if strata.trials is None else [t.slope for t in strata.trials]
    reversal = sized = None
    if applied and curve is not None:
        # Checked against the plain curve inside the same strata (see _rise_check).
        plain_field = field_.for_target(0)
        plain = integrate(plain_field, p.min_slopes_per_x)
        reversal = (None if plain is None
                    else _rise_check(feature, strata.check_ends, curve, plain))
        if plain is not None and not reversal:
            # A large move of the curve's change within the adjustment's own noise.
            plain_change, change = (float(np.diff(np.interp(strata.rise_ends, c.x, c.pd))[0])
                                    for c in (plain, curve))
            sized = size_check(feature, change - plain_change, strata.size_se, plain_change,
                               adj.r2)
        if reversal or sized:
            field_, curve, applied = plain_field, plain, False
            adj = replace(adj, reason="it turned the plain comparison's direction inside "
                          "the strata the other way" if reversal else "it moved the curve's "
                          "size a lot, but by less than its own noise")
            if strata.trials is not None:
                trial_slopes = [t.plain for t in strata.trials]
    if curve is None:
        _raise_if_restated(strata.leaks, facts)
        if field_.ux.size <= 2:  # a 0/1 column: two values make a comparison, not a curve
            shown = " and ".join(f"{v * x_scale:g}" for v in field_.ux)
            raise StratPDInputError(
                f'"{feature}" has only {field_.ux.size} values ({shown}) and none is backed by '
                f"{p.min_slopes_per_x} leaf slopes (it varies too little inside the strata); "
                f"analyse it as categories (--categorical {feature} on the command line, "
                'kind="categorical" in Python), or lower min_slopes_per_x or min_samples_leaf'
            )
        raise StratPDInputError(
            f'no value of "{feature}" is backed by {p.min_slopes_per_x} leaf slopes (x varies '
            "too little inside the strata); lower min_slopes_per_x or min_samples_leaf, or "
            "add rows"
        )
    n = partial.y_n
    up_to = curve.points_up_to(field_.ux.size)
    weights = _row_weights(curve.x, field_.ux, field_.ux_rows, up_to)
    limits = _limits_of_mean(facts, partial.y_sum / n)
    centred = _centred(curve.pd, weights)
    full_pd = _within(centred, limits)
    n_cut = int(np.sum(full_pd != centred))
    # Where the curve is held at 0 % and at 100 % (the x it spans there, engine units).
    held = {} if limits is None else {
        side: (float(curve.x[cut].min()), float(curve.x[cut].max()))
        for side, cut in (("below", centred < limits[0]), ("above", centred > limits[1]))
        if cut.any()}
    # Each row of the sample at the curve's height (its distinct x, interpolated once).
    row_curve = (np.interp(field_.ux, curve.x, full_pd)[strata._rows["xi"]]
                 if (row_pd and not by_bins) or blanks is not None else None)
    blank = (None if blanks is None
             else blanks.effect(strata._rows["y"] - row_curve, y_scale, limits))
    if blanks is None and partial.blank_key is not None:
        blank = _blank_of_sums(strata, partial, field_, curve.x, full_pd, y_scale, limits)
    out = {
        "x": curve.x,
        "pd": full_pd,
        "slope": curve.slope,
        "n_slopes": curve.count.astype(np.int64),
    }
    n_full = int(curve.x.size)
    summary = (summarise(curve.x, curve.pd, curve.count, field_.ux, field_.ux_rows,
                         p.max_points, up_to)
               if p.max_points is not None and n_full > p.max_points else None)
    trials = None
    if strata.trials is not None:
        trials = np.empty((len(strata.trials), curve.x.size))
        for t, (trial, slope) in enumerate(zip(strata.trials, trial_slopes, strict=True)):
            # Every trial is centred with the same (full-data) weights, so the band measures
            # the spread of the curve's shape, not of an arbitrary anchor point.  A half's
            # x are some of the full data's: its points are counted along them, not searched.
            at = (None if trial.at is None or field_.ux.size != strata.grid.size
                  else (trial.at, curve.at, field_.ux.size))
            trials[t] = _within(_centred(curve_on_grid(
                replace(trial, slope=slope), p.min_slopes_per_x, curve.x, at), weights),
                limits)
    elif strata.band == STRATA_BAND and p.n_trials > 1:
        trials = _jackknifed(np.array([_within(_centred(curve_on_grid(
            _cell_field(strata, partial, field_.target, (t, p.n_trials)),
            p.min_slopes_per_x, curve.x), weights), limits) for t in range(p.n_trials)]))
    if trials is not None:
        # pd stays the full-data curve (the same as without trials); the trials only give
        # its spread (their mean drifts at the sparse ends, where halves lose points).  The
        # leaf slopes are secants, so the curve is the truth averaged over their spans
        # (peaks flatten); that bias, estimated by averaging the curve once more over the
        # same spans, widens both bands (docs/method.md, "A band that measures the shape").
        bias = _centred(resmoothed(field_, curve), weights) - _centred(curve.pd, weights)
        # Both bands only at the points shown (a long curve is summarised to max_points).
        at = slice(None) if summary is None else summary.index
        count, sd = spread = _spread(trials)
        low, high = _band(None, full_pd[at], n, bias[at], spread=(count[at], sd[at]))
        bands = {"pd_low": _within(low, limits), "pd_high": _within(high, limits)}
        low, high, _ = _simultaneous_band(trials, full_pd[at], n, bias[at], spread=spread,
                                          at=at)
        bands.update(curve_low=_within(low, limits), curve_high=_within(high, limits))
    rise = _rise(strata.rise_ends, curve.x, full_pd, trials, n,
                 None if trials is None else bias)
    # A small table's curve says when its change is uncertain (a cheap error from the strata
    # where there are no trials; see _uncertain.small_table_note).
    rise_error = (rise_se(field_, curve, None, None, (rise["x_from"], rise["x_to"])) * y_scale
                  if n < SMALL_ROWS and trials is None else np.nan)
    shape = curve_shape(
        curve.x, full_pd, trials, field_.ux, field_.ux_rows, (rise["x_from"], rise["x_to"]),
        lambda values, centre: _band(values[:, None], np.array([centre]), n),
    )
    if summary is not None:
        k = summary.index
        out = {name: values[k] for name, values in out.items()}
    if trials is not None:
        out.update(bands)
    if summary is not None:
        out.update(slope=summary.slope, n_slopes=summary.n_slopes, n_x=summary.n_x)
    column = strata.feature_type
    out["x"] = _numeric_x_out(out["x"] * x_scale, column)
    for name in ("pd", "pd_low", "pd_high", "curve_low", "curve_high"):
        if name in out:
            out[name] = out[name] * y_scale
    for name in ("change", "swing", "low", "high"):
        if name in rise:
            rise[name] *= y_scale
    ends = _numeric_x_out(np.array([rise["x_from"], rise["x_to"]]) * x_scale, column)
    rise["x_from"], rise["x_to"] = (v.item() if hasattr(v, "item") else v
                                    for v in list(ends))
    _scale_shape(shape, x_scale, y_scale, column)
    with np.errstate(over="ignore"):
        # A local slope beyond the float range (a huge target over a small x step) cannot
        # be shown: it becomes missing, as any cell would show it.
        # One exact power-of-two step: y_scale / x_scale itself may be out of range.
        shift = math.frexp(y_scale)[1] - math.frexp(x_scale)[1]
        slope = np.ldexp(np.asarray(out["slope"], dtype=np.float64), shift)
    out["slope"] = np.where(np.isfinite(slope), slope, np.nan)
    result = pd.DataFrame(out)
    share = strata.x_share
    r2 = np.nan if adj is None else adj.r2
    twins = strata.twins
    warnings_ = []
    if share < LOW_WITHIN_SHARE:
        warnings_.append(Note(
            f'"{feature}" barely varies inside the strata ({share:.1%} of its variation): the '
            f"other columns{_named(twins)} nearly determine it, so its curve rests on small "
            "differences and can be noise; leave out the columns that duplicate it (exclude)",
            "duplicate", columns=twins, features=[feature], moves=1 - share, tie="barely",
            within=share,
        ))
    if r2 > CODEPENDENT_R2 and share >= LOW_WITHIN_SHARE:  # else already said above
        warnings_.append(Note(
            f'"{feature}" is almost exactly a linear function of the other columns'
            f"{_named(twins)} (inside the strata a least-squares fit explains {r2:.1%} of it): "
            "they carry the same information, "
            "so no data show its effect with them held fixed; leave out the columns that "
            "duplicate it (exclude) or analyse them together",
            "duplicate", columns=twins, features=[feature], moves=r2, tie="linear", r2=r2,
        ))
    if n_cut:
        # The ranges in the feature's own values (dates as dates), for the words.
        held = {side: tuple(v.item() if hasattr(v, "item") else v for v in
                            list(_numeric_x_out(np.array(span) * x_scale, column)))
                for side, span in held.items()}
        where = " and ".join(
            f"{'below 0 %' if side == 'below' else 'above 100 %'} "
            + (f"at {feature} = {_plain(span[0])}" if _plain(span[0]) == _plain(span[1]) else
               f"between {feature} {_plain(span[0])} and {_plain(span[1])}")
            for side, span in held.items())
        warnings_.append(Note(
            f'a chance cannot go below 0 % or above 100 %, but the curve of "{feature}" went '
            f"past that at {n_cut:,} of its {n_full:,} points"
            + (f", {where}" if where else "") + " (where few rows back its slopes or the "
            "chance is near 0 % or 100 %); those points are held at the limit, so there the "
            "curve says only that the chance is near it, not how it changes: read them with "
            "care, or add rows",
            "limits", columns=[feature], features=[feature], moves=n_cut / max(n_full, 1),
            cut=n_cut, points=n_full, **held,
        ))
    rare = rare_outcome_note(facts.yes_no, facts.target, feature, (partial.y_positive, n),
                             rise)
    small = None if rare else small_table_note(feature, n, rise, rise_error)
    warnings_ += [note for note in (rare, small, sized) if note]
    warnings_ += _ordered_warnings(facts.target, feature, strata.leaks, reversal,
                                   strata.gap_notes[applied])
    dates = pd.api.types.is_datetime64_any_dtype(column.dtype)
    strip = (field_.ux >= curve.x[0]) & (field_.ux <= curve.x[-1])
    note = None if dates else _code_like(
        feature, field_.ux * x_scale, curve.x, curve.pd,
        np.interp(curve.x, field_.ux, field_.ux_rows), math.sqrt(partial.y_m2 / n))
    if note:
        warnings_.append(note)
    result.attrs = _attrs(
        replace(facts, n_rows=partial.n_rows), feature, NUMERIC, n, partial.n_missing,
        field_.n_ignored, field_.n_leaves, p,
        n_unique_x=int(field_.ux.size), n_points_full=n_full, within_strata_share=share,
        rise=rise, shape=shape, **_adjust_attrs(adj, applied), **_band_attrs(strata),
        **({} if dates else {"strip": _data_strip(
            field_.ux[strip] * x_scale, field_.ux_rows[strip])}),
        warnings=warnings_,
    )
    if blank is not None:
        result.attrs["missing"] = blank
        result = with_missing_row(result, blank)
    if not row_pd:
        return result, None
    if by_bins:
        inside = (field_.ux >= curve.x[0]) & (field_.ux <= curve.x[-1])
        values, rows = np.interp(field_.ux[inside], curve.x, full_pd), field_.ux_rows[inside]
        if blank is not None:  # the blank rows at their row's height, as row_pd counts them
            values = np.r_[values, blank["pd"] / y_scale]
            rows = np.r_[rows, blank["compared"]]
        return result, (values, rows)
    # Rows inside the curve's range, at the curve's height, for the impact ranking; the
    # blank rows that met rows with x in a stratum at their row's height (docs/method.md).
    r = strata._rows
    inside = (r["x"] >= curve.x[0]) & (r["x"] <= curve.x[-1])
    if blank is None:
        return result, row_curve[inside]
    return result, np.concatenate([row_curve[inside],
                                   np.full(blank["compared"], blank["pd"] / y_scale)])


def _blank_of_sums(strata: Strata, partial: Partial, field_: SlopeField, x: np.ndarray,
                   full_pd: np.ndarray, y_scale: float, limits: tuple[float, float] | None
                   ) -> dict[str, Any] | None:
    """``attrs["missing"]`` from the sums of strata fitted on a sample: each stratum's rows
    with x less the curve at their bin (``y - pd(x)``: its sum and squares from the cells'
    sums and the stratum's squares of y), compared with its blank rows in each tree
    (engine/_missing.py)."""
    bins = np.int64(strata.grid.size)
    cell_bin = partial.cell_key % bins
    held = np.zeros(strata.grid.size, bool)
    held[cell_bin] = True
    pd_cell = np.interp(field_.ux, x, full_pd)[(np.cumsum(held) - 1)[cell_bin]]
    leaf = np.searchsorted(partial.leaf_key, partial.cell_key // bins)
    k = partial.leaf_key.size
    n_c = partial.cell_rows.astype(np.float64)
    # y - pd = (y - shift) + q: the cells' sums of y - shift, and q per cell.
    u = partial.cell_sums[0] - n_c * strata.y_shift
    q = strata.y_shift - pd_cell
    n_p = np.bincount(leaf, weights=n_c, minlength=k)
    total = np.bincount(leaf, weights=u + n_c * q, minlength=k)
    squares = partial.leaf_y2 + np.bincount(leaf, weights=q * (2 * u + n_c * q), minlength=k)
    ss_p = np.maximum(squares - total * total / np.maximum(n_p, 1), 0.0)
    placed = np.column_stack([partial.blank_key >> np.int64(32),
                              partial.blank_key & np.int64(0xFFFFFFFF)])
    found = missing_effect_of_sums(partial.leaf_key, n_p, total, ss_p, placed,
                                   partial.blank_sums)
    return missing_attrs(found, y_scale, limits)


def _cell_field(strata: Strata, partial: Partial, target: int | None = None,
                leave_out: tuple[int, int] | None = None) -> SlopeField:
    """The slope field of the partial's cells (:func:`field_from_cells`): strata labelled
    by their first row, as :func:`_stratify.canonical_labels` labels them; of ``target``
    (default: the adjusted target when the strata are adjusted).  ``leave_out=(t, T)``:
    without the strata of group ``t`` of ``T`` (see :func:`_strata_group`), on the same x."""
    bins = np.int64(strata.grid.size)
    order, cell_leaf, raw = _by_label(partial, bins, keys=leave_out is not None)
    if order is None:
        cell_bin, rows, sums = partial.cell_key % bins, partial.cell_rows, partial.cell_sums
    else:
        cell_bin = partial.cell_key[order] % bins
        rows, sums = partial.cell_rows[order], partial.cell_sums[:, order]
        del order
    held = np.zeros(strata.grid.size, bool)
    held[cell_bin] = True
    index = np.cumsum(held) - 1
    xi = index[cell_bin]
    bin_rows = None if strata.exact else np.bincount(cell_bin, weights=rows,
                                                     minlength=strata.grid.size)
    del cell_bin
    if strata.exact:
        ux = strata.grid[held]
    else:
        # A bin's x is its rows' mean, and a slope's step is between the bins' x, not the
        # two cells' own means: with a few rows a cell, two cells in neighbouring bins can
        # hold rows a hair apart, and their slope (noise over that hair) was integrated over
        # the whole step between the bins.  A feature without effect, 6,000 rows fitted on
        # 1,500: its curve's range 4.75 (mean of 3 seeds) -> 0.37, in memory 0.17; x0 of
        # 20M rows fitted on 2^20: nRMSE 0.0036 -> 0.0018.
        ux = partial.bin_x[held] / bin_rows[held]
    if target is None:
        target = 1 if strata.adjusted else 0
    if leave_out is not None:
        keep = _strata_group(raw, strata.seed, leave_out[1]) != leave_out[0]
        # The strata kept, labelled 0.. in the same order.
        cell_leaf = np.unique(cell_leaf[keep], return_inverse=True)[1].reshape(-1)
        xi, rows, sums = xi[keep], rows[keep], sums[:, keep]
    return field_from_cells(ux, cell_leaf, xi, rows, sums, target,
                            by_rows=bool(strata.facts.yes_no) or strata.classes is not None)


def _by_label(partial: Partial, bins: np.int64, keys: bool = True
              ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray | None]:
    """The partial's cells in the order of their strata's labels (by first row, as
    :func:`_stratify.canonical_labels` labels them), then of their bins: the order (None:
    they are in it already), each cell's label and (``keys``) its stratum's key, in that
    order.

    A stratum's cells are together and in bin order already (keyed ``stratum key x bins +
    bin``), so they move as blocks: no sort of the cells, whose count grows with the rows
    (14 million for 20 million rows), only of the strata."""
    leaves, n = partial.leaf_key, partial.cell_key.size
    by_label = np.argsort(partial.leaf_first, kind="stable")  # label -> stratum
    begin = np.searchsorted(partial.cell_key, leaves * bins)  # each stratum's first cell
    size = np.diff(np.r_[begin, n])
    labels = np.arange(leaves.size, dtype=np.int64)
    if np.array_equal(by_label, labels):
        return None, np.repeat(labels, size), np.repeat(leaves, size) if keys else None
    size = size[by_label]
    shift = begin[by_label] - (np.cumsum(size) - size)  # block start: old - new position
    order = np.repeat(shift, size)
    order += np.arange(n, dtype=np.int64)
    return (order, np.repeat(labels, size),
            np.repeat(leaves[by_label], size) if keys else None)


def _strata_group(keys: np.ndarray, seed: int, groups: int) -> np.ndarray:
    """The group (0..groups-1) of each stratum key for the strata band: a hash of the key,
    so every chunk, machine and order of the sums deals the strata alike."""
    return (_mix(keys, seed + 1) % np.uint64(groups)).astype(np.int64)


def _jackknifed(trials: np.ndarray) -> np.ndarray:
    """Trials that each leave out one of T groups of strata, spread as trials of the whole
    (:func:`_band` takes their spread as the estimate's): the full estimate's standard
    deviation is (T - 1) / sqrt(T) times theirs (a grouped jackknife)."""
    t = trials.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a point no trial has
        mean = np.nanmean(trials, axis=0)
    return mean + (trials - mean) * ((t - 1) / math.sqrt(t))


def _band_attrs(strata: Strata) -> dict[str, str]:
    """``attrs["band"]`` of a strata band (none for the band of re-grown halves)."""
    if strata.band != STRATA_BAND or strata.settings.n_trials < 2:
        return {}
    return {"band": (
        f"from {strata.settings.n_trials} groups of the strata, each left out in turn; it "
        "leaves out the trees' own variability, so it is narrower than the band of "
        "re-grown halves (9-20 % in docs/engine.md)"
    )}


def _limits_of_mean(facts: TableFacts, mean: float) -> tuple[float, float] | None:
    """:func:`_probability_limits` from the rows' mean target."""
    if not facts.yes_no:
        return None
    m = float(mean)
    return -m, 100.0 / facts.y_scale - m


def _stratpd_table(
    table: Table, feature: str, p: Settings, row_pd: bool = False, tree_threads: bool = True
) -> tuple[pd.DataFrame, np.ndarray | None]:
    """StratPD curve, plus (if asked) the per-row pd used by the impact ranking: the four
    stages with the table's rows as the sample and as the one chunk."""
    strata = _fit(table, feature, p, tree_threads=tree_threads)
    return _finish_curve(strata, _pass_sample(strata), row_pd, blanks=strata.blanks)


def _fit_categories(table: Table, feature: str, p: Settings, *, ids: np.ndarray | None = None,
                    whole: bool = True, tree_threads: bool = True, halves: bool = True,
                    class_code: np.ndarray | None = None, n_classes: int = 0) -> Strata:
    """Stage 1 of CatStratPD on the rows of ``table``: the cells are (stratum, category);
    ``class_code``, ``n_classes`` as for :func:`_fit`."""
    codes_all, cats = table.category_codes(feature)
    # Blanks are one more category, compared inside the strata like the others.
    codes_all, cats, blank_code = with_missing_category(codes_all, cats)
    rows = _rows_for(table, feature, codes_all >= 0, p)
    codes = codes_all[rows.index]
    k = len(cats)
    columns = table.strata_columns(feature)
    xb = table.strata_matrix(feature, rows.index)
    rng = np.random.default_rng(p.random_state)
    leaf, placement, keys = stratify(xb, rows.y, p.min_samples_leaf, rng, honest=p.honest,
                                     threads=tree_threads, placement=True)
    # The same linear adjustment as for numeric features (see _fit), with the feature's
    # categories as indicator columns in the fit.
    adj = None
    adj_rng = rng.spawn(1)[0]  # see _fit
    if p.adjust and 2 <= k <= MAX_ADJUST_LEVELS:
        indicators = (codes[:, None] == np.arange(1, k)).astype(float)
        adj = _adjustment(table, feature, rows.index, indicators, rows.y, leaf, adj_rng,
                          numeric=False)
    elif p.adjust:
        adj = Adjustment(None, np.nan, np.nan, f"more than {MAX_ADJUST_LEVELS} categories in "
                         "the feature")
    part = None if adj is None else adj.part
    classes = None if class_code is None else class_code[rows.index]
    if classes is None:
        # Whether the categories meet in the strata is the finish's to say: both readings.
        leaks = _leaks_of(table, feature, rows.index, rows.y, leaf, adj, feature_varies=True)
        still = _leaks_of(table, feature, rows.index, rows.y, leaf, adj,
                          feature_varies=False)
        gaps = {part is not None: _gap_warnings(table, feature, CATEGORICAL, rows.index,
                                                part is not None)}
    else:  # the classes' checks are their own (engine/_classes.py)
        leaks, still, gaps = [], [], {False: []}
    if part is not None:  # the finish may fall back to the plain comparison
        gaps[False] = (_gap_warnings(table, feature, CATEGORICAL, rows.index, False)
                       if gaps[True] else [])
    size_se = np.nan if part is None else _effects_size_se(adj, codes, k, rows.y, leaf)
    trials = None
    if p.n_trials > 1 and halves:
        trials = []
        for pick, leaf_b in _half_samples(xb, rows.y, p, rng, tree_threads):
            if classes is not None:  # each class's effects in the half's strata
                trials.append((np.vstack([category_effects(
                    codes[pick], k, _indicator(classes[pick], c), leaf_b).effect
                    for c in range(n_classes)]), None))
                continue
            e = category_effects(codes[pick], k, _trial_y(rows.y, adj, pick, leaf_b),
                                 leaf_b).effect
            plain = (None if part is None
                     else category_effects(codes[pick], k, rows.y[pick], leaf_b).effect)
            trials.append((e, plain))
    positions = rows.index if ids is None else ids[rows.index]
    order = np.argsort(positions, kind="stable")
    design = (None if whole or part is None else fit_design(
        table, feature, rows.index, codes, None, adj.inputs, n_categories=k))
    strata = Strata(
        feature, p, TableFacts.of(table),
        table.yes_no.get("positive") if table.yes_no else None,
        table.frame[feature].iloc[:0], 1.0, columns, table.encoders(columns), placement,
        0 if p.random_state is None else int(p.random_state), whole, np.arange(k),
        positions[order], keys[order], None if part is None else part[order], design,
        None if adj is None else replace(adj, part=None, inputs={}),
        np.nan, leaks, [] if classes is not None else _duplicating(table, feature, rows.index),
        gaps, np.zeros(0), None,
        trials, kind=CATEGORICAL, categories=cats, leaks_if_still=still,
        blank_category=blank_code is not None, size_se=size_se,
    )
    strata._rows = {"ids": positions, "x": codes, "y": rows.y, "keys": leaf, "part": part,
                    "xi": codes, "n_rows": np.int64(table.n_rows),
                    "n_missing": np.int64(rows.n_dropped_missing),
                    "n_target": np.int64(table.y.size), "code": classes}
    return strata


def _effects_size_se(adj: Adjustment, codes: np.ndarray, k: int, y: np.ndarray,
                     leaf: np.ndarray) -> float:
    """The standard error of the adjustment's move of a categorical feature's size (its
    effects' scale along the plain pattern, 1 for the plain effects: ``_adjust.effects_scale``),
    from the noise of the fit's coefficients; on at most ``SIZE_ROWS`` rows (every k-th), as
    for a curve's change.  NaN when the plain effects have no size."""
    step = -(-y.size // SIZE_ROWS)
    sub = slice(None) if step == 1 else slice(0, None, step)
    codes_s, y_s, leaf_s = codes[sub], y[sub], leaf[sub]
    plain = category_effects(codes_s, k, y_s, leaf_s)
    d = effects_scale(plain.effect, plain.count, FEW_ROWS)
    weights = None if d is None else contrast_weights(codes_s, k, leaf_s, d)
    if weights is None:
        return np.nan
    return adj.size_move(weights, None if step == 1 else np.arange(y.size)[sub])[1]


def _reduce_categories(strata: Strata, ids: np.ndarray, y: np.ndarray, keys: np.ndarray,
                       part: np.ndarray | None, xi: np.ndarray, n_rows: int,
                       n_missing: int, n_target: int, code: np.ndarray | None = None
                       ) -> Partial:
    """The rows' sums per (stratum, category ``xi``) cell, as :func:`category_effects` takes
    them (``np.bincount`` over the rows in row order: one chunk of every row gives the same
    effects to the bit), with each cell's squares of the target about its mean (none for
    classes, ``code``: each class's indicator is summed, and only an adjustment's
    comparison uses the squares)."""
    k = np.int64(strata.grid.size)
    n = y.size
    if code is not None:
        cell, rows, total, m2 = category_cells(keys * k + xi, _indicator(code, 0), False)
        sums = [total] + [category_cells(keys * k + xi, _indicator(code, c), False)[2]
                          for c in range(1, len(strata.classes))]
    else:
        cell, rows, total, m2 = category_cells(keys * k + xi, y)
        sums = [total]
    if part is not None:
        sums.append(category_cells(keys * k + xi, y - part, False)[2])
    leaves, at = np.unique(keys, return_inverse=True)
    first = np.full(leaves.size, np.iinfo(np.int64).max, np.int64)
    np.minimum.at(first, at, ids)
    total_y = np.sum(y) if n else 0.0
    mean = total_y / n if n else 0.0
    d = y - mean
    return Partial(n_rows, n_missing, cell, rows.astype(np.int64), np.vstack(sums), leaves,
                   first, n, float(total_y), float(mean), float(np.sum(d * d)),
                   int(np.count_nonzero(y > 0)), m2, n_target)


def _finish_categories(strata: Strata, partial: Partial, row_pd: bool = False,
                       by_bins: bool = False) -> tuple[pd.DataFrame, Any]:
    """Stage 4 of CatStratPD: the category table from the sums of every row, and with
    ``row_pd`` the effect of every row's category (or ``by_bins``: of each category, and
    its rows) for the impact ranking."""
    p, facts, feature, cats = strata.settings, strata.facts, strata.feature, strata.categories
    k = len(cats)
    n = partial.y_n
    if n == 0:
        raise StratPDInputError(
            f'no row has values in both "{facts.target}" and "{feature}"; pass the rows to '
            "analyse"
        )
    cell, rows, sums, m2, n_leaves, raw = _labelled_cells(strata, partial)
    adj, applied = strata.adjustment, strata.adjusted
    eff = effects_of_cells(cell, rows, sums[1 if applied else 0] / rows, m2, k, n, n_leaves)
    trial_index = 0
    reversal = sized = None
    if applied:
        # Checked against the plain comparison inside the same strata (see _order_check).
        plain = effects_of_cells(cell, rows, sums[0] / rows, m2, k, n, n_leaves, True)
        reversal, fall_back = _order_check(feature, cats, eff, plain)
        d = None if fall_back else effects_scale(plain.effect, plain.count, FEW_ROWS)
        if d is not None:
            # A large move of the effects' size within the adjustment's own noise, as for
            # a curve's change (d @ plain is 1).
            known_both = np.isfinite(eff.effect) & (d != 0)
            scale = float(d[known_both] @ eff.effect[known_both])
            sized = size_check(feature, scale - 1.0, strata.size_se, 1.0, adj.r2,
                               categories=True)
        if fall_back or sized:
            eff, applied, trial_index = plain, False, 1
            adj = replace(adj, reason="it reversed a clear order of the plain comparison "
                          "inside the strata" if fall_back else "it moved the effects' size "
                          "a lot, but by less than its own noise")
    known = np.flatnonzero(~np.isnan(eff.effect))
    if known.size < 2:
        _raise_if_restated(strata.leaks_if_still, facts)
        raise StratPDInputError(
            f'the categories of "{feature}" never meet inside a stratum, so no effect can be '
            "estimated; raise min_samples_leaf or add rows"
        )
    out = {
        "category": pd.Index(cats[known], dtype=object),
        "pd": eff.effect[known],
        "count": eff.count[known],
    }
    values = eff.effect
    trial_effects = None
    trials = None
    if strata.trials is not None:
        trials = np.full((len(strata.trials), k), np.nan)
        for t, pair in enumerate(strata.trials):
            e = pair[trial_index]
            # Same baseline as the full-data estimate, so the trials are comparable.
            trials[t] = e - e[eff.baseline]
    elif strata.band == STRATA_BAND and p.n_trials > 1:
        groups = _strata_group(raw, strata.seed, p.n_trials)
        ybar = sums[0 if trial_index or not strata.adjusted else 1] / rows
        trials = np.full((p.n_trials, k), np.nan)
        for t in range(p.n_trials):
            keep = groups != t
            label = np.unique(cell[keep] // k, return_inverse=True)[1].reshape(-1)
            e = effects_of_cells(label * k + cell[keep] % k, rows[keep], ybar[keep],
                                 m2[keep], k, int(rows[keep].sum()),
                                 int(label.max()) + 1 if label.size else 0).effect
            trials[t] = e - e[eff.baseline]
        trials = _jackknifed(trials)
    if trials is not None:
        # pd stays the full-data estimate, as for numeric curves.
        low, high = _band(trials[:, known], eff.effect[known], n)
        out.update(pd_low=low, pd_high=high)
        low, high, _ = _simultaneous_band(trials[:, known], eff.effect[known], n)
        out.update(curve_low=low, curve_high=high)
        trial_effects = trials[:, known] * facts.y_scale
    for name in ("pd", "pd_low", "pd_high", "curve_low", "curve_high"):
        if name in out:
            out[name] = out[name] * facts.y_scale
            if facts.yes_no:
                # Two categories' chances differ by at most 100 points.
                out[name] = np.clip(out[name], -100.0, 100.0)
    result = pd.DataFrame(out)
    if strata.blank_category and k - 1 in known:
        result[MISSING] = known == k - 1
    unknown = [str(c) for c in cats[np.isnan(eff.effect)]]
    warnings_ = []
    if eff.n_ignored > 0.5 * n:
        twins = strata.twins
        warnings_.append(Note(
            f'{eff.n_ignored / n:.0%} of the rows sit in strata holding one category '
            f'of "{feature}" only: the other columns{_named(twins)} nearly determine it, so its '
            "effects rest on few rows; leave out the columns that duplicate it (exclude)",
            "duplicate", columns=twins, features=[feature], moves=eff.n_ignored / n,
            tie="one category", alone=eff.n_ignored / n,
        ))
    warnings_ += _ordered_warnings(facts.target, feature, strata.leaks, reversal,
                                   strata.gap_notes[applied])
    if sized:
        warnings_.append(sized)
    few = eff.count[known] < FEW_ROWS
    result.insert(result.columns.get_loc(MISSING) if MISSING in result else result.shape[1],
                  "few_rows", few)
    if few.any():
        names = ", ".join(f'"{c}"' for c in cats[known][few][:8])
        more = f" and {few.sum() - 8:,} more" if few.sum() > 8 else ""
        warnings_.append(Note(
            f'{int(few.sum()):,} categor{"y" if few.sum() == 1 else "ies"} of "{feature}" '
            f"rest{'s' if few.sum() == 1 else ''} on fewer than {FEW_ROWS} rows ({names}{more}; "
            "few_rows in the table): their effects are little more than those rows' noise; "
            "merge rare categories or add rows",
            "few rows", columns=[feature], features=[feature], moves=0.2,
        ))
    contrast = _contrast(result, cats[eff.baseline], trial_effects, n)
    if facts.yes_no:  # two chances differ by at most 100 points
        for said, names in ((contrast, ("change", "low", "high")),
                            (contrast.get("blank") or {}, ("pd", "low", "high"))):
            for name in names:
                if name in said:
                    said[name] = float(np.clip(said[name], -100.0, 100.0))
    result.attrs = _attrs(
        replace(facts, n_rows=partial.n_rows), feature, CATEGORICAL, n, partial.n_missing,
        eff.n_ignored, eff.n_leaves, p,
        baseline=cats[eff.baseline], categories_without_estimate=unknown, warnings=warnings_,
        contrast=contrast, **_adjust_attrs(adj, applied), **_band_attrs(strata),
    )
    if not row_pd:
        return result, None
    if by_bins:
        cat_rows = np.bincount(cell % k, weights=rows, minlength=k).astype(np.int64)
        has = ~np.isnan(values) & (cat_rows > 0)
        return result, (values[has], cat_rows[has])
    per_row = values[strata._rows["xi"]]
    return result, per_row[~np.isnan(per_row)]


def _labelled_cells(strata: Strata, partial: Partial
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, np.ndarray]:
    """The partial's (stratum, category) cells keyed ``label x categories + category``
    (strata labelled by their first row, as :func:`_stratify.canonical_labels` labels
    them), ascending; their rows, sums, squares about their means, the strata met and each
    cell's stratum key."""
    k = np.int64(strata.grid.size)
    order, label, raw = _by_label(partial, k)
    rows, sums, m2, key = partial.cell_rows, partial.cell_sums, partial.cell_m2, partial.cell_key
    if order is not None:
        rows, sums, m2, key = rows[order], sums[:, order], m2[order], key[order]
    return label * k + key % k, rows, sums, m2, int(partial.leaf_key.size), raw


def _catstratpd_table(
    table: Table, feature: str, p: Settings, row_pd: bool = False, tree_threads: bool = True
) -> tuple[pd.DataFrame, np.ndarray | None]:
    """CatStratPD table, plus (if asked) the per-row pd used by the impact ranking: the
    four stages with the table's rows as the sample and as the one chunk."""
    strata = _fit_categories(table, feature, p, tree_threads=tree_threads)
    return _finish_categories(strata, _pass_sample(strata), row_pd)


_IMPLS = {NUMERIC: _stratpd_table, CATEGORICAL: _catstratpd_table}


def _run(
    table: Table, feature: str, kind: str | None, p: Settings, row_pd: bool = False,
    tree_threads: bool = True,
) -> tuple[pd.DataFrame, np.ndarray | None]:
    feature, kind = _feature_of(table, feature, kind)
    return _IMPLS[kind](table, feature, p, row_pd, tree_threads)


def _feature_of(table: Table, feature: str, kind: str | None) -> tuple[str, str]:
    """The feature's column label and how it is analysed, checked against the table."""
    feature = column_label(feature, role="feature")
    require_column(table.all_columns, feature, "feature")
    if feature == table.target:
        raise StratPDInputError(
            f'"{feature}" is the target; choose another column as feature'
        )
    kind = kind or table.kinds[feature]
    if kind not in _IMPLS:
        raise StratPDInputError(f'kind must be "numeric" or "categorical", not {kind!r}')
    if kind == NUMERIC and table.kinds[feature] == CATEGORICAL:
        example = numbers_as_text(table.frame[feature])
        if example is not None:
            raise StratPDInputError(
                f'column "{feature}" holds numbers stored as text ("{example}"); convert it '
                f'first: data["{feature}"] = pd.to_numeric(data["{feature}"]), or use '
                "catstratpd to treat them as categories"
            )
        raise StratPDInputError(
            f'column "{feature}" holds text or categories; use catstratpd (or kind="categorical")'
        )
    return feature, kind


# --------------------------------------------------------------------------- classes
# A target read as classes (engine/_classes.py) goes through the same stages: the strata
# grown once, on the classes' projection; each class's indicator summed per cell; each
# class's curve (or effects) finished from its row of sums.


def fit_classes(sample: pd.DataFrame, target: str, feature: str, kind: str | None,
                p: Settings, classes: Any, *, ids: np.ndarray | None = None,
                whole: bool = True, halves: bool = True) -> Strata:
    """Stage 1 of a target read as classes (:func:`fit_strata` with ``classes``): the
    strata grown on the classes' projection (engine/_classes.py), with each row's class,
    the classes ``sample`` holds and those ``classes`` shows.  ``ids``: the rows' ids
    (default their positions); ``whole``, ``halves`` as ``fit_strata``'s."""
    renamed, target, found, shown, code = read_classes(sample, target, p, classes)
    table = _table(renamed, target, keep=[feature, *p.keep], exclude=p.exclude,
                   roles={column_label(feature, role="feature"): "feature"})
    feature = column_label(feature, role="feature")
    kind = kind or table.kinds[feature]
    if kind == NUMERIC and table.kinds[feature] != NUMERIC:
        raise StratPDInputError(
            f'column "{feature}" holds text or categories; use catstratpd (or '
            'kind="categorical")')
    if kind not in (NUMERIC, CATEGORICAL):
        raise StratPDInputError(f'kind must be "numeric" or "categorical", not {kind!r}')
    if ids is not None and table.kept is not None:
        ids = ids[table.kept]
    # The rows the table kept (those with a class) in their order, with their class.
    row_code = code[code >= 0]
    fit = _fit if kind == NUMERIC else _fit_categories
    # No adjustment: one per class would break the classes' sum (engine/_classes.py).
    strata = fit(table, feature, replace(p, adjust=False), ids=ids, whole=whole,
                 halves=halves, class_code=row_code, n_classes=len(found))
    strata.settings, strata.classes, strata.shown = p, found, shown
    strata._rows["class_n"] = np.bincount(row_code, minlength=len(found))
    return strata


def class_table(data: Any, target: str, feature: str, kind: str | None, p: Settings,
                classes: Any = True) -> pd.DataFrame:
    """The long table of one curve (or category table) per class of a table in memory (see
    :func:`stratpd_xl.stratpd`, ``classes``): the engine's stages with the table as the
    sample and as the one chunk."""
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    strata = fit_classes(frame, target, feature, kind, p, classes)
    return finish_classes(strata, _pass_sample(strata))[0]


def finish_classes(strata: Strata, partial: Partial
                   ) -> tuple[pd.DataFrame, dict[Any, tuple[np.ndarray, np.ndarray]]]:
    """Stage 4 of a target read as classes: the long table from the sums of every row, and
    each shown class's pd at each x bin (category) with its rows, for the ranking."""
    p, facts, feature, found = strata.settings, strata.facts, strata.feature, strata.classes
    if partial.y_n == 0:
        raise StratPDInputError(
            f'no row has values in both "{facts.target}" and "{feature}"; pass the rows to '
            "analyse"
        )
    finished = _class_effects if strata.kind == CATEGORICAL else _class_curves
    out, by_bins, n_used, n_leaves, said = finished(strata, partial)
    shown = strata.shown
    names = [found[k] for k in shown]
    result = pd.concat(out, ignore_index=True)
    result.insert(0, CLASS, pd.Categorical(np.repeat(
        np.array(names, dtype=object), [len(o) for o in out]), categories=names, ordered=True))
    counts = partial.class_n
    result.attrs = {
        "method": "StratPD by class" if strata.kind == NUMERIC else "CatStratPD by class",
        "target": facts.target, "feature": feature, "kind": strata.kind,
        "classes": names, "all_classes": list(found),
        "class_rows": {found[k]: int(counts[k]) for k in range(len(found))},
        "class_impact": {found[k]: _impact(*by_bins[k]) for k in shown},
        "class_sum": out_sum(out, len(found) == len(shown)),
        # Each shown class's numbers for a sentence, as one curve's attrs carry them: a
        # numeric curve's "rise" and "shape", or the categories' "contrast".
        "class_findings": {found[k]: v for k, v in said.items()},
        "units": "percentage points",
        "n_rows": partial.n_rows, "n_used": n_used, "n_dropped_missing": partial.n_missing,
        "n_leaves": n_leaves,
        "params": _params(p, facts, categorical=strata.kind == CATEGORICAL),
        "left_out": dict(facts.left_out), "adjusted": False,
        "adjust_note": "classes: one adjustment per class would break their sum",
        "warnings": [],
        **_band_attrs(strata),
    }
    return result, {found[k]: v for k, v in by_bins.items()}


def out_sum(out: list[pd.DataFrame], every: bool) -> float:
    """The largest absolute sum of the classes' ``pd`` at any point (0 to rounding when
    every class is shown; NaN when some are not)."""
    if not every or not out:
        return float("nan")
    return float(np.max(np.abs(np.sum([o["pd"].to_numpy(float) for o in out], axis=0))))


def _class_curves(strata: Strata, partial: Partial) -> tuple[
        list[pd.DataFrame], dict[int, tuple[np.ndarray, np.ndarray]], int, int,
        dict[int, dict[str, Any]]]:
    p, k = strata.settings, len(strata.classes)
    first = _cell_field(strata, partial, 0)
    # One field of the strata and x; each class's slopes of its own summed indicator.
    fields = [first] + [first.for_target(c) for c in range(1, k)]
    # The points kept depend on the strata and x only: the same for every class.
    curves = [integrate(f, p.min_slopes_per_x) for f in fields]
    if curves[0] is None:
        raise StratPDInputError(
            f'no value of "{strata.feature}" is backed by {p.min_slopes_per_x} leaf slopes (x '
            "varies too little inside the strata); lower min_slopes_per_x or "
            "min_samples_leaf, or add rows")
    grid = curves[0].x
    up_to = curves[0].points_up_to(first.ux.size)
    weights = _row_weights(grid, first.ux, first.ux_rows, up_to)
    full = [_centred(c.pd, weights) for c in curves]
    trials = None
    if strata.trials is not None:
        trials = np.empty((k, len(strata.trials), grid.size))
        for t, trial in enumerate(strata.trials):
            for c in range(k):
                trials[c, t] = _centred(curve_on_grid(
                    replace(trial, slope=trial.slope[c]), p.min_slopes_per_x, grid), weights)
    elif strata.band == STRATA_BAND and p.n_trials > 1:
        trials = np.empty((k, p.n_trials, grid.size))
        for t in range(p.n_trials):  # the strata of group t left out (stages._jackknifed)
            left = _cell_field(strata, partial, 0, (t, p.n_trials))
            for c in range(k):
                trials[c, t] = _centred(curve_on_grid(
                    left if c == 0 else left.for_target(c), p.min_slopes_per_x, grid),
                    weights)
        trials = np.array([_jackknifed(trials[c]) for c in range(k)])
    out, by_bins, said = [], {}, {}
    inside = (first.ux >= grid[0]) & (first.ux <= grid[-1])
    n = partial.y_n
    x_scale, column = strata.x_scale, strata.feature_type
    for c in strata.shown:
        columns: dict[str, Any] = {"x": grid, "pd": full[c], "slope": curves[c].slope,
                                   "n_slopes": curves[c].count.astype(np.int64)}
        bias = None
        if trials is not None:
            bias = _centred(resmoothed(fields[c], curves[c]), weights) - full[c]
            low, high = _band(trials[c], full[c], n, bias)
            columns.update(pd_low=low, pd_high=high)
            low, high, _ = _simultaneous_band(trials[c], full[c], n, bias)
            columns.update(curve_low=low, curve_high=high)
        # The class's rise and shape between x's 10th and 90th percentiles, as a curve of
        # one target states them (engine/_band.py, engine/_shape.py), in its own units.
        rise = _rise(strata.rise_ends, grid, full[c], None if trials is None else trials[c],
                     n, bias)
        shape = curve_shape(
            grid, full[c], None if trials is None else trials[c], fields[c].ux,
            fields[c].ux_rows, (rise["x_from"], rise["x_to"]),
            lambda values, centre: _band(values[:, None], np.array([centre]), n))
        _scale_shape(shape, x_scale, 1.0, column)
        at = _numeric_x_out(np.array([rise["x_from"], rise["x_to"]]) * x_scale, column)
        rise["x_from"], rise["x_to"] = (v.item() if hasattr(v, "item") else v
                                        for v in list(at))
        said[c] = {"rise": rise, "shape": shape}
        if p.max_points is not None and grid.size > p.max_points:
            summary = summarise(grid, curves[c].pd, curves[c].count, fields[c].ux,
                                fields[c].ux_rows, p.max_points, up_to)
            columns = {name: v[summary.index] for name, v in columns.items()}
            columns.update(slope=summary.slope, n_slopes=summary.n_slopes, n_x=summary.n_x)
        columns["x"] = _numeric_x_out(columns["x"] * x_scale, column)
        columns["slope"] = np.asarray(columns["slope"], float) / x_scale
        out.append(pd.DataFrame(columns))
        by_bins[c] = (np.interp(first.ux[inside], grid, full[c]), first.ux_rows[inside])
    return out, by_bins, int(n - first.n_ignored), first.n_leaves, said


def _class_effects(strata: Strata, partial: Partial) -> tuple[
        list[pd.DataFrame], dict[int, tuple[np.ndarray, np.ndarray]], int, int,
        dict[int, dict[str, Any]]]:
    p, cats, k = strata.settings, strata.categories, len(strata.classes)
    n_cats, n = len(cats), partial.y_n
    cell, rows, sums, m2, n_leaves, raw = _labelled_cells(strata, partial)
    effects = [effects_of_cells(cell, rows, sums[c] / rows, m2, n_cats, n, n_leaves)
               for c in range(k)]
    known = np.flatnonzero(~np.isnan(effects[0].effect))
    if known.size < 2:
        raise StratPDInputError(
            f'the categories of "{strata.feature}" never meet inside a stratum, so no effect '
            "can be estimated; raise min_samples_leaf or add rows")
    trials = None
    if strata.trials is not None:
        trials = np.full((k, len(strata.trials), n_cats), np.nan)
        for t, (by_class, _) in enumerate(strata.trials):
            for c in range(k):
                trials[c, t] = by_class[c] - by_class[c][effects[c].baseline]
    elif strata.band == STRATA_BAND and p.n_trials > 1:
        groups = _strata_group(raw, strata.seed, p.n_trials)
        trials = np.full((k, p.n_trials, n_cats), np.nan)
        for t in range(p.n_trials):
            keep = groups != t
            label = np.unique(cell[keep] // n_cats, return_inverse=True)[1].reshape(-1)
            for c in range(k):
                e = effects_of_cells(label * n_cats + cell[keep] % n_cats, rows[keep],
                                     sums[c][keep] / rows[keep], m2[keep], n_cats,
                                     int(rows[keep].sum()),
                                     int(label.max()) + 1 if label.size else 0).effect
                trials[c, t] = e - e[effects[c].baseline]
        trials = np.array([_jackknifed(trials[c]) for c in range(k)])
    cat_rows = np.bincount(cell % n_cats, weights=rows, minlength=n_cats).astype(np.int64)
    out, by_bins, said = [], {}, {}
    for c in strata.shown:
        eff = effects[c]
        columns: dict[str, Any] = {"category": pd.Index(cats[known], dtype=object),
                                   "pd": eff.effect[known], "count": eff.count[known]}
        if trials is not None:
            low, high = _band(trials[c][:, known], eff.effect[known], n)
            columns.update(pd_low=low, pd_high=high)
            low, high, _ = _simultaneous_band(trials[c][:, known], eff.effect[known], n)
            columns.update(curve_low=low, curve_high=high)
        out.append(pd.DataFrame(columns))
        said[c] = {"contrast": _contrast(
            out[-1], cats[eff.baseline],
            None if trials is None else trials[c][:, known], n)}
        has = ~np.isnan(eff.effect) & (cat_rows > 0)
        by_bins[c] = (eff.effect[has], cat_rows[has])
    return out, by_bins, int(n - effects[0].n_ignored), effects[0].n_leaves, said


def class_ranking(data: Any, target: str, features: list[str] | None, p: Settings,
                  classes: Any, progress: Any = None, thin_share: float = 0.2,
                  ) -> tuple[pd.DataFrame, dict[str, pd.DataFrame], dict[str, str]]:
    """The impact ranking of a target read as classes: each feature's impact is its largest
    class's (``class`` names it; ``class_impact`` in its curve's ``attrs`` has them all),
    then as :func:`stratpd_xl.analyse` ranks (``share``, ``rows``, ``thin``).  The features'
    long tables (:func:`class_table`) and the skipped ones with the reason."""
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    target = column_label(target, role="target")
    if features is None:
        # Every column but the target, the excluded ones and the identifiers, as a ranking of
        # a file or a Dask DataFrame chooses them (each feature's own table keeps its
        # feature, so its left_out never names it).
        labels = [column_label(c, j) for j, c in enumerate(frame.columns)]
        features = ranked_features(frame.set_axis(labels, axis=1), target, keep=p.keep,
                                   exclude=p.exclude, classes=classes)
    names = list(dict.fromkeys(f for f in features if f != target))
    curves, skipped = {}, {}
    for i, f in enumerate(names):
        if progress is not None:
            progress(i, len(names), f)
        try:
            curve = class_table(frame, target, f, None, p, classes)
        except StratPDInputError as exc:
            skipped[f] = str(exc)
            continue
        if f not in curve.attrs["left_out"]:  # an identifier, as the ranking of one target
            curves[f] = curve                  # leaves it out
    if progress is not None:
        progress(len(names), len(names), "")
    return _ranked(curves, skipped, target, p, thin_share), curves, skipped


def rank_classes(strata: list[Strata], partials: list[Partial], skipped: dict[str, str],
                 target: str) -> tuple[pd.DataFrame, dict[str, pd.DataFrame], dict[str, str]]:
    """:func:`class_ranking` from each feature's strata and the sums of every row (stage 4
    of ``engine.stages.analyse`` for a target read as classes)."""
    curves, skipped = {}, dict(skipped)
    for s, partial in zip(strata, partials, strict=True):
        try:
            curves[s.feature] = finish_classes(s, partial)[0]
        except StratPDInputError as exc:
            skipped[s.feature] = str(exc)
    return _ranked(curves, skipped, target, strata[0].settings), curves, skipped


def _ranked(curves: dict[str, pd.DataFrame], skipped: dict[str, str], target: str,
            p: Settings, thin_share: float = 0.2) -> pd.DataFrame:
    """The ranking of the features' class tables: by their largest class's impact, with
    its ``attrs``."""
    rows = []
    n_target = 0
    for f, curve in curves.items():
        n_target = sum(curve.attrs["class_rows"].values())
        impact = curve.attrs["class_impact"]
        top = max(impact, key=lambda c: impact[c])
        rows.append({"feature": f, "kind": curve.attrs["kind"], "class": top,
                     "impact": impact[top], "rows": int(curve.attrs["n_used"])})
    ranking = pd.DataFrame(rows, columns=["feature", "kind", "class", "impact", "rows"])
    total = ranking["impact"].sum()
    ranking["share"] = ranking["impact"] / total if total > 0 else 0.0
    ranking["thin"] = ranking["rows"] < thin_share * n_target
    ranking = by_evidence(
        ranking[["feature", "kind", "class", "impact", "share", "rows", "thin"]], curves)
    ranking.attrs = {"target": target, "params": p.as_dict(), "skipped": dict(skipped),
                     "classes": next(iter(curves.values())).attrs["classes"] if curves
                     else [], "units": "percentage points", "warnings": []}
    return ranking
