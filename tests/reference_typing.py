"""Test-only reference: the per-cell typing of the sheet layer as it was before the
column-at-a-time rewrite (a frozen copy of sheet/_values.py and sheet/_columns.py).

Property tests check that the fast path types every column exactly like this; the benchmark
uses it as "old".  Do not import it from the package.
"""

from __future__ import annotations

import datetime as dt
import decimal as _decimal
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

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
#: "!" or "?" and are caught by ERROR_LIKE.
LOCALISED_ERRORS = frozenset({"#NV", "#N/D"})
ERROR_LIKE = re.compile(r"#[^\s#]{1,20}[!?]")

# Text that statistics packages and CSV exports write for "no value".  Deliberately short:
# words such as "none" or "unknown" can be real categories.
MISSING_TEXT = frozenset({"na", "n/a", "nan", "null", "#n/a n/a"})

TRUE_TEXT = frozenset({"true", "wahr", "vrai"})
FALSE_TEXT = frozenset({"false", "falsch", "faux"})

# Numbers stored as text.  DOT: "1,234.5" style (comma groups thousands); COMMA: "1.234,5" style.
NUM_DOT = re.compile(r"[+-]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
NUM_COMMA = re.compile(r"[+-]?(?:(?:\d{1,3}(?:\.\d{3})+|\d+)(?:,\d*)?|,\d+)(?:[eE][+-]?\d+)?")
# Spaces, thin spaces and apostrophes that group thousands ("1 234,5", "1'234.50").
GROUP_SPACE = re.compile(r"(?<=\d)[ \u00a0\u202f'\u2019](?=\d{3}(?:\D|$))")
CURRENCY = "$€£¥"

ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?")
DOT_DATE = re.compile(r"(\d{1,2})\.(\d{1,2})\.(\d{4})(?: (\d{1,2}):(\d{2})(?::(\d{2}))?)?")
SLASH_DATE = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4})(?: (\d{1,2}):(\d{2})(?::(\d{2}))?)?")
# Year first: "2024/01/31" (East Asian and some exports) and a month alone, "2024-01".
YMD_SLASH_DATE = re.compile(r"(\d{4})/(\d{1,2})/(\d{1,2})")
YEAR_MONTH = re.compile(r"(\d{4})-(\d{2})")

# A column is numeric (or dates) when at least this share of its non-blank cells are numbers
# (dates); the remaining cells ("?", "n.a.", "see note") then count as missing, with a note.
MAJORITY = 0.8


def is_blank(value: Any) -> bool:
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


def header_text(value: Any) -> str:
    if is_blank(value):
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


def name_key(name: str) -> str:
    """The form under which two column names count as the same (case/space/underscore-blind)."""
    return re.sub(r"[\s_]+", "", name.casefold())


def column_names(header: list[Any]) -> list[str]:
    names: list[str] = []
    taken: set[str] = set()
    for j, cell in enumerate(header):
        base = header_text(cell) or f"column {j + 1}"
        name, k = base, 1
        # Unique under the same rule resolve_column matches by, so a name never matches two.
        while name_key(name) in taken:
            k += 1
            name = f"{base} ({k})"
        taken.add(name_key(name))
        names.append(name)
    return names


def classify_value(value: Any) -> tuple[str, Any]:
    """Kind and Python value of a non-text, non-blank cell."""
    if isinstance(value, bool | np.bool_):
        return "bool", bool(value)
    if isinstance(value, int | np.integer):
        return "number", int(value)
    if isinstance(value, float | np.floating | _decimal.Decimal):
        return "number", float(value)
    if isinstance(value, pd.Timestamp):
        return "date", naive(value.to_pydatetime())
    if isinstance(value, dt.datetime):
        return "date", naive(value)
    if isinstance(value, dt.date):
        return "date", dt.datetime(value.year, value.month, value.day)
    if isinstance(value, np.datetime64):
        return "date", naive(pd.Timestamp(value).to_pydatetime())
    return "text", str(value).strip()


