"""One column of raw cell values -> one typed pandas Series (the shared typing step).

Every reader hands its raw columns here (cells from Excel, a CSV parsed by pandas, a workbook
read by calamine), so a table is typed the same way wherever it comes from, as in pandas'
``io/excel`` where every reader hands raw cells to one parser.

A column is typed a column at a time: numbers that arrive as numbers are converted in one
numpy step, and each distinct text is classified once (``pd.factorize``) and mapped back to
its rows through the codes, so a million cells cost a few numpy passes, not a million calls.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from pandas.api.types import infer_dtype

from ._values import (
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

__all__ = ["blank_mask", "typed_column"]

# Kind codes of the per-row arrays (order matters: the majority rule tries 1, 2, 3).
MISSING, NUMBER, DATE, BOOL, TEXT = range(5)
_KIND_NAME = {NUMBER: "number", DATE: "date", BOOL: "bool", TEXT: "text", MISSING: "missing"}
_KIND_CODE = {v: k for k, v in _KIND_NAME.items()}

# Texts made only of these characters need none of clean_number_text's stripping, so whole
# arrays of them can be matched and converted by pandas/numpy at once.
_PLAIN = re.compile(r"[0-9.,eE+\-]+")
_PLAIN_CHARS = frozenset("0123456789.,eE+-")
_DOT_NUMBER_CHARS = frozenset("0123456789.eE+-")
_PLAIN_NUMBER_TYPES = (float, int, np.float64, np.int64)
_NUMERIC_INFERRED = frozenset({"floating", "integer", "mixed-integer-float", "empty"})
# Cells at the top of a column checked one at a time (the header and any title rows).
_HEAD_CELLS = 64
_SAMPLE_CELLS = 64


class ColumnScan(NamedTuple):
    """A column's blank cells, and its body's numbers when the body holds nothing else."""

    blank: np.ndarray  # True where a cell is blank
    head: int  # cells [0, head) were checked one by one (a header and title rows sit there)
    body_numbers: np.ndarray | None  # cells [head:] as floats, when all are numbers or blank


def scan_column(values: np.ndarray) -> ColumnScan:
    """:func:`blank_mask`, keeping the floats an all-number body was converted to on the way.

    Typing converts that body again otherwise: :func:`typed_rows` takes the floats instead
    (each pass over 200,000 Python floats scattered in memory costs ~5 ms).
    """
    if values.dtype.kind == "O" and values.ndim == 1:
        # A block's header and title rows sit on top of its body (text above numbers), so the
        # first cells are checked one by one and the rest, usually of one kind, at C speed.
        head = min(values.shape[0], _HEAD_CELLS)
        out = np.empty(values.shape[0], dtype=bool)
        out[:head] = [is_blank(v) for v in values[:head]]
        out[head:], numbers = _body_blank_mask(values[head:])
        return ColumnScan(out, head, numbers)
    return ColumnScan(blank_mask(values), 0, None)


def blank_mask(values: np.ndarray) -> np.ndarray:
    """True where a cell is blank: None, NaN, NaT or text of spaces only."""
    kind = values.dtype.kind
    if kind in "fc":
        return np.isnan(values)
    if kind in "iub":
        return np.zeros(values.shape[0], dtype=bool)
    if kind in "mM":
        return np.isnat(values)
    if kind == "O" and values.ndim == 1:
        return scan_column(values).blank
    return np.fromiter((is_blank(v) for v in values), dtype=bool, count=values.shape[0])


def _as_floats(values: np.ndarray) -> np.ndarray | None:
    """Numbers and None/NaN cells as floats in one C pass; None when one is not convertible
    (pd.NA, an int too large for a float)."""
    try:
        return values.astype(float)
    except (TypeError, ValueError, OverflowError):
        return None


def _number_floats(values: np.ndarray) -> np.ndarray:
    """Number and blank cells as floats: one C pass, or cell by cell where that fails (pd.NA,
    or an int beyond a float's range, which becomes infinite)."""
    floats = _as_floats(values)
    if floats is None:
        floats = np.array([_cell_float(v) for v in values], dtype=float)
    return floats


def _cell_float(value: Any) -> float:
    """A number or blank cell as a float; an int too large for one is infinite (and so
    missing, with a note, like 1e309)."""
    if pd.isna(value):
        return math.nan
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _body_blank_mask(values: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    n = values.shape[0]
    inferred = infer_dtype(values, skipna=True) if n else "empty"
    # infer_dtype skips exactly None, NaN (any float width) and pd.NA, which are blank for
    # is_blank too; every other cell of these kinds is a number or a str.
    if inferred in _NUMERIC_INFERRED:
        numbers = _as_floats(values)
        if numbers is not None:
            return np.isnan(numbers), numbers
        return np.asarray(pd.isna(values), dtype=bool), None
    if inferred == "string":
        out = np.asarray(pd.isna(values), dtype=bool)
        texts = values if not out.any() else values[~out]
        # Empty or spaces-only text is blank ("not text.strip()"): one C-level pass each.
        spaces = (texts == "") | np.fromiter(
            map(str.isspace, texts), dtype=bool, count=texts.shape[0]
        )
        if texts is values:
            return spaces, None
        out[~out] = spaces
        return out, None
    out = np.zeros(n, dtype=bool)
    tcodes, tuniq = pd.factorize(np.fromiter(map(type, values), dtype=object, count=n))
    for t, cls in enumerate(tuniq):
        rows = np.flatnonzero(tcodes == t)
        if cls in _PLAIN_NUMBER_TYPES or cls is type(None):
            out[rows] = np.asarray(pd.isna(values[rows]), dtype=bool)
        elif issubclass(cls, str):
            texts = values[rows]
            out[rows] = (texts == "") | np.fromiter(
                map(str.isspace, texts), dtype=bool, count=rows.size
            )
        else:
            out[rows] = [is_blank(v) for v in values[rows]]
    return out, None


def typed_rows(
    name: str, values: np.ndarray, scan: ColumnScan, rows: slice | np.ndarray,
    decimal: str | None = None,
) -> tuple[pd.Series, list[str]]:
    """``typed_column(name, values[rows], decimal)``, from ``scan``'s floats when it can.

    A stretch (a slice: no blank rows inside) of an all-number body types as numbers whatever
    ``decimal`` says, as in :func:`typed_column`, so the floats the scan made are the column:
    only the cells above the body (below the header) are still converted here.
    """
    if values.dtype.kind in "iu":  # a reader's whole numbers: exact, ids of 17 digits too
        return typed_column(name, values[rows], decimal)
    if not isinstance(rows, slice) or scan.body_numbers is None:
        return typed_column(name, values[rows], decimal)
    start, stop, step = rows.indices(values.shape[0])
    if step == 1 and stop > scan.head:
        lead = values[start : max(start, scan.head)]
        lead_inferred = infer_dtype(lead, skipna=True) if lead.size else "empty"
        lead_numbers = _as_floats(lead) if lead_inferred in _NUMERIC_INFERRED else None
        if lead_numbers is not None:
            numbers = scan.body_numbers[max(start - scan.head, 0) : stop - scan.head]
            notes: list[str] = []
            series = _number_series(name, np.concatenate([lead_numbers, numbers]), notes)
            return series, notes
    return typed_column(name, values[rows], decimal)


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
        Infinite numbers are missing values too.
    notes : list of str
        Sentences about cells treated as missing (error values, stray text in numbers,
        infinite numbers).
    """
    notes: list[str] = []
    arr = _as_array(values)
    if (arr.dtype.kind in "iu" and arr.size and np.abs(arr).max() >= 2**53
            and arr.max() <= np.iinfo(np.int64).max):
        # Beyond 2**53 a float would merge neighbouring ids (12345678901234500 and ...501):
        # the reader's integers stay integers (unsigned ones beyond int64, which would wrap
        # round to negatives, become floats below).
        return pd.Series(arr.astype(np.int64), name=name), notes
    if arr.dtype.kind in "fiu":
        return _number_series(name, arr.astype(float, copy=False), notes), notes
    if arr.dtype.kind != "O":
        # bool, datetime64 and the like: rare; keep the exact per-cell meaning of tolist().
        arr = np.array(arr.tolist(), dtype=object)
    inferred = infer_dtype(arr, skipna=True)
    if inferred == "string" and decimal != ",":
        floats = _plain_point_numbers(arr)
        if floats is not None:
            series = _exact_whole_numbers(_number_series(name, floats, notes), arr)
            return _keep_code_texts(series, arr), notes
    if inferred in _NUMERIC_INFERRED:
        # All cells are Python/numpy floats and ints or blanks (xlwings' numeric columns).
        return _number_series(name, _number_floats(arr), notes), notes
    series = _column_from_cells(name, arr, decimal, notes, inferred)
    if series.dtype.kind in "fi" and inferred != "empty":
        series = _keep_code_texts(_exact_whole_numbers(series, arr), arr)
    return series, notes


_WHOLE_TEXT = re.compile(r"^\s*[+-]?[0-9]+\s*$")


def _exact_whole_numbers(series: pd.Series, cells: np.ndarray) -> pd.Series:
    """``series`` as exact int64 when every cell is a whole number written as text and some
    lie beyond 2**53, where floats merge neighbouring ids (9007199254740993 would read as
    ...992); a workbook's integers and pandas' own reader keep them exact too."""
    values = series.to_numpy()
    if (values.dtype.kind != "f" or not values.size or np.isnan(values).any()
            or np.abs(values).max() < 2**53):
        return series
    if not all(isinstance(c, str) and _WHOLE_TEXT.match(c) for c in cells):
        return series
    try:
        exact = np.array([int(c) for c in cells], dtype=np.int64)
    except OverflowError:  # beyond int64: floats are all there is
        return series
    return pd.Series(exact, name=series.name)


_LEADING_ZERO = re.compile(r"^[ \t]*[+-]?0[0-9]", re.MULTILINE)


def leading_zeros(texts: Sequence[str]) -> bool:
    """Whether some text starts with a zero followed by a digit ("007", "-01")."""
    return _LEADING_ZERO.search("\n".join(texts)) is not None


def _keep_code_texts(series: pd.Series, cells: np.ndarray) -> pd.Series:
    """``series``, with ``attrs["texts"]``: the cells as typed, when numbers with leading
    zeros would merge with others ("007" and "7" are both 7).

    A number column stays numbers; the texts serve a column the user then declares
    categorical (codes), so that "007" and "7" stay two categories instead of one, silently.
    """
    texts = [c for c in cells if isinstance(c, str)]
    if not texts or not leading_zeros(texts):
        return series
    valid = series.notna().to_numpy()
    typed = np.full(len(cells), None, dtype=object)
    for i in np.flatnonzero(valid):
        cell = cells[i]
        typed[i] = cell.strip() if isinstance(cell, str) else as_text("number", series.iat[i])
    if len(pd.unique(typed[valid])) > len(pd.unique(series.to_numpy()[valid])):
        # A tuple: frames' attrs are compared with == when pandas joins them.
        series.attrs["texts"] = tuple(typed)
    return series


def _as_array(values: Sequence[Any] | np.ndarray | pd.Series) -> np.ndarray:
    if isinstance(values, pd.Series):
        if isinstance(values.dtype, pd.StringDtype) or values.dtype == object:
            return values.to_numpy(dtype=object, na_value=None)
        return values.to_numpy()
    if isinstance(values, np.ndarray):
        if values.dtype.kind in "US":
            return values.astype(object)
        return values
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out


def _plain_point_numbers(texts: np.ndarray) -> np.ndarray | None:
    """All cells plain decimal-point number texts ("1234.56", "-1e3") -> floats, else None.

    Texts of digits, ".", "e", "+" and "-" only are numbers exactly when float() accepts them
    (the NUM_DOT rule without thousands commas), and none of them is comma-only, so the
    column's separator is "." whatever the other texts: one C-level conversion types all,
    without hashing a million distinct strings.
    """
    try:  # join refuses anything but text (None, NaN): cheaper than pd.isna over the column
        # The first cells decide most columns ("north", "n/a") before the whole column is joined.
        if not set("".join(texts[:_SAMPLE_CELLS])) <= _DOT_NUMBER_CHARS:
            return None
        joined = "".join(texts)
    except TypeError:
        return None
    if not set(joined) <= _DOT_NUMBER_CHARS:
        return None
    try:
        return texts.astype(float)
    except ValueError:
        return None


def _number_series(name: str, arr: np.ndarray, notes: list[str]) -> pd.Series:
    """float64 values (NaN = missing) -> int64 when all are whole, else float64."""
    infinite = np.isinf(arr)
    if infinite.any():
        # The README promises finite numbers: 1e309 or an inf from a formula is no value.
        count = int(infinite.sum())
        arr = np.where(infinite, np.nan, arr)
        notes.append(
            f'column "{name}": {count} infinite number{"s" if count > 1 else ""} treated as missing'
        )
    if not np.isnan(arr).any() and np.all(arr == np.round(arr)) and np.all(np.abs(arr) < 2**53):
        return pd.Series(arr.astype(np.int64), name=name)
    return pd.Series(np.asarray(arr, dtype=float), name=name)


def _column_from_cells(
    name: str, cells: np.ndarray, decimal: str | None, notes: list[str], inferred: str
) -> pd.Series:
    n = cells.shape[0]
    kinds = np.zeros(n, dtype=np.int8)
    parsed = np.empty(n, dtype=object)
    if inferred == "string":
        # Every cell is a str or a blank infer_dtype skipped (None, NaN, pd.NA); the blanks
        # stay missing below either way.
        is_text = ~np.asarray(pd.isna(cells), dtype=bool)
        is_float = np.zeros(n, dtype=bool)
    else:
        # Cell types, found per distinct type (a column holds a handful).
        tcodes, tuniq = pd.factorize(np.fromiter(map(type, cells), dtype=object, count=n))
        is_text = np.array([issubclass(t, str) for t in tuniq] + [False])[tcodes]
        is_float = np.array([t in _PLAIN_NUMBER_TYPES for t in tuniq] + [False])[tcodes]
    if is_float.any():
        # Plain numbers among text (a price column with a few "n/a"): one numpy step.
        idx = np.flatnonzero(is_float)
        floats = _number_floats(cells[idx])
        ok = ~np.isnan(floats)
        kinds[idx[ok]] = NUMBER
        parsed[idx[ok]] = floats[ok]
    for i in np.flatnonzero(~is_text & ~is_float):
        value = cells[i]
        if not is_blank(value):
            kind, parsed[i] = classify_value(value)
            kinds[i] = _KIND_CODE[kind]

    errors: dict[str, int] = {}
    stripped_by_row: np.ndarray | None = None
    if is_text.any():
        text_idx = np.flatnonzero(is_text)
        codes, uniques = pd.factorize(cells[text_idx])
        ukind, uvalue, ustripped, uerror = _classify_distinct(
            np.asarray(uniques, dtype=object), decimal
        )
        kinds[text_idx] = ukind[codes]
        parsed[text_idx] = uvalue[codes]
        stripped_by_row = np.empty(n, dtype=object)
        stripped_by_row[text_idx] = ustripped[codes]
        if uerror.any():
            counts = np.bincount(codes, minlength=len(uniques))
            for u in np.flatnonzero(uerror):
                upper = ustripped[u].upper()
                errors[upper] = errors.get(upper, 0) + int(counts[u])

    if errors:
        count = sum(errors.values())
        shown = ", ".join(sorted(errors)[:3])
        notes.append(
            f'column "{name}": {count} error value{"s" if count > 1 else ""} '
            f"({shown}) treated as missing"
        )
    return _build_series(name, kinds, parsed, cells, stripped_by_row, notes)


def _classify_distinct(
    uniques: np.ndarray, decimal: str | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Kind code, value, stripped text and error flag of each distinct raw text."""
    m = uniques.shape[0]
    stripped = np.array([u.strip() for u in uniques] + [None], dtype=object)[:m]
    kind = np.full(m, TEXT, dtype=np.int8)
    value = np.empty(m, dtype=object)
    error = np.zeros(m, dtype=bool)
    if decimal != "," and m and set("".join(stripped)) <= _DOT_NUMBER_CHARS:
        # Plain decimal-point numbers ("1234.56"): for texts of these characters only,
        # float() accepts exactly what NUM_DOT does, and none of them is comma-only, so the
        # column's separator is "." and one C-level conversion types them all.
        try:
            value = stripped.astype(float)
        except ValueError:
            pass
        else:
            kind[:] = NUMBER
            return kind, value.astype(object), stripped, error
    # Texts of number characters only can be neither error values nor missing-value words.
    all_plain = m > 0 and set("".join(stripped)) <= _PLAIN_CHARS
    if all_plain:
        kind[stripped == ""] = MISSING
    else:
        for u, text in enumerate(stripped):
            upper = text.upper()
            if not text or text.casefold() in MISSING_TEXT:
                kind[u] = MISSING
            elif upper in EXCEL_ERRORS or upper in LOCALISED_ERRORS or ERROR_LIKE.fullmatch(text):
                kind[u], error[u] = MISSING, True
    todo = np.flatnonzero(kind == TEXT)
    # The distinct texts in order of first appearance, each once (as the per-cell rules saw
    # them); stripped texts can repeat (" a" and "a"), the rules never depend on that.
    texts = stripped[todo]
    # Bound fullmatch methods in comprehensions: cheaper per text than pandas' .str wrappers.
    dot_match, comma_match = NUM_DOT.fullmatch, NUM_COMMA.fullmatch
    if all_plain:
        plain = np.ones(todo.size, dtype=bool)
    else:
        plain_match = _PLAIN.fullmatch
        plain = np.array([plain_match(t) is not None for t in texts], dtype=bool)
    is_comma = np.zeros(todo.size, dtype=bool)
    is_comma[plain] = [comma_match(t) is not None for t in texts[plain]]
    # Whether a text is a decimal-point number is only needed where it decides something.
    dot_not_comma = np.zeros(todo.size, dtype=bool)
    rest = plain & ~is_comma
    dot_not_comma[rest] = [dot_match(t) is not None for t in texts[rest]]
    col_decimal = decimal or _column_decimal(texts, plain, is_comma, dot_not_comma)
    if all_plain:
        order = "mdy"  # no text holds a "/"
    else:
        slashed = np.array(["/" in t for t in texts], dtype=bool)
        order = slash_date_order(texts[slashed]) if slashed.any() else "mdy"

    if col_decimal == ",":
        fast = is_comma
        numbers = [t.replace(".", "").replace(",", ".") for t in texts[fast]]
    else:
        fast = dot_not_comma.copy()
        both = plain & is_comma
        fast[both] = [dot_match(t) is not None for t in texts[both]]
        numbers = [t.replace(",", "") for t in texts[fast]]
    if fast.any():
        where = todo[fast]
        kind[where] = NUMBER
        value[where] = np.array(numbers, dtype=object).astype(float)
    for u in todo[~fast]:
        k, v = classify_text(stripped[u], col_decimal, order)
        kind[u], value[u] = _KIND_CODE[k], v
    return kind, value, stripped, error


def _column_decimal(
    texts: np.ndarray, plain: np.ndarray, is_comma: np.ndarray, dot_not_comma: np.ndarray
) -> str:
    """Comma when some text can only be a decimal-comma number and none a decimal-point one."""
    if dot_not_comma.any():
        return "."
    comma_only = False
    for text in texts[~plain]:
        s, _ = clean_number_text(text)
        dot = NUM_DOT.fullmatch(s) is not None
        comma = NUM_COMMA.fullmatch(s) is not None
        if dot and not comma:
            return "."
        comma_only |= comma and not dot
    if not comma_only:
        # Stops at the first comma number that is not also a point number ("1.234,5").
        dot_match = NUM_DOT.fullmatch
        comma_only = any(dot_match(t) is None for t in texts[plain & is_comma])
    return "," if comma_only else "."


def _build_series(
    name: str,
    kinds: np.ndarray,
    parsed: np.ndarray,
    cells: np.ndarray,
    stripped: np.ndarray | None,
    notes: list[str],
) -> pd.Series:
    counts = np.bincount(kinds, minlength=5)
    filled = int(counts[NUMBER:].sum())
    kind = TEXT
    if filled == 0:
        kind = NUMBER  # header only: an empty numeric column; check_rows explains later
    else:
        for candidate in (NUMBER, DATE, BOOL):
            if counts[candidate] == filled or (
                candidate != BOOL and counts[candidate] >= MAJORITY * filled
            ):
                kind = candidate
                break

    if kind != TEXT:
        drop_idx = np.flatnonzero((kinds != kind) & (kinds != MISSING))
        if drop_idx.size:
            shown = dict.fromkeys(
                stripped[i]
                if stripped is not None and stripped[i] is not None
                else str(cells[i]).strip()
                for i in drop_idx
            )
            examples = ", ".join(f'"{d}"' for d in shown)
            examples = examples if len(examples) <= 60 else examples[:57] + "..."
            many = drop_idx.size > 1
            notes.append(
                f'column "{name}": {drop_idx.size} cell{"s" if many else ""} that '
                f"{'are' if many else 'is'} not a {KIND_WORD[_KIND_NAME[kind]]} ({examples}) "
                "treated as missing"
            )
        keep = kinds == kind
        if kind == NUMBER:
            arr = np.full(kinds.shape[0], np.nan)
            arr[keep] = parsed[keep].astype(float)
            return _number_series(name, arr, notes)
        values = np.where(keep, parsed, None)
        if kind == DATE:
            return pd.Series(pd.to_datetime(pd.Series(values, dtype=object)), name=name)
        if not keep.all():
            return pd.Series(values, name=name, dtype=object)
        return pd.Series(values.astype(bool), name=name, dtype=bool)

    # Text typed by the user stays as typed ("2011-12" a fiscal year, "1,5" a label); only
    # real numbers, dates and booleans among the text are written out.
    values = np.full(kinds.shape[0], None, dtype=object)
    if stripped is not None:
        has = (kinds != MISSING) & np.not_equal(stripped, None)
        values[has] = stripped[has]
    else:
        has = np.zeros(kinds.shape[0], dtype=bool)
    for i in np.flatnonzero((kinds != MISSING) & ~has):
        values[i] = as_text(_KIND_NAME[int(kinds[i])], parsed[i])
    try:
        return pd.Series(values, name=name, dtype="str")
    except UnicodeEncodeError:
        # Half a character (=LEFT of a cell starting with an emoji): pandas' pyarrow strings
        # cannot hold it, so the column stays Python text until whole_characters mends it
        # and counts it in a note.
        return pd.Series(values, name=name, dtype=object)
