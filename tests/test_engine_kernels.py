"""The numba kernels: the numpy fallback gives each one's numbers to the bit, the background
compile covers what analyses call, and the numpy backend answers while numba compiles."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import stratpd_xl as sx
from stratpd_xl import _backend
from stratpd_xl.engine import _adjust, _binning, _numeric, _tree
from tests.synthetic import body_weight

ROOT = Path(__file__).resolve().parents[1]
needs_numba = pytest.mark.skipif(not _backend.HAVE_NUMBA, reason="numba is not installed")

#: Each compiled kernel of the engine and the test here or elsewhere that holds it to the
#: numpy fallback's numbers (kernels called only from another kernel: that one's test).
SAME_NUMBERS = {
    "_grow_numba": "test_engine_tree.py::test_numpy_forest_grows_each_set_the_numba_tree",
    "_scan": "(inside _grow_numba)",
    "_clear": "(inside _grow_numba)",
    "_is_pure": "(inside _grow_numba)",
    "_apply_numba": "test_apply_places_rows_in_the_same_leaves_on_both_backends",
    "_first_seen": "test_engine_tree.py::test_leaf_labels_are_the_same_from_both_backends",
    "_bin_kernel": "test_numeric_bins_are_the_same_on_both_backends",
    "_counting_order": "test_rows_by_leaf_then_x_are_the_same_permutation_on_both_backends",
    "_leaf_means_kernel": "test_the_adjustment_s_sums_are_the_same_on_both_backends",
    "_within_rows_kernel": "test_the_adjustment_s_sums_are_the_same_on_both_backends",
    "_ods_rows": "test_ods_scan.py::test_the_compiled_scan_declines_or_agrees_with_the_numpy_scan",
    "_xlsx_refs":
        "test_workbook_scan.py::test_the_compiled_scan_declines_or_agrees_with_the_array_scan",
    "_at": "(inside _ods_rows)", "_find": "(inside _ods_rows and _xlsx_refs)",
    "_names_d": "(inside _ods_rows)", "_repeat": "(inside _ods_rows)",
}


@pytest.fixture
def on(monkeypatch):
    """``on(backend)``: the engine on that backend (numba compiled in this thread)."""
    def choose(backend: str) -> None:
        monkeypatch.setattr(_backend, "_mode", backend)
    return choose


@needs_numba
def test_every_kernel_has_a_test_that_the_fallback_gives_its_numbers():
    import stratpd_xl.input._scan_kernels  # noqa: F401 - its kernels register on import

    names = {d.py_func.__name__ for d in _backend.DISPATCHERS}
    assert names - set(SAME_NUMBERS) == set(), "a kernel without its same-numbers test"
    for where in SAME_NUMBERS.values():
        if "::" in where:
            file, test = where.split("::")
            assert f"def {test}(" in (ROOT / "tests" / file).read_text()
        elif where.startswith("test_"):
            assert f"def {where}(" in Path(__file__).read_text()


@needs_numba
@settings(max_examples=60, deadline=None)
@given(st.integers(1, 400), st.integers(1, 12), st.integers(2, 60), st.integers(0, 2**32 - 1))
def test_rows_by_leaf_then_x_are_the_same_permutation_on_both_backends(n, n_x, n_leaves, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, n_x, n).astype(float)
    leaf = rng.integers(0, n_leaves, n)
    got = {}
    for backend in ("numba", "numpy"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_backend, "_mode", backend)
            u = _numeric.unique_x(x)
            assert (u.by_x is not None) == (backend == "numba")
            got[backend] = _numeric._leaf_x_order(leaf, u)
    np.testing.assert_array_equal(got["numba"], got["numpy"])


@needs_numba
@settings(max_examples=60, deadline=None)
@given(st.integers(1, 300), st.integers(0, 3), st.integers(0, 3), st.integers(0, 2**32 - 1))
def test_the_adjustment_s_sums_are_the_same_on_both_backends(n, m, k, seed):
    rng = np.random.default_rng(seed)
    own = rng.normal(size=(n, m)) * 10.0 ** rng.integers(-3, 4, m)
    z = rng.normal(size=(n, k))
    y = rng.normal(size=n) * 1e3
    leaf = rng.integers(0, max(n // 7, 1), n)
    rows = [np.flatnonzero(rng.random(n) < 0.5), np.arange(n)]
    got = {}
    for backend in ("numba", "numpy"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_backend, "_mode", backend)
            got[backend] = (_adjust._leaf_means(own, z, y, leaf),
                            _adjust._within_grams(own, z, y, leaf, rows))
    np.testing.assert_array_equal(got["numba"][0], got["numpy"][0])
    for a, b in zip(got["numba"][1], got["numpy"][1], strict=True):
        np.testing.assert_array_equal(a, b)


@needs_numba
@settings(max_examples=60, deadline=None)
@given(st.integers(2, 400), st.integers(1, 4), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_apply_places_rows_in_the_same_leaves_on_both_backends(n, p, msl, seed):
    rng = np.random.default_rng(seed)
    xb = rng.integers(0, 256, (n, p)).astype(np.uint8)
    y = xb[:, 0] * 0.5 + rng.normal(size=n)
    fit = np.flatnonzero(rng.random(n) < 0.5)
    every = np.arange(n, dtype=np.int64)
    for grower in ("numba", "numpy"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_backend, "_mode", grower)
            forest = _tree.fit_forest(xb, y, [fit, np.setdiff1d(every, fit)], msl)
        placed = {}
        for backend in ("numba", "numpy"):
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(_backend, "_mode", backend)
                placed[backend] = [_tree.apply_tree(xb, every, forest, i) for i in (0, 1)]
        for a, b in zip(placed["numba"], placed["numpy"], strict=True):
            np.testing.assert_array_equal(a, b)


@needs_numba
@settings(max_examples=60, deadline=None)
@given(st.integers(0, 600), st.integers(1, 300), st.sampled_from([0.0, 0.1, 0.5]),
       st.integers(0, 2**32 - 1))
def test_numeric_bins_are_the_same_on_both_backends(n, n_values, missing, seed):
    # Few distinct values (a bin per value, edges equal to values) and many (quantile
    # edges), ties, infinities and gaps: the compiled search bins every value as numpy's.
    rng = np.random.default_rng(seed)
    # Scales down to subnormal steps and up to a range wider than the largest float.
    with np.errstate(over="ignore"):  # beyond the largest float: infinities, as typed
        values = ((rng.integers(0, n_values, n) - n_values // 3).astype(float)
                  * rng.choice([1.0, 0.37, 1e-310, 1e306]))
    values[rng.random(n) < missing] = np.nan
    values[rng.random(n) < 0.02] = np.inf
    values[rng.random(n) < 0.02] = -np.inf
    edges = _binning.numeric_edges(values, np.random.default_rng(0))
    got = {}
    for backend in ("numba", "numpy"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_backend, "_mode", backend)
            got[backend] = _binning.bin_with_edges(values, edges)
    np.testing.assert_array_equal(got["numba"], got["numpy"])
    # Values the edges were not made from (rows of a later chunk) bin alike too.
    other = rng.normal(size=n) * n_values
    for backend in ("numba", "numpy"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_backend, "_mode", backend)
            got[backend] = _binning.bin_with_edges(other, edges)
    np.testing.assert_array_equal(got["numba"], got["numpy"])


# --------------------------------------------------------------------------- compiling


def _signatures() -> dict[str, int]:
    return {d.py_func.__name__: len(d.signatures) for d in _backend.DISPATCHERS}


@needs_numba
def test_the_background_compile_covers_every_kernel_analyses_call(on):
    # Once ready, no analysis compiles again (a new argument type would freeze that call).
    assert _backend.ENGINE.wait(600), _backend.ENGINE.failed
    from stratpd_xl.input._scan_kernels import SCAN

    assert SCAN.wait(600), SCAN.failed
    before = _signatures()
    assert all(before[name] >= 1 for name in ("_grow_numba", "_apply_numba", "_first_seen",
                                              "_counting_order", "_leaf_means_kernel",
                                              "_within_rows_kernel", "_ods_rows", "_xlsx_refs"))
    on("numba")
    data = body_weight(n=3000, seed=2)
    data["group"] = np.where(data["height"] > data["height"].median(), "tall", "short")
    sx.stratpd(data, "weight", "height", n_trials=3)
    sx.stratpd(data, "weight", "height", honest=False)
    sx.catstratpd(data, "weight", "group")
    sx.impact(data, "weight")
    sx.interactions(data, "weight")
    assert _signatures() == before


class _Held:
    """A compile that waits for ``release`` (the kernels 'compiling' as long as a test needs)."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()

    def __call__(self) -> None:
        self.started.set()
        assert self.release.wait(60)


