"""The xlwings Lite adapters (``addin/xlwings_lite/main.py``) in CPython with the numpy backend.

Always: ``main.py`` loads with the pinned xlwings, its formulas return exactly the Windows
formulas' cells (results and one-cell errors), its script writes the sheet the ribbon writes,
and what Lite cannot do (read positions or the current region synchronously) falls back to
what it can (anchor pictures to a cell; the sheet's used range).

The same file also runs through xlwings' own ``custom_functions_meta`` /
``custom_functions_call`` / ``custom_scripts_call`` against a book built from an Office.js-style
payload, as xlwings Lite calls it.  In CPython xlwings' ``server`` module and remote book ask for
a licence key (inside xlwings Lite they are free); they are dual-licensed, PolyForm
Noncommercial for non-commercial use, for which xlwings takes the key ``noncommercial``: these
tests of an open-source project use that one unless ``XLWINGS_LICENSE_KEY`` gives another.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

with pytest.MonkeyPatch.context() as _env:
    # lite.py switches the warm-up thread off for the whole process (Pyodide cannot start
    # threads); here only while it is first imported, so other tests keep the desktop's.
    _env.setenv("STRATPD_XL_WARMUP", "0")
    from stratpd_xl.excel import lite, ribbon, udfs
from stratpd_xl import spreadsheet
from tests.test_ribbon import FakeBook, FakeRange, FakeSheet, _diamonds, _table_at

ROOT = Path(__file__).resolve().parents[1]
LITE_DIR = ROOT / "addin" / "xlwings_lite"


@pytest.fixture(scope="module", autouse=True)
def numpy_backend():
    from stratpd_xl import _backend

    previous = _backend.set_backend("numpy")  # what Pyodide has: no numba
    udfs.clear_cache()
    yield
    _backend.set_backend(previous)
    udfs.clear_cache()


def _load_main() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("lite_main", LITE_DIR / "main.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


main = _load_main()
DATA = _diamonds(300)


def _params(f) -> list[tuple[str, Any]]:
    return [(p.name, p.default) for p in inspect.signature(f).parameters.values()]


def test_formulas_take_the_windows_arguments_in_the_same_order():
    assert _params(main.STRATPD) == [p for p in _params(udfs.STRATPD) if p[0] != "caller"]
    assert _params(main.STRATIMPACT) == _params(udfs.STRATIMPACT)
    assert _params(main.STRATCOMPARE) == [
        p for p in _params(udfs.STRATCOMPARE) if p[0] != "caller"]


def test_every_formula_is_made_from_the_windows_wrapper_of_its_name():
    # Generated from the desktop signatures, so a new argument reaches Lite by itself.
    for name in spreadsheet.FORMULA_ARGS:
        assert _params(getattr(main, name)) == [
            p for p in _params(getattr(udfs, name)) if p[0] != "caller"], name
    assert main.STRATPDBY(DATA, "price", "carat", "cut", None, 5) == udfs.STRATPDBY(
        DATA, "price", "carat", "cut", None, 5)
    assert main.STRATPD2(DATA, "price", "carat", "cut", 5) == udfs.STRATPD2(
        DATA, "price", "carat", "cut", 5)
    assert len(main.STRATPD2(DATA, "price", "carat", "cut", 5)) > 3


def test_stratpd_returns_the_windows_cells():
    got = main.STRATPD(DATA, "price", "carat", None, 1, False, None)
    assert got == udfs.STRATPD(DATA, "price", "carat", chart=False)
    assert got[0][:2] == ["carat", "partial dependence"] and len(got) > 5
    assert main.STRATPD(DATA, "price", "cut", 5) == udfs.STRATPD(DATA, "price", "cut", 5)


def test_stratimpact_returns_the_windows_cells():
    got = main.STRATIMPACT(DATA, "price")
    assert got == udfs.STRATIMPACT(DATA, "price")
    assert got[0] == ["feature", "kind", "impact", "share", "rows", "thin", "evidence"]


@pytest.mark.parametrize(
    ("call", "prefix"),
    [
        (lambda: main.STRATPD(DATA, "price", "nope"), "STRATPD: "),
        (lambda: main.STRATPD(DATA, "price", "carat", 10, 1, "maybe"), "STRATPD: "),
        (lambda: main.STRATIMPACT("A1", "price"), "STRATIMPACT: "),
    ],
)
def test_bad_input_gives_the_same_one_cell_sentence(call, prefix):
    cells = call()
    assert len(cells) == 1 and len(cells[0]) == 1
    assert cells[0][0].startswith(prefix)


# --- the script: same sheet as the ribbon ------------------------------------------------------


class LiteRange(FakeRange):
    """A cell as xlwings Lite's book gives it: no synchronous left/top."""

    @property
    def left(self) -> float:
        raise NotImplementedError("Reading the left position synchronously isn't supported")

    @property
    def top(self) -> float:
        raise NotImplementedError("Reading the top position synchronously isn't supported")


