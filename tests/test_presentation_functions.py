"""The presentation layer's functions one by one: the words, headers, tables, pictures and
workbooks a user reads, each held to what it promises (and to never running a formula)."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import numpy as np
import openpyxl
import pandas as pd
import pytest

import stratpd_xl as sx
from stratpd_xl import workflow
from stratpd_xl.params import Settings
from stratpd_xl.presentation import charts, compare, labels, notes, pairs, report, tables, words
from stratpd_xl.schema import Note

from .synthetic import body_weight, interaction


@pytest.fixture(scope="module")
def people() -> pd.DataFrame:
    return body_weight(600, 0)


@pytest.fixture(scope="module")
def height(people) -> pd.DataFrame:
    return workflow.curve(people, "weight", "height", settings=Settings.make(n_trials=4)).curve


@pytest.fixture(scope="module")
def sex(people) -> pd.DataFrame:
    return workflow.curve(people, "weight", "sex", settings=Settings.make(n_trials=4)).curve


@pytest.fixture(scope="module")
def ranking(people) -> pd.DataFrame:
    return sx.impact(people, "weight")


@pytest.fixture(scope="module")
def crossed() -> workflow.InteractionsResult:
    return workflow.interactions(interaction(800, 0), "y", top=1)


@pytest.fixture(scope="module")
def by_sex(people) -> pd.DataFrame:
    return workflow.curve(people, "weight", "education", settings=Settings.make(by="sex")).curve


@pytest.fixture(scope="module")
def surface() -> pd.DataFrame:
    return workflow.surface(interaction(800, 0), "y", "x1", "x2",
                            settings=Settings.make(grid=4)).surface


@pytest.fixture(scope="module")
def side_by_side(people) -> workflow.CompareResult:
    return workflow.compare(people, "weight", "height", ice=True, ice_rows=5)


@pytest.fixture(scope="module")
def pair(people) -> workflow.CompareResult:
    return workflow.compare(people, "weight", ["height", "education"])


def _yes_no(result: pd.DataFrame) -> pd.DataFrame:
    out = result.copy()
    out.attrs = {**result.attrs, "target_label": "P(churn = yes)"}
    return out


def _cells(path) -> list[list]:
    book = openpyxl.load_workbook(path)
    return [[c.value for c in row] for ws in book.worksheets for row in ws.iter_rows()]


# --------------------------------------------------------------------------- labels


def test_visible_text_shows_terminal_control_characters_as_escapes():
    assert labels.visible_text("a\x1b[2Jb\x07\tc\nd\x9b") == "a\\x1b[2Jb\\x07\tc\nd\\x9b"
    assert labels.visible_text("plain, naïve €") == "plain, naïve €"


def test_xml_text_is_text_an_svg_can_hold():
    text = labels.xml_text("half \ud83d emoji \x01 \ufffe")
    assert text == "half \ufffd emoji \\x01 \ufffd"
    ET.fromstring(f"<t>{text}</t>".encode())  # parses: no control character, valid UTF-8


def test_value_label_says_what_the_axis_measures(height, sex):
    assert labels.value_label(height) == "change in weight vs its average"
    assert labels.value_label(sex) == f"change in weight vs {sex.attrs['baseline']}"
    assert (labels.value_label(_yes_no(height))
            == "change in P(churn = yes) vs its average, points")


def test_shown_band_draws_the_whole_curve_band_unless_it_is_too_wide(height):
    assert labels.shown_band(height) == ("curve_low", "curve_high", labels.WHOLE_CURVE)
    wide = height.copy()
    wide["curve_low"] = wide["pd"] - 10 * (wide["pd"] - wide["pd_low"])
    wide["curve_high"] = wide["pd"] + 10 * (wide["pd_high"] - wide["pd"])
    assert labels.shown_band(wide) == ("pd_low", "pd_high", labels.PER_POINT)
    bare = height.drop(columns=["curve_low", "curve_high"])
    assert labels.shown_band(bare) == ("pd_low", "pd_high", labels.PER_POINT)


def test_rows_ignored_note_names_the_feature_and_what_the_group_lacks(height, sex):
    assert "same height" in labels.rows_ignored_note(height)
    assert labels.rows_ignored_note(height).endswith("no slope")
    assert "same sex" in labels.rows_ignored_note(sex)
    assert labels.rows_ignored_note(sex).endswith("no difference between categories")


def test_left_out_note_counts_the_categories_not_drawn():
    assert (labels.left_out_note(40, 1234)
            == "the 40 categories with the most rows; 1,234 more in the table")


# --------------------------------------------------------------------------- charts


def test_is_categorical_tells_category_effects_from_a_curve(height, sex):
    assert charts.is_categorical(sex) and not charts.is_categorical(height)
    by_hand = pd.DataFrame({"category": ["a", "b"], "pd": [0.0, 1.0]})
    assert charts.is_categorical(by_hand)


def test_share_fractions_are_the_rankings_shares_or_its_impacts_over_their_sum(ranking):
    shares = charts.share_fractions(ranking)
    assert shares.sum() == pytest.approx(1.0)
    assert np.all(np.diff(shares) <= 0)  # largest first, as the ranking
    without = ranking.drop(columns=["share"])
    impact = ranking["impact"].to_numpy(float)
    assert np.allclose(charts.share_fractions(without), impact / impact.sum())


@pytest.mark.parametrize(("fmt", "magic"), [("png", b"\x89PNG"), ("svg", b"<?xml"),
                                            ("pdf", b"%PDF")])
def test_figure_bytes_gives_the_format_asked_the_same_bytes_every_run(height, fmt, magic):
    first = charts.figure_bytes(charts.curve_figure(height), fmt)
    assert first.startswith(magic)
    assert charts.figure_bytes(charts.curve_figure(height), fmt) == first
    if fmt == "svg":
        ET.fromstring(first)


# --------------------------------------------------------------------------- tables


@pytest.mark.parametrize(("cell", "shown"), [
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
    ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
    ("@SUM(A1)", "'@SUM(A1)"),
    ("-1+2", "'-1+2"),
    ("\t=1", "'\t=1"),
    ("-2.5", "-2.5"),
    ("north", "north"),
    (3.5, 3.5),
    (None, None),
])
def test_inert_text_keeps_a_formula_from_running_and_leaves_the_rest(cell, shown):
    assert tables.inert_text(cell) == shown


def test_inert_table_makes_headers_and_text_cells_inert_numbers_untouched():
    table = pd.DataFrame({"=1+1": ["=2+2", "ok"], "pd": [-1.5, 2.0]})
    table.attrs = {"target": "y"}
    out = tables.inert_table(table)
    assert list(out.columns) == ["'=1+1", "pd"]
    assert list(out.iloc[:, 0]) == ["'=2+2", "ok"]
    assert list(out["pd"]) == [-1.5, 2.0] and out.attrs == {"target": "y"}
    assert list(table.columns) == ["=1+1", "pd"]  # the result itself is left as it was


def test_pd_header_names_a_probability_for_a_yes_no_target(height):
    assert tables.pd_header(height) == "partial dependence"
    assert tables.pd_header(_yes_no(height)) == "change in P(churn = yes), points"


def test_band_headers_say_whole_curve_or_all_categories(height, sex):
    curve, cats = tables.band_headers(height), tables.band_headers(sex)
    assert curve["pd_low"] == cats["pd_low"] == "low (95% band per point)"
    assert curve["curve_high"] == "high (95% band, whole curve)"
    assert cats["curve_high"] == "high (95% band, all categories)"


def test_curve_headers_are_the_tables_columns_in_order(height):
    headers = tables.curve_headers(height)
    assert list(headers)[:2] == ["x", "pd"]
    assert headers["x"] == "height" and headers["pd"] == "partial dependence"
    assert "slope" not in headers and "few_rows" not in headers
    assert list(tables.curve_table(height).columns) == list(headers.values())
    assert "pd_low" not in tables.curve_headers(height.drop(columns=["pd_high"]))


# --------------------------------------------------------------------------- notes


def test_more_line_counts_the_notes_not_shown():
    assert notes.more_line(0, "the Notes sheet") is None
    assert notes.more_line(1, "the Notes sheet") == "1 more note: the Notes sheet"
    assert notes.more_line(1200, "--json") == "1,200 more notes: --json"


def test_model_left_out_is_one_note_naming_every_column_the_model_dropped():
    assert notes.model_left_out({}) == []
    (one,) = notes.model_left_out({"code": "300 categories, more than the model's 255"})
    assert one == 'the model leaves out "code": 300 categories, more than the model\'s 255'
    assert one.kind == "left out" and one.columns == ("code",)
    (two,) = notes.model_left_out({"a": "no values", "b": "no values"})
    assert two.startswith("the model leaves out 2 columns: ") and two.columns == ("a", "b")


def test_notes_table_is_one_row_per_note_in_rank_order():
    given = [Note("price is a copy of cost", "leak", columns=["cost"], features=["cost"],
                  moves=1.0), "a plain sentence"]
    table = notes.notes_table(given)
    assert list(table.columns) == ["rank", "kind", "columns", "features", "moves", "note"]
    assert list(table["rank"]) == [1, 2]
    assert list(table["kind"]) == ["leak", "other"]
    assert table["columns"][0] == "cost" and table["note"][1] == "a plain sentence"


def test_rank_key_puts_what_changes_every_number_first_then_what_moves_a_top_feature():
    order = {"area": 0, "year": 1, "colour": 9}
    leak = Note("restates", "leak", columns=["total"], moves=0.2)
    top = Note("gaps in area", "gap", columns=["area"], features=["area"], moves=0.5)
    low = Note("gaps in colour", "gap", columns=["colour"], features=["colour"], moves=0.9)
    small = Note("a few gaps in year", "gap", columns=["year"], features=["year"], moves=0.01)
    ranked = sorted([small, low, top, leak], key=lambda n: notes.rank_key(n, order))
    assert ranked == [leak, top, low, small]
    # within a tier: larger moves first, then the better-ranked feature, then the order found
    a = Note("a", "gap", features=["year"], moves=0.3)
    b = Note("b", "gap", features=["area"], moves=0.3)
    assert notes.rank_key(b, order) < notes.rank_key(a, order)
    assert notes.rank_key(b, order, 0) < notes.rank_key(b, order, 1)


# --------------------------------------------------------------------------- compare


def test_agreement_sentence_says_agree_or_disagree_and_doubts_a_weak_model(side_by_side):
    attrs = side_by_side.table.attrs
    assert compare.agreement_sentence(attrs) == attrs["sentence"]
    assert compare.agreement_sentence({**attrs, "agreement": 0.95}).startswith(
        'StratPD and the model agree on "height"')
    assert "its agreement says little" in compare.agreement_sentence(
        {**attrs, "agreement": 0.95, "model_r2": 0.05})
    assert "disagree" in compare.agreement_sentence({**attrs, "agreement": 0.1,
                                                     "direction": -0.9})
    assert "could not be compared" in compare.agreement_sentence({"feature": "height"})


def test_pair_sentence_puts_h2_in_words():
    said = compare.pair_sentence({"features": ["a", "b"], "h2": 0.02})
    assert said.startswith('"a" and "b": 2% of their joint effect') and "hardly any" in said
    assert "a little" in compare.pair_sentence({"features": ["a", "b"], "h2": 0.1})
    assert "strongly" in compare.pair_sentence({"features": ["a", "b"], "h2": 0.6})
    assert "could not be measured" in compare.pair_sentence({"features": ["a", "b"]})


def test_compare_cells_spill_peoples_headers_then_the_sentences(side_by_side):
    table = side_by_side.table
    cells = compare.compare_cells(table)
    assert cells.columns[0] == "height"
    assert len(cells) == len(table) + 3
    assert cells.iloc[len(table)].isna().all()  # a blank row before the sentences
    assert cells.iloc[-1, 0] == table.attrs["sentence"]
    assert cells.iloc[-2, 0] == table.attrs["model_sentence"]


def test_compare_pictures_draw_the_three_curves_or_the_heat_map(side_by_side, pair):
    one = compare.compare_figure(side_by_side.table)
    legend = [t.get_text() for t in one.axes[0].get_legend().get_texts()]
    assert any("StratPD" in t for t in legend) and any("PDP" in t for t in legend)
    assert any("ALE" in t for t in legend)
    with_ice = compare.compare_figure(side_by_side.table, side_by_side.ice)
    assert len(with_ice.axes[0].lines) >= len(one.axes[0].lines) + 5  # one per ICE row
    heat = compare.pair_figure(pair.table)
    assert heat.axes[0].images or heat.axes[0].collections
    assert "H²" in "".join(t.get_text() for ax in heat.axes for t in [ax.title]) + (
        heat._suptitle.get_text() if heat._suptitle else "")
    assert type(compare.result_figure(pair.table)) is type(heat)
    assert len(compare.result_figure(pair.table).axes[0].images
               or compare.result_figure(pair.table).axes[0].collections)
    assert len(compare.result_figure(side_by_side.table).axes[0].lines) == len(
        one.axes[0].lines)


def test_write_compare_workbook_has_the_sentences_the_table_and_no_formula(
        side_by_side, tmp_path):
    table = side_by_side.table.copy()
    table.attrs = {**side_by_side.table.attrs, "notes": ["=cmd|' /C calc'!A0"]}
    path = tmp_path / "compare.xlsx"
    compare.write_compare_workbook(table, path, side_by_side.ice)
    book = openpyxl.load_workbook(path)
    assert book.sheetnames[0] == "compare" and len(book.sheetnames) == 2  # + the ICE sheet
    cells = _cells(path)
    flat = [v for row in cells for v in row if v is not None]
    assert table.attrs["sentence"] in flat
    assert "=cmd|' /C calc'!A0" in flat  # written as text
    assert all(c.data_type != "f" for ws in book.worksheets for row in ws.iter_rows()
               for c in row)


def test_model_check_and_its_sheet_and_picture(people, tmp_path):
    import xlsxwriter

    result = workflow.analysis(people, "weight")
    seen = []
    check = workflow.model_check(people, "weight", result,
                                 progress=lambda done, total, label: seen.append(done))
    assert list(check["feature"]) == list(result.impact["feature"])
    assert check["agreement"].between(0, 1).all()
    assert seen[0] == 0 and seen[-1] == len(check) + 1
    figure = compare.model_check_figure(check)
    assert len([ax for ax in figure.axes if ax.lines or ax.patches]) == len(check)
    path = tmp_path / "check.xlsx"
    book = xlsxwriter.Workbook(path)
    compare.write_model_check_sheet(book.add_worksheet("Model check"), check,
                                    lambda **props: book.add_format(props))
    book.close()
    cells = _cells(path)
    header = next(i for i, r in enumerate(cells) if r[0] == "feature")
    assert [r[0] for r in cells[header + 1:header + 1 + len(check)]] == list(check["feature"])
    assert openpyxl.load_workbook(path)["Model check"]._images  # the picture is there


# --------------------------------------------------------------------------- pairs


def test_by_group_table_and_figure_one_curve_per_group(by_sex, height):
    assert pairs.is_by_group(by_sex) and not pairs.is_by_group(height)
    table = pairs.by_group_table(by_sex)
    assert list(table.columns[:3]) == ["sex", "education", "partial dependence"]
    assert set(table["sex"]) == {"F", "M"}
    figure = pairs.by_group_figure(by_sex)
    labelled = [line.get_label() for line in figure.axes[0].lines
                if not line.get_label().startswith("_")]
    assert len(labelled) == 2 and all(("F" in t) or ("M" in t) for t in labelled)


def test_interactions_table_and_figure_show_the_strongest_pairs_first(crossed):
    ranking = crossed.ranking
    table = pairs.interactions_table(ranking)
    assert list(table.columns) == ["feature 1", "feature 2", "strength", pairs.SIZE]
    assert {table["feature 1"][0], table["feature 2"][0]} == {"x1", "x2"}
    figure = pairs.interactions_figure(ranking, top=2)
    bars = figure.axes[0].patches
    assert len(bars) == 2
    ticks = [t.get_text() for t in figure.axes[0].get_yticklabels()]
    assert ticks[0] in ("x1 x x2", "x2 x x1")


def test_surface_table_and_figure(surface):
    table = pairs.surface_table(surface)
    assert list(table.columns) == ["x1", "x2", "partial dependence", "interaction part",
                                   "rows", "thin"]
    assert len(table) == len(surface)
    figure = pairs.surface_figure(surface)
    assert figure.axes[0].images or figure.axes[0].collections
    assert figure.axes[0].get_xlabel() == "x1"


def test_pair_sentences_say_which_pair_interacts_and_how(crossed):
    said = words.pair_sentences(crossed.ranking, crossed.curves, top=1)
    assert len(said) == 1
    assert said[0].startswith(("x1 and x2 interact most", "x2 and x1 interact most"))
    flat = crossed.ranking.assign(strength=0.0)
    assert words.pair_sentences(flat, crossed.curves) == []


@pytest.mark.parametrize("kind", ["curve", "interactions", "surface"])
def test_write_pairs_workbook_writes_the_table_and_its_picture(
        kind, by_sex, crossed, surface, tmp_path):
    result = {"curve": by_sex, "interactions": crossed.ranking, "surface": surface}[kind]
    out = io.BytesIO()
    report.write_pairs_workbook(kind, result, out)
    book = openpyxl.load_workbook(io.BytesIO(out.getvalue()))
    sheet = book.worksheets[0]
    texts = {str(c.value) for row in sheet.iter_rows() for c in row if c.value is not None}
    first = {"curve": "education", "interactions": "strength", "surface": "interaction part"}
    assert first[kind] in texts
    assert sheet._images
