"""What the workflow and the formulas hand their callers: the result objects' promised fields
(exact names, the columns left out and why, notes), the report sheet's layout and the warm-up."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

from stratpd_xl import spreadsheet, workflow
from stratpd_xl.excel import ribbon
from stratpd_xl.params import Settings

from .synthetic import body_weight, interaction


@pytest.fixture(scope="module")
def people() -> pd.DataFrame:
    frame = body_weight(500, 0)
    frame.insert(0, "PersonID", np.arange(1000, 1500))  # a key, left out by default
    return frame


def test_problem_has_exact_names_and_says_why_columns_are_left_out(people):
    problem = workflow.prepare(people.assign(empty=np.nan), " WEIGHT ",
                               settings=Settings.make(exclude=("Education",)),
                               categorical=["pregnant"])
    assert isinstance(problem, workflow.Problem)
    assert problem.target == "weight"
    assert problem.features == ["sex", "pregnant", "height"]
    assert set(problem.left_out) == {"PersonID", "empty", "education"}
    assert "identifier" in problem.left_out["PersonID"]
    assert "no values" in problem.left_out["empty"]
    assert "excluded as asked" in problem.left_out["education"]
    assert "PersonID" not in problem.frame.columns
    assert problem.excluded == ["education"]
    assert isinstance(problem.frame["pregnant"].dtype, pd.CategoricalDtype)
    kept = workflow.prepare(people, "weight", ["PersonID"])
    assert kept.features == ["PersonID"] and "PersonID" not in kept.left_out


def test_curve_result_names_the_columns_and_carries_the_notes(people):
    result = workflow.curve(people, "Weight", "HEIGHT",
                            settings=Settings.make(max_points=10))
    assert isinstance(result, workflow.CurveResult)
    assert (result.target, result.feature) == ("weight", "height")
    assert len(result.curve) <= 10
    said = " ".join(result.notes)
    assert "PersonID" in said  # the column left out as an identifier
    assert "max_points=None" in said  # how to get every point of the summarised curve
    expanded = workflow.curve(people, "weight", "height", how_to_expand="--max-points none",
                              settings=Settings.make(max_points=10))
    assert "--max-points none" in " ".join(expanded.notes)


def test_analysis_result_ranks_every_feature_and_has_a_curve_for_each(people):
    result = workflow.analysis(people, "weight")
    assert isinstance(result, workflow.AnalysisResult)
    assert result.target == "weight" and result.n_rows == 500
    assert set(result.impact["feature"]) == set(result.curves) == {
        "sex", "pregnant", "height", "education"}
    assert result.impact["feature"].iloc[0] == "height"  # 10 per inch over ~15 inches
    assert set(result.left_out) == {"PersonID"}
    assert result.findings and result.findings[0].feature == "height"


def test_surface_result_names_both_features():
    result = workflow.surface(interaction(600, 0), "Y", "X1", "x2",
                              settings=Settings.make(grid=3))
    assert isinstance(result, workflow.SurfaceResult)
    assert (result.target, result.feature_1, result.feature_2) == ("y", "x1", "x2")
    assert set(result.surface["x1"].unique()).__len__() == 3


def test_a_formula_result_holds_its_cells_and_the_curve_to_draw(people):
    cells = [list(people.columns), *people.to_numpy().tolist()]
    answer = spreadsheet.stratpd(cells, "weight", "height", chart=False)
    assert isinstance(answer, spreadsheet.FormulaResult)
    assert answer.chart is False
    assert isinstance(answer.curve, spreadsheet.Curve)
    assert answer.curve.cells is answer.cells or answer.curve.cells == answer.cells
    assert answer.cells[0][:2] == ["height", "partial dependence"]
    assert answer.curve.kind == "curve" and answer.curve.png is None
    assert len(answer.curve.result) == len(answer.cells) - 1
    assert spreadsheet.stratpd(cells, "weight", "height").chart is True
    bad = spreadsheet.stratpd(cells, "weight", "nope")
    assert bad.curve is None and len(bad.cells) == 1 and bad.cells[0][0].startswith("STRATPD:")
    compared = spreadsheet.stratcompare(cells, "weight", "height")
    assert compared.curve.kind == "compare"
    grouped = spreadsheet.stratpdby(cells, "weight", "education", "sex")
    assert grouped.curve.kind == "curve"
    assert spreadsheet.stratpd2(cells, "weight", "height", "education",
                                grid=4).curve.kind == "surface"


def _overlap(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    return not (a[2] < b[0] or b[2] < a[0] or a[3] < b[1] or b[3] < a[1])


def test_the_report_sheet_follows_its_layout_and_nothing_overlaps(people):
    cells = [list(people.columns), *people.to_numpy().tolist()]
    layout = ribbon.Layout(ranking_row=6, gap_rows=4, picture_rows=15)
    sheet = spreadsheet.report_sheet(cells, target="weight", taken=["StratPD"], layout=layout,
                                     n_trials=1)
    assert isinstance(sheet, spreadsheet.ReportSheet)
    assert sheet.name != "StratPD" and sheet.result.target == "weight"
    assert sheet.settings.n_trials == 1
    blocks = [i for i in sheet.items if isinstance(i, spreadsheet.Cells)]
    charts = [i for i in sheet.items if isinstance(i, spreadsheet.Chart)]
    assert blocks[0].row == layout.title_row
    assert min(b.row for b in blocks[1:]) == layout.ranking_row
    assert len(charts) == 1 + len(sheet.result.curves)
    # a chart covers picture_rows rows and about 8 columns; no two things share a cell
    areas = [(b.row, b.col, b.row + b.height - 1, b.col + b.width - 1) for b in blocks
             if b.width]
    areas += [(c.row, c.col, c.row + layout.picture_rows - 1, c.col + 7) for c in charts]
    for i, a in enumerate(areas):
        for b in areas[i + 1:]:
            assert not _overlap(a, b), (a, b)
    curve_titles = [b.row for b in blocks if b.cells and str(b.cells[0][0]).endswith(
        "partial dependence of weight")]
    gaps = np.diff(curve_titles)
    assert np.all(gaps >= 1 + layout.picture_rows + layout.gap_rows)


def test_warning_text_names_three_charts_and_counts_the_rest():
    assert ribbon.warning_text(["a failed"]) == "StratPD wrote the tables, but a failed"
    text = ribbon.warning_text(["w1", "w2", "w3", "w4", "w5"])
    assert text == "StratPD wrote the tables, but w1\nw2\nw3\n... and 2 more"


def test_start_warm_up_starts_one_thread_once_and_can_be_turned_off(monkeypatch):
    ran = threading.Event()
    calls = []

    def warm() -> None:
        calls.append(1)
        ran.set()

    monkeypatch.setattr(spreadsheet, "_warm_up", warm)
    monkeypatch.setattr(spreadsheet, "_warm_up_thread", None)
    monkeypatch.setenv("STRATPD_XL_WARMUP", "0")
    spreadsheet.start_warm_up()
    assert spreadsheet._warm_up_thread is None  # turned off: no thread
    monkeypatch.setenv("STRATPD_XL_WARMUP", "1")
    spreadsheet.start_warm_up()
    spreadsheet.start_warm_up()
    assert ran.wait(30) and spreadsheet.wait_for_warm_up(30)
    assert calls == [1]
    assert spreadsheet._warm_up_thread.name == "stratpd-warm-up"
    assert spreadsheet._warm_up_thread.daemon
