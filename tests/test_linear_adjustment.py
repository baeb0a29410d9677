"""The linear adjustment's shared design: every feature's curve is the one it gets alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import stratpd_xl as sx
from tests.synthetic import body_weight


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    data = body_weight(n=1500, seed=5)
    rng = np.random.default_rng(1)
    data["noise"] = rng.normal(size=len(data))
    # Missing cells in two features give those features their own rows; the other
    # features' fits must not be made on (or reuse) those rows.
    data.loc[rng.choice(len(data), 40, replace=False), "education"] = np.nan
    data.loc[rng.choice(len(data), 25, replace=False), "sex"] = None
    return data


@pytest.mark.parametrize(
    "order",
    [
        ["height", "education", "sex", "pregnant", "noise"],
        ["noise", "sex", "pregnant", "education", "height"],
    ],
)
def test_each_curve_of_an_analysis_is_the_curve_of_that_feature_alone(table, order):
    result = sx.analyse(table, "weight", order, random_state=4)
    assert set(result.curves) == set(order)
    for name in order:
        alone = sx.partial_dependence(table, "weight", name, random_state=4)
        assert alone.attrs["adjusted"]
        pd.testing.assert_frame_equal(result.curves[name], alone, check_exact=True)
