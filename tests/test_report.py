"""The xlsx writers, read back with openpyxl and as a zip: values, formats, charts, pictures,
sheet names and links."""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import stratpd_xl as sx
from stratpd_xl.errors import StratPDInputError
from stratpd_xl.presentation.labels import PLAIN_PARAMETERS
from stratpd_xl.presentation.report import (
    curve_table,
    unique_sheet_names,
    write_curve_workbook,
    write_impact_workbook,
    write_report,
)
from stratpd_xl.presentation.tables import (
    BAND_HIGH,
    BAND_LOW,
    WHOLE_HIGH,
    WHOLE_LOW,
    impact_table,
)
from tests.test_charts import categorical_result, numeric_result, ranking_result, synthetic_data


def read_table(ws) -> tuple[list[str], list[list]]:
    """The one Excel table on a sheet: its headers and data rows as openpyxl values."""
    assert len(ws.tables) == 1
    (ref,) = [t.ref for t in ws.tables.values()]
    rows = [[c.value for c in row] for row in ws[ref]]
    return rows[0], rows[1:]


def table_cells(ws):
    (ref,) = [t.ref for t in ws.tables.values()]
    return list(ws[ref])


def zip_names(path: Path | io.BytesIO) -> list[str]:
    with zipfile.ZipFile(path) as z:
        return z.namelist()


def zip_text(path: Path, name: str) -> str:
    with zipfile.ZipFile(path) as z:
        return z.read(name).decode("utf-8")


class FakeAnalysis:
    def __init__(self, impact: pd.DataFrame, curves: dict[str, pd.DataFrame]):
        self.impact = impact
        self.curves = curves


# ------------------------------------------------------------------ curve_table


def test_curve_table_numeric_headers_and_values():
    result = numeric_result()
    table = curve_table(result)
    assert list(table.columns) == [
        "carat", "partial dependence", BAND_LOW, BAND_HIGH, "slopes averaged"]
    np.testing.assert_array_equal(table["partial dependence"], result["pd"])
    assert table.attrs["target"] == "price"
    without_band = curve_table(numeric_result(band=False))
    assert list(without_band.columns) == ["carat", "partial dependence", "slopes averaged"]


def test_curve_table_categorical_headers():
    table = curve_table(categorical_result())
    assert list(table.columns) == [
        "cut", "partial dependence", "rows", BAND_LOW, BAND_HIGH]
    assert list(table["cut"]) == ["Fair", "Good", "Very Good", "Premium", "Ideal"]


def test_curve_table_feature_named_like_a_header_stays_unique():
    table = curve_table(categorical_result(feature="Rows"))
    assert list(table.columns)[:3] == ["Rows (feature)", "partial dependence", "rows"]


def test_impact_table_headers():
    table = impact_table(ranking_result())
    assert list(table.columns) == ["feature", "kind", "impact", "share"]
    assert table["share"].tolist() == pytest.approx([0.5, 0.3, 0.15, 0.05])


# ------------------------------------------------------------------ sheet names


def test_unique_sheet_names_are_valid_and_unique():
    names = unique_sheet_names(
        ["a/b", "x" * 40, "x" * 40, "Summary", "summary", "[what]?", "'quoted'", "", "History",
         "ok"],
        taken=["Summary"],
    )
    assert len(names) == 10
    for name in names:
        assert 1 <= len(name) <= 31
        assert not re.search(r"[\[\]:*?/\\]", name)
        assert not name.startswith("'") and not name.endswith("'")
        assert name.casefold() != "history"
    folded = [n.casefold() for n in names] + ["summary"]
    assert len(set(folded)) == len(folded)
    assert names[0] == "a_b"
    assert names[1] == "x" * 31 and names[2] == "x" * 27 + " (2)"
    assert names[-1] == "ok"


# ------------------------------------------------------------------ curve workbook


