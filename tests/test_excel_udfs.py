"""The cell formulas through xlwings' own machinery, on Linux, without Excel.

* xlwings' real UDF decorators (``xlwings.udfs``, Windows-only because it imports pywin32) are
  loaded with three empty stand-in modules for pywin32, and ``stratpd_xl.excel.udfs`` is
  re-imported under them, so the functions carry the same ``__xlfunc__`` metadata as on Windows;
* each call then does what ``xlwings.udfs.call_udf`` does: missing optional arguments become the
  Python defaults, every argument goes through ``xlwings.conversion.read`` with its declared
  options, the result through ``xlwings.conversion.write`` - with a test-only "excel" engine that
  cleans values the way xlwings' Windows engine does;
* values are shaped as Excel hands them over COM: 2-D lists (tuples), floats for numbers, None
  for blank cells, Excel errors as their COM error codes.

Picture placement runs against a recording fake sheet.
"""

from __future__ import annotations

import csv
import importlib
import importlib.util
import io
import math
import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from stratpd_xl.presentation.tables import ALL_HIGH, ALL_LOW, BAND_HIGH, BAND_LOW

ROOT = Path(__file__).resolve().parents[1]
MISSING = -2147352572  # what COM passes for an omitted optional argument (DISP_E_PARAMNOTFOUND)
# Excel's error values as COM integers, and the text xlwings turns them into with err_to_str.
COM_ERRORS = {
    -2146826281: "#DIV/0!",
    -2146826246: "#N/A",
    -2146826259: "#NAME?",
    -2146826288: "#NULL!",
    -2146826252: "#NUM!",
    -2146826265: "#REF!",
    -2146826273: "#VALUE!",
}


# --------------------------------------------------------------------------- xlwings set-up


class _ExcelLikeEngineImpl:
    """Value cleaning as in xlwings' Windows engine (``_xlwindows.Engine``), minus pywin32."""

    name = "excel"
    type = "desktop"

    @staticmethod
    def clean_value_data(data, datetime_builder, empty_as, number_builder, err_to_str):
        def clean(value):
            if value in ("", None):
                return empty_as
            if number_builder is not None and isinstance(value, float):
                return number_builder(value)
            if isinstance(value, int) and not isinstance(value, bool) and value in COM_ERRORS:
                return COM_ERRORS[value] if err_to_str else None
            return value

        return [[clean(c) for c in row] for row in data]

    @staticmethod
    def prepare_xl_data_element(x, date_format):
        import numpy as np
        import pandas as pd

        if x is None:
            return ""
        if isinstance(x, float | np.floating) and np.isnan(x):
            return ""
        if isinstance(x, np.number):
            return float(x)
        if not isinstance(x, str | bool | int | float) and pd.isna(x):
            return ""
        return x


@pytest.fixture(scope="module")
def xl():
    """Real xlwings UDF decorators and conversion, a test engine, and our re-imported module."""
    import xlwings
    from xlwings import conversion
    from xlwings.main import Engine

    stubs = {
        name: types.ModuleType(name)
        for name in ("pythoncom", "pywintypes", "win32com", "win32com.client")
    }
    stubs["pythoncom"].CoInitialize = lambda: None
    stubs["win32com.client"].Dispatch = None
    stubs["win32com"].client = stubs["win32com.client"]
    saved_modules = {name: sys.modules.get(name) for name in [*stubs, "xlwings.udfs"]}
    sys.modules.update(stubs)
    real_udfs = importlib.import_module("xlwings.udfs")

    saved_decorators = (xlwings.func, xlwings.arg, xlwings.ret)
    xlwings.func, xlwings.arg, xlwings.ret = real_udfs.xlfunc, real_udfs.xlarg, real_udfs.xlret
    added_engine = "excel" not in xlwings.engines.engines_by_name
    if added_engine:
        xlwings.engines.add(Engine(impl=_ExcelLikeEngineImpl()))
    try:
        from stratpd_xl.excel import udfs

        udfs.wait_for_warm_up(120)  # the first import's warm-up, before reload replaces it
        udfs = importlib.reload(udfs)
        udfs.wait_for_warm_up(120)
        yield types.SimpleNamespace(udfs=udfs, conversion=conversion, xlwings_udfs=real_udfs)
    finally:
        xlwings.func, xlwings.arg, xlwings.ret = saved_decorators
        if added_engine:
            engine = xlwings.engines.engines_by_name.pop("excel")
            xlwings.engines.engines.remove(engine)
        for name, module in saved_modules.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def call_like_excel(xl, func, *args: Any, caller: Any = None) -> list[list[Any]]:
    """Call a UDF the way ``xlwings.udfs.call_udf`` does and return what goes back to Excel."""
    info = func.__xlfunc__
    values = list(args) + [MISSING] * (len(info["args"]) - len(args))
    converted = []
    for arg_info, value in zip(info["args"], values, strict=True):
        if arg_info["name"] == "caller":
            # call_udf puts the caller Range in and converts it like any other argument.
            converted.append(xl.conversion.read(None, caller, arg_info["options"]))
        elif isinstance(value, int) and value == MISSING:
            converted.append(arg_info.get("optional"))
        else:
            converted.append(xl.conversion.read(None, value, arg_info["options"]))
    result = func(*converted)
    out = xl.conversion.write(result, None, info["ret"]["options"])
    assert isinstance(out, list) and all(isinstance(r, list) for r in out), "must be 2-D"
    assert len({len(r) for r in out}) == 1, "rows must have equal length to spill"
    return out


