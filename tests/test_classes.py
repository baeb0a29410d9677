"""Targets with several classes: a curve per class from one stratification
(engine/_classes.py), on a known truth and as a property: the class curves add up to 0."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
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
                                     "thin", "evidence"]
    top = ranking.iloc[0]
    assert (top["feature"], top["class"]) == ("x", "b")
    assert ranking.set_index("feature").loc["g", "impact"] < 2


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(2, 5), n=st.integers(80, 400),
       discrete=st.booleans(), honest=st.booleans())
@example(seed=29, k=3, n=319, discrete=False, honest=False)
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
    # The classes' changes add to 0 exactly; what is left is rounding, which a slope between
    # two x values a hair apart magnifies (seed 29, n 319: 4.3e-9 points on curves reaching 20).
    # A second stratification or misaligned x would be off by the curves' own size.
    scale = max(1.0, float(np.abs(parts).max()))
    np.testing.assert_allclose(np.sum(parts, axis=0), 0, atol=1e-9 * scale)


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
    # A workbook of classes: the long table, class first, and a line per class.
    book = tmp_path / "classes.xlsx"
    assert main(["curve", str(path), "-t", "y", "-f", "x", "--classes", "all", "-q",
                 "-o", str(book)]) == 0
    assert _chart_series(book, 1) == ["a", "b", "c"]
    capsys.readouterr()
    # The ranking names the class each feature moves most.
    assert main(["impact", str(path), "-t", "y", "--classes", "all", "--json"]) == 0
    ranking = json.loads(capsys.readouterr().out)
    assert ranking["columns"][:4] == ["feature", "kind", "class", "impact"]
    assert (ranking["rows"][0]["feature"], ranking["rows"][0]["class"]) == ("x", "b")


def _chart_series(path, number: int) -> list[str]:
    """The series names of the workbook's native chart ``number``."""
    import re
    import zipfile

    with zipfile.ZipFile(path) as book:
        xml = book.read(f"xl/charts/chart{number}.xml").decode()
    return re.findall(r"<c:ser>.*?<c:tx>.*?<c:v>([^<]*)</c:v>", xml, re.S)


def test_each_class_is_said_and_the_sayings_add_up():
    from stratpd_xl.presentation.words import class_sentences, sentence
    from stratpd_xl.schema import Finding

    data, _ = three_classes(n=1500)
    curves = sx.stratpd(data, "y", "x", classes=True, n_trials=5)
    per_class = Finding.per_class(curves)
    assert [f.target_class for f in per_class] == ["a", "b", "c"]
    # One stratification: the classes' rises between the same percentiles add up to 0.
    assert abs(sum(f.change for f in per_class)) < 1e-9
    assert all(f.low is not None and f.low < f.change < f.high for f in per_class)
    said = class_sentences(curves, "y")
    assert said[1].startswith("The chance of y = b rises with x: from the 10th to the 90th")
    assert "percentage points (95 % band" in said[1]
    # The feature's finding is the class it moves most, the one the ranking names.
    top = Finding.from_result(curves)
    assert top.target_class == max(curves.attrs["class_impact"],
                                   key=curves.attrs["class_impact"].get) == "b"
    assert sentence(top, "y").startswith("x moves the chance of y = b most: from the 10th")


