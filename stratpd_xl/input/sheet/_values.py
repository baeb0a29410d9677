"""Rules for single cell values: blanks, error codes, numbers and dates stored as text.

These are the cleaning rules the README documents.  They act on one value (or one distinct
text); :mod:`._columns` applies them to whole columns, each distinct text once.
"""

from __future__ import annotations

import datetime as dt
import decimal as _decimal
import math
import re
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

# ISO dates may carry a time and then a UTC offset ("2024-03-01T00:00+02:00", "...Z").
ISO_DATE = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
)
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


# How programs write an infinite number (pandas and numpy "inf", JavaScript "Infinity"): a
# number, so a column of numbers holding some stays numbers (its infinite cells missing, with
# a note); read as text, a third of a column "inf" made it 335 categories without a word.
_INFINITE = {f"{sign}{word}": (-math.inf if sign == "-" else math.inf)
             for sign in ("", "+", "-") for word in ("inf", "infinity", "\u221e")}


def parse_number(text: str, decimal: str) -> float | None:
    s, factor = clean_number_text(text)
    if (infinite := _INFINITE.get(s.casefold())) is not None:
        return infinite * factor
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
            # The wall-clock time as written: an analyst sees it in the cell, not UTC.
            return naive(dt.datetime.fromisoformat(text))
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
