"""Excel workbooks of StratPD results: one curve, the impact ranking, or a full report.

Each sheet has a small header block saying what was computed, the table (an Excel table with
user-facing headers), a native Excel chart (so the analyst can restyle it) and the matplotlib
picture (so it looks the same everywhere, LibreOffice included).  Written with xlsxwriter.

Cells never hold NaN: missing values are blank.  Text is always written as text, so a category
called ``=cmd`` or ``0012`` stays what it was.  Datetimes are Excel dates with a date format.
"""

from __future__ import annotations

import datetime as dt
import errno
import io
import math
import numbers
import os
import re
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import xlsxwriter
from xlsxwriter.utility import quote_sheetname, xl_range_abs
from xlsxwriter.workbook import Workbook
from xlsxwriter.worksheet import Worksheet

from ..errors import StratPDInputError
from ..schema import MISSING_LABEL, Finding, curve_points, missing_row
from .drawing import Chart, Picture, PictureDrawer, draw_picture
from .labels import (
    BAND_COLOR,
    CATEGORICAL_COLOR,
    CLASS_COLORS,
    CURVE_COLOR,
    MAX_BARS,
    PLAIN_PARAMETERS,
    curve_title,
    decimals,
    drawn_categories,
    impact_title,
    is_categorical,
    left_out_note,
    rows_ignored_note,
    shown_band,
    unique_sheet_names,
    value_label,
)
from .notes import notes_table, shown
from .tables import (
    BAND_HIGH,
    BAND_LOW,
    SIMULTANEOUS,
    SUMMARISED,
    curve_table,
    impact_table,
    is_by_class,
    pd_header,
)
from .words import class_sentences, sentence
from .words import summary as said_and_notes

__all__ = [
    "SAVING",
    "curve_table",
    "impact_table",
    "unique_sheet_names",
    "write_curve_workbook",
    "write_impact_workbook",
    "write_pairs_workbook",
    "write_report",
]

Progress = Callable[[int, int, str], None]
PathLike = str | os.PathLike[str]

SUMMARY = "Summary"
#: ``write_report``'s progress name once the pictures are drawn and the file is being saved.
SAVING = "saving"
#: The sheet of ``write_report(..., model_check=...)``.
MODEL_CHECK = "Model check"
#: The sheet of ``write_report`` listing every note of the analysis, sortable.
NOTES = "Notes"
# Native chart size in pixels; close to the picture's size (704 x 440 px at 110 dpi, which
# Excel shows at 96/110 of that) so the two line up one under the other.
_CHART_W, _CHART_H = 614, 384
# Rows get an explicit height so "N rows below the chart" is the same distance in Excel and
# in LibreOffice, which otherwise uses its own default row height.
_ROW_PT = 15.75
_ROW_PX = 21


# ----------------------------------------------------------------------------- cells


@dataclass
class _Formats:
    """The workbook's cell formats, created once per workbook."""

    book: Workbook
    cache: dict[tuple, Any] = field(default_factory=dict)

    def get(self, **props: Any) -> Any:
        key = tuple(sorted(props.items()))
        if key not in self.cache:
            self.cache[key] = self.book.add_format(props)
        return self.cache[key]

    @property
    def title(self) -> Any:
        return self.get(bold=True, font_size=14)

    @property
    def label(self) -> Any:
        return self.get(font_color="#555555")

    @property
    def link(self) -> Any:
        return self.get(font_color="blue", underline=1)


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NaT:
        return True
    if isinstance(value, float | np.floating):
        return not math.isfinite(float(value))
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _as_datetime(value: Any) -> dt.datetime | None:
    if isinstance(value, np.datetime64):
        value = pd.Timestamp(value)
    if isinstance(value, pd.Timestamp):
        # Excel has no time zones; show the wall-clock time the data had.
        if value.tzinfo is not None:
            value = value.tz_localize(None)
        return value.to_pydatetime()
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    return None


def _date_format(values: pd.Series) -> str:
    stamps = pd.to_datetime(values, errors="coerce").dropna()
    if len(stamps) and (stamps != stamps.dt.normalize()).any():
        return "yyyy-mm-dd hh:mm:ss"
    return "yyyy-mm-dd"


def _number_format(values: Any) -> str:
    """About four significant digits on the largest value, with thousands separators
    (:func:`labels.decimals`, the rule the printed table follows too)."""
    places = decimals(values)
    if places is None:
        return "#,##0"
    numeric = pd.to_numeric(pd.Series(np.ravel(values)), errors="coerce").to_numpy(dtype=float)
    if not np.isfinite(numeric).any() or np.nanmax(np.abs(numeric)) == 0:
        return "General"
    return "#,##0" + ("." + "0" * places if places else "")


# Feature values are shown with as many decimals as they have, counted at 12 significant
# digits (so float noise such as 0.30000000000000004 reads 0.3), up to this many.
_VALUE_PLACES = 6


def _value_format(values: pd.Series) -> str | None:
    """The number format of a column of feature values (``None``: not numbers).

    One count of decimals for the column, the most any value needs (0.23 and 0.3 read 0.23
    and 0.30, a carat of 0.23 is not 0.230), thousands separators from 10,000 (a year reads
    2020); the stored values keep every digit.  Values needing more than six decimals keep
    Excel's General format.
    """
    if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        return None
    numeric = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    finite = numeric[np.isfinite(numeric)]
    if finite.size == 0:
        return None
    # The distinct values are few next to the rows; a long column is sampled evenly.
    sample = np.unique(finite)
    sample = sample[np.linspace(0, sample.size - 1, min(sample.size, 2000)).astype(int)]
    places = max(len(np.format_float_positional(float(f"{v:.12g}"), trim="-").partition(".")[2])
                 for v in sample)
    if places > _VALUE_PLACES:
        return "General"
    big = np.abs(finite).max() >= 10_000
    return ("#,##0" if big else "0") + ("." + "0" * places if places else "")


def _axis_format(values: pd.Series) -> str:
    """Thousands separators on a chart axis when the values reach 1,000; else Excel's own."""
    numeric = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    finite = np.abs(numeric[np.isfinite(numeric)])
    return "#,##0" if finite.size and finite.max() >= 1000 else "General"


def _write_value(ws: Worksheet, row: int, col: int, value: Any, fmt: Any = None,
                 date_fmt: Any = None) -> None:
    """Write one value with the writer matching its type; missing values become blanks."""
    if _is_missing(value):
        ws.write_blank(row, col, None, fmt)
        return
    if isinstance(value, bool | np.bool_):
        ws.write_boolean(row, col, bool(value), fmt)
        return
    stamp = _as_datetime(value)
    if stamp is not None:
        if stamp.year < 1900:  # before Excel's epoch: keep it readable as text
            ws.write_string(row, col, stamp.isoformat(sep=" "), fmt)
        else:
            ws.write_datetime(row, col, stamp, date_fmt)
        return
    if isinstance(value, numbers.Real):
        ws.write_number(row, col, float(value), fmt)
        return
    if isinstance(value, dt.timedelta | pd.Timedelta | np.timedelta64):
        ws.write_number(row, col, pd.Timedelta(value) / pd.Timedelta(days=1), fmt)
        return
    # Excel cells hold at most 32,767 characters.
    ws.write_string(row, col, str(value)[:32767], fmt)


def _column_width(header: str, values: pd.Series, is_date: bool) -> float:
    if is_date:
        longest = 19 if _date_format(values).endswith("ss") else 10
    else:
        sample = values.head(200)
        longest = max((len(f"{v:,.4g}" if isinstance(v, float) else str(v))
                       for v in sample if not _is_missing(v)), default=4)
    # A long header of several words wraps over up to three lines ("low (95% band per
    # point)") rather than widening its column of short numbers.
    words = str(header).split()
    wanted = len(str(header)) if len(words) < 2 else max(
        min(len(str(header)), _HEADER_CHARS), max(len(w) for w in words))
    return float(min(max(wanted, longest) + 2, 40))


_HEADER_CHARS = 13