def test_the_report_has_every_class_on_each_feature_sheet(tmp_path, capsys):
    import json

    import openpyxl

    from stratpd_xl.cli import main

    data, _ = three_classes(n=1500)
    path = tmp_path / "flowers.csv"
    data.to_csv(path, index=False)
    book = tmp_path / "report.xlsx"
    assert main(["report", str(path), "-t", "y", "--classes", "all", "--trials", "3",
                 "-o", str(book), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    # --json: the ranking with the class each feature moves most, said per class.
    assert printed["columns"][:4] == ["feature", "kind", "class", "impact"]
    # The notes say what the numbers are, and that the classes are not adjusted.
    (read_as,) = [n for n in printed["notes"] if n.startswith('"y" is read as classes')]
    assert "not adjusted for the other columns' straight-line part" in read_as
    assert printed["conclusion"][0].startswith("x moves the chance of y = b most")
    wb = openpyxl.load_workbook(book)
    summary = [[v for v in row if v is not None] for row in wb["Summary"].values]
    header = next(i for i, row in enumerate(summary) if row[:3] == ["feature", "kind", "class"])
    assert summary[header + 1][:3] == ["x", "numeric", "b"]
    assert any(str(row[0]).startswith("x moves the chance of y = b most")
               for row in summary if row)
    for feature in ("x", "g"):
        rows = [[v for v in row if v is not None] for row in wb[feature].values]
        top = next(i for i, row in enumerate(rows) if row and row[0] == "class")
        assert rows[top][:3] == ["class", feature, "change in P(y = class), points"]
        body = [r for r in rows[top + 1:] if r and r[0] in ("a", "b", "c")]
        assert {r[0] for r in body} == {"a", "b", "c"}
        # The classes add up to 0 at every point (the table's rows, class by class).
        per_class = [[r[2] for r in body if r[0] == c] for c in "abc"]
        assert np.allclose(np.sum(per_class, axis=0), 0, atol=1e-9)
        said = [r[0] for r in rows[:top] if r and str(r[0]).startswith("The chance of y = ")]
        assert [s[:20] for s in said] == [f"The chance of y = {c} " for c in "abc"]
        info = {r[0]: r[1] for r in rows[:top] if len(r) >= 2}
        assert info["adjusted for other columns"].startswith("no: curves per class")
        assert "other columns' straight-line part taken out first (adjust)" not in info
    # Each feature's native chart: a line (or bars) per class, in the ranking's order.
    charts = {f: i for i, f in enumerate(["Summary", "x", "z", "g"], start=1)}
    assert _chart_series(book, charts["x"]) == ["a", "b", "c"]
    assert _chart_series(book, charts["g"]) == ["a", "b", "c"]
    # --interactions pairs one target's features: refused with --classes, in one sentence.
    assert main(["report", str(path), "-t", "y", "--classes", "all", "--interactions",
                 "-o", str(tmp_path / "r2.xlsx")]) == 2
    assert "--interactions" in capsys.readouterr().err


def test_the_model_check_puts_each_class_beside_the_classifiers_partial_dependence():
    from sklearn.inspection import partial_dependence as sk_pd

    from stratpd_xl import model, workflow
    from stratpd_xl.model._effects import BRUTE_ROWS, _sample, partial_dependence

    data, _ = three_classes(n=3000)
    result = workflow.compare(data, "y", "x", classes="all")
    table = result.table
    assert list(table.columns[:3]) == ["class", "x", "stratpd"] and "pdp" in table.columns
    assert list(pd.unique(table["class"])) == ["a", "b", "c"]
    # On the known truth the data and the classifier tell each class's same story.
    assert all(v > 0.8 for v in table.attrs["class_agreement"].values())
    assert table.attrs["agreement"] == min(table.attrs["class_agreement"].values())
    # Both sides' classes add up to 0 at every x: chances sum to 1, centred on the same rows.
    pdp = table.pivot(index="x", columns="class", values="pdp")
    assert np.abs(pdp.sum(axis=1)).max() < 1e-6
    # Each class's model curve is scikit-learn's partial dependence of predict_proba.
    fitted = model.fit_classes(data, "y", ["a", "b", "c"], columns=["x", "z", "g"])
    grid = np.quantile(data["x"], np.linspace(0.05, 0.95, 9))
    rows = _sample(fitted, BRUTE_ROWS, 0)
    sk = sk_pd(fitted.estimator, fitted.x[rows], [fitted.index("x")], method="brute",
               response_method="predict_proba", kind="average",
               custom_values={fitted.index("x"): grid})
    for k in range(3):
        ours = partial_dependence(model.class_view(fitted, k), "x", grid)
        assert np.allclose(ours, 100 * np.asarray(sk["average"])[k], atol=1e-9)
    # The model layer's own entry point gives the workflow's table for the same classifier.
    direct = model.compare_classes(fitted, sx.stratpd(data, "y", "x", classes=True))
    assert list(pd.unique(direct["class"])) == ["a", "b", "c"]
    assert set(direct.attrs["class_agreement"]) == {"a", "b", "c"}
    assert direct.attrs["agreement"] == min(direct.attrs["class_agreement"].values())
    np.testing.assert_allclose(direct["stratpd"], table["stratpd"], atol=1e-9)
    said = result.table.attrs["sentence"]
    assert said.startswith('Per class, StratPD\'s curve and the classifier\'s partial '
                           'dependence of its chance agree on "x" for "a" (')
    assert '"a" AUC' in table.attrs["model_sentence"]


def test_compare_and_the_reports_model_check_with_classes_on_the_command_line(tmp_path,
                                                                               capsys):
    import json

    import openpyxl

    from stratpd_xl.cli import main

    data, _ = three_classes(n=1500)
    path = tmp_path / "flowers.csv"
    data.to_csv(path, index=False)
    picture = tmp_path / "check.png"
    assert main(["compare", str(path), "-t", "y", "-f", "x", "--classes", "all", "--json",
                 "-o", str(picture)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["columns"][:3] == ["class", "x", "stratpd"]
    assert {row["class"] for row in printed["rows"]} == {"a", "b", "c"}
    assert picture.stat().st_size > 10_000
    book = tmp_path / "report.xlsx"
    assert main(["report", str(path), "-t", "y", "--classes", "all", "--compare", "-q",
                 "-o", str(book)]) == 0
    rows = [[v for v in row if v is not None] for row in
            openpyxl.load_workbook(book)["Model check"].values]
    assert any(str(r[0]).startswith("the classifier of y tells each class from the others")
               for r in rows if r)
    x_row = next(r for r in rows if r and r[0] == "x")
    assert any(str(v).startswith("Per class, StratPD's curve") for v in x_row)
    # A pair, or ICE curves, are for a number or yes/no target: one sentence.
    assert main(["compare", str(path), "-t", "y", "-f", "x", "--classes", "all",
                 "--ice"]) == 2
    assert "classes compares one feature's class curves" in capsys.readouterr().err
