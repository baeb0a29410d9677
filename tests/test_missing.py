"""The effect of being missing: a feature's blanks get a row of their own, compared inside the
strata with the rows that have a value (engine/_missing.py), on known truths."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import stratpd_xl as sx
from stratpd_xl.schema import MISSING_LABEL, curve_points, missing_row


def _table(n: int = 3000, seed: int = 1, blank_effect: float = 5.0,
           depends: bool = False) -> tuple[pd.DataFrame, np.ndarray]:
    """y = 2 x1 + 3 x2 + noise, x1 blank in about a fifth of the rows, where y is
    ``blank_effect`` higher; blank at random, or (``depends``) mostly where x2 is high."""
    rng = np.random.default_rng(seed)
    x1 = rng.uniform(0, 10, n)
    x2 = rng.normal(size=n)
    other = rng.choice(list("abc"), n)
    chance = 1 / (1 + np.exp(-2.5 * x2)) * 0.4 if depends else np.full(n, 0.2)
    blank = rng.random(n) < chance
    y = 2 * x1 + 3 * x2 + rng.normal(size=n) + blank_effect * blank
    return pd.DataFrame({"x1": np.where(blank, np.nan, x1), "x2": x2, "other": other,
                         "y": y}), blank


@pytest.mark.parametrize("depends", [False, True], ids=["at random", "depends on x2"])
def test_blanks_that_raise_y_by_5_get_a_row_near_5_with_a_band(depends):
    data, blank = _table(depends=depends)
    curve = sx.stratpd(data, "y", "x1")
    row = missing_row(curve)
    assert row is not None and len(row) == 1 and curve["missing"].iloc[-1]
    facts = curve.attrs["missing"]
    assert 3.5 <= facts["pd"] <= 6.5
    assert facts["low"] < 5 < facts["high"]
    assert facts["high"] - facts["low"] < 2
    assert facts["rows"] == facts["compared"] == int(blank.sum())
    if depends:
        # Blank mostly where x2 (worth 3 a unit) is high: the raw difference of means is
        # far off; inside the strata x2 is held.
        y = data["y"].to_numpy()
        assert y[blank].mean() - y[~blank].mean() > 7
    # The blank rows never enter the slopes: the curve is the one without them.
    points = curve_points(curve)
    assert not points["x"].isna().any()
    slope = np.polyfit(points["x"], points["pd"], 1)[0]
    assert slope == pytest.approx(2, abs=0.15)


def test_blanks_without_an_effect_sit_at_the_typical_level_and_carry_the_band_columns():
    data, _ = _table(blank_effect=0.0)
    curve = sx.stratpd(data, "y", "x1", n_trials=6)
    row = missing_row(curve).iloc[0]
    assert row["pd_low"] < 0 < row["pd_high"]
    assert (row["curve_low"], row["curve_high"]) == (row["pd_low"], row["pd_high"])
    assert np.isnan(row["slope"]) and row["n_slopes"] == curve.attrs["missing"]["strata"]
    assert curve["n_slopes"].dtype == np.int64


def test_a_curve_without_blanks_is_unchanged():
    data, _ = _table()
    filled = data.dropna()
    curve = sx.stratpd(filled, "y", "x1")
    assert "missing" not in curve.columns and "missing" not in curve.attrs
    assert curve_points(curve) is curve and missing_row(curve) is None


@pytest.mark.parametrize("honest", [True, False])
def test_a_blank_row_goes_to_the_stratum_of_a_row_with_the_same_other_columns(honest):
    from stratpd_xl.engine._fit import _table as make_table
    from stratpd_xl.engine._missing import Blanks
    from stratpd_xl.engine.stages import _fit
    from stratpd_xl.params import Settings

    data, _ = _table(n=1200, blank_effect=0.0)
    data = data.dropna().reset_index(drop=True)
    # 30 more rows: copies of the first 30 in the other columns, x blank.
    copies = data.iloc[:30].assign(x1=np.nan)
    table = make_table(pd.concat([data, copies], ignore_index=True), "y")
    strata = _fit(table, "x1", Settings.make(honest=honest))
    blanks = Blanks.of(table, "x1", strata)
    assert blanks.placed.shape == (30, 2 if honest else 1)
    leaf = strata._rows["keys"][:30]
    if honest:
        # Row i of half A was placed by the tree grown on half B (tree 1), and vice versa.
        tree = np.where(strata.placement.in_a[:30], 1, 0)
        np.testing.assert_array_equal(blanks.placed[np.arange(30), tree], leaf)
    else:
        np.testing.assert_array_equal(blanks.placed[:, 0], leaf)


def test_whole_number_and_date_features_show_their_blank_as_missing():
    data, _ = _table()
    data["whole"] = np.round(data["x1"]).astype("Int64")
    data["day"] = pd.Timestamp("2024-01-01") + pd.to_timedelta(data["x1"] * 30, unit="D")
    whole = sx.stratpd(data.drop(columns=["x1", "day"]), "y", "whole")
    assert whole["x"].dtype == np.float64 and np.isnan(whole["x"].iloc[-1])
    assert (curve_points(whole)["x"] % 1 == 0).all()
    day = sx.stratpd(data.drop(columns=["x1", "whole"]), "y", "day")
    assert pd.api.types.is_datetime64_any_dtype(day["x"]) and pd.isna(day["x"].iloc[-1])


def test_a_yes_no_target_keeps_the_blank_row_within_a_chance():
    rng = np.random.default_rng(2)
    n = 3000
    x = rng.uniform(0, 1, n)
    other = rng.normal(size=n)
    blank = rng.random(n) < 0.25
    chance = np.where(blank, 0.9, 0.2 + 0.3 * x)
    data = pd.DataFrame({"x": np.where(blank, np.nan, x), "other": other,
                         "churn": np.where(rng.random(n) < chance, "yes", "no")})
    curve = sx.stratpd(data, "churn", "x")
    facts = curve.attrs["missing"]
    typical = 100 * np.mean(chance[~blank])
    # Blank rows churn at 90 %, the others at 35 % on average: about 55 points above.
    assert facts["pd"] == pytest.approx(90 - typical, abs=8)
    assert typical + facts["high"] <= 100 + 1e-9


def test_a_categorical_feature_gets_a_missing_category():
    rng = np.random.default_rng(3)
    n = 3000
    x2 = rng.normal(size=n)
    region = rng.choice(["north", "south", "east"], n)
    blank = rng.random(n) < 0.15
    y = 3 * x2 + 4 * (region == "south") + 5 * blank + rng.normal(size=n)
    data = pd.DataFrame({"region": np.where(blank, None, region), "x2": x2, "y": y})
    table = sx.catstratpd(data, "y", "region", n_trials=5)
    assert table["category"].iloc[-1] == MISSING_LABEL
    assert table["missing"].tolist() == [False, False, False, True]
    effects = dict(zip(table["category"], table["pd"], strict=True))
    # Relative to east (the first category); blanks are a mix: a third of them south.
    truth = 5 + 4 / 3
    assert effects[MISSING_LABEL] == pytest.approx(truth, abs=1.5)
    last = table.iloc[-1]
    assert last["pd_low"] < truth < last["pd_high"]
    assert table.attrs["n_dropped_missing"] == 0


def test_a_category_named_like_the_blank_keeps_its_name():
    rng = np.random.default_rng(4)
    n = 2000
    kind = rng.choice(["a", MISSING_LABEL], n).astype(object)
    kind[::7] = None
    x2 = rng.normal(size=n)
    data = pd.DataFrame({"kind": kind, "x2": x2, "y": x2 + rng.normal(size=n)})
    table = sx.catstratpd(data, "y", "kind")
    assert table["category"].tolist() == ["(missing)", "a", "(missing 2)"]
    assert table["missing"].tolist() == [False, False, True]


def test_the_impact_ranking_counts_the_blank_rows():
    rng = np.random.default_rng(5)
    n = 3000
    x2 = rng.normal(size=n)
    noise = rng.normal(size=n)
    # "filled" has no effect where it has a value; its blanks (30 %) carry +6.
    filled = rng.uniform(0, 1, n)
    blank = rng.random(n) < 0.3
    y = 3 * x2 + 6 * blank + rng.normal(size=n)
    data = pd.DataFrame({"filled": np.where(blank, np.nan, filled), "x2": x2,
                         "noise": noise, "y": y})
    ranking = sx.impact(data, "y").set_index("feature")
    # Mean absolute deviation of 6 on 30 % of the rows: 2 x 0.3 x 0.7 x 6 = 2.5.
    assert ranking.loc["filled", "impact"] == pytest.approx(2.5, abs=0.5)
    assert ranking.loc["filled", "impact"] > 3 * ranking.loc["noise", "impact"]


def test_front_ends_show_the_blank_row_as_missing(tmp_path):
    import re
    import zipfile

    from stratpd_xl.presentation import charts, report
    from stratpd_xl.presentation.tables import curve_table
    from stratpd_xl.presentation.words import sentence
    from stratpd_xl.schema import Finding

    data, _ = _table()
    data["x1"] = data["x1"].round()
    curve = sx.stratpd(data, "y", "x1")
    # Cells: the feature's cell of the last row reads "(missing)", the rest are numbers.
    table = curve_table(curve)
    assert table.iloc[-1, 0] == MISSING_LABEL
    assert all(isinstance(v, float) for v in table.iloc[:-1, 0])
    # Words: after the curve, where the blanks sit.
    said = sentence(Finding.from_result(curve), "price")
    rows = curve.attrs["missing"]["rows"]
    assert f"Where x1 is blank ({rows:,} rows), price is about 5" in said
    assert "higher than typical (95 % band" in said
    # The picture: a marker beside the axis, labelled with its rows.
    figure = charts.curve_figure(curve)
    texts = [t.get_text() for t in figure.axes[0].texts]
    assert f"{MISSING_LABEL}\n{rows:,} rows" in texts
    # The workbook's native chart: the line ends before the "(missing)" row (a text among
    # a scatter's x values would renumber every point).
    path = tmp_path / "curve.xlsx"
    report.write_curve_workbook(curve, path)
    with zipfile.ZipFile(path) as book:
        xml = book.read("xl/charts/chart1.xml").decode()
    first, last = (int(v) for v in re.findall(r"\$A\$(\d+):\$A\$(\d+)", xml)[0])
    assert last - first + 1 == len(curve) - 1
    # Its header block says what the row is.
    info = {item[0]: item[1] for item in report._curve_info(curve)}
    assert info["rows without a value"].startswith(f"{rows:,}: not in the slopes")


@pytest.mark.parametrize("trials", [1, 5], ids=["a line", "a line over its band"])
def test_the_native_chart_shows_the_missing_point_beside_the_curve(tmp_path, trials):
    import re
    import zipfile

    import openpyxl
    from openpyxl.utils import column_index_from_string

    from stratpd_xl.presentation import report

    data, _ = _table()
    curve = sx.stratpd(data, "y", "x1", n_trials=trials)
    facts = curve.attrs["missing"]
    path = tmp_path / "curve.xlsx"
    report.write_curve_workbook(curve, path)
    with zipfile.ZipFile(path) as book:
        xml = book.read("xl/charts/chart1.xml").decode()
    series = re.findall(r"<c:ser>(.*?)</c:ser>", xml, re.S)
    name = f"{MISSING_LABEL}, {facts['rows']:,} rows"
    (point,) = [s for s in series if f"<c:v>{name}</c:v>" in s]
    # A diamond labelled with its name, and its band as an error bar.
    assert '<c:symbol val="diamond"/>' in point
    assert "<c:showSerName val=\"1\"/>" in point and "<c:errBars>" in point
    sheet = openpyxl.load_workbook(path)["x1"]

    def cells(xml: str, kind: str) -> list:
        """The cells a series' part reads: (row, value) of each."""
        ref = re.search(rf"<c:{kind}>.*?<c:f>[^!]*!\$(\w+)\$(\d+)(?::\$\w+\$(\d+))?</c:f>",
                        xml, re.S)
        col, first = column_index_from_string(ref.group(1)), int(ref.group(2))
        last = int(ref.group(3) or first)
        return [(r, sheet.cell(r, col).value) for r in range(first, last + 1)]

    def filled(xml: str, kind: str) -> list:
        return [(r, v) for r, v in cells(xml, kind) if v is not None]

    value_part = "yVal" if "<c:yVal>" in point else "val"
    ((at, value),) = filled(point, value_part)
    assert value == pytest.approx(facts["pd"])
    assert [v for _, v in filled(point, "minus")] == [pytest.approx(facts["pd"] - facts["low"])]
    assert [v for _, v in filled(point, "plus")] == [pytest.approx(facts["high"] - facts["pd"])]
    # Beside the curve's end, not on it: past the largest x (a line), or a few categories
    # after the curve's last point, with no curve between (a line over its band).
    if value_part == "yVal":
        assert filled(point, "xVal")[0][1] > curve_points(curve)["x"].max()
    else:
        line = next(s for s in series if "<c:v>partial dependence</c:v>" in s)
        ends = max(r for r, _ in filled(line, "val"))
        assert at - ends >= 3


