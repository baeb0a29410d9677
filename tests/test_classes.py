"""Targets with several classes: a curve per class from one stratification
(engine/_classes.py), on a known truth and as a property: the class curves add up to 0."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stratpd_xl as sx
from stratpd_xl import StratPDInputError
from tests.synthetic import three_class_truth, three_classes


def test_three_classes_recover_the_true_chances_and_add_up_to_zero():
    data, z = three_classes()
    curves = sx.stratpd(data, "y", "x", classes=True, n_trials=5)
    assert list(curves.columns[:3]) == ["class", "x", "pd"]
    assert curves.attrs["classes"] == ["a", "b", "c"]
    assert curves.attrs["class_sum"] < 1e-9
    by_class = {c: part for c, part in curves.groupby("class", observed=True)}
    # One stratification: the same points for every class, whose curves add up to 0.
    xs = [part["x"].to_numpy() for part in by_class.values()]
    assert all(np.array_equal(xs[0], other) for other in xs[1:])
    total = sum(part["pd"].to_numpy() for part in by_class.values())
    np.testing.assert_allclose(total, 0, atol=1e-9)
    truth = three_class_truth(xs[0], data["x"].to_numpy(), z)
    inner = (xs[0] > 0.1) & (xs[0] < 0.9)
    for k, part in enumerate(by_class.values()):
        held = (part["curve_low"] <= truth[:, k]) & (truth[:, k] <= part["curve_high"])
        assert held.to_numpy()[inner].mean() >= 0.95
        assert np.abs(part["pd"].to_numpy() - truth[:, k])[inner].max() < 10
    # b rises with x by about 40 points, c falls: the impact says so.
    impact = curves.attrs["class_impact"]
    assert impact["b"] > impact["a"] and impact["b"] > 10


def test_category_effects_per_class_add_up_to_zero():
    data, _ = three_classes()
    table = sx.catstratpd(data, "y", "g", classes="all", n_trials=4)
    assert list(table.columns[:4]) == ["class", "category", "pd", "count"]
    total = table.groupby("category")["pd"].sum()
    np.testing.assert_allclose(total.to_numpy(), 0, atol=1e-9)
    # g does nothing: every class's effect of q is within its band of 0 (a few points).
    q = table[table["category"] == "q"]
    assert (q["pd_low"] < 0).all() and (q["pd_high"] > 0).all()


def test_whole_number_codes_and_a_picked_subset():
    data, _ = three_classes()
    coded = data.assign(y=data["y"].map({"a": 1, "b": 2, "c": 3}))
    curves = sx.stratpd(coded, "y", "x", classes=[3, 2])
    assert curves["class"].cat.categories.tolist() == [3, 2]
    assert np.isnan(curves.attrs["class_sum"])  # class 1 not shown: no sum to check
    whole = sx.stratpd(coded, "y", "x", classes=True)
    for c in (2, 3):
        np.testing.assert_array_equal(whole.loc[whole["class"] == c, "pd"].to_numpy(),
                                      curves.loc[curves["class"] == c, "pd"].to_numpy())
    with pytest.raises(StratPDInputError, match='class "7" does not occur'):
        sx.stratpd(coded, "y", "x", classes=[7])


def test_positive_still_picks_one_class():
    data, _ = three_classes()
    one = sx.stratpd(data, "y", "x", positive="b")
    assert "class" not in one.columns and one.attrs["positive"] == "b"
    with pytest.raises(StratPDInputError, match="give one of them"):
        sx.stratpd(data, "y", "x", positive="b", classes=True)


def test_more_than_twenty_classes_is_one_sentence():
    data, _ = three_classes(n=600)
    data["y"] = np.arange(len(data)) % 25
    with pytest.raises(StratPDInputError, match="25 different values.*positive=.*group"):
        sx.stratpd(data, "y", "x", classes=True)


def test_the_ranking_names_the_class_a_feature_moves_most():
    data, _ = three_classes()
    ranking = sx.impact(data, "y", classes=True)
    assert list(ranking.columns) == ["feature", "kind", "class", "impact", "share", "rows",
                                     "thin"]
    top = ranking.iloc[0]
    assert (top["feature"], top["class"]) == ("x", "b")
    assert ranking.set_index("feature").loc["g", "impact"] < 2


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(2, 5), n=st.integers(80, 400),
       discrete=st.booleans(), honest=st.booleans())
def test_class_curves_add_up_to_zero_at_every_x(seed, k, n, discrete, honest):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 6, n).astype(float) if discrete else rng.normal(size=n)
    other = rng.normal(size=n)
    labels = rng.integers(0, k, n)
    labels[:k] = np.arange(k)  # every class occurs
    data = pd.DataFrame({"x": x, "other": other,
                         "y": np.array([f"class {i}" for i in range(k)])[labels]})
    try:
        curves = sx.stratpd(data, "y", "x", classes=True, min_samples_leaf=5,
                            min_slopes_per_x=1, honest=honest, random_state=seed % 1000)
    except StratPDInputError:
        return  # no x backed by a slope: nothing to add up
    parts = [part["pd"].to_numpy() for _, part in curves.groupby("class", observed=True)]
    assert len(parts) == k
    np.testing.assert_allclose(np.sum(parts, axis=0), 0, atol=1e-9)


def test_the_chart_draws_a_line_per_class_in_colour_blind_safe_colours():
    from matplotlib.colors import to_hex

    from stratpd_xl.presentation.charts import curve_figure
    from stratpd_xl.presentation.classes import (
        CLASS_COLORS,
        class_figure,
        class_title,
        is_by_class,
    )

    data, _ = three_classes(n=1500)
    curves = sx.stratpd(data, "y", "x", classes=True)
    assert is_by_class(curves) and not is_by_class(sx.stratpd(data, "y", "x", positive="a"))
    assert class_title(curves) == "change in the chance of each y with x, by class (StratPD)"
    assert len(class_figure(curves).axes[0].get_lines()) == len(
        curve_figure(curves).axes[0].get_lines())
    ax = curve_figure(curves).axes[0]
    lines = [line for line in ax.get_lines() if line.get_label() in ("a", "b", "c")]
    assert [line.get_label() for line in lines] == ["a", "b", "c"]
    assert [to_hex(line.get_color()) for line in lines] == [c.lower() for c in
                                                             CLASS_COLORS[:3]]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b", "c"]
    bars = curve_figure(sx.catstratpd(data, "y", "g", classes=True)).axes[0]
    assert len(bars.patches) == 3 * 2  # a bar per class in each category
    # The by-group pictures draw with the same hand: a line per group asked for.
    from matplotlib.figure import Figure

    from stratpd_xl.presentation.pairs import draw_per_group

    axes = Figure().subplots()
    draw_per_group(axes, curves, "class", ["c", "a"], lambda c: f"class {c}", ("#000000",),
                   ("-", "--"))
    drawn = axes.get_lines()
    assert [line.get_label() for line in drawn] == ["class c", "class a"]
    assert [line.get_linestyle() for line in drawn] == ["-", "--"]


def test_the_command_line_draws_the_classes_asked_for(tmp_path, capsys):
    import json

    from stratpd_xl.cli import main

    data, _ = three_classes(n=1500)
    path = tmp_path / "flowers.csv"
    data.to_csv(path, index=False)
    assert main(["curve", str(path), "-t", "y", "-f", "x", "--classes", "a, c",
                 "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["columns"][:3] == ["class", "x", "pd"]
    assert {row["class"] for row in printed["rows"]} == {"a", "c"}
    picture = tmp_path / "classes.png"
    assert main(["curve", str(path), "-t", "y", "-f", "x", "--classes", "all", "-q",
                 "-o", str(picture)]) == 0
    assert picture.stat().st_size > 10_000
    # A workbook of classes is not written yet: said before anything is read.
    assert main(["curve", str(path), "-t", "y", "-f", "x", "--classes", "all",
                 "-o", str(tmp_path / "classes.xlsx")]) == 2
    assert "not yet a workbook" in capsys.readouterr().err
    # The ranking names the class each feature moves most.
    assert main(["impact", str(path), "-t", "y", "--classes", "all", "--json"]) == 0
    ranking = json.loads(capsys.readouterr().out)
    assert ranking["columns"][:4] == ["feature", "kind", "class", "impact"]
    assert (ranking["rows"][0]["feature"], ranking["rows"][0]["class"]) == ("x", "b")
