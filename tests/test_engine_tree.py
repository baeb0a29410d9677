"""The stratification tree: the numpy grower against the numba kernel, threads, numba's cache."""

from __future__ import annotations

import math
import os
import random
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import stratpd_xl as sx
from stratpd_xl import _backend
from stratpd_xl._backend import HAVE_NUMBA
from stratpd_xl.engine import _stratify, _table, _tree
from stratpd_xl.engine._stratify import canonical_labels
from stratpd_xl.engine._tree import (
    Tree,
    _apply_numba,
    _apply_numpy,
    _grow_numba_tree,
    _grow_numpy,
)

ROOT = Path(__file__).resolve().parents[1]
needs_numba = pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")


def _partition(xb: np.ndarray, rows: np.ndarray, tree: Tree) -> np.ndarray:
    return canonical_labels(_apply_numpy(xb, rows, tree))


def _splits(tree: Tree) -> list[tuple[int, int]]:
    inner = tree.feature >= 0
    return sorted(zip(tree.feature[inner].tolist(), tree.threshold[inner].tolist(), strict=True))


def _assert_same_tree(xb: np.ndarray, y: np.ndarray, rows: np.ndarray, msl: int) -> None:
    """Same splits and leaves; numbered as the kernel numbers them, the same tree node for node
    (the growers number differently: depth-first vs level-wise)."""
    on_grid = np.zeros(y.shape)  # as fit_tree hands y to both growers
    on_grid[rows], step = _tree.exact_sum_grid(y[rows])
    expected = _grow_numba_tree(xb, on_grid, rows, msl)
    got = _grow_numpy(xb, on_grid, rows, msl, step)
    assert got.feature.size == expected.feature.size
    assert _splits(got) == _splits(expected)
    np.testing.assert_array_equal(_partition(xb, rows, got), _partition(xb, rows, expected))
    numbered = _tree._numbered_as_the_kernel(got)
    for side in ("feature", "threshold", "left", "right"):
        np.testing.assert_array_equal(getattr(numbered, side), getattr(expected, side))
    assert numbered.roots == expected.roots
    # Both ways of placing rows agree too, on rows the tree was not grown on.
    every = np.arange(xb.shape[0], dtype=np.int64)
    np.testing.assert_array_equal(
        _apply_numpy(xb, every, got),
        _apply_numba(xb, every, got.feature, got.threshold, got.left, got.right),
    )


@st.composite
def tree_inputs(draw):
    """Binned columns with ties, constant columns and missing-value bins; y with ties."""
    n = draw(st.integers(1, 300))
    p = draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    levels = [draw(st.sampled_from([1, 2, 3, 17, 256])) for _ in range(p)]
    xb = np.column_stack([rng.integers(0, k, n) for k in levels]).astype(np.uint8)
    if draw(st.booleans()):
        xb[:, 0] = draw(st.integers(0, 255))  # a constant column
    kind = draw(st.sampled_from(["normal", "ties", "constant", "step"]))
    if kind == "normal":
        y = rng.normal(0, 1, n)
    elif kind == "ties":
        y = rng.integers(0, 3, n).astype(float)
    elif kind == "constant":
        y = np.full(n, 2.5)
    else:  # y exactly determined by one column: exact ties between equally good splits
        y = (xb[:, -1] > 1).astype(float)
    rows = np.flatnonzero(rng.random(n) < draw(st.sampled_from([1.0, 0.5])))
    msl = draw(st.sampled_from([0, 1, 2, 5, 10, n // 2 + 1, n + 1]))
    return xb, y, rows.astype(np.int64), msl


# Cells per row below which a level is searched with histograms: 0 never, inf always.
SEARCHES = [0.0, _tree._HIST_CELLS_PER_ROW, math.inf]


@needs_numba
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree_inputs(), st.sampled_from(SEARCHES))
def test_numpy_grower_gives_the_numba_tree(inputs, hist_cells_per_row):
    with pytest.MonkeyPatch.context() as mp:  # a fixture would be shared by the examples
        mp.setattr(_tree, "_HIST_CELLS_PER_ROW", hist_cells_per_row)
        _assert_same_tree(*inputs)


@needs_numba
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree_inputs(), st.sampled_from([1, 16, 64]), st.sampled_from(SEARCHES))
def test_numpy_grower_in_small_batches_of_features_gives_the_numba_tree(inputs, batch,
                                                                        hist_cells_per_row):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_tree, "_BATCH", batch)
        mp.setattr(_tree, "_HIST_CELLS_PER_ROW", hist_cells_per_row)
        _assert_same_tree(*inputs)