def naive(value: dt.datetime) -> dt.datetime:
    # datetime64 columns hold no time zone; keep the wall-clock time the sheet showed.
    return value.replace(tzinfo=None)


def clean_number_text(text: str) -> tuple[str, float]:
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
    if s[:1] in CURRENCY:
        s = s[1:].lstrip()
    elif s[-1:] in CURRENCY:
        s = s[:-1].rstrip()
    if len(s) > 1 and s[0] in "+-" and s[1] in CURRENCY:  # "-$5"
        s = s[0] + s[2:].lstrip()
    s = GROUP_SPACE.sub("", s)
    return s, factor


def column_decimal(texts: Any) -> str:
    """Comma when some text can only be a decimal-comma number and none a decimal-point one."""
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


def parse_number(text: str, decimal: str) -> float | None:
    s, factor = clean_number_text(text)
    if decimal == ".":
        if NUM_DOT.fullmatch(s) is None:
            return None
        s = s.replace(",", "")
    else:
        if NUM_COMMA.fullmatch(s) is None:
            return None
        s = s.replace(".", "").replace(",", ".")
    return float(s) * factor


def slash_date_order(texts: Any) -> str:
    """Day-first ("dmy") or month-first ("mdy") for a/b/yyyy dates; US order when both fit."""
    for text in texts:
        m = SLASH_DATE.fullmatch(text)
        if m:
            if int(m.group(1)) > 12:
                return "dmy"
            if int(m.group(2)) > 12:
                return "mdy"
    return "mdy"


def parse_date(text: str, slash_order: str) -> dt.datetime | None:
    try:
        if ISO_DATE.fullmatch(text):
            return dt.datetime.fromisoformat(text)
        m = YEAR_MONTH.fullmatch(text) or YMD_SLASH_DATE.fullmatch(text)
        if m:  # a month stands for its first day, so months work as a numeric feature
            day = int(m.group(3)) if m.re is YMD_SLASH_DATE else 1
            return dt.datetime(int(m.group(1)), int(m.group(2)), day)
        m = DOT_DATE.fullmatch(text)
        if m:
            day, month = int(m.group(1)), int(m.group(2))
        else:
            m = SLASH_DATE.fullmatch(text)
            if not m:
                return None
            a, b = int(m.group(1)), int(m.group(2))
            day, month = (a, b) if slash_order == "dmy" else (b, a)
        hh, mm, ss = (int(g) if g else 0 for g in m.group(4, 5, 6))
        return dt.datetime(int(m.group(3)), month, day, hh, mm, ss)
    except ValueError:  # 31.02.2024 and friends: not a date, keep the text
        return None


def classify_text(text: str, decimal: str, slash_order: str) -> tuple[str, Any]:
    folded = text.casefold()
    if folded in TRUE_TEXT:
        return "bool", True
    if folded in FALSE_TEXT:
        return "bool", False
    number = parse_number(text, decimal)
    if number is not None:
        return "number", number
    date = parse_date(text, slash_order)
    if date is not None:
        return "date", date
    return "text", text


KIND_WORD = {"number": "number", "date": "date", "bool": "TRUE/FALSE value"}


def as_text(kind: str, value: Any) -> str:
    if kind == "bool":
        return "TRUE" if value else "FALSE"
    if kind == "number":
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    if kind == "date":
        return header_text(value)
    return str(value)


def guess_decimal(texts: Any) -> str | None:
    """Decimal separator that a sample of texts supports, or None when it does not decide.

    Comma when some text can only be read as a decimal-comma number ("1,5") and none only as
    a decimal-point one ("1.5"); point in the opposite case.
    """
    comma_only = dot_only = 0
    for text in texts:
        s, _ = clean_number_text(text.strip())
        is_dot = NUM_DOT.fullmatch(s) is not None
        is_comma = NUM_COMMA.fullmatch(s) is not None
        comma_only += is_comma and not is_dot
        dot_only += is_dot and not is_comma
    if comma_only and not dot_only:
        return ","
    if dot_only and not comma_only:
        return "."
    return None


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
