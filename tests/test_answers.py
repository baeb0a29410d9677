"""Answers an analyst can use as they stand: repeatable by default, in words, every note kept."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest

from stratpd_xl import catstratpd, stratpd
from stratpd_xl.cli import main
from stratpd_xl.params import DEFAULT_SEED, PARAMETERS, Settings
from stratpd_xl.presentation.words import sentence, spoken, spoken_value, unit_of
from stratpd_xl.schema import Finding
from tests.test_cli import houses


@pytest.fixture
def csv_path(tmp_path: Path) -> Path:
    path = tmp_path / "houses.csv"
    houses().to_csv(path, index=False)
    return path


def test_one_documented_default_seed_for_every_front_end():
    from stratpd_xl import spreadsheet

    assert PARAMETERS["random_state"].default == DEFAULT_SEED
    assert Settings().random_state == DEFAULT_SEED
    assert spreadsheet.RANDOM_STATE == DEFAULT_SEED  # formulas and the ribbon
    # None given on purpose still means fresh random halves.
    assert Settings.make(random_state=None).random_state is None
    report = Settings.for_report(n_trials=None, random_state=5)
    assert report.n_trials == PARAMETERS["n_trials"].report_default > 1
    assert report.random_state == 5


def test_two_runs_without_a_seed_write_the_same_bytes(csv_path, tmp_path, capsys):
    written: list[list[bytes]] = []
    for run in ("a", "b"):
        outs = [tmp_path / f"{run}.{ext}" for ext in ("csv", "xlsx", "png")]
        args = ["curve", csv_path, "-t", "price", "-f", "area"]
        assert main([str(a) for a in args + [x for o in outs for x in ("-o", o)]]) == 0
        report = tmp_path / f"{run}-report.xlsx"
        assert main([str(a) for a in ["report", csv_path, "-t", "price", "-o", report]]) == 0
        written.append([p.read_bytes() for p in [*outs, report]])
    capsys.readouterr()
    assert written[0] == written[1]
    # ...and another seed changes the answer (the halves really are random).
    other = tmp_path / "other.csv"
    assert main(["curve", str(csv_path), "-t", "price", "-f", "area", "--seed", "9",
                 "-o", str(other)]) == 0
    assert other.read_bytes() != written[0][0]


# --------------------------------------------------------------------------- in words


def test_numbers_are_rounded_as_a_person_says_them():
    assert [spoken(v) for v in (48_213.7, -5.591, 0.07342, 1_234_567, 0.0)] == [
        "48,000", "-5.6", "0.073", "1,200,000", "0"]
    assert [spoken_value(v) for v in (15_795.3, 0.31, 180.234, 2009, 123_456)] == [
        "15,795", "0.31", "180.2", "2009", "123,456"]
    assert [unit_of(n) for n in ("price ($)", "body_mass_g", "mass [kg]", "price", "Age")] == [
        "$", "g", "kg", "", ""]


def _numeric(change, low=None, high=None, swing=None, rank=1, label=None):
    return Finding("area", "numeric", change, low, high, 52.5, 148.0, (10, 90),
                   swing if swing is not None else abs(change), None, rank, [], label)


def test_a_numeric_sentence_states_the_rise_its_band_and_its_unit():
    said = sentence(_numeric(48_213.0, 44_120.0, 52_310.0), "price ($)")
    assert said.startswith("price ($) rises most with area: from the 10th to the 90th "
                           "percentile of area (52.5 to 148), price ($) goes up by about")
    assert "goes up by about $48,000" in said and "95 % band 44,000 to 52,000" in said
    fall = sentence(_numeric(-5.59, -6.15, -5.03, rank=2), "Sales")
    assert fall.startswith("Next, area:") and "goes down by about 5.6" in fall
    assert "95 % band 5.0 to 6.2" in fall  # a fall's band as falls, smaller first
    unsure = sentence(_numeric(3.0, -9.0, 16.0, swing=13.0, rank=3), "y")
    assert "includes no change" in unsure and "not steadily" in unsure
    chance = sentence(_numeric(10.2, 7.1, 13.3, label="P(default = Yes)"), "default")
    assert chance.startswith("The chance of default = Yes rises most with area")
    assert "10 percentage points" in chance


def test_a_category_sentence_says_which_is_above_which():
    f = Finding("region", "categorical", 20_300.0, 18_100.0, 22_500.0, "north", "south",
                rank=1)
    assert sentence(f, "price") == (
        "price depends most on region: region south is about 20,000 above north (95 % band "
        "18,000 to 23,000), other columns held alike.")


def test_the_engine_records_the_rise_and_its_band():
    frame = houses(n=600)
    curve = stratpd(frame, "price", "area", n_trials=10)
    rise = curve.attrs["rise"]
    lo, hi = np.percentile(frame["area"], [10, 90], method="inverted_cdf")
    assert (rise["x_from"], rise["x_to"]) == (lo, hi)
    # 50 per m2, within a 600-row sample's noise, and the band holds the estimate.
    assert rise["change"] == pytest.approx(50 * (hi - lo), rel=0.1)
    assert rise["low"] < rise["change"] < rise["high"]
    assert rise["change"] == pytest.approx(
        np.interp(hi, curve["x"], curve["pd"]) - np.interp(lo, curve["x"], curve["pd"]),
        rel=0.02)
    garden = catstratpd(frame, "price", "garden", n_trials=10).attrs["contrast"]
    assert garden["versus"] == "no" and garden["category"] == "yes"
    assert garden["change"] == pytest.approx(30_000, rel=0.1)
    assert garden["low"] < garden["change"] < garden["high"]


def test_the_report_says_it_in_words_with_every_note(csv_path, tmp_path, capsys):
    frame = houses()
    frame["id"] = range(len(frame))  # left out as an identifier: a note
    path = tmp_path / "with-id.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "report.xlsx"
    assert main(["report", str(path), "-t", "price", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    notes = [line.removeprefix("note: ") for line in err.splitlines()
             if line.startswith("note: ")]
    said = [line for line in err.splitlines() if "other columns held alike" in line]
    assert err.splitlines()[-1].startswith("done in ")  # then the time each step took
    assert len(said) == 3 and said[0].startswith("price depends most on garden: garden yes is")
    ws = openpyxl.load_workbook(out)["Summary"]
    cells = [str(c.value).removeprefix("note: ") for row in ws.iter_rows() for c in row
             if c.value is not None]
    assert notes and all(n in cells for n in notes)
    assert all(s in cells for s in said)
    assert cells.index(said[0]) < cells.index("feature")  # read before the table


# --------------------------------------------------------------------------- yes/no


def _rare_event(n: int = 4000, seed: int = 1) -> pd.DataFrame:
    """Defaults as in ISLP's Default: rare (about 3 %), and nearly certain at high balances."""
    rng = np.random.default_rng(seed)
    balance = rng.gamma(2.0, 400.0, n)
    income = rng.normal(40_000, 12_000, n)
    chance = 1 / (1 + np.exp(-(balance - 2000) / 120))
    default = np.where(rng.random(n) < chance, "Yes", "No")
    return pd.DataFrame({"balance": balance, "income": income, "default": default})


