"""The Python API on tables built in code rather than read from a sheet: lists in cells,
numbers stored as text, tuple and missing column labels, time zones, durations, no rows, a
feature name where a list is expected.  Each gives a right answer or one sentence naming the
fix, never a raw TypeError or a silent misreading.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import stratpd_xl as sx
from stratpd_xl.errors import StratPDInputError


@pytest.fixture(scope="module")
def houses() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 300
    data = pd.DataFrame({"area": rng.uniform(50, 200, n), "rooms": rng.integers(1, 6, n)})
    data["price"] = 3 * data["area"] + 10 * data["rooms"] + rng.normal(0, 5, n)
    return data


@pytest.mark.parametrize("cell", [[1, 2], {"a": 1}, {1, 2}, np.arange(2)])
def test_a_list_or_dict_in_a_cell_is_one_sentence(houses, cell):
    data = houses.copy()
    data["tags"] = [cell] * len(data)
    kind = type(cell).__name__
    for call in (lambda: sx.impact(data, "price"), lambda: sx.stratpd(data, "price", "area")):
        with pytest.raises(StratPDInputError, match=f'column "tags" holds a {kind} in a cell'):
            call()


def test_numbers_stored_as_text_name_the_conversion(houses):
    data = houses.copy()
    data["area"] = data["area"].round(1).astype(str)
    with pytest.raises(StratPDInputError, match=r'pd.to_numeric\(data\["area"\]\)'):
        sx.stratpd(data, "price", "area")
    data = houses.copy()
    data["price"] = data["price"].round(2).astype(str)
    with pytest.raises(StratPDInputError, match='target column "price" holds numbers stored'):
        sx.impact(data, "price")


def test_tuple_column_labels_are_found(houses):
    data = houses.copy()
    data.columns = pd.MultiIndex.from_tuples([("a", "area"), ("a", "rooms"), ("b", "price")])
    curve = sx.stratpd(data, ("b", "price"), ("a", "area"))
    assert curve["slope"].median() == pytest.approx(3, abs=0.5)
    ranked = sx.impact(data, ("b", "price"))
    assert set(ranked["feature"]) == {str(("a", "area")), str(("a", "rooms"))}


@pytest.mark.parametrize("label", [None, np.nan, ""])
def test_a_column_without_a_name_is_named_by_its_position(houses, label):
    data = houses.copy()
    data[label] = np.random.default_rng(1).uniform(0, 1, len(data))
    ranked = sx.impact(data, "price")
    assert "column 4" in set(ranked["feature"])
    assert not {"nan", "None", ""} & set(ranked["feature"])


def test_time_zone_aware_dates_keep_their_zone(houses):
    data = houses.copy()
    data["sold"] = pd.date_range("2024-01-01", periods=len(data), freq="D", tz="Europe/Paris")
    curve = sx.stratpd(data, "price", "sold")
    assert str(curve["x"].dt.tz) == "Europe/Paris"
    assert curve["x"].min() >= data["sold"].min() and curve["x"].max() <= data["sold"].max()


def test_a_duration_column_is_numeric_and_comes_back_as_durations(houses):
    data = houses.copy()
    data["wait"] = pd.to_timedelta(np.random.default_rng(2).uniform(0, 100, len(data)), unit="h")
    curve = sx.stratpd(data, "price", "wait")
    assert pd.api.types.is_timedelta64_dtype(curve["x"].dtype)
    assert sx.impact(data, "price").set_index("feature").loc["wait", "kind"] == "numeric"


def test_impact_on_no_rows_is_an_error_not_an_empty_table(houses):
    with pytest.raises(StratPDInputError, match='no row has a value of "price"'):
        sx.impact(houses.iloc[:0], "price")


def test_one_feature_name_where_a_list_is_expected(houses):
    # It looked for columns "a", "r", "e", "a".
    ranked = sx.impact(houses, "price", "area")
    assert list(ranked["feature"]) == ["area"]


@pytest.mark.parametrize(
    ("values", "expected"),
    [([np.nan] * 300, "has no values"), ([np.inf] * 300, "all are infinite")],
)
def test_a_target_without_finite_values_says_so(houses, values, expected):
    data = houses.copy()
    data["price"] = values
    with pytest.raises(StratPDInputError, match=expected):
        sx.impact(data, "price")


@pytest.mark.parametrize("value", [5, 2.5, -1e17, 0.0])
def test_a_constant_target_is_refused_as_the_command_line_refuses_it(houses, value):
    # Every share came back 0 with no word: it read as "no feature matters".
    data = houses.assign(price=value)
    said = f'target "price" has the same value ({value:.15g}) in every row; nothing varies'
    for call in (lambda: sx.impact(data, "price"), lambda: sx.stratpd(data, "price", "area"),
                 lambda: sx.catstratpd(data, "price", "rooms")):
        with pytest.raises(StratPDInputError, match=f"^{re.escape(said)}"):
            call()


def test_a_constant_target_with_missing_values_and_a_yes_no_target(houses):
    data = houses.assign(price=np.where(np.arange(len(houses)) % 3, 7.0, np.nan))
    with pytest.raises(StratPDInputError, match=r"same value \(7\) in every row"):
        sx.impact(data, "price")
    data = houses.assign(churn="yes")
    with pytest.raises(StratPDInputError, match=r'same value \("yes"\) in every row'):
        sx.stratpd(data, "churn", "area", positive="yes")


def test_a_target_constant_where_one_feature_has_values_skips_that_feature(houses):
    data = houses.copy()
    data["price"] = data["price"].where(data.index >= 100, 42.0)
    data["promo"] = np.where(data.index < 100, data.index % 7, np.nan)
    ranked = sx.impact(data, "price")
    assert "promo" not in set(ranked["feature"])
    assert 'same value (42) in every row that has "promo"' in ranked.attrs["skipped"]["promo"]
    with pytest.raises(StratPDInputError, match='every row that has "promo"'):
        sx.stratpd(data, "price", "promo")


def test_every_api_entry_refuses_a_constant_target(houses):
    data = houses.assign(price=5.0)
    for call in (lambda: sx.analyse(data, "price"), lambda: sx.interactions(data, "price"),
                 lambda: sx.stratpd2(data, "price", "area", "rooms"),
                 lambda: sx.compare(data, "price", "area"),
                 lambda: sx.ice(data, "price", "area")):
        with pytest.raises(StratPDInputError, match=r"same value \(5(\.0)?\) in every row"):
            call()