@needs_numba
@pytest.mark.parametrize("hist_cells_per_row", SEARCHES)
@pytest.mark.parametrize("msl", [1, 3, 10])
# The numba grower derives a large child's histogram from its parent's (from 2 rows up,
# from SUBTRACT_ROWS up, from 256 rows up, or never), with one slot for waiting nodes'
# histograms or many.
@pytest.mark.parametrize(("subtract_rows", "slot_bytes"),
                         [(2, 1), (2, 1 << 30), (_tree.SUBTRACT_ROWS, _tree._SLOT_BYTES),
                          (256, _tree._SLOT_BYTES), (1 << 40, 1 << 30)])
def test_numpy_grower_gives_the_numba_tree_on_larger_data(monkeypatch, msl, hist_cells_per_row,
                                                          subtract_rows, slot_bytes):
    monkeypatch.setattr(_tree, "_HIST_CELLS_PER_ROW", hist_cells_per_row)
    monkeypatch.setattr(_tree, "SUBTRACT_ROWS", subtract_rows)
    monkeypatch.setattr(_tree, "_SLOT_BYTES", slot_bytes)
    rng = np.random.default_rng(msl)
    n = 5_000
    xb = rng.integers(0, 256, (n, 5)).astype(np.uint8)
    xb[:, 1] = rng.integers(1, 4, n)  # heavy ties
    xb[:, 2] = 9  # constant
    xb[rng.random(n) < 0.05, 3] = 0  # missing values
    y = np.sin(xb[:, 0] / 20.0) + xb[:, 1] + rng.normal(0, 0.3, n)
    _assert_same_tree(xb, y, np.arange(n, dtype=np.int64), msl)
    _assert_same_tree(xb, y, np.flatnonzero(rng.random(n) < 0.5).astype(np.int64), msl)


@needs_numba
@pytest.mark.parametrize("hist_cells_per_row", SEARCHES)
@pytest.mark.parametrize("batch", [1, 200, 5_000])
def test_numpy_grower_in_batches_of_features_gives_the_numba_tree(monkeypatch, batch,
                                                                  hist_cells_per_row):
    # Small batches: one feature per call, and several per call whose rows leave the tree
    # while the batches before them still have to be written.
    monkeypatch.setattr(_tree, "_BATCH", batch)
    monkeypatch.setattr(_tree, "_HIST_CELLS_PER_ROW", hist_cells_per_row)
    rng = np.random.default_rng(batch)
    n = 3_000
    xb = rng.integers(0, 256, (n, 6)).astype(np.uint8)
    xb[:, 1] = rng.integers(1, 4, n)  # heavy ties: this feature stops splitting early
    xb[:, 2] = 9  # constant
    xb[rng.random(n) < 0.05, 3] = 0  # missing values
    xb[:, 5] = rng.integers(0, 2, n)
    y = np.sin(xb[:, 0] / 20.0) + xb[:, 1] + xb[:, 5] + rng.normal(0, 0.3, n)
    for msl in (1, 7):
        _assert_same_tree(xb, y, np.arange(n, dtype=np.int64), msl)
        _assert_same_tree(xb, y, np.flatnonzero(rng.random(n) < 0.5).astype(np.int64), msl)


@needs_numba
@pytest.mark.parametrize("p", [8, 9, 17])
def test_numpy_grower_gives_the_numba_tree_on_rows_of_several_words(p):
    # The kernel moves a row's bins as whole 8-byte words: 8 columns fill one, 9 and 17
    # spill into a second and third, padded.
    rng = np.random.default_rng(p)
    n = 4_000
    xb = rng.integers(0, 256, (n, p)).astype(np.uint8)
    xb[:, p - 1] = rng.integers(0, 3, n)  # the last column, in the last word, matters
    y = np.sin(xb[:, 0] / 30.0) + xb[:, p - 1] + rng.normal(0, 0.3, n)
    for msl in (1, 10):
        _assert_same_tree(xb, y, np.flatnonzero(rng.random(n) < 0.5).astype(np.int64), msl)


