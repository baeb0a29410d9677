"""The model's second opinion (``sx.compare``, ``sx.ice``, two-way PD) on data with known truth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import stratpd_xl as sx
from stratpd_xl import model
from stratpd_xl.errors import StratPDInputError
from stratpd_xl.model.api import PAIR_GRID

from .synthetic import body_weight


def _slope(table: pd.DataFrame, column: str) -> float:
    return float(np.polyfit(table["x"].astype(float), table[column], 1)[0])


def independent(n: int = 1500, seed: int = 0) -> pd.DataFrame:
    """y = x1^2 / 10 + x2 + z + noise, every column independent of the others."""
    rng = np.random.default_rng(seed)
    x1, x2, z = rng.uniform(0, 10, (3, n))
    return pd.DataFrame({"x1": x1, "x2": x2, "z": z,
                         "y": x1**2 / 10 + x2 + z + rng.normal(0, 0.3, n)})


def codependent(n: int = 1500, seed: int = 0) -> pd.DataFrame:
    """y = x1 + x2 + z + noise where x1 stays below 1 wherever x2 < 5.

    Half the pairs partial dependence makes (x1 large with x2 small) never occur: the model
    has no rows there and extrapolates; StratPD compares rows alike in x2 and z only.
    """
    rng = np.random.default_rng(seed)
    x2, z = rng.uniform(0, 10, (2, n))
    x1 = np.where(x2 < 5, rng.uniform(0, 1, n), rng.uniform(0, 10, n))
    return pd.DataFrame({"x1": x1, "x2": x2, "z": z,
                         "y": x1 + x2 + z + rng.normal(0, 0.3, n)})


def _truth_rmse(table: pd.DataFrame, column: str, truth: np.ndarray, x: np.ndarray) -> float:
    grid = table["x"].to_numpy(float)
    weights = model.row_weights(grid, x)
    return float(np.sqrt(np.average(
        (table[column] - model.centre(truth, weights)) ** 2, weights=weights)))


def test_independent_columns_model_and_data_both_right_and_agree() -> None:
    df = independent()
    table = sx.compare(df, "y", "x1", random_state=0)
    assert list(table.columns) == ["x", "stratpd", "pdp", "ale"]
    truth = table["x"].to_numpy(float) ** 2 / 10
    spread = float(np.std(truth))
    for column in ("stratpd", "pdp", "ale"):
        assert _truth_rmse(table, column, truth, df["x1"].to_numpy()) < 0.1 * spread, column
    a = table.attrs
    assert a["agreement"] > 0.8
    assert a["extrapolation"] < 0.05
    assert a["model_r2"] > 0.95
    assert "agree on" in a["sentence"]
    assert "rows it did not see" in a["model_sentence"]
    # every curve centred the same way: average over the rows 0
    weights = model.row_weights(table["x"].to_numpy(float), df["x1"].to_numpy())
    for column in ("stratpd", "pdp", "ale"):
        assert abs(np.average(table[column], weights=weights)) < 1e-9


def test_codependent_columns_data_right_model_off_and_the_sentence_says_why() -> None:
    df = codependent(seed=1)
    table = sx.compare(df, "y", "x1", random_state=0, n_trials=5)
    assert {"stratpd_low", "stratpd_high"} <= set(table.columns)
    truth = table["x"].to_numpy(float)
    spread = float(np.std(truth))
    assert _truth_rmse(table, "stratpd", truth, df["x1"].to_numpy()) < 0.05 * spread
    # the model gives x1 part of x2's effect where it has no rows
    assert _truth_rmse(table, "pdp", truth, df["x1"].to_numpy()) > 0.3 * spread
    assert _slope(table, "stratpd") == pytest.approx(1.0, abs=0.05)
    a = table.attrs
    assert a["agreement"] < 0.5
    assert a["extrapolation"] > 0.15
    assert "disagree" in a["sentence"]
    assert "never occur in the data" in a["sentence"]
    assert "extrapolates" in a["sentence"]


def test_categorical_pregnant_men_are_extrapolation() -> None:
    # Body weight (paper Eq. 5): pregnant adds 40; partial dependence also asks about
    # pregnant men, who are not in the data.
    df = body_weight(2000, 0)
    table = sx.compare(df, "weight", "pregnant", categorical=["pregnant"], random_state=0)
    assert list(table.columns) == ["category", "stratpd", "pdp", "ale"]
    effect = table.set_index("category")
    assert effect.loc[1, "stratpd"] - effect.loc[0, "stratpd"] == pytest.approx(40, abs=1)
    # the model's PD falls short: its pregnant men get less than 40 (but far from nothing)
    assert 25 < effect.loc[1, "pdp"] - effect.loc[0, "pdp"] < 37
    assert table.attrs["extrapolation"] > 0.1
    counts = df["pregnant"].value_counts()
    for column in ("stratpd", "pdp", "ale"):
        assert abs(np.average(effect[column], weights=counts[effect.index])) < 1e-9


def test_yes_no_target_on_the_probability_scale() -> None:
    rng = np.random.default_rng(1)
    n = 2000
    x = rng.uniform(0, 10, n)
    other = rng.uniform(0, 10, n)
    churn = rng.random(n) < np.where(x > 5, 0.7, 0.2)
    df = pd.DataFrame({"x": x, "other": other, "churn": np.where(churn, "yes", "no")})
    table = sx.compare(df, "churn", "x", random_state=0)
    a = table.attrs
    assert a["units"] == "percentage points"
    assert 0.6 < a["model_auc"] <= 1
    assert 0 < a["model_brier"] < 0.25
    step = table.loc[table["x"] > 6, "pdp"].mean() - table.loc[table["x"] < 4, "pdp"].mean()
    assert step == pytest.approx(50, abs=10)  # 70 % - 20 %, in points
    assert "AUC" in a["model_sentence"]


def test_ice_rows_and_centred_curves() -> None:
    df = independent(800)
    ice = sx.ice(df, "y", "x1", rows=7, random_state=0)
    assert list(ice.columns) == ["row", "x", "prediction", "centred"]
    assert ice["row"].nunique() == 7
    first = ice.groupby("row")["centred"].first()
    assert np.allclose(first, 0)
    # c-ICE of y = x1^2/10 + ... rises by about 10 over x1's range for every row
    rise = ice.groupby("row")["centred"].last()
    assert np.all((rise > 6) & (rise < 12))
    assert set(ice["row"]) <= set(range(len(df)))


def test_two_way_pd_and_h2_tell_interaction_from_addition() -> None:
    rng = np.random.default_rng(0)
    n = 2000
    a, b, c = rng.uniform(-1, 1, (3, n))
    added = pd.DataFrame({"a": a, "b": b, "c": c, "y": a + b + rng.normal(0, 0.05, n)})
    product = added.assign(y=a * b + rng.normal(0, 0.05, n))
    pair = sx.compare(added, "y", ["a", "b"], random_state=0)
    assert list(pair.columns) == ["a", "b", "pdp"]
    assert len(pair) == PAIR_GRID**2
    assert pair.attrs["h2"] < 0.1
    assert pair.attrs["h2"] == pytest.approx(
        sx.compare(added, "y", ["a", "b"], random_state=0).attrs["h2"])
    assert sx.compare(product, "y", ["a", "b"], random_state=0).attrs["h2"] > 0.7
    assert "interaction" in pair.attrs["sentence"]


def test_two_way_pd_with_a_category() -> None:
    df = body_weight(1000, 0)
    pair = sx.compare(df, "weight", ["height", "sex"], random_state=0)
    assert set(pair["sex"]) == {"F", "M"}
    assert pair.attrs["kinds"] == ["numeric", "categorical"]


@pytest.mark.parametrize(
    ("frame", "target", "feature", "words"),
    [
        (independent(40), "y", "x1", "fitting a model to compare with needs at least 50"),
        (independent(200).assign(y=3.0), "y", "x1", "same value"),
        (independent(400).assign(code=[f"c{i % 300}" for i in range(400)]), "y", "code",
         "more than the model can use (255)"),
        (independent(200), "y", ["x1", "x2", "z"], "takes two features"),
    ],
)
def test_bad_input_gets_one_sentence(frame, target, feature, words) -> None:
    with pytest.raises(StratPDInputError) as info:
        sx.compare(frame, target, feature, min_samples_leaf=5)
    text = str(info.value)
    assert words in text
    assert "\n" not in text


def test_a_column_with_too_many_categories_is_left_out_of_the_model_with_a_note() -> None:
    from stratpd_xl import workflow

    df = independent(600).assign(code=[f"c{i % 300}" for i in range(600)])
    result = workflow.compare(df, "y", "x1", categorical=["code"])
    assert "code" not in result.table.attrs["model_columns"]
    assert any('leaves out "code"' in note for note in result.notes)


def test_compare_and_ice_notes_are_one_collected_set_like_an_analysis_s() -> None:
    # Two columns the model cannot use were two loose sentences, and the compare's notes
    # plain text with no kind: now one note naming both, and every note data, once.
    from stratpd_xl import workflow
    from stratpd_xl.schema import Note

    df = independent(600).assign(code=[f"c{i % 300}" for i in range(600)],
                                 shop=[f"s{i % 280}" for i in range(600)])
    for result in (workflow.compare(df, "y", "x1", categorical=["code", "shop"]),
                   workflow.ice(df, "y", "x1", categorical=["code", "shop"])):
        model = [n for n in result.notes if "leaves out" in n]
        assert len(model) == 1 and isinstance(model[0], Note), result.notes
        assert model[0].kind == "left out" and set(model[0].columns) == {"code", "shop"}
        assert model[0].startswith("the model leaves out 2 columns: ")
        assert all(isinstance(n, Note) for n in result.notes)
        assert len(set(result.notes)) == len(result.notes)
        assert result.table.attrs["notes"] == result.notes


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=12),
    st.floats(0.0, 10.0),
    st.floats(-3.0, 3.0),
)
def test_agreement_is_between_0_and_1_and_1_for_the_same_curve(values, floor, factor) -> None:
    a = np.asarray(values)
    w = np.ones(a.size)
    same = model.agreement(a, a.copy(), w, floor)
    assert same == 1.0
    value = model.agreement(a, factor * a, w, floor)
    assert 0.0 <= value <= 1.0
    if np.sqrt(np.mean(a**2)) > floor:
        # || a - f a || / max(||a||, ||f a||) = |1 - f| / max(1, |f|)
        expected = max(0.0, 1 - 2 * abs(1 - factor) / max(1, abs(factor)))
        assert value == pytest.approx(expected, abs=1e-9)


def test_agreement_floor_makes_two_flat_curves_agree() -> None:
    w = np.ones(5)
    tiny = np.array([0.01, -0.01, 0.0, 0.02, -0.02])
    assert model.agreement(tiny, -tiny, w, floor=1.0) > 0.9
    assert model.agreement(tiny, -tiny, w, floor=0.0) == 0.0
    assert model.agreement(np.arange(5.0) - 2, np.zeros(5), w, floor=0.1) == 0.0


def test_cli_compare_writes_every_format_and_the_ice_table(tmp_path, capsys) -> None:
    from stratpd_xl.cli import main

    data = tmp_path / "co.csv"
    codependent(600).to_csv(data, index=False)
    outs = [tmp_path / f"out{s}" for s in (".csv", ".xlsx", ".png", ".svg")]
    argv = ["compare", str(data), "-t", "y", "-f", "x1", "--ice", "--seed", "0"]
    assert main(argv + [a for o in outs for a in ("-o", str(o))]) == 0
    err = capsys.readouterr().err
    assert "rows it did not see" in err and "agreement" in err
    table = pd.read_csv(outs[0], encoding="utf-8-sig")
    assert list(table.columns) == ["x", "stratpd", "pdp", "ale"]
    ice = pd.read_csv(tmp_path / "out-ice.csv", encoding="utf-8-sig")
    assert list(ice.columns) == ["row", "x", "prediction", "centred"]
    assert outs[2].read_bytes()[:4] == b"\x89PNG"
    assert b"<svg" in outs[3].read_bytes()[:400]
    import openpyxl

    book = openpyxl.load_workbook(outs[1])
    assert book.sheetnames == ["compare", "ICE"]
    assert "rows it did not see" in str(book["compare"]["A1"].value)
    # a pair: the heat map
    pair = tmp_path / "pair.png"
    assert main(["compare", str(data), "-t", "y", "-f", "x1", "-f", "x2", "-o", str(pair)]) == 0
    assert "H²" in capsys.readouterr().err


def test_cli_compare_bad_input_is_one_sentence_and_exit_2(tmp_path, capsys) -> None:
    from stratpd_xl.cli import main

    data = tmp_path / "small.csv"
    independent(30).to_csv(data, index=False)
    assert main(["compare", str(data), "-t", "y", "-f", "x1", "--min-samples-leaf", "3"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "needs at least 50" in err
    assert main(["compare", str(data), "-t", "y", "-f", "x1", "-f", "x2", "--ice"]) == 2
    assert "--ice" in capsys.readouterr().err


# --------------------------------------------------------------------------- the formula

from .test_excel_udfs import call_like_excel, xl  # noqa: E402, F401 - real xlwings converters


def _cells(frame: pd.DataFrame) -> tuple[tuple, ...]:
    return (tuple(frame.columns), *(tuple(float(v) for v in row) for row in frame.to_numpy()))


def test_stratcompare_formula_spills_the_table_and_the_sentences(xl) -> None:  # noqa: F811
    df = codependent(600)
    out = call_like_excel(xl, xl.udfs.STRATCOMPARE, _cells(df), "y", "x1", 10, 3)
    assert out[0] == ["x1", "StratPD (data)", "StratPD low", "StratPD high", "model PDP",
                      "model ALE"]
    body = [r for r in out[1:] if isinstance(r[1], float)]
    assert len(body) > 50
    text = [r[0] for r in out if isinstance(r[0], str)]
    assert any("rows it did not see" in t for t in text)
    assert any("agreement" in t for t in text)
    # the same cells come from the cache, and the picture is the overlay
    from stratpd_xl import spreadsheet

    again = spreadsheet.stratcompare(_cells(df), "y", "x1", trials=3)
    # (xlwings writes an empty cell's None as "")
    assert [["" if v is None else v for v in r] for r in again.cells] == out
    assert again.curve.kind == "compare"
    assert spreadsheet.chart_png(again.curve)[:4] == b"\x89PNG"


def test_stratcompare_formula_errors_are_one_cell(xl) -> None:  # noqa: F811
    small = independent(30)
    out = call_like_excel(xl, xl.udfs.STRATCOMPARE, _cells(small), "y", "x1", 3)
    assert len(out) == 1 and len(out[0]) == 1
    assert out[0][0].startswith("STRATCOMPARE: only 30 rows")
    out = call_like_excel(xl, xl.udfs.STRATCOMPARE, _cells(small), "y", "nope")
    assert out[0][0].startswith("STRATCOMPARE: ") and len(out) == 1


def test_brute_force_pd_is_scikit_learns_in_one_call() -> None:
    # With a categorical column the model's PD is the brute force; it must equal
    # scikit-learn's own brute force over the same rows.
    from sklearn.inspection import partial_dependence as sk_pd

    from stratpd_xl.model._effects import BRUTE_ROWS, _sample

    df = body_weight(1500, 0)
    fitted = model.fit_model(df, "weight")
    grid = np.array([62.0, 66.0, 70.0, 74.0])
    ours = model.partial_dependence(fitted, "height", grid, seed=3)
    rows = fitted.x[_sample(fitted, BRUTE_ROWS, 3)]
    j = fitted.index("height")
    x = rows.copy()
    x[: grid.size, j] = grid  # scikit-learn's grid: these values (fewer than resolution)
    x[grid.size:, j] = grid[0]
    theirs = sk_pd(fitted.estimator, x, [j], method="brute", grid_resolution=10,
                   percentiles=(0, 1),
                   categorical_features=[fitted.index(c) for c in fitted.categories])
    assert np.allclose(theirs["grid_values"][0], grid)
    assert np.allclose(ours, theirs["average"][0])


def test_report_compare_adds_a_model_check_sheet(tmp_path, capsys) -> None:
    import openpyxl

    from stratpd_xl.cli import main

    data = tmp_path / "bw.csv"
    body_weight(800, 0).to_csv(data, index=False)
    out = tmp_path / "report.xlsx"
    assert main(["report", str(data), "-t", "weight", "--compare", "--trials", "1",
                 "-o", str(out)]) == 0
    assert "model check:" in capsys.readouterr().err
    book = openpyxl.load_workbook(out)
    assert book.sheetnames[:2] == ["Summary", "Model check"]
    sheet = book["Model check"]
    cells = [[c.value for c in row] for row in sheet.iter_rows()]
    assert "rows it did not see" in str(cells[1][0])
    header = next(i for i, r in enumerate(cells) if r[0] == "feature")
    body = [r for r in cells[header + 1:] if r[0]]
    assert {r[0] for r in body} == {"height", "pregnant", "education", "sex"}
    for r in body:
        assert 0 <= r[2] <= 1 and isinstance(r[7], str) and "StratPD and the model" in r[7]
        assert r[4] in ("agree", "agree, wide bands", "same direction, sizes differ",
                        "trust StratPD", "trust the model",
                        "trust neither", "few rows there", "read both")
    # without --compare: no such sheet
    plain = tmp_path / "plain.xlsx"
    assert main(["report", str(data), "-t", "weight", "--trials", "1", "-o", str(plain)]) == 0
    assert "Model check" not in openpyxl.load_workbook(plain).sheetnames