@pytest.fixture
def held(monkeypatch) -> tuple[_Held, _backend.Kernels]:
    """The engine's kernels in auto mode, 'compiling' until the test releases them."""
    compile_ = _Held()
    kernels = _backend.Kernels("test", compile_)
    monkeypatch.setattr(_backend, "ENGINE", kernels)
    monkeypatch.setattr(_backend, "_mode", "auto")
    monkeypatch.setattr(_backend, "_started", [])
    return compile_, kernels


@needs_numba
def test_numpy_answers_while_numba_compiles_then_numba_takes_over(held):
    held, kernels = held
    data = body_weight(n=500, seed=1)
    first = sx.stratpd(data, "weight", "height")  # asks for numba: the compile starts
    assert held.started.wait(10) and not kernels.ready()
    assert _backend.get_backend(_backend.WAIT_ROWS - 1) == "numpy"
    held.release.set()
    assert kernels.wait(10) and _backend.get_backend() == "numba"
    pd.testing.assert_frame_equal(sx.stratpd(data, "weight", "height"), first)


@needs_numba
def test_a_large_call_waits_for_the_kernels_and_a_failed_compile_leaves_numpy(held,
                                                                               monkeypatch):
    held, _ = held
    threading.Timer(0.2, held.release.set).start()
    assert _backend.get_backend(_backend.WAIT_ROWS) == "numba" and held.release.is_set()

    def broken() -> None:
        raise RuntimeError("LLVM is missing")

    monkeypatch.setattr(_backend, "ENGINE", _backend.Kernels("broken", broken))
    assert _backend.get_backend(_backend.WAIT_ROWS) == "numpy"
    assert "LLVM" in str(_backend.ENGINE.failed)


