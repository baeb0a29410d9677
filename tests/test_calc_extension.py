"""The Calc extension in real LibreOffice: built, installed into a fresh profile, driven headless.

One ``soffice --headless`` per module: the fixture builds the ``.oxt`` with the CLI, installs it
into a throw-away profile with ``unopkg`` (as the unprivileged user ``nobody`` when the tests
run as root, since unopkg refuses per-user installs as root), starts soffice on a local socket
and runs ``tests/calc_driver.py`` once with a Python that has ``uno`` (the system's).  The driver
types the tables, enters the formulas, reads the Function Wizard's entries and runs "Analyse
selection" through the dispatcher; the tests here compare what Calc shows with the Python API.

Without LibreOffice, ``uno`` or ``unopkg`` the module is skipped, except under CI (``CI=true``),
where ``.ci/run`` installs them and their absence is a failure.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import stratpd_xl as sx
from stratpd_xl import spreadsheet
from stratpd_xl.cli import main as cli_main
from stratpd_xl.errors import error_text
from stratpd_xl.input.sheet import frame_from_cells
from stratpd_xl.libreoffice import extension
from stratpd_xl.libreoffice import report as report_module
from stratpd_xl.presentation import words
from stratpd_xl.presentation.tables import BAND_HIGH, BAND_LOW
from tests.office import folder_for_calc, install_extension, require_calc_tools, run_calc
from tests.synthetic import three_classes
from tests.test_identifiers import _credit
from tests.test_ribbon import _diamonds as diamonds

ROOT = Path(__file__).resolve().parents[1]
ROWS = 300
DRIVER_TIMEOUT = 600  # one soffice start, one worker start (imports, compiled kernels), a report
COMMAND = extension.COMMAND


def _address(rows: int, cols: int, first: str = "M1") -> str:
    """``M1:P10``-style address of a block of the given size starting at ``first``."""
    col = ord(first[0]) - ord("A")
    row = int(first[1:])
    assert col + cols <= 26, "one-letter columns only"
    return f"{first}:{chr(ord('A') + col + cols - 1)}{row + rows - 1}"


DATA = diamonds(ROWS, last="z")  # the file's own order: price is not last
# Blank cells are missing values, as in Excel.
GAPPY = [list(r) for r in DATA[:121]]
GAPPY[5][0] = None
GAPPY[9][4] = None
# Columns left out: x, y and z nearly determine carat (the README's diamonds example); by a
# range of cells, by a text with commas, and by the named range the menu command reads.
DIMENSIONS = [["x"], ["y"], [None]]
# Columns kept although they look like row numbers or ids: by a text and by a range of cells.
CREDIT = [[*_credit().columns], *_credit().to_numpy().tolist()]
KEPT = [["ID"], [None], ["rownames"]]

# A formula that computes for about a CPU second (200 trials on 3,000 rows; 30 took under
# the killer's 0.3 s once BLAS ran one thread), for the worker to die in the
# middle of; its table changed by one cell first, so the worker's cache cannot answer.
SLOW = [list(r) for r in diamonds(3000, last="z")]
SLOW_FORMULA = 'STRATPD(A1:J3001;"price";"carat";;200)'
SLOW_EDIT = ("Slow", "J2", 2.5)
SLOW[1][9] = SLOW_EDIT[2]

# An error value (=NA() in G12, a price) is read as a missing value, as Excel's formulas do.
WITH_ERROR = [list(r) for r in DATA[:121]]
WITH_ERROR[11][6] = None

# A target with three classes (text): a curve per class, class first, and the ranking by
# the class each column moves most; classes is the last argument of both formulas.
_CLASSES, _ = three_classes(n=300)
CLASSES = [list(_CLASSES.columns), *_CLASSES.to_numpy().tolist()]


class _Expected:
    """The Python API's cells for what the driver types, each worked out when a test first
    needs it: at import, every process of a parallel run (pytest -n) computed all of them
    while collecting the suite (about 11 s of CPU each), and so did the files that import
    DATA from here."""

    @functools.cached_property
    def impact(self) -> list[list[Any]]:
        return spreadsheet.stratimpact(DATA, "price")

    @functools.cached_property
    def curve(self) -> list[list[Any]]:
        return spreadsheet.stratpd(DATA, "price", "carat").cells

    @functools.cached_property
    def cut(self) -> list[list[Any]]:
        return spreadsheet.stratpd(DATA, "price", "cut", min_samples_leaf=5, trials=3).cells

    @functools.cached_property
    def gappy(self) -> list[list[Any]]:
        return spreadsheet.stratimpact(GAPPY, "price")

    @functools.cached_property
    def by(self) -> list[list[Any]]:
        return spreadsheet.stratpdby(DATA, "price", "carat", "cut", min_samples_leaf=5).cells

    @functools.cached_property
    def two(self) -> list[list[Any]]:
        return spreadsheet.stratpd2(DATA, "price", "carat", "cut", grid=5).cells

    @functools.cached_property
    def compare(self) -> list[list[Any]]:
        return spreadsheet.stratcompare(DATA, "price", "carat").cells

    @functools.cached_property
    def exclude_range(self) -> list[list[Any]]:
        return spreadsheet.stratimpact(DATA, "price", exclude=DIMENSIONS)

    @functools.cached_property
    def exclude_text(self) -> list[list[Any]]:
        return spreadsheet.stratpd(DATA, "price", "carat", exclude="x, y, z").cells

    @functools.cached_property
    def keep_text(self) -> list[list[Any]]:
        return spreadsheet.stratimpact(CREDIT, "balance", keep="rownames, ID")

    @functools.cached_property
    def keep_range(self) -> list[list[Any]]:
        return spreadsheet.stratpd(CREDIT, "balance", "income", keep=KEPT).cells

    @functools.cached_property
    def slow(self) -> list[list[Any]]:
        return spreadsheet.stratpd(SLOW, "price", "carat", trials=200).cells

    @functools.cached_property
    def errors(self) -> list[list[Any]]:
        return spreadsheet.stratimpact(WITH_ERROR, "price")

    @functools.cached_property
    def classes(self) -> list[list[Any]]:
        return spreadsheet.stratpd(CLASSES, "y", "x", classes="all").cells

    @functools.cached_property
    def class_impact(self) -> list[list[Any]]:
        return spreadsheet.stratimpact(CLASSES, "y", classes="all")

    @functools.cached_property
    def class_compare(self) -> list[list[Any]]:
        return spreadsheet.stratcompare(CLASSES, "y", "x", classes="all").cells


EXPECTED = _Expected()


def _formulas() -> dict[str, tuple[str, str, str]]:
    """Each formula the driver enters: its sheet, the range it fills and its text."""
    e = EXPECTED
    return {
        "classes": ("Classes", _address(len(e.classes), len(e.classes[0]), "F1"),
                    'STRATPD(A1:D301;"y";"x";;;;;;;;"all")'),
        "class_impact": ("Classes", _address(len(e.class_impact),
                                             len(e.class_impact[0]), "M1"),
                         'STRATIMPACT(A1:D301;"y";;;;;"all")'),
        "class_compare": ("Classes", _address(len(e.class_compare),
                                              len(e.class_compare[0]), "U1"),
                          'STRATCOMPARE(A1:D301;"y";"x";;;;;;;"all")'),
        "impact": ("Data", _address(len(e.impact), len(e.impact[0])),
                   'STRATIMPACT(A1:J301;"price")'),
        "curve": ("Data", _address(len(e.curve), len(e.curve[0]), "M20"),
                  'STRATPD(A1:J301;"price";"carat")'),
        "cut": ("Data", _address(len(e.cut), len(e.cut[0]), "T1"),
                'STRATPD(A1:J301;"price";"cut";5;3)'),
        "spare_rows": ("Data", _address(len(e.impact) + 2, len(e.impact[0]), "T20"),
                       'STRATIMPACT(A1:J301;"price")'),
        "bad_target": ("Data", "M300", 'STRATPD(A1:J301;"pricex";"carat")'),
        "bad_leaf": ("Data", "M301", 'STRATIMPACT(A1:J301;"price";0)'),
        "one_cell": ("Data", "M302", 'STRATPD(A1;"price";"carat")'),
        "no_data": ("Data", "M303", "STRATPD()"),
        "gappy": ("Gaps", _address(len(e.gappy), len(e.gappy[0])),
                  'STRATIMPACT(A1:J121;"price")'),
        "by": ("Data", _address(len(e.by), len(e.by[0]), "M230"),
               'STRATPDBY(A1:J301;"price";"carat";"cut";;5)'),  # bands left blank
        "two": ("Data", _address(len(e.two), len(e.two[0]), "T40"),
                'STRATPD2(A1:J301;"price";"carat";"cut";5)'),
        "compare": ("Data", _address(len(e.compare), len(e.compare[0]), "E320"),
                    'STRATCOMPARE(A1:J301;"price";"carat")'),
        "exclude_range": ("Data", _address(len(e.exclude_range), len(e.exclude_range[0]),
                                           "L340"),
                          'STRATIMPACT(A1:J301;"price";;;$Names.A1:A3)'),
        "exclude_text": ("Data", _address(len(e.exclude_text),
                                          len(e.exclude_text[0]), "S340"),
                         'STRATPD(A1:J301;"price";"carat";;;;;;"x, y, z")'),
        "keep_text": ("Credit", _address(len(e.keep_text), len(e.keep_text[0]), "H1"),
                      'STRATIMPACT(A1:E401;"balance";;;;"rownames, ID")'),
        "keep_range": ("Credit", _address(len(e.keep_range), len(e.keep_range[0]),
                                          "P1"),
                       'STRATPD(A1:E401;"balance";"income";;;;;;;$Kept.A1:A3)'),
        # Whole columns: the extension reads only the used part of the 1,048,576 rows.
        "whole_columns": ("Whole", _address(len(e.impact), len(e.impact[0])),
                          'STRATIMPACT(A:J;"price")'),
        "slow": ("Slow", _address(len(e.slow), len(e.slow[0])), SLOW_FORMULA),
        # Calc itself answers for a range holding an error value; the README says so.
        "error_cell": ("Errors", _address(len(e.errors), len(e.errors[0])),
                       'STRATIMPACT(A1:J121;"price")'),
    }


def _run_calc(base: Path, python: str) -> dict[str, Any]:
    oxt = base / "stratpd-xl.oxt"
    assert cli_main(["libreoffice", "build", "-o", str(oxt)]) == 0
    profile = base / "profile"
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        install_extension(profile, oxt, extension.find_unopkg())
    else:  # the CLI's own install, into the throw-away profile
        assert cli_main(["libreoffice", "install", "--profile", str(profile)]) == 0
    request = {
        "tables": {"Data": DATA, "Gaps": GAPPY, "Errors": DATA[:121], "Names": DIMENSIONS,
                   "Slow": diamonds(3000, last="z"), "Whole": DATA, "Credit": CREDIT,
                   "Kept": KEPT, "Classes": CLASSES},
        "cell_formulas": {"Errors": {"G12": "=NA()"}},
        "formulas": {k: {"sheet": s, "range": r, "formula": f}
                     for k, (s, r, f) in _formulas().items()},
        # The target by name, as Insert > Named Expressions does it (the last column is "z").
        "names": {"StratPD_target": '"price"', "StratPD_exclude": "$Names.$A$1:$A$3",
                  "StratPD_trials": "10"},
        "select": {"sheet": "Data", "range": "A1:J301"},
        "select_bad": {"sheet": "Data", "range": "B1:C301"},  # cut and color, no "price"
        "command": COMMAND,
        # The worker killed in the middle of the slow formula (F9 after an edit), then a
        # plain F9 and a wait while the cell says it is starting a new worker.
        "timings": [
            {"label": "killed", "edit": list(SLOW_EDIT), "kill_worker_when_busy": str(base),
             "read": "slow", "recalculate": "f9"},
            {"label": "f9", "read": "slow", "recalculate": "f9",
             "wait_while": "STRATPD: the stratpd-xl worker stopped", "wait": 240},
        ],
    }
    # XDG_CACHE_HOME: the user's cache folder, where the menu's messages (a refusal, headless)
    # and the worker's log go, in this folder.
    result = run_calc(profile, request, base, python=python, timeout=DRIVER_TIMEOUT,
                      env={"XDG_CACHE_HOME": str(base)})
    log = base / "stratpd-xl" / "calc-messages.log"
    result["log"] = log.read_text(encoding="utf-8") if log.exists() else ""
    return result


@pytest.fixture(scope="module")
def calc() -> Iterator[dict[str, Any]]:
    python = require_calc_tools()
    with folder_for_calc("stratpd-calc-") as base:
        yield _run_calc(base, python)


def _numbers_close(got: list[list[Any]], expected: list[list[Any]]) -> None:
    assert len(got) == len(expected)
    for g_row, e_row in zip(got, expected, strict=True):
        for g, e in zip(g_row, e_row, strict=True):
            if isinstance(e, float):
                assert g == pytest.approx(e, rel=1e-12, abs=1e-12)
            elif isinstance(e, int) and not isinstance(e, bool):
                assert g == float(e)
            else:
                assert g == ("" if e is None else e)


def test_impact_is_the_python_apis(calc):
    got = calc["formulas"]["impact"]["cells"]
    _numbers_close(got, EXPECTED.impact)
    api = sx.impact(frame_from_cells(DATA), "price", random_state=0)
    # The API's ranking, its order and evidence too: both set apart the features whose
    # effects the data cannot show (carat and x, y, z determine each other: tied).
    assert [r[0] for r in got[1:]] == list(api["feature"])
    assert [r[2] for r in got[1:]] == pytest.approx(list(api["impact"]), rel=1e-12)
    assert [r[6] for r in got[1:]] == list(api["evidence"])
    apart = [r[0] for r in got[1:] if r[6]]
    assert "carat" in apart and [r[0] for r in got[-len(apart):]] == apart


def test_curves_are_the_python_apis(calc):
    _numbers_close(calc["formulas"]["curve"]["cells"], EXPECTED.curve)
    api = sx.stratpd(frame_from_cells(DATA), "price", "carat", random_state=0)
    got = calc["formulas"]["curve"]["cells"]
    assert [r[1] for r in got[1:]] == pytest.approx(list(api["pd"]), rel=1e-12)
    # A categorical feature with trials: the band columns come too.
    cut = calc["formulas"]["cut"]["cells"]
    _numbers_close(cut, EXPECTED.cut)
    assert BAND_LOW in cut[0] and BAND_HIGH in cut[0]


def test_a_target_with_classes_gives_a_curve_per_class_class_first(calc):
    assert EXPECTED.classes[0][:2] == ["class", "x"], "a curve per class, not an error cell"
    got = calc["formulas"]["classes"]["cells"]
    _numbers_close(got, EXPECTED.classes)
    assert {r[0] for r in got[1:]} == {"a", "b", "c"}
    ranking = calc["formulas"]["class_impact"]["cells"]
    _numbers_close(ranking, EXPECTED.class_impact)
    assert ranking[0][:3] == ["feature", "kind", "class"] and ranking[1][:3] == [
        "x", "numeric", "b"]
    # The model check per class: each class's curve beside the classifier's, class first.
    compared = calc["formulas"]["class_compare"]["cells"]
    _numbers_close(compared, EXPECTED.class_compare)
    assert compared[0][:3] == ["class", "x", "StratPD (data)"] and "model PDP" in compared[0]
    assert any(str(r[0]).startswith("Per class, StratPD's curve") for r in compared)


def test_the_interaction_formulas_are_the_python_apis(calc):
    assert len(EXPECTED.by) > 2 and len(EXPECTED.two) > 2, "curves, not error cells"
    _numbers_close(calc["formulas"]["by"]["cells"], EXPECTED.by)
    _numbers_close(calc["formulas"]["two"]["cells"], EXPECTED.two)


def test_the_model_check_formula_is_the_python_apis(calc):
    # =STRATCOMPARE: the side-by-side table and the model's sentences, as in Excel.
    assert len(EXPECTED.compare) > 10, "a table, not an error cell"
    assert EXPECTED.compare[0][1:] == ["StratPD (data)", "model PDP", "model ALE"]
    _numbers_close(calc["formulas"]["compare"]["cells"], EXPECTED.compare)


def test_exclude_by_a_range_by_a_text_and_by_the_named_range_of_the_report(calc):
    _numbers_close(calc["formulas"]["exclude_range"]["cells"], EXPECTED.exclude_range)
    _numbers_close(calc["formulas"]["exclude_text"]["cells"], EXPECTED.exclude_text)
    ranked = [r[0] for r in EXPECTED.exclude_range[1:]]
    assert "x" not in ranked and "y" not in ranked and "z" in ranked
    # The curve differs from the one with x, y and z among the strata.
    assert EXPECTED.exclude_text != EXPECTED.curve
    # The menu command read StratPD_exclude: the report ranks neither column, and says so.
    cells = calc["report"]["cells"]
    texts = {str(v) for row in cells for v in row if v}
    assert any(t.startswith('note: left out "x" and "y" as asked (exclude)') for t in texts)
    assert "x" not in {row[0] for row in cells if row}


def test_keep_by_a_text_and_by_a_range(calc):
    _numbers_close(calc["formulas"]["keep_text"]["cells"], EXPECTED.keep_text)
    assert {r[0] for r in EXPECTED.keep_text[1:]} == {"income", "limit", "rownames", "ID"}
    _numbers_close(calc["formulas"]["keep_range"]["cells"], EXPECTED.keep_range)
    # Kept in the strata, the row numbers (sorted by balance) change income's curve.
    assert EXPECTED.keep_range != spreadsheet.stratpd(CREDIT, "balance", "income").cells


def test_a_larger_array_range_shows_na_below_the_result(calc):
    got = calc["formulas"]["spare_rows"]["cells"]
    _numbers_close(got[: len(EXPECTED.impact)], EXPECTED.impact)
    # Calc's own "no value here" in each cell past the result (blank cells would read as "").
    below = calc["formulas"]["spare_rows"]["texts"][len(EXPECTED.impact):]
    assert below == [["#N/A"] * len(EXPECTED.impact[0])] * 2


def test_whole_columns_give_the_tables_cells(calc):
    _numbers_close(calc["formulas"]["whole_columns"]["cells"], EXPECTED.impact)


def test_blank_cells_are_missing_values(calc):
    _numbers_close(calc["formulas"]["gappy"]["cells"], EXPECTED.gappy)


def test_an_error_value_in_the_range_is_a_missing_value(calc):
    # The data argument reaches the extension as the range itself (so whole columns cost
    # nothing), and it reads an error value as Excel's formulas do: missing.
    _numbers_close(calc["formulas"]["error_cell"]["cells"], EXPECTED.errors)


def test_a_formula_without_its_data_is_calcs_own_error(calc):
    # data is the one argument the Function Wizard marks required; Calc refuses the call.
    assert calc["formulas"]["no_data"]["shown"].startswith("Err:")


@pytest.mark.parametrize(("key", "expected"), [
    ("bad_target", spreadsheet.stratpd(DATA, "pricex", "carat").cells[0][0]),
    ("bad_leaf", spreadsheet.stratimpact(DATA, "price", min_samples_leaf=0)[0][0]),
    ("one_cell", spreadsheet.stratpd([["carat"]], "price", "carat").cells[0][0]),
])
def test_errors_are_the_excel_formulas_one_cell_texts(calc, key, expected):
    assert calc["formulas"][key]["cells"] == [[expected]]
    assert expected.startswith(("STRATPD: ", "STRATIMPACT: ")) and "\n" not in expected


def test_function_wizard_lists_both_formulas_with_argument_help(calc):
    wizard = calc["wizard"]
    assert set(wizard) == set(extension.FORMULAS) >= {"STRATPD", "STRATIMPACT"}
    for description in extension.CALC_DESCRIPTIONS.values():  # Calc draws no picture
        assert "chart" not in description and "heat map" not in description
    for name, args in extension.FORMULAS.items():
        entry = wizard[name]
        assert entry["description"] == extension.CALC_DESCRIPTIONS[name]
        assert [a[0] for a in entry["arguments"]] == list(args)
        assert "e.g. Data.A1:J5001" in entry["arguments"][0][1]
        for arg_name, text, optional in entry["arguments"]:
            assert text == extension.calc_help(arg_name, args[arg_name])
            assert "Data!" not in text, "Calc writes a sheet's range Data.A1:J5001"
            # A blank argument takes the default, as in Excel; the data cannot be left out.
            assert optional == (arg_name != "data"), arg_name


def test_menu_entry_and_toolbar_button_run_the_command(calc):
    menu = [e for e in calc["addons"]["menu"] if e["url"] == COMMAND]
    toolbar = [e for e in calc["addons"]["toolbar"] if e["url"] == COMMAND]
    assert [e["title"] for e in menu] == ["Analyse selection"]
    assert [e["title"] for e in toolbar] == ["Analyse selection"]
    assert all(e["context"] == "com.sun.star.sheet.SpreadsheetDocument" for e in menu + toolbar)


def test_analyse_selection_writes_the_report_sheet(calc):
    assert calc["sheets_after"] == calc["sheets_before"] + ["StratPD price"]
    report = calc["report"]
    expected = spreadsheet.report_sheet(DATA, target="price", taken=calc["sheets_before"],
                                        source="Data.$A$1:$J$301", exclude=["x", "y"],
                                        n_trials=10)
    cells = report["cells"]
    for item in expected.items:
        if isinstance(item, spreadsheet.Cells):
            block = [row[item.col - 1: item.col - 1 + item.width]
                     for row in cells[item.row - 1: item.row - 1 + item.height]]
            padded = [list(r) + [None] * (item.width - len(r)) for r in item.cells]
            _numbers_close(block, padded)
    # The conclusion in words, as the command line's report words it, is on the sheet.
    found = expected.result.findings
    text = {v for row in cells for v in row if isinstance(v, str)}
    assert "What the data say" in text and found
    assert words.sentence(found[0], "price") in text
    assert "%" in report["share_format_string"]
    # Nothing written is a live formula: every cell holds a value.
    assert all(not str(f).startswith("=") for row in report["formulas"] for f in row)


def test_the_report_sheet_is_rounded_widened_and_prints_on_landscape_a4(calc):
    report = calc["report"]
    expected = spreadsheet.report_sheet(DATA, target="price", taken=calc["sheets_before"],
                                        source="Data.$A$1:$J$301", exclude=["x", "y"],
                                        n_trials=10)
    texts = report["texts"]
    # Numbers show about four significant digits (the report workbook's rounding), not the
    # 9 or 10 decimals a bare cell shows.
    (top,) = [i for i, row in enumerate(report["cells"]) if row and row[0] == "Impact ranking"]
    impacts = [row[2] for row in texts[top + 2: top + 2 + len(expected.result.impact)]]
    assert impacts and all(len(t.replace(",", "").replace("-", "").replace(".", "")) <= 6
                           for t in impacts), impacts
    curve = next(i for i, row in enumerate(report["cells"])
                 if row[:2] == ["carat", "partial dependence"])
    assert all(len(t.partition(".")[2]) <= 4 for t in texts[curve + 1][1:4]), texts[curve + 1]
    # Columns are as wide as their tables need (wider than Calc's default for the band's),
    # each table's header row wraps.
    widths = dict(report_plan_widths(expected))
    assert [report["widths"][c] for c in sorted(widths)] == [widths[c] for c in sorted(widths)]
    assert report["widths"][2] > report["default_width"]
    assert report["wrapped"][top + 1] and report["wrapped"][curve]
    # Landscape A4, one page wide; no chart starts less than its height above a page's end.
    page = report["page"]
    assert page["IsLandscape"] and page["ScaleToPagesX"] == 1
    # A4 in 1/100 mm, to Calc's rounding through twips.
    assert abs(page["Width"] - 29700) <= 5 and abs(page["Height"] - 21000) <= 5, page
    tops = sorted(c["row"] for c in report_plan_charts(expected))
    starts = [0, *report["breaks"]]
    for row in tops:
        page_top = max(s for s in starts if s <= row)
        following = [s for s in starts if s > row]
        assert not following or following[0] - row >= report_module.CHART_ROWS, (row, starts)
        assert row - page_top + report_module.CHART_ROWS <= report_module.ROWS_PER_PAGE \
            or row in starts, (row, starts)


def report_plan_widths(expected):
    return [(c - 1, report_module._hundredths_mm(w)) for c, w in expected.widths.items()]


def report_plan_charts(expected):
    return [{"row": i.row - 1} for i in expected.items if isinstance(i, spreadsheet.Chart)]


def test_a_selection_it_cannot_analyse_writes_nothing_and_says_why(calc):
    before, after = calc["bad_sheets"]
    assert before == after, "no sheet is added"
    # The named target "price" is not among the selected columns.
    with pytest.raises(sx.StratPDInputError) as caught:
        spreadsheet.report_sheet([r[1:3] for r in DATA], target="price")
    assert error_text(caught.value, prefix="StratPD") in calc["log"].splitlines()


def test_report_has_a_native_chart_per_feature_and_the_ranking(calc):
    charts = calc["report"]["charts"]
    features = [r[0] for r in EXPECTED.exclude_range[1:]]
    assert set(charts) == {"StratPD ranking"} | {f"StratPD curve {f}" for f in features}
    assert charts["StratPD ranking"]["type"] == "com.sun.star.chart.BarDiagram"
    assert charts["StratPD curve carat"]["type"] == "com.sun.star.chart.XYDiagram"
    assert charts["StratPD curve cut"]["type"] == "com.sun.star.chart.BarDiagram"
    assert "carat" in charts["StratPD curve carat"]["title"]
    for chart in charts.values():
        assert chart["series"] >= 1


def test_install_says_one_sentence_when_unopkg_is_missing(monkeypatch, capsys):
    monkeypatch.setattr(extension.shutil, "which", lambda name: None)
    monkeypatch.setattr(extension, "UNOPKG_PLACES", [Path("/nonexistent/unopkg")])
    assert cli_main(["libreoffice", "install"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("stratpd-xl: LibreOffice's unopkg was not found")
    assert "\n" not in err


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="unopkg refuses per-user installs only as root")
def test_install_as_root_says_what_to_do(capsys):
    try:
        extension.find_unopkg()
    except sx.StratPDInputError:
        pytest.skip("no unopkg")
    assert cli_main(["libreoffice", "install"]) == 2
    err = capsys.readouterr().err.strip()
    assert "add --shared" in err and "\n" not in err


def test_build_refuses_to_overwrite_and_other_suffixes(tmp_path, capsys):
    assert cli_main(["libreoffice", "build", "-o", str(tmp_path / "x.zip")]) == 2
    (tmp_path / "x.oxt").write_text("mine")
    assert cli_main(["libreoffice", "build", "-o", str(tmp_path / "x.oxt")]) == 2
    assert (tmp_path / "x.oxt").read_text() == "mine"
    assert "--force" in capsys.readouterr().err


def test_shipped_type_library_matches_the_formulas(tmp_path):
    tool = shutil.which("unoidl-write") or str(extension.SDK_BIN / "unoidl-write")
    if not Path(tool).exists():
        message = "unoidl-write not installed (apt-get install libreoffice-dev)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    fresh = extension.compile_rdb(tmp_path / "fresh.rdb", unoidl_write=tool)
    assert fresh.read_bytes() == extension.RDB.read_bytes(), (
        "the formulas' arguments changed: run python -m stratpd_xl.libreoffice.extension"
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))


def test_a_worker_killed_in_a_formula_is_named_in_the_cell_and_it_fills_in_by_itself(calc):
    assert calc.get("killed_busy"), "the worker was not caught computing"
    killed, recalculated = calc["timings"]
    shown = killed["cells"]
    assert shown[0][0] == ("STRATPD: the stratpd-xl worker stopped (killed by signal 9); "
                           "starting it again, this cell fills in by itself")
    # The sentence is in the first cell only, not repeated over the array.
    assert all(v in ("", None, "#N/A") for row in shown for v in row[1:])
    assert all(row[0] in ("", None, "#N/A") for row in shown[1:])
    _numbers_close(recalculated["cells"], EXPECTED.slow)


def test_the_menu_with_stratpd_trials_writes_and_draws_the_band(calc):
    cells = calc["report"]["cells"]
    headers = [row for row in cells if row and row[0] == "carat"]
    assert any(BAND_LOW in row and BAND_HIGH in row for row in headers)
    # The carat chart draws the curve and its band: three series, not one.
    assert calc["report"]["charts"]["StratPD curve carat"]["series"] == 3
