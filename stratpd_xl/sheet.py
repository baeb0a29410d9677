"""Cell values <-> clean DataFrames, input validation and the error text users see.

Every front end (Excel formula, ribbon add-in, CLI, file reader) goes through this module so that
a block of cells behaves the same wherever it comes from.  No I/O and no maths live here.

Public functions
----------------
frame_from_cells   2-D block of cell values (first row = header) -> typed DataFrame
resolve_column     user-typed column name -> exact column name (case/space-insensitive)
check_rows         enough usable rows for StratPD, numeric target, ... -> None or StratPDInputError
cells_from_frame   DataFrame -> header row + rows of plain Python values (for writing to cells)
error_text         exception -> one line of text for a cell, the status bar or stderr
"""

from __future__ import annotations

import datetime as dt
import decimal as _decimal
import difflib
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .errors import StratPDInputError

__all__ = [
    "EXCEL_ERRORS",
    "LOCALISED_ERRORS",
    "cells_from_frame",
    "check_rows",
    "default_features",
    "error_text",
    "frame_from_cells",
    "resolve_column",
    "usable_table",
]

#: Error values as Excel, LibreOffice and openpyxl hand them over; they become missing values.
EXCEL_ERRORS = frozenset(
    {
        "#N/A",
        "#DIV/0!",
        "#VALUE!",
        "#REF!",
        "#NAME?",
        "#NUM!",
        "#NULL!",
        "#SPILL!",
        "#CALC!",
        "#GETTING_DATA",
        "#FIELD!",
        "#BLOCKED!",
        "#CONNECT!",
        "#BUSY!",
        "#UNKNOWN!",
        "#PYTHON!",
        "#NA",
        "ERR:502",  # LibreOffice's text for invalid arguments (seen in exported CSV)
        "ERR:504",
        "ERR:522",
    }
)

#: Error values without "!" or "?" as localised Excel versions write them into CSV exports
#: (German #NV, Italian/Portuguese #N/D); the rest (#WERT!, #¡VALOR!, #NOMBRE! ...) all end in
#: "!" or "?" and are caught by _ERROR_LIKE.
LOCALISED_ERRORS = frozenset({"#NV", "#N/D"})
_ERROR_LIKE = re.compile(r"#[^\s#]{1,20}[!?]")

# Text that statistics packages and CSV exports write for "no value".  Deliberately short:
# words such as "none" or "unknown" can be real categories.
_MISSING_TEXT = frozenset({"na", "n/a", "nan", "null", "#n/a n/a"})

_TRUE_TEXT = frozenset({"true", "wahr", "vrai"})
_FALSE_TEXT = frozenset({"false", "falsch", "faux"})

# Numbers stored as text.  DOT: "1,234.5" style (comma groups thousands); COMMA: "1.234,5" style.
_NUM_DOT = re.compile(r"[+-]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_NUM_COMMA = re.compile(r"[+-]?(?:(?:\d{1,3}(?:\.\d{3})+|\d+)(?:,\d*)?|,\d+)(?:[eE][+-]?\d+)?")
# Spaces, thin spaces and apostrophes that group thousands ("1 234,5", "1'234.50").
_GROUP_SPACE = re.compile(r"(?<=\d)[ \u00a0\u202f'\u2019](?=\d{3}(?:\D|$))")
_CURRENCY = "$€£¥"

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?")
_DOT_DATE = re.compile(r"(\d{1,2})\.(\d{1,2})\.(\d{4})(?: (\d{1,2}):(\d{2})(?::(\d{2}))?)?")
_SLASH_DATE = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4})(?: (\d{1,2}):(\d{2})(?::(\d{2}))?)?")
# Year first: "2024/01/31" (East Asian and some exports) and a month alone, "2024-01".
_YMD_SLASH_DATE = re.compile(r"(\d{4})/(\d{1,2})/(\d{1,2})")
_YEAR_MONTH = re.compile(r"(\d{4})-(\d{2})")

# A column is numeric (or dates) when at least this share of its non-blank cells are numbers
# (dates); the remaining cells ("?", "n.a.", "see note") then count as missing, with a note.
_MAJORITY = 0.8

_MAX_LISTED_COLUMNS = 15


# --------------------------------------------------------------------------- cells -> frame