# --------------------------------------------------------------------------- data


def _diamonds_cells(n: int = 400) -> tuple[tuple[Any, ...], ...]:
    """First n rows of the bundled diamonds data as Excel passes a range: tuples, floats."""
    path = ROOT / "stratpd_xl" / "data" / "diamonds.csv"
    with path.open(newline="") as f:
        rows = list(csv.reader(f))[: n + 1]
    header, body = rows[0], rows[1:]

    def cell(text: str) -> Any:
        try:
            return float(text)
        except ValueError:
            return text

    return (tuple(header), *(tuple(cell(v) for v in row) for row in body))


@pytest.fixture(scope="module")
def cells():
    return _diamonds_cells()


# --------------------------------------------------------------------------- recording fakes


class FakePicture:
    def __init__(self, log, pictures, name, left, top, png):
        self.log, self.pictures = log, pictures
        self._name, self.left, self.top, self.png = name, left, top, png

    @property
    def name(self):
        return self._name

    @name.setter
    def name(self, new):
        assert new not in self.pictures.items
        self.log.append(("rename", self._name, new))
        self.pictures.items[new] = self.pictures.items.pop(self._name)
        self._name = new

    def update(self, path):
        self.png = Path(path).read_bytes()
        self.log.append(("update", self.name))
        return self

    def delete(self):
        self.log.append(("delete", self.name))
        del self.pictures.items[self.name]


class FakePictures:
    def __init__(self, log):
        self.log, self.items = log, {}

    def __contains__(self, name):
        return name in self.items

    def __iter__(self):
        return iter(list(self.items.values()))

    def __getitem__(self, name):
        return self.items[name]

    def add(self, path, *, name, left, top):
        assert name not in self.items, "xlwings raises ShapeAlreadyExists here"
        self.items[name] = FakePicture(self.log, self, name, left, top, Path(path).read_bytes())
        self.log.append(("add", name, left, top))
        return self.items[name]


class FakeSheet:
    def __init__(self, name="Sheet1"):
        self.name, self.book = name, types.SimpleNamespace(name="Book1.xlsx")
        self.log: list[tuple] = []
        self.pictures = FakePictures(self.log)


def _column_letters(col: int) -> str:
    letters = ""
    while col:
        col, rem = divmod(col - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


class FakeCell:
    """A caller cell: 64 points wide columns, 20 points high rows."""

    def __init__(self, sheet, row, col):
        self.sheet, self.row, self.column = sheet, row, col

    @property
    def address(self):
        return f"${_column_letters(self.column)}${self.row}"

    @property
    def left(self):
        return (self.column - 1) * 64.0

    @property
    def top(self):
        return (self.row - 1) * 20.0

    def offset(self, rows, cols):
        return FakeCell(self.sheet, self.row + rows, self.column + cols)


# --------------------------------------------------------------------------- formulas


def test_vba_wrapper_shows_the_excel_signature_without_caller(xl):
    class AddinBook:
        Name = "stratpd_xl.xlam"

    out = io.StringIO()
    xl.xlwings_udfs.generate_vba_wrapper("stratpd_xl.excel.udfs", xl.udfs, out, AddinBook())
    vba = out.getvalue()
    assert (
        "Function STRATPD(data, target, col, Optional min_samples_leaf, Optional trials, "
        "Optional chart, Optional max_points, Optional positive, Optional exclude, "
        "Optional keep, Optional classes)"
    ) in vba
    # New arguments go last, so formulas written before them keep their meaning.
    assert ("Function STRATIMPACT(data, target, Optional min_samples_leaf, Optional positive, "
            "Optional exclude, Optional keep, Optional classes)") in vba
    assert 'XLPy.CallUDF("stratpd_xl.excel.udfs", "STRATPD"' in vba
    assert "ActiveWorkbook, Application.Caller" in vba  # add-ins call with the active book
    assert "CommandBars" not in vba, "the wizard guard makes UDFs show 0 on open"
    # What Excel's function wizard shows (xlwings passes at most 255 characters on).
    for func in (xl.udfs.STRATPD, xl.udfs.STRATIMPACT):
        info = func.__xlfunc__
        assert info["category"] == "StratPD"
        assert len(info["ret"]["doc"]) <= 255 and "Parameters" not in info["ret"]["doc"]
        assert all(0 < len(a["doc"]) <= 255 for a in info["args"] if a["name"] != "caller")


def test_stratpd_numeric_curve_spills_header_and_rows(xl, cells):
    out = call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "carat")
    assert out[0] == ["carat", "partial dependence", "slopes averaged"]
    body = out[1:]
    assert len(body) > 10
    xs = [r[0] for r in body]
    assert xs == sorted(xs) and len(set(xs)) == len(xs)
    assert body[0][1] < 0 < body[-1][1]  # centred on the rows, not pinned at the first x
    assert all(isinstance(r[1], float) and math.isfinite(r[1]) for r in body)
    # Heavier diamonds cost more, all else equal.
    assert body[-1][1] > body[0][1] + 500