def test_numeric_curve_workbook(tmp_path):
    result = numeric_result()
    result.loc[3, "pd_low"] = np.nan  # a gap in the band must be a blank cell, not NaN
    path = tmp_path / "curve.xlsx"
    write_curve_workbook(result, path)

    book = openpyxl.load_workbook(path)
    assert book.sheetnames == ["carat"]
    ws = book["carat"]
    assert ws["A1"].value == "partial dependence of price on carat (StratPD, n=1,180)"
    header = {ws.cell(r, 1).value: ws.cell(r, 2).value for r in range(2, 40)}
    assert header["target"] == "price" and header["feature"] == "carat"
    assert header["method"] == "StratPD"
    assert header["rows in data"] == 1200 and header["rows used"] == 1180
    # The settings in plain words, not Python's keywords.
    plain = {key: label for key, (label, _) in PLAIN_PARAMETERS.items()}
    assert header[plain["min_samples_leaf"]] == 10 and header[plain["n_trials"]] == 20
    assert header[plain["random_state"]] == "none: new halves each run"

    headers, rows = read_table(ws)
    assert headers == list(curve_table(result).columns)
    assert [r[0] for r in rows] == pytest.approx(list(result["x"]))
    assert [r[1] for r in rows] == pytest.approx(list(result["pd"]))
    assert rows[3][2] is None
    assert [r[4] for r in rows] == list(result["n_slopes"])
    assert table_cells(ws)[2][1].number_format == "#,##0"

    names = zip_names(path)
    assert "xl/charts/chart1.xml" in names
    assert [n for n in names if n.startswith("xl/media/")] == ["xl/media/image1.png"]
    chart = zip_text(path, "xl/charts/chart1.xml")
    # The band a filled area: a stacked area of (an invisible low, the width) under the
    # curve's line; the points are evenly spaced, so the chart is drawn on them, with markers.
    assert "<c:areaChart><c:grouping val=\"stacked\"/>" in chart
    assert "<c:lineChart>" in chart and "scatterChart" not in chart
    assert chart.count("<c:ser>") == 4  # band low, band width, curve, markers
    assert '<c:legendEntry><c:idx val="0"/><c:delete val="1"/>' in chart
    assert "partial dependence of price on carat (StratPD, n=1,180)" in chart
    # Printed: a print scale (not "fit to", under which Excel ignores page breaks) that puts
    # the chart and the picture on the first page, without a page break.
    assert 40 <= ws.page_setup.scale <= 100
    assert not ws.sheet_properties.pageSetUpPr.fitToPage
    assert not ws.row_breaks.brk
    drawing = zip_text(path, "xl/drawings/drawing1.xml")
    # Size-based anchors, so LibreOffice does not stretch the picture (see report.py).
    assert drawing.count("<xdr:oneCellAnchor>") == 2
    assert "twoCellAnchor" not in drawing


def test_no_nan_or_inf_anywhere(tmp_path):
    result = numeric_result()
    result.loc[2, "pd"] = np.inf
    result.loc[4, "pd_high"] = np.nan
    path = tmp_path / "gaps.xlsx"
    write_curve_workbook(result, path)
    sheet = zip_text(path, "xl/worksheets/sheet1.xml")
    assert "NaN" not in sheet and "inf" not in sheet.lower()
    _, rows = read_table(openpyxl.load_workbook(path).active)
    assert rows[2][1] is None and rows[4][3] is None


def test_datetime_curve_is_written_as_dates(tmp_path):
    result = numeric_result(n=10, dates=True, feature="sold on")
    path = tmp_path / "dates.xlsx"
    write_curve_workbook(result, path)
    ws = openpyxl.load_workbook(path).active
    cells = table_cells(ws)
    first = cells[1][0]
    assert first.value == dt.datetime(2024, 1, 1)
    assert first.is_date and first.number_format == "yyyy-mm-dd"
    assert "yyyy-mm-dd" in zip_text(path, "xl/charts/chart1.xml")