@pytest.mark.parametrize("backend", ["numba", "numpy"] if HAVE_NUMBA else ["numpy"])
def test_a_tree_numbered_otherwise_places_rows_by_its_children(monkeypatch, backend):
    # The kernel steps to left + 1 for the right child, as the growers number them; a tree
    # whose right child is elsewhere is placed by its arrays all the same.
    monkeypatch.setattr(_tree, "get_backend", lambda rows=0: backend)
    tree = Tree(feature=np.array([0, -1, 1, -1, -1]), threshold=np.array([5, 0, 2, 0, 0]),
                left=np.array([2, -1, 4, -1, -1]), right=np.array([1, -1, 3, -1, -1]))
    xb = np.array([[9, 0], [1, 1], [1, 3], [5, 2], [6, 9]], np.uint8)
    placed = _tree.apply_tree(xb, np.arange(5), tree)
    assert placed.tolist() == [1, 4, 3, 4, 1]


BACKENDS = ["numba", "numpy"] if HAVE_NUMBA else ["numpy"]


@st.composite
def forest_inputs(draw):
    """Tree inputs whose rows are dealt into 1-3 disjoint sets, one tree each."""
    xb, y, rows, msl = draw(tree_inputs())
    n_sets = draw(st.integers(1, 3))
    deal = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).integers(0, n_sets, rows.size)
    sets = [rows[deal == i] for i in range(n_sets)]
    if draw(st.booleans()):  # trees of different scales: different grid steps per tree
        y = y.copy()
        y[sets[0]] *= draw(st.sampled_from([1e-6, 3.0, 1e9]))
    return xb, y, sets, msl


@needs_numba
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forest_inputs(), st.sampled_from(SEARCHES))
def test_numpy_forest_grows_each_set_the_numba_tree(inputs, hist_cells_per_row):
    xb, y, sets, msl = inputs
    every = np.arange(xb.shape[0], dtype=np.int64)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_tree, "_HIST_CELLS_PER_ROW", hist_cells_per_row)
        mp.setattr(_tree, "get_backend", lambda rows=0: "numpy")
        forest = _tree.fit_forest(xb, y, sets, msl)
        placed = [_tree.apply_tree(xb, every, forest, i) for i in range(len(sets))]
    assert len(forest.roots) == len(sets)
    # Node for node the numba forest: a leaf's number (a sampled fit's strata band hashes
    # it) does not depend on the backend.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_tree, "get_backend", lambda rows=0: "numba")
        kernels = _tree.fit_forest(xb, y, sets, msl)
    for side in ("feature", "threshold", "left", "right"):
        np.testing.assert_array_equal(getattr(forest, side), getattr(kernels, side))
    assert forest.roots == kernels.roots
    for i, rows in enumerate(sets):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_tree, "get_backend", lambda rows=0: "numba")
            alone = _tree.fit_tree(xb, y, rows, msl)
            expected = _tree.apply_tree(xb, every, alone)
        np.testing.assert_array_equal(canonical_labels(placed[i]), canonical_labels(expected))
        # The leaves a tree places rows in are its own: node indices never collide.
        others = np.concatenate([placed[j] for j in range(len(sets)) if j != i] or [[]])
        assert not np.isin(placed[i], others).any()


def test_a_forest_with_a_set_that_cannot_be_split_keeps_it_one_leaf():
    rng = np.random.default_rng(1)
    xb = rng.integers(0, 256, (400, 3)).astype(np.uint8)
    y = xb[:, 0] / 10.0
    y[300:] = np.inf  # not finite: that set's tree is a single leaf
    sets = [np.arange(0, 300), np.arange(300, 400), np.arange(0)]
    for backend in BACKENDS:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_tree, "get_backend", lambda rows=0, backend=backend: backend)
            forest = _tree.fit_forest(xb, y, sets, 10)
            assert forest.feature[forest.roots[0]] >= 0
            assert forest.feature[forest.roots[1]] == -1
            assert forest.feature[forest.roots[2]] == -1
            assert np.unique(_tree.apply_tree(xb, sets[1], forest, 1)).tolist() == [
                forest.roots[1]]