def test_stratpd_categorical_column_with_band(xl, cells):
    out = call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "cut", 10.0, 5.0, False)
    assert out[0] == ["cut", "partial dependence", "rows", BAND_LOW, BAND_HIGH, ALL_LOW, ALL_HIGH]
    categories = [r[0] for r in out[1:]]
    assert set(categories) <= {"Fair", "Good", "Very Good", "Premium", "Ideal"}
    assert all(r[3] <= r[1] <= r[4] or r[3] == r[4] for r in out[1:])


def test_excel_errors_and_blank_cells_count_as_missing(xl, cells):
    dirty = [list(r) for r in cells]
    dirty[5][6] = -2146826246  # #N/A in price
    dirty[7][0] = None  # blank carat
    dirty[9][6] = -2146826281  # #DIV/0! in price
    read = xl.conversion.read(None, tuple(map(tuple, dirty)), xl.udfs.STRATPD_ARGS["data"])
    assert read[5][6] == "#N/A" and read[9][6] == "#DIV/0!" and read[7][0] is None
    clean = [r for i, r in enumerate(cells) if i not in (5, 7, 9)]
    out = call_like_excel(xl, xl.udfs.STRATPD, tuple(map(tuple, dirty)), "price", "carat")
    assert out == call_like_excel(xl, xl.udfs.STRATPD, tuple(clean), "price", "carat")


def test_bad_input_is_one_readable_cell(xl, cells):
    out = call_like_excel(xl, xl.udfs.STRATPD, cells, "pricee", "carat")
    assert len(out) == 1 and len(out[0]) == 1
    text = out[0][0]
    assert text.startswith('STRATPD: target column "pricee" not found')
    assert "price" in text and "Traceback" not in text
    cases = {
        (cells, "price", "carat", 2.5):
            "min_samples_leaf (argument 4 of STRATPD) must be a whole number",
        (cells, "price", "carat", 0.0):
            "min_samples_leaf (argument 4 of STRATPD) must be a whole number between 1",
        (cells, "price", "carat", 10.0, 500.0):
            "trials (argument 5 of STRATPD) must be a whole number between 1 and 200",
        (cells, "price", "carat", 10.0, 1.0, True, -1.0):
            "max_points (argument 7 of STRATPD) must be a whole number",
        (cells, "price", "carat", 10.0, "many"):
            "trials (argument 5 of STRATPD) must be a whole number",
        (cells, "price", "carat", 10.0, 1.0, "maybe"):
            "chart (argument 6 of STRATPD) must be TRUE or FALSE",
        (cells[:5], "price", "carat"): "StratPD needs at least",
        ("A1", "price", "carat"): "no data rows",  # ndim=2 makes one cell a 1x1 table
        (cells, "price", "price"): "both the target and the feature",
    }
    for args, expected in cases.items():
        got = call_like_excel(xl, xl.udfs.STRATPD, *args)
        assert len(got) == 1 and got[0][0].startswith("STRATPD: "), (args[1:], got)
        assert expected in got[0][0], (args[1:], got)


def test_blank_or_text_optional_cells(xl, cells):
    def stratpd(*args):
        return call_like_excel(xl, xl.udfs.STRATPD, cells, *args)

    default = stratpd("price", "carat")
    # Optional arguments pointing at blank cells arrive as None: the defaults apply.
    assert stratpd("price", "carat", None, None, None) == default
    # Numbers typed as text and TRUE/FALSE in words are understood.
    assert stratpd("price", "carat", "10", "1", "TRUE") == default
    # Column names are matched ignoring case and surrounding spaces.
    assert stratpd(" PRICE ", "Carat") == default


def test_stratimpact_ranks_columns(xl, cells):
    out = call_like_excel(xl, xl.udfs.STRATIMPACT, cells, "price")
    assert out[0] == ["feature", "kind", "impact", "share", "rows", "thin",
                      "evidence"]
    features = [r[0] for r in out[1:]]
    assert sorted(features) == sorted(c for c in cells[0] if c != "price")
    # Largest first among the features whose effects the data show, then those set apart
    # (carat and x, y, z carry the same size: tied), each group by impact.
    shown = [r[2] for r in out[1:] if r[6] == ""]
    apart = [r[2] for r in out[1:] if r[6] != ""]
    assert [r[2] for r in out[1:]] == shown + apart
    assert shown == sorted(shown, reverse=True) and apart == sorted(apart, reverse=True)
    assert next(r[6] for r in out[1:] if r[0] == "carat").startswith("tied to ")
    assert abs(sum(r[3] for r in out[1:]) - 1.0) < 1e-9
    bad = call_like_excel(xl, xl.udfs.STRATIMPACT, cells, "colour")
    assert bad[0][0].startswith('STRATIMPACT: target column "colour" not found')


def test_stratimpact_leaves_an_id_column_out_but_stratpd_can_name_it(xl, cells):
    # A text column with a different value in every row would split the rows into groups of
    # one; the ranking leaves it out (as the CLI and the ribbon do), a named col keeps it.
    with_id = [[*cells[0], "order id"]] + [[*r, f"A-{i:05d}"] for i, r in enumerate(cells[1:])]
    out = call_like_excel(xl, xl.udfs.STRATIMPACT, with_id, "price")
    assert "order id" not in [r[0] for r in out[1:]]
    assert out == call_like_excel(xl, xl.udfs.STRATIMPACT, cells, "price")
    named = call_like_excel(xl, xl.udfs.STRATPD, with_id, "price", "order id", 10, 1, False)
    assert named[0] == ["order id", "partial dependence", "rows"]


