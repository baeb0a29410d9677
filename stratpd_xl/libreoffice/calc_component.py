"""The Calc extension's UNO component: ``=STRATPD``, ``=STRATIMPACT`` and "Analyse selection".

Runs inside LibreOffice's own Python (packed into the extension as ``stratpd_xl_calc.py``), with
the standard library and ``uno`` only.  It converts Calc's values, hands them to the stratpd-xl
worker through ``stratpd_xl_calc_client`` (:mod:`stratpd_xl.libreoffice.calc_client`, packed
into the extension's ``pythonpath``) and puts the answer back into Calc: the formulas' cells,
or the report sheet with a native Calc chart per table.  No analysis happens here.

The formulas' names, arguments and help texts for the Function Wizard are in the extension's
``CalcAddIns.xcu``, their signatures in its type library (``XStratPD.rdb``); both are written by
:mod:`stratpd_xl.libreoffice.extension` from the same table as Excel's.
"""

import hashlib
import json
import os
import threading
import time
from collections import OrderedDict

import stratpd_xl_calc_client as client  # the extension's pythonpath/
import uno
import unohelper
from com.sun.star.awt import Rectangle
from com.sun.star.chart.ChartAxisPosition import START as AXIS_AT_START
from com.sun.star.frame import XDispatch, XDispatchProvider
from com.sun.star.lang import XInitialization
from com.sun.star.sheet import XVolatileResult
from com.sun.star.table import CellRangeAddress
from org.stratpd.xl.calc import XStratPD  # the extension's own type library

FUNCTIONS = "org.stratpd.xl.calc.Functions"
ANALYSE = "org.stratpd.xl.calc.AnalyseSelection"
PROTOCOL = "org.stratpd.xl.calc:"  # the menu's command: org.stratpd.xl.calc:analyse
TARGET_NAME = "StratPD_target"
EXCLUDE_NAME = "StratPD_exclude"
KEEP_NAME = "StratPD_keep"  # columns to analyse even if they look like row numbers or ids
POSITIVE_NAME = "StratPD_positive"  # a yes/no target's value that counts
TRIALS_NAME = "StratPD_trials"  # more than 1: the curves carry a band
CHART_SIZE = (16000, 9000)  # 1/100 mm: 16 x 9 cm, about the rows the report leaves free
#: The report sheet's page style: landscape A4, one page wide, margins as the report workbook's
#: (1/100 mm: 0.5 inch left and right, 0.6 inch top and bottom).
PAGE_STYLE = "StratPD report"
PAGE = {"IsLandscape": True, "Width": 29700, "Height": 21000, "LeftMargin": 1270,
        "RightMargin": 1270, "TopMargin": 1524, "BottomMargin": 1524, "ScaleToPagesX": 1,
        "ScaleToPagesY": 0, "PrintGrid": False}
RESULTS_KEPT = 64  # distinct formula results whose objects are reused (see _result)
RESTART_GAP = 60.0  # seconds: a worker that dies again sooner is not restarted by itself
LISTENER_WAIT = 30.0  # seconds a restart waits for Calc to listen to the cell's result

_worker = None
_worker_lock = threading.Lock()


def _config():
    return client.load_config(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                            "config.json"))


def worker():
    """The one worker of this LibreOffice process, created on first use."""
    global _worker
    with _worker_lock:
        if _worker is None:
            config = _config()
            _worker = client.Worker(
                os.environ.get("STRATPD_XL_PYTHON") or config.get("python", ""),
                start_timeout=float(config.get("start_timeout", client.DEFAULT_START_TIMEOUT)),
                call_timeout=float(config.get("call_timeout", client.DEFAULT_CALL_TIMEOUT)),
            )
        return _worker


def _used(rows):
    """A range's rows without its empty rows and columns at the end: ``A:J`` (a million rows)
    becomes the table in it before anything is packed, sent or typed."""
    if not rows or not isinstance(rows[0], tuple):
        return rows
    end = len(rows)
    while end > 1:
        row = rows[end - 1]
        blank = ("",) * len(row)
        if row != blank and row != (None,) * len(row):  # tuple compares run in C
            break
        end -= 1
    rows = rows[:end]
    width = max(len(r) for r in rows)
    while width > 1 and all(len(r) < width or r[width - 1] in ("", None) for r in rows):
        width -= 1
    return tuple(r[:width] for r in rows) if width < len(rows[0]) else rows


