"""Properties every StratPD result must have, checked on generated data (hypothesis)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stratpd_xl as sx
from stratpd_xl._backend import HAVE_NUMBA
from stratpd_xl.engine import get_backend, set_backend
from tests.synthetic import body_weight

SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def tables(draw):
    """A table with a numeric feature, a few other columns (numeric, discrete, text) and y."""
    n = draw(st.integers(150, 400))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3, 3, n) if draw(st.booleans()) else rng.integers(0, 12, n).astype(float)
    z = rng.normal(0, 1, n)
    k = rng.integers(0, 4, n)
    group = np.array(["north", "south", "east"])[rng.integers(0, 3, n)]
    a, b = draw(st.floats(-5, 5)), draw(st.floats(-5, 5))
    y = a * x + b * x**2 / 3 + 2 * z + k + (group == "east") * 3 + rng.normal(0, 0.5, n)
    return pd.DataFrame({"x": x, "z": z, "k": k, "group": group, "y": y})


def numeric(curve: pd.DataFrame) -> np.ndarray:
    return curve[["x", "pd", "slope", "n_slopes"]].to_numpy(float)


@SETTINGS
@given(tables(), st.floats(-1e4, 1e4))
def test_shifting_y_leaves_pd_unchanged(data, shift):
    base = sx.stratpd(data, "y", "x", random_state=1)
    moved = sx.stratpd(data.assign(y=data["y"] + shift), "y", "x", random_state=1)
    np.testing.assert_allclose(numeric(moved), numeric(base), rtol=1e-6, atol=1e-6)


@SETTINGS
@given(tables(), st.floats(0.01, 1000) | st.floats(-1000, -0.01))
def test_scaling_y_scales_pd(data, scale):
    base = sx.stratpd(data, "y", "x", random_state=1)
    scaled = sx.stratpd(data.assign(y=data["y"] * scale), "y", "x", random_state=1)
    np.testing.assert_allclose(scaled["x"], base["x"])
    np.testing.assert_allclose(scaled["pd"], base["pd"] * scale, rtol=1e-6,
                               atol=1e-9 * abs(scale) * (1 + np.abs(base["pd"]).max()))


@SETTINGS
@given(tables(), st.permutations(["x", "z", "k", "group", "y"]))
def test_renaming_and_reordering_columns_changes_nothing(data, order):
    base = sx.stratpd(data, "y", "x", random_state=2)
    renamed = data[order].rename(columns={"z": "zeta", "k": "count", "group": "region"})
    other = sx.stratpd(renamed, "y", "x", random_state=2)
    np.testing.assert_array_equal(numeric(other), numeric(base))
    cat_base = sx.catstratpd(data, "y", "group", random_state=2)
    cat_other = sx.catstratpd(renamed, "y", "region", random_state=2)
    np.testing.assert_array_equal(cat_other["pd"], cat_base["pd"])


@SETTINGS
@given(tables(), st.integers(0, 1000))
def test_same_random_state_same_result(data, seed):
    a = sx.stratpd(data, "y", "x", random_state=seed, n_trials=3)
    b = sx.stratpd(data, "y", "x", random_state=seed, n_trials=3)
    pd.testing.assert_frame_equal(a, b)


@SETTINGS
@given(tables())
def test_curve_shape(data):
    curve = sx.stratpd(data, "y", "x", random_state=0)
    # Centred on the rows: some point lies at or below 0 and some at or above.
    tol = 1e-9 * (1 + curve["pd"].abs().max())
    assert curve["pd"].min() <= tol and curve["pd"].max() >= -tol
    assert curve["x"].is_monotonic_increasing and curve["x"].is_unique
    assert not curve["pd"].isna().any()
    # Every point but the closing one is backed by enough slopes (at most one per leaf).
    need = min(5, curve.attrs["n_leaves"])
    assert (curve["n_slopes"].iloc[:-1] >= need).all()


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
@SETTINGS
@given(tables(), st.integers(0, 100))
def test_numba_and_numpy_backends_agree(data, seed):
    results = {}
    previous = get_backend()
    try:
        for backend in ("numba", "numpy"):
            set_backend(backend)
            results[backend] = (
                sx.stratpd(data, "y", "x", random_state=seed, n_trials=2),
                sx.catstratpd(data, "y", "group", random_state=seed),
                sx.stratpd(data, "y", "x", random_state=seed, honest=False),
            )
    finally:
        set_backend(previous)
    for a, b in zip(results["numba"], results["numpy"], strict=True):
        pd.testing.assert_frame_equal(a, b)
        assert a.attrs == b.attrs


def test_works_without_numba_installed():
    # A fresh interpreter in which "import numba" fails: the numpy fallback takes over and
    # gives exactly the curve the numba kernels give in this process.
    code = (
        "import json, sys; sys.modules['numba'] = None\n"
        "from tests.synthetic import body_weight\n"
        "import stratpd_xl as sx\n"
        "from stratpd_xl.engine import get_backend\n"
        "assert get_backend() == 'numpy', get_backend()\n"
        "c = sx.stratpd(body_weight(seed=1), 'weight', 'height', random_state=4)\n"
        "print(json.dumps(c['pd'].tolist()))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[1], check=True).stdout
    expected = sx.stratpd(body_weight(seed=1), "weight", "height", random_state=4)
    assert json.loads(out) == expected["pd"].tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2**40), max_size=300), st.sampled_from([1, 7, 5_000]))
def test_cells_and_strata_are_numbered_as_np_unique_numbers_them(values, spread):
    # Dense numbers are counted, sparse ones (beyond a few times the rows) sorted: the same
    # cells, each row's cell and each cell's rows either way.
    from stratpd_xl.engine._categorical import unique_ints

    values = np.array(values, np.int64) % (spread * max(len(values), 1))
    got = unique_ints(values)
    expected = np.unique(values, return_inverse=True, return_counts=True)
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_array_equal(a, b.reshape(-1))
        assert a.dtype == b.dtype
