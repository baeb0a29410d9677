"""Sentences that say what the curve shows: its shape and size, on evidence rows back."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from stratpd_xl import catstratpd, stratpd
from stratpd_xl import interactions as sx_interactions
from stratpd_xl.presentation.words import sentence
from stratpd_xl.workflow import finding

N = 3000


def _table(effect, x: np.ndarray, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    other = rng.normal(0, 1, x.size)
    y = effect(x) + 2 * other + rng.normal(0, 1, x.size)
    return pd.DataFrame({"x": x, "other": other, "y": y})


def _said(frame: pd.DataFrame, trials: int = 10) -> tuple[dict, str]:
    curve = stratpd(frame, "y", "x", n_trials=trials)
    return curve.attrs["shape"], sentence(finding(curve, rank=1), "y")


def _number(text: str, after: str) -> float:
    m = re.search(re.escape(after) + r" ([-\d,.]+)", text)
    assert m, (after, text)
    return float(m.group(1).replace(",", ""))


@pytest.mark.parametrize("seed", [0, 1])
def test_a_u_shaped_driver_is_said_as_a_u_with_its_depth(seed):
    x = np.random.default_rng(seed + 10).uniform(-2, 2, N)
    shape, said = _said(_table(lambda v: 8 * v**2, x, seed))
    assert shape["kind"] == "u"
    lo, hi = np.percentile(x, [10, 90])
    truth = (8 * lo**2 + 8 * hi**2) / 2  # the ends' mean height above the bottom (at 0)
    assert said.startswith("y depends most on x: lowest near x = ")
    assert abs(_number(said, "lowest near x =")) <= 0.3
    assert _number(said, "about") == pytest.approx(truth, rel=0.1)
    assert "higher at both ends" in said and "95 % band" in said
    assert "goes down" not in said and "goes up" not in said


def test_a_hump_is_said_as_a_hump_with_its_height():
    x = np.random.default_rng(3).uniform(0, 10, N)
    shape, said = _said(_table(lambda v: -((v - 5) ** 2), x))
    assert shape["kind"] == "hump"
    assert _number(said, "highest near x =") == pytest.approx(5, abs=0.6)
    lo, hi = np.percentile(x, [10, 90])
    truth = ((lo - 5) ** 2 + (hi - 5) ** 2) / 2
    assert _number(said, "about") == pytest.approx(truth, rel=0.1)
    assert "lower at both ends" in said


def test_a_lopsided_u_gives_each_side_its_size():
    x = np.random.default_rng(4).uniform(-2, 2, N)
    shape, said = _said(_table(lambda v: np.where(v > 0, 8 * v**2, 2 * v**2), x))
    assert shape["kind"] == "u"
    assert shape["right"] > 3 * shape["left"]
    assert "higher at both ends" not in said and said.count("95 % band") == 2


def test_a_step_is_said_with_its_height_and_place():
    x = np.random.default_rng(5).integers(0, 61, N)
    shape, said = _said(_table(lambda v: np.where(v > 30, 10.0, 0.0), x))
    assert shape["kind"] == "step"
    assert said.startswith("y rises most with x: it jumps up by about ")
    assert _number(said, "jumps up by about") == pytest.approx(10, rel=0.12)
    assert _number(said, "near x =") == pytest.approx(30.5, abs=1.5)
    assert "level on either side" in said


def test_a_monotone_driver_is_said_as_a_rise_of_its_size():
    x = np.random.default_rng(6).normal(0, 1, N)
    shape, said = _said(_table(lambda v: -3 * v, x))
    assert shape["kind"] == "fall"
    lo, hi = np.percentile(x, [10, 90])
    assert _number(said, "goes down by about") == pytest.approx(3 * (hi - lo), rel=0.08)
    # a straight line is neither a step nor a U, with or without a band
    assert _said(_table(lambda v: -3 * v, x), trials=1)[0]["kind"] == "fall"


def test_a_flat_driver_says_no_clear_change():
    x = np.random.default_rng(7).normal(0, 1, N)
    shape, said = _said(_table(lambda v: 0 * v, x))
    assert shape["kind"] == "flat"
    assert "no clear change" in said and "includes no change" in said
    assert not said.startswith("y depends most on")


def test_the_shape_keeps_the_feature_s_units_and_scales():
    x = np.random.default_rng(8).uniform(-2, 2, N)
    frame = _table(lambda v: 8 * v**2, x)
    big = frame.assign(x=frame["x"] * 1000, y=frame["y"] * 1000)
    small, large = stratpd(frame, "y", "x").attrs["shape"], stratpd(big, "y", "x").attrs["shape"]
    assert large["kind"] == small["kind"] == "u"
    assert large["at"] == pytest.approx(small["at"] * 1000)
    assert large["change"] == pytest.approx(small["change"] * 1000)


def _rare_category(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    town = rng.choice(["north", "south", "east"], n, p=[0.5, 0.3, 0.2]).astype(object)
    town[:2] = "tiny"  # two houses far above the rest: noise, not a finding
    effect = pd.Series(town).map({"north": 0, "south": 20, "east": 8, "tiny": 0}).to_numpy()
    area = rng.normal(100, 20, n)
    price = effect + 0.5 * area + rng.normal(0, 5, n)
    price[:2] += 80
    return pd.DataFrame({"town": town, "area": area, "price": price})


def test_a_category_of_two_rows_never_leads_the_sentence():
    frame = _rare_category()
    effects = catstratpd(frame, "price", "town", n_trials=10)
    tiny = effects.loc[effects["category"] == "tiny", "pd"].abs().iloc[0]
    assert tiny > effects["pd"].drop(effects.index[effects["category"] == "tiny"]).abs().max()
    c = effects.attrs["contrast"]
    assert {c["category"], c["versus"]} == {"south", "north"}
    assert c["rows"] >= 20 and c["versus_rows"] >= 20 and c["well_backed"]
    said = sentence(finding(effects, rank=1), "price")
    assert "tiny" not in said
    assert re.search(r"town south is about (19.9|20) above north \(95 % band [\d.]+ to [\d.]+; "
                     r"[\d,]+ and [\d,]+ rows\)", said), said


def test_with_no_two_well_backed_categories_the_sentence_says_so():
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"kind": ["a"] * 16 + ["b"] * 12 + ["c"] * 4,
                          "other": rng.normal(0, 1, 32)})
    frame["y"] = frame["kind"].map({"a": 0, "b": 5, "c": 50}) + frame["other"]
    effects = catstratpd(frame, "y", "kind", min_samples_leaf=16)
    c = effects.attrs["contrast"]
    assert {c["category"], c["versus"]} == {"a", "b"} and not c["well_backed"]
    said = sentence(finding(effects, rank=1), "y")
    assert said.startswith("y depends most on kind, but no two of its categories have 20 rows")
    assert "(16 and 12 rows)" in said or "(12 and 16 rows)" in said


def _blank_sex(n: int = 1200, seed: int = 4, males: float = 0.45) -> pd.DataFrame:
    """Hawks in small: weight by sex (M 10 above F) and wing, and sex blank for a third of
    the birds, which weigh 160 more (another species, mostly unsexed)."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n, p=[1 - males, males]).astype(object)
    blank = rng.random(n) < 0.33
    wing = rng.normal(300, 40, n)
    weight = 10 * (sex == "M") + 160 * blank + 2 * wing + rng.normal(0, 30, n)
    sex[blank] = None
    return pd.DataFrame({"Sex": sex, "Wing": wing, "Weight": weight})