def test_stratimpact_of_only_ids_names_its_keep_argument(xl):
    from tests.test_identifiers import _only_ids

    frame = _only_ids()
    ids = (tuple(frame.columns), *(tuple(float(v) for v in row)
                                   for row in frame.itertuples(index=False)))
    out = call_like_excel(xl, xl.udfs.STRATIMPACT, ids, "spend")
    assert len(out) == 1 and '"rownames" and "CustomerID" look like identifiers' in out[0][0]
    assert "give its name as keep (argument 6 of STRATIMPACT)" in out[0][0], out[0][0]


def test_plain_python_with_a_dataframe_and_no_caller(xl, cells):
    import pandas as pd

    frame = pd.DataFrame([list(r) for r in cells[1:]], columns=list(cells[0]))
    out = xl.udfs.STRATPD(frame, "price", "carat")
    assert out == call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "carat")
    assert xl.udfs.STRATIMPACT(frame, "price")[0] == ["feature", "kind", "impact", "share",
                                                       "rows", "thin", "evidence"]


def test_recalculation_is_served_from_the_cache(xl, cells, monkeypatch):
    import stratpd_xl.engine as engine

    calls = []
    real = engine.partial_dependence

    def counting(*args, **kwargs):
        calls.append(args[1:3])
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "partial_dependence", counting)
    xl.udfs.clear_cache()
    first = call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "depth")
    again = call_like_excel(xl, xl.udfs.STRATPD, tuple(list(r) for r in cells), "price", "depth")
    assert first == again and len(calls) == 1
    call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "depth", 20.0)  # new argument
    changed = [list(r) for r in cells]
    changed[1][6] = changed[1][6] + 1.0  # one edited cell
    call_like_excel(xl, xl.udfs.STRATPD, tuple(map(tuple, changed)), "price", "depth")
    assert len(calls) == 3


def test_cache_key_is_a_digest_of_the_typed_table():
    from stratpd_xl.input.sheet import frame_from_cells
    from stratpd_xl.spreadsheet import _frame_key

    def key(cells):
        return _frame_key(frame_from_cells(cells))

    a = key([["x", "y"], [1.0, 2.0], [3.0, "b"]])
    assert a == key((("x", "y"), (1.0, 2.0), (3.0, "b")))  # list or tuple: the same cells
    # A number stored as text is the same number once typed, so it gives the same answer.
    assert a == key([["x", "y"], ["1.0", 2.0], [3.0, "b"]])
    assert a != key([["x", "y"], [1.0000000000000002, 2.0], [3.0, "b"]])  # one ulp
    assert a != key([["x", "y"], [1.0, 2.0], [3.0, "c"]])  # one text
    assert a != key([["x", "z"], [1.0, 2.0], [3.0, "b"]])  # a column name
    assert a != key([["x", "y"], [1.0, 2.0], [3.0, None]])  # a blank
    assert len(repr(a)) < 120


def test_a_curve_is_summarised_by_default_and_in_full_on_request(xl, cells):
    short = call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "carat", 10.0, 1.0, False, 30.0)
    assert len(short) <= 31 and short[0][-1] == "values summarised"
    full = call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "carat", 10.0, 1.0, False, 0.0)
    assert "values summarised" not in full[0]
    assert len(full) - 1 == sum(row[-1] for row in short[1:])
    assert len(full) - 1 <= 200  # so the default (200 points) is every point here
    assert call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "carat") == full


def test_cache_is_bounded():
    from stratpd_xl.spreadsheet import _LRU

    lru = _LRU(2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.get("a") == 1  # "a" is now the most recent
    lru.put("c", 3)
    assert lru.get("b") is None and lru.get("a") == 1 and lru.get("c") == 3


def test_warm_up_runs_both_kernels_and_the_chart(xl, monkeypatch):
    from stratpd_xl import spreadsheet

    # Importing the formulas started it (no test may switch it off for the others: conftest).
    thread = spreadsheet._warm_up_thread
    assert thread is not None and thread.name == "stratpd-warm-up", "no warm-up thread"
    assert xl.udfs.wait_for_warm_up(300), "the import-time warm-up did not finish"
    import stratpd_xl.engine as engine
    import stratpd_xl.presentation.charts as charts

    seen = []
    real_pd, real_png = engine.partial_dependence, charts.figure_png

    def recording_pd(data, target, feature, **kw):
        result = real_pd(data, target, feature, **kw)
        seen.append((feature, result.attrs["kind"]))
        return result

    def recording_png(fig, **kw):
        seen.append(("png", len(real_png(fig, **kw)) > 0))
        return b""

    monkeypatch.setattr(engine, "partial_dependence", recording_pd)
    monkeypatch.setattr(charts, "figure_png", recording_png)
    spreadsheet._warm_up()
    assert seen == [("x", "numeric"), ("c", "categorical"), ("png", True)]


# --------------------------------------------------------------------------- pictures


def test_picture_beside_the_table_named_after_the_formula_cell(xl, cells):
    sheet = FakeSheet()
    caller = FakeCell(sheet, 2, 2)  # =STRATPD(...) in B2
    out = call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "carat", caller=caller)
    assert len(out[0]) == 3
    # Table in B:D, one empty column (E), picture from F2.
    assert sheet.log == [("add", "StratPD B2", 5 * 64.0, 20.0)]
    assert sheet.pictures["StratPD B2"].png.startswith(b"\x89PNG")