def test_a_stray_blank_cell_makes_no_row():
    data, _ = _table(blank_effect=0.0)
    data = data.dropna().reset_index(drop=True)
    data.loc[[3, 50, 700, 901], "x1"] = np.nan  # four blanks: counted, not shown
    curve = sx.stratpd(data, "y", "x1")
    assert "missing" not in curve.columns and "missing" not in curve.attrs
    assert curve.attrs["n_dropped_missing"] == 4


def test_the_model_check_compares_the_curve_without_its_blank_row():
    data, _ = _table(n=2000)
    table = sx.compare(data, "y", "x1")
    assert not table["x"].isna().any()
    assert "could not be compared" not in table.attrs["sentence"]
    assert table.attrs["agreement"] > 0.9


@pytest.mark.parametrize("honest", [True, False])
def test_the_missing_row_from_sums_is_the_one_from_the_rows(honest):
    # A pass over chunks keeps sums per stratum and per pair of the blank rows' strata
    # (engine/stages.py); the comparison from them is the rows' one.
    from stratpd_xl.engine._missing import missing_effect, missing_effect_of_sums

    rng = np.random.default_rng(4)
    leaf = rng.integers(0, 40, 5000)
    leaf[leaf == 7] = 8  # a stratum without rows with x
    resid = rng.normal(size=5000) + leaf * 0.01
    placed = rng.integers(-1, 40, (700, 2))  # -1: a leaf no row with x is in
    if not honest:
        placed[:, 1] = placed[:, 0]
    y_blank = rng.normal(size=700) + 5
    rows = missing_effect(leaf, resid, placed, y_blank)
    n_p = np.bincount(leaf, minlength=40).astype(float)
    total = np.bincount(leaf, weights=resid, minlength=40)
    mean = total / np.maximum(n_p, 1)
    squares = np.bincount(leaf, weights=(resid - mean[leaf]) ** 2, minlength=40)
    pairs, where = np.unique((placed[:, 0] + 1) * 100 + placed[:, 1] + 1, return_inverse=True)
    n = np.bincount(where).astype(float)
    y_sum = np.bincount(where, weights=y_blank)
    y_ss = np.bincount(where, weights=(y_blank - (y_sum / n)[where]) ** 2)
    # Keys as a pass holds them: the strata met (no -1), ascending.
    sums = missing_effect_of_sums(np.arange(40), n_p, total, squares,
                                  np.column_stack([pairs // 100 - 1, pairs % 100 - 1]),
                                  np.vstack([n, y_sum, y_ss]))
    assert sums.compared == rows.compared and sums.strata == rows.strata
    assert sums.pd == pytest.approx(rows.pd, rel=1e-12)
    assert sums.se == pytest.approx(rows.se, rel=1e-12)