@pytest.mark.parametrize("backend", BACKENDS)
def test_min_samples_leaf_is_respected_and_a_small_node_is_a_leaf(monkeypatch, backend):
    monkeypatch.setattr(_backend, "get_backend", lambda rows=0: backend)
    monkeypatch.setattr(_tree, "get_backend", lambda rows=0: backend)
    rng = np.random.default_rng(0)
    xb = rng.integers(0, 256, (200, 2)).astype(np.uint8)
    y = xb[:, 0].astype(float)
    rows = np.arange(200, dtype=np.int64)
    tree = _tree.fit_tree(xb, y, rows, 30)
    sizes = np.bincount(_apply_numpy(xb, rows, tree))
    assert sizes[sizes > 0].min() >= 30
    assert (tree.feature >= 0).sum() >= 2  # y depends on column 0: it is split
    single = _tree.fit_tree(xb, y, rows, 101)  # 200 < 2 * 101: the root is a leaf
    assert single.feature.tolist() == [-1]
    # A target that is not finite everywhere cannot be split on: one leaf, no error.
    for bad in (np.inf, np.nan):
        y_bad = y.copy()
        y_bad[7] = bad
        assert _tree.fit_tree(xb, y_bad, rows, 10).feature.tolist() == [-1]


finite = st.floats(allow_nan=False, allow_infinity=False)


@needs_numba
@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=200))
def test_leaf_labels_are_the_same_from_both_backends(keys):
    keys = np.array(keys, np.int64)
    got = {}
    for backend in ("numba", "numpy"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_stratify, "get_backend", lambda rows=0, b=backend: b)
            got[backend] = canonical_labels(keys)
    np.testing.assert_array_equal(got["numba"], got["numpy"])
    # Labels 0..k-1 in order of first appearance.
    first = np.unique(keys, return_index=True)[1]
    np.testing.assert_array_equal(got["numba"][np.sort(first)], np.arange(first.size))


@settings(max_examples=200, deadline=None)
@given(st.lists(finite, min_size=1, max_size=300), st.randoms(use_true_random=False))
@example([5e-324, -5e-324, 1e-310], random.Random(0))  # subnormal: a huge scale factor
@example([1.7976931348623157e308, -1e308, 3.0], random.Random(0))  # the largest float
def test_sums_on_the_tree_grid_do_not_depend_on_the_order(values, rnd):
    # The numpy grower adds y in another order than the kernel; this is why it may.
    on_grid, step = _tree.exact_sum_grid(np.array(values))
    scale = max(abs(v) for v in values)
    if scale == 0:
        assert not on_grid.any()
        return
    # Rounded to the nearest step, after a power-of-two scaling below 1.
    scaled = np.ldexp(np.array(values), -math.frexp(scale)[1])
    assert np.abs(scaled).max() < 1
    assert np.all(np.abs(on_grid - scaled) <= step / 2)
    assert np.array_equal(np.round(on_grid / step), on_grid / step)
    # Any subset, added one by one in any order, gives the exact sum (math.fsum).
    subset = [v for v in on_grid.tolist() if rnd.random() < 0.7]
    rnd.shuffle(subset)
    running = 0.0
    for i, v in enumerate(subset):
        running += v
        assert running == math.fsum(subset[: i + 1])
    assert float(np.sum(subset)) == running  # numpy's pairwise sum agrees too


# --------------------------------------------------------------------------- threads