def frame_from_cells(
    values: Sequence[Sequence[Any]], *, decimal: str | None = None
) -> pd.DataFrame:
    """Turn a block of cell values (first row = column names) into a typed DataFrame.

    Parameters
    ----------
    values
        Rows of cell values as Excel (xlwings), LibreOffice, openpyxl or a CSV reader hand them
        over.  Rows may have different lengths; ``None``, ``""`` and NaN are blank.
    decimal
        Decimal separator of numbers stored as text: ``"."`` ("1,234.5"), ``","`` ("1.234,5")
        or ``None`` to decide per column (comma only when some value can only be read that way,
        such as "1,5").

    Returns
    -------
    pandas.DataFrame
        One column per non-blank column of the block, named by the header row (blank names
        become ``"column 3"``, repeated names ``"price (2)"``).  Column types: numbers
        (int64/float64, including numbers stored as text), dates (datetime64), booleans
        (bool, or object when some are blank) and text.  Excel error values such as ``#N/A``
        and blank cells are missing values; blank rows and all-blank columns are dropped.
        ``frame.attrs["notes"]`` lists sentences about cells that were treated as missing.

    Raises
    ------
    StratPDInputError
        When the block is empty or has no data rows under the header.
    """
    if decimal not in (None, ".", ","):
        raise StratPDInputError(f'decimal separator must be "." or ","; got "{decimal}"')
    rows = _as_rows(values)
    # Blank rows carry no data; leading ones usually mean the selection started above the table.
    rows = [row for row in rows if not all(_is_blank(v) for v in row)]
    if not rows:
        raise StratPDInputError("the selection is empty; select the table including its header row")
    width = max(len(row) for row in rows)
    rows = [list(row) + [None] * (width - len(row)) for row in rows]
    header, body = rows[0], rows[1:]
    if not body:
        raise StratPDInputError(
            "the table has a header row but no data rows; select the header and the rows below it"
        )

    names = _column_names(header)
    columns: dict[str, pd.Series] = {}
    notes: list[str] = []
    for j, name in enumerate(names):
        cells = [row[j] for row in body]
        if _is_blank(header[j]) and all(_is_blank(v) for v in cells):
            continue  # an all-blank column, e.g. a spacer column inside the selection
        columns[name] = _column_from_cells(name, cells, decimal, notes)
    if not columns:
        raise StratPDInputError("the selection holds no columns with values")
    frame = pd.DataFrame(columns)
    frame.attrs["notes"] = notes
    return frame


def _as_rows(values: Any) -> list[list[Any]]:
    """Accept list-of-rows, tuples, numpy 2-D arrays and DataFrames; reject scalars clearly."""
    if isinstance(values, pd.DataFrame):
        return [list(map(str, values.columns))] + values.astype(object).values.tolist()
    if isinstance(values, np.ndarray):
        values = values.tolist()
    if values is None or isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise StratPDInputError(
            "expected a block of cells with a header row; select the whole table, not one cell"
        )
    rows = list(values)
    if rows and not any(isinstance(r, Sequence) and not isinstance(r, str | bytes) for r in rows):
        # A single row arrives flat from some front ends (xlwings without ndim=2).
        rows = [rows]
    out: list[list[Any]] = []
    for row in rows:
        if isinstance(row, Sequence) and not isinstance(row, str | bytes):
            out.append(list(row))
        else:
            out.append([row])
    return out


def _is_blank(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return value.strip() == ""
    if isinstance(value, float) and math.isnan(value):
        return True
    if value is pd.NaT or value is pd.NA:
        return True
    if isinstance(value, np.floating | np.datetime64):
        return bool(np.isnan(value)) if isinstance(value, np.floating) else bool(np.isnat(value))
    return False


def _header_text(value: Any) -> str:
    if _is_blank(value):
        return ""
    if isinstance(value, bool | np.bool_):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float | np.number) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime | pd.Timestamp):
        return value.isoformat(sep=" ") if value.time() != dt.time(0) else value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    # Header cells wrap in Excel; inside a name, line breaks and runs of spaces are noise.
    return " ".join(str(value).split())


def _name_key(name: str) -> str:
    """The form under which two column names count as the same (case/space/underscore-blind)."""
    return re.sub(r"[\s_]+", "", name.casefold())


