"""The add-in's "Analyse selection" button: ``stratpd_xl.main()`` -> :func:`main`.

What the button does
--------------------
1. Reads the selected cells (header row + data).  A single selected cell stands for the table
   around it (Excel's current region, as Ctrl+A selects it).
2. Takes the target from the workbook name ``StratPD_target`` when the workbook defines it
   (Formulas > Define Name: ``StratPD_target`` referring to ``="price"`` or to a cell holding
   ``price``); otherwise the selection's last column is the target.  The workbook name
   ``StratPD_exclude`` (referring to ``="casual, registered"`` or to cells holding column
   names) leaves those columns out of the analysis, as ``exclude`` does in the formulas;
   ``StratPD_keep`` analyses columns that look like row numbers or ids, as ``keep`` does.
3. Adds a new sheet ``StratPD <target>`` (``StratPD price (2)`` when that exists) and writes the
   impact ranking with its chart, then per feature (largest impact first) the curve table with
   its chart picture beside it.  Existing sheets are never written to.
4. Shows progress in Excel's status bar; a problem with the data ends in a message box with
   one sentence saying what to fix.

:func:`analyse_selection` holds the logic and takes plain objects (a book-like object with
``sheets``, ``names``; sheets with ``range(...).value``, ``pictures.add``), so tests drive it with a
recording fake; :func:`main` only binds it to xlwings.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from typing import Any

from .. import spreadsheet
from ..errors import StratPDInputError, error_text
from ..spreadsheet import Layout

__all__ = [
    "EXCLUDE_NAME", "KEEP_NAME", "TARGET_NAME", "Layout", "analyse_selection", "excluded_names",
    "kept_names", "main", "read_selection", "target_name", "warning_text",
]

#: Workbook name that sets the target column for the ribbon button.
TARGET_NAME = spreadsheet.MENU_NAMES["target"]
#: Workbook name that lists the columns the ribbon button leaves out (``exclude``).
EXCLUDE_NAME = spreadsheet.MENU_NAMES["exclude"]
#: Workbook name that lists columns to analyse even if they look like ids (``keep``).
KEEP_NAME = spreadsheet.MENU_NAMES["keep"]
POSITIVE_NAME = spreadsheet.MENU_NAMES["positive"]  # a yes/no target's value that counts
TRIALS_NAME = spreadsheet.MENU_NAMES["trials"]  # more than 1: the curves carry a band

Status = Callable[[str | None], None]


def read_selection(selection: Any) -> tuple[list[list[Any]], str]:
    """Cell values and address of the table the user selected.

    Parameters
    ----------
    selection : xlwings.Range
        ``book.selection``.  One selected cell means the table around it; whole columns or
        rows are cut down to the sheet's used range.

    Returns
    -------
    (values, address)
        Values as a 2-D list (errors as text such as ``"#N/A"``) and ``"Sheet1!$A$1:$J$5001"``.
    """
    if selection is None:
        raise StratPDInputError("nothing is selected; select the table including its header row")
    if selection.count == 1:
        try:
            selection = selection.current_region
        except NotImplementedError:  # xlwings Lite cannot read it synchronously: whole used range
            selection = selection.sheet.used_range
    else:
        selection = _trim_to_used_range(selection)
    values = selection.options(ndim=2, err_to_str=True).value
    return values, f"{selection.sheet.name}!{selection.address}"


def _trim_to_used_range(selection: Any) -> Any:
    """Cut whole-column (A:J) or whole-row selections down to the sheet's used range.

    Reading a million empty rows over COM takes minutes; the rows below the last used cell
    hold nothing anyway.
    """
    last = selection.sheet.used_range.last_cell
    rows = min(selection.rows.count, last.row - selection.row + 1)
    cols = min(selection.columns.count, last.column - selection.column + 1)
    if rows < 1 or cols < 1:  # the selection lies entirely outside the used range
        return selection
    if (rows, cols) == (selection.rows.count, selection.columns.count):
        return selection
    return selection.resize(rows, cols)


def _name_value(book: Any, wanted: str, what: str) -> tuple[bool, Any]:
    """``(found, value)`` of the workbook name ``wanted`` (a sheet-level one counts too): the
    text of a text constant (``="price"``), else the value of the cells it refers to.

    ``what`` ends the sentence for a name that refers to neither (a formula, a deleted range).
    """
    for name in book.names:
        if name.name.split("!")[-1].casefold() != wanted.casefold():
            continue
        refers_to = (name.refers_to or "").strip()
        if refers_to.startswith('="') and refers_to.endswith('"'):
            return True, refers_to[2:-1].replace('""', '"')
        try:  # a number constant: StratPD_trials as =10
            return True, float(refers_to.removeprefix("="))
        except ValueError:
            pass
        try:
            return True, name.refers_to_range.value
        except Exception as exc:
            raise StratPDInputError(
                f"the name {wanted} refers to {refers_to}; let it refer to {what}"
            ) from exc
    return False, None


def target_name(book: Any) -> str | None:
    """The target set by the workbook name ``StratPD_target``, or None when there is none.

    The name may refer to a text constant (``="price"``) or to a cell holding the column name;
    a sheet-level name (``Sheet1!StratPD_target``) counts as well.
    """
    found, value = _name_value(book, TARGET_NAME, "a cell holding the target column's name "
                               'or to a text such as ="price"')
    if not found:
        return None
    if isinstance(value, list):
        value = value[0] if value and not isinstance(value[0], list) else None
    if value is None or not str(value).strip():
        raise StratPDInputError(f"the cell named {TARGET_NAME} is empty; type the target there")
    return str(value)


def excluded_names(book: Any) -> Any:
    """The columns the workbook name ``StratPD_exclude`` lists, or None when there is none.

    The name may refer to a text constant (``="casual, registered"``) or to cells holding
    column names (a row or a column of them; blank cells are ignored).
    """
    return _name_value(book, EXCLUDE_NAME, "cells holding the names of the columns to leave "
                       'out, or to a text such as ="casual, registered"')[1]


def kept_names(book: Any) -> Any:
    """The columns the workbook name ``StratPD_keep`` lists (analysed even if they look like
    row numbers or ids), or None when there is none; written as for ``StratPD_exclude``."""
    return _name_value(book, KEEP_NAME, "cells holding the names of the columns to keep, or "
                       'to a text such as ="store_id"')[1]


def setting_name(book: Any, wanted: str) -> Any:
    """The value of the workbook name ``wanted`` (``StratPD_positive``, ``StratPD_trials``):
    a constant (``="yes"``, ``=10``) or the first cell it refers to; None when there is none
    or it is blank (the setting's default then)."""
    found, value = _name_value(book, wanted, 'a cell holding the value, or to a value such '
                               'as ="yes" or =10')
    if not found:
        return None
    while isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, str) and not value.strip():
        return None
    return value