class _NoThreads:
    """Stands in for ThreadPoolExecutor where threads cannot start (Pyodide)."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("can't start new thread")


def _big_table(n: int = 25_000) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, n)
    z = rng.uniform(0, 1, n)
    w = rng.integers(0, 5, n)
    return pd.DataFrame({"x": x, "z": z, "w": w, "y": 2 * x + z + w + rng.normal(0, 0.1, n)})


def test_large_data_uses_threads_where_it_can(monkeypatch):
    # Guards the test below: at this size the engine does reach for a thread pool.
    assert len(_big_table()) >= _backend.PARALLEL_ROWS
    monkeypatch.setattr(_backend, "can_start_threads", lambda: True)
    monkeypatch.setattr(_stratify, "ThreadPoolExecutor", _NoThreads)
    monkeypatch.setattr(_table, "ThreadPoolExecutor", _NoThreads)
    with pytest.raises(RuntimeError, match="start new thread"):
        sx.stratpd(_big_table(), "y", "x")


def test_without_threads_the_engine_runs_serially_with_the_same_result(monkeypatch):
    data = _big_table()
    threaded = sx.stratpd(data, "y", "x", random_state=5)
    monkeypatch.setattr(_backend, "can_start_threads", lambda: False)
    monkeypatch.setattr(_stratify, "ThreadPoolExecutor", _NoThreads)
    monkeypatch.setattr(_table, "ThreadPoolExecutor", _NoThreads)
    serial = sx.stratpd(data, "y", "x", random_state=5)
    pd.testing.assert_frame_equal(serial, threaded)
    assert not sx.impact(data, "y").empty


def test_can_start_threads_is_false_on_webassembly(monkeypatch):
    _backend.can_start_threads.cache_clear()
    try:
        with monkeypatch.context() as patch:
            patch.setattr(sys, "platform", "emscripten")
            assert _backend.can_start_threads() is False
        _backend.can_start_threads.cache_clear()
        assert _backend.can_start_threads() is True  # this test machine has threads
    finally:
        _backend.can_start_threads.cache_clear()


# --------------------------------------------------------------------------- numba cache

_CURVE = textwrap.dedent(
    """
    import numpy as np, pandas as pd
    import stratpd_xl.engine as engine
    from stratpd_xl.engine import stratpd, get_backend
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, 500)
    z = rng.uniform(0, 1, 500)
    df = pd.DataFrame({"x": x, "z": z, "y": 3 * x + z})
    curve = stratpd(df, "y", "x")
    assert engine.ENGINE.wait(), engine.ENGINE.failed  # the background compile, cached
    assert get_backend() == "numba", get_backend()
    assert len(curve) > 5
    print("OK")
    """
)


def _read_only_install(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A copy of the package and a HOME in which numba finds no cache directory.

    Not as root, the copy and HOME are made read-only (chmod -w).  Root writes through
    permissions, so there every place numba looks is blocked by a *file* where it needs a
    directory: ``__pycache__`` next to the modules, ``~/.cache``, ``NUMBA_CACHE_DIR``.  numba
    raises the same "cannot cache function ... no locator available" either way.
    """
    site = tmp_path / "site"
    shutil.copytree(ROOT / "stratpd_xl", site / "stratpd_xl",
                    ignore=shutil.ignore_patterns("__pycache__"))
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "STRATPD_XL_"))}
    env.update(HOME=str(home), PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1")
    env.pop("XDG_CACHE_HOME", None)
    if os.geteuid() == 0:
        for package_dir in (site / "stratpd_xl").rglob("*"):
            if package_dir.is_dir():
                (package_dir / "__pycache__").write_text("not a directory")
        (site / "stratpd_xl" / "__pycache__").write_text("not a directory")
        (home / ".cache").write_text("not a directory")
        blocked = tmp_path / "blocked"
        blocked.write_text("not a directory")
        env["NUMBA_CACHE_DIR"] = str(blocked)
    else:
        for path in [*site.rglob("*"), site, home]:
            path.chmod(path.stat().st_mode & ~0o222)
    return site, env


def _run(code: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=600)


@needs_numba
def test_read_only_install_caches_in_a_temporary_directory(tmp_path):
    site, env = _read_only_install(tmp_path)
    # numba itself fails on this setup; the engine must not.
    probe = _run("import numba\n@numba.njit(cache=True)\ndef f(): return 1\n", env, tmp_path)
    assert "no locator available" in probe.stderr
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env["TMPDIR"] = str(tmp)
    done = _run(_CURVE, env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout.strip() == "OK"
    cached = list(tmp.glob("stratpd-xl-numba-*/**/*.nbi"))
    assert cached, "the numba cache was not written to the temporary directory"
    again = _run(_CURVE, env, tmp_path)  # and a second start loads it
    assert again.returncode == 0, again.stderr


@needs_numba
def test_without_any_writable_place_numba_compiles_uncached(tmp_path):
    site, env = _read_only_install(tmp_path)
    nowhere = tmp_path / "nowhere"
    nowhere.write_text("not a directory")
    # Even the temporary directory is unusable (a file): compile without a cache.
    code = f"import tempfile\ntempfile.gettempdir = lambda: {str(nowhere)!r}\n" + _CURVE
    done = _run(code, env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout.strip() == "OK"
