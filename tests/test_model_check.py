"""A model check that means what it says: high when the data's curve and the model's tell the
same story at the same size, low only beyond both curves' bands, and never advice to trust a
curve that warns about itself."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import stratpd_xl as sx
from stratpd_xl import model
from stratpd_xl.presentation.compare import agreement_sentence, verdict
from stratpd_xl.schema import Note


def _falling(n: int = 1200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1, x2, x3 = rng.normal(0, 1, (3, n))
    x2 = 0.5 * x1 + x2  # the columns move together a little, as in real tables
    return pd.DataFrame({"x1": x1, "x2": x2, "x3": x3,
                         "y": -2 * x1 + x2 + 0.5 * x3 + rng.normal(0, 1, n)})


@pytest.mark.parametrize("trials", [1, 10])
def test_three_curves_falling_alike_agree(trials):
    table = sx.compare(_falling(), "y", "x1", n_trials=trials, random_state=0)
    a = table.attrs
    for column in ("stratpd", "pdp", "ale"):  # all three fall, by about the same
        slope = np.polyfit(table["x"], table[column], 1)[0]
        assert -2.4 < slope < -1.6, column
    assert a["agreement"] >= 0.5 and a["agreement_ale"] >= 0.5
    assert a["direction"] > 0.9
    assert verdict(a) in ("agree", "agree, wide bands", "same direction, sizes differ")
    assert "agree" in a["sentence"] and "disagree" not in a["sentence"]


def test_the_bands_decide_what_differs():
    w = np.ones(5)
    a = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    b = 0.5 * a  # half the size
    assert model.agreement(a, b, w, 0.0) == 0.0
    # within both curves' bands: the same story as far as the data can tell
    assert model.agreement(a, b, w, 0.0, tolerance=np.abs(a - b)) == 1.0
    # a mirror image beyond the bands stays 0
    assert model.agreement(a, -a, w, 0.0, tolerance=np.full(5, 0.1)) == 0.0


def _twins(n: int = 1500, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1, x2 = rng.uniform(0, 10, (2, n))
    twin = x1 + rng.normal(0, 0.05, n)  # a near-duplicate: the strata hold x1 fixed
    return pd.DataFrame({"x1": x1, "twin": twin, "x2": x2,
                         "y": x1 + x2 + rng.normal(0, 0.5, n)})


def test_a_curve_that_warns_about_itself_is_never_the_one_to_trust():
    table = sx.compare(_twins(), "y", "x1", n_trials=5, random_state=0)
    a = table.attrs
    assert any(getattr(w, "kind", "") == "duplicate" for w in a["warnings"])
    said = a["sentence"]
    assert "trust StratPD" not in said
    assert "twin" in said  # names the column that duplicates it
    assert verdict(a) in ("agree", "agree, wide bands", "trust the model", "trust neither")


def test_a_weak_model_is_not_the_one_to_trust():
    rng = np.random.default_rng(3)
    n = 400
    x1, x2 = rng.uniform(0, 10, (2, n))
    frame = pd.DataFrame({"x1": x1, "x2": x2, "y": 0.4 * x1 + rng.normal(0, 6, n)})
    table = sx.compare(frame, "y", "x1", n_trials=5, random_state=0)
    a = table.attrs
    assert a["model_r2"] < 0.5
    attrs = {**a, "agreement": 0.3}  # whatever the curves: the advice on disagreeing
    said = agreement_sentence(attrs)
    assert "trust the model" not in said and "unreliable" in said
    assert verdict(attrs) == "trust StratPD"
    both = {**attrs, "warnings": [Note('"x1" barely varies', "duplicate", columns=["x2"])]}
    assert verdict(both) == "trust neither"


def test_advice_on_the_leaf_size_follows_the_method():
    # docs/method.md (steps): larger strata sharpen a jump; never "a smaller min_samples_leaf".
    attrs = {"feature": "x", "agreement": 0.2, "model_r2": 0.95, "extrapolation": 0.0,
             "disagree_rows": 500, "params": {"min_samples_leaf": 10}, "warnings": []}
    said = agreement_sentence(attrs)
    assert "smaller min_samples_leaf" not in said
    assert "min_samples_leaf 20-40" in said and verdict(attrs) == "read both"