def _column_names(header: list[Any]) -> list[str]:
    names: list[str] = []
    taken: set[str] = set()
    for j, cell in enumerate(header):
        base = _header_text(cell) or f"column {j + 1}"
        name, k = base, 1
        # Unique under the same rule resolve_column matches by, so a name never matches two.
        while _name_key(name) in taken:
            k += 1
            name = f"{base} ({k})"
        taken.add(_name_key(name))
        names.append(name)
    return names


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
        elif not _is_blank(value):
            kinds[i], parsed[i] = _classify_value(value)

    errors: dict[str, int] = {}
    if text_rows:
        # Columns repeat their values a lot (grades, prices, CSV cells): look at each distinct
        # string once, which keeps a 50,000-row file fast.
        first: dict[str, tuple[str, Any]] = {}
        for raw in dict.fromkeys(cells[i] for i in text_rows):
            text = raw.strip()
            upper = text.upper()
            if not text or text.casefold() in _MISSING_TEXT:
                first[raw] = ("missing", None)
            elif upper in EXCEL_ERRORS or upper in LOCALISED_ERRORS or _ERROR_LIKE.fullmatch(text):
                first[raw] = ("error", upper)
            else:
                first[raw] = ("text", text)
        distinct = list(dict.fromkeys(t for k, t in first.values() if k == "text"))
        col_decimal = decimal or _column_decimal(distinct)
        date_order = _slash_date_order(distinct)
        known = {t: _classify_text(t, col_decimal, date_order) for t in distinct}
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
    return _build_series(name, kinds, parsed, cells, notes)


def _classify_value(value: Any) -> tuple[str, Any]:
    """Kind and Python value of a non-text, non-blank cell."""
    if isinstance(value, bool | np.bool_):
        return "bool", bool(value)
    if isinstance(value, int | np.integer):
        return "number", int(value)
    if isinstance(value, float | np.floating | _decimal.Decimal):
        return "number", float(value)
    if isinstance(value, pd.Timestamp):
        return "date", _naive(value.to_pydatetime())
    if isinstance(value, dt.datetime):
        return "date", _naive(value)
    if isinstance(value, dt.date):
        return "date", dt.datetime(value.year, value.month, value.day)
    if isinstance(value, np.datetime64):
        return "date", _naive(pd.Timestamp(value).to_pydatetime())
    return "text", str(value).strip()


def _naive(value: dt.datetime) -> dt.datetime:
    # datetime64 columns hold no time zone; keep the wall-clock time the sheet showed.
    return value.replace(tzinfo=None)


def _clean_number_text(text: str) -> tuple[str, float]:
    """Strip currency, percent, accounting brackets and space thousands groups.

    Returns the bare number text and the factor to apply (-1 for "(12)", 0.01 for "12%").
    """
    factor = 1.0
    s = text.replace("\u2212", "-")  # typographic minus
    if not s:
        return s, factor
    if len(s) > 2 and s[0] == "(" and s[-1] == ")":
        s, factor = s[1:-1].strip(), -1.0
    if s.endswith("%"):
        s, factor = s[:-1].rstrip(), factor / 100.0
    if s[:1] in _CURRENCY:
        s = s[1:].lstrip()
    elif s[-1:] in _CURRENCY:
        s = s[:-1].rstrip()
    if len(s) > 1 and s[0] in "+-" and s[1] in _CURRENCY:  # "-$5"
        s = s[0] + s[2:].lstrip()
    s = _GROUP_SPACE.sub("", s)
    return s, factor


def _column_decimal(texts: Any) -> str:
    """Comma when some text can only be a decimal-comma number and none a decimal-point one."""
    comma_only = dot_only = False
    for text in texts:
        s, _ = _clean_number_text(text)
        is_dot = _NUM_DOT.fullmatch(s) is not None
        is_comma = _NUM_COMMA.fullmatch(s) is not None
        comma_only |= is_comma and not is_dot
        dot_only |= is_dot and not is_comma
        if dot_only:
            return "."
    return "," if comma_only else "."


def _parse_number(text: str, decimal: str) -> float | None:
    s, factor = _clean_number_text(text)
    if decimal == ".":
        if _NUM_DOT.fullmatch(s) is None:
            return None
        s = s.replace(",", "")
    else:
        if _NUM_COMMA.fullmatch(s) is None:
            return None
        s = s.replace(".", "").replace(",", ".")
    return float(s) * factor


