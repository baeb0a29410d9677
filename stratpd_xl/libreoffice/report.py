"""The "Analyse selection" sheet for Calc: :func:`stratpd_xl.spreadsheet.report_sheet` as JSON.

The worker runs this; the extension writes the blocks with ``setDataArray`` (which stores text
as text, so nothing written can become a formula) and draws a native Calc chart per chart item
from the cells of its table: an XY line for a numeric curve, bars for a categorical one and
for the ranking.  Rows and columns here are 0-based, as Calc's API counts them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .. import spreadsheet
from ..presentation.labels import (
    curve_title,
    impact_title,
    is_categorical,
    shown_band,
    value_label,
)
from ..presentation.tables import band_headers

__all__ = ["cells_for_calc", "plan"]


def _cell(value: Any) -> Any:
    """A result value as Calc can show it: numbers as floats, blanks as empty text."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int):
        return float(value)
    if isinstance(value, float | str):
        return value
    return str(value)


def cells_for_calc(block: list[list[Any]]) -> list[list[Any]]:
    """A block of result cells as Calc takes them (floats, text, ``""`` for blank)."""
    return [[_cell(v) for v in row] for row in block]


def _chart(item: spreadsheet.Chart, report: spreadsheet.ReportSheet) -> dict[str, Any]:
    header = item.table.cells[0]
    first = item.table.col - 1
    if item.feature is None:
        ranking = report.result.impact
        kind, title = "ranking", impact_title(ranking)
        charted = ["feature", "impact"]
        x_title, y_title = "feature", f"impact on {report.result.target}"
    else:
        curve = report.result.curves[item.feature]
        kind = "categorical" if is_categorical(curve) else "numeric"
        title, x_title, y_title = curve_title(curve), item.feature, value_label(curve)
        # The band the pictures draw (the whole curve's when not too wide), by its header,
        # which says which band it is.
        low, high, _ = shown_band(curve)
        names = band_headers(curve)
        charted = [header[0], header[1]] + [h for h in (names[low], names[high]) if h in header]
    return {
        "name": item.name, "kind": kind, "title": title, "x_title": x_title,
        "y_title": y_title, "row": item.row - 1, "col": item.col - 1,
        "table": [item.table.row - 1, first, item.table.height, item.table.width],
        "columns": [first + header.index(h) for h in charted],
    }


def plan(
    values: Sequence[Sequence[Any]], target: Any = None, source: str = "",
    taken: Sequence[str] = (), exclude: Any = None, positive: Any = None, trials: Any = None,
    keep: Any = None,
) -> dict[str, Any]:
    """Analyse the selection and say what to write where on the new sheet.

    Parameters are those of :func:`stratpd_xl.spreadsheet.report_sheet`; ``exclude``,
    ``keep``, ``positive`` and ``trials`` (what the document's ``StratPD_exclude``,
    ``StratPD_keep``, ``StratPD_positive`` and ``StratPD_trials`` hold; blank for the
    defaults) are its settings of those names.

    Returns
    -------
    dict
        ``sheet`` (the new sheet's name), ``blocks`` (``row``, ``col``, ``cells``),
        ``formats`` (``row``, ``col``, ``last_row``, ``last_col``, ``format``), ``charts``
        (``name``, ``kind``, titles, the anchor ``row``/``col``, the ``table`` as
        ``[row, col, height, width]`` and the charted ``columns``), ``widths`` (``[col,
        width in 1/100 mm]``), ``wrap`` (header rows to wrap, ``[row, col, last_col]``) and
        ``breaks`` (rows that start a printed page, so that no chart is cut in two).
    """
    report = spreadsheet.report_sheet(values, target=target, taken=taken, source=source,
                                      exclude=exclude, keep=keep, positive=positive,
                                      n_trials=trials)
    blocks, formats, charts = [], [], []
    for item in report.items:
        if isinstance(item, spreadsheet.Cells):
            blocks.append({"row": item.row - 1, "col": item.col - 1,
                           "cells": cells_for_calc(item.cells)})
        elif isinstance(item, spreadsheet.NumberFormat):
            formats.append({"row": item.row - 1, "col": item.col - 1,
                            "last_row": item.last_row - 1, "last_col": item.last_col - 1,
                            "format": item.format})
        else:
            charts.append(_chart(item, report))
    widths = [[col - 1, _hundredths_mm(chars)] for col, chars in sorted(report.widths.items())]
    wrap = [[row - 1, first - 1, last - 1] for row, first, last in report.headers]
    return {"sheet": report.name, "blocks": blocks, "formats": formats, "charts": charts,
            "widths": widths, "wrap": wrap, "breaks": page_breaks(charts)}


def _hundredths_mm(chars: float) -> int:
    """A width in characters (Excel's unit) in 1/100 mm, as Excel converts it: 7 pixels a
    character and 5 of padding, at 96 pixels an inch."""
    return round((chars * 7 + 5) / 96 * 2540)


#: Rows of Calc's default height (0.45 cm) on a landscape A4 page with the report's margins, at
#: full size; fitting the page's width only shrinks the rows, so a page holds at least these.
ROWS_PER_PAGE = 36
#: Rows a chart covers (9 cm of the extension's 16 x 9 cm charts, and the title row above).
CHART_ROWS = 22


def page_breaks(charts: list[dict[str, Any]]) -> list[int]:
    """Rows (0-based) before which a printed page starts, so that each chart is on one page:
    a chart that would run past the page's end starts a new page with its title row."""
    breaks: list[int] = []
    page_top: int | None = 0
    for chart in sorted(charts, key=lambda c: c["row"]):
        top = chart["row"]
        if page_top is None or top + CHART_ROWS - page_top > ROWS_PER_PAGE:
            if top > 0:
                breaks.append(top)
            page_top = top
        table_row, _, height, _ = chart["table"]
        if table_row + height - page_top > ROWS_PER_PAGE:
            page_top = None  # a table longer than the page: Calc decides where it goes on
    return breaks