def _literal(value: Any) -> Any:
    # Excel reads a written "=..." (or "+...", "-...", "@...") text as a formula; the apostrophe
    # keeps a category such as "-5 to 0" text, and Excel does not show it.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value


def _write(new_sheet: Any, row: int, col: int, cells: list[list[Any]]) -> tuple[int, int]:
    """Write a block of values at (row, col); return its (height, width)."""
    new_sheet.range((row, col)).value = [[_literal(v) for v in r] for r in cells]
    return len(cells), max((len(r) for r in cells), default=0)


def _picture(
    new_sheet: Any, png: bytes, name: str, row: int, col: int, warn: Callable[[str], None]
) -> None:
    """Place a chart; a chart that cannot be placed is reported, not fatal to the tables."""
    anchor = new_sheet.range((row, col))
    fd, path = tempfile.mkstemp(prefix="stratpd-", suffix=".png")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(png)
        try:
            position = {"left": anchor.left, "top": anchor.top}
        except NotImplementedError:  # xlwings Lite reads no positions synchronously
            position = {"anchor": anchor}
        new_sheet.pictures.add(path, name=name, **position)
    except Exception as exc:  # e.g. a protected sheet, or Excel refusing the file
        detail = " ".join(str(exc).split())[:120]
        warn(f'the chart "{name}" could not be placed ({type(exc).__name__}: {detail})')
    finally:
        try:
            os.unlink(path)
        except OSError:  # Excel may still hold it on Windows; the temp dir is cleaned up
            pass


