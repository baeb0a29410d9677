"""The engine's four stages (docs/engine.md): the strata fitted once, the rows summed chunk by
chunk, the sums added in any order, the curve finished from them; the same numbers as the
in-memory call."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stratpd_xl as sx
from stratpd_xl._backend import HAVE_NUMBA
from stratpd_xl.engine import get_backend, set_backend
from stratpd_xl.engine.stages import (
    Partial,
    Strata,
    analyse,
    finish,
    fit_strata,
    pass_chunk,
    ranked_features,
)
from stratpd_xl.errors import StratPDInputError

SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def sales(n: int = 3000, seed: int = 3) -> pd.DataFrame:
    """A curved effect of x1 beside a correlated x2 with gaps, a text column and rows
    without a target."""
    rng = np.random.default_rng(seed)
    x1 = rng.uniform(0, 10, n)
    x2 = x1 + rng.normal(0, 2, n)
    region = rng.choice(["north", "south", "east", "west"], n)
    y = x1**2 + 3 * x2 + (region == "east") * 5 + rng.normal(0, 3, n)
    data = pd.DataFrame({"y": y, "x1": np.round(x1, 1), "x2": x2,
                         "x3": rng.normal(size=n), "region": region})
    data.loc[rng.random(n) < 0.1, "x2"] = np.nan
    data.loc[rng.random(n) < 0.05, "y"] = np.nan
    return data


def chunks(data: pd.DataFrame, size: int) -> list[pd.DataFrame]:
    return [data.iloc[i:i + size] for i in range(0, len(data), size)]


def assert_same_curve(got: pd.DataFrame, want: pd.DataFrame, tol: float) -> None:
    pd.testing.assert_frame_equal(got, want, check_exact=tol == 0, rtol=tol, atol=tol)
    for name in ("n_rows", "n_used", "n_dropped_missing", "n_ignored", "n_leaves",
                 "adjusted", "adjust_note", "warnings"):
        assert got.attrs[name] == want.attrs[name], name
    for name in ("change", "swing"):
        assert got.attrs["rise"][name] == pytest.approx(want.attrs["rise"][name],
                                                         rel=tol, abs=tol)


@pytest.mark.parametrize("kw", [{}, {"n_trials": 4}, {"adjust": False, "max_points": 20}])
def test_one_chunk_is_the_in_memory_curve_to_the_bit(kw):
    data = sales()
    want = sx.stratpd(data, "y", "x1", **kw)
    strata = fit_strata(data, "y", "x1", **kw)
    assert_same_curve(finish(strata, pass_chunk(strata, data)), want, 0)


@pytest.mark.parametrize("kw", [{}, {"n_trials": 3}, {"adjust": False}])
def test_chunks_in_any_order_give_the_in_memory_curve(kw):
    # The strata travel to the workers pickled, without the sample's typed rows.
    data = sales()
    want = sx.stratpd(data, "y", "x1", **kw)
    strata = pickle.loads(pickle.dumps(fit_strata(data, "y", "x1", **kw)))
    parts = [pass_chunk(strata, c) for c in chunks(data, 700)]
    assert_same_curve(finish(strata, sum(parts[::-1])), want, 1e-12)


def test_a_yes_no_target_through_the_stages():
    rng = np.random.default_rng(7)
    n = 4000
    base = rng.normal(size=n)
    others = {f"z{j}": 0.7 * base + 0.7 * rng.normal(size=n) for j in range(4)}
    x = np.round(base + 0.5 * rng.normal(size=n), 1)
    logit = 0.8 * x + sum(others.values()) * 0.6
    data = pd.DataFrame({"churn": np.where(rng.random(n) < 1 / (1 + np.exp(-logit)),
                                           "yes", "no"), "x": x, **others})
    want = sx.stratpd(data, "churn", "x")
    assert want.attrs["adjusted"] and want.attrs["units"]
    strata = fit_strata(data, "churn", "x")
    got = finish(strata, sum(pass_chunk(strata, c) for c in chunks(data, 999)))
    assert_same_curve(got, want, 1e-12)
    assert got.attrs["positive"] == "yes"


@st.composite
def cuts(draw):
    """Chunk boundaries of a 1,200-row table and an order to add the chunks in."""
    edges = sorted(draw(st.sets(st.integers(1, 1199), max_size=12)))
    bounds = list(zip([0, *edges], [*edges, 1200], strict=True))
    return draw(st.permutations(bounds))


FIXED = sales(1200, seed=11)
FIXED_STRATA = fit_strata(FIXED, "y", "x1")
FIXED_CURVE = finish(FIXED_STRATA, pass_chunk(FIXED_STRATA, FIXED))


@SETTINGS
@given(cuts())
def test_the_order_and_cut_of_the_chunks_do_not_matter(bounds):
    parts = [pass_chunk(FIXED_STRATA, FIXED.iloc[a:b]) for a, b in bounds]
    total = sum(parts)
    assert_same_curve(finish(FIXED_STRATA, total), FIXED_CURVE, 1e-12)
    # Two partials add the same either way round, to the bit.
    if len(parts) > 1:
        ab, ba = parts[0] + parts[1], parts[1] + parts[0]
        assert np.array_equal(ab.cell_key, ba.cell_key)
        assert np.array_equal(ab.cell_sums, ba.cell_sums)
        assert np.array_equal(ab.leaf_first, ba.leaf_first)


def test_a_running_total_adds_every_part_into_itself_to_the_bit():
    # A pass adds each chunk into its total in place; the sums are every cell's, taken in
    # the order the chunks came, and the parts added stay as they were.
    parts = [pass_chunk(FIXED_STRATA, c) for c in chunks(FIXED, 150)]
    before = pickle.loads(pickle.dumps(parts))
    total = parts[0] + parts[1]
    for part in parts[2:]:
        total += part
    keys, where = np.unique(np.concatenate([p.cell_key for p in parts]), return_inverse=True)
    assert np.array_equal(total.cell_key, keys)
    assert np.array_equal(total.cell_rows, np.bincount(
        where, weights=np.concatenate([p.cell_rows for p in parts])).astype(np.int64))
    for row in range(total.cell_sums.shape[0]):
        assert np.array_equal(total.cell_sums[row], np.bincount(
            where, weights=np.concatenate([p.cell_sums[row] for p in parts])))
    leaves, at = np.unique(np.concatenate([p.leaf_key for p in parts]), return_inverse=True)
    first = np.full(leaves.size, np.iinfo(np.int64).max)
    np.minimum.at(first, at, np.concatenate([p.leaf_first for p in parts]))
    assert np.array_equal(total.leaf_key, leaves) and np.array_equal(total.leaf_first, first)
    assert (total.n_rows, total.y_n) == (sum(p.n_rows for p in parts), sum(p.y_n for p in parts))
    for part, was in zip(parts, before, strict=True):
        assert np.array_equal(part.cell_key, was.cell_key)
        assert np.array_equal(part.cell_sums, was.cell_sums)
    assert_same_curve(finish(FIXED_STRATA, total), FIXED_CURVE, 1e-12)


def test_a_partial_adds_up_its_rows():
    parts = [pass_chunk(FIXED_STRATA, c) for c in chunks(FIXED, 500)]
    total = sum(parts)
    assert isinstance(total, Partial)
    assert total.n_rows == len(FIXED)
    y = FIXED["y"].to_numpy()
    used = ~np.isnan(y) & FIXED["x1"].notna().to_numpy()
    assert total.y_n == used.sum() == total.cell_rows.sum()
    assert total.n_missing == len(FIXED) - used.sum()
    scale = FIXED_STRATA.facts.y_scale
    assert total.y_sum * scale == pytest.approx(y[used].sum(), rel=1e-12)
    assert np.sqrt(total.y_m2 / total.y_n) * scale == pytest.approx(y[used].std(), rel=1e-12)
    # Each stratum's first row is the smallest id among its rows, wherever they were read.
    assert total.leaf_first.min() == FIXED.index[used][0]


@pytest.mark.parametrize("adjust", [True, False])
def test_strata_from_a_sample_place_the_other_rows_with_the_trees(adjust):
    data = sales(6000, seed=5)
    sample = data.sample(2500, random_state=1).sort_index()
    strata = pickle.loads(pickle.dumps(
        fit_strata(sample, "y", "x1", n_rows=len(data), adjust=adjust)))
    assert isinstance(strata, Strata) and not strata.exact
    assert strata.adjusted == adjust
    got = finish(strata, sum(pass_chunk(strata, c) for c in chunks(data, 1000)))
    assert got.attrs["n_rows"] == len(data)
    assert got.attrs["n_used"] > len(sample)
    # The truth is x1^2 + 3 x2 with x2 = x1 + noise: a slope of 2 x1 + 3 (less x2's part
    # where the adjustment takes it out).
    inside = (got["x"] > 1) & (got["x"] < 9)
    slope = np.polyfit(got.loc[inside, "x"], got.loc[inside, "pd"], 2)
    assert slope[0] == pytest.approx(1.0, abs=0.25)


def test_the_design_gives_other_rows_the_part_the_sample_got():
    # Replayed on the sample's own rows (gaps filled along x, pooled categories, hinges),
    # the design fixed in stage 1 gives the part stage 1 computed.
    data = sales(4000, seed=8)
    data["rare"] = np.where(np.arange(len(data)) % 200 == 0, "seldom", "often")
    strata = fit_strata(data, "y", "x1", n_rows=10 * len(data))
    assert strata.adjusted and strata.design is not None
    rows = data.loc[strata.sample_ids]
    x = rows["x1"].to_numpy() / strata.x_scale
    part = strata.design.part(rows, x)
    np.testing.assert_allclose(part, strata.sample_part, rtol=0,
                               atol=1e-9 * np.abs(strata.sample_part).max())


def test_bad_rows_are_named():
    data = sales(800)
    with pytest.raises(StratPDInputError, match="row numbers"):
        fit_strata(data.set_index(data.index.astype(str)), "y", "x1")
    strata = fit_strata(data.iloc[:500], "y", "x1")
    with pytest.raises(StratPDInputError, match="not in the sample"):
        pass_chunk(strata, data.iloc[400:])
    with pytest.raises(StratPDInputError, match="n_trials=1"):
        fit_strata(data.iloc[:500], "y", "x1", n_rows=800, n_trials=5)
    with pytest.raises(StratPDInputError, match='no column "region"'):
        pass_chunk(strata, data.drop(columns="region"))


def quality(n: int = 4000, seed: int = 11) -> pd.DataFrame:
    """A category whose effect is masked by a correlated area, and a rare category."""
    rng = np.random.default_rng(seed)
    q = rng.choice(["Ex", "Gd", "TA", "Fa", "Po"], n, p=[.1, .3, .5, .095, .005])
    score = pd.Series(q).map({"Ex": 4, "Gd": 3, "TA": 2, "Fa": 1, "Po": 0}).to_numpy()
    area = rng.uniform(50, 300, n) + 20 * score
    z = area / 100 + rng.normal(size=n)
    price = 1000 * area + 20000 * score + 5000 * z + rng.normal(0, 5000, n)
    data = pd.DataFrame({"price": price, "area": area, "q": q, "z": z})
    data.loc[rng.random(n) < 0.08, "z"] = np.nan
    return data


def assert_same_effects(got: pd.DataFrame, want: pd.DataFrame, tol: float) -> None:
    pd.testing.assert_frame_equal(got, want, check_exact=tol == 0, rtol=tol, atol=tol)
    for name in ("n_rows", "n_used", "n_dropped_missing", "n_ignored", "n_leaves", "baseline",
                 "adjusted", "adjust_note", "warnings", "categories_without_estimate"):
        assert got.attrs[name] == want.attrs[name], name
    assert got.attrs["contrast"]["change"] == pytest.approx(
        want.attrs["contrast"]["change"], rel=tol, abs=tol)


@pytest.mark.parametrize("kw", [{}, {"n_trials": 4}, {"adjust": False}])
def test_category_effects_through_the_stages(kw):
    data = quality()
    want = sx.catstratpd(data, "price", "q", **kw)
    strata = fit_strata(data, "price", "q", **kw)
    assert strata.kind == "categorical"
    assert_same_effects(finish(strata, pass_chunk(strata, data)), want, 0)
    strata = pickle.loads(pickle.dumps(strata))
    parts = [pass_chunk(strata, c) for c in chunks(data, 650)]
    assert_same_effects(finish(strata, sum(parts[::-1])), want, 1e-9)


def test_a_cells_squares_merge_across_chunks():
    # The plain comparison's covariance (the order check) rests on each cell's squares
    # about its mean: merged across chunks they are the whole cell's.
    data = quality(1500, seed=2)
    strata = fit_strata(data, "price", "q", kind="categorical")
    whole = pass_chunk(strata, data)
    merged = sum(pass_chunk(strata, c) for c in chunks(data, 100))
    order = np.argsort(merged.cell_key)
    np.testing.assert_array_equal(merged.cell_key[order], whole.cell_key)
    np.testing.assert_allclose(merged.cell_m2[order], whole.cell_m2, rtol=1e-9)


def test_category_strata_from_a_sample():
    data = quality(8000, seed=4)
    sample = data.sample(3000, random_state=2).sort_index()
    strata = fit_strata(sample, "price", "q", n_rows=len(data))
    assert strata.adjusted and strata.design is not None
    rows = data.loc[strata.sample_ids]
    codes = np.asarray(strata.categories.get_indexer(rows["q"].astype(object)))
    np.testing.assert_allclose(strata.design.part(rows, codes), strata.sample_part,
                               atol=1e-9 * np.abs(strata.sample_part).max())
    got = finish(strata, sum(pass_chunk(strata, c) for c in chunks(data, 2000)))
    want = sx.catstratpd(data, "price", "q")
    assert got.attrs["n_rows"] == len(data)
    effect = dict(zip(got["category"], got["pd"], strict=True))
    truth = dict(zip(want["category"], want["pd"], strict=True))
    # Ex is 40,000 above Fa in truth; the sampled strata find about the same as all rows.
    assert effect["Ex"] - effect["Fa"] == pytest.approx(truth["Ex"] - truth["Fa"], rel=0.1)


def test_an_impact_ranking_from_sums():
    # One pass of chunks for every feature; the ranking of sums is the in-memory one (each
    # x bin or category weighted by its rows instead of row by row: equal to rounding).
    data = sales(2500, seed=9).assign(region=lambda d: d["region"].where(d.index % 7 > 0))
    data["noise"] = np.random.default_rng(1).normal(size=len(data))
    # Rows without x2 give x2's curve a row of their own, counted in the in-memory impact
    # (engine/_missing.py), which the pass of chunks does not sum yet: compared on the rows
    # that have it (region's blanks, a category of their own, are in both).
    data = data[data["x2"].notna()].reset_index(drop=True)
    want = sx.analyse(data, "y")
    names = [c for c in data.columns if c != "y"]
    strata = [fit_strata(data, "y", f) for f in names]
    sums = [sum(pass_chunk(s, c) for c in chunks(data, 800)) for s in strata]
    ranking, curves, skipped = analyse(strata, sums)
    got = ranking.drop(columns=["impact", "share"])
    pd.testing.assert_frame_equal(got, want.impact.drop(columns=["impact", "share"]))
    np.testing.assert_allclose(ranking["impact"], want.impact["impact"], rtol=1e-9)
    np.testing.assert_allclose(ranking["share"], want.impact["share"], rtol=1e-9)
    for name in ("target", "n_rows", "params", "skipped", "left_out", "warnings"):
        assert ranking.attrs[name] == want.impact.attrs[name], name
    assert skipped == want.skipped and curves.keys() == want.curves.keys()
    assert_same_effects(curves["region"], want.curves["region"], 1e-9)


def test_a_band_from_the_strata():
    # For input larger than the sample: groups of strata left out in turn, from the sums.
    # Narrower than re-grown halves (the trees' own variability is not in it) but of
    # the same size, and the same whatever the chunks.
    data = sales(6000, seed=5)
    halves = sx.stratpd(data, "y", "x1", n_trials=10)
    strata = fit_strata(data, "y", "x1", n_trials=10, band="strata")
    one = finish(strata, pass_chunk(strata, data))
    got = finish(strata, sum(pass_chunk(strata, c) for c in chunks(data, 1500)))
    assert_same_curve(got, one, 1e-9)
    np.testing.assert_allclose(got["pd"], halves["pd"], rtol=1e-12, atol=1e-9)
    ratio = (got["pd_high"] - got["pd_low"]).mean() / (halves["pd_high"]
                                                       - halves["pd_low"]).mean()
    assert 0.6 < ratio < 1.1
    assert (got["curve_high"] - got["curve_low"] >= got["pd_high"] - got["pd_low"]).all()
    assert "groups of the strata" in got.attrs["band"] and "band" not in halves.attrs
    assert got.attrs["rise"]["low"] < got.attrs["rise"]["change"] < got.attrs["rise"]["high"]
    sample = data.sample(2000, random_state=3).sort_index()
    with pytest.raises(StratPDInputError, match='band="strata"'):
        fit_strata(sample, "y", "x1", n_rows=len(data), n_trials=10)
    strata = fit_strata(sample, "y", "x1", n_rows=len(data), n_trials=10, band="strata")
    got = finish(strata, sum(pass_chunk(strata, c) for c in chunks(data, 1500)))
    assert (got["pd_low"] <= got["pd"]).all() and (got["pd"] <= got["pd_high"]).all()


def test_a_band_from_the_strata_of_categories():
    data = quality(6000)
    strata = fit_strata(data, "price", "q", n_trials=10, band="strata")
    got = finish(strata, sum(pass_chunk(strata, c) for c in chunks(data, 2500)))
    halves = sx.catstratpd(data, "price", "q", n_trials=10)
    np.testing.assert_allclose(got["pd"], halves["pd"], rtol=1e-9)
    width = (got["pd_high"] - got["pd_low"]).to_numpy()[1:]  # the baseline has none
    assert (width > 0).all()
    assert ((got["pd_low"] <= got["pd"]) & (got["pd"] <= got["pd_high"])).all()
    assert "low" in got.attrs["contrast"] and "band" in got.attrs
    with pytest.raises(StratPDInputError, match="band must be"):
        fit_strata(data, "price", "q", band="bootstrap")


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
def test_the_pass_gives_the_same_sums_on_both_backends():
    # numba orders a chunk's rows by two counting sorts, numpy by a stable argsort, and
    # each places rows in the trees with its own kernel: the strata fitted once (as a
    # cluster's workers get them), the sums are the same to the bit.
    data = sales(3000, seed=4)
    sample = data.sample(1200, random_state=5).sort_index()
    previous = get_backend()
    found = {}
    try:
        set_backend("numba")
        strata = fit_strata(sample, "y", "x1", n_rows=len(data))
        for backend in ("numba", "numpy"):
            set_backend(backend)
            total = sum(pass_chunk(strata, c) for c in chunks(data, 1000))
            found[backend] = (total, finish(strata, total))
        # Strata fitted on either backend number their trees' nodes differently; the
        # finish labels the strata by their first row, so the curve is the same.
        set_backend("numpy")
        numpy_strata = fit_strata(sample, "y", "x1", n_rows=len(data))
        numpy_curve = finish(numpy_strata, sum(pass_chunk(numpy_strata, c)
                                               for c in chunks(data, 1000)))
    finally:
        set_backend(previous)
    (a, curve_a), (b, curve_b) = found["numba"], found["numpy"]
    for name in ("cell_key", "cell_rows", "cell_sums", "leaf_key", "leaf_first"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    pd.testing.assert_frame_equal(curve_a, curve_b, check_exact=True)
    pd.testing.assert_frame_equal(numpy_curve, curve_a, check_exact=True)


def test_the_features_ranked_by_default_are_the_in_memory_rankings():
    data = sales(600).assign(row_id=np.arange(600))
    assert ranked_features(data, "y") == ["x1", "x2", "x3", "region"]  # the row numbers out
    assert ranked_features(data, "y", exclude=["x3"], keep=["row_id"]) == [
        "x1", "x2", "region", "row_id"]
    ranked = sx.impact(data, "y")["feature"].tolist()
    assert sorted(ranked) == sorted(ranked_features(data, "y"))


def test_a_feature_without_effect_stays_flat_when_the_strata_come_from_a_sample():
    # A few rows a cell: two cells in neighbouring x bins may hold rows a hair apart, and
    # their slope must not be integrated over the whole step between the bins (the range of
    # this curve was 2.1; in memory 0.21).
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 10, (8, 6000))
    x[1] = 0.7 * x[0] + 0.3 * x[1]
    data = pd.DataFrame({f"x{i}": x[i] for i in range(8)})
    data["y"] = (2 * np.sin(x[0]) + 0.5 * x[1] + 0.3 * x[2] - 0.2 * x[3]
                 + rng.normal(0, 0.5, 6000))
    strata = fit_strata(data.iloc[:1500], "y", "x4", n_rows=6000)
    assert not strata.exact
    curve = finish(strata, sum(pass_chunk(strata, c) for c in chunks(data, 1000)))
    assert np.ptp(curve["pd"]) < 1.0
    assert np.ptp(sx.stratpd(data, "y", "x4")["pd"]) < 0.3