def _slash_date_order(texts: Any) -> str:
    """Day-first ("dmy") or month-first ("mdy") for a/b/yyyy dates; US order when both fit."""
    for text in texts:
        m = _SLASH_DATE.fullmatch(text)
        if m:
            if int(m.group(1)) > 12:
                return "dmy"
            if int(m.group(2)) > 12:
                return "mdy"
    return "mdy"


def _parse_date(text: str, slash_order: str) -> dt.datetime | None:
    try:
        if _ISO_DATE.fullmatch(text):
            return dt.datetime.fromisoformat(text)
        m = _YEAR_MONTH.fullmatch(text) or _YMD_SLASH_DATE.fullmatch(text)
        if m:  # a month stands for its first day, so months work as a numeric feature
            day = int(m.group(3)) if m.re is _YMD_SLASH_DATE else 1
            return dt.datetime(int(m.group(1)), int(m.group(2)), day)
        m = _DOT_DATE.fullmatch(text)
        if m:
            day, month = int(m.group(1)), int(m.group(2))
        else:
            m = _SLASH_DATE.fullmatch(text)
            if not m:
                return None
            a, b = int(m.group(1)), int(m.group(2))
            day, month = (a, b) if slash_order == "dmy" else (b, a)
        hh, mm, ss = (int(g) if g else 0 for g in m.group(4, 5, 6))
        return dt.datetime(int(m.group(3)), month, day, hh, mm, ss)
    except ValueError:  # 31.02.2024 and friends: not a date, keep the text
        return None


def _classify_text(text: str, decimal: str, slash_order: str) -> tuple[str, Any]:
    folded = text.casefold()
    if folded in _TRUE_TEXT:
        return "bool", True
    if folded in _FALSE_TEXT:
        return "bool", False
    number = _parse_number(text, decimal)
    if number is not None:
        return "number", number
    date = _parse_date(text, slash_order)
    if date is not None:
        return "date", date
    return "text", text