def test_datetime_with_time_and_zone_keeps_wall_clock(tmp_path):
    result = numeric_result(n=4)
    result["x"] = pd.date_range("2024-03-01 08:30", periods=4, freq="h", tz="Europe/Paris")
    path = tmp_path / "tz.xlsx"
    write_curve_workbook(result, path)
    cell = table_cells(openpyxl.load_workbook(path).active)[1][0]
    assert cell.value == dt.datetime(2024, 3, 1, 8, 30)
    assert cell.number_format == "yyyy-mm-dd hh:mm:ss"


def test_categorical_curve_workbook_keeps_text_as_text(tmp_path):
    result = categorical_result(categories=("=1+1", "007", "plain"))
    path = tmp_path / "cat.xlsx"
    write_curve_workbook(result, path)
    ws = openpyxl.load_workbook(path).active
    headers, rows = read_table(ws)
    assert headers == ["cut", "partial dependence", "rows", BAND_LOW, BAND_HIGH]
    assert [r[0] for r in rows] == ["=1+1", "007", "plain"]
    assert all(c[0].data_type == "s" for c in table_cells(ws)[1:])
    assert [r[1] for r in rows] == [0, 300, 600]
    assert [r[3] for r in rows] == [-40, 260, 560]
    chart = zip_text(path, "xl/charts/chart1.xml")
    assert '<c:barDir val="col"/>' in chart
    # Error bars read their lengths from two hidden columns right of the table.
    assert "<c:errBars>" in chart
    assert "<c:minus><c:numRef><c:f>cut!$F$" in chart
    assert "<c:plus><c:numRef><c:f>cut!$G$" in chart
    hidden = ws.column_dimensions["F"]  # openpyxl keeps the F:G span under F
    assert hidden.hidden and (hidden.min, hidden.max) == (6, 7)
    minus = [ws.cell(r, 6).value for r in range(ws.min_row, ws.max_row + 1)]
    assert minus[-3:] == [40, 40, 40]
    header = {ws.cell(r, 1).value: ws.cell(r, 2).value for r in range(2, 40)}
    assert header["baseline category"] == "=1+1"


def test_curve_workbook_to_bytesio():
    buffer = io.BytesIO()
    write_curve_workbook(numeric_result(), buffer)
    buffer.seek(0)
    assert "xl/charts/chart1.xml" in zip_names(buffer)


def test_unwritable_path_is_one_sentence(tmp_path):
    with pytest.raises(StratPDInputError, match=r"^cannot write .*missing.*choose another"):
        write_curve_workbook(numeric_result(), tmp_path / "missing" / "curve.xlsx")


# ------------------------------------------------------------------ impact workbook


def test_impact_workbook(tmp_path):
    path = tmp_path / "impact.xlsx"
    write_impact_workbook(ranking_result(), path)
    ws = openpyxl.load_workbook(path)["Impact"]
    assert ws["A1"].value == "impact of each feature on price (n=1,200)"
    headers, rows = read_table(ws)
    assert headers == ["feature", "kind", "impact", "share"]
    assert [r[0] for r in rows] == ["carat", "cut", "depth", "color"]
    assert [r[3] for r in rows] == pytest.approx([0.5, 0.3, 0.15, 0.05])
    assert table_cells(ws)[1][3].number_format == "0.0%"
    chart = zip_text(path, "xl/charts/chart1.xml")
    assert '<c:barDir val="bar"/>' in chart
    assert '<c:orientation val="maxMin"/>' in chart  # largest on top
    assert "50%" in chart and "5%" in chart  # share labels
    assert "xl/media/image1.png" in zip_names(path)


# ------------------------------------------------------------------ full report


