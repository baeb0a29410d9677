"""Drive a running headless LibreOffice over UNO; run with a Python that has ``uno``.

    python3 tests/calc_driver.py PIPE-NAME REQUEST.json RESULT.json

The request names tables to type into a new Calc document, array formulas to enter, timed
recalculations (after an optional one-cell edit), and a range to select before running the
extension's "Analyse selection" command through LibreOffice's dispatcher (the URL the menu
entry and the toolbar button use).  The result holds what Calc shows: each formula's cells,
the Function Wizard's entries for the add-in, the menu and toolbar configuration, and the new
report sheet with its charts.  tests/test_calc_extension.py and benchmarks/bench_libreoffice.py
judge it; this script only reads and writes.
"""

import json
import os
import signal
import sys
import threading
import time

import uno
from com.sun.star.beans import PropertyValue

CONNECT_TIMEOUT = 90.0


def prop(name, value):
    p = PropertyValue()
    p.Name, p.Value = name, value
    return p


def connect(pipe):
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext(
        "com.sun.star.bridge.UnoUrlResolver", local)
    deadline = time.monotonic() + CONNECT_TIMEOUT
    while True:
        try:
            return resolver.resolve(
                f"uno:pipe,name={pipe};urp;StarOffice.ComponentContext")
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def plain(value):
    return value if isinstance(value, (str, float, int, type(None))) else str(value)


def read_block(cells):
    return [[plain(v) for v in row] for row in cells.getDataArray()]


def read_texts(cells):
    size = cells.getRangeAddress()
    return [[cells.getCellByPosition(c, r).getString()
             for c in range(size.EndColumn - size.StartColumn + 1)]
            for r in range(size.EndRow - size.StartRow + 1)]


def wizard(ctx):
    found = {}
    descriptions = ctx.ServiceManager.createInstanceWithContext(
        "com.sun.star.sheet.FunctionDescriptions", ctx)
    for i in range(descriptions.getCount()):
        d = {p.Name: p.Value for p in descriptions.getByIndex(i)}
        if str(d.get("Name", "")).startswith("STRAT"):
            found[d["Name"]] = {
                "description": d["Description"],
                "arguments": [[a.Name, a.Description, a.IsOptional] for a in d["Arguments"]],
            }
    return found


def addons(ctx):
    provider = ctx.ServiceManager.createInstanceWithContext(
        "com.sun.star.configuration.ConfigurationProvider", ctx)
    access = provider.createInstanceWithArguments(
        "com.sun.star.configuration.ConfigurationAccess",
        (prop("nodepath", "/org.openoffice.Office.Addons/AddonUI"),))
    out = {"menu": [], "toolbar": []}
    menu = access.getByName("AddonMenu")
    for name in menu.getElementNames():
        entry = menu.getByName(name)
        out["menu"].append({"name": name, "url": entry.URL, "title": entry.Title,
                            "context": entry.Context})
    bars = access.getByName("OfficeToolBar")
    for name in bars.getElementNames():
        bar = bars.getByName(name)
        for button in bar.getElementNames():
            entry = bar.getByName(button)
            out["toolbar"].append({"name": name, "url": entry.URL, "title": entry.Title,
                                   "context": entry.Context})
    return out


def chart_info(sheet):
    charts = sheet.getCharts()
    out = {}
    for name in charts.getElementNames():
        chart = charts.getByName(name)
        doc = chart.getEmbeddedObject()
        ranges = chart.getRanges()
        out[name] = {
            "type": doc.getDiagram().getDiagramType(),
            "title": doc.getTitle().String if doc.HasMainTitle else "",
            "columns": [[r.StartColumn, r.EndColumn] for r in ranges],
            "rows": [[r.StartRow, r.EndRow] for r in ranges],
            "series": sum(len(t.getDataSeries()) for c in doc.getFirstDiagram()
                          .getCoordinateSystems() for t in c.getChartTypes()),
            "x_title": doc.getDiagram().getXAxisTitle().String,
            "y_title": doc.getDiagram().getYAxisTitle().String,
        }
    return out