def _range_values(cells):
    """The values of a range Calc handed over as itself (``data``): only the part inside the
    sheet's used area, so whole columns cost what the table in them costs; blank cells and
    error values (``#N/A``) are None, as Excel's formulas read them."""
    sheet = cells.getSpreadsheet()
    address = cells.getRangeAddress()
    used = sheet.createCursor()
    used.gotoEndOfUsedArea(False)
    last = used.getRangeAddress()
    end_row = min(address.EndRow, last.EndRow)
    end_col = min(address.EndColumn, last.EndColumn)
    if end_row < address.StartRow or end_col < address.StartColumn:
        return ((None,),)
    part = sheet.getCellRangeByPosition(address.StartColumn, address.StartRow, end_col, end_row)
    return tuple(tuple(None if v == "" else v for v in row) for row in part.getDataArray())


def _value(value):
    """A Calc argument for the worker: a range (its used part) packed by columns, the rest as
    it is."""
    if hasattr(value, "getDataArray"):  # a cell range (the data argument)
        return client.pack_block(_range_values(value))
    if isinstance(value, tuple):
        return client.pack_block(_used(value))
    return _plain(value)


def _plain(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)  # a UNO struct or enum: its text is all the analysis could use


def _one_cell(text):
    """A sentence in the formula's first cell only: Calc repeats a 1x1 answer over every cell
    of a larger array range, so it goes as 2 x 2 with blanks (outside it Calc shows #N/A).
    The example range it may show is written as Calc writes ranges."""
    excel, calc = (_config().get("range_syntax") or ["", ""])[:2]
    if excel and isinstance(text, str):
        text = text.replace(excel, calc)
    return ((text, ""), ("", ""))


class _Result(unohelper.Base, XVolatileResult):
    """A formula's cells as Calc's volatile result.

    Calc's F9 calculates only the formulas whose cells changed: a cell that said its worker
    died would keep saying so.  A volatile result can tell Calc it changed, which makes Calc
    call the formula again; the extension does so once a new worker has started.  Calc takes
    a block of cells only typed as one (``[][]any``), which Python's UNO bridge can give in an
    event's value but not as a method's ``any`` result, so every result goes this way.
    """

    def __init__(self, cells):
        self.cells = cells
        self._listeners = []
        self._lock = threading.Lock()
        self._heard = threading.Event()

    def _event(self):
        return uno.createUnoStruct("com.sun.star.sheet.ResultEvent", self,
                                   uno.Any("[][]any", self.cells))

    def addResultListener(self, listener):  # noqa: N802 - UNO names
        with self._lock:
            self._listeners.append(listener)
        listener.modified(self._event())  # Calc reads the cells from this first event
        self._heard.set()

    def removeResultListener(self, listener):  # noqa: N802
        with self._lock:
            self._listeners = [x for x in self._listeners if x != listener]

    def announce(self):
        """Tell every cell showing this result that it changed: Calc calculates them again."""
        self._heard.wait(LISTENER_WAIT)
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener.modified(self._event())
            except Exception:  # noqa: BLE001, S110 - a closed document's cell: nothing to tell
                pass


_results = OrderedDict()
_results_lock = threading.Lock()
_last_restart = [float("-inf")]


def _result(cells):
    """The result object for these cells: the same object for the same cells, so Calc keeps
    one listener per distinct answer, not one per recalculation."""
    key = hashlib.sha1(json.dumps(cells, default=str).encode("utf-8", "surrogatepass"))
    key = key.hexdigest()
    with _results_lock:
        found = _results.get(key)
        if found is None:
            found = _results[key] = _Result(cells)
        _results.move_to_end(key)
        while len(_results) > RESULTS_KEPT:
            _results.popitem(last=False)
    return found


def _restarting(name, exc):
    """The cell of a formula whose worker died: says so now, and once a new worker has
    started (in the background, so Calc does not wait) tells Calc to calculate it again."""
    pending = _Result(_one_cell(f"{name}: {exc.restarting()}"))

    def restart():
        try:
            worker().call("PING")
        except Exception:  # noqa: BLE001, S110 - the formula's own call says why
            pass
        pending.announce()

    threading.Thread(target=restart, daemon=True, name="stratpd-xl-restart").start()
    return pending