def test_the_blanks_of_a_category_column_are_said_as_blank_rows_never_as_a_category():
    # Hawks: "Then, Sex: Sex (missing) is about 160 above F (59 and 124 rows)": the blanks
    # led as a category named "(missing)".  The headline is between named categories; the
    # blanks, well backed, are said as the rows where Sex is blank, first when they move
    # the target more.
    effects = catstratpd(_blank_sex(), "Weight", "Sex", n_trials=5)
    c = effects.attrs["contrast"]
    assert {c["category"], c["versus"]} == {"F", "M"} and "blank_end" not in c
    assert c["blank"]["pd"] == pytest.approx(160, abs=25) and c["blank"]["rows"] >= 20
    assert c["blank"]["versus"] in ("F", "M")
    said = sentence(finding(effects, rank=3), "Weight")
    assert "(missing)" not in said
    assert re.match(r"Then, Sex: where Sex is blank \([\d,]+ rows\), Weight is about 1[4-8]\d "
                    r"higher than where it is [FM] \([\d,]+ rows; 95 % band .*\); Sex [FM] is "
                    r"about .* (above|below) [FM] \(.*[\d,]+ and [\d,]+ rows\), other columns "
                    r"held alike\.$", said), said


def test_blanks_beside_one_well_backed_category_are_the_contrast_as_blank_rows():
    # Only one named category has 20 rows: the contrast is the blanks against it, worded as
    # rows where the feature is blank.
    frame = _blank_sex(n=600, males=0.02)
    effects = catstratpd(frame, "Weight", "Sex")
    c = effects.attrs["contrast"]
    assert c.get("blank_end") and c["versus"] == "F" and c["well_backed"]
    said = sentence(finding(effects, rank=1), "Weight")
    assert said.startswith("Weight depends most on Sex: rows where Sex is blank sit about "), said
    assert "higher" not in said and " above those where it is F (" in said
    assert "(missing)" not in said