class LitePictures:
    def __init__(self, sheet) -> None:
        self.sheet, self.items = sheet, {}

    def add(self, path: str, *, name: str, anchor: Any) -> None:
        assert Path(path).read_bytes().startswith(b"\x89PNG")
        self.items[name] = (anchor.row, anchor.col)


class LiteSheet(FakeSheet):
    def __init__(self, name: str, cells: dict | None = None) -> None:
        super().__init__(name, cells)
        self.pictures = LitePictures(self)

    def range(self, first, last=None):
        return LiteRange(self, *first) if last is None else super().range(first, last)


class Selection:
    """One selected cell, as Lite gives it: no synchronous current region."""

    def __init__(self, values) -> None:
        used = types.SimpleNamespace(
            count=len(values) * len(values[0]),
            sheet=types.SimpleNamespace(name="Data"),
            address=f"$A$1:$J${len(values)}",
            options=lambda **kw: types.SimpleNamespace(value=values),
        )
        used.sheet.used_range = types.SimpleNamespace(
            last_cell=types.SimpleNamespace(row=len(values), column=len(values[0]))
        )
        used.rows, used.columns = (
            types.SimpleNamespace(count=len(values)),
            types.SimpleNamespace(count=len(values[0])),
        )
        used.row = used.column = 1
        self.count = 1
        self.sheet = types.SimpleNamespace(used_range=used)

    @property
    def current_region(self):
        raise NotImplementedError("Reading the current region synchronously isn't supported")


def _lite_book(values) -> FakeBook:
    book = FakeBook(sheets=[LiteSheet("Data")])
    book.selection = Selection(values)
    book.alerts = []
    book.app = types.SimpleNamespace(alert=lambda text, **kw: book.alerts.append((text, kw)))
    book.sheets.add = _adding(book.sheets)
    return book


def _adding(sheets):
    def add(name, after=None):
        new = LiteSheet(name)
        sheets.items.insert(sheets.items.index(after) + 1 if after else 0, new)
        return new

    return add


def test_script_writes_the_ribbons_sheet_with_pictures_anchored_to_cells():
    book = _lite_book(DATA)
    assert main.analyse_selection(book) is None  # a Lite script returns nothing
    desktop = FakeBook()
    name = ribbon.analyse_selection(desktop, DATA, source="Data!$A$1:$J$301")
    lite_sheet, desktop_sheet = book.sheets[name], desktop.sheets[name]
    assert lite_sheet.cells == desktop_sheet.cells
    assert lite_sheet.formats == desktop_sheet.formats
    # Every chart the desktop places at a position is placed at that cell in Lite.
    expected = {
        n: (int(top / 20.0) + 1, int(left / 64.0) + 1)
        for n, (left, top) in desktop_sheet.pictures.items.items()
    }
    assert lite_sheet.pictures.items == expected and len(expected) > 1
    assert book.alerts == []
    (top,) = [r for (r, c), v in lite_sheet.cells.items() if v == "Impact ranking"]
    assert _table_at(lite_sheet, top + 1)[0][0] == "feature"
    assert "What the data say" in lite_sheet.cells.values()


def test_script_shows_one_sentence_and_writes_nothing_on_bad_input():
    book = _lite_book([["a", "b"], [1.0, 2.0]])
    assert lite.analyse_selection(book) is None
    assert [s.name for s in book.sheets] == ["Data"]
    [(text, options)] = book.alerts
    assert "\n" not in text and options == {"title": "StratPD", "mode": "critical"}


def test_requirements_pin_the_tested_version_and_nothing_xlwings_lite_pins_itself():
    # The version these tests ran with (the package's own), pinned as Lite's docs advise for a
    # pure-Python package; numpy, pandas and the like are Pyodide's and must not be pinned.
    import stratpd_xl

    lines = (LITE_DIR / "requirements.txt").read_text().split()
    assert lines == [f"stratpd-xl=={stratpd_xl.__version__}"]