def _build_series(
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
                candidate != "bool" and counts[candidate] >= _MAJORITY * filled
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
                f"{'are' if len(dropped) > 1 else 'is'} not a {_KIND_WORD[kind]} ({examples}) "
                "treated as missing"
            )
        values = [p if k == kind else None for k, p in zip(kinds, parsed, strict=True)]
    else:
        # Text typed by the user stays as typed ("2011-12" a fiscal year, "1,5" a label); only
        # real numbers, dates and booleans among the text are written out.
        values = [
            None if k == "missing" else c.strip() if isinstance(c, str) else _as_text(k, p)
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


_KIND_WORD = {"number": "number", "date": "date", "bool": "TRUE/FALSE value"}


def _as_text(kind: str, value: Any) -> str:
    if kind == "bool":
        return "TRUE" if value else "FALSE"
    if kind == "number":
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    if kind == "date":
        return _header_text(value)
    return str(value)


# --------------------------------------------------------------------------- names and rows


def resolve_column(frame: pd.DataFrame, name: Any, *, role: str = "feature") -> str:
    """Find the column the user meant, ignoring case, spaces and underscores.

    Parameters
    ----------
    frame
        The table, usually from :func:`frame_from_cells`.
    name
        What the user typed (or the cell holding it).
    role
        ``"target"`` or ``"feature"``; only used in the error sentence.

    Returns
    -------
    str
        The exact column name in ``frame``.

    Raises
    ------
    StratPDInputError
        ``column "pricee" not found; columns are: price, bedrooms, ...`` (with a suggestion
        when one name is close), or when the name is blank.
    """
    columns = [str(c) for c in frame.columns]
    text = _header_text(name)
    if not text:
        raise StratPDInputError(
            f"no {role} column given; name one of the columns: {_list_columns(columns)}"
        )
    if text in columns:
        return text
    key = _name_key(text)
    matches = [c for c in columns if _name_key(c) == key]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:  # only possible for frames not made by frame_from_cells
        listed = ", ".join(f'"{m}"' for m in matches)
        raise StratPDInputError(
            f'{role} column "{text}" matches several columns ({listed}); rename one of them'
        )
    close = difflib.get_close_matches(key, [_name_key(c) for c in columns], n=1, cutoff=0.75)
    hint = ""
    if close:
        hint = f' (did you mean "{next(c for c in columns if _name_key(c) == close[0])}"?)'
    role_word = "" if role == "feature" else f"{role} "
    raise StratPDInputError(
        f'{role_word}column "{text}" not found{hint}; columns are: {_list_columns(columns)}'
    )


def _list_columns(columns: list[str]) -> str:
    if not columns:
        return "(none)"
    shown = ", ".join(columns[:_MAX_LISTED_COLUMNS])
    rest = len(columns) - _MAX_LISTED_COLUMNS
    return shown + (f", ... ({rest} more)" if rest > 0 else "")


def check_rows(
    frame: pd.DataFrame,
    target: str,
    feature: str | None = None,
    *,
    min_samples_leaf: int = 10,
) -> None:
    """Check, before the engine runs, that the table can give a curve; explain what to fix.

    Parameters
    ----------
    frame
        The table.
    target, feature
        Exact column names (use :func:`resolve_column` first).  Without ``feature`` only the
        target is checked (as for an impact ranking over all columns).
    min_samples_leaf
        The engine parameter; StratPD needs at least twice this many usable rows.

    Raises
    ------
    StratPDInputError
        For example ``only 12 rows with a value in "price"; StratPD needs at least
        2 x min_samples_leaf (20) rows: add rows or lower min_samples_leaf``.
    """
    if isinstance(min_samples_leaf, bool) or not isinstance(min_samples_leaf, int | np.integer):
        raise StratPDInputError(
            f"min_samples_leaf must be a whole number such as 10; got {min_samples_leaf!r}"
        )
    if min_samples_leaf < 1:
        raise StratPDInputError(f"min_samples_leaf must be at least 1; got {min_samples_leaf}")
    for col, role in ((target, "target"), (feature, "feature")):
        if col is not None and col not in frame.columns:
            resolve_column(frame, col, role=role)  # raises the "not found" sentence
    if feature is not None and feature == target:
        raise StratPDInputError(
            f'"{target}" is both the target and the feature; pick a different feature column'
        )

    y = frame[target]
    if not _is_numeric(y):
        example = y.dropna()
        shown = f' (e.g. "{example.iloc[0]}")' if len(example) else ""
        raise StratPDInputError(
            f'target "{target}" is not numeric{shown}; StratPD needs a numeric target: '
            "pick a column of numbers or turn the values into numbers"
        )

    needed = 2 * int(min_samples_leaf)
    usable = y.notna()
    where = f'in "{target}"'
    if feature is not None:
        usable &= frame[feature].notna()
        where = f'in both "{target}" and "{feature}"'
    n = int(usable.sum())
    if n < needed:
        raise StratPDInputError(
            f"only {n} row{'s' if n != 1 else ''} with a value {where}; StratPD needs at least "
            f"2 x min_samples_leaf ({needed}) rows: add rows or lower min_samples_leaf"
        )
    if feature is not None:
        distinct = frame.loc[usable, feature].nunique()
        if distinct < 2:
            raise StratPDInputError(
                f'feature "{feature}" has the same value in every row used; '
                "pick a feature whose values vary"
            )


def default_features(
    frame: pd.DataFrame,
    target: str,
    *,
    min_rows: int = 20,
    how_to_keep: str = "name it with --feature to analyse it anyway",
) -> tuple[list[str], dict[str, str]]:
    """The columns worth analysing when the user did not name any, and why others are left out.

    Parameters
    ----------
    frame
        The table.
    target
        Exact name of the target column (never a feature).
    min_rows
        Identifier detection only applies to columns with at least this many values.
    how_to_keep
        End of the identifier sentence: how, in this front end, to analyse such a column anyway.

    Returns
    -------
    features : list of str
        Every other column, in table order, except those below.
    left_out : dict
        Column name -> sentence: columns without values, columns with one value in every row,
        and text columns with a different value in (nearly) every row, such as customer IDs or
        comments, which would split the rows into groups of one and swamp the other columns.
    """
    features: list[str] = []
    left_out: dict[str, str] = {}
    rows = frame[target].notna() if target in frame.columns else pd.Series(True, frame.index)
    for name in frame.columns:
        if name == target:
            continue
        values = frame.loc[rows, name].dropna()
        distinct = values.nunique()
        if values.empty:
            left_out[name] = "it has no values in rows with a target value"
        elif distinct < 2:
            left_out[name] = "it has the same value in every row"
        elif (
            not _is_numeric(values)
            and not pd.api.types.is_datetime64_any_dtype(values.dtype)
            and not pd.api.types.is_bool_dtype(values.dtype)
            and len(values) >= min_rows
            and distinct >= 0.9 * len(values)
        ):
            left_out[name] = (
                f"it looks like an identifier ({distinct:,} different texts in {len(values):,} "
                f"rows); {how_to_keep}"
            )
        else:
            features.append(name)
    return features, left_out


def usable_table(
    frame: pd.DataFrame,
    target: str,
    keep: Sequence[str] = (),
    *,
    how_to_keep: str = "name it with --feature to analyse it anyway",
) -> tuple[pd.DataFrame, list[str], dict[str, str]]:
    """The table without the columns :func:`default_features` leaves out, unless kept.

    They are dropped from the table, not only from the features, because the engine stratifies
    on every other column and an identifier would split the rows into groups of one.  Every
    front end (CLI, formulas, ribbon) goes through here, so they all analyse the same columns.

    Returns
    -------
    frame : DataFrame
        ``frame`` without the dropped columns.
    features : list of str
        The usable features (``keep`` is never dropped).
    dropped : dict
        Column name -> sentence saying why it was left out.
    """
    usable, left_out = default_features(frame, target, how_to_keep=how_to_keep)
    dropped = {name: why for name, why in left_out.items() if name not in keep}
    return frame.drop(columns=list(dropped)), usable, dropped


def _is_numeric(series: pd.Series) -> bool:
    return bool(
        pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype)
    )