# --------------------------------------------------------------------------- interactions


@pytest.fixture(scope="module")
def crossing(tmp_path_factory) -> str:
    """y = 2.25 x1 sign(x3) + x2: x1's slope is +2.25 or -2.25 by the sign of x3."""
    rng = np.random.default_rng(0)
    n = 2000
    x1, x2, x3 = rng.uniform(-1, 1, (3, n))
    path = tmp_path_factory.mktemp("crossing") / "crossing.csv"
    pd.DataFrame({"x1": x1, "x2": x2, "x3": x3,
                  "y": 2.25 * x1 * np.sign(x3) + x2 + rng.normal(0, 0.3, n)}
                 ).to_csv(path, index=False)
    return str(path)


def _slopes(text: str) -> list[float]:
    return [float(v) for v in re.findall(r"average slope (-?[\d.]+)\)|\((-?[\d.]+)\) \(", text)
            for v in v if v]


def test_the_interactions_command_says_the_pair_in_words_and_in_json(crossing, capsys):
    import json

    from stratpd_xl.cli import main

    assert main(["interactions", crossing, "-t", "y"]) == 0
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if line.startswith("x1 and x3 interact most")]
    assert len(said) == 1
    assert "size" in said[0] and "beyond their separate effects" in said[0]
    slopes = sorted(_slopes(said[0]))
    assert slopes[0] == pytest.approx(-2.25, abs=0.25)
    assert slopes[-1] == pytest.approx(2.25, abs=0.25)
    assert main(["interactions", crossing, "-t", "y", "--json", "-q"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["conclusion"] == answer["attrs"]["findings"]
    assert answer["conclusion"][0].startswith("x1 and x3 interact most")


def test_the_report_s_interactions_sheet_says_it_under_the_chart(crossing, tmp_path, capsys):
    import openpyxl

    from stratpd_xl.cli import main

    out = tmp_path / "report.xlsx"
    assert main(["report", crossing, "-t", "y", "--interactions", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert any(line.startswith("x1 and x3 interact most") for line in err.splitlines())
    ws = openpyxl.load_workbook(out)["Interactions"]
    cells = {str(c.value): (c.row, c.column) for row in ws.iter_rows() for c in row
             if c.value is not None}
    assert any(t.startswith("x1 and x3 interact most") for t in cells)  # in the header block
    assert "size (typical interaction part, target units)" in cells
    # the by-group chart's finding, in words, below the picture (right of the table)
    below = [(t, at) for t, at in cells.items() if t.startswith("the effect of x1 on y")]
    assert below and below[0][1][1] > 1
    images = ws._images
    assert len(images) == 2


def test_interaction_progress_counts_the_pairs_to_the_end(crossing):
    calls: list[tuple[int, int, str]] = []
    frame = pd.read_csv(crossing)
    frame["x4"] = np.random.default_rng(1).normal(size=len(frame))
    sx_interactions(frame, "y", progress=lambda d, t, f: calls.append((d, t, f)))
    steps = [c for c in calls if c[0] < c[1]]
    done = [d for d, _, _ in steps]
    assert done == sorted(done)
    # every pair has a step of its own, and the bar reaches its end only after the last one
    assert sum(" x " in f for _, _, f in steps) == 6
    assert steps[-1][0] == steps[-1][1] - 1 and " x " in steps[-1][2]
    assert calls[-1] == (4, 4, "")  # the end: the features looked at


def test_the_model_check_reports_its_fit_and_each_comparison(crossing):
    from stratpd_xl import workflow
    from stratpd_xl.params import Settings

    frame = pd.read_csv(crossing)
    result = workflow.analysis(frame, "y", settings=Settings())
    calls: list[tuple[int, int, str]] = []
    workflow.model_check(frame, "y", result, progress=lambda d, t, f: calls.append((d, t, f)))
    assert calls[0] == (0, 4, "fitting a model")
    assert [f for _, _, f in calls[1:-1]] == list(result.impact["feature"])
    assert calls[-1][0] == calls[-1][1] == 4


def test_a_yes_no_chart_keeps_its_value_axis_title_inside_the_picture():
    from stratpd_xl.presentation.charts import curve_figure, figure_png

    rng = np.random.default_rng(0)
    n = 3000
    balance, income = rng.gamma(2.0, 400.0, n), rng.normal(40_000, 12_000, n)
    chance = 1 / (1 + np.exp(-(balance - 1200) / 150))
    frame = pd.DataFrame({"balance": balance, "income": income,
                          "default": np.where(rng.random(n) < chance, "Yes", "No")})
    for result in (stratpd(frame, "default", "balance"),
                   catstratpd(frame.assign(high=balance > 900), "default", "high")):
        fig = curve_figure(result)
        figure_png(fig)  # lays the figure out
        renderer = fig.canvas.get_renderer()
        label = fig.axes[0].yaxis.label
        box = label.get_window_extent(renderer)
        assert "P(default = Yes)" in label.get_text().replace("\n", " ")
        assert 0 <= box.y0 and box.y1 <= fig.bbox.height, label.get_text()


def test_a_feature_with_no_well_backed_contrast_leads_no_sentence():
    # midwest's "county", hfi's "countries", opt's "OTF5" read as text: hundreds of
    # categories of a few rows each ranked near the top, and the conclusion opened with
    # "depends most on county, but no two of its categories have 20 rows".
    from stratpd_xl import workflow
    from stratpd_xl.params import Settings

    rng = np.random.default_rng(7)
    n = 1_000
    county = np.repeat([f"county {i}" for i in range(200)], 5)
    effect = dict(zip(np.unique(county), rng.normal(scale=4.0, size=200), strict=True))
    frame = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                          "x3": rng.normal(size=n), "county": county})
    frame["y"] = (frame["x1"] + 0.5 * frame["x2"] + 0.2 * frame["x3"]
                  + frame["county"].map(effect) + rng.normal(scale=0.5, size=n))
    result = workflow.analysis(frame, "y", settings=Settings.make(n_trials=1))
    assert result.impact["feature"].iloc[0] == "county"  # ranked first on its few rows
    said = [sentence(f, "y") for f in result.findings]
    assert [f.feature for f in result.findings] == ["x1", "x2", "x3"], said
    assert [f.rank for f in result.findings] == [1, 2, 3]
    assert said[0].startswith("y rises most with x1") and not any("county" in s for s in said)
    (note,) = [n for n in result.notes if "leads no sentence" in n]
    assert note.startswith('"county" ranks 1st but leads no sentence: no two of its '
                           "categories have 20 rows (its two largest have 5 and 5 rows)")
    assert note.features == ("county",) and result.notes.index(note) < 5  # shown


def test_a_yes_no_size_read_off_points_cut_at_0_or_100_percent_says_so():
    # ISLR's Default: P(default) climbs steeply with balance, 3 % say yes; 5,889 of the
    # curve's 9,498 points went past 0 % or 100 %, and its sentence quoted the size alone.
    rng = np.random.default_rng(0)
    n = 4_000
    balance = rng.gamma(2, 400, n)
    chance = 1 / (1 + np.exp(-(balance - 1_800) / 120))
    frame = pd.DataFrame({"balance": balance, "income": rng.normal(40, 10, n),
                          "default": np.where(rng.random(n) < chance, "Yes", "No")})
    curve = stratpd(frame, "default", "balance")
    (limits,) = [w for w in curve.attrs["warnings"] if w.kind == "limits"]
    cut, points = limits.facts["cut"], limits.facts["points"]
    assert cut > points / 4
    low, high = limits.facts["below"]
    assert low < 100 and 400 < high < 1_800  # the low balances, where the chance is ~0
    said = sentence(finding(curve, rank=1), "default")
    assert "goes up by about" in said
    # Where it was held and what that means: the curve says only that the chance is near
    # 0 % there, and the size, starting on that stretch, is a change from a chance near 0 %.
    found = re.search(r"; its curve went below 0 % between balance = [\d.]+ and ([\d,]+) and "
                      r"above 100 % between balance = [\d,]+ and [\d,]+ "
                      rf"\({cut:,} of its {points:,} points\) and is held at 0 % or 100 % "
                      "there: across those stretches it says only that the chance is near 0 % "
                      r"or 100 %, not how it changes, and the size starts on it \(0 % at "
                      r"[\d.]+\), so read it as the change from a chance near 0 %\.$", said)
    assert found, said
    assert float(found.group(1).replace(",", "")) == pytest.approx(high, rel=0.01)
    # The note says where too.
    assert "below 0 % between balance " in limits and "says only that the chance" in limits
    # A few points cut (Default's income: 58 of 9,940) are left to the note.
    import dataclasses

    few = str(limits).replace(f"{cut:,} of its", f"{points // 20:,} of its")
    quiet = dataclasses.replace(finding(curve, rank=1), notes=[few])
    assert "past 0 %" not in sentence(quiet, "default")
    # A curve that stays within the limits says nothing of them.
    mild = frame.assign(default=np.where(rng.random(n) < 0.2 + balance / 20_000, "Yes", "No"))
    calm = stratpd(mild, "default", "balance")
    assert not [w for w in calm.attrs["warnings"] if w.kind == "limits"]
    assert "past 0 %" not in sentence(finding(calm, rank=1), "default")


def test_a_feature_tied_alone_that_would_lead_is_said_with_the_columns_that_determine_it():
    # Hitters: "CHits" (99.2 % a linear function of CAtBat, CRBI and CRuns, whose effects the
    # data show) would lead; the first sentence read '"CHits" together would lead ... each
    # nearly determined by the others'.
    import dataclasses

    from stratpd_xl.schema import Finding

    f = Finding(feature="CAtBat", kind="numeric", change=720.0, low=None, high=None,
                start=300, end=7000, percentiles=(10, 90), rank=1,
                shape={"kind": "rise"})
    alone = dataclasses.replace(f, lead_group={
        "features": ["CHits"], "first": "CHits", "impact": 440.0, "versus": 340.0,
        "determined_by": ["CAtBat", "CRBI", "CRuns"]})
    said = sentence(alone, "Salary")
    assert said.startswith('"CHits" would lead: it has the largest impact of all (440, against '
                           '340 for CAtBat), but "CAtBat", "CRBI" and "CRuns" nearly determine '
                           "it, so no data show how it moves Salary with them held fixed. Of the "
                           "other features, Salary rises most with CAtBat: "), said
    one = dataclasses.replace(f, lead_group={**alone.lead_group, "determined_by": ["CAtBat"]})
    assert ', but "CAtBat" nearly determines it, so no data show how it moves Salary with it ' \
           "held fixed." in sentence(one, "Salary")
    # Impacts that round alike get a third digit.
    close = dataclasses.replace(f, lead_group={
        "features": ["experience", "education", "age"], "first": "experience",
        "impact": 1.234, "versus": 1.214})
    assert "(1.23, against 1.21 for CAtBat)" in sentence(close, "wage")
    assert sentence(f, "Salary").startswith("Salary rises most with CAtBat")


def test_a_yes_no_curve_held_at_one_point_names_the_point():
    # Caravan's MINKGEM: one of its 10 points held at 0 %, said "between MINKGEM = 9 and 9".
    import dataclasses

    from stratpd_xl.schema import Finding, Note

    held = Note("a chance cannot go below 0 % ...", "limits", columns=["MINKGEM"],
                features=["MINKGEM"], moves=0.1, cut=1, points=10, below=(9, 9))
    f = Finding(feature="MINKGEM", kind="numeric", change=6.7, low=None, high=None,
                start=2, end=5, percentiles=(10, 90), rank=1, shape={"kind": "rise"},
                target_label="P(Purchase = Yes)", notes=[held])
    said = sentence(f, "Purchase")
    assert "; its curve went below 0 % at MINKGEM = 9 (1 of its 10 points) and is held" in said
    assert "between" not in said and "the size starts" not in said
    assert "(1 of its 10 points)" not in sentence(dataclasses.replace(f, notes=[]), "Purchase")