# --- through xlwings' own Lite/server machinery (licensed in CPython) --------------------------

DRIVER = r"""
import asyncio, importlib.util, json, sys
import xlwings as xw
from xlwings import server

spec = importlib.util.spec_from_file_location("main", sys.argv[1])
main = importlib.util.module_from_spec(spec)
spec.loader.exec_module(main)
data = json.loads(sys.stdin.read())
out = {"meta": server.custom_functions_meta(main), "scripts": server.custom_scripts_meta(main)}

def call(name, args):
    payload = {"func_name": name, "args": args, "version": xw.__version__,
               "client": "Office.js", "caller_address": "Sheet2!A1", "runtime": "1.16",
               "culture_info_name": "en-US", "date_format": "M/d/yyyy"}
    return asyncio.run(server.custom_functions_call(payload, main))

m = lambda v: [[v]]  # Office.js hands every argument over as a matrix
out["stratpd"] = call("STRATPD", [data, m("price"), m("carat"), None, None, m(False), None])
out["impact"] = call("STRATIMPACT", [data, m("price"), None])
out["error"] = call("STRATPD", [data, m("price"), m("nope"), None, None, None, None])

book = xw.Book(json={
    "client": "Office.js", "version": xw.__version__,
    "book": {"name": "t.xlsx", "active_sheet_index": 0, "selection": "B3"},
    "names": [],
    "sheets": [{"name": "Data", "values": data, "pictures": [], "tables": [],
                "used_range_address": f"A1:J{len(data)}"}],
})
injected = {xw.Book: book}
asyncio.run(server.custom_scripts_call(main, "analyse_selection", typehint_to_value=injected))
out["actions"] = [(a["func"], a.get("sheet_position"), a.get("start_row"), a.get("start_column"),
                   a.get("values") if a["func"] == "setValues" else None)
                  for a in book.json()["actions"]]
out["widths"] = {a["start_column"]: a["args"][0] for a in book.json()["actions"]
                 if a["func"] == "setColumnWidth"}
print(json.dumps(out, default=str))
"""


def test_main_runs_through_xlwings_lite_machinery(tmp_path):
    env = {
        **os.environ,
        "XLWINGS_LICENSE_KEY": os.environ.get("XLWINGS_LICENSE_KEY") or "noncommercial",
        "XLWINGS_ON_SERVER": "true",  # xlwings' func/arg/script are then the Lite ones
        "STRATPD_XL_BACKEND": "numpy",
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(LITE_DIR / "main.py")],
        input=json.dumps(DATA),
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    names = {f["name"]: [p["name"] for p in f["parameters"]] for f in out["meta"]["functions"]}
    # Every formula main.py declares, each with the Windows formula's arguments in its order.
    declared = {n for n, f in vars(main).items() if n.isupper() and callable(f)}
    assert set(names) == declared == set(spreadsheet.FORMULA_ARGS)  # all five
    for name, params in names.items():
        assert params == [n for n, _ in _params(getattr(udfs, name)) if n != "caller"], name
    assert [s["function_name"] for s in out["scripts"]] == ["analyse_selection"]
    expected = json.loads(json.dumps(udfs.STRATPD(DATA, "price", "carat", chart=False)))
    assert out["stratpd"] == expected
    assert out["impact"] == json.loads(json.dumps(udfs.STRATIMPACT(DATA, "price")))
    assert out["error"][0][0].startswith("STRATPD: ") and len(out["error"]) == 1
    funcs = [a[0] for a in out["actions"]]
    assert funcs[0] == "addSheet" and "addPicture" in funcs and "alert" not in funcs
    first_values = next(a[4] for a in out["actions"] if a[0] == "setValues")
    assert first_values[0][0] == "StratPD: what moves price, all else equal"
    # Column widths go to Office.js in points (the desktop's are characters): a column of
    # the ranking is as wide as on Windows, not a quarter of it.
    report = spreadsheet.report_sheet(DATA, target="price", taken=["Data"])
    assert {int(k) + 1: v for k, v in out["widths"].items()} == {
        col: round((chars * 7 + 5) * 0.75, 2) for col, chars in report.widths.items()}
    assert "setWrapText" in funcs