def test_a_yes_no_curve_stays_a_possible_chance():
    frame = _rare_event()
    curve = stratpd(frame, "default", "balance", n_trials=10)
    base = 100 * (frame["default"] == "Yes").mean()
    for column in ("pd", "pd_low", "pd_high", "curve_low", "curve_high"):
        level = base + curve[column].to_numpy()
        assert level.min() >= -0.5 and level.max() <= 100.5, column
        assert curve[column].max() - curve[column].min() <= 100.0
    assert any("cannot go below 0 % or above 100 %" in w for w in curve.attrs["warnings"])
    effects = catstratpd(frame.assign(high=frame["balance"] > 1500), "default", "high",
                         n_trials=10)
    assert effects[["pd", "pd_low", "pd_high", "curve_low", "curve_high"]].abs().max().max() \
        <= 100.0


# --------------------------------------------------------------------------- scripts


class _Stdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = io.BytesIO(data)


def test_stdin_json_and_quiet(csv_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", _Stdin(csv_path.read_bytes()))
    assert main(["impact", "-", "-t", "price", "--json", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert err == ""  # quiet: no progress, notes or conclusion
    answer = json.loads(out)
    assert answer["columns"] == ["feature", "kind", "impact", "share", "rows", "thin",
                                 "evidence"]
    assert [r["feature"] for r in answer["rows"]][:2] == ["garden", "area"]
    assert answer["attrs"]["target"] == "price"
    assert answer["conclusion"][0].startswith("price depends most on garden")

    monkeypatch.setattr(sys, "stdin", _Stdin(csv_path.read_bytes()))
    assert main(["curve", "-", "-t", "price", "-f", "area", "--json"]) == 0
    out, err = capsys.readouterr()
    curve = json.loads(out)
    assert curve["columns"][:2] == ["x", "pd"] and len(curve["rows"]) > 20
    assert curve["attrs"]["rise"]["percentiles"] == [10, 90]
    assert curve["headers"]["x"] == "area" and curve["headers"]["pd"] == "partial dependence"
    # Not quiet: the steps' times and the conclusion on stderr.
    assert "done in" in err and "(reading " in err and "analysing " in err
    assert "price rises with area" in err


def test_vector_charts_and_a_category_order(csv_path, tmp_path, capsys):
    svg, pdf = tmp_path / "garden.svg", tmp_path / "garden.pdf"
    args = ["curve", str(csv_path), "-t", "price", "-f", "garden", "--order", "garden=yes,no",
            "-o", str(svg), "-o", str(pdf)]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert svg.read_text(encoding="utf-8").lstrip().startswith("<?xml")
    assert "<svg" in svg.read_text(encoding="utf-8")
    assert pdf.read_bytes().startswith(b"%PDF")
    # "yes" first: the baseline the other is compared with.
    assert "garden no is about 30,000 below yes" in err
    first = (svg.read_bytes(), pdf.read_bytes())
    assert main([*args, "--force"]) == 0
    assert (svg.read_bytes(), pdf.read_bytes()) == first  # the same bytes again
    assert main(["curve", str(csv_path), "-t", "price", "-f", "garden", "--order",
                 "garden=maybe"]) == 2
    assert 'no value "maybe"' in capsys.readouterr().err


def test_the_data_strip_counts_rows_at_every_value():
    rng = np.random.default_rng(3)
    n = 3000
    frame = pd.DataFrame({"year": rng.integers(2003, 2010, n), "age": rng.integers(18, 81, n)})
    frame["wage"] = 0.5 * frame["age"] - frame["year"] + rng.normal(0, 5, n)
    years = stratpd(frame, "wage", "year").attrs["strip"]
    # The last year has rows (and a bar) even though no slope starts there.
    assert years["values"] == list(range(2003, 2010))
    assert years["count"] == np.bincount(frame["year"] - 2003).tolist()
    ages = stratpd(frame, "wage", "age").attrs["strip"]
    edges = np.asarray(ages["edges"])
    # Whole-number ages: bins of whole numbers, edges half-way between them (no aliasing).
    assert np.all(edges % 1 == 0.5) and len(set(np.diff(edges))) == 1
    assert sum(ages["count"]) == n


def test_the_printed_table_reads_like_the_workbook(csv_path, capsys):
    assert main(["impact", str(csv_path), "-t", "price", "-q"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["feature", "kind", "impact", "share", "rows", "thin",
                                "evidence"]
    shares = [line.split()[3] for line in lines[1:]]
    assert all(s.endswith("%") for s in shares)  # 57.4%, not 0.573912
    assert sum(float(s[:-1]) for s in shares) == pytest.approx(100, abs=0.5)
    assert main(["curve", str(csv_path), "-t", "price", "-f", "area", "--trials", "3",
                 "-q"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    # The curve and its band with one count of decimals (four digits on the largest).
    places = {len(cell.partition(".")[2]) for row in rows for cell in (row[1], row[-2], row[-1])}
    assert len(places) == 1


def test_native_curve_charts_put_their_tick_labels_at_the_bottom(csv_path, tmp_path, capsys):
    import zipfile

    for feature in ("area", "garden"):
        out = tmp_path / f"{feature}.xlsx"
        assert main(["curve", str(csv_path), "-t", "price", "-f", feature, "-o", str(out),
                     "-q"]) == 0
        with zipfile.ZipFile(out) as book:
            chart = book.read("xl/charts/chart1.xml").decode()
        # The category/x axis: its labels "low", below the plot, not on the zero line.
        x_axis = chart.split("<c:valAx>" if feature == "area" else "<c:catAx>")[1]
        assert '<c:tickLblPos val="low"/>' in x_axis
        assert "change in price vs " in chart


def test_float_noise_is_never_shown_and_never_stored_away(tmp_path, capsys):
    """0.1 * 3 is 0.30000000000000004 in binary: every output shows 0.3 (a cell number format
    with the decimals the column has, 15 digits in CSV, the printed table, the picture's
    category labels); the workbook stores the number (as xlsxwriter writes it: 16 digits),
    not a rounded text."""
    from stratpd_xl.presentation.charts import curve_figure

    rng = np.random.default_rng(0)
    k = rng.integers(0, 10, 2000)
    frame = pd.DataFrame({"x": k * 0.1, "w": rng.normal(size=2000)})
    frame["y"] = 5 * frame["x"] + frame["w"] + rng.normal(size=2000)
    assert 0.30000000000000004 in set(frame["x"])
    data = tmp_path / "noise.csv"
    frame.to_csv(data, index=False)
    book, text = tmp_path / "x.xlsx", tmp_path / "x.csv"
    assert main(["curve", str(data), "-t", "y", "-f", "x", "-o", str(book), "-o", str(text),
                 "-q"]) == 0
    capsys.readouterr()
    assert main(["curve", str(data), "-t", "y", "-f", "x", "-q"]) == 0
    printed = [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]]
    assert printed[:4] == ["0.0", "0.1", "0.2", "0.3"]
    assert "0.3," in text.read_text(encoding="utf-8-sig")
    assert "0000000" not in text.read_text(encoding="utf-8-sig")
    ws = openpyxl.load_workbook(book).active
    cells = [c for row in ws.iter_rows(max_col=1) for c in row
             if isinstance(c.value, float) and abs(c.value - 0.3) < 1e-12]
    assert len(cells) == 1 and cells[0].number_format == "0.0"

    effects = catstratpd(frame.assign(x=frame["x"].astype(object)), "y", "x")
    labels = [t.get_text() for t in curve_figure(effects).axes[0].get_xticklabels()]
    assert "0.3" in labels and not any("0000000" in t for t in labels)


def test_every_output_says_which_band_it_holds(csv_path, capsys):
    """Per point or for the whole curve: the workbook's headers, the JSON's headers for its
    documented columns, and the legends of the pictures, in the same words."""
    from stratpd_xl.presentation.charts import curve_figure
    from stratpd_xl.presentation.tables import (
        ALL_HIGH,
        ALL_LOW,
        BAND_HIGH,
        BAND_LOW,
        WHOLE_HIGH,
        WHOLE_LOW,
        curve_table,
    )

    assert main(["curve", str(csv_path), "-t", "price", "-f", "area", "--trials", "3",
                 "--json", "-q"]) == 0
    headers = json.loads(capsys.readouterr().out)["headers"]
    assert [headers[c] for c in ("pd_low", "pd_high", "curve_low", "curve_high")] == [
        "low (95% band per point)", "high (95% band per point)",
        "low (95% band, whole curve)", "high (95% band, whole curve)"]
    frame = houses()
    curve = stratpd(frame, "price", "area", n_trials=3)
    assert list(curve_table(curve).columns)[2:6] == [BAND_LOW, BAND_HIGH, WHOLE_LOW, WHOLE_HIGH]
    effects = catstratpd(frame, "price", "garden", n_trials=3)
    assert list(curve_table(effects).columns)[3:7] == [BAND_LOW, BAND_HIGH, ALL_LOW, ALL_HIGH]
    legends = [t.get_text() for ax in curve_figure(effects).axes
               for t in (ax.get_legend().get_texts() if ax.get_legend() else [])]
    assert legends == ["95% band per point"]
    legends = [t.get_text() for ax in curve_figure(curve).axes
               for t in (ax.get_legend().get_texts() if ax.get_legend() else [])]
    assert any(t.startswith("95% band") for t in legends)