def test_recalculation_replaces_the_picture_in_place(xl, cells):
    sheet = FakeSheet()
    caller = FakeCell(sheet, 2, 2)
    call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "carat", caller=caller)
    picture = sheet.pictures["StratPD B2"]
    picture.left, picture.top = 900.0, 300.0  # the user moved it
    call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "carat", caller=caller)
    assert len(sheet.log) == 1, "an unchanged chart is not re-inserted"
    old_png = picture.png
    call_like_excel(xl, xl.udfs.STRATPD, cells[:300], "price", "carat", caller=caller)
    assert sheet.log[1:] == [("update", "StratPD B2")]
    assert list(sheet.pictures.items) == ["StratPD B2"]
    assert (picture.left, picture.top) == (900.0, 300.0) and picture.png != old_png


def test_picture_moves_right_when_the_table_grows_under_it(xl, cells):
    sheet = FakeSheet()
    caller = FakeCell(sheet, 2, 2)
    call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "cut", caller=caller)  # 3 columns
    call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "cut", 10.0, 3.0, caller=caller)
    picture = sheet.pictures["StratPD B2"]
    # 7 columns B:H (category, pd, rows, the two bands' ends), gap I, picture at J
    assert picture.left == (2 + 7 + 1 - 1) * 64.0


def test_two_formulas_keep_two_pictures(xl, cells):
    sheet = FakeSheet()
    first, second = FakeCell(sheet, 2, 2), FakeCell(sheet, 2, 12)
    call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "carat", caller=first)
    call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "depth", caller=second)
    call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "carat", caller=first)
    assert sorted(sheet.pictures.items) == ["StratPD B2", "StratPD L2"]
    assert [e[0] for e in sheet.log] == ["add", "add"]


def test_chart_false_and_errors_leave_no_picture(xl, cells):
    sheet = FakeSheet()
    caller = FakeCell(sheet, 3, 1)
    call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "carat", caller=caller)
    assert "StratPD A3" in sheet.pictures
    out = call_like_excel(
        xl, xl.udfs.STRATPD, cells, "price", "carat", MISSING, MISSING, False, caller=caller
    )
    assert out[0][0] == "carat" and "StratPD A3" not in sheet.pictures
    call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "carat", caller=caller)
    out = call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "karat", caller=caller)
    assert out[0][0].startswith("STRATPD: ") and "StratPD A3" not in sheet.pictures
    assert [e[0] for e in sheet.log] == ["add", "delete", "add", "delete"]


def test_inserted_rows_move_formula_and_picture_without_an_orphan(xl, cells):
    sheet = FakeSheet()
    call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "carat", caller=FakeCell(sheet, 2, 2))
    # Two rows inserted above: Excel moves the formula to B4 and the picture down with it.
    sheet.pictures["StratPD B2"].top += 2 * 20.0
    ribbon_picture = sheet.pictures.add(__file__, name="StratPD curve carat", left=5 * 64.0,
                                        top=3 * 20.0)  # not ours to take over
    call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "carat", caller=FakeCell(sheet, 4, 2))
    assert sorted(sheet.pictures.items) == ["StratPD B4", "StratPD curve carat"]
    assert ("rename", "StratPD B2", "StratPD B4") in sheet.log
    assert ribbon_picture.name == "StratPD curve carat"
    assert [e[0] for e in sheet.log].count("add") == 2  # the first picture and the stranger


def test_picture_name_comes_from_the_top_left_cell():
    from stratpd_xl.excel.pictures import picture_name, top_left_cell

    assert picture_name("$B$2") == "StratPD B2"
    assert picture_name("$AA$10:$AC$40") == "StratPD AA10"
    assert top_left_cell("'My sheet'!$C$7") == "C7"


def test_a_failing_picture_does_not_cost_the_table(xl, cells):
    class BrokenPictures(FakePictures):
        def add(self, *args, **kwargs):
            raise RuntimeError("sheet is protected")

    sheet = FakeSheet()
    sheet.pictures = BrokenPictures(sheet.log)
    caller = FakeCell(sheet, 1, 1)
    out = call_like_excel(xl, xl.udfs.STRATPD, cells, "price", "carat", caller=caller)
    assert out[0] == ["carat", "partial dependence", "slopes averaged"]


# --------------------------------------------------------------------------- workbook template