def test_report_sheets_links_charts_pictures_and_progress(tmp_path):
    curves = {
        "carat": numeric_result(),
        "cut": categorical_result(),
        "depth": numeric_result(n=30, feature="depth"),
        "color": categorical_result(band=False, feature="color",
                                    categories=("D", "E", "F")),
    }
    ranking = ranking_result()
    ranking.attrs["skipped"] = {"zip code": "only 3 rows have a value"}
    calls = []
    path = tmp_path / "report.xlsx"
    write_report(FakeAnalysis(ranking, curves), path,
                 progress=lambda *a: calls.append(a))

    assert calls == [(0, 5, "Summary"), (1, 5, "carat"), (2, 5, "cut"), (3, 5, "depth"),
                     (4, 5, "color"), (5, 5, "saving"), (5, 5, "")]
    book = openpyxl.load_workbook(path)
    assert book.sheetnames == ["Summary", "carat", "cut", "depth", "color"]
    summary = book["Summary"]
    _, rows = read_table(summary)
    assert [r[0] for r in rows] == ["carat", "cut", "depth", "color"]
    links = {c.value: c.hyperlink.location for row in table_cells(summary)[1:] for c in row[:1]}
    assert links == {name: f"'{name}'!A1" for name in ["carat", "cut", "depth", "color"]}
    texts = [c.value for row in summary.iter_rows() for c in row if c.value]
    assert "zip code" in texts and "only 3 rows have a value" in texts

    for name in ["carat", "cut", "depth", "color"]:
        ws = book[name]
        assert ws["A1"].hyperlink.location == "'Summary'!A1"
        assert ws["A2"].value.startswith(f"partial dependence of price on {name} (")
        headers, _ = read_table(ws)
        assert headers[0] == name

    names = zip_names(path)
    assert len([n for n in names if re.fullmatch(r"xl/charts/chart\d+\.xml", n)]) == 5
    # One picture per feature; the summary's ranking is its native chart alone.
    assert len([n for n in names if n.startswith("xl/media/")]) == 4


def test_report_sheet_names_from_awkward_features(tmp_path):
    long = "average monthly revenue per customer account"
    curves = {"summary": numeric_result(feature="summary"),
              "a/b": numeric_result(feature="a/b"),
              long: numeric_result(feature=long)}
    ranking = pd.DataFrame({"feature": list(curves), "kind": "numeric",
                            "impact": [3.0, 2.0, 1.0]})
    ranking["share"] = ranking["impact"] / 6
    ranking.attrs = {"target": "price", "n_rows": 100, "params": {}}
    path = tmp_path / "awkward.xlsx"
    write_report(FakeAnalysis(ranking, curves), path)
    book = openpyxl.load_workbook(path)
    assert book.sheetnames == ["Summary", "summary (2)", "a_b", long[:31].rstrip()]
    links = [c[0].hyperlink.location for c in table_cells(book["Summary"])[1:]]
    assert links == [f"'{n}'!A1" for n in book.sheetnames[1:]]


def test_report_from_real_engine(tmp_path):
    analysis = sx.analyse(synthetic_data(), "price", n_trials=3, random_state=0)
    path = tmp_path / "real.xlsx"
    write_report(analysis, path)
    book = openpyxl.load_workbook(path)
    assert book.sheetnames[0] == "Summary"
    assert sorted(book.sheetnames[1:]) == sorted(analysis.curves)
    for name, curve in analysis.curves.items():
        headers, rows = read_table(book[name])
        assert headers == list(curve_table(curve).columns)
        assert len(rows) == len(curve)
        np.testing.assert_allclose([r[1] for r in rows], curve["pd"].to_numpy(), rtol=1e-12)
    sold = table_cells(book["sold"])[1][0]
    assert sold.is_date


def test_report_with_nothing_estimated_lists_the_reasons(tmp_path):
    ranking = pd.DataFrame(columns=["feature", "kind", "impact", "share"])
    ranking.attrs = {"target": "price", "n_rows": 12, "params": {},
                     "skipped": {"carat": "only 12 rows with a value in \"price\""}}
    path = tmp_path / "empty.xlsx"
    write_report(FakeAnalysis(ranking, {}), path)
    summary = openpyxl.load_workbook(path)["Summary"]
    texts = [c.value for row in summary.iter_rows() for c in row if c.value]
    assert "Not estimated" in texts and 'only 12 rows with a value in "price"' in texts