def _restart_allowed():
    """At most one restart by itself a minute: a formula that kills every worker it gets (too
    large for the memory) stops at the sentence, which says how to try again."""
    with _results_lock:
        now = time.monotonic()
        if now - _last_restart[0] < RESTART_GAP:
            return False
        _last_restart[0] = now
        return True


def _formula(name, args):
    try:
        cells = worker().call(name, **{k: _value(v) for k, v in args.items()})
    except client.WorkerError as exc:
        if exc.restartable and _restart_allowed():
            return _restarting(name, exc)
        return _result(_one_cell(f"{name}: {exc}"))
    except Exception as exc:  # noqa: BLE001 - a cell shows a sentence, never a traceback
        return _result(_one_cell(f"{name}: the extension failed ({type(exc).__name__}: {exc})"))
    if len(cells) == 1 and len(cells[0]) == 1:
        return _result(_one_cell(cells[0][0]))
    return _result(tuple(tuple(row) for row in cells))


def _function(name, arguments):
    """The method Calc calls for ``=NAME(...)``: its values, by position, named as declared."""

    def call(self, *values):
        return _formula(name, dict(zip(arguments, values)))  # noqa: B905 - Python 3.8 here

    call.__name__ = name
    return call


class Functions(unohelper.Base, XStratPD):
    """The add-in Calc calls for ``=STRATPD(...)``, ``=STRATIMPACT(...)`` and the others.

    One method per formula of ``config.json``, which the build writes from the same table as
    the type library and the Function Wizard's entries, so the three always agree.
    """

    def __init__(self, ctx):
        self.ctx = ctx


for _name, _arguments in _config().get("formulas", {}).items():
    setattr(Functions, _name, _function(_name, _arguments))


# --------------------------------------------------------------------------- the menu command


class SelectionError(Exception):
    """The selection or the document cannot be analysed; the message says what to do."""


def _selected_block(doc):
    """Cell values of the selection (a single cell stands for the table around it)."""
    selection = doc.getCurrentController().getSelection()
    if selection is None or not hasattr(selection, "getRangeAddress"):
        raise SelectionError("select one block of cells: the table including its header row")
    sheet = selection.getSpreadsheet()
    address = selection.getRangeAddress()
    if address.StartColumn == address.EndColumn and address.StartRow == address.EndRow:
        cursor = sheet.createCursorByRange(selection)
        cursor.collapseToCurrentRegion()
        selection, address = cursor, cursor.getRangeAddress()
    else:
        # Whole columns (A:J) or rows: cut down to the used area, not a million empty rows.
        used = sheet.createCursor()
        used.gotoEndOfUsedArea(False)
        last = used.getRangeAddress()
        end_row = min(address.EndRow, last.EndRow)
        end_col = min(address.EndColumn, last.EndColumn)
        if end_row >= address.StartRow and end_col >= address.StartColumn:
            selection = sheet.getCellRangeByPosition(
                address.StartColumn, address.StartRow, end_col, end_row)
            address = selection.getRangeAddress()
    values = [[None if v == "" else _plain(v) for v in row] for row in selection.getDataArray()]
    return values, f"{sheet.getName()}.{selection.AbsoluteName.split('.')[-1]}"


def _named(doc, wanted, what):
    """``(found, text, cells)`` of the document's named range ``wanted``: the text of a text
    constant (``"price"``), else the cells it refers to; ``what`` ends the sentence for a name
    that refers to neither."""
    names = doc.NamedRanges
    for name in names.getElementNames():
        if name.casefold() != wanted.casefold():
            continue
        content = names.getByName(name).getContent().strip()
        if content.startswith('"') and content.endswith('"'):
            return True, content[1:-1].replace('""', '"'), None
        try:  # a number: StratPD_trials as 10
            float(content)
            return True, content, None
        except ValueError:
            pass
        cells = names.getByName(name).getReferredCells()
        if cells is None:
            raise SelectionError(f"the name {wanted} refers to {content}; let it refer to {what}")
        return True, None, cells
    return False, None, None


def _target(doc):
    """The target set by the document's named range StratPD_target, or None."""
    found, text, cells = _named(doc, TARGET_NAME, "a cell holding the target column's name")
    if cells is not None:
        text = cells.getCellByPosition(0, 0).getString().strip()
        if not text:
            raise SelectionError(
                f"the cell named {TARGET_NAME} is empty; type the target there")
    return text if found else None


