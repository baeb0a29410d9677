"""Any finite input gives finite answers: huge and tiny magnitudes (hypothesis)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import stratpd_xl as sx


def _data(seed: int, n: int = 200) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3, 3, n)
    z = rng.normal(0, 1, n)
    group = np.array(["a", "b", "c"])[rng.integers(0, 3, n)]
    y = 2 * x + z + (group == "b") * 3 + rng.normal(0, 0.3, n)
    return pd.DataFrame({"x": x, "z": z, "group": group, "y": y})


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), ky=st.integers(-1000, 1015), kx=st.integers(-1000, 1015))
@example(seed=0, ky=0, kx=508)  # the copy check's squares of x overflowed here
def test_scaling_y_and_x_by_any_power_of_two_scales_the_answer_exactly(seed, ky, kx):
    data = _data(seed)
    big = data.assign(y=data["y"] * 2.0**ky, x=data["x"] * 2.0**kx)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow, no invalid value anywhere
        base = sx.stratpd(data, "y", "x", random_state=1)
        got = sx.stratpd(big, "y", "x", random_state=1)
        cat = sx.catstratpd(big, "y", "group", random_state=1)
        ranking = sx.impact(big, "y", random_state=1)
    with np.errstate(over="ignore", under="ignore"):
        base_slope = np.ldexp(base["slope"].to_numpy(), ky - kx)
    # A slope beyond the float range is missing; one below it loses digits (subnormal).
    shown = np.isfinite(base_slope) & (np.abs(base_slope) > np.finfo(float).tiny)
    assert np.array_equal(got["x"], base["x"] * 2.0**kx)
    assert np.array_equal(got["pd"], base["pd"] * 2.0**ky)
    assert np.allclose(got["slope"][shown], base_slope[shown], rtol=1e-12, atol=0)
    base_cat = sx.catstratpd(data, "y", "group", random_state=1)
    assert np.array_equal(cat["pd"], base_cat["pd"] * 2.0**ky)
    assert np.isfinite(ranking["impact"]).all() and np.isfinite(ranking["share"]).all()


def test_a_target_near_the_largest_float_gives_finite_answers():
    data = _data(0)
    data["y"] = data["y"] / data["y"].abs().max() * 8e307  # a rise of 2 max|y| still fits
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        curve = sx.stratpd(data, "y", "x", random_state=0, n_trials=3)
        ranking = sx.impact(data, "y", random_state=0)
    for column in ("pd", "pd_low", "pd_high"):
        assert np.isfinite(curve[column]).all()
    assert np.isfinite(ranking["impact"]).all()
    # 2 per unit of x, in these units: the curve still says so.
    rise = curve["pd"].iloc[-1] - curve["pd"].iloc[0]
    run = curve["x"].iloc[-1] - curve["x"].iloc[0]
    assert math.isclose(rise / run, 2 * 8e307 / _data(0)["y"].abs().max(), rel_tol=0.25)