def find_worker(marker):
    """The pid of the extension's worker whose environment holds ``marker`` (this test's
    folder: other tests' workers on the machine are left alone), or None."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                command = f.read()
            with open(f"/proc/{entry}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue
        if b"stratpd_xl.libreoffice.worker" in command and marker.encode() in environ:
            return int(entry)
    return None


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def kill_worker(marker):
    """SIGKILL the worker while it waits for a request; its pid, or None."""
    pid = find_worker(marker)
    if pid is not None:
        os.kill(pid, signal.SIGKILL)
        while os.path.exists(f"/proc/{pid}"):  # dead (a zombie until its parent notices)
            with open(f"/proc/{pid}/stat", encoding="ascii") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in "ZX":
                    break
            time.sleep(0.02)
    return pid


def kill_worker_when_busy(marker, found, busy=0.3, limit=120.0):
    """A thread that SIGKILLs the worker once it has computed ``busy`` CPU seconds since
    now: the death in the middle of a formula.  ``found`` gets the pid it killed."""

    def run():
        pid = find_worker(marker)
        if pid is None:
            return
        start = cpu_seconds(pid)
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            try:
                if cpu_seconds(pid) - start >= busy:
                    os.kill(pid, signal.SIGKILL)
                    found.append(pid)
                    return
            except OSError:
                return
            time.sleep(0.02)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def main():
    pipe, request_path, result_path = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(request_path, encoding="utf-8") as f:
        request = json.load(f)
    ctx = connect(pipe)
    result = {"wizard": wizard(ctx), "addons": addons(ctx), "formulas": {}}
    desktop = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
    # Hidden: a visible window would need a display (and crashes LibreOffice without one).
    doc = desktop.loadComponentFromURL("private:factory/scalc", "_blank", 0,
                                       (prop("Hidden", True),))
    try:
        sheets = doc.getSheets()
        for i, (name, table) in enumerate(request["tables"].items()):
            if i == 0:
                sheets.getByIndex(0).setName(name)
            else:
                sheets.insertNewByName(name, i)
            sheet = sheets.getByName(name)
            width = max(len(r) for r in table)
            rows = tuple(tuple("" if v is None else v for v in r) for r in table)
            sheet.getCellRangeByPosition(0, 0, width - 1, len(rows) - 1).setDataArray(rows)
            for cell, formula in request.get("cell_formulas", {}).get(name, {}).items():
                sheet.getCellRangeByName(cell).setFormula(formula)
        origin = uno.createUnoStruct("com.sun.star.table.CellAddress")
        for name, content in request.get("names", {}).items():
            doc.NamedRanges.addNewByName(name, content, origin, 0)
        for key, spec in request["formulas"].items():
            sheet = sheets.getByName(spec["sheet"])
            target = sheet.getCellRangeByName(spec["range"])
            started = time.perf_counter()
            target.setArrayFormula(spec["formula"])
            doc.calculateAll()
            seconds = time.perf_counter() - started
            result["formulas"][key] = {
                "cells": read_block(target), "seconds": seconds,
                "shown": target.getCellByPosition(0, 0).getString(),
                # What each cell shows ("#N/A" for an error, where getDataArray gives "").
                "texts": read_texts(target),
            }
        result["timings"] = []
        for step in request.get("timings", []):
            # Optionally stop the extension's worker (as a crash would) or edit one cell, then
            # time a full recalculation (every formula runs), or F9's (what changed).
            killer = None
            if "kill_worker" in step:
                result.setdefault("killed", []).append(kill_worker(step["kill_worker"]))
            if "kill_worker_when_busy" in step:
                killed = result.setdefault("killed_busy", [])
                killer = kill_worker_when_busy(step["kill_worker_when_busy"], killed)
            if "edit" in step:
                sheet_name, cell, value = step["edit"]
                sheets.getByName(sheet_name).getCellRangeByName(cell).setValue(value)
            started = time.perf_counter()
            if step.get("recalculate") == "f9":
                doc.calculate()
            else:
                doc.calculateAll()
            seconds = time.perf_counter() - started
            if killer is not None:
                killer.join(timeout=5)
            spec = request["formulas"][step["read"]]
            shown = sheets.getByName(spec["sheet"]).getCellRangeByName(spec["range"])
            cells = read_block(shown)
            # Optionally wait (without recalculating) while the first cell still starts with
            # this text: for a cell that fills in by itself.
            waited = time.perf_counter()
            while (step.get("wait_while") and str(cells[0][0]).startswith(step["wait_while"])
                   and time.perf_counter() - waited < step.get("wait", 0)):
                time.sleep(0.2)
                cells = read_block(shown)
            result["timings"].append({
                "label": step["label"], "seconds": seconds, "cells": cells,
                "waited": time.perf_counter() - waited,
            })
        dispatcher = ctx.ServiceManager.createInstanceWithContext(
            "com.sun.star.frame.DispatchHelper", ctx)
        controller = doc.getCurrentController()

        def command(spec):
            sheet = sheets.getByName(spec["sheet"])
            controller.setActiveSheet(sheet)
            controller.select(sheet.getCellRangeByName(spec["range"]))
            dispatcher.executeDispatch(controller.getFrame(), request["command"], "", 0, ())

        if "select_bad" in request:  # a selection the command must refuse, writing nothing
            before = list(sheets.getElementNames())
            command(request["select_bad"])
            result["bad_sheets"] = [before, list(sheets.getElementNames())]
        if "select" in request:
            before = list(sheets.getElementNames())
            command(request["select"])
            result["sheets_before"] = before
            result["sheets_after"] = list(sheets.getElementNames())
            new = [n for n in result["sheets_after"] if n not in before]
            if new:
                report = sheets.getByName(new[0])
                cursor = report.createCursor()
                cursor.gotoEndOfUsedArea(False)
                end = cursor.getRangeAddress()
                used = report.getCellRangeByPosition(0, 0, end.EndColumn, end.EndRow)
                # The first share: two rows under the "Impact ranking" heading, column D.
                heading = [row[0] if row else None for row in read_block(used)].index(
                    "Impact ranking")
                share = report.getCellByPosition(3, heading + 2)
                result["report"] = {
                    "name": new[0],
                    "cells": read_block(used),
                    "formulas": [[c for c in row] for row in used.getFormulaArray()],
                    "charts": chart_info(report),
                    "share_format": share.NumberFormat,
                    "share_format_string": doc.getNumberFormats().getByKey(
                        share.NumberFormat).FormatString,
                    # What each cell shows (numbers as formatted), the first columns' widths,
                    # the rows that start a printed page and the page style's settings.
                    "texts": read_texts(used),
                    "widths": [report.getColumns().getByIndex(c).Width for c in range(12)],
                    "breaks": [r for r in range(end.EndRow + 1)
                               if report.getRows().getByIndex(r).IsStartOfNewPage],
                    "wrapped": [report.getCellByPosition(0, r).IsTextWrapped
                                for r in range(end.EndRow + 1)],
                    "page": {k: getattr(doc.getStyleFamilies().getByName("PageStyles")
                                        .getByName(report.PageStyle), k)
                             for k in ("IsLandscape", "Width", "Height", "ScaleToPagesX")},
                    "default_width": sheets.getByIndex(0).getColumns().getByIndex(20).Width,
                }
    finally:
        doc.close(True)
    with open(result_path, "w", encoding="utf-8") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