@needs_numba
def test_a_one_shot_process_answers_small_calls_on_numpy_without_compiling(monkeypatch):
    kernels = _backend.Kernels("test", _Held())
    monkeypatch.setattr(_backend, "ENGINE", kernels)
    monkeypatch.setattr(_backend, "_mode", "auto")
    with _backend.one_shot():
        assert _backend.get_backend(_backend.WAIT_ROWS - 1) == "numpy"
        assert kernels._thread is None
    assert _backend._background


@needs_numba
def test_a_process_that_exits_while_numba_compiles_exits_cleanly(tmp_path):
    # Empty cache: the compile is under way when the script ends; the process must stop it
    # between kernels, keep what it compiled, and exit 0 (not "terminate called ...").
    code = (
        "import numpy as np, pandas as pd, stratpd_xl as sx\n"
        "from stratpd_xl import _backend\n"
        "r = np.random.default_rng(0); x, z = r.uniform(size=300), r.uniform(size=300)\n"
        "c = sx.stratpd(pd.DataFrame({'x': x, 'z': z, 'y': 3 * x + z}), 'y', 'x')\n"
        "assert not _backend.ENGINE.ready() and len(c) > 5\n"
        "print(_backend.get_backend())\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("STRATPD_XL_")}
    env.update(NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["numpy"] and "terminate" not in done.stderr


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-6, 6), min_size=2, max_size=300), st.integers(0, 2**32 - 1))
def test_a_half_s_distinct_x_taken_from_the_full_data_s_are_its_own(values, seed):
    # A trial of the band takes its half's distinct x from the full data's, without a sort.
    x = np.array(values, float) / 4
    pick = np.flatnonzero(np.random.default_rng(seed).random(x.size) < 0.5)
    for backend in ("numba", "numpy") if _backend.HAVE_NUMBA else ("numpy",):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_backend, "_mode", backend)
            got = _numeric.unique_of_rows(_numeric.unique_x(x), pick)
            own = _numeric.unique_x(x[pick])
        np.testing.assert_array_equal(got.ux, own.ux)
        np.testing.assert_array_equal(got.xi, own.xi)
        assert (got.by_x is None) == (own.by_x is None)
        if own.by_x is not None:
            np.testing.assert_array_equal(got.by_x, own.by_x)


@needs_numba
@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork here")
def test_a_child_forked_mid_compile_compiles_again_when_asked(held):
    import os

    held, kernels = held
    assert _backend.get_backend() == "numpy" and held.started.wait(10)
    pid = os.fork()
    if pid == 0:  # the child: its parent's compiling thread is not here
        held.release.set()  # the child's own compile finishes at once
        ok = _backend.get_backend(_backend.WAIT_ROWS) == "numba" and kernels.ready()
        os._exit(0 if ok else 1)
    held.release.set()
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


@pytest.mark.skipif(sys.platform == "win32", reason="no POSIX record locks")
def test_a_set_of_kernels_waits_while_another_process_makes_it_ready_for_the_same_cache(
        tmp_path, monkeypatch):
    # Processes started together on an empty cache compile one at a time: the others then
    # load the kernels from the cache instead of compiling them again.  The other process
    # is killed, not ended: the lock goes with it however it ends.
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(_backend, "_started", [])
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\n"
         "from stratpd_xl import _backend\n"
         "with _backend._one_process_at_a_time('lock-test'):\n"
         "    print('held', flush=True)\n"
         "    time.sleep(600)\n"],
        stdout=subprocess.PIPE, text=True, cwd=tmp_path,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    try:
        assert holder.stdout.readline().strip() == "held"
        compile_ = _Held()
        kernels = _backend.Kernels("lock-test", compile_, shared=True)
        other = _Held()  # another cache's set does not wait
        elsewhere = _backend.Kernels("lock-test", other, shared=True)
        kernels.start()
        assert not compile_.started.wait(1.5), "compiled beside the other process"
        monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "another cache"))
        elsewhere.start()
        assert other.started.wait(10)
        other.release.set()
    finally:
        holder.kill()
        holder.wait(30)
    assert compile_.started.wait(10), "still waiting after the other process ended"
    compile_.release.set()
    assert kernels.wait(10) and elsewhere.wait(10)


def test_a_compile_thread_that_could_not_start_is_never_joined(held, monkeypatch):
    # An interpreter shutting down refuses new threads: the compile recorded but never
    # started made exit (and wait) raise "cannot join thread before it is started".
    held, kernels = held

    def refused(self) -> None:
        raise RuntimeError("can't create new thread at interpreter shutdown")

    with monkeypatch.context() as patched:
        patched.setattr(threading.Thread, "start", refused)
        with pytest.raises(RuntimeError, match="new thread"):
            kernels.start()
    assert _backend._started == [] and kernels._thread is None
    _backend._stop_compiling()  # the exit handler: nothing to join, nothing raised
    _backend._exiting.clear()
