"""The engine's table checks one by one: a column's kind, a table the engine can read, and the
columns ``exclude`` names."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stratpd_xl.engine import checked_frame, column_kind, excluded_columns
from stratpd_xl.engine._table import category_codes, power_of_two_scale
from stratpd_xl.errors import StratPDInputError


@pytest.mark.parametrize(("series", "kind"), [
    (pd.Series([1.5, 2.0]), "numeric"),
    (pd.Series([1, 2], dtype="int64"), "numeric"),
    (pd.Series(pd.to_datetime(["2024-01-01", "2024-02-01"])), "numeric"),
    (pd.Series(pd.to_timedelta([1, 2], unit="D")), "numeric"),
    (pd.Series([True, False]), "categorical"),
    (pd.Series([1, 2, 1]).astype("category"), "categorical"),  # numbers the user made categories
    (pd.Series(["north", "south"]), "categorical"),
    (pd.Series(["a", 1], dtype=object), "categorical"),
])
def test_column_kind_follows_the_dtype(series, kind):
    assert column_kind(series) == kind


def test_checked_frame_names_every_column_and_refuses_what_the_engine_cannot_read():
    frame = checked_frame({"x": [1.0, 2.0], None: ["a", "b"]})
    assert list(frame.columns) == ["x", "column 2"]  # a label that is no name: its position
    assert list(checked_frame(pd.DataFrame({("a", 1): [1], ("b", 2): [2]})).columns) == [
        "('a', 1)", "('b', 2)"]
    with pytest.raises(StratPDInputError, match="rename the repeated column.*: x"):
        checked_frame(pd.DataFrame([[1, 2]], columns=["x", "x"]))
    with pytest.raises(StratPDInputError, match=r'"tags" holds a list in a cell \(row 2'):
        checked_frame(pd.DataFrame({"y": [1.0, 2.0], "tags": ["a", ["b", "c"]]}))
    with pytest.raises(StratPDInputError, match="array without column names"):
        checked_frame(np.zeros((3, 2)))
    with pytest.raises(StratPDInputError, match="data is missing"):
        checked_frame(None)


COLUMNS = ["price", "area", "casual", "registered", "a, b"]


def test_excluded_columns_are_exact_names_a_list_in_one_text_or_a_sentence():
    assert excluded_columns(COLUMNS, "price", ["area"]) == ["area"]
    assert excluded_columns(COLUMNS, "price", ["casual, registered", "area", "casual"]) == [
        "casual", "registered", "area"]
    assert excluded_columns(COLUMNS, "price", ["a, b"]) == ["a, b"]  # a name with a comma
    forgiving = {c.upper(): c for c in COLUMNS}
    assert excluded_columns(COLUMNS, "price", [" Area "],
                            resolve=lambda t: forgiving[t.upper()]) == ["area"]
    with pytest.raises(StratPDInputError, match="excluded"):
        excluded_columns(COLUMNS, "price", ["areas"])
    with pytest.raises(StratPDInputError, match='"price" is the target'):
        excluded_columns(COLUMNS, "price", ["area, price"])
    with pytest.raises(StratPDInputError, match='"area" is both the feature and excluded'):
        excluded_columns(COLUMNS, "price", ["area"], roles={"area": "feature"})


TEXTS = ["a", "B", "b", "é", "e\u0301", "Z", "10", "9", " x", "x ", "", "ß", "ss", "日本", "NaN",
         "None"]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(TEXTS), st.sampled_from([None, np.nan, pd.NA])),
                max_size=60),
       st.sampled_from(["str", "string[python]", "string[pyarrow]"]))
def test_text_is_coded_as_the_same_values_as_objects_would_be(cells, dtype):
    # Text columns are coded where pandas stores them; the codes and the categories' order
    # must be those of the same cells as Python objects (blanks -1, categories sorted).
    text = pd.Series(cells, dtype=dtype)
    codes, cats = category_codes(text)
    as_objects = pd.Series([None if pd.isna(c) else c for c in cells], dtype=object)
    want_codes, want_cats = category_codes(as_objects)
    assert list(cats) == list(want_cats) == sorted({c for c in cells if not pd.isna(c)})
    assert cats.dtype == want_cats.dtype == object
    np.testing.assert_array_equal(codes, want_codes)
    assert codes.dtype == np.int64


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                          st.sampled_from([0.0, -0.0, 5e-324, np.inf, -np.inf, np.nan]))))
def test_power_of_two_scale_is_that_of_the_largest_finite_size(cells):
    values = np.array(cells, dtype=float)
    finite = np.abs(values[np.isfinite(values)])
    top = float(finite.max()) if finite.size else 0.0
    want = 1.0 if top == 0.0 else math.ldexp(1.0, math.frexp(top)[1] - 1)
    assert power_of_two_scale(values) == want
    if top:
        assert want <= top and top / 2 < want
