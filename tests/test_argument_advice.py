"""Errors that name a formula argument name it as the formula's signature does.

"pick positive ... the last formula argument" was wrong once ``exclude`` came after it, and
following the advice gave the same error again.  Here every whole-number or TRUE/FALSE
argument of every formula is given a bad value, and the cell must name it by its name and its
place in the signature of the Excel wrapper (the one users type into); a text target's advice
must name ``positive`` the same way, and giving a value at that place must work.  *Analyse
selection* names the workbook names that set those values instead.
"""

from __future__ import annotations

import inspect
import re

import pytest

from stratpd_xl import spreadsheet
from stratpd_xl.errors import StratPDInputError
from stratpd_xl.excel import udfs
from tests.test_calc_extension import DATA

FORMULAS = list(spreadsheet.FORMULA_ARGS)
# The columns each formula needs besides data and target.
COLUMNS = {"STRATPD": ["carat"], "STRATIMPACT": [], "STRATPDBY": ["carat", "cut"],
           "STRATPD2": ["carat", "cut"], "STRATCOMPARE": ["carat"]}
WHOLE = {"min_samples_leaf", "trials", "max_points", "bands", "grid"}
TEXT_TARGET = [[*row[:-1], row[2]] if i else row[:-1] + ["quality"]
               for i, row in enumerate(DATA)]  # "quality": the colour, seven letters


def _signature(formula: str) -> list[str]:
    """The Excel wrapper's arguments in order (``caller`` is xlwings' own)."""
    names = list(inspect.signature(getattr(udfs, formula)).parameters)
    return [n for n in names if n != "caller"]


def _cell(formula: str, data, target: str, **given) -> str:
    out = getattr(udfs, formula)(data, target, *COLUMNS[formula], **given)
    return out[0][0]


def test_the_wrappers_take_the_declared_arguments_in_order():
    for formula, args in spreadsheet.FORMULA_ARGS.items():
        assert _signature(formula) == list(args), formula


@pytest.mark.parametrize("formula", FORMULAS)
def test_a_bad_setting_is_named_with_its_place_in_the_signature(formula):
    order = _signature(formula)
    checked = 0
    for name in order:
        if name in WHOLE:
            bad = "many"
        elif name == "chart":
            bad = "perhaps"
        else:
            continue
        text = _cell(formula, DATA, "price", **{name: bad})
        place = order.index(name) + 1
        assert f"{name} (argument {place} of {formula}) must be" in text, text
        checked += 1
    assert checked >= 1


@pytest.mark.parametrize("formula", FORMULAS)
def test_a_text_target_is_told_where_positive_goes_and_that_place_works(formula):
    order = _signature(formula)
    text = _cell(formula, TEXT_TARGET, "quality")
    place = order.index("positive") + 1
    assert f"with positive (argument {place} of {formula}), e.g. " in text, text
    assert "last" not in text
    # Following the advice: the value at that place, all others blank, as a user types it.
    values = [None] * len(order)
    values[:2 + len(COLUMNS[formula])] = [TEXT_TARGET, "quality", *COLUMNS[formula]]
    values[place - 1] = "E"
    if "grid" in order:  # 300 rows fill a 5 x 7 surface, not the default 10 x 7
        values[order.index("grid")] = 5
    cells = getattr(udfs, formula)(*values)
    assert len(cells) > 2, cells[0][0]
    wrong = _cell(formula, TEXT_TARGET, "quality", positive="Perfect")
    assert f"give positive (argument {place} of {formula}) one of them" in wrong


def test_the_menu_names_the_workbook_names():
    with pytest.raises(StratPDInputError) as caught:
        spreadsheet.report_sheet(TEXT_TARGET, target="quality")
    assert "with the name StratPD_positive, e.g. " in str(caught.value)
    with pytest.raises(StratPDInputError,
                       match=re.escape("the name StratPD_trials must be a whole number between")):
        spreadsheet.report_sheet(DATA, target="price", n_trials=500)
    # The command line and Python keep their own words.
    with pytest.raises(StratPDInputError, match=re.escape("--positive (positive= in Python)")):
        import stratpd_xl as sx
        from stratpd_xl.input.sheet import frame_from_cells

        sx.impact(frame_from_cells(TEXT_TARGET), "quality")


def test_the_menu_takes_positive_and_draws_the_band_by_default():
    report = spreadsheet.report_sheet(TEXT_TARGET, target="quality", positive="E",
                                      n_trials=None)
    assert report.settings.n_trials == spreadsheet.PARAMETERS["n_trials"].report_default > 1
    one = spreadsheet.report_sheet(DATA, target="price", n_trials=1)
    assert one.settings.n_trials == 1


@pytest.mark.parametrize("formula", FORMULAS)
def test_a_column_left_out_as_an_id_is_told_where_keep_goes_and_that_place_works(formula):
    from tests.test_identifiers import _credit

    frame = _credit()
    credit = [list(frame.columns), *frame.to_numpy().tolist()]
    order = _signature(formula)
    place = order.index("keep") + 1
    assert f"keep (argument {place} of {formula})" in spreadsheet.keep_hint(formula)
    columns = {"STRATPD": ["income"], "STRATIMPACT": [], "STRATPDBY": ["income", "limit"],
               "STRATPD2": ["income", "limit"], "STRATCOMPARE": ["income"]}[formula]
    # Following the advice: the name at that place, all others blank, as a user types it.
    values = [None] * len(order)
    values[:2 + len(columns)] = [credit, "balance", *columns]
    if "grid" in order:
        values[order.index("grid")] = 4
    plain = getattr(udfs, formula)(*values)
    values[place - 1] = "rownames"
    kept = getattr(udfs, formula)(*values)
    assert len(kept) > 2 and kept != plain, kept[0][0]
    if formula == "STRATIMPACT":
        assert {r[0] for r in plain[1:]} == {"income", "limit"}
        assert {r[0] for r in kept[1:]} == {"income", "limit", "rownames"}


def test_the_menu_names_stratpd_keep():
    from tests.test_identifiers import _credit

    frame = _credit()
    credit = [list(frame.columns), *frame.to_numpy().tolist()]
    report = spreadsheet.report_sheet(credit, target="balance", n_trials=1)
    notes = [row[0] for item in report.items if isinstance(item, spreadsheet.Cells)
             for row in item.cells if "identifiers" in str(row[0])]
    assert notes and all(n.endswith(
        "list it in the workbook name StratPD_keep to analyse it anyway") for n in notes), notes
    kept = spreadsheet.report_sheet(credit, target="balance", n_trials=1, keep=["ID"])
    assert set(kept.result.impact["feature"]) == {"income", "limit", "ID"}
