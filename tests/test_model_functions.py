"""The model package's functions one by one, on tables whose truth is known.

``sx.compare`` and ``sx.ice`` (tests/test_model.py) go through all of them; here each is held
to its own promise, so that a broken piece fails by its name.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import stratpd_xl as sx
from stratpd_xl import model

N = 1200


def _table(y_of, seed: int = 0, n: int = N) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a, b, c = rng.uniform(-1, 1, (3, n))
    shop = rng.choice(["north", "south", "west"], n)
    frame = pd.DataFrame({"a": a, "b": b, "c": c, "shop": shop})
    frame["y"] = y_of(frame) + rng.normal(0, 0.02, n)
    return frame


SHOP = {"north": 0.0, "south": 2.0, "west": -1.0}


@pytest.fixture(scope="module")
def added() -> tuple[pd.DataFrame, model.Fitted]:
    """y = 3a + b² + (north 0, south +2, west -1): nothing interacts."""
    frame = _table(lambda f: 3 * f["a"] + f["b"] ** 2 + f["shop"].map(SHOP))
    return frame, model.fit_model(frame, "y")


@pytest.fixture(scope="module")
def product() -> tuple[pd.DataFrame, model.Fitted]:
    """y = 4ab + c: a and b only act together."""
    frame = _table(lambda f: 4 * f["a"] * f["b"] + f["c"])
    return frame, model.fit_model(frame, "y")


def test_fitted_holds_the_model_its_columns_and_a_held_out_score(added):
    frame, fitted = added
    assert isinstance(fitted, model.Fitted)
    assert fitted.target == "y" and "y" not in fitted.columns
    assert sorted(fitted.columns) == ["a", "b", "c", "shop"]
    assert fitted.x.shape == (N, 4) and fitted.y.shape == (N,)
    assert list(fitted.categories["shop"]) == ["north", "south", "west"]
    assert set(np.unique(fitted.values("shop"))) == {0.0, 1.0, 2.0}
    assert fitted.yes_no is False
    assert fitted.score["r2"] > 0.95
    assert fitted.score["n_train"] + fitted.score["n_test"] == N
    # each row of x is the row of the table it says it is
    assert np.allclose(fitted.values("a"), frame["a"].to_numpy()[fitted.positions])


def test_model_target_reads_numbers_as_numbers_and_yes_no_as_0_or_100():
    frame = pd.DataFrame({"price": [1.5, 2.0, None, 4.0],
                          "churn": ["yes", "no", "no", None]})
    y, yes_no = model.model_target(frame, "price")
    assert yes_no is False
    assert np.array_equal(y, [1.5, 2.0, np.nan, 4.0], equal_nan=True)
    y, yes_no = model.model_target(frame, "churn")
    assert yes_no is True
    assert np.array_equal(y, [100.0, 0.0, 0.0, np.nan], equal_nan=True)
    y, _ = model.model_target(frame, "churn", positive="no")
    assert np.array_equal(y, [0.0, 100.0, 100.0, np.nan], equal_nan=True)


def test_feature_grid_spans_the_rows_quantiles_or_lists_every_category(added):
    frame, fitted = added
    grid = model.feature_grid(fitted, "a", points=9)
    assert grid.size == 9 and np.all(np.diff(grid) > 0)
    assert grid[0] == pytest.approx(np.quantile(frame["a"], 0.025))
    assert grid[-1] == pytest.approx(np.quantile(frame["a"], 0.975))
    wide = model.feature_grid(fitted, "a", points=3, span=(0.0, 1.0))
    assert wide[0] == frame["a"].min() and wide[-1] == frame["a"].max()
    assert list(model.feature_grid(fitted, "shop")) == [0.0, 1.0, 2.0]


def test_curve_grid_reads_a_curve_as_the_model_does(added):
    frame, fitted = added
    curve = sx.stratpd(frame, "y", "a", max_points=15)
    assert np.array_equal(model.curve_grid(fitted, curve, "a"), curve["x"].to_numpy(float))
    effects = sx.catstratpd(frame, "y", "shop")
    codes = model.curve_grid(fitted, effects, "shop")
    assert list(fitted.categories["shop"][codes.astype(int)]) == list(effects["category"])


def test_individual_curves_move_each_row_along_the_feature(added):
    _, fitted = added
    grid = np.array([-0.8, 0.0, 0.8])
    rows = np.array([0, 5, 17, 40])
    ice = model.individual_curves(fitted, "a", grid, rows)
    assert ice.shape == (4, 3)
    # y = 3a + ...: every row's prediction rises by about 3 x 1.6 from -0.8 to 0.8
    assert np.all(np.abs(ice[:, 2] - ice[:, 0] - 4.8) < 0.6)
    # and each row keeps its own level (its b and shop)
    assert np.ptp(ice[:, 1]) > 0.5


def test_accumulated_local_effects_follow_the_true_shape(added):
    _, fitted = added
    grid = np.linspace(-0.9, 0.9, 7)
    ale = model.accumulated_local_effects(fitted, "b", grid)
    truth = grid**2
    assert np.allclose(ale - ale.mean(), truth - truth.mean(), atol=0.2)
    assert np.argmin(ale) == 3  # lowest at b = 0
    steps = model.accumulated_local_effects(fitted, "shop", np.array([0.0, 1.0, 2.0]))
    assert steps[1] - steps[0] == pytest.approx(2.0, abs=0.2)  # south - north
    assert steps[2] - steps[0] == pytest.approx(-1.0, abs=0.2)  # west - north


def test_two_way_partial_dependence_and_h_squared_tell_a_product_from_a_sum(added, product):
    grids = (np.linspace(-0.8, 0.8, 5), np.linspace(-0.8, 0.8, 5))
    _, times = product
    pd2 = model.two_way_partial_dependence(times, ("a", "b"), grids)
    assert pd2.shape == (5, 5)
    # 4ab: the corners where a and b share a sign are high, the others low
    assert pd2[0, 0] - pd2[0, -1] == pytest.approx(4 * 0.8 * 1.6, abs=1.0)
    assert pd2[-1, -1] - pd2[-1, 0] == pytest.approx(4 * 0.8 * 1.6, abs=1.0)
    assert model.h_squared(times, ("a", "b"), grids, pd2) > 0.7
    _, plus = added
    pd2 = model.two_way_partial_dependence(plus, ("a", "b"), grids)
    assert model.h_squared(plus, ("a", "b"), grids, pd2) < 0.1


def test_pair_table_is_the_long_two_way_table_with_its_h2(product):
    _, fitted = product
    table = model.pair_table(fitted, ("a", "b"))
    assert list(table.columns) == ["a", "b", "pdp"]
    grid = model.feature_grid(fitted, "a")
    assert len(table) == grid.size * model.feature_grid(fitted, "b").size
    assert table.attrs["h2"] > 0.7 and table.attrs["target"] == "y"
    assert table.attrs["kinds"] == ["numeric", "numeric"]


def test_ice_table_gives_n_rows_curves_each_starting_at_0(added):
    _, fitted = added
    grid = np.array([-0.5, 0.0, 0.5])
    table = model.ice_table(fitted, "a", grid, n_rows=6, seed=1)
    assert list(table.columns) == ["row", "x", "prediction", "centred"]
    assert table["row"].nunique() == 6 and table.attrs["n_curves"] == 6
    assert np.allclose(table.groupby("row")["centred"].first(), 0)
    assert np.all(np.abs(table.groupby("row")["centred"].last() - 3.0) < 0.5)
    shops = model.ice_table(fitted, "shop", np.array([0.0, 2.0]), n_rows=3)
    assert list(shops["x"][:2]) == ["north", "west"]
    named = model.ice_table(fitted, "a", grid, labels=["low", "mid", "high"], n_rows=2)
    assert list(named["x"][:3]) == ["low", "mid", "high"]


def test_extrapolation_share_is_small_for_independent_columns_large_for_tied_ones(added):
    _, fitted = added
    assert model.extrapolation_share(fitted, "a") < 0.05
    rng = np.random.default_rng(3)
    a = rng.uniform(0, 10, N)
    tied = pd.DataFrame({"a": a, "b": a + rng.normal(0, 0.3, N), "c": rng.uniform(0, 1, N)})
    tied["y"] = tied["a"] + tied["c"]
    assert model.extrapolation_share(model.fit_model(tied, "y"), "a") > 0.3


def test_compare_curves_puts_the_three_curves_on_stratpds_grid_centred_alike(added):
    frame, fitted = added
    curve = sx.stratpd(frame, "y", "b", max_points=20)
    table = model.compare_curves(fitted, curve)
    assert list(table.columns) == ["x", "stratpd", "pdp", "ale"]
    assert np.array_equal(table["x"], curve["x"])
    for column in ("stratpd", "pdp", "ale"):  # b² on all three
        assert np.allclose(table[column] - table[column].mean(),
                           table["x"] ** 2 - (table["x"] ** 2).mean(), atol=0.2), column
    assert table.attrs["agreement"] > 0.8