def _load_template_builder():
    spec = importlib.util.spec_from_file_location(
        "build_templates", ROOT / "workbook_templates" / "build_templates.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _formula_args(formula: str, book) -> tuple[str, list[Any]]:
    """``=STRATPD(Data!$A$1:$J$5001,"price","cut",10,20)`` -> ("STRATPD", [cells, ...])."""
    match = re.fullmatch(r"=?(\w+)\((.*)\)", formula)
    name, inner = match.group(1), match.group(2)
    args: list[Any] = []
    for part in re.findall(r'"[^"]*"|[^,]+', inner):
        if "!" in part:
            sheet_name, ref = part.split("!")
            rows = book[sheet_name][ref.replace("$", "")]
            # As Excel hands a range over COM: numbers as floats, blanks as None.
            args.append(
                tuple(
                    tuple(
                        float(c.value) if isinstance(c.value, int | float) else c.value for c in row
                    )
                    for row in rows
                )
            )
        elif part.startswith('"'):
            args.append(part.strip('"'))
        else:
            args.append(float(part))
    return name, args


def test_template_formulas_compute_from_its_own_data(xl):
    import openpyxl

    path = ROOT / "workbook_templates" / "stratpd_diamonds.xlsx"
    book = openpyxl.load_workbook(path)
    assert book.sheetnames[:2] == ["Start here", "Data"]
    data = book["Data"]
    assert data.max_row == 5001 and data.cell(1, data.max_column).value == "price"
    expected_header = {
        "Impact": ["feature", "kind", "impact", "share", "rows", "thin",
                   "evidence"],
        # carat has more distinct values than max_points, so its curve is summarised.
        "Carat": ["carat", "partial dependence", "slopes averaged", "values summarised"],
        "Cut": ["cut", "partial dependence", "rows", BAND_LOW, BAND_HIGH, ALL_LOW, ALL_HIGH],
    }
    for sheet_name, header in expected_header.items():
        cell = book[sheet_name]["A3"].value
        formula = getattr(cell, "text", cell)  # a dynamic-array formula is an ArrayFormula
        assert isinstance(formula, str) and formula.lstrip("=").startswith("STRAT"), formula
        name, args = _formula_args(formula, book)
        out = call_like_excel(xl, getattr(xl.udfs, name), *args)
        assert out[0] == header, (sheet_name, out[0])
        assert len(out) > 3


def test_template_build_is_reproducible():
    builder = _load_template_builder()
    assert builder.build_bytes() == builder.build_bytes()
    assert builder.main(["--check"]) == 0, "run: python workbook_templates/build_templates.py"


def test_by_group_and_surface_formulas_through_xlwings(xl, cells):
    sheet = FakeSheet()
    caller = FakeCell(sheet, 2, 2)
    out = call_like_excel(xl, xl.udfs.STRATPDBY, cells, "price", "carat", "cut", caller=caller)
    assert out[0][:3] == ["cut", "carat", "partial dependence"]
    assert {r[0] for r in out[1:]} <= {"Fair", "Good", "Very Good", "Premium", "Ideal"}
    assert sheet.log == [("add", "StratPD B2", (2 + len(out[0])) * 64.0, 20.0)]
    other = FakeCell(sheet, 2, 20)
    out = call_like_excel(xl, xl.udfs.STRATPD2, cells, "price", "carat", "depth", 3.0,
                          caller=other)
    assert out[0][:3] == ["carat", "depth", "partial dependence"] and len(out) == 1 + 3 * 3
    assert sorted(sheet.pictures.items) == ["StratPD B2", "StratPD T2"]
    out = call_like_excel(xl, xl.udfs.STRATPD2, cells, "price", "carat", "carat", caller=other)
    assert out[0][0].startswith("STRATPD2: ") and "StratPD T2" not in sheet.pictures


# --------------------------------------------------------------------------- mixed ranges


def _business_cells(cells, kinds: tuple[str, ...]) -> tuple[tuple[Any, ...], ...]:
    """The diamonds cells with extra columns as a business table holds them: dates, times of
    day, TRUE/FALSE and error cells, as Excel hands them to xlwings (datetimes, floats for
    times, bools, COM error integers)."""
    import datetime as dt

    extra_header = {"date": "order date", "time": "order time", "bool": "paid",
                    "error": "margin"}
    rows = [list(cells[0]) + [extra_header[k] for k in kinds]]
    for i, row in enumerate(cells[1:]):
        more = []
        for k in kinds:
            if k == "date":
                more.append(dt.datetime(2024, 1, 1) + dt.timedelta(days=i % 300))
            elif k == "time":
                more.append((i % 96) / 96)  # a time of day is a fraction of a day in Excel
            elif k == "bool":
                more.append(i % 3 == 0)
            else:
                more.append(-2146826281 if i % 7 == 0 else float(i % 11))  # #DIV/0!
        rows.append(list(row) + more)
    return tuple(map(tuple, rows))


@pytest.mark.parametrize(
    "kinds", [("date",), ("time",), ("bool",), ("error",), ("date", "time", "bool", "error")]
)
def test_formulas_work_on_ranges_with_dates_times_booleans_and_errors(xl, cells, kinds):
    # A date column anywhere in the range made both formulas answer "internal error ...
    # cannot include dtype 'M' in a buffer" (the cache key hashed the date array).
    data = _business_cells(cells, kinds)
    curve = call_like_excel(xl, xl.udfs.STRATPD, data, "price", "carat")
    assert curve[0] == ["carat", "partial dependence", "slopes averaged"], curve[:2]
    again = call_like_excel(xl, xl.udfs.STRATPD, data, "price", "carat")
    assert again == curve  # served from the cache, keyed on the dates too
    ranked = call_like_excel(xl, xl.udfs.STRATIMPACT, data, "price")
    assert ranked[0] == ["feature", "kind", "impact", "share", "rows", "thin",
                         "evidence"], ranked[:2]
    assert len(ranked) > 5


def test_a_date_column_as_the_feature_gives_a_curve(xl, cells):
    data = _business_cells(cells, ("date",))
    out = call_like_excel(xl, xl.udfs.STRATPD, data, "price", "order date")
    assert len(out) > 2 and not str(out[0][0]).startswith("STRATPD:"), out[:2]


def test_the_cache_key_tells_dates_apart():
    import datetime as dt

    import pandas as pd

    from stratpd_xl.spreadsheet import _frame_key

    def frame(day):
        return pd.DataFrame({"d": pd.to_datetime([dt.datetime(2024, 1, day)] * 3),
                             "t": pd.to_timedelta([1, 2, 3], unit="h")})

    assert _frame_key(frame(1)) == _frame_key(frame(1)) != _frame_key(frame(2))


def _bikes_cells(n: int = 1500) -> tuple[tuple[Any, ...], ...]:
    """Bikeshare's leak as Excel passes the range: bikers = casual + registered."""
    from tests.test_exclude import bikeshare

    frame = bikeshare(n)
    return (tuple(frame.columns),
            *(tuple(float(v) if not isinstance(v, str) else v for v in row)
              for row in frame.itertuples(index=False)))


def test_exclude_as_a_range_or_a_comma_text_in_every_formula(xl):
    bikes = _bikes_cells()
    leaked = call_like_excel(xl, xl.udfs.STRATIMPACT, bikes, "bikers")
    assert {leaked[1][0], leaked[2][0]} == {"casual", "registered"}
    # A column of two cells (a blank third one), as Excel hands a range over COM.
    names = (("casual",), ("Registered",), (None,))
    ranked = call_like_excel(xl, xl.udfs.STRATIMPACT, bikes, "bikers", MISSING, MISSING, names)
    assert [r[0] for r in ranked[1:]] == ["hour", "weather", "temp"]
    # One cell holding a comma list: the same answer.
    curve = call_like_excel(xl, xl.udfs.STRATPD, bikes, "bikers", "hour", *[MISSING] * 5,
                            "casual, registered")
    values = [r[1] for r in curve[1:]]
    assert max(values) - min(values) > 20  # the hour's effect is back (about 46 peak to peak)
    plain = call_like_excel(xl, xl.udfs.STRATPD, bikes, "bikers", "hour")
    assert max(r[1] for r in plain[1:]) - min(r[1] for r in plain[1:]) < 1
    for func, args in ((xl.udfs.STRATPDBY, ("hour", "weather", *[MISSING] * 5)),
                       (xl.udfs.STRATPD2, ("hour", "temp", 4.0, *[MISSING] * 3)),
                       (xl.udfs.STRATCOMPARE, ("hour", *[MISSING] * 4))):
        out = call_like_excel(xl, func, bikes, "bikers", *args, "casual,registered")
        assert len(out) > 3, out[0][0]
        bad = call_like_excel(xl, func, bikes, "bikers", *args, "casul")
        assert len(bad) == 1 and 'excluded column "casul" not found (did you mean "casual"?)' \
            in bad[0][0]
    target = call_like_excel(xl, xl.udfs.STRATIMPACT, bikes, "bikers", MISSING, MISSING,
                             "bikers")
    assert target[0][0].startswith("STRATIMPACT: \"bikers\" is the target, so it cannot be")


def test_keep_as_a_range_or_a_comma_text_in_every_formula(xl):
    from tests.test_identifiers import _credit

    frame = _credit()
    credit = (tuple(frame.columns), *(tuple(float(v) for v in row)
                                      for row in frame.itertuples(index=False)))
    plain = call_like_excel(xl, xl.udfs.STRATIMPACT, credit, "balance")
    assert {r[0] for r in plain[1:]} == {"income", "limit"}
    # A column of names with a blank cell, as Excel hands a range over COM; then one text.
    names = (("RowNames",), (None,), ("id",))
    for keep in (names, "rownames, ID"):
        kept = call_like_excel(xl, xl.udfs.STRATIMPACT, credit, "balance", *[MISSING] * 3,
                               keep)
        assert {r[0] for r in kept[1:]} == {"income", "limit", "rownames", "ID"}, kept[:3]
    for func, args in ((xl.udfs.STRATPD, ("income", *[MISSING] * 6)),
                       (xl.udfs.STRATPDBY, ("income", "limit", *[MISSING] * 6)),
                       (xl.udfs.STRATPD2, ("income", "limit", 4.0, *[MISSING] * 4)),
                       (xl.udfs.STRATCOMPARE, ("income", *[MISSING] * 5))):
        before = call_like_excel(xl, func, credit, "balance", *args)
        after = call_like_excel(xl, func, credit, "balance", *args, "rownames")
        assert len(after) > 3 and after != before, after[0][0]
        bad = call_like_excel(xl, func, credit, "balance", *args, "rownmes")
        assert len(bad) == 1 and 'kept column "rownmes" not found' in bad[0][0], bad


def test_classes_as_all_a_comma_text_or_a_range(xl):
    from tests.synthetic import three_classes

    frame, _ = three_classes(n=600)
    flowers = (tuple(frame.columns), *(tuple(float(v) if not isinstance(v, str) else v
                                             for v in row)
                                       for row in frame.itertuples(index=False)))
    # Without classes, a text target of three values is one cell naming the argument.
    refused = call_like_excel(xl, xl.udfs.STRATPD, flowers, "y", "x")
    assert len(refused) == 1 and "classes (argument 11 of STRATPD)" in refused[0][0]
    every = call_like_excel(xl, xl.udfs.STRATPD, flowers, "y", "x", *[MISSING] * 7, "all")
    assert every[0][:3] == ["class", "x", "change in P(y = class), points"]
    assert [r[0] for r in every[1:]] == sorted(r[0] for r in every[1:])
    assert {r[0] for r in every[1:]} == {"a", "b", "c"}
    by_class = {c: [r[2] for r in every[1:] if r[0] == c] for c in "abc"}
    assert max(abs(a + b + c) for a, b, c in zip(*by_class.values(), strict=True)) < 1e-9
    for picked in ("c, a", (("c",), (None,), ("a",))):
        two = call_like_excel(xl, xl.udfs.STRATPD, flowers, "y", "x", *[MISSING] * 7, picked)
        assert [r[0] for r in two[1:]] == ["c"] * len(by_class["c"]) + ["a"] * len(
            by_class["a"]), picked
    ranked = call_like_excel(xl, xl.udfs.STRATIMPACT, flowers, "y", *[MISSING] * 4, True)
    assert ranked[0][:3] == ["feature", "kind", "class"] and ranked[1][:3] == [
        "x", "numeric", "b"]
    compared = call_like_excel(xl, xl.udfs.STRATCOMPARE, flowers, "y", "x", *[MISSING] * 6,
                               "all")
    assert compared[0][:3] == ["class", "x", "StratPD (data)"], compared[0]
    assert {r[0] for r in compared[1:] if r[0] in ("a", "b", "c")} == {"a", "b", "c"}
    bad = call_like_excel(xl, xl.udfs.STRATPD, flowers, "y", "x", *[MISSING] * 7, "d")
    assert bad == [['STRATPD: class "d" does not occur in target "y"; its classes are: '
                    '"a", "b", "c"']]


def _first(rows: tuple[tuple[Any, ...], ...], width: int) -> tuple[tuple[Any, ...], ...]:
    """The same cells with the last ``width`` columns moved to the front of the range."""
    return tuple(tuple(r[-width:]) + tuple(r[:-width]) for r in rows)


@pytest.mark.parametrize("kind", ["date", "time", "bool", "error"])
def test_every_formula_takes_a_mixed_column_anywhere_and_as_any_argument(xl, cells, kind):
    # Mixed columns were checked beside the features (STRATPD, STRATIMPACT); here they lead
    # the range and are the feature, the group, the pair's second column and the target.
    name = {"date": "order date", "time": "order time", "bool": "paid", "error": "margin"}[kind]
    data = _first(_business_cells(cells, (kind,)), 1)

    def answer(out: list[list[Any]], formula: str) -> None:
        said = str(out[0][0])
        # A table, or one sentence naming the fix; never "internal error ... dtype 'M'".
        assert len(out) > 1 or said.startswith(f"{formula}: "), said
        assert not any(w in said for w in ("internal", "Traceback", "dtype")), said

    for formula, args in (
        ("STRATPD", ("price", name)), ("STRATCOMPARE", ("price", name)),
        ("STRATIMPACT", ("price",)), ("STRATPD2", ("price", "carat", name)),
        ("STRATPDBY", ("price", "carat", name)),
    ):
        out = call_like_excel(xl, getattr(xl.udfs, formula), data, *args)
        answer(out, formula)
        if formula in ("STRATPD", "STRATIMPACT") and kind != "error":
            assert len(out) > 2, (formula, out[:2])
    # As the target: a sentence in one cell, or an answer (numbers with error cells blank).
    out = call_like_excel(xl, xl.udfs.STRATIMPACT, data, name)
    answer(out, "STRATIMPACT")
    if kind == "date":  # dates are no numbers to explain (a time of day is a fraction)
        assert len(out) == 1 and str(out[0][0]).startswith("STRATIMPACT: "), out[:2]
    else:
        assert out[0] == ["feature", "kind", "impact", "share", "rows", "thin",
                          "evidence"], out[:2]


def test_every_formula_says_a_constant_target_has_nothing_to_explain(xl, cells):
    head = list(cells[0])
    at = head.index("price")
    const = (tuple(head), *(tuple(5.0 if k == at else v for k, v in enumerate(row))
                            for row in cells[1:]))
    for formula, args in (("STRATIMPACT", ()), ("STRATPD", ("carat",)),
                          ("STRATPDBY", ("carat", "cut")), ("STRATCOMPARE", ("carat",)),
                          ("STRATPD2", ("carat", "depth", 3.0))):
        out = call_like_excel(xl, getattr(xl.udfs, formula), const, "price", *args)
        assert len(out) == 1 and out[0][0] == (
            f'{formula}: target "price" has the same value (5) in every row used; nothing '
            "varies to explain: pick a target whose values vary"), out[:2]


def test_stratimpact_leaves_out_a_key_that_only_follows_the_other_columns(xl):
    # AER's CASchools: district codes numbered county by county; the formula ranks the
    # columns the command line ranks, and its keep argument (6) brings the key back.
    from tests.test_identifiers import _districts

    frame = _districts()
    cells = (tuple(frame.columns), *(tuple(v if isinstance(v, str) else float(v) for v in row)
                                     for row in frame.itertuples(index=False)))
    plain = call_like_excel(xl, xl.udfs.STRATIMPACT, cells, "math")
    assert "district" not in {r[0] for r in plain[1:]}
    kept = call_like_excel(xl, xl.udfs.STRATIMPACT, cells, "math", *[MISSING] * 3, "district")
    assert "district" in {r[0] for r in kept[1:]}
