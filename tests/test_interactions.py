"""By-group curves, the interaction ranking and the two-way surface, on known truth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import stratpd_xl as sx
from stratpd_xl import StratPDInputError
from tests.synthetic import interaction_proxy


def _uniform(n: int, p: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(rng.uniform(-1, 1, (n, p)), columns=[f"x{i}" for i in range(p)])


@pytest.fixture(scope="module")
def regions() -> pd.DataFrame:
    # The effect of price is twice as steep in the south.
    rng = np.random.default_rng(1)
    n = 3000
    df = pd.DataFrame({"price": rng.uniform(0, 10, n),
                       "region": rng.choice(["north", "south"], n),
                       "ads": rng.normal(size=n)})
    df["sales"] = (np.where(df["region"] == "south", 2.0, 1.0) * df["price"] + df["ads"]
                   + rng.normal(0, 0.5, n))
    return df


def test_by_group_recovers_each_groups_slope_and_says_so(regions):
    curve = sx.stratpd(regions, "sales", "price", by="region", n_trials=6, random_state=0)
    assert list(curve.columns[:2]) == ["group", "x"]
    assert {"pd_low", "pd_high"} <= set(curve.columns)
    assert list(curve["group"].cat.categories) == ["north", "south"]
    slopes = curve.attrs["group_slopes"]
    assert slopes["north"] == pytest.approx(1.0, abs=0.1)
    assert slopes["south"] == pytest.approx(2.0, abs=0.15)
    # each group's curve is centred on its own rows, as an ungrouped curve is
    for _, part in curve.groupby("group", observed=True):
        assert abs(np.average(part["pd"], weights=part["n_slopes"])) < 1.0
    (finding,) = curve.attrs["findings"]
    assert "twice as steep for region = south" in finding
    assert "region" in curve.attrs["params"]["by"]


def test_same_slopes_give_no_finding(regions):
    df = regions.copy()
    df["sales"] = df["price"] + df["ads"]
    curve = sx.stratpd(df, "sales", "price", by="region", n_trials=6, random_state=0)
    assert curve.attrs["findings"] == []


def test_a_slope_within_its_band_is_flat_not_down():
    from stratpd_xl.engine._groups import slope_note

    # Wage by union: -0.0013 beside 0.0126 read "goes up for no but down for yes".
    said = slope_note("wage", "experience", "union",
                      {"no": (0.0126, 0.002), "yes": (-0.0013, 0.004)})
    assert said is not None and "flat for union = yes" in said and "down" not in said
    assert "within its 95 % band" in said
    # Without bands, a slope under a tenth of the other's is nearly flat, whatever its sign.
    said = slope_note("y", "x", "g", {"a": (2.0, float("nan")), "b": (-0.05, float("nan"))})
    assert "nearly flat for g = b" in said and "down" not in said
    # Clearly opposite slopes still say so.
    said = slope_note("y", "x", "g", {"a": (2.0, 0.1), "b": (-1.0, 0.1)})
    assert "goes up for g = a" in said and "down for g = b" in said


def test_numeric_by_is_cut_into_labelled_bands(regions):
    curve = sx.stratpd(regions, "sales", "price", by="ads", bands=3, random_state=0)
    groups = curve.attrs["groups"]
    assert len(groups) == 3 and all(" to " in g for g in groups)
    assert sum(curve.attrs["group_rows"].values()) == len(regions)
    # no interaction with ads: every band has the average slope (1.5)
    assert all(abs(s - 1.5) < 0.2 for s in curve.attrs["group_slopes"].values())


def test_categorical_feature_by_group(regions):
    effects = sx.partial_dependence(regions, "sales", "region", by="ads", bands=2,
                                    random_state=0)
    assert set(effects.columns[:2]) == {"group", "category"}
    south = effects[effects["category"] == "south"]["pd"]
    assert len(south) == 2 and south.between(4.5, 5.5).all()  # (2 - 1) x mean price 5


@pytest.mark.parametrize(
    ("by", "phrase"),
    [("store", "at most 12 levels"), ("price", "both the feature and the by column"),
     ("sales", "is the target"), ("nope", 'by column "nope" not found')],
)
def test_bad_by_gets_one_sentence(regions, by, phrase):
    df = regions.assign(store=[f"s{i % 300}" for i in range(len(regions))])
    with pytest.raises(StratPDInputError, match=phrase):
        sx.stratpd(df, "sales", "price", by=by)


def test_interactions_rank_the_product_first_and_stay_near_zero_when_additive():
    df = _uniform(4000, 5, 0)
    rng = np.random.default_rng(5)
    noise = rng.normal(0, 0.1, len(df))
    df["y"] = df["x0"] * df["x1"] + df["x2"] + 0.5 * df["x3"] ** 2 + noise
    ranking = sx.interactions(df, "y", random_state=0)
    assert list(ranking.columns) == ["feature_1", "feature_2", "strength", "size"]
    top = ranking.iloc[0]
    assert {top["feature_1"], top["feature_2"]} == {"x0", "x1"}
    assert top["strength"] > 0.9  # a pure product: all of the pair's effect is interaction
    assert ranking["strength"].iloc[1] < 0.1
    assert ranking["strength"].is_monotonic_decreasing
    df["y"] = df["x0"] + df["x1"] + df["x2"] + 0.5 * df["x3"] ** 2 + noise
    assert sx.interactions(df, "y", random_state=0)["strength"].max() < 0.05


@pytest.mark.parametrize("seed", [0, 1])
def test_a_proxy_of_an_interacting_column_gets_no_credit(seed):
    # x4 moves with x1 (correlation 0.86) and does nothing: x2 x x4 got 0.96 against the true
    # x1 x x2's 0.98, because grouping by x4 groups by x1 too.
    ranking = sx.interactions(interaction_proxy(seed), "y", random_state=0)
    strength = {frozenset((a, b)): s for a, b, s in
                zip(ranking["feature_1"], ranking["feature_2"], ranking["strength"],
                    strict=True)}
    assert strength[frozenset(("x1", "x2"))] > 0.95
    assert max(s for pair, s in strength.items() if pair != {"x1", "x2"}) < 0.05


def test_held_shares_credit_the_interacting_column_not_its_proxy():
    from stratpd_xl.engine._table import build_table
    from stratpd_xl.engine.pairs import _effects, groups_of, held_shares
    from stratpd_xl.params import Settings

    df = interaction_proxy(2)
    table = build_table(df, "y")
    eff, rows = _effects(table, "x2", Settings())
    paired = ["x1", "x2", "x3", "x4"]
    groups = {f: groups_of(table.frame[f], f, 4) for f in paired}
    held = held_shares(table, eff, rows, "x2", paired, groups)
    assert held["x1"] > 0.9 and held["x4"] < 0.1


def test_interactions_need_two_features():
    df = _uniform(200, 1, 0).assign(y=lambda d: d["x0"])
    with pytest.raises(StratPDInputError, match="at least two columns"):
        sx.interactions(df, "y")


@pytest.fixture(scope="module")
def product() -> pd.DataFrame:
    df = _uniform(6000, 3, 2)
    df["y"] = 3 * df["x0"] * df["x1"] + df["x2"] + np.random.default_rng(3).normal(
        0, 0.1, len(df))
    return df


def test_surface_matches_the_true_product(product):
    surface = sx.stratpd2(product, "y", "x0", "x1", grid=6, random_state=0)
    assert list(surface.columns) == ["x1", "x2", "band", "pd", "interaction", "n_rows",
                                     "thin"]
    ok = ~surface["thin"]
    truth = 3 * surface["x1"] * surface["x2"]
    w = surface["n_rows"][ok]
    truth = truth[ok] - np.average(truth[ok], weights=w)
    error = surface["pd"][ok] - truth
    assert np.sqrt(np.average(error**2, weights=w)) < 0.15 * truth.std()
    assert surface.attrs["interaction_share"] > 0.9
    assert surface.attrs["feature_1"] == "x0"


def test_surface_with_a_categorical_column_keeps_the_order_given(product):
    df = product.assign(g=np.where(product["x1"] > 0, "hi", "lo"))
    df["y"] = np.where(df["g"] == "hi", 2.0, 0.0) * df["x0"] + df["x2"]
    surface = sx.stratpd2(df.drop(columns="x1"), "y", "g", "x0", grid=5, random_state=0)
    assert set(surface["x1"]) == {"hi", "lo"}
    assert not surface["thin"].any()
    hi = surface[surface["x1"] == "hi"].sort_values("x2")
    lo = surface[surface["x1"] == "lo"].sort_values("x2")
    gap = (hi["pd"].to_numpy() - lo["pd"].to_numpy())
    # hi - lo = 2 x0 (plus a constant): its slope along x0 is 2
    slope = np.polyfit(hi["x2"].to_numpy(dtype=float), gap, 1)[0]
    assert slope == pytest.approx(2.0, abs=0.25)


def test_surface_bad_input_gets_one_sentence(product):
    with pytest.raises(StratPDInputError, match="given twice"):
        sx.stratpd2(product, "y", "x0", "x0")
    with pytest.raises(StratPDInputError, match=r"too few for a .* surface.*use grid = "):
        sx.stratpd2(product.head(400), "y", "x0", "x1", grid=20)


def test_thin_cells_are_flagged_and_named():
    df = _uniform(3000, 3, 4)
    df = df[~((df["x0"] > 0.5) & (df["x1"] > 0.5))]  # a corner without data
    df = df.assign(y=df["x0"] * df["x1"] + df["x2"])
    surface = sx.stratpd2(df, "y", "x0", "x1", grid=5, random_state=0)
    corner = surface[(surface["x1"] > 0.6) & (surface["x2"] > 0.6)]
    assert corner["thin"].all()
    (note,) = surface.attrs["warnings"]
    assert "thin" in note and "smaller grid" in note


# --------------------------------------------------------------------------- front ends


@pytest.fixture(scope="module")
def shop_csv(regions, tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("shop") / "shop.csv"
    regions.to_csv(path, index=False)
    return str(path)


def test_cli_curve_by_writes_table_chart_and_workbook(shop_csv, tmp_path, capsys):
    from stratpd_xl.cli import main

    outs = [tmp_path / "by.csv", tmp_path / "by.png", tmp_path / "by.xlsx"]
    args = ["curve", shop_csv, "-t", "sales", "-f", "price", "--by", "Region", "--seed", "0"]
    assert main(args + sum((["-o", str(o)] for o in outs), [])) == 0
    err = capsys.readouterr().err
    assert "twice as steep for region = south" in err
    table = pd.read_csv(outs[0])
    assert list(table.columns[:2]) == ["group", "x"] and set(table["group"]) == {"north",
                                                                                 "south"}
    assert outs[1].read_bytes().startswith(b"\x89PNG")
    from openpyxl import load_workbook

    ws = load_workbook(outs[2]).active
    headers = [c.value for row in ws.iter_rows(max_col=4) for c in row]
    assert "region" in headers and "price" in headers
    assert main(["curve", shop_csv, "-t", "sales", "-f", "price", "--by", "price"]) == 2
    assert "both the feature and the by column" in capsys.readouterr().err


def test_cli_interactions_and_surface(shop_csv, tmp_path, capsys):
    from stratpd_xl.cli import main

    assert main(["interactions", shop_csv, "-t", "sales", "--seed", "0"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["feature_1", "feature_2", "strength", "size"]
    assert set(out[1].split()[:2]) == {"price", "region"}
    png = tmp_path / "s.png"
    assert main(["surface", shop_csv, "-t", "sales", "-f", "price", "-f", "region",
                 "--grid", "5", "-o", str(png), "-o", str(tmp_path / "s.csv")]) == 0
    assert png.read_bytes().startswith(b"\x89PNG")
    surface = pd.read_csv(tmp_path / "s.csv")
    assert len(surface) == 5 * 2 and set(surface["x2"]) == {"north", "south"}
    assert main(["surface", shop_csv, "-t", "sales", "-f", "price", "-f", "PRICE"]) == 2
    assert "given twice" in capsys.readouterr().err
    assert main(["surface", shop_csv, "-t", "sales", "-f", "price"]) == 2
    assert "exactly two features" in capsys.readouterr().err


def test_report_gets_an_interactions_sheet(shop_csv, tmp_path):
    from openpyxl import load_workbook

    from stratpd_xl.cli import main

    out = tmp_path / "report.xlsx"
    assert main(["report", shop_csv, "-t", "sales", "--interactions", "--seed", "0",
                 "-o", str(out)]) == 0
    book = load_workbook(out)
    assert book.sheetnames[:2] == ["Summary", "Interactions"]
    ws = book["Interactions"]
    values = [c.value for row in ws.iter_rows() for c in row if c.value is not None]
    assert "feature 1" in values and "strength" in values
    assert len(ws._images) == 2  # the ranking, and the top pair's by-group chart


def test_formulas_spill_the_by_group_curve_and_the_surface(regions):
    from stratpd_xl.excel import udfs
    from stratpd_xl.input.sheet import cells_from_frame

    cells = cells_from_frame(regions)
    out = udfs.STRATPDBY(cells, "sales", "price", "region")
    assert out[0][:3] == ["region", "price", "partial dependence"]
    assert {r[0] for r in out[1:]} == {"north", "south"}
    out = udfs.STRATPD2(cells, "sales", "price", "region", 4)
    assert out[0] == ["price", "region", "partial dependence", "interaction part", "rows",
                      "thin"]
    assert len(out) == 1 + 4 * 2
    store = cells_from_frame(regions.assign(store=[f"s{i % 300}" for i in range(len(regions))]))
    (cell,) = udfs.STRATPDBY(store, "sales", "price", "store")
    assert cell[0].startswith("STRATPDBY: ") and "at most 12 levels" in cell[0]
    (cell,) = udfs.STRATPD2(cells, "sales", "price", "price")
    assert cell[0].startswith("STRATPD2: ") and "given twice" in cell[0]
    (cell,) = udfs.STRATPD2(cells[:200], "sales", "price", "ads", 12)
    assert "use grid (argument 5 of STRATPD2) = " in cell[0]


@settings(max_examples=4, deadline=None)
@given(scale=st.floats(0.01, 100), shift=st.floats(-1e3, 1e3))
def test_strength_does_not_depend_on_the_targets_units(scale, shift):
    df = _uniform(800, 3, 6)
    df["y"] = df["x0"] * df["x1"] + df["x2"]
    base = sx.interactions(df, "y", random_state=0, min_samples_leaf=20)
    moved = sx.interactions(df.assign(y=df["y"] * scale + shift), "y", random_state=0,
                            min_samples_leaf=20)
    assert list(moved["feature_1"]) == list(base["feature_1"])
    np.testing.assert_allclose(moved["strength"], base["strength"], atol=1e-9)
    np.testing.assert_allclose(moved["size"], base["size"] * scale, rtol=1e-6, atol=1e-9)


# --------------------------------------------------------------------------- the same numbers,
# sooner: the shortcuts of the interaction ranking against the plain computations


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=1, max_size=200))
def test_distinct_values_of_a_sorted_column_are_those_of_np_unique(values):
    from stratpd_xl.engine import _numeric

    x = np.sort(np.array(values, float) / 2)
    fast, plain = _numeric.unique_sorted_x(x), _numeric.unique_x(x)
    np.testing.assert_array_equal(fast.ux, plain.ux)
    np.testing.assert_array_equal(fast.xi, plain.xi)
    assert (fast.by_x is None) == (plain.by_x is None)
    if plain.by_x is not None:
        np.testing.assert_array_equal(fast.by_x, plain.by_x)


@settings(max_examples=80, deadline=None)
@given(st.integers(40, 600), st.integers(2, 40), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_half_strata_curves_from_the_whole_field_are_those_of_their_own_fields(
        n, n_x, min_slopes, seed):
    from stratpd_xl.engine import _numeric

    rng = np.random.default_rng(seed)
    x = np.sort(rng.integers(0, n_x, n) * 0.37)
    y = rng.normal(size=n) * 10.0 ** rng.integers(-2, 3)
    leaf = rng.integers(0, max(n // 15, 1), n)
    field = _numeric.slope_field(x, y, leaf, _numeric.unique_sorted_x(x))
    curve = _numeric.integrate(field, min_slopes)
    if curve is None:
        return
    in_a = (rng.random(int(leaf.max()) + 1) < 0.5)[leaf]  # whole strata
    picks = [p for p in (in_a, ~in_a, np.ones(n, bool)) if p.any()]
    fast = _numeric.grid_curves_of_strata(_numeric.strata_slopes(field, y, leaf), picks,
                                          min_slopes, curve.at)
    for pick, got in zip(picks, fast, strict=True):
        own = _numeric.slope_field(x[pick], y[pick], leaf[pick])
        np.testing.assert_array_equal(got, _numeric.curve_on_grid(own, min_slopes, curve.x))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(-10, 10), min_size=1, max_size=60),
       st.lists(st.floats(-10, 10), min_size=2, max_size=30), st.integers(0, 2**32 - 1))
def test_a_curve_read_at_sorted_points_is_read_as_at_any_points(points, xs, seed):
    from stratpd_xl.engine._groups import _at

    xs = np.unique(np.array(xs))
    values = np.random.default_rng(seed).normal(size=xs.size)
    values[np.random.default_rng(seed).random(xs.size) < 0.2] = np.nan
    points = np.sort(np.array(points))
    np.testing.assert_array_equal(_at(points, xs, values, ascending=True),
                                  _at(points, xs, values))


def test_interactions_two_at_a_time_give_the_serial_numbers_in_order(monkeypatch):
    from stratpd_xl import _backend

    rng = np.random.default_rng(5)
    n = _backend.PARALLEL_ROWS + 1000
    df = _uniform(n, 4, seed=5)
    df["g"] = rng.choice(["a", "b", "c"], n)
    df["y"] = df["x0"] * df["x1"] + df["x2"] + (df["g"] == "b") * df["x3"] + rng.normal(0, .1, n)
    calls = []
    both = sx.interactions(df, "y", random_state=2,
                           progress=lambda done, total, label: calls.append((done, label)))
    steps = [d for d, _ in calls[:-1]]
    assert steps == list(range(len(steps)))  # every step in order, from this thread
    assert calls[-1] == (5, "") and any(" x " in label for _, label in calls)
    monkeypatch.setattr(_backend, "can_start_threads", lambda: False)
    serial = sx.interactions(df, "y", random_state=2)
    pd.testing.assert_frame_equal(both, serial, check_exact=True)
    assert both.iloc[0][["feature_1", "feature_2"]].tolist() in (["x0", "x1"], ["x1", "x0"])
