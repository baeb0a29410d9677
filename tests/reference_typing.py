"""Test-only reference: the per-cell typing of the sheet layer as it was before the
column-at-a-time rewrite (a frozen copy of sheet/_columns.py that applies the
scalar rules of sheet/_values.py cell by cell).

Property tests check that the fast path types every column exactly like this; the benchmark
uses it as "old".  Do not import it from the package.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from stratpd_xl.input.sheet._values import (  # the scalar rules themselves are shared
    ERROR_LIKE,
    EXCEL_ERRORS,
    KIND_WORD,
    LOCALISED_ERRORS,
    MAJORITY,
    MISSING_TEXT,
    NUM_COMMA,
    NUM_DOT,
    as_text,
    classify_text,
    classify_value,
    clean_number_text,
    is_blank,
    slash_date_order,
)


def column_decimal(texts: Any) -> str:
    """The old per-column decimal rule, text by text: comma when some text can only be a
    decimal-comma number and none a decimal-point one."""
    comma_only = dot_only = False
    for text in texts:
        s, _ = clean_number_text(text)
        is_dot = NUM_DOT.fullmatch(s) is not None
        is_comma = NUM_COMMA.fullmatch(s) is not None
        comma_only |= is_comma and not is_dot
        dot_only |= is_dot and not is_comma
        if dot_only:
            return "."
    return "," if comma_only else "."


def blank_mask(values: np.ndarray) -> np.ndarray:
    """True where a cell is blank: None, NaN, NaT or text of spaces only."""
    kind = values.dtype.kind
    if kind in "fc":
        return np.isnan(values)
    if kind in "iub":
        return np.zeros(values.shape[0], dtype=bool)
    if kind in "mM":
        return np.isnat(values)
    return np.fromiter((is_blank(v) for v in values), dtype=bool, count=values.shape[0])


def typed_column(
    name: str, values: Sequence[Any] | np.ndarray | pd.Series, decimal: str | None = None
) -> tuple[pd.Series, list[str]]:
    """Type one column of raw cell values.

    Parameters
    ----------
    name
        The column's (already cleaned) name, used for the Series and in notes.
    values
        The column's cells below the header: Python values as cell readers hand them over
        (float, int, str, bool, datetime, None ...), or a numpy array / Series of any dtype.
    decimal
        ``"."``, ``","`` or ``None`` (decide from the column's texts).

    Returns
    -------
    series : pandas.Series
        int64/float64 for numbers (including numbers stored as text), datetime64 for dates,
        bool (object when some are blank) for TRUE/FALSE, str for text; missing values are
        NaN/NaT/None.  A column is of a kind when at least 80 % of its non-blank cells are.
    notes : list of str
        Sentences about cells treated as missing (error values, stray text in numbers).
    """
    notes: list[str] = []
    cells = values.tolist() if isinstance(values, np.ndarray | pd.Series) else list(values)
    series = _column_from_cells(name, cells, decimal, notes)
    return series, notes


def _column_from_cells(
    name: str, cells: list[Any], decimal: str | None, notes: list[str]
) -> pd.Series:
    n = len(cells)
    kinds: list[str] = ["missing"] * n
    parsed: list[Any] = [None] * n
    text_rows: list[int] = []
    for i, value in enumerate(cells):
        if isinstance(value, str):
            text_rows.append(i)
        elif not is_blank(value):
            kinds[i], parsed[i] = classify_value(value)

    errors: dict[str, int] = {}
    if text_rows:
        # Columns repeat their values a lot (grades, prices, CSV cells): look at each distinct
        # string once, which keeps a 50,000-row file fast.
        first: dict[str, tuple[str, Any]] = {}
        for raw in dict.fromkeys(cells[i] for i in text_rows):
            text = raw.strip()
            upper = text.upper()
            if not text or text.casefold() in MISSING_TEXT:
                first[raw] = ("missing", None)
            elif upper in EXCEL_ERRORS or upper in LOCALISED_ERRORS or ERROR_LIKE.fullmatch(text):
                first[raw] = ("error", upper)
            else:
                first[raw] = ("text", text)
        distinct = list(dict.fromkeys(t for k, t in first.values() if k == "text"))
        col_decimal = decimal or column_decimal(distinct)
        date_order = slash_date_order(distinct)
        known = {t: classify_text(t, col_decimal, date_order) for t in distinct}
        for i in text_rows:
            kind, value = first[cells[i]]
            if kind == "text":
                kinds[i], parsed[i] = known[value]
            elif kind == "error":
                errors[value] = errors.get(value, 0) + 1

    if errors:
        count = sum(errors.values())
        shown = ", ".join(sorted(errors)[:3])
        notes.append(
            f'column "{name}": {count} error value{"s" if count > 1 else ""} '
            f"({shown}) treated as missing"
        )
    return build_series(name, kinds, parsed, cells, notes)


def build_series(
    name: str, kinds: list[str], parsed: list[Any], cells: list[Any], notes: list[str]
) -> pd.Series:
    counts = {k: kinds.count(k) for k in ("number", "date", "bool", "text")}
    filled = sum(counts.values())
    kind = "text"
    if filled == 0:
        kind = "number"  # header only: an empty numeric column; check_rows explains later
    else:
        for candidate in ("number", "date", "bool"):
            if counts[candidate] == filled or (
                candidate != "bool" and counts[candidate] >= MAJORITY * filled
            ):
                kind = candidate
                break

    if kind != "text":
        dropped = [
            str(c).strip() for k, c in zip(kinds, cells, strict=True) if k not in (kind, "missing")
        ]
        if dropped:
            examples = ", ".join(f'"{d}"' for d in dict.fromkeys(dropped).keys())
            examples = examples if len(examples) <= 60 else examples[:57] + "..."
            notes.append(
                f'column "{name}": {len(dropped)} cell{"s" if len(dropped) > 1 else ""} that '
                f"{'are' if len(dropped) > 1 else 'is'} not a {KIND_WORD[kind]} ({examples}) "
                "treated as missing"
            )
        values = [p if k == kind else None for k, p in zip(kinds, parsed, strict=True)]
    else:
        # Text typed by the user stays as typed ("2011-12" a fiscal year, "1,5" a label); only
        # real numbers, dates and booleans among the text are written out.
        values = [
            None if k == "missing" else c.strip() if isinstance(c, str) else as_text(k, p)
            for k, p, c in zip(kinds, parsed, cells, strict=True)
        ]

    if kind == "number":
        arr = np.array([np.nan if v is None else v for v in values], dtype=float)
        finite = arr[~np.isnan(arr)]
        if (
            len(finite) == len(arr)
            and np.all(np.isfinite(arr))
            and np.all(arr == np.round(arr))
            and np.all(np.abs(arr) < 2**53)
        ):
            return pd.Series(arr.astype(np.int64), name=name)
        return pd.Series(arr, name=name)
    if kind == "date":
        return pd.Series(pd.to_datetime(pd.Series(values, dtype=object)), name=name)
    if kind == "bool":
        if any(v is None for v in values):
            return pd.Series(values, name=name, dtype=object)
        return pd.Series(values, name=name, dtype=bool)
    return pd.Series(values, name=name, dtype="str")