def _write_table(ws: Worksheet, fmts: _Formats, table: pd.DataFrame, top: int, left: int,
                 *, links: Sequence[str | None] | None = None,
                 percent_columns: Sequence[str] = (),
                 general_columns: Sequence[str] = ()) -> tuple[int, int, dict[int, float]]:
    """Write ``table`` as an Excel table at (top, left).

    Returns the table's last row and column and the column widths set (in characters).

    ``links`` optionally gives an internal link target for each row's first cell.
    ``general_columns`` hold feature values, shown with the decimals they have
    (:func:`_value_format`).
    """
    # Table column names live in an XML attribute, where line breaks turn into spaces and
    # control characters are not allowed; the header cell must match the name exactly.
    columns = [_NOT_XML.sub("\ufffd", re.sub(r"[\r\n\t]", " ", str(c))) for c in table.columns]
    # The curve and its band are read together: one number format, so their digits line up.
    shared = [c for c in (pd_header(table), BAND_LOW, BAND_HIGH, *SIMULTANEOUS)
              if c in table.columns]
    shared = shared if len(shared) > 1 else []
    n = len(table)
    last_row = top + max(n, 1)  # an Excel table needs at least one data row
    last_col = left + len(columns) - 1
    widths: dict[int, float] = {}
    ws.add_table(top, left, last_row, last_col, {
        # Bold headers because LibreOffice does not draw Excel's table styles.
        "columns": [{"header": c, "header_format": fmts.get(bold=True, bottom=1,
                                                             text_wrap=True, valign="bottom")}
                    for c in columns],
        "style": "Table Style Light 9",
        "autofilter": False,
    })
    for j, name in enumerate(columns):
        series = table.iloc[:, j]
        original = str(table.columns[j])
        is_date = pd.api.types.is_datetime64_any_dtype(series) or (
            series.dtype == object and any(_as_datetime(v) for v in series.head(50)))
        if original in percent_columns:
            fmt = fmts.get(num_format="0.0%")
        elif original in general_columns:
            shown = _value_format(series)
            fmt = fmts.get(num_format=shown) if shown else None
        elif original in shared:
            fmt = fmts.get(num_format=_number_format(table[shared].to_numpy()))
        elif pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
            fmt = fmts.get(num_format=_number_format(series))
        else:
            fmt = None
        date_fmt = fmts.get(num_format=_date_format(series), align="left") if is_date else None
        widths[left + j] = _column_width(name, series, is_date)
        ws.set_column(left + j, left + j, widths[left + j])
        values = series.tolist() if not is_date else list(series)
        for i, value in enumerate(values):
            if j == 0 and links is not None and links[i] is not None and not _is_missing(value):
                ws.write_url(top + 1 + i, left, links[i], fmts.link, string=str(value))
            else:
                _write_value(ws, top + 1 + i, left + j, value, fmt, date_fmt)
    lines = max((_lines(c, widths[left + j] - 1) for j, c in enumerate(columns)), default=1)
    if lines > 1:
        ws.set_row(top, _ROW_PT * lines)
    return last_row, last_col, widths


# Column A's width on a sheet with a header block: longer labels wrap.
_LABEL_CHARS = 30.0


def _write_info(ws: Worksheet, fmts: _Formats, top: int,
                items: Sequence[tuple[Any, ...]], *, text_cols: int = 1,
                text_chars: float = 40.0, label_chars: float = _LABEL_CHARS) -> int:
    """Write label/value pairs in columns A:B from row ``top``; return the next free row.

    A long text value (a warning, an explanation) is wrapped in B merged across
    ``text_cols`` columns about ``text_chars`` characters wide, and its row made tall
    enough, so it neither runs behind the chart nor off the printed page.  An item may carry
    a third element, an explanation written the same way from column C.  Labels longer than
    column A wrap too.
    """
    wrap = fmts.get(text_wrap=True, valign="top", align="left")
    for i, item in enumerate(items):
        label, value = item[0], item[1]
        row = top + i
        lines = _lines(label, label_chars)
        ws.write_string(row, 0, label, fmts.get(font_color="#555555", text_wrap=True,
                                                valign="top"))
        if isinstance(value, str) and len(value) > text_chars * 0.9:
            lines = max(lines, _lines(value, text_chars))
            _merge(ws, row, 1, value, text_cols, wrap)
        else:
            # Counts read better as 53,940; parameters (a seed of 12345) stay as typed.
            count = label.startswith(_COUNT_LABELS)
            _write_value(ws, row, 1, value, fmts.get(
                align="left", valign="top", num_format="#,##0" if count else "General"))
        if len(item) > 2 and item[2]:
            grey = fmts.get(text_wrap=True, valign="top", font_color="#666666", italic=True)
            lines = max(lines, _lines(str(item[2]), text_chars - 8))
            _merge(ws, row, 2, str(item[2]), max(text_cols - 1, 1), grey)
        if lines > 1:
            ws.set_row(row, _ROW_PT * lines)
    return top + len(items)


def _lines(text: str, chars: float) -> int:
    """Lines ``text`` takes when wrapped about ``chars`` characters wide.

    ``chars`` counts widths of "0" (Excel's column unit); ordinary text is narrower, about
    1.15 characters to a "0" in Calibri and LibreOffice's stand-in, less a little for
    words that wrap early."""
    return sum(max(1, math.ceil(len(part) / max(chars * 1.1, 8.0))) for part in text.split("\n"))


def _merge(ws: Worksheet, row: int, col: int, text: str, n_cols: int, fmt: Any) -> None:
    if n_cols > 1:
        ws.merge_range(row, col, row, col + n_cols - 1, text[:32767], fmt)
    else:
        ws.write_string(row, col, text[:32767], fmt)


def _write_wrapped(ws: Worksheet, fmts: _Formats, row: int, col: int, text: str, n_cols: int,
                   chars: float, fmt: Any) -> None:
    """``text`` wrapped in ``n_cols`` merged cells about ``chars`` characters wide."""
    _merge(ws, row, col, text, n_cols, fmt)
    # Rows of wrapped text are not measured by Excel on opening, nor by LibreOffice when
    # printing: give the row the height its lines need.
    lines = _lines(text, chars)
    if lines > 1:
        ws.set_row(row, _ROW_PT * lines)


def _paragraphs(ws: Worksheet, fmts: _Formats, top: int, heading: str,
                items: Sequence[tuple[str, Sequence[str]]], n_cols: int, chars: float) -> int:
    """A bold heading, then each text wrapped across ``n_cols`` columns with its caveats
    (grey, indented) right under it; returns the next free row."""
    if not items:
        return top
    ws.write_string(top, 0, heading, fmts.get(bold=True, font_size=12))
    row = top + 1
    for text, caveats in items:
        _write_wrapped(ws, fmts, row, 0, text, n_cols, chars,
                       fmts.get(text_wrap=True, valign="top"))
        row += 1
        for caveat in caveats:
            _write_wrapped(ws, fmts, row, 0, f"note: {caveat}", n_cols, chars - 3,
                           fmts.get(text_wrap=True, valign="top", indent=1,
                                    font_color="#666666", italic=True))
            row += 1
    return row + 1


_COUNT_LABELS = ("rows ", "leaves", "distinct ")


def _param_items(params: Any) -> list[tuple[str, Any]]:
    """The parameters in plain words (see :data:`labels.PLAIN_PARAMETERS`)."""
    if not isinstance(params, Mapping):
        return []
    items = []
    for key, value in params.items():
        label, when_none = PLAIN_PARAMETERS.get(str(key), (str(key), "(not set)"))
        if isinstance(value, list | tuple):  # column names (exclude)
            value = ", ".join(str(v) for v in value) or None
        if value is None:
            value = when_none
        elif isinstance(value, bool | np.bool_):
            value = "yes" if value else "no"
        elif not isinstance(value, numbers.Real | str):
            value = str(value)
        items.append((label, value))
    return items


def _curve_info(result: pd.DataFrame) -> list[tuple[str, Any]]:
    attrs = result.attrs
    labels = [
        ("target", "target"),
        ("feature", "feature"),
        ("method", "method"),
        ("rows in data", "n_rows"),
        ("rows used", "n_used"),
        ("rows dropped (missing value)", "n_dropped_missing"),
        ("rows ignored", "n_ignored"),
        ("leaves", "n_leaves"),
        ("distinct x values", "n_unique_x"),
        ("baseline category", "baseline"),
    ]
    items: list[tuple[Any, ...]] = [
        (label, attrs[key], rows_ignored_note(result) if key == "n_ignored" and attrs[key] else "")
        for label, key in labels if key in attrs
    ]
    if is_by_class(result):
        rows = attrs.get("class_rows") or {}
        items.append(("classes", ", ".join(
            f"{c} ({rows[c]:,} rows)" if c in rows else str(c) for c in attrs["classes"])))
        items.append((
            "adjusted for other columns",
            "no: curves per class are not adjusted for the other columns' linear part (one "
            "adjustment per class would break their sum, 0 at every point)",
        ))
    blank = attrs.get("missing")
    if isinstance(blank, dict):
        items.append((
            "rows without a value",
            f'{blank.get("rows", 0):,}: not in the slopes; their row, "{MISSING_LABEL}", '
            f'compares {blank.get("compared", 0):,} of them with the rows that have one in '
            f'{blank.get("strata", 0):,} strata',
        ))
    full = attrs.get("n_points_full")
    points = len(curve_points(result))
    if isinstance(full, int) and full > points:
        items.append((
            "curve points",
            f"{points:,} of {full:,}; each summarises the values up to the next one "
            f'("{SUMMARISED}")',
        ))
    without = attrs.get("categories_without_estimate")
    if without:
        items.append(("categories without an estimate", ", ".join(str(c) for c in without)))
    items.extend(("warning", str(w)) for w in attrs.get("warnings") or [])
    params = attrs.get("params")
    if is_by_class(result) and isinstance(params, Mapping):
        # Said above ("adjusted for other columns"): not the setting, which did not apply.
        params = {k: v for k, v in params.items() if k != "adjust"}
    return items + _param_items(params)


