"""The engine's public API: inputs it accepts, what it returns, and how it refuses."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

import stratpd_xl as sx
from stratpd_xl import StratPDInputError
from stratpd_xl._backend import HAVE_NUMBA
from stratpd_xl.schema import curve_points
from tests.synthetic import body_weight


@pytest.fixture(scope="module")
def weight():
    return body_weight(n=2000, seed=3)


def test_stratpd_columns_and_attrs(weight):
    curve = sx.stratpd(weight, "weight", "height", random_state=0, max_points=None)
    assert list(curve.columns) == ["x", "pd", "slope", "n_slopes"]
    assert curve.attrs["n_points_full"] == len(curve)
    a = curve.attrs
    assert a["method"] == "StratPD" and a["kind"] == "numeric"
    assert a["target"] == "weight" and a["feature"] == "height"
    assert a["n_rows"] == 2000 and a["n_dropped_missing"] == 0
    assert a["n_used"] + a["n_ignored"] == 2000
    assert a["n_leaves"] > 50
    assert a["params"] == {"min_samples_leaf": 10, "min_slopes_per_x": 5, "n_trials": 1,
                           "random_state": 0, "max_points": None, "honest": True,
                           "adjust": True, "exclude": []}


def test_band_columns_with_trials(weight):
    curve = sx.stratpd(weight, "weight", "height", random_state=0, n_trials=5, max_points=None)
    assert list(curve.columns) == ["x", "pd", "slope", "n_slopes", "pd_low", "pd_high",
                                   "curve_low", "curve_high"]
    assert (curve["pd_low"] <= curve["pd_high"]).all()
    # The simultaneous band contains the pointwise one.
    assert (curve["curve_low"] <= curve["pd_low"]).all()
    assert (curve["pd_high"] <= curve["curve_high"]).all()
    cats = sx.catstratpd(weight, "weight", "sex", random_state=0, n_trials=5)
    assert list(cats.columns) == ["category", "pd", "count", "pd_low", "pd_high",
                                  "curve_low", "curve_high", "few_rows"]


def test_a_curve_with_many_values_is_summarised_by_points_of_the_full_curve(weight):
    full = sx.stratpd(weight, "weight", "height", random_state=0, n_trials=5, max_points=None)
    short = sx.stratpd(weight, "weight", "height", random_state=0, n_trials=5, max_points=40)
    assert len(full) > 40 and len(short) <= 40
    assert list(short.columns) == ["x", "pd", "slope", "n_slopes", "pd_low", "pd_high",
                                   "curve_low", "curve_high", "n_x"]
    assert short.attrs["n_points_full"] == len(full)
    # Every kept point is a point of the full-resolution curve, band included: first, last.
    on_full = full.set_index("x").loc[short["x"]]
    for column in ("pd", "pd_low", "pd_high", "curve_low", "curve_high"):
        np.testing.assert_array_equal(on_full[column].to_numpy(), short[column].to_numpy())
    assert short["x"].iloc[0] == full["x"].iloc[0] and short["x"].iloc[-1] == full["x"].iloc[-1]
    # Each point summarises the points up to the next: counts add up, slopes are their average.
    assert short["n_x"].sum() == len(full)
    rise = np.diff(short["pd"].to_numpy())
    with np.errstate(all="ignore"):
        pd_full = sx.stratpd(weight, "weight", "height", random_state=0, max_points=None)
        pd_short = sx.stratpd(weight, "weight", "height", random_state=0, max_points=40)
    expected = np.diff(pd_short["pd"].to_numpy()) / np.diff(pd_short["x"].to_numpy(float))
    np.testing.assert_allclose(pd_short["slope"].to_numpy()[:-1], expected)
    assert np.isnan(pd_short["slope"].iloc[-1])
    spans = np.split(pd_full["n_slopes"].to_numpy(), np.cumsum(pd_short["n_x"].to_numpy())[:-1])
    assert [s.min() for s in spans] == pd_short["n_slopes"].tolist()
    assert rise.size == len(short) - 1


def test_points_are_placed_where_rows_are_and_over_the_whole_range():
    rng = np.random.default_rng(0)
    n = 20_000
    # 90 % of the rows in [0, 1], a sparse tail up to 100.
    x = np.r_[rng.uniform(0, 1, int(0.9 * n)), rng.uniform(1, 100, n - int(0.9 * n))]
    data = pd.DataFrame({"x": x, "z": rng.normal(size=n)})
    data["y"] = np.log1p(data["x"]) + data["z"] + rng.normal(scale=0.1, size=n)
    curve = sx.stratpd(data, "y", "x", random_state=0, max_points=100)
    assert len(curve) <= 100
    dense = (curve["x"] <= 1).mean()
    assert 0.4 <= dense <= 0.7  # about half the points follow the rows ...
    gaps = np.diff(curve["x"].to_numpy())
    assert gaps.max() < 3 * 99 / 50  # ... and the other half cover the range evenly


def test_few_distinct_values_keep_every_point(weight):
    data = weight.assign(rating=np.round(weight["education"]) % 7)
    curve = sx.stratpd(data, "weight", "rating", random_state=0)
    assert "n_x" not in curve.columns
    assert len(curve) == curve.attrs["n_points_full"] == data["rating"].nunique()


def test_missing_values_stay_out_of_the_slopes_and_get_a_row_of_their_own(weight):
    data = weight.copy()
    data.loc[::10, "height"] = np.nan  # 200 rows without the feature
    data.loc[5::50, "weight"] = np.nan  # 40 rows without the target
    data.loc[7::20, "education"] = np.nan  # gaps in another column still stratify
    curve = sx.stratpd(data, "weight", "height", random_state=0)
    assert curve.attrs["n_dropped_missing"] == 200 + 40
    assert not curve["pd"].isna().any()
    points = curve_points(curve)
    slope = np.polyfit(points["x"], points["pd"], 1)[0]
    assert slope == pytest.approx(10, abs=0.1)
    # The blank heights (the 200 rows with a target: row 5 of every 50 has none, and
    # those are never rows 0, 10, ...) are one row, last; blank at random, they sit at
    # the curve's typical level.
    assert curve["missing"].tolist() == [False] * len(points) + [True]
    blank = curve.iloc[-1]
    assert np.isnan(blank["x"]) and np.isnan(blank["slope"])
    facts = curve.attrs["missing"]
    assert facts["rows"] == facts["compared"] == 200
    assert facts["low"] < blank["pd"] == facts["pd"] < facts["high"]
    assert facts["low"] < 0 < facts["high"]


def test_integer_feature_keeps_its_type_and_closing_point():
    rng = np.random.default_rng(0)
    n = 3000
    size = rng.integers(1, 6, n)  # a discrete feature: 1..5
    other = rng.normal(0, 1, n)
    data = pd.DataFrame({"size": size, "other": other, "y": 3 * size + other})
    curve = sx.stratpd(data, "y", "size", random_state=0)
    assert curve["x"].dtype == np.int64
    # The largest value has no forward difference of its own but closes the curve.
    assert list(curve["x"]) == [1, 2, 3, 4, 5]
    # Centred on the rows (about a fifth at each size), so the middle size sits near 0.
    np.testing.assert_allclose(curve["pd"] - curve["pd"].iloc[0], [0, 3, 6, 9, 12], atol=0.2)
    assert abs(curve["pd"].iloc[2]) < 0.3
    assert np.isnan(curve["slope"].iloc[-1])


def test_datetime_feature_returns_dates():
    rng = np.random.default_rng(1)
    n = 2000
    day = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 365, n), unit="D")
    other = rng.normal(0, 1, n)
    y = 0.1 * (day - day.min()).days.to_numpy() + other
    data = pd.DataFrame({"day": day, "other": other, "y": y})
    curve = sx.partial_dependence(data, "y", "day", random_state=0)
    assert pd.api.types.is_datetime64_any_dtype(curve["x"])
    per_day = np.polyfit((curve["x"] - curve["x"].iloc[0]).dt.days, curve["pd"], 1)[0]
    assert per_day == pytest.approx(0.1, abs=0.01)


@pytest.mark.parametrize("make", [
    lambda s: s.map({"F": True, "M": False}),
    lambda s: s.astype("category"),
    lambda s: s.astype("string"),
    lambda s: s.astype(object),
])
def test_categorical_dtypes_need_no_encoding(weight, make):
    data = weight.assign(sex=make(weight["sex"]), pregnant=weight["pregnant"].astype(bool))
    effects = sx.partial_dependence(data, "weight", "pregnant", random_state=0)
    assert effects.attrs["method"] == "CatStratPD"
    assert list(effects["category"]) == [False, True]
    assert effects["pd"].iloc[1] == pytest.approx(40, abs=0.5)


def test_category_order_follows_pandas_categories():
    rng = np.random.default_rng(2)
    n = 3000
    level = pd.Categorical(rng.choice(["low", "mid", "high"], n),
                           categories=["low", "mid", "high"], ordered=True)
    other = rng.normal(0, 1, n)
    y = pd.Series(level).map({"low": 0.0, "mid": 5.0, "high": 7.0}).to_numpy() + other
    effects = sx.catstratpd(pd.DataFrame({"level": level, "other": other, "y": y}), "y",
                            "level", random_state=0)
    assert list(effects["category"]) == ["low", "mid", "high"]
    np.testing.assert_allclose(effects["pd"], [0, 5, 7], atol=0.3)
    assert effects.attrs["baseline"] == "low"


def test_many_categories_are_linked_through_shared_strata():
    rng = np.random.default_rng(4)
    n, k = 60_000, 300
    cat = rng.integers(0, k, n)
    effect = rng.normal(0, 10, k)
    other = rng.uniform(0, 10, n)
    y = effect[cat] + 2 * other + rng.normal(0, 1, n)
    data = pd.DataFrame({"cat": pd.Categorical(cat), "other": other, "y": y})
    result = sx.catstratpd(data, "y", "cat", random_state=0)
    est = result.set_index("category")["pd"]
    truth = pd.Series(effect - effect[int(est.index[0])], index=range(k))[est.index]
    assert len(est) == k
    assert np.sqrt(np.mean((est.to_numpy() - truth.to_numpy()) ** 2)) < 0.5


def test_impact_ranks_features_by_effect(weight):
    ranking = sx.impact(weight, "weight", random_state=0)
    assert list(ranking.columns) == ["feature", "kind", "impact", "share", "rows", "thin",
                                     "evidence"]
    assert ranking["feature"].iloc[0] == "height"
    assert ranking["impact"].is_monotonic_decreasing
    assert ranking["share"].sum() == pytest.approx(1)
    kinds = dict(zip(ranking["feature"], ranking["kind"], strict=True))
    assert kinds == {"height": "numeric", "pregnant": "numeric", "education": "numeric",
                     "sex": "categorical"}
    # Pregnancy moves half the women by 40: mean |pd - mean| is about 40 * 2 * 0.25 * 0.75.
    pregnant = ranking.set_index("feature").loc["pregnant", "impact"]
    assert pregnant == pytest.approx(40 * 2 * 0.25 * 0.75, rel=0.1)


def test_analyse_reports_progress_and_keeps_curves(weight):
    calls = []
    result = sx.analyse(weight, "weight", ["height", "sex"], random_state=0,
                        progress=lambda done, total, name: calls.append((done, total, name)))
    assert calls == [(0, 2, "height"), (1, 2, "sex"), (2, 2, "")]
    assert set(result.curves) == {"height", "sex"}
    pd.testing.assert_frame_equal(result.curves["height"],
                                  sx.stratpd(weight, "weight", "height", random_state=0))


def test_analyse_skips_a_feature_it_cannot_estimate(weight):
    data = weight.assign(constant=1.0)
    result = sx.analyse(data, "weight", random_state=0)
    assert "constant" in result.skipped and "constant" not in result.curves
    assert "constant" not in set(result.impact["feature"])


@pytest.mark.parametrize(("call", "message"), [
    (lambda d: sx.stratpd(d, "weight", "heigth"),
     'feature column "heigth" not found; columns are: sex, pregnant, height'),
    (lambda d: sx.stratpd(d, "wieght", "height"), 'target column "wieght" not found'),
    (lambda d: sx.stratpd(d.assign(city=np.resize(["a", "b", "c"], len(d))), "city", "height"),
     'target "city" is not numeric and has 3 different values ("a", "b", "c")'),
    (lambda d: sx.stratpd(d, "sex", "height", positive=2),
     'positive value "2" does not occur in target "sex"; its values are: "F", "M"'),
    (lambda d: sx.stratpd(d, "weight", "sex"), "use catstratpd"),
    (lambda d: sx.stratpd(d, "weight", "weight"), "is the target"),
    (lambda d: sx.stratpd(d.head(15), "weight", "height"),
     "only 15 rows have values in both"),
    (lambda d: sx.stratpd(d, "weight", "height", min_samples_leaf=0),
     "min_samples_leaf must be a whole number between 1 and 1,000,000"),
    (lambda d: sx.stratpd(d, "weight", "height", n_trials=2.5), "n_trials must be a whole"),
])
def test_bad_input_gets_one_sentence(weight, call, message):
    with pytest.raises(StratPDInputError, match=None) as info:
        call(weight)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_few_strata_still_give_a_curve():
    # One yes/no column besides x makes four honest strata: fewer than min_slopes_per_x=5,
    # so the threshold is capped at the number of strata rather than dropping every point.
    rng = np.random.default_rng(5)
    n = 300
    area = rng.uniform(30, 150, n)
    garden = rng.integers(0, 2, n).astype(bool)
    data = pd.DataFrame({"area": area, "garden": garden,
                         "price": 2 * area + 20 * garden + rng.normal(0, 1, n)})
    curve = sx.stratpd(data, "price", "area", random_state=0)
    assert curve.attrs["n_leaves"] < 5
    assert len(curve) > 100
    assert np.polyfit(curve["x"], curve["pd"], 1)[0] == pytest.approx(2, abs=0.1)


def test_warns_when_other_columns_nearly_determine_the_feature():
    rng = np.random.default_rng(6)
    n = 4000
    size = rng.uniform(1, 10, n)
    data = pd.DataFrame({
        "size": size,
        "size_cm": size * 2.54 + rng.normal(0, 0.01, n),  # the same thing in other units
        "age": rng.uniform(0, 50, n),
    })
    data["price"] = 3 * data["size"] - 0.5 * data["age"] + rng.normal(0, 1, n)
    twin = sx.stratpd(data, "price", "size", random_state=0)
    assert twin.attrs["within_strata_share"] < 0.1
    assert len(twin.attrs["warnings"]) == 1
    assert "leave out the columns that duplicate it" in twin.attrs["warnings"][0]
    alone = sx.stratpd(data.drop(columns=["size_cm"]), "price", "size", random_state=0)
    assert alone.attrs["warnings"] == [] and alone.attrs["within_strata_share"] > 0.5

    data["region"] = np.where(data["age"] > 25, "north", "south")  # a function of age
    effects = sx.catstratpd(data, "price", "region", random_state=0)
    assert effects.attrs["warnings"] and "one category" in effects.attrs["warnings"][0]


def _large_table() -> pd.DataFrame:
    """Above the size where analyse works on two features at a time."""
    from stratpd_xl._backend import PARALLEL_ROWS

    data = body_weight(n=PARALLEL_ROWS + 2000, seed=4)
    data.loc[data.index[::7], "height"] = np.nan  # another row set than the others' design
    return data.assign(constant=1.0)


@pytest.mark.parametrize("backend", ["numba", "numpy"] if HAVE_NUMBA else ["numpy"])
def test_analyse_on_two_features_at_a_time_gives_the_serial_numbers(monkeypatch, backend):
    # numba also grows each feature's two trees in threads; numpy grows them in one pass.
    from stratpd_xl import _backend

    monkeypatch.setattr(_backend, "_mode", backend)
    data = _large_table()
    calls = []
    both = sx.analyse(data, "weight", random_state=3,
                      progress=lambda done, total, name: calls.append((done, name)))
    names = [c for c in data.columns if c != "weight"]
    assert calls == [*enumerate(names), (len(names), "")]  # in order, from this thread
    monkeypatch.setattr(_backend, "can_start_threads", lambda: False)
    serial = sx.analyse(data, "weight", random_state=3)
    pd.testing.assert_frame_equal(both.impact, serial.impact, check_exact=True)
    assert both.skipped == serial.skipped and "constant" in both.skipped
    assert both.curves.keys() == serial.curves.keys()
    for name, curve in serial.curves.items():
        pd.testing.assert_frame_equal(both.curves[name], curve, check_exact=True)


def test_analyse_stops_starting_features_when_progress_raises(monkeypatch):
    from stratpd_xl.engine import api

    data = _large_table()
    started = []
    run = api._run

    def counting_run(*args, **kwargs):
        started.append(args[1])
        return run(*args, **kwargs)

    monkeypatch.setattr(api, "_run", counting_run)

    def cancel(done, total, name):
        raise KeyboardInterrupt  # what a user's cancel looks like to the engine

    with pytest.raises(KeyboardInterrupt):
        sx.analyse(data, "weight", random_state=3, progress=cancel)
    # Nothing runs on after the call: the features under way finished, the rest never start.
    assert not [t for t in threading.enumerate() if t.name.startswith("ThreadPoolExecutor")]
    assert len(started) < len(data.columns) - 1


@pytest.mark.parametrize("column", ["y", "x", "z"])
def test_an_infinite_number_is_a_missing_value(column):
    # Not a LinAlgError from the linear fit, nor a curve of NaN: the row's value is missing.
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"x": rng.uniform(size=600), "z": rng.uniform(size=600)})
    data["y"] = 3 * data["x"] + data["z"] + rng.normal(0, 0.05, 600)
    with_inf, with_nan = data.copy(), data.copy()
    with_inf.loc[[3, 40], column] = [np.inf, -np.inf]
    with_nan.loc[[3, 40], column] = np.nan
    got = sx.stratpd(with_inf, "y", "x", random_state=0)
    pd.testing.assert_frame_equal(got, sx.stratpd(with_nan, "y", "x", random_state=0))
    assert got["pd"].notna().all()
    pd.testing.assert_frame_equal(sx.impact(with_inf, "y", random_state=0),
                                  sx.impact(with_nan, "y", random_state=0))


def test_engine_calls_use_one_blas_thread_and_give_the_setting_back(monkeypatch):
    # OpenBLAS's idle threads spin: on a busy machine they cost more CPU than the call.
    from threadpoolctl import threadpool_info, threadpool_limits

    from stratpd_xl.engine import _adjust

    data = body_weight(n=600, seed=2)
    sx.analyse(data, "weight", random_state=0)  # loads numpy's and scipy's BLAS
    if not [i for i in threadpool_info() if i["user_api"] == "blas"]:
        pytest.skip("numpy has no BLAS that threadpoolctl can see here")
    seen = []
    solve = _adjust._solve

    def solve_counting(*args, **kwargs):
        seen.append({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})
        return solve(*args, **kwargs)

    monkeypatch.setattr(_adjust, "_solve", solve_counting)
    with threadpool_limits(2, user_api="blas"):
        sx.analyse(data, "weight", random_state=0)
        sx.stratpd(data, "weight", "height", random_state=0)
        after = {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}
    assert seen and all(s == {1} for s in seen)
    assert after == {2}
