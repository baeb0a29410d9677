"""Group rows into strata (tree leaves) of similar values in all columns except x_j.

Honest (cross-fitted) stratification is the default: the rows are split at random into two
halves; a tree grown on half A places the rows of half B into leaves and vice versa.  Every
row is thus stratified by a tree that never saw its target value.  Growing the tree and
estimating slopes on the *same* rows selects leaves in which y happens to vary little, which
shrinks the estimated effects (stratx: education slope -1.39 for a true -1.5, see
``benchmarks/accuracy.py``); cross-fitting removes that selection bias and still uses
every row once.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from .. import _backend
from .._backend import get_backend, njit
from ._tree import Tree, _join, apply_tree, fit_forest, fit_tree


@njit
def _first_seen(keys, n_keys):  # pragma: no cover - compiled
    label = np.full(n_keys, -1, np.int64)
    out = np.empty(keys.shape[0], np.int64)
    k = 0
    for i in range(keys.shape[0]):
        v = keys[i]
        if label[v] < 0:
            label[v] = k
            k += 1
        out[i] = label[v]
    return out


def canonical_labels(keys: np.ndarray) -> np.ndarray:
    """Relabel arbitrary leaf keys 0..k-1 in order of first appearance.

    Node numbering differs between the numba and numpy trees; this makes labels, and so
    every later summation order, identical for the same partition.  Keys are node indices
    (small non-negative integers): with numba, one pass over a table of them instead of a
    sort.
    """
    if get_backend(keys.size) == "numba" and keys.size and keys.min() >= 0:
        keys = np.ascontiguousarray(keys, np.int64)
        return _first_seen(keys, int(keys.max()) + 1)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    rank = np.empty(first.size, np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inverse.reshape(-1)]


@dataclass(frozen=True)
class Placement:
    """The trees of :func:`stratify`, kept to place rows they were not grown on.

    ``forest`` holds one tree (``honest=False``) or two: tree 0 grown on the rows of half A
    (``in_a``), tree 1 on half B, so a row of half A is placed by tree 1 and a row of half
    B by tree 0.  A row the trees never saw can go to either, honestly.  Leaf keys are the
    forest's node indices, unique across its trees.
    """

    forest: Tree
    in_a: np.ndarray | None  # None: one tree, grown on every row

    def keys(self, xb: np.ndarray, tree: np.ndarray) -> np.ndarray:
        """The leaf key of each row of ``xb`` in tree ``tree`` (0 or 1 per row)."""
        out = np.empty(xb.shape[0], np.int64)
        if self.in_a is None:
            return apply_tree(xb, np.arange(xb.shape[0]), self.forest, 0).astype(np.int64)
        for t in (0, 1):
            rows = np.flatnonzero(tree == t)
            if rows.size:
                out[rows] = apply_tree(xb, rows, self.forest, t)
        return out


def stratify(
    xb: np.ndarray,
    y: np.ndarray,
    min_samples_leaf: int,
    rng: np.random.Generator,
    *,
    honest: bool = True,
    threads: bool = True,
    placement: bool = False,
) -> np.ndarray | tuple[np.ndarray, Placement, np.ndarray]:
    """Leaf label (0..n_leaves-1) of every row.

    Parameters
    ----------
    xb : uint8 array (n, p)
        Binned stratifying columns.
    y : float array (n,)
        Target.
    min_samples_leaf : int
        Smallest leaf the tree may make.
    rng : numpy Generator
        Source of the honest split.
    honest : bool
        Cross-fit two trees on random halves (default) or grow one tree on all rows.
    threads : bool
        Whether the two trees may grow in two threads (on large data, where threads can
        start).  False when the caller already keeps both cores busy.
    placement : bool
        Also return the trees (:class:`Placement`), to place other rows later, and every
        row's leaf key in them (see :meth:`Placement.keys`).
    """
    n = y.shape[0]
    all_rows = np.arange(n, dtype=np.int64)
    # The partition must not depend on the target's units or offset: standardise first.
    spread = float(np.std(y))
    y = (y - np.mean(y)) / (spread if spread > 0 else 1.0)
    if not honest or n < 4 * min_samples_leaf:
        tree = fit_tree(xb, y, all_rows, min_samples_leaf)
        keys = apply_tree(xb, all_rows, tree).astype(np.int64)
        labels = canonical_labels(keys)
        return (labels, Placement(tree, None), keys) if placement else labels
    in_a = np.zeros(n, bool)
    in_a[rng.permutation(n)[: n // 2]] = True
    rows_a = np.flatnonzero(in_a)
    rows_b = np.flatnonzero(~in_a)
    keys = np.empty(n, np.int64)
    if threads and n >= _backend.PARALLEL_ROWS and _backend.can_start_threads():
        # The two trees are independent: one per core.  numba's kernels release the GIL;
        # numpy's calls are large enough here that two threads beat one pass for both.
        jobs = [(rows_a, rows_b), (rows_b, rows_a)]
        with ThreadPoolExecutor(max_workers=2) as pool:
            placed = list(pool.map(lambda job: _fit_and_place(xb, y, *job, min_samples_leaf),
                                   jobs))
        # Leaf keys: node index times 2 plus which tree placed the row.
        keys[rows_b] = 2 * placed[0][0]
        keys[rows_a] = 2 * placed[1][0] + 1
        if placement:
            forest = _join([placed[0][1], placed[1][1]])
            # The same strata keyed as the forest's nodes, as Placement.keys keys them.
            keys[rows_b] = placed[0][0]
            keys[rows_a] = placed[1][0] + forest.roots[1]
    else:
        # One pass grows both (the numpy grower then makes half as many calls); node
        # indices are unique across a forest's trees, so they are the keys.
        forest = fit_forest(xb, y, [rows_a, rows_b], min_samples_leaf)
        keys[rows_b] = apply_tree(xb, rows_b, forest, 0)
        keys[rows_a] = apply_tree(xb, rows_a, forest, 1)
    labels = canonical_labels(keys)
    return (labels, Placement(forest, in_a), keys) if placement else labels


def _fit_and_place(
    xb: np.ndarray, y: np.ndarray, fit_rows: np.ndarray, place_rows: np.ndarray,
    min_samples_leaf: int,
) -> tuple[np.ndarray, Tree]:
    """Grow a tree on ``fit_rows``; the leaf of each of ``place_rows``, and the tree."""
    tree = fit_tree(xb, y, fit_rows, min_samples_leaf)
    return apply_tree(xb, place_rows, tree), tree