def _rows_for(pixels: int) -> int:
    return math.ceil(pixels / _ROW_PX) + 1


# ----------------------------------------------------------------------------- sheets


def _ref(sheet: str, row0: int, col: int, row1: int) -> list:
    return [sheet, row0, col, row1, col]


# xlsxwriter reads a chart title, axis or series name shaped like "Sheet!A1" as a cell
# reference (its API has no literal form), so "-f Q1!B2" would give a broken chart.  A word
# joiner (U+2060, invisible and zero-width) after each "!" keeps the text as typed on screen
# while no longer matching xlsxwriter's reference pattern.
_REFERENCE_LIKE = re.compile(r"!(?=\$?[A-Za-z]+\$?\d)")


def _chart_text(text: object) -> str:
    """``text`` as a chart title or name that xlsxwriter writes literally."""
    return _REFERENCE_LIKE.sub("!\u2060", str(text))


def _curve_chart(book: Workbook, result: pd.DataFrame, table: pd.DataFrame, sheet: str,
                 top: int, left: int, error_cols: tuple[int, int] | None = None,
                 left_out: int = 0, grid: _BandedChart | None = None,
                 blank: tuple[int, int, str] | None = None) -> Any:
    """A native chart reading the curve table at (top, left) of ``sheet``.

    ``error_cols`` are the columns holding the error-bar lengths (minus, plus) of a
    categorical chart, on the table's rows; ``left_out`` is how many categories the table
    at (top, left) leaves out, said under the chart's category axis; ``grid`` the hidden
    columns of a numeric curve's filled band (:func:`_write_band_grid`), drawn instead of
    the table's points; ``blank`` the row and first column of the hidden cells of a
    line's "(missing)" point (:func:`_write_blank_point`) and its name.
    """
    blank_cells = None if blank is None else (blank[0], blank[2])
    left_of_blank = 0 if blank is None else blank[1]
    if is_by_class(result):
        return _class_chart(book, result, table, sheet, top, left)
    n = len(table)
    first, last = top + 1, top + max(n, 1)
    headers = list(table.columns)
    col = {h: left + j for j, h in enumerate(headers)}
    feature = headers[0]
    if is_categorical(result):
        chart = book.add_chart({"type": "column"})
        series: dict[str, Any] = {
            "name": pd_header(table),
            "categories": _ref(sheet, first, col[feature], last),
            "values": _ref(sheet, first, col[pd_header(table)], last),
            "fill": {"color": CATEGORICAL_COLOR},
            "gap": 60,
        }
        if error_cols is not None:
            # Cell ranges rather than literal arrays: LibreOffice ignores literal ones.
            minus_col, plus_col = error_cols
            quoted = quote_sheetname(sheet)
            series["y_error_bars"] = {
                "type": "custom",
                "minus_values": f"={quoted}!{xl_range_abs(first, minus_col, last, minus_col)}",
                "plus_values": f"={quoted}!{xl_range_abs(first, plus_col, last, plus_col)}",
                "end_style": 1,
            }
        chart.add_series(series)
        chart.show_hidden_data()
        chart.set_legend({"none": True})
        # Tick labels at the bottom ("low"), not on the zero line among the bars.
        axis_name = f"{feature} ({left_out_note(n, left_out)})" if left_out else feature
        chart.set_x_axis({"name": _chart_text(axis_name), "label_position": "low",
                          "num_font": {"rotation": -45} if n > 6 else {}})
    elif grid is not None:
        chart = _banded_chart(book, result, table, sheet, grid)
    else:
        if missing_row(result) is not None:
            # The blanks' row, last, reads "(missing)": a text among a scatter's x values
            # would make Excel number every point 1, 2, 3 ...; the line ends before it, and
            # the point stands beside its end (blank_cells), as in the picture.
            n -= 1
            last = top + max(n, 1)
        few = n <= 30
        chart = book.add_chart(
            {"type": "scatter", "subtype": "straight_with_markers" if few else "straight"})
        x_ref = _ref(sheet, first, col[feature], last)
        main: dict[str, Any] = {
            "name": pd_header(table),
            "categories": x_ref,
            "values": _ref(sheet, first, col[pd_header(table)], last),
            "line": {"color": CURVE_COLOR, "width": 2.25},
        }
        main["marker"] = ({"type": "circle", "size": 4,
                           "fill": {"color": CURVE_COLOR}, "border": {"color": CURVE_COLOR}}
                          if few else {"type": "none"})
        chart.add_series(main)
        if blank_cells is not None:
            at, name = blank_cells
            chart.add_series(_blank_series(name, _ref(sheet, at, left_of_blank, at),
                                           _ref(sheet, at, left_of_blank + 1, at),
                                           _ref(sheet, at, left_of_blank + 2, at),
                                           _ref(sheet, at, left_of_blank + 3, at)))
        # The value axis crosses at 0, inside the curve: tick labels at the bottom ("low")
        # keep them off the curve.
        x_axis: dict[str, Any] = {"name": _chart_text(feature), "label_position": "low",
                                  "major_gridlines": {"visible": False}}
        if pd.api.types.is_datetime64_any_dtype(table[feature]):
            x_axis["num_format"] = _date_format(table[feature])
            x_axis["num_font"] = {"rotation": -45}
        chart.set_x_axis(x_axis)
        chart.set_legend({"none": True})
    chart.set_title({"name": _chart_text(curve_title(result)),
                     "name_font": {"size": 11, "bold": True}})
    chart.set_y_axis({"name": _chart_text(value_label(result)),
                      "num_format": _axis_format(table[pd_header(table)]),
                      "major_gridlines": {"visible": True, "line": {"color": "#E5E5E5"}}})
    chart.set_size({"width": _CHART_W, "height": _CHART_H})
    return chart


