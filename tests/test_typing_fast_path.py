"""The column-at-a-time typing gives exactly the frame the per-cell reference gave.

Also the two issue-8 rules that changed on purpose: infinite numbers are missing values with a
note, and ISO timestamps with a UTC offset are dates at their written wall-clock time.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from stratpd_xl.input.sheet import blank_mask, frame_from_cells, typed_column
from stratpd_xl.input.sheet._columns import scan_column, typed_rows
from tests import reference_typing as reference

_TEXTS = st.sampled_from(
    [
        "1",
        " 2 ",
        "1,234.5",
        "1.234,5",
        "1,5",
        "12%",
        "$5",
        "(12)",
        "1 234,5",
        "-3.25e2",
        "2024-03-01",
        "01/02/2024",
        "13/02/2024",
        "31.12.2023",
        "2024/01/31",
        "2024-01",
        "TRUE",
        "false",
        "wahr",
        "#N/A",
        "#DIV/0!",
        "#NV",
        "NA",
        "n/a",
        "",
        "   ",
        "north",
        "south",
        "?",
        "see note",
        "1.234",
        ".5",
        "e",
        "+",
        "31.02.2024",
        "1e5",
    ]
)
# Random number-like texts stress the separator and thousands-group rules.
_NUMBERISH = st.text(alphabet="0123456789.,-+eE %$()/", max_size=9)
_CELLS = st.one_of(
    _TEXTS,
    _NUMBERISH,
    st.none(),
    st.floats(allow_nan=True, allow_infinity=False, width=32),
    st.integers(-(10**6), 10**6),
    st.booleans(),
    st.datetimes(min_value=dt.datetime(1990, 1, 1), max_value=dt.datetime(2040, 1, 1)),
    st.just(float("nan")),
)


def _same(fast: pd.Series, slow: pd.Series) -> None:
    # Infinite numbers are missing values now (issue 8); the reference kept them.
    assume(not (slow.dtype.kind == "f" and np.isinf(slow).any()))
    assert fast.dtype == slow.dtype
    pd.testing.assert_series_equal(fast, slow, check_exact=True)


@settings(max_examples=300, deadline=None)
@given(cells=st.lists(_CELLS, max_size=30), decimal=st.sampled_from([None, ".", ","]))
def test_column_typing_matches_the_per_cell_reference(cells: list, decimal: str | None) -> None:
    fast, fast_notes = typed_column("c", cells, decimal)
    slow, slow_notes = reference.typed_column("c", cells, decimal)
    _same(fast, slow)
    assert fast_notes == slow_notes


@settings(max_examples=200, deadline=None)
@given(
    cells=st.lists(st.one_of(_TEXTS, st.none(), st.floats(-1e6, 1e6, allow_nan=False)), max_size=40)
)
def test_text_only_and_number_only_columns_match_the_reference(cells: list) -> None:
    for column in (
        [c for c in cells if not isinstance(c, float)],
        [c for c in cells if not isinstance(c, str)],
        np.array([c for c in cells if isinstance(c, float)], dtype=float),
    ):
        fast, fast_notes = typed_column("c", column)
        slow, slow_notes = reference.typed_column("c", column)
        _same(fast, slow)
        assert fast_notes == slow_notes


def _assert_block_matches_reference(names: str, rows: list) -> None:
    """The block typed at once gives every column the reference types cell by cell."""
    try:
        frame = frame_from_cells([tuple(names), *rows])
    except Exception:  # an all-blank block: the error is the sheet's business, not typing's
        return
    body = [r for r in rows if any(not reference.is_blank(v) for v in r)]
    for j, name in enumerate(names):
        if name in frame:
            slow, _ = reference.typed_column(name, [r[j] for r in body])
            _same(frame[name], slow)


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.tuples(_CELLS, _CELLS, _TEXTS), min_size=1, max_size=20))
def test_a_block_of_rows_matches_typing_each_column_by_the_reference(rows: list) -> None:
    _assert_block_matches_reference("abc", rows)


def test_infinite_numbers_are_missing_values_with_a_note() -> None:
    series, notes = typed_column("price", ["1e309", "2", 3.5, float("inf"), float("-inf")])
    assert series.isna().tolist() == [True, False, False, True, True]
    assert series.dtype == float
    assert notes == ['column "price": 3 infinite numbers treated as missing']
    frame = frame_from_cells([["x", "y"], [1.0, np.inf], [2.0, 3.0]])
    assert frame["y"].isna().tolist() == [True, False]
    assert any("infinite" in note for note in frame.attrs["notes"])


def test_iso_timestamps_with_an_offset_are_dates_at_their_written_wall_clock() -> None:
    series, notes = typed_column("when", ["2024-03-01T00:00+02:00", "2024-03-02T10:30Z"])
    assert series.dtype.kind == "M"
    assert series.tolist() == [pd.Timestamp("2024-03-01 00:00"), pd.Timestamp("2024-03-02 10:30")]
    assert notes == []


def test_timezone_aware_datetime_cells_keep_their_wall_clock_time() -> None:
    plus5 = dt.timezone(dt.timedelta(hours=5))
    series, _ = typed_column("when", [dt.datetime(2024, 3, 1, 9, 0, tzinfo=plus5)])
    assert series.tolist() == [pd.Timestamp("2024-03-01 09:00")]


# Long columns of one kind with a few blanks or strays: the shape of real sheets, where the
# body below the first cells is checked and converted a whole column at a time.
_BLANKS = st.sampled_from([None, float("nan"), np.float32("nan"), pd.NA, "", "  "])
_LONG_COLUMNS = st.one_of(
    st.lists(st.one_of(st.floats(-1e6, 1e6, width=32), st.integers(-99, 99), _BLANKS),
             min_size=70, max_size=140),
    st.lists(st.one_of(_TEXTS, _BLANKS), min_size=70, max_size=140),
    st.lists(st.one_of(_CELLS, _BLANKS), min_size=70, max_size=140),
)


@settings(max_examples=150, deadline=None)
@given(column=_LONG_COLUMNS, header=st.one_of(st.just("h"), st.none(), st.just(" ")))
def test_long_columns_match_the_reference(column: list, header: Any) -> None:
    cells = np.array([header, *column], dtype=object)
    assert blank_mask(cells).tolist() == reference.blank_mask(cells).tolist()
    fast, fast_notes = typed_column("c", cells[1:])
    slow, slow_notes = reference.typed_column("c", column)
    _same(fast, slow)
    assert fast_notes == slow_notes


def test_an_int_beyond_a_float_is_an_infinite_number_not_a_crash() -> None:
    # From the Python API (Excel hands floats): float(10**400) raises OverflowError.
    series, notes = typed_column("n", [1.0, 10**400, 2, -(10**400), None])
    assert series.tolist()[::2] == [1.0, 2.0, pytest.approx(np.nan, nan_ok=True)]
    assert series.isna().tolist() == [False, True, False, True, True]
    assert notes == ['column "n": 2 infinite numbers treated as missing']
    frame = frame_from_cells([["a", "b"], [1.0, 10**400]] + [[2.0, 3.0]] * 80)
    assert frame["b"].isna().sum() == 1
    assert 'column "b": 1 infinite number treated as missing' in frame.attrs["notes"]


@settings(max_examples=200, deadline=None)
@given(column=_LONG_COLUMNS, header=st.one_of(st.just("h"), st.none()),
       cut=st.tuples(st.integers(0, 150), st.integers(0, 150)),
       decimal=st.sampled_from([None, ".", ","]), odd=st.sampled_from([None, pd.NA, 10**400]))
def test_typing_rows_from_the_scan_is_typing_them_afresh(
    column: list, header: Any, cut: tuple[int, int], decimal: str | None, odd: Any
) -> None:
    # The block path reuses the blank scan's floats of an all-number body; the typed rows
    # (any stretch, the cells above the body included) must be what typed_column makes.
    column = [*column]
    if odd is not None:  # a cell no float conversion takes, above or in the body
        column[cut[0] % len(column)] = odd
    cells = np.array([header, *column], dtype=object)
    scan = scan_column(cells)
    assert scan.blank.tolist() == blank_mask(cells).tolist()
    rows = slice(1 + min(cut[1], len(column) - 1), len(cells))
    fast, fast_notes = typed_rows("c", cells, scan, rows, decimal)
    slow, slow_notes = typed_column("c", cells[rows], decimal)
    pd.testing.assert_series_equal(fast, slow, check_exact=True)
    assert fast_notes == slow_notes


@settings(max_examples=60, deadline=None)
@given(a=_LONG_COLUMNS, b=_LONG_COLUMNS)
def test_long_blocks_match_typing_each_column_by_the_reference(a: list, b: list) -> None:
    n = min(len(a), len(b))
    rows = list(zip(a[:n], b[:n], strict=True))
    _assert_block_matches_reference("ab", rows)