# --------------------------------------------------------------------------- frame -> cells


def cells_from_frame(frame: pd.DataFrame) -> list[list[Any]]:
    """Header row plus rows of plain Python values, ready to be written into cells.

    Parameters
    ----------
    frame
        Any DataFrame, typically an engine result.

    Returns
    -------
    list of list
        ``[[names...], [row 1...], ...]``: missing values are ``None``, numpy scalars are
        Python ``int``/``float``/``bool``, datetime64 values are ``datetime.datetime`` (so a
        sheet shows dates), infinities are ``None`` (no spreadsheet can hold them).
    """
    header: list[Any] = [str(c) for c in frame.columns]
    columns = [_cells_of_column(frame.iloc[:, j]) for j in range(frame.shape[1])]
    rows = [list(r) for r in zip(*columns, strict=True)] if columns else []
    return [header, *rows]


def _cells_of_column(series: pd.Series) -> list[Any]:
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return [None if pd.isna(v) else _naive(v.to_pydatetime()) for v in series]
    return [_cell_value(v) for v in series.tolist()]


def _cell_value(value: Any) -> Any:
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        f = float(value)
        return f if math.isfinite(f) else None
    if isinstance(value, pd.Timestamp):
        return _naive(value.to_pydatetime())
    if isinstance(value, np.datetime64):
        return None if np.isnat(value) else _naive(pd.Timestamp(value).to_pydatetime())
    if isinstance(value, pd.Timedelta | dt.timedelta):
        return str(value)
    return value


# --------------------------------------------------------------------------- error text


def error_text(exc: BaseException, *, prefix: str = "STRATPD") -> str:
    """One line for a cell, status bar or stderr; never a traceback.

    Parameters
    ----------
    exc
        The exception caught by a front end.
    prefix
        Start of the text, so a cell shows where the message comes from.

    Returns
    -------
    str
        ``"STRATPD: <sentence>"`` for :class:`StratPDInputError` (the sentence names the fix);
        for anything else a short sentence saying it is a bug to report, with the exception
        type and the first line of its message so the report is useful.
    """
    if isinstance(exc, StratPDInputError):
        return f"{prefix}: {_one_line(str(exc))}"
    if isinstance(exc, KeyboardInterrupt):
        return f"{prefix}: cancelled"
    if isinstance(exc, MemoryError):
        return f"{prefix}: out of memory; try fewer rows or columns"
    detail = _one_line(str(exc))
    detail = detail if len(detail) <= 120 else detail[:117] + "..."
    what = type(exc).__name__ + (f": {detail}" if detail else "")
    return f"{prefix}: internal error ({what}); this is a bug in stratpd-xl, please report it"


def _one_line(text: str) -> str:
    return " ".join(text.split())