def _class_chart(book: Workbook, result: pd.DataFrame, table: pd.DataFrame, sheet: str,
                 top: int, left: int) -> Any:
    """A native chart of a curve per class of the target (:func:`curve_table`'s long
    table, ``class`` first, each class's rows together): a line per class over the
    feature, or a bar per class in each category, in the picture's colours."""
    headers = list(table.columns)
    feature, value = headers[1], pd_header(table)
    x_col, y_col = left + 1, left + headers.index(value)
    classes = list(dict.fromkeys(table.iloc[:, 0]))
    spans = [np.flatnonzero((table.iloc[:, 0] == c).to_numpy()) for c in classes]
    categorical = is_categorical(result)
    few = max((s.size for s in spans), default=0) <= 30
    chart = book.add_chart({"type": "column"} if categorical else
                           {"type": "scatter",
                            "subtype": "straight_with_markers" if few else "straight"})
    for k, (name, rows) in enumerate(zip(classes, spans, strict=True)):
        if rows.size == 0:
            continue
        first, last = top + 1 + int(rows[0]), top + 1 + int(rows[-1])
        color = CLASS_COLORS[k % len(CLASS_COLORS)]
        series: dict[str, Any] = {"name": _chart_text(name),
                                  "categories": _ref(sheet, first, x_col, last),
                                  "values": _ref(sheet, first, y_col, last)}
        if categorical:
            series.update(fill={"color": color}, gap=60)
        else:
            series["line"] = {"color": color, "width": 2.25,
                              "dash_type": ("solid", "dash", "round_dot")[
                                  (k // len(CLASS_COLORS)) % 3]}
            series["marker"] = ({"type": "circle", "size": 4, "fill": {"color": color},
                                 "border": {"color": color}} if few else {"type": "none"})
        chart.add_series(series)
    chart.show_hidden_data()
    chart.set_x_axis({"name": _chart_text(feature), "label_position": "low",
                      "major_gridlines": {"visible": False}})
    chart.set_legend({"position": "right"})
    chart.set_title({"name": _chart_text(curve_title(result)),
                     "name_font": {"size": 11, "bold": True}})
    chart.set_y_axis({"name": _chart_text(
        f"change in each {result.attrs.get('target', 'class')}'s chance vs its average, "
        "points"),
                      "num_format": _axis_format(table[value]),
                      "major_gridlines": {"visible": True, "line": {"color": "#E5E5E5"}}})
    chart.set_size({"width": _CHART_W, "height": _CHART_H})
    return chart


# Points of the evenly spaced grid a banded chart is drawn on (5 x 40 + 1: six axis labels,
# both ends included); a curve whose points are already evenly spaced is drawn on them.
_GRID = 201
_GRID_LABELS = 5
_GRID_HEADERS = ("chart: x", "chart: curve", "chart: band low", "chart: band width",
                 "chart: points", "chart: axis label", "chart: missing",
                 "chart: missing minus", "chart: missing plus")
# The "(missing)" point stands this far (a share of the axis) right of the curve's end, as
# the picture draws it beside the axis.
_BLANK_OFFSET = 0.06


@dataclass(frozen=True)
class _BandedChart:
    """Where the hidden columns of a banded curve chart are, and how to label its axis."""

    top: int
    col: int  # the first of the columns named by _GRID_HEADERS
    n: int
    num_format: str  # of the axis labels
    legend: str
    markers: bool
    blank: str | None = None  # the "(missing)" point's name, when the curve has one


def _blank_facts(result: pd.DataFrame) -> tuple[float, float, float, str] | None:
    """The blank rows' point of a numeric curve (its value, band and name: "(missing),
    490 rows"), or None when the curve has no blank row."""
    row = missing_row(result)
    if row is None or is_categorical(result):
        return None
    value = float(row["pd"].iloc[0])
    if not math.isfinite(value):
        return None
    facts = result.attrs.get("missing") or {}
    low, high = float(facts.get("low", value)), float(facts.get("high", value))
    low, high = (low if math.isfinite(low) else value), (high if math.isfinite(high) else value)
    rows = int(facts.get("rows", 0))
    return value, low, high, f"{MISSING_LABEL}, {rows:,} rows"


def _blank_series(name: str, categories: list, values: list, minus: list, plus: list
                  ) -> dict[str, Any]:
    """The "(missing)" point as a chart series: a diamond, its 95 % band as an error bar
    (cell ranges: LibreOffice ignores literal ones), labelled with its name below."""
    quoted = quote_sheetname(values[0])
    return {
        "name": _chart_text(name), "categories": categories, "values": values,
        "line": {"none": True},
        "marker": {"type": "diamond", "size": 8, "fill": {"color": CURVE_COLOR},
                   "border": {"color": CURVE_COLOR}},
        "y_error_bars": {
            "type": "custom", "end_style": 1,
            "minus_values": f"={quoted}!{xl_range_abs(minus[1], minus[2], minus[3], minus[4])}",
            "plus_values": f"={quoted}!{xl_range_abs(plus[1], plus[2], plus[3], plus[4])}",
        },
        "data_labels": {"series_name": True, "position": "below"},
    }


def _write_band_grid(ws: Worksheet, fmts: _Formats, result: pd.DataFrame, top: int,
                     col: int) -> _BandedChart | None:
    """The curve and its band (the one the picture draws, :func:`labels.shown_band`) on an
    evenly spaced grid of x, in hidden columns from ``col``, for a native chart whose band
    is a filled area.

    Excel and LibreOffice fill between two series only in an area chart, and an area chart
    spaces its points evenly whatever their values; so a curve whose points are not evenly
    spaced is read off at ``_GRID`` evenly spaced values of x (straight lines between its
    points, as a line through the table's points would be drawn).  The table keeps the
    exact points.
    """
    low_col, high_col, legend = shown_band(result)
    if "x" not in result.columns or not {low_col, high_col} <= set(result.columns):
        return None
    is_date = pd.api.types.is_datetime64_any_dtype(result["x"])
    x = pd.to_numeric(result["x"].astype("int64") if is_date else result["x"],
                      errors="coerce").to_numpy(dtype=float)
    if is_date:
        x[result["x"].isna().to_numpy()] = np.nan
    y, low, high = (pd.to_numeric(result[c], errors="coerce").to_numpy(dtype=float)
                    for c in ("pd", low_col, high_col))
    ok = np.isfinite(x) & np.isfinite(y)
    banded = ok & np.isfinite(low) & np.isfinite(high)
    if banded.sum() < 2 or np.ptp(x[ok]) == 0:
        return None
    steps = np.diff(x[ok])
    even = ok.sum() <= _GRID and bool(np.allclose(steps, steps[0], rtol=1e-6, atol=0))
    markers = int(ok.sum()) <= 30
    if even:
        grid, curve = x[ok], y[ok]
        lows = np.where(banded[ok], low[ok], np.nan)
        highs = np.where(banded[ok], high[ok], np.nan)
        points = curve if markers else np.full(len(grid), np.nan)
    else:
        grid = np.linspace(x[ok].min(), x[ok].max(), _GRID)
        curve = np.interp(grid, x[ok], y[ok])
        lows = np.interp(grid, x[banded], low[banded])
        highs = np.interp(grid, x[banded], high[banded])
        points = np.full(_GRID, np.nan)
        if markers:  # each point's marker at the grid value nearest to it
            points[_nearest(grid, x[ok])] = y[ok]
    # The axis labels are a column of their own, blank but where a label goes: Excel and
    # LibreOffice then show every label there is (LibreOffice ignores "a label every k
    # points"), and they can be round numbers, each at the grid value nearest to it.
    label = np.full(len(grid), np.nan)
    if even or is_date:
        every = max(1, math.ceil((len(grid) - 1) / (10 if even else _GRID_LABELS)))
        label[::every] = grid[::every]
    else:
        step = _nice_step(grid[-1] - grid[0])
        ticks = np.arange(math.ceil(grid[0] / step), math.floor(grid[-1] / step) + 1) * step
        label[_nearest(grid, ticks)] = ticks
    if is_date:
        # Dates as labels would make the axis a date axis, which LibreOffice then draws
        # empty: the labels are the dates as text.
        grid_out: Any = pd.to_datetime(grid.astype("int64"))
        num_format = _date_format(result["x"])
        text = "%Y-%m-%d %H:%M" if num_format.endswith("ss") else "%Y-%m-%d"
        label_out: Any = [pd.Timestamp(int(v)).strftime(text) if np.isfinite(v) else None
                          for v in label]
    else:
        grid_out, label_out = grid, label
        if even:  # the labels are the curve's own values: shown as the table shows them
            num_format = _value_format(pd.Series(label[np.isfinite(label)])) or "General"
        else:
            places = len(np.format_float_positional(float(f"{step:.6g}"), trim="-")
                         .partition(".")[2])
            num_format = (("#,##0" if np.abs(grid).max() >= 10_000 else "0")
                          + ("." + "0" * places if places else ""))
    fmt = fmts.get(num_format=num_format)
    columns = [grid_out, curve, lows, highs - lows, points, label_out]
    blank = _blank_facts(result)
    if blank is None:
        columns += [[], [], []]
    else:
        # The blank rows' point a few categories past the curve's end, beside it as in the
        # picture: the spacers have no curve, and a band of no width (an area chart cannot
        # leave a gap); the point alone has the "missing" columns.
        value, low_b, high_b, _ = blank
        spacers = max(2, round(_BLANK_OFFSET * len(grid)))
        pad = [np.nan] * (spacers + 1)
        last_low = float(lows[np.isfinite(lows)][-1]) if np.isfinite(lows).any() else 0.0
        columns = [[*list(grid_out), *pad], [*curve, *pad], [*lows, *[last_low] * len(pad)],
                   [*(highs - lows), *[0.0] * len(pad)], [*points, *pad],
                   [*list(label_out), *pad],
                   [*[np.nan] * (len(grid) + spacers), value],
                   [*[np.nan] * (len(grid) + spacers), value - low_b],
                   [*[np.nan] * (len(grid) + spacers), high_b - value]]
    for j, (header, column) in enumerate(zip(_GRID_HEADERS, columns, strict=True)):
        ws.write_string(top, col + j, header, fmts.label)
        for i, value in enumerate(column):
            _write_value(ws, top + 1 + i, col + j, value, fmt, fmt)
    ws.set_column(col, col + len(_GRID_HEADERS) - 1, None, None, {"hidden": True})
    return _BandedChart(top, col, len(columns[0]), num_format, legend, markers,
                        None if blank is None else blank[3])


def _write_blank_point(ws: Worksheet, fmts: _Formats, result: pd.DataFrame, top: int,
                       col: int) -> tuple[int, int, str] | None:
    """The "(missing)" point of a line without a band, in four hidden columns from ``col``
    (its place on the x axis, a little past the curve's end; its value; its band's lengths
    down and up): the row and column of its values and its name, or None."""
    blank = _blank_facts(result)
    points = curve_points(result)
    if blank is None or "x" not in points.columns or len(points) == 0:
        return None
    x = points["x"]
    if pd.api.types.is_datetime64_any_dtype(x):
        at: Any = x.max() + (x.max() - x.min()) * _BLANK_OFFSET
    else:
        values = pd.to_numeric(x, errors="coerce").to_numpy(dtype=float)
        if not np.isfinite(values).any():
            return None
        span = float(np.nanmax(values) - np.nanmin(values)) or 1.0
        at = float(np.nanmax(values)) + _BLANK_OFFSET * span
    value, low, high, name = blank
    headers = ("chart: missing x", "chart: missing", "chart: missing minus",
               "chart: missing plus")
    fmt = fmts.get(num_format=_date_format(x)) if pd.api.types.is_datetime64_any_dtype(x) \
        else None
    for j, (header, cell) in enumerate(zip(headers, (at, value, value - low, high - value),
                                           strict=True)):
        ws.write_string(top, col + j, header, fmts.label)
        _write_value(ws, top + 1, col + j, cell, None, fmt)
    ws.set_column(col, col + len(headers) - 1, None, None, {"hidden": True})
    return top + 1, col, name


def _nearest(grid: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Index of the point of the evenly spaced ``grid`` nearest to each value."""
    at = np.rint((values - grid[0]) / (grid[-1] - grid[0]) * (len(grid) - 1))
    return np.clip(at, 0, len(grid) - 1).astype(int)


def _nice_step(span: float) -> float:
    """A round step (1, 2, 2.5 or 5 times a power of ten) giving 4 to 8 labels on ``span``."""
    power = 10.0 ** math.floor(math.log10(span / 5))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if span / (m * power) <= 8)


def _banded_chart(book: Workbook, result: pd.DataFrame, table: pd.DataFrame, sheet: str,
                  grid: _BandedChart) -> Any:
    """A curve over its band filled: a stacked area (an invisible band low, then the band's
    width) under a line, all read from the hidden grid columns (:func:`_write_band_grid`)."""
    first, last = grid.top + 1, grid.top + grid.n
    x_ref = _ref(sheet, first, grid.col + 5, last)
    chart = book.add_chart({"type": "area", "subtype": "stacked"})
    chart.add_series({"name": "band low", "categories": x_ref,
                      "values": _ref(sheet, first, grid.col + 2, last),
                      "fill": {"none": True}, "border": {"none": True}})
    chart.add_series({"name": _chart_text(grid.legend), "categories": x_ref,
                      "values": _ref(sheet, first, grid.col + 3, last),
                      "fill": {"color": BAND_COLOR, "transparency": 35},
                      "border": {"none": True}})
    line = book.add_chart({"type": "line"})
    line.add_series({"name": pd_header(table), "categories": x_ref,
                     "values": _ref(sheet, first, grid.col + 1, last),
                     "line": {"color": CURVE_COLOR, "width": 2.25},
                     "marker": {"type": "none"}})
    hidden = [0]
    if grid.markers:
        line.add_series({"name": "points", "categories": x_ref,
                         "values": _ref(sheet, first, grid.col + 4, last),
                         "line": {"none": True},
                         "marker": {"type": "circle", "size": 4,
                                    "fill": {"color": CURVE_COLOR},
                                    "border": {"color": CURVE_COLOR}}})
        hidden.append(3)
    if grid.blank is not None:
        line.add_series(_blank_series(
            grid.blank, x_ref, _ref(sheet, first, grid.col + 6, last),
            _ref(sheet, first, grid.col + 7, last), _ref(sheet, first, grid.col + 8, last)))
    chart.combine(line)
    chart.show_hidden_data()
    chart.set_x_axis({
        "name": _chart_text(table.columns[0]),
        # Tick labels at the bottom, not on the zero line through the curve; the first and
        # last points on the chart's edges, as on a value axis.
        "label_position": "low", "position_axis": "on_tick",
        "interval_unit": 1, "major_tick_mark": "none",
        "num_format": grid.num_format, "num_font": {"rotation": 0},
        "major_gridlines": {"visible": False},
    })
    chart.set_legend({"position": "bottom", "delete_series": hidden})
    return chart


def _write_curve_sheet(wb: _Book, ws: Worksheet, sheet: str, result: pd.DataFrame,
                       top: int = 0) -> _Slot:
    """Title, the curve in words, header block, table and native chart of one curve, from
    row ``top``; the picture's place is returned (:func:`_place`)."""
    fmts = wb.formats
    _page_setup(ws)
    table = curve_table(result)
    ws.write_string(top, 0, curve_title(result), fmts.title)
    guess = _guess_widths(table)
    n_cols = len(guess) + _CHART_COLS
    row = top + 2
    target = str(result.attrs.get("target", "target"))
    by_class = is_by_class(result)
    found = Finding.from_result(result)
    # A curve per class: each class's sentence, one under the other.
    said = (class_sentences(result, target) if by_class
            else [sentence(found, target)] if found is not None else [])
    for i, text in enumerate(said):
        _write_wrapped(ws, fmts, top + 1 + i, 0, text, n_cols,
                       sum(guess) + _CHART_COLS * 8.43, fmts.get(text_wrap=True, valign="top",
                                                                 font_size=11))
    row += max(len(said) - 1, 0)
    info = _curve_info(result)
    row = _write_info(ws, fmts, row, info, text_cols=max(len(guess) - 1, 1),
                      text_chars=max(sum(guess[1:]), 30.0))
    table_top = row + 1
    _, last_col, widths = _write_table(ws, fmts, table, table_top, 0,
                                       general_columns=[str(table.columns[int(by_class)])])
    # Column A holds both the header labels and the feature values; fit the longer.
    widths[0] = max(min(max(len(item[0]) for item in info) + 2.0, _LABEL_CHARS), widths[0])
    ws.set_column(0, 0, widths[0])

    error_cols = None
    chart_table, chart_left, left_out, free_col = table, 0, 0, last_col + 1
    if is_categorical(result) and not by_class:
        shown, left_out = drawn_categories(result)
        if left_out:
            # Thousands of bars are a smear: the chart plots its own copy of the largest
            # categories, in hidden columns, and its axis says how many the table adds.
            chart_table, chart_left = curve_table(shown), free_col
            free_col = _write_hidden_columns(ws, fmts, chart_table.iloc[:, :2], table_top,
                                             chart_left)
        if BAND_LOW in table.columns and BAND_HIGH in table.columns:
            error_cols = _write_error_lengths(ws, fmts, chart_table, table_top, free_col)
            free_col = error_cols[1] + 1
    grid = blank = None
    if not is_categorical(result) and not by_class:
        grid = _write_band_grid(ws, fmts, result, table_top, free_col)
        if grid is not None:
            free_col = grid.col + len(_GRID_HEADERS)
        else:
            blank = _write_blank_point(ws, fmts, result, table_top, free_col)
            if blank is not None:
                free_col += 4
    widths.update({c: 0.0 for c in range(last_col + 1, free_col)})
    chart_col = free_col + 1
    chart = _curve_chart(wb.book, result, chart_table, sheet, table_top, chart_left,
                         error_cols, left_out, grid, blank)
    wb.insert_chart(ws, table_top, chart_col, chart, (_CHART_W, _CHART_H), curve_title(result))
    return _Slot(ws, sheet, table_top + _rows_for(_CHART_H), chart_col, widths,
                 curve_title(result))


# Default-width columns (8.43 characters, 64 pixels) a native chart covers.
_CHART_COLS = math.ceil(_CHART_W / 64)


def _guess_widths(table: pd.DataFrame) -> list[float]:
    """The widths :func:`_write_table` will give ``table``'s columns, known before writing."""
    return [_column_width(str(c), table.iloc[:, j],
                          pd.api.types.is_datetime64_any_dtype(table.iloc[:, j]))
            for j, c in enumerate(table.columns)]


def _write_hidden_columns(ws: Worksheet, fmts: _Formats, block: pd.DataFrame, top: int,
                          col: int) -> int:
    """Write ``block`` (headers and values) from (top, col) in hidden columns for a chart;
    the first column after it is returned."""
    for j, header in enumerate(block.columns):
        ws.write_string(top, col + j, str(header), fmts.label)
        for i, value in enumerate(block.iloc[:, j].tolist()):
            _write_value(ws, top + 1 + i, col + j, value)
    ws.set_column(col, col + len(block.columns) - 1, None, None, {"hidden": True})
    return col + len(block.columns)


def _write_error_lengths(ws: Worksheet, fmts: _Formats, table: pd.DataFrame, top: int,
                         col: int) -> tuple[int, int]:
    """Write error-bar lengths (pd - low, high - pd) in two hidden columns for the chart.

    Excel's custom error bars take lengths, not the band's ends; hidden so the sheet shows
    the band once, as the analyst reads it (the chart is told to use hidden cells).
    """
    centre = pd.to_numeric(table[pd_header(table)], errors="coerce").to_numpy(dtype=float)
    low = pd.to_numeric(table[BAND_LOW], errors="coerce").to_numpy(dtype=float)
    high = pd.to_numeric(table[BAND_HIGH], errors="coerce").to_numpy(dtype=float)
    # A band that misses the estimate (possible with few trials) gets no bar on that side.
    lengths = {"error bar minus": np.clip(centre - low, 0, None),
               "error bar plus": np.clip(high - centre, 0, None)}
    for j, (header, values) in enumerate(lengths.items()):
        ws.write_string(top, col + j, header, fmts.label)
        for i, value in enumerate(values):
            _write_value(ws, top + 1 + i, col + j, 0.0 if _is_missing(value) else value)
    ws.set_column(col, col + 1, None, None, {"hidden": True})
    return col, col + 1


# Printable area of landscape A4 (0.5 in side and 0.6 in top/bottom margins) in pixels at
# 96 dpi, less 15 % because LibreOffice without Calibri's metrics draws columns wider than
# Excel does, and less 10 % of the height for a header/footer LibreOffice may add.
# Default-width columns under a picture (it spans about 9.6 of 64 px: 614 px).
_PICTURE_COLS = 8
_PRINT_WIDTH_PX = (11.69 - 2 * 0.5) * 96 * 0.85
_PRINT_HEIGHT_PX = (8.27 - 2 * 0.6) * 96 * 0.9
# Below this scale a page is hard to read; the picture then gets a page of its own.
_MIN_SCALE = 40


def _print_layout(ws: Worksheet, widths: Mapping[int, float], chart_col: int,
                  picture_row: int, picture_px: float) -> None:
    """Choose a print scale so the first page shows the header, the chart and the picture.

    The table, the native chart and the picture print one page wide; when fitting the
    picture under the chart on the first page would shrink it below a readable scale, a
    page break before the picture moves it to the next page instead of cutting it in two.
    A print scale is used rather than "fit to one page wide" because Excel ignores manual
    page breaks under "fit to".  A long table simply continues on the next pages.
    """
    width_px = sum(widths.get(c, 8.43) * 7 + 5 if widths.get(c, 8.43) > 0 else 0
                   for c in range(chart_col)) + _CHART_W + 20
    height_px = picture_row * _ROW_PX + picture_px + 10
    by_width = 100 * _PRINT_WIDTH_PX / width_px
    by_height = 100 * _PRINT_HEIGHT_PX / height_px
    if min(by_width, by_height) >= _MIN_SCALE:
        ws.set_print_scale(int(min(by_width, by_height, 100)))
    else:
        ws.set_print_scale(int(np.clip(by_width, 25, 100)))
        ws.set_h_pagebreaks([picture_row])


def _page_setup(ws: Worksheet) -> None:
    ws.set_default_row(_ROW_PT)
    ws.set_landscape()
    ws.set_paper(9)  # A4
    ws.set_margins(left=0.5, right=0.5, top=0.6, bottom=0.6)
    ws.hide_gridlines(1)  # gridlines on screen, not on paper


def _impact_chart_height(n_features: int) -> int:
    return max(_CHART_H, 90 + 26 * n_features)


def _impact_bars(table: pd.DataFrame) -> int:
    """How many of the impact table's first rows its native chart plots: every one, or the
    ``MAX_BARS`` largest when the table is longer and sorted largest first (as the engine
    sorts it; a table sorted otherwise is plotted whole rather than mislabelled)."""
    impact = pd.to_numeric(table["impact"], errors="coerce").fillna(-np.inf).to_numpy()
    if len(table) <= MAX_BARS or np.any(np.diff(impact) > 0):
        return len(table)
    return MAX_BARS


def _impact_chart(book: Workbook, ranking: pd.DataFrame, table: pd.DataFrame, sheet: str,
                  top: int) -> Any:
    n = _impact_bars(table)
    first, last = top + 1, top + max(n, 1)
    chart = book.add_chart({"type": "bar"})
    labels = [{"value": ("<1%" if 0 < s < 0.005 else f"{s:.0%}")} if math.isfinite(s)
              else {"delete": True} for s in table["share"].to_numpy(dtype=float)[:n]]
    points = [{"fill": {"color": CATEGORICAL_COLOR if k == "categorical" else CURVE_COLOR}}
              for k in table["kind"][:n]]
    chart.add_series({
        "name": "impact",
        "categories": _ref(sheet, first, 0, last),
        "values": _ref(sheet, first, list(table.columns).index("impact"), last),
        "points": points,
        "data_labels": {"value": True, "custom": labels, "position": "outside_end"},
        "gap": 50,
    })
    # Bar charts draw the first category at the bottom; reversing puts the largest on top.
    # "crossing: max" keeps the value axis at the bottom once the categories are reversed.
    chart.set_y_axis({"reverse": True, "crossing": "max"})
    axis_name = f"impact on {ranking.attrs.get('target', 'target')}"
    if n < len(table):
        axis_name += f" (the {n} largest; {len(table) - n:,} more in the table)"
    chart.set_x_axis({"name": _chart_text(axis_name),
                      "major_gridlines": {"visible": True, "line": {"color": "#E5E5E5"}}})
    chart.set_legend({"none": True})
    chart.set_title({"name": _chart_text(impact_title(ranking)),
                     "name_font": {"size": 11, "bold": True}})
    chart.set_size({"width": _CHART_W, "height": _impact_chart_height(n)})
    return chart


def _write_impact_sheet(wb: _Book, ws: Worksheet, sheet: str, ranking: pd.DataFrame, *,
                        title: str, links: Sequence[str | None] | None = None,
                        said: Sequence[tuple[str, Sequence[str]]] = (),
                        notes: Sequence[str] = ()) -> _Slot:
    """Title, the conclusion in words (with each sentence's caveats), the ranking table and
    its native chart beside it; under them the other notes and the settings in plain words.

    The ranking comes before the notes so that it is on the first printed page however
    many notes a wide table has (the Notes sheet holds them all).
    """
    fmts = wb.formats
    _page_setup(ws)
    table = impact_table(ranking)
    ws.write_string(0, 0, title, fmts.title)
    guess = _guess_widths(table)
    n_cols = len(guess) + _CHART_COLS + 1
    chars = sum(guess) + (_CHART_COLS + 1) * 8.43
    # Merged cells across the table and the chart hold more text than their widths in "0"s
    # suggest (the chart's columns are counted at their default width).
    row = _paragraphs(ws, fmts, 2, "What the data say", said, n_cols, chars * 1.15)
    row = max(row, 2)
    if links is not None:
        ws.write_string(row, 0, "Click a feature to open its curve.", fmts.label)
        row += 1
    table_top = row + 1
    last_row, last_col, widths = _write_table(ws, fmts, table, table_top, 0, links=links,
                                              percent_columns=["share"])
    row = last_row + 2
    skipped = ranking.attrs.get("skipped") or {}
    if skipped:
        # Features the engine could not estimate are named with the reason, not dropped
        # silently: an analyst looking for "zip code" needs to know why it is missing.
        ws.write_string(row, 0, "Not estimated", fmts.get(bold=True))
        for i, (feature, reason) in enumerate(skipped.items()):
            ws.write_string(row + 1 + i, 0, str(feature), fmts.get(valign="top"))
            _write_wrapped(ws, fmts, row + 1 + i, 1, str(reason), max(last_col, 1),
                           max(sum(guess[1:]), 30.0), fmts.get(text_wrap=True, valign="top"))
        row += len(skipped) + 2
    chart = _impact_chart(wb.book, ranking, table, sheet, table_top)
    chart_col = last_col + 2
    chart_h = _impact_chart_height(_impact_bars(table))
    wb.insert_chart(ws, table_top, chart_col, chart, (_CHART_W, chart_h),
                    impact_title(ranking))
    # The notes and settings run across the chart's columns too: below whichever of the
    # table and the chart ends lower.
    row = max(row, table_top + _rows_for(chart_h) + 1)
    row = _paragraphs(ws, fmts, row, "Notes", [(n, ()) for n in notes], n_cols, chars * 1.15)
    items: list[tuple[str, Any]] = [("target", ranking.attrs.get("target", ""))]
    if "n_rows" in ranking.attrs:
        items.append(("rows in data", ranking.attrs["n_rows"]))
    items += _param_items(ranking.attrs.get("params"))
    ws.write_string(row, 0, "Settings", fmts.get(bold=True, font_size=12))
    row = _write_info(ws, fmts, row + 1, items)
    widths[0] = max(min(max(len(label) for label, _ in items) + 2.0, _LABEL_CHARS),
                    widths[0], 12.0)
    ws.set_column(0, 0, widths[0])
    # A picture of the ranking (the impact workbook's) goes right under the native chart.
    return _Slot(ws, sheet, table_top + _rows_for(chart_h), chart_col, widths,
                 impact_title(ranking))


@dataclass(frozen=True)
class _Slot:
    """Where a sheet's picture goes, under its native chart, and what it shows."""

    ws: Worksheet
    sheet: str
    row: int
    col: int
    widths: Mapping[int, float]  # the sheet's column widths, for the print scale
    description: str


def _place(slot: _Slot, picture: Picture) -> None:
    # Excel shows the picture at 96 dpi: its height in inches times 96 pixels.
    _print_layout(slot.ws, slot.widths, slot.col, slot.row, picture.height_in * 96)
    slot.ws.insert_image(slot.row, slot.col, f"{slot.sheet}.png",
                         {"image_data": io.BytesIO(picture.png), "object_position": 3,
                          "description": slot.description})


# ----------------------------------------------------------------------------- workbooks


class _Book:
    """An xlsxwriter workbook written in memory, then fixed up and saved in one go.

    Saving in one go means a failure never leaves half a workbook behind, and a file that
    cannot be written (e.g. open in Excel) is reported in one sentence.
    """

    def __init__(self, path: PathLike | io.BytesIO) -> None:
        self.path = path
        self.buffer = io.BytesIO()
        self.book = xlsxwriter.Workbook(self.buffer, {"in_memory": True})
        # A fixed creation time (xlsxwriter would write the clock's) so the same data and
        # command give the same bytes; SOURCE_DATE_EPOCH, the reproducible-builds
        # convention, overrides it.
        self.book.set_properties({"comments": "Written by stratpd-xl", "created": _created()})
        self.formats = _Formats(self.book)
        # Native chart size in pixels per worksheet number (1-based, as in sheetN.xml).
        self.chart_px: dict[int, tuple[int, int]] = {}

    def add_sheet(self, name: str) -> Worksheet:
        return self.book.add_worksheet(name)

    def insert_chart(self, ws: Worksheet, row: int, col: int, chart: Any,
                     size: tuple[int, int], description: str) -> None:
        ws.insert_chart(row, col, chart, {"object_position": 3, "description": description})
        self.chart_px[ws.index + 1] = size

    def close(self) -> None:
        self.book.close()
        data = _finish_package(self.buffer.getvalue(), self.chart_px)
        if isinstance(self.path, io.BytesIO):
            self.path.write(data)
            return
        try:
            with open(os.fspath(self.path), "wb") as fh:
                fh.write(data)
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
                # A full disk (or quota) is not a file held open: say what to free.
                raise StratPDInputError(
                    f"cannot write {os.fspath(self.path)}: the disk is full "
                    f"({exc.strerror}); free some space or write to another disk"
                ) from exc
            raise StratPDInputError(
                f"cannot write {os.fspath(self.path)}: close it if it is open in Excel or "
                f"another program, or choose another file name ({exc.strerror})"
            ) from exc


def _created() -> dt.datetime:
    """The workbook's creation time: ``SOURCE_DATE_EPOCH`` if set, else a fixed date."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch.isdigit():
        return dt.datetime.fromtimestamp(int(epoch), dt.UTC).replace(tzinfo=None)
    return _FIXED_CREATED


_FIXED_CREATED = dt.datetime(2020, 1, 1)
_EMU_PER_PX = 9525
# Characters XML 1.0 cannot hold.  xlsxwriter escapes them in cell text but not in chart
# titles, chart caches, link texts or picture descriptions, where a stray control character
# from a pasted header would make the whole file unreadable; there they become U+FFFD.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_ANCHOR = re.compile(r'<xdr:twoCellAnchor(?: editAs="\w+")?>(.*?)</xdr:twoCellAnchor>', re.S)
_TO = re.compile(r"<xdr:to>.*?</xdr:to>", re.S)
_EXT = re.compile(r'<a:ext cx="(\d+)" cy="(\d+)"/>')


def _finish_package(xlsx: bytes, chart_px: Mapping[int, tuple[int, int]]) -> bytes:
    """Anchor pictures and charts by their size in EMU instead of by a bottom-right cell.

    Also replaces characters XML cannot hold in every XML part (see ``_NOT_XML``).

    xlsxwriter anchors drawings to a top-left and a bottom-right cell, computed from Calibri's
    column widths.  LibreOffice without a Calibri-compatible font converts column widths
    differently and stretches every picture sideways.  A one-cell anchor (top-left cell plus
    size) is valid OOXML that Excel and LibreOffice both place at the intended size.
    """
    src = zipfile.ZipFile(io.BytesIO(xlsx))
    drawing_sheet: dict[str, int] = {}
    for name in src.namelist():
        m = re.fullmatch(r"xl/worksheets/_rels/sheet(\d+)\.xml\.rels", name)
        if m:
            for target in re.findall(r'Target="\.\./drawings/(drawing\d+\.xml)"',
                                     src.read(name).decode("utf-8")):
                drawing_sheet[f"xl/drawings/{target}"] = int(m.group(1))

    def fix(sheet: int | None) -> Callable[[re.Match[str]], str]:
        def one(match: re.Match[str]) -> str:
            body = match.group(1)
            ext = _EXT.search(body)
            cx, cy = (int(ext.group(1)), int(ext.group(2))) if ext else (0, 0)
            if (cx == 0 or cy == 0) and sheet in chart_px:
                w, h = chart_px[sheet]
                cx, cy = w * _EMU_PER_PX, h * _EMU_PER_PX
            if cx == 0 or cy == 0:
                return match.group(0)  # unknown size: leave it as xlsxwriter wrote it
            body = _TO.sub(f'<xdr:ext cx="{cx}" cy="{cy}"/>', body, count=1)
            return f"<xdr:oneCellAnchor>{body}</xdr:oneCellAnchor>"

        return one

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename in drawing_sheet or item.filename.startswith("xl/drawings/drawing"):
                text = _NOT_XML.sub("\ufffd", data.decode("utf-8"))
                data = _ANCHOR.sub(fix(drawing_sheet.get(item.filename)), text).encode("utf-8")
            elif item.filename.endswith((".xml", ".rels")):
                data = _NOT_XML.sub("\ufffd", data.decode("utf-8")).encode("utf-8")
            dst.writestr(item, data)
    return out.getvalue()


def write_curve_workbook(result: pd.DataFrame, path: PathLike | io.BytesIO) -> None:
    """Write one curve to an .xlsx workbook: header block, table, native chart and picture.

    Parameters
    ----------
    result : DataFrame
        A result of ``stratpd`` or ``catstratpd`` with its ``attrs``.
    path : str, path-like or BytesIO
        Where to write; an existing file is replaced (callers decide about overwriting).

    Raises
    ------
    StratPDInputError
        When the file cannot be written (e.g. it is open in Excel).
    """
    wb = _Book(path)
    sheet = unique_sheet_names([str(result.attrs.get("feature") or "curve")])[0]
    ws = wb.add_sheet(sheet)
    slot = _write_curve_sheet(wb, ws, sheet, result)
    _place(slot, draw_picture(Chart("curve", result)))
    wb.close()


def write_impact_workbook(ranking: pd.DataFrame, path: PathLike | io.BytesIO) -> None:
    """Write the impact ranking to an .xlsx workbook: table, native bar chart and picture.

    Parameters
    ----------
    ranking : DataFrame
        A result of ``impact`` with its ``attrs``.
    path : str, path-like or BytesIO
        Where to write; an existing file is replaced.

    Raises
    ------
    StratPDInputError
        When the file cannot be written.
    """
    wb = _Book(path)
    ws = wb.add_sheet("Impact")
    slot = _write_impact_sheet(wb, ws, "Impact", ranking, title=impact_title(ranking))
    _place(slot, draw_picture(Chart("impact", ranking)))
    wb.close()


def _pairs_view(kind: str, result: pd.DataFrame) -> tuple[str, pd.DataFrame, str]:
    """Title, table for people and picture kind of a by-group curve, ranking or surface."""
    from .pairs import (
        by_group_table,
        by_group_title,
        interactions_table,
        interactions_title,
        surface_table,
    )

    if kind == "interactions":
        return interactions_title(result), interactions_table(result), "interactions"
    if kind == "surface":
        a = result.attrs
        title = (f"two-way partial dependence of {a.get('target', 'target')} on "
                 f"{a.get('feature_1')} and {a.get('feature_2')} (experimental)")
        return title, surface_table(result), "surface"
    return by_group_title(result), by_group_table(result), "curve"


def _write_pairs_sheet(wb: _Book, ws: Worksheet, sheet: str, kind: str,
                       result: pd.DataFrame, top: int = 0) -> _Slot:
    """Title, notes, parameters and table of a two-column result; the picture's place."""
    fmts = wb.formats
    _page_setup(ws)
    title, table, _ = _pairs_view(kind, result)
    ws.write_string(top, 0, title, fmts.title)
    a = result.attrs
    items: list[tuple[str, Any]] = [("target", a.get("target", ""))]
    if "n_rows" in a:
        items.append(("rows in data", a["n_rows"]))
    items += [("finding", str(f)) for f in a.get("findings") or []]
    items += [("note", str(w)) for w in a.get("warnings") or []]
    items += _param_items(a.get("params"))
    # Findings and notes wrap across the table's columns (B on), not in B alone.
    span = max(1, len(table.columns) - 1)
    row = _write_info(ws, fmts, top + 2, items, text_cols=span, text_chars=11.0 * span)
    _, last_col, widths = _write_table(ws, fmts, table, row + 1, 0,
                                       general_columns=[str(table.columns[0])])
    widths[0] = max(max(len(label) for label, _ in items) + 2.0, widths[0], 12.0)
    ws.set_column(0, 0, widths[0])
    return _Slot(ws, sheet, top + 2, last_col + 2, widths, title)


def write_pairs_workbook(kind: str, result: pd.DataFrame,
                         path: PathLike | io.BytesIO) -> None:
    """Write a by-group curve (``kind="curve"``), the interaction ranking
    (``"interactions"``) or a two-way surface (``"surface"``) to an .xlsx workbook: header
    block, table and picture.

    Raises
    ------
    StratPDInputError
        When the file cannot be written.
    """
    name = {"curve": str(result.attrs.get("feature") or "curve"),
            "interactions": "Interactions", "surface": "Surface"}[kind]
    wb = _Book(path)
    sheet = unique_sheet_names([name])[0]
    ws = wb.add_sheet(sheet)
    slot = _write_pairs_sheet(wb, ws, sheet, kind, result)
    _place(slot, draw_picture(Chart(_pairs_view(kind, result)[2], result)))  # type: ignore[arg-type]
    wb.close()


INTERACTIONS = "Interactions"


def write_report(analysis: Any, path: PathLike | io.BytesIO, *,
                 progress: Progress | None = None,
                 drawer: PictureDrawer | None = None,
                 interactions: Any = None,
                 model_check: pd.DataFrame | None = None) -> None:
    """Write a full report: a "Summary" sheet with the ranking and one sheet per feature.

    The summary has the conclusion in words (one sentence per top feature, its caveats
    under it), every other note, the settings in plain words and the impact ranking (table
    and native bar chart); each feature name
    in it links to the feature's sheet, which holds its curve table, native chart and picture
    and a link back.  Sheets follow the ranking's order; curves of features missing from the
    ranking come last.

    Parameters
    ----------
    analysis : Analysis
        A result of ``analyse``: ``.impact`` (DataFrame) and ``.curves`` (dict of name to
        curve DataFrame).
    path : str, path-like or BytesIO
        Where to write; an existing file is replaced.
    progress : callable, optional
        ``progress(done, total, name)`` is called before each sheet is written (``done``
        sheets are finished, ``name`` is the sheet's subject: "Summary" or a feature) and
        with ``done == total`` and ``name == "saving"`` (:data:`SAVING`) once every picture is
        drawn and the file is being compressed and saved, and once more with ``name == ""``
        when it is saved.  The sheets are written first; their pictures are drawn after the
        last one.
    drawer : PictureDrawer, optional
        Draws the pictures; one with a helper process draws two at a time, while the
        sheets are written.  Default: every picture drawn here, one after another.
    interactions : InteractionsResult, optional
        The interaction ranking and its top pairs' by-group curves
        (:func:`stratpd_xl.workflow.interactions`): an "Interactions" sheet after the
        summary, with the ranking and, under it, each pair's by-group chart.
    model_check : DataFrame, optional
        :func:`stratpd_xl.workflow.model_check`'s table: a "Model check" sheet after the
        summary with the model's score and its agreement with each curve, in words.

    Raises
    ------
    StratPDInputError
        When the file cannot be written.
    """
    ranking: pd.DataFrame = analysis.impact
    curves: Mapping[str, pd.DataFrame] = analysis.curves
    ranked = [str(f) for f in ranking["feature"]] if "feature" in ranking.columns else []
    order = [f for f in ranked if f in curves] + [f for f in curves if f not in set(ranked)]
    taken = [SUMMARY] + ([INTERACTIONS] if interactions is not None else [])
    taken += [MODEL_CHECK] if model_check is not None else []
    all_notes = list(getattr(analysis, "notes", None) or [])
    taken += [NOTES] if all_notes else []
    names = dict(zip(order, unique_sheet_names(order, taken=taken), strict=True))
    total = 1 + len(order)

    wb = _Book(path)
    summary = wb.add_sheet(SUMMARY)
    checked = wb.add_sheet(MODEL_CHECK) if model_check is not None else None
    pairs_ws = wb.add_sheet(INTERACTIONS) if interactions is not None else None
    notes_ws = wb.add_sheet(NOTES) if all_notes else None
    sheets = {feature: wb.add_sheet(names[feature]) for feature in order}
    slots: list[_Slot] = []

    def write_sheets() -> None:
        if progress is not None:
            progress(0, total, SUMMARY)
        links = [f"internal:{_quoted(names[f])}!A1" if f in names else None for f in ranked]
        target = ranking.attrs.get("target", "target")
        # Every note the command line printed, once: a top feature's own warnings stand
        # under its sentence, the rest (columns left out, rows skipped...) under "Notes".
        said, notes = said_and_notes(list(getattr(analysis, "findings", None) or []),
                                     all_notes, str(target))
        # The summary keeps the few that matter most; the Notes sheet has every one.
        slots.append(_write_impact_sheet(
            wb, summary, SUMMARY, ranking,
            title=f"What drives {target}: StratPD report", links=links, said=said,
            notes=shown(notes, f'every one is on the "{NOTES}" sheet'),
        ))
        if notes_ws is not None:
            _write_notes_sheet(wb, notes_ws, all_notes, str(target))
        if pairs_ws is not None:
            slots.append(_write_pairs_sheet(wb, pairs_ws, INTERACTIONS, "interactions",
                                            interactions.ranking))
        if checked is not None:
            from .compare import write_model_check_sheet

            write_model_check_sheet(checked, model_check, wb.formats.get)
        for done, feature in enumerate(order, start=1):
            if progress is not None:
                progress(done, total, feature)
            ws = sheets[feature]
            ws.write_url(0, 0, f"internal:{_quoted(SUMMARY)}!A1", wb.formats.link,
                         string="<< back to Summary")
            slots.append(_write_curve_sheet(wb, ws, names[feature], curves[feature], top=1))

    # The summary's ranking is its native chart alone (a picture of the same bars under it
    # said nothing new); each feature's sheet keeps its picture, which has the data strip.
    pair_curves = list(interactions.curves.values()) if interactions is not None else []
    charts = [Chart("interactions", interactions.ranking)] if interactions is not None else []
    charts += [Chart("curve", curves[f]) for f in order]
    charts += [Chart("curve", c) for c in pair_curves]
    pictures = (drawer or PictureDrawer()).draw(charts, meanwhile=write_sheets)
    # The summary has no picture to keep: one page when its ranking is short enough to stay
    # readable there (LibreOffice would otherwise cut the chart across two), else one page
    # wide and as long as it is.
    slots[0].ws.fit_to_pages(1, 1 if len(ranked) <= 20 else 0)
    for slot, picture in zip(slots[1:], pictures[: len(slots) - 1], strict=True):
        _place(slot, picture)
    if pairs_ws is not None:
        # The pairs' by-group charts one under the other, below the ranking's picture.
        slot = slots[1]
        row = slot.row + _rows_for(int(pictures[0].height_in * 96)) + 1
        for curve, picture in zip(pair_curves, pictures[len(slots) - 1:], strict=True):
            pairs_ws.insert_image(row, slot.col, "pair.png", {
                "image_data": io.BytesIO(picture.png), "object_position": 3,
                "description": str(curve.attrs.get("method", "by group"))})
            row += _rows_for(int(picture.height_in * 96)) + 1
            # What the chart shows, in words, right under it, as wide as the picture.
            for text in curve.attrs.get("findings") or []:
                _write_wrapped(pairs_ws, wb.formats, row, slot.col, str(text), _PICTURE_COLS,
                               _PICTURE_COLS * 8.43 * 0.9,
                               wb.formats.get(text_wrap=True, valign="top", italic=True))
                row += 1
            row += 1
    if progress is not None:
        progress(total, total, SAVING)
    wb.close()
    if progress is not None:
        progress(total, total, "")


def _write_notes_sheet(wb: _Book, ws: Worksheet, notes: Sequence[str], target: str) -> None:
    """Every note of the analysis once, ranked, as a table with a filter on each column (sort
    by kind, find a column's notes), fitting one printed page wide."""
    fmts = wb.formats
    ws.write_url(0, 0, f"internal:{_quoted(SUMMARY)}!A1", fmts.link, string="<< back to Summary")
    ws.write_string(1, 0, f"Notes on what drives {target}: {len(notes):,}, the ones that "
                          "matter most first", fmts.title)
    ws.write_string(2, 0, "rank: 1 matters most (docs/method.md, \"Notes\"); moves: how much "
                          "the note can move a number, 0 to 1; features: whose numbers it "
                          "touches", fmts.label)
    table = notes_table(notes)
    top = 4
    widths = {"rank": 6.0, "kind": 11.0, "columns": 22.0, "features": 26.0, "moves": 8.0,
              "note": 90.0}
    wrap = fmts.get(text_wrap=True, valign="top")
    for j, name in enumerate(table.columns):
        ws.set_column(j, j, widths[name])
        ws.write_string(top, j, name, fmts.get(bold=True, bottom=1))
    for i, row in enumerate(table.itertuples(index=False), start=top + 1):
        for j, value in enumerate(row):
            if isinstance(value, str):
                ws.write_string(i, j, value[:32767], wrap)
            else:
                ws.write_number(i, j, float(value), fmts.get(valign="top", num_format=(
                    "0.00" if table.columns[j] == "moves" else "0")))
        longest = max(_lines(str(row.note), widths["note"]),
                      _lines(str(row.features), widths["features"]),
                      _lines(str(row.columns), widths["columns"]))
        if longest > 1:
            ws.set_row(i, _ROW_PT * longest)
    ws.autofilter(top, 0, top + len(table), len(table.columns) - 1)
    ws.freeze_panes(top + 1, 0)
    _page_setup(ws)
    ws.set_landscape()
    ws.repeat_rows(top)
    ws.fit_to_pages(1, 0)


def _quoted(sheet: str) -> str:
    return "'" + sheet.replace("'", "''") + "'"