def analyse_selection(
    book: Any,
    values: list[list[Any]],
    *,
    source: str = "",
    status: Status | None = None,
    warn: Callable[[str], None] | None = None,
    layout: Layout | None = None,
    **engine_kw: Any,
) -> str:
    """Analyse a table and write the results to a new sheet of ``book``.

    Parameters
    ----------
    book : xlwings.Book or alike
        Needs ``sheets`` (iterable of sheets with ``name``, and ``add(name, after=...)``) and
        ``names`` (see :func:`target_name`).  Only the sheet added here is written to.
    values : list of list
        Cell values of the selection, header row first.
    source : str
        The selection's address, shown on the new sheet.
    status : callable, optional
        Receives progress text, and ``None`` at the end (Excel: restore the status bar).
    warn : callable, optional
        Receives one sentence per chart that could not be placed (the tables are written).
    layout : Layout, optional
        Positions on the new sheet (default: :class:`Layout`'s).
    **engine_kw
        Passed to :func:`stratpd_xl.spreadsheet.report_sheet` (e.g. ``min_samples_leaf``);
        without ``exclude``, ``keep``, ``n_trials`` or ``positive`` here, the workbook names
        ``StratPD_exclude``, ``StratPD_keep``, ``StratPD_trials`` and ``StratPD_positive``
        give them (:func:`excluded_names`, :func:`kept_names`, :func:`setting_name`).

    Returns
    -------
    str
        Name of the new sheet.

    Raises
    ------
    StratPDInputError
        When the selection cannot be analysed; nothing has been written then.
    """
    say = status or (lambda text: None)

    def progress(done: int, total: int, feature: str) -> None:
        if done < total:
            say(f"StratPD: feature {done + 1} of {total} ({feature})...")

    try:
        sheets = list(book.sheets)
        engine_kw.setdefault("exclude", excluded_names(book))
        engine_kw.setdefault("keep", kept_names(book))
        engine_kw.setdefault("n_trials", setting_name(book, TRIALS_NAME))
        engine_kw.setdefault("positive", setting_name(book, POSITIVE_NAME))
        report = spreadsheet.report_sheet(
            values, target=target_name(book), taken=[s.name for s in sheets], source=source,
            progress=progress, layout=layout or Layout(), **engine_kw,
        )
        say("StratPD: writing the results...")
        # A brand-new sheet: nothing the user typed can be overwritten.
        new_sheet = book.sheets.add(report.name, after=sheets[-1] if sheets else None)
        _write_results(new_sheet, report, warn or (lambda text: None))
    finally:
        say(None)
    return report.name


def _write_results(
    new_sheet: Any, report: spreadsheet.ReportSheet, warn: Callable[[str], None]
) -> None:
    from ..presentation import charts  # matplotlib only once there is something to draw

    for item in report.items:
        if isinstance(item, spreadsheet.Cells):
            _write(new_sheet, item.row, item.col, item.cells)
        elif isinstance(item, spreadsheet.NumberFormat):
            new_sheet.range((item.row, item.col), (item.last_row, item.last_col)).number_format \
                = item.format
        else:
            figure = (charts.impact_figure(report.result.impact) if item.feature is None
                      else charts.curve_figure(report.result.curves[item.feature]))
            _picture(new_sheet, charts.figure_png(figure), item.name, item.row, item.col, warn)
    _lay_out(new_sheet, report)


def _width(new_sheet: Any, chars: float) -> float:
    """A column width for this host: Excel's characters on the desktop; points in xlwings Lite,
    whose Office.js measures widths so (7 pixels a character and 5 of padding, 3/4 point a
    pixel, as Excel converts them)."""
    try:
        remote = new_sheet.book.app.engine.type == "remote"
    except Exception:  # noqa: BLE001 - a book without an engine is a desktop one
        remote = False
    return round((chars * 7 + 5) * 0.75, 2) if remote else chars


def _lay_out(new_sheet: Any, report: spreadsheet.ReportSheet) -> None:
    """Column widths and wrapped table headers (:attr:`ReportSheet.widths`, ``headers``).
    Only looks: a host that cannot set them still has the report."""
    try:
        for col, chars in report.widths.items():
            new_sheet.range((1, col)).column_width = _width(new_sheet, chars)
        for row, first, last in report.headers:
            new_sheet.range((row, first), (row, last)).wrap_text = True
    except (NotImplementedError, AttributeError):
        pass


def warning_text(warnings: list[str]) -> str:
    """One message for the charts that could not be placed (at most three named)."""
    shown = warnings[:3] + ([f"... and {len(warnings) - 3} more"] if warnings[3:] else [])
    return "StratPD wrote the tables, but " + "\n".join(shown)


def main() -> None:  # pragma: no cover - needs Excel; the logic above is tested with fakes
    """Run from the ribbon: analyse the selection of the workbook that pressed the button."""
    import xlwings as xw

    book = xw.Book.caller()
    app = book.app

    def status(text: str | None) -> None:
        app.status_bar = text if text is not None else False  # False gives Excel's bar back

    updating = app.screen_updating
    warnings: list[str] = []
    try:
        values, source = read_selection(book.selection)
        app.screen_updating = False  # writing many blocks and pictures is faster unseen
        analyse_selection(book, values, source=source, status=status, warn=warnings.append)
        if warnings:
            app.screen_updating = updating
            app.alert(warning_text(warnings), title="StratPD")
    except Exception as exc:  # the user sees one sentence, never a traceback
        status(None)
        app.screen_updating = updating
        app.alert(error_text(exc), title="StratPD", mode="critical")
    finally:
        app.screen_updating = updating