def _columns(doc, wanted=EXCLUDE_NAME):
    """The columns the document's named range ``wanted`` (StratPD_exclude, StratPD_keep)
    names, or None.

    It may hold a text (``"casual, registered"``) or refer to cells holding names (blank
    ones ignored); the worker matches them against the selection's header.
    """
    found, text, cells = _named(doc, wanted, "cells holding column names, or to a text "
                                'such as "casual, registered"')
    if cells is not None:
        return [_plain(v) for row in cells.getDataArray() for v in row if v != ""]
    return [text] if found else None


def _setting(doc, wanted):
    """The value of the document's named expression ``wanted`` (a text, a number, or the
    first cell it refers to), or None when there is none or it is blank."""
    found, text, cells = _named(doc, wanted, "a cell holding the value, or to a value")
    if not found:
        return None
    if cells is None:
        content = text
        try:  # a number typed as the expression: =10
            return float(content) if content is not None and content.strip() else None
        except ValueError:
            return content
    value = cells.getDataArray()[0][0]
    return None if value == "" else _plain(value)


def _address(sheet_index, row, col, last_row, last_col):
    return CellRangeAddress(sheet_index, col, row, last_col, last_row)


def _add_chart(sheet, sheet_index, spec):
    """A native Calc chart of one table of the report (spec from the worker's plan)."""
    row, col, height, _width = spec["table"]
    ranges = tuple(_address(sheet_index, row, c, row + height - 1, c) for c in spec["columns"])
    anchor = sheet.getCellByPosition(spec["col"], spec["row"]).Position
    rect = Rectangle(anchor.X, anchor.Y, *CHART_SIZE)
    charts = sheet.getCharts()
    kind = spec["kind"]
    charts.addNewByName(spec["name"], rect, ranges, True, kind != "numeric")
    doc = charts.getByName(spec["name"]).getEmbeddedObject()
    if kind == "numeric":
        diagram = doc.createInstance("com.sun.star.chart.XYDiagram")
        doc.setDiagram(diagram)
        diagram = doc.getDiagram()
        diagram.SymbolType = -3  # com.sun.star.chart.ChartSymbolType.NONE: a line, no markers
    else:
        diagram = doc.createInstance("com.sun.star.chart.BarDiagram")
        doc.setDiagram(diagram)
        diagram = doc.getDiagram()
        if kind == "ranking":  # bars lying down, the largest (first row) on top
            diagram.Vertical = True
            diagram.getXAxis().ReverseDirection = True
    if kind != "ranking":  # the x axis at the bottom of the plot, not across it at y = 0
        diagram.getXAxis().CrossoverPosition = AXIS_AT_START
    doc.HasMainTitle = True
    doc.getTitle().String = spec["title"]
    doc.HasLegend = len(spec["columns"]) > 2
    diagram.HasXAxisTitle = True
    diagram.getXAxisTitle().String = spec["x_title"]
    diagram.HasYAxisTitle = True
    diagram.getYAxisTitle().String = spec["y_title"]


def write_report(doc, plan):
    """Write the worker's plan into a new sheet of ``doc``; return the sheet's name."""
    sheets = doc.getSheets()
    name = plan["sheet"]
    sheets.insertNewByName(name, sheets.getCount())  # a new sheet: nothing typed is overwritten
    sheet = sheets.getByName(name)
    index = sheets.getCount() - 1
    for block in plan["blocks"]:
        cells = block["cells"]
        width = max(len(r) for r in cells)
        rows = tuple(tuple("" if v is None else v for v in r) + ("",) * (width - len(r))
                     for r in cells)
        target = sheet.getCellRangeByPosition(
            block["col"], block["row"], block["col"] + width - 1, block["row"] + len(rows) - 1)
        target.setDataArray(rows)  # values only: a text such as "=1+1" stays text
    formats = doc.getNumberFormats()
    locale = uno.createUnoStruct("com.sun.star.lang.Locale")
    for spec in plan["formats"]:
        key = formats.queryKey(spec["format"], locale, False)
        if key == -1:
            key = formats.addNew(spec["format"], locale)
        sheet.getCellRangeByPosition(spec["col"], spec["row"], spec["last_col"],
                                     spec["last_row"]).NumberFormat = key
    for spec in plan["charts"]:
        _add_chart(sheet, index, spec)
    _lay_out(doc, sheet, plan)
    doc.getCurrentController().setActiveSheet(sheet)
    return name


