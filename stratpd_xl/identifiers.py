"""Columns of numbers that identify rows instead of describing them: one rule for every layer.

A row number (every R export's ``rownames``, a saved pandas index's ``Unnamed: 0``) or a
numeric key (a customer ``ID``, a parcel ``PID``) is unique per row, so the engine's tree can
split the rows on it into groups that mean nothing, and its "effect" is whatever order the
rows were exported in (Wage: "rownames ... wage goes up by about 0.52").  The input layer
(:func:`stratpd_xl.input.sheet.default_features`, the command line and the formulas) and the
engine (``sx.impact`` on a DataFrame) both leave such columns out with this rule, so they
agree; ``keep`` overrides it.

The rule (judged on 1,000+ real tables: ``benchmarks/identifiers_rdatasets.py``):

1. whole numbers, with at least :data:`MIN_ROWS` values, and
2. either the name says so (:func:`named_identifier`: ``rownames``, ``Unnamed: 0``,
   ``index``, ``id``, ``customer_id``, ``PID``, or an id named for what it identifies in
   one word: ``studyid``, ``schid``, ``patid`` ...) and at least half the values are
   distinct (a row number's or a key's, or a panel's subject id), or the header was blank
   (``column 1`` as read here, R's ``X`` first column) and it holds row numbers,
3. or the name is an id's (``id``, ``job_ad_id``, ``StoreID``, ``distid``:
   :func:`grouping_name`) and
   its values repeat, at least three of them and none negative: a grouping key (the job ad
   a resume was sent to, a panel's subject, a store), whose numbers have no order or size
   to mean anything,
4. or, whatever its name, it holds the rows' positions (0..n-1 or 1..n from top to bottom)
   and moves the target no more than noise does (:func:`related`): a designed ``x`` of
   1..100 or a time index ``t`` that the target follows is a feature and is kept, and so is
   a shuffled 1..n without such a name (a rank: Guerry's ``Wealth``),
5. or, whatever its name, it is a key where tables keep their keys: among the first
   columns (every column before it left out as a row number or an id, ``leading``), or
   after columns that group the rows and that it is numbered within, block by block (a
   pupil's number after its school's: :func:`parent_like`, :func:`nested_in`; then 1..n
   in any order is a key's shape too), at
   least :data:`MIN_KEY_ROWS` different whole numbers, none negative, not evenly spaced
   (a year, a time or a grid of x is) nor named as a time (``Period``, ``date``), that the
   target moves with no more than noise does (NHEFS' ``seqn``, a school's ``code``, a
   study's ``studyid``), or no more than noise does once the other columns have grouped the
   rows (California's district codes, numbered county by county): that second test needs
   the engine's strata (:func:`stratpd_xl.engine.key_given_others`, asked by the engine and
   by ``workflow.prepare`` for the column :func:`key_to_test` points to).

Other unique whole numbers (years, populations, prices, votes) are never left out: they
are not among the first columns nor numbered within the groups before them, or they are
evenly spaced, or too few to tell, or the target moves with them beyond the other columns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["MIN_KEY_ROWS", "MIN_ROWS", "grouping_name", "identifier_reason", "key_reason",
           "key_shaped", "key_to_test", "named_identifier", "nested_in", "parent_like",
           "related", "target_numbers", "with_parent"]

#: Fewer values than this are never called identifiers (too few to tell).
MIN_ROWS = 20
#: A key without an id's name needs this many values: in smaller tables (states, countries,
#: years) the first columns' unique whole numbers are mostly measurements (a population, a
#: GDP, a price) and the test of "no relation to the target" has too little power to tell.
MIN_KEY_ROWS = 100
#: A row number relates to the target when a test this strict says so (p-value below it):
#: ten groups of its values, an F test of the target's means between them.
RELATED_P = 0.001

_ROW_NAMES = re.compile(
    r"^(rownames|row[ ._]?names?|row[ ._]?(id|no|nr|num|number)|unnamed: ?\d+(\.\d+)?|"
    r"index|level_\d+|\.\.\.\d+|obs|obs[ ._]?(no|nr|num|number)|observation|order|case|"
    r"#|no\.?|nr\.?|s[ ._]?no\.?|sl[ ._]?no\.?|sr[ ._]?no\.?|serial([ ._]?(no|number))?|"
    r"id|uid|idno|id[ ._]?(no|nr|num|number|str))$",
    re.IGNORECASE,
)
# Names readers give a column whose header was blank: ours, R's read.csv (first column).
_BLANK_HEADER = re.compile(r"^(column \d+|X)$")
# "customer_id", "cust.id", "Customer ID"; "CustomerID", "PID"; "customerId".
_ID_SUFFIX = re.compile(r"([ ._-]id|ID|(?<=[a-z])Id)$")
# An id named for what it identifies, written as one word: "studyid", "schid", "distid",
# "patid", "childid", "schoolid2", "Tuna.householdid".  Only these stems: a word ending in
# "id" is as often a measurement ("humid", "liquid", "acid", "medicaid", "price_paid",
# "bladewid") or a scale ("pid" and "partyid", party identification from 0 to 6).
_ENTITY_ID = re.compile(
    r"(^|[ ._-])(stud(y|ent)?|sch(ool)?|dist(rict)?|case|child|kid|pat(ient)?|unit|county|"
    r"town|city|state|house(hold)?|hh|fam(ily)?|pers(on)?|subj(ect)?|firm|emp(loyee)?|"
    r"cust(omer)?|user|item|prod(uct)?|store|plot|site|hosp(ital)?|village|region|choice|"
    r"country|team|player|group|grp|cluster|clinic|teacher|class|company|resp(ondent)?)"
    r"id\d*$", re.IGNORECASE)
# Names of a time: a year, a date or a period with gaps is evenly spaced no more than a key
# is (Stat2Data's CloudSeeding2 Period, 108 of 194 periods; trading days as 19750103).
_TIME_NAME = re.compile(r"(^t$|year|yr|date|day|time|week|month|quarter|period|season|hour)",
                        re.IGNORECASE)
# The names of a key proper, not of a position ("no", "case", "index" and "order" also
# name measurements: texmex's NO, infert's case/control "case").
_ID_NAME = re.compile(r"^(id|uid|idno|id[ ._]?(no|nr|num|number|code))$", re.IGNORECASE)


def named_identifier(name: Any) -> bool:
    """Whether a column's name says it identifies rows: ``rownames``, ``Unnamed: 0``,
    ``index``, ``id``, ``customer_id``, ``PID``, ``CustomerId``, ``studyid``, ``schid``
    (not ``paid``, ``rapid``, ``humid``, ``partyid``)."""
    text = str(name).strip()
    return bool(_ROW_NAMES.match(text) or _ID_SUFFIX.search(text) or _ENTITY_ID.search(text))


def grouping_name(name: Any) -> bool:
    """Whether a column's name is an id's (``id``, ``job_ad_id``, ``StoreID``, ``userId``,
    ``distid``, ``schoolid``), so that its repeated values are groups (a job ad, a store, a
    school district), not amounts."""
    text = str(name).strip()
    return bool(_ID_NAME.match(text) or _ID_SUFFIX.search(text) or _ENTITY_ID.search(text))


def target_numbers(y: pd.Series) -> np.ndarray:
    """The target as numbers: its values, or codes of its texts (a yes/no target, classes)."""
    if pd.api.types.is_numeric_dtype(y.dtype) and not pd.api.types.is_bool_dtype(y.dtype):
        return pd.to_numeric(y, errors="coerce").to_numpy(dtype=float)
    codes, _ = pd.factorize(y, use_na_sentinel=True)
    return np.where(codes < 0, np.nan, codes).astype(float)


def related(values: np.ndarray, y: np.ndarray) -> bool:
    """Whether the target moves with ``values`` beyond noise: a rank correlation, or its
    mean differing between ten groups of equal size (fewer for under 100 rows; an F test),
    each at half of :data:`RELATED_P`."""
    ok = np.isfinite(values) & np.isfinite(y)
    values, y = values[ok], y[ok]
    n = values.size
    k = max(2, min(10, n // 10))
    if n <= k or np.ptp(y) == 0:
        return False
    group = (np.argsort(np.argsort(values, kind="stable"), kind="stable") * k) // n
    counts = np.bincount(group, minlength=k)
    means = np.bincount(group, weights=y, minlength=k) / np.maximum(counts, 1)
    between = float(np.sum(counts * (means - y.mean()) ** 2)) / (k - 1)
    within = float(np.sum((y - means[group]) ** 2)) / (n - k)
    if within <= 0:
        return between > 0
    from scipy.stats import f as f_distribution
    from scipy.stats import spearmanr

    # A steady trend shows more surely in the rank correlation than between ten groups
    # (the 1970 draft lottery: rank by day of the year); either test counts, at half the level.
    rho = float(spearmanr(values, y).statistic)
    trend = abs(rho) < 1 and _rank_p(rho, n) < RELATED_P / 2
    return bool(trend or abs(rho) == 1
                or f_distribution.sf(between / within, k - 1, n - k) < RELATED_P / 2)


def _rank_p(rho: float, n: int) -> float:
    """Two-sided p-value of a rank correlation ``rho`` over ``n`` rows (t approximation)."""
    from scipy.stats import t as t_distribution

    t = abs(rho) * np.sqrt((n - 2) / max(1.0 - rho * rho, 1e-300))
    return float(2 * t_distribution.sf(t, n - 2))


def identifier_reason(name: Any, column: pd.Series, target: pd.Series | None,
                      position: int = -1, *, leading: bool = False,
                      parents: Sequence[tuple[Any, pd.Series]] = ()) -> str | None:
    """Why a numeric column is left out as a row number or a key, or None to keep it.

    Parameters
    ----------
    name : str
        The column's name.
    column : Series
        Its values (all rows of the table).
    target : Series or None
        The target over the same rows (for the test of a row number or a key without
        such a name).
    position : int
        The column's place in the table (0: first), for R's ``X`` column of row names.
    leading : bool
        Whether every column before it (the target aside) was left out as a row number or
        an id, or holds one value: where tables keep their keys.
    parents : sequence of (name, Series)
        When not ``leading``: the columns analysed before it, when every one of them groups
        the rows (:func:`parent_like`); a key numbered within their groups (a pupil's
        number after its school's) is then in a key's place too (:func:`nested_in`).
    """
    if not pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(
            column.dtype):
        return None
    numbers = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
    head = numbers[:1000]  # measurements show a fraction in their first rows: no pass
    if np.any(np.isfinite(head) & (head != np.round(head))):
        return None
    present = numbers[np.isfinite(numbers)]
    if present.size < MIN_ROWS or np.any(present != np.round(present)):
        return None
    distinct = np.unique(present).size
    unique = distinct == present.size
    row_number = (unique and present.min() in (0.0, 1.0)
                  and present.max() == present.min() + present.size - 1)
    text = str(name).strip()
    if named_identifier(text) and distinct >= 0.5 * present.size:
        if unique:
            what = "row numbers" if row_number else "a key"
            return (f"it looks like an identifier ({what}: its name says so, and its "
                    f"{present.size:,} values are all different whole numbers)")
        return (f"it looks like an identifier (its name says so, and {distinct:,} of its "
                f"{present.size:,} values are different whole numbers)")
    if grouping_name(text) and not unique and distinct >= 3 and present.min() >= 0:
        return (f"it looks like an identifier (a grouping key: its name says so, and its "
                f"{distinct:,} different whole numbers repeat, {present.size / distinct:,.1f} "
                f"rows each on average)")
    nested = (not leading and unique and bool(parents)
              and _key_shaped(text, present, nested=True) and nested_in(numbers, parents))
    if nested or not row_number:
        if not (nested or (leading and unique and _key_shaped(text, present))):
            return None
        if target is None or related(numbers, target_numbers(target)):
            return None  # a key the target moves with: see key_shaped's second test
        return key_reason(present.size, [p for p, _ in parents] if nested else [])
    if _BLANK_HEADER.match(text) and (position == 0 or text != "X"):
        # A header left blank (pandas' saved index read back here, R's "X" first column).
        return (f"it looks like an identifier (a column without a name holding the row "
                f"numbers {present.min():.0f} to {present.max():,.0f})")
    # Without such a name only the rows' own positions count (0..n-1 or 1..n from top to
    # bottom, no gaps): a shuffled 1..n is as likely a rank (Guerry's Wealth) as an export.
    if present.size != numbers.size or not bool(np.all(np.diff(numbers) == 1)):
        return None
    if target is not None and related(numbers, target_numbers(target)):
        return None
    return (f"it looks like an identifier (the row numbers {present.min():.0f} to "
            f"{present.max():,.0f}, which the target moves with no more than noise does)")


def key_reason(n: int, parents: Sequence[Any] = (), given_others: bool = False) -> str:
    """The sentence of a key left out by its place and shape: ``n`` values, numbered within
    the groups of ``parents`` (or among the first columns), that the target moves with no
    more than noise does (``given_others``: once the other columns have grouped the rows)."""
    place = ("among the first columns" if not parents else "numbered within the groups of "
             + " and ".join(f'"{p}"' for p in parents) + " before it")
    tail = " once the other columns have grouped the rows" if given_others else ""
    return (f"it looks like an identifier (a key: {place}, its {n:,} values are all "
            f"different whole numbers, which the target moves with no more than noise "
            f"does{tail})")


def _key_shaped(text: str, present: np.ndarray, nested: bool = False) -> bool:
    """Rule 5's shape: enough different whole numbers (``present``, all different), none
    negative, not named as a time, and (among the first columns) not evenly spaced: a year,
    a time or a grid of x is.  Numbered within groups, 1..n is a key's shape too (a
    pupil's number running school by school)."""
    if present.size < MIN_KEY_ROWS or present.min() < 0 or _TIME_NAME.search(text):
        return False
    if nested:
        return True
    steps = np.diff(np.sort(present))
    return not bool(np.all(steps == steps[0]))


def parent_like(name: Any, column: pd.Series) -> bool:
    """Whether a column groups the rows as a key's parent would (a school before its pupils'
    numbers, a region before its counties'): its values repeat, two rows a value or more
    on average, and it is not named as a time (a count that grows year by year runs in
    blocks of the years)."""
    if _TIME_NAME.search(str(name).strip()):
        return False
    # From the first rows alone (a wide or long table asks it of every column before its
    # first measurement); nested_in counts the groups of all the rows.
    head = column.iloc[:1000]
    return 2 <= head.nunique() <= head.count() // 2


def with_parent(parents: list[tuple[Any, pd.Series]] | None, name: Any, column: pd.Series
                ) -> list[tuple[Any, pd.Series]] | None:
    """The analysed columns so far while each groups the rows (a key's possible parents, as
    :func:`identifier_reason` takes them), after the analysed column ``name``; None once a
    column does not group the rows (:func:`parent_like`): a key follows only its groups."""
    if parents is None or not parent_like(name, column):
        return None
    return [*parents, (name, column)]


def nested_in(numbers: np.ndarray, parents: Sequence[tuple[Any, pd.Series]]) -> bool:
    """Whether the whole numbers ``numbers`` run in one block per group of every column of
    ``parents``: sorted by them, each parent changes value only from one group to the next,
    as numbers given group by group do (a pupil's after its school's, a county's after its
    region's).  A measurement's values are not sorted by a grouping before it."""
    rows = np.isfinite(numbers)
    order = np.argsort(numbers[rows], kind="stable")
    for _, column in parents:
        codes = pd.factorize(column.to_numpy()[rows], use_na_sentinel=False)[0][order]
        groups = np.unique(codes).size
        if not 2 <= groups <= codes.size // 2:
            return False  # one group, or groups of a row: nothing to be numbered within
        if 1 + int(np.count_nonzero(codes[1:] != codes[:-1])) != groups:
            return False
    return True


def key_shaped(name: Any, column: pd.Series,
               parents: Sequence[tuple[Any, pd.Series]] = ()) -> bool:
    """Whether a column has a key's shape in a key's place (rule 5 of the module without
    its test against the target): at least :data:`MIN_KEY_ROWS` different whole numbers,
    none negative, not named as a time, and either (no ``parents``: among the first
    columns) not evenly spaced nor the rows' numbers 0..n-1 or 1..n (those have rule 4), or
    numbered within the groups of every one of ``parents`` (:func:`nested_in`).

    A key the target moves with (California's district codes run by county, and the scores
    with them) is left out only when the target moves with it no more than noise does once
    the other columns have grouped the rows: the engine's strata
    (:func:`stratpd_xl.engine.key_given_others`), which this module cannot fit."""
    if not pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(
            column.dtype):
        return False
    numbers = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
    head = numbers[:1000]  # a measurement shows a fraction or a repeat in its first rows
    head = head[np.isfinite(head)]
    if np.any(head != np.round(head)) or np.unique(head).size != head.size:
        return False
    present = numbers[np.isfinite(numbers)]
    if present.size < MIN_KEY_ROWS or np.any(present != np.round(present)):
        return False
    if np.unique(present).size != present.size:
        return False
    text = str(name).strip()
    if parents:
        return _key_shaped(text, present, nested=True) and nested_in(numbers, parents)
    if present.min() in (0.0, 1.0) and present.max() == present.min() + present.size - 1:
        return False
    return _key_shaped(text, present)


def key_to_test(frame: pd.DataFrame, columns: Sequence[Any]) -> tuple[Any, list[Any]] | None:
    """The column of ``frame`` among ``columns`` (the analysed ones, in table order) that is
    a key by its shape and place (:func:`key_shaped`): the first, or one after columns
    that all group the rows as its parents, and those parents' names; or None.  The
    engine then tests it inside the other columns' strata."""
    parents: list[tuple[Any, pd.Series]] = []
    for c in columns:
        if key_shaped(c, frame[c], parents):
            return c, [p for p, _ in parents]
        if not parent_like(c, frame[c]):
            return None
        parents.append((c, frame[c]))
    return None
