"""A histogram-binned regression tree, used only to stratify rows into leaves.

StratPD never predicts with the tree: it needs the *partition*.  An exact CART tree
(scikit-learn's ``DecisionTreeRegressor``) sorts every feature at every node and takes
20-47 s at 1M rows x 9 columns.  Like LightGBM and scikit-learn's HistGradientBoosting we
bin each column once into at most 255 quantile bins (plus a bin for missing values) and
find splits from per-node histograms: O(n p) per tree level, so a full tree down to
``min_samples_leaf`` rows costs O(n p depth).  With 255 bins the split points are as fine
as the data's quantiles, which keeps leaves as homogeneous as an exact tree's at the
sizes StratPD uses (the accuracy tests run through this tree).

Split rule (identical in both backends, so they give the same partition):

* a node with fewer than ``2 * min_samples_leaf`` rows, or whose target is constant, is a leaf;
* otherwise the split ``bin <= t`` maximises the reduction of squared error
  ``n * dL^2 / (nL * nR)`` (``dL`` = sum of y on the left minus ``nL`` times the node mean)
  over all features and thresholds leaving at least ``min_samples_leaf`` rows on each side;
* candidates within a relative ``TIE`` of the best count as ties and the first one wins
  (first feature, then lowest threshold).  Without that tolerance, rounding differences
  from adding a constant to y, or scaling it, could flip exact ties between equally good
  splits of discrete columns and change the strata;
* a best reduction that is negligible against the node's squared error means a leaf.

Sums are accumulated in ascending row order in both backends so the gains, and hence the
chosen splits, agree to the last bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._backend import get_backend, njit

N_BINS = 256  # bin 0 holds missing values, bins 1..255 the quantiles
TIE = 1e-9


@dataclass(frozen=True)
class Tree:
    """Split nodes of a fitted tree; ``feature == -1`` marks a leaf."""

    feature: np.ndarray  # int64
    threshold: np.ndarray  # int64, go left when bin <= threshold
    left: np.ndarray  # int64
    right: np.ndarray  # int64


def _is_pure(sum_y: float, sum_y2: float, m: int) -> bool:
    # Constant target in the node: further splits would be arbitrary.
    sse = sum_y2 - sum_y * sum_y / m
    return sse <= 1e-12 * sum_y2 + 1e-300


_is_pure_nb = njit(_is_pure)


@njit
def _grow_numba(xb, y, rows, min_samples_leaf):  # pragma: no cover - compiled
    n_fit = rows.shape[0]
    p = xb.shape[1]
    max_nodes = 2 * (n_fit // max(min_samples_leaf, 1)) + 3
    feature = np.full(max_nodes, -1, np.int64)
    threshold = np.zeros(max_nodes, np.int64)
    left = np.full(max_nodes, -1, np.int64)
    right = np.full(max_nodes, -1, np.int64)
    idx = rows.copy()
    buf = np.empty(n_fit, np.int64)
    cnt = np.zeros((p, N_BINS), np.int64)
    sm = np.zeros((p, N_BINS), np.float64)
    bmin = np.empty(p, np.int64)
    bmax = np.empty(p, np.int64)
    gains = np.empty((p, N_BINS), np.float64)
    stack_node = np.empty(max_nodes, np.int64)
    stack_lo = np.empty(max_nodes, np.int64)
    stack_hi = np.empty(max_nodes, np.int64)
    # Depth-first; a leaf holds at least min_samples_leaf rows, so at most 2n/msl nodes.
    stack_node[0] = 0
    stack_lo[0] = 0
    stack_hi[0] = n_fit
    top = 1
    n_nodes = 1
    while top > 0:
        top -= 1
        nid = stack_node[top]
        lo = stack_lo[top]
        hi = stack_hi[top]
        m = hi - lo
        if m < 2 * min_samples_leaf:
            continue
        s_y = 0.0
        s_y2 = 0.0
        for i in range(lo, hi):
            v = y[idx[i]]
            s_y += v
            s_y2 += v * v
        if _is_pure_nb(s_y, s_y2, m):
            continue
        mean = s_y / m
        best_gain = 0.0
        # One pass over the node's rows fills every feature's histogram (row-major reads);
        # only the bins a node touches are scanned and cleared, so small nodes stay cheap.
        bmin[:] = N_BINS
        bmax[:] = -1
        for i in range(lo, hi):
            r = idx[i]
            v = y[r]
            for f in range(p):
                b = np.int64(xb[r, f])
                cnt[f, b] += 1
                sm[f, b] += v
                if b < bmin[f]:
                    bmin[f] = b
                if b > bmax[f]:
                    bmax[f] = b
        for f in range(p):
            cl = 0
            sl = 0.0
            for t in range(bmin[f], bmax[f]):
                cl += cnt[f, t]
                sl += sm[f, t]
                cr = m - cl
                gain = -1.0
                if cl >= min_samples_leaf and cr >= min_samples_leaf:
                    dl = sl - cl * mean
                    gain = m * dl * dl / (cl * cr)
                    if gain > best_gain:
                        best_gain = gain
                gains[f, t] = gain
            for t in range(bmin[f], bmax[f] + 1):
                cnt[f, t] = 0
                sm[f, t] = 0.0
        if not best_gain > 1e-12 * (s_y2 - s_y * mean):
            continue
        # First candidate (feature, then threshold) that ties with the best.
        best_f = -1
        best_t = -1
        bar = best_gain * (1.0 - TIE)
        for f in range(p):
            for t in range(bmin[f], bmax[f]):
                if gains[f, t] >= bar:
                    best_f = f
                    best_t = t
                    break
            if best_f >= 0:
                break
        # Stable partition keeps ascending row order inside both children.
        nl = 0
        nr = 0
        for i in range(lo, hi):
            r = idx[i]
            if xb[r, best_f] <= best_t:
                idx[lo + nl] = r
                nl += 1
            else:
                buf[nr] = r
                nr += 1
        for k in range(nr):
            idx[lo + nl + k] = buf[k]
        feature[nid] = best_f
        threshold[nid] = best_t
        left[nid] = n_nodes
        right[nid] = n_nodes + 1
        stack_node[top] = n_nodes + 1
        stack_lo[top] = lo + nl
        stack_hi[top] = hi
        top += 1
        stack_node[top] = n_nodes
        stack_lo[top] = lo
        stack_hi[top] = lo + nl
        top += 1
        n_nodes += 2
    return feature[:n_nodes], threshold[:n_nodes], left[:n_nodes], right[:n_nodes]


@njit
def _apply_numba(xb, rows, feature, threshold, left, right):  # pragma: no cover - compiled
    out = np.empty(rows.shape[0], np.int64)
    for i in range(rows.shape[0]):
        r = rows[i]
        node = 0
        while feature[node] >= 0:
            if xb[r, feature[node]] <= threshold[node]:
                node = left[node]
            else:
                node = right[node]
        out[i] = node
    return out


def _level_gains(
    bins: np.ndarray,
    node: np.ndarray,
    y: np.ndarray,
    m: np.ndarray,
    mean: np.ndarray,
    min_samples_leaf: int,
) -> np.ndarray:
    """Gain of every (node, threshold) for one feature; -1 where a side would be too small."""
    nn = m.size
    key = node * N_BINS + bins.astype(np.int64)
    cnt = np.bincount(key, minlength=nn * N_BINS).reshape(nn, N_BINS)
    sm = np.bincount(key, weights=y, minlength=nn * N_BINS).reshape(nn, N_BINS)
    cl = np.cumsum(cnt, axis=1)
    sl = np.cumsum(sm, axis=1)
    cr = m[:, None] - cl
    dl = sl - cl * mean[:, None]
    valid = (cl >= min_samples_leaf) & (cr >= min_samples_leaf)
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = m[:, None] * dl * dl / (cl * cr)
    return np.where(valid, gain, -1.0)


def _grow_numpy(xb: np.ndarray, y: np.ndarray, rows: np.ndarray, min_samples_leaf: int) -> Tree:
    """Level-wise version of ``_grow_numba``: all nodes of one depth at once with bincount."""
    p = xb.shape[1]
    feature: list[int] = [-1]
    threshold: list[int] = [0]
    left: list[int] = [-1]
    right: list[int] = [-1]
    node_of = np.zeros(rows.shape[0], np.int64)  # node of each fit row, rows stay ascending
    frontier = np.array([0], np.int64)
    while frontier.size:
        local = np.full(len(feature), -1, np.int64)
        local[frontier] = np.arange(frontier.size)
        in_front = local[node_of] >= 0
        r_rows = rows[in_front]
        ln = local[node_of[in_front]]
        nn = frontier.size
        yr = y[r_rows]
        m = np.bincount(ln, minlength=nn)
        s_y = np.bincount(ln, weights=yr, minlength=nn)
        s_y2 = np.bincount(ln, weights=yr * yr, minlength=nn)
        sse = s_y2 - s_y * s_y / np.maximum(m, 1)
        splittable = (m >= 2 * min_samples_leaf) & ~(sse <= 1e-12 * s_y2 + 1e-300)
        keep = splittable[ln]
        r_rows, ln = r_rows[keep], ln[keep]
        yk = y[r_rows]
        mean = s_y / np.maximum(m, 1)

        best_gain = np.zeros(nn)
        for f in range(p):
            gain = _level_gains(xb[r_rows, f], ln, yk, m, mean, min_samples_leaf)
            best_gain = np.maximum(best_gain, gain.max(axis=1))
        ok = best_gain > 1e-12 * (s_y2 - s_y * mean)
        bar = best_gain * (1.0 - TIE)
        best_f = np.full(nn, -1, np.int64)
        best_t = np.full(nn, -1, np.int64)
        for f in range(p):  # second pass: first tying candidate, as in the numba kernel
            hit = _level_gains(xb[r_rows, f], ln, yk, m, mean, min_samples_leaf) >= bar[:, None]
            first = np.argmax(hit, axis=1)
            take = ok & (best_f < 0) & hit[np.arange(nn), first]
            best_f[take] = f
            best_t[take] = first[take]
        split = np.flatnonzero(best_f >= 0)
        if split.size == 0:
            break
        first_child = len(feature)
        children = first_child + 2 * np.arange(split.size)
        for k, s in enumerate(split):
            nid = int(frontier[s])
            feature[nid] = int(best_f[s])
            threshold[nid] = int(best_t[s])
            left[nid] = int(children[k])
            right[nid] = int(children[k]) + 1
        feature.extend([-1] * (2 * split.size))
        threshold.extend([0] * (2 * split.size))
        left.extend([-1] * (2 * split.size))
        right.extend([-1] * (2 * split.size))
        # Move the rows of split nodes to their children.
        child_of_local = np.full(nn, -1, np.int64)
        child_of_local[split] = children
        all_local = local[node_of]
        moving = all_local >= 0
        moving[moving] = child_of_local[all_local[moving]] >= 0
        lm = all_local[moving]
        f_m = best_f[lm]
        go_right = xb[rows[moving], f_m] > best_t[lm]
        node_of[moving] = child_of_local[lm] + go_right
        frontier = np.arange(first_child, len(feature), dtype=np.int64)
    return Tree(
        np.asarray(feature, np.int64),
        np.asarray(threshold, np.int64),
        np.asarray(left, np.int64),
        np.asarray(right, np.int64),
    )


def _apply_numpy(xb: np.ndarray, rows: np.ndarray, tree: Tree) -> np.ndarray:
    node = np.zeros(rows.shape[0], np.int64)
    active = np.flatnonzero(tree.feature[node] >= 0)
    while active.size:
        nd = node[active]
        f = tree.feature[nd]
        go_left = xb[rows[active], f] <= tree.threshold[nd]
        node[active] = np.where(go_left, tree.left[nd], tree.right[nd])
        active = active[tree.feature[node[active]] >= 0]
    return node


def fit_tree(xb: np.ndarray, y: np.ndarray, rows: np.ndarray, min_samples_leaf: int) -> Tree:
    """Grow a stratification tree on ``rows`` (ascending indices into ``xb``/``y``)."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    if xb.shape[1] == 0:  # nothing to stratify on: a single leaf
        return Tree(*(np.array([v], np.int64) for v in (-1, 0, -1, -1)))
    if get_backend() == "numba":
        return Tree(*_grow_numba(xb, y, rows, int(min_samples_leaf)))
    return _grow_numpy(xb, y, rows, int(min_samples_leaf))


def apply_tree(xb: np.ndarray, rows: np.ndarray, tree: Tree) -> np.ndarray:
    """Leaf node index of each row in ``rows``."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    if get_backend() == "numba":
        return _apply_numba(xb, rows, tree.feature, tree.threshold, tree.left, tree.right)
    return _apply_numpy(xb, rows, tree)