def _lay_out(doc, sheet, plan):
    """Column widths, wrapped headers and the printed page: landscape A4 one page wide, each
    chart on one page.  Only looks: a host that refuses one of them still has the report."""
    columns, rows = sheet.getColumns(), sheet.getRows()
    try:
        for col, width in plan.get("widths", []):
            columns.getByIndex(col).Width = width
        for row, first, last in plan.get("wrap", []):
            sheet.getCellRangeByPosition(first, row, last, row).IsTextWrapped = True
        for row in plan.get("breaks", []):
            rows.getByIndex(row).IsStartOfNewPage = True
        styles = doc.getStyleFamilies().getByName("PageStyles")
        if not styles.hasByName(PAGE_STYLE):
            styles.insertByName(PAGE_STYLE, doc.createInstance("com.sun.star.style.PageStyle"))
        style = styles.getByName(PAGE_STYLE)
        for key, value in PAGE.items():
            try:
                style.setPropertyValue(key, value)
            except Exception:  # noqa: BLE001, S112 - an older Calc without the property
                continue
        sheet.PageStyle = PAGE_STYLE
    except Exception:  # noqa: BLE001, S110 - the report's cells and charts are written
        pass


def _tell(ctx, doc, text):
    """One sentence in a message box, and in ``calc-messages.log`` in the user's cache folder
    (headless has no window; the worker's own log stays its own)."""
    try:
        os.makedirs(worker().folder, exist_ok=True)
        with open(os.path.join(worker().folder, "calc-messages.log"), "a",
                  encoding="utf-8") as log:
            log.write(text + "\n")
    except OSError:
        pass
    try:
        window = doc.getCurrentController().getFrame().getContainerWindow()
        toolkit = ctx.ServiceManager.createInstanceWithContext("com.sun.star.awt.Toolkit", ctx)
        from com.sun.star.awt.MessageBoxType import ERRORBOX

        toolkit.createMessageBox(window, ERRORBOX, 1, "StratPD", text).execute()
    except Exception:  # noqa: BLE001 - nowhere to show it: the log has it
        pass


class AnalyseSelection(unohelper.Base, XDispatchProvider, XDispatch, XInitialization):
    """The "Analyse selection" menu entry and toolbar button (``Addons.xcu``).

    A protocol handler (``ProtocolHandler.xcu`` maps ``org.stratpd.xl.calc:`` URLs here), so
    LibreOffice hands it the frame the command was given in: the document is that frame's,
    whichever window is in front.
    """

    def __init__(self, ctx):
        self.ctx = ctx
        self.frame = None

    def initialize(self, args):
        if args:
            self.frame = args[0]

    def queryDispatch(self, url, target, flags):  # noqa: N802 - UNO names
        return self if url.Protocol == PROTOCOL else None

    def queryDispatches(self, requests):  # noqa: N802
        return tuple(self.queryDispatch(r.FeatureURL, r.FrameName, r.SearchFlags)
                     for r in requests)

    def addStatusListener(self, listener, url):  # noqa: N802
        pass

    def removeStatusListener(self, listener, url):  # noqa: N802
        pass

    def dispatch(self, url, args):
        if url.Path != "analyse" or self.frame is None:
            return
        doc = self.frame.getController().getModel()
        if doc is None or not doc.supportsService("com.sun.star.sheet.SpreadsheetDocument"):
            return
        try:
            values, source = _selected_block(doc)
            taken = list(doc.getSheets().getElementNames())
            plan = worker().call("REPORT", values=client.pack_block(values),
                                 target=_target(doc), source=source, taken=taken,
                                 exclude=_columns(doc, EXCLUDE_NAME),
                                 keep=_columns(doc, KEEP_NAME),
                                 positive=_setting(doc, POSITIVE_NAME),
                                 trials=_setting(doc, TRIALS_NAME))
            write_report(doc, plan)
        except (SelectionError, client.WorkerError) as exc:
            _tell(self.ctx, doc, f"StratPD: {exc}")
        except Exception as exc:  # noqa: BLE001 - one sentence, never a traceback
            _tell(self.ctx, doc, f"StratPD: the extension failed ({type(exc).__name__}: {exc})")


g_ImplementationHelper = unohelper.ImplementationHelper()
g_ImplementationHelper.addImplementation(Functions, FUNCTIONS, ("com.sun.star.sheet.AddIn",))
g_ImplementationHelper.addImplementation(AnalyseSelection, ANALYSE,
                                         ("com.sun.star.frame.ProtocolHandler",))