def test_apostrophes_and_unicode_in_names(tmp_path):
    name = "owner's größe (€)"
    curve = categorical_result(feature=name)
    ranking = pd.DataFrame({"feature": [name], "kind": ["categorical"], "impact": [1.0],
                            "share": [1.0]})
    ranking.attrs = {"target": "prix", "n_rows": 1200, "params": {}}
    path = tmp_path / "names.xlsx"
    write_report(FakeAnalysis(ranking, {name: curve}), path)
    book = openpyxl.load_workbook(path)
    assert book.sheetnames == ["Summary", name]
    (link,) = [c[0].hyperlink.location for c in table_cells(book["Summary"])[1:]]
    assert link == "'owner''s größe (€)'!A1"
    chart = zip_text(path, "xl/charts/chart2.xml")
    refs = re.findall(r"<c:f>([^<]*)</c:f>", chart)
    assert refs and all(r.startswith("'owner''s größe (€)'!$") for r in refs)


@given(st.lists(st.text(max_size=40), min_size=1, max_size=30))
@settings(max_examples=200, deadline=None)
def test_unique_sheet_names_property(names):
    out = unique_sheet_names(names, taken=["Summary"])
    assert len(out) == len(names)
    folded = [n.casefold() for n in out]
    assert len(set(folded)) == len(out) and "summary" not in folded
    for name in out:
        assert 1 <= len(name.encode("utf-16-le")) // 2 <= 31 and name == name.strip()
        assert not re.search(r"[\[\]:*?/\\]", name)
        assert not name.startswith("'") and not name.endswith("'")


@given(st.lists(st.text(max_size=40), min_size=1, max_size=8))
@settings(max_examples=25, deadline=None)
def test_unique_sheet_names_open_in_openpyxl(names):
    import xlsxwriter

    out = unique_sheet_names(names)
    buffer = io.BytesIO()
    book = xlsxwriter.Workbook(buffer, {"in_memory": True})
    for name in out:
        book.add_worksheet(name)
    book.close()
    buffer.seek(0)
    assert openpyxl.load_workbook(buffer).sheetnames == out


def test_sheet_name_cut_to_31_does_not_end_in_apostrophe():
    (name,) = unique_sheet_names(["a" * 29 + " 'b"])
    assert name == "a" * 29


NASTY = st.text(alphabet=st.sampled_from(list("ab $\\_^{}'[]:*?/\x01\x1f\t\n€\U00010000\ufffe=")),
                min_size=1, max_size=30)


# Fonts lack glyphs for some of these characters; matplotlib says so, which is fine here.
@pytest.mark.filterwarnings("ignore:Glyph .* missing from font:UserWarning")
@given(NASTY, NASTY, st.booleans())
@settings(max_examples=30, deadline=None)
def test_any_column_names_give_a_readable_report(feature, target, categorical):
    # Names come from whatever an analyst's header row holds: control characters from a
    # paste, "$", brackets, emoji.  The workbook must still open.
    if categorical:
        curve = categorical_result(feature=feature, categories=(feature, target, "x"))
    else:
        curve = numeric_result(feature=feature, target=target)
    curve.attrs["target"] = target
    ranking = pd.DataFrame({"feature": [feature], "kind": [curve.attrs["kind"]],
                            "impact": [1.0], "share": [1.0]})
    ranking.attrs = {"target": target, "n_rows": 5, "params": {}}
    buffer = io.BytesIO()
    write_report(FakeAnalysis(ranking, {feature: curve}), buffer)
    buffer.seek(0)
    book = openpyxl.load_workbook(buffer)
    assert len(book.sheetnames) == 2


def test_tall_impact_picture_gets_its_own_printed_page(tmp_path):
    ranking = pd.DataFrame({"feature": [f"column {i}" for i in range(40)],
                            "kind": "numeric", "impact": np.linspace(40, 1, 40)})
    ranking["share"] = ranking["impact"] / ranking["impact"].sum()
    ranking.attrs = ranking_result().attrs
    path = tmp_path / "tall.xlsx"
    write_impact_workbook(ranking, path)
    ws = openpyxl.load_workbook(path).active
    (picture,) = ws._images
    # Fitting a 40-bar chart and picture on one page would shrink them below 40 %.
    assert [b.id for b in ws.row_breaks.brk] == [picture.anchor._from.row]
    assert 40 <= ws.page_setup.scale <= 100


def test_curve_sheet_shows_the_engine_warnings(tmp_path):
    result = numeric_result()
    result.attrs = {**result.attrs, "warnings": ['"x" barely varies inside the strata']}
    path = tmp_path / "warned.xlsx"
    write_curve_workbook(result, path)
    cells = [[c.value for c in row] for row in openpyxl.load_workbook(path).active.iter_rows()]
    assert ["warning", '"x" barely varies inside the strata'] in [row[:2] for row in cells]


def _grid_columns(ws) -> dict[str, list]:
    """The hidden columns a banded native chart reads: header -> values."""
    headers = {c.value: c.column for row in ws.iter_rows() for c in row
               if isinstance(c.value, str) and c.value.startswith("chart: ")}
    out = {}
    for name, col in headers.items():
        top = next(c.row for row in ws.iter_rows(min_col=col, max_col=col) for c in row
                   if c.value == name)
        out[name] = [ws.cell(r, col).value for r in range(top + 1, ws.max_row + 1)]
        assert any(d.hidden and d.min <= col <= d.max for d in ws.column_dimensions.values())
    return out


def test_native_band_is_a_filled_area_on_an_even_grid(tmp_path):
    """Points not evenly spaced: the chart reads the curve and the band the picture shows
    at 201 evenly spaced values (straight lines between the points), labelled with round
    numbers at the bottom; the table keeps the exact points."""
    result = numeric_result(n=40)
    result["x"] = np.sort(np.random.default_rng(0).uniform(0.2, 5.01, 40))
    result["curve_low"] = result["pd"] - 180.0  # at most twice the pointwise width: shown
    result["curve_high"] = result["pd"] + 220.0
    path = tmp_path / "grid.xlsx"
    write_curve_workbook(result, path)
    ws = openpyxl.load_workbook(path).active
    headers, rows = read_table(ws)
    assert headers[2:6] == [BAND_LOW, BAND_HIGH, WHOLE_LOW, WHOLE_HIGH]
    assert [r[0] for r in rows] == pytest.approx(list(result["x"]))
    grid = _grid_columns(ws)
    x = np.array(grid["chart: x"], dtype=float)
    assert len(x) == 201 and np.allclose(np.diff(x), np.diff(x)[0])
    assert x[0] == pytest.approx(result["x"].min()) and x[-1] == pytest.approx(
        result["x"].max())
    curve = np.interp(x, result["x"], result["pd"])
    assert np.array(grid["chart: curve"], dtype=float) == pytest.approx(curve, abs=1e-6)
    low = np.array(grid["chart: band low"], dtype=float)
    width = np.array(grid["chart: band width"], dtype=float)
    assert low == pytest.approx(curve - 180.0, abs=1e-6)
    assert low + width == pytest.approx(curve + 220.0, abs=1e-6)
    # Round labels (here 1, 2, 3, 4 on 0.2 to 5.0), each at the grid value nearest to it.
    at = [i for i, v in enumerate(grid["chart: axis label"]) if v is not None]
    labels = np.array([grid["chart: axis label"][i] for i in at], dtype=float)
    assert 4 <= len(labels) <= 8 and np.allclose(labels, np.round(labels))
    assert np.abs(x[at] - labels).max() <= (x[1] - x[0]) / 2
    chart = zip_text(path, "xl/charts/chart1.xml")
    assert "95% band, whole curve" in chart
    assert '<c:tickLblPos val="low"/>' in chart
    # Every series (band low, band width, curve: 40 points get no markers) reads its
    # categories from the label column.
    assert chart.count("<c:cat>") == 3 and len(set(re.findall(
        r"<c:cat><c:(?:num|str)Ref><c:f>([^<]+)</c:f>", chart))) == 1
