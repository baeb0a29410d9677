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

The numba grower works depth-first on a copy of the fitted rows kept in node order (a
node's rows are contiguous, so its histogram reads memory in sequence), and scans only the
smaller child of a split: the larger child's histogram is its parent's minus the smaller's.
A waiting node's histogram lists its occupied bins in order; its children's are the ones
they still hold, so searching, subtracting and clearing walk those, not every bin between a
node's lowest and highest.  Rows are placed by walking the tree, four rows side by side.

Both backends must choose the same splits, to the last bit of every gain.  ``fit_tree``
rounds y to a grid on which every sum of y is exact (:func:`exact_sum_grid`), so the
histogram sums do not depend on the order of the additions (nor on subtracting them); the
one order-dependent sum, of y squared for the purity test, runs in ascending row order in
both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._backend import get_backend, njit

N_BINS = 256  # bin 0 holds missing values, bins 1..255 the quantiles
TIE = 1e-9


@dataclass(frozen=True)
class Tree:
    """Split nodes of a fitted tree, or of several trees; ``feature == -1`` marks a leaf."""

    feature: np.ndarray  # int64
    threshold: np.ndarray  # int64, go left when bin <= threshold
    left: np.ndarray  # int64
    right: np.ndarray  # int64
    roots: tuple[int, ...] = (0,)  # the root of each tree of a forest (see fit_forest)


def _is_pure(sum_y: float, sum_y2: float, m: int) -> bool:
    # Constant target in the node: further splits would be arbitrary.
    sse = sum_y2 - sum_y * sum_y / m
    return sse <= 1e-12 * sum_y2 + 1e-300


_is_pure_nb = njit(_is_pure)


# Smallest larger child whose histogram is the parent's minus its sibling's (below it, both
# children are scanned from their rows).  Subtracting costs a pass over the parent's
# occupied bins only, never more than its rows, so every child that can split is derived.
SUBTRACT_ROWS = 1
# Memory for the histograms kept for nodes waiting on the depth-first stack (the larger
# child's is derived from its parent's, the smaller's scanned; derived ones need a slot).
_SLOT_BYTES = 8 << 20


def _grow_numba_tree(xb: np.ndarray, y: np.ndarray, rows: np.ndarray,
                     min_samples_leaf: int) -> Tree:
    """The numba grower with its work sizes: histogram slots within ``_SLOT_BYTES``."""
    per_slot = max(xb.shape[1], 1) * N_BINS * 17
    n_slots = int(min(64, max(1, _SLOT_BYTES // per_slot)))
    return Tree(*_grow_numba(xb, y, rows, min_samples_leaf, n_slots, SUBTRACT_ROWS))


@njit
def _scan(xs, ys, lo, hi, cnt, sm, occ, n_occ, slot, listed):  # pragma: no cover - compiled
    # Histogram of rows lo..hi into ``slot`` (all zeros), feature by feature, so the bounds
    # stay in registers; with ``listed``, each feature's occupied bins in ascending order
    # too (without branches: which bins a node occupies is random).
    for f in range(xs.shape[1]):
        lo_b = N_BINS
        hi_b = -1
        c = cnt[slot, f]
        s = sm[slot, f]
        for i in range(lo, hi):
            b = np.int64(xs[i, f])
            c[b] += 1
            s[b] += ys[i]
            lo_b = min(lo_b, b)
            hi_b = max(hi_b, b)
        if listed:
            o = occ[slot, f]
            k = 0
            for t in range(lo_b, hi_b + 1):
                o[k] = t
                k += c[t] != 0
            n_occ[slot, f] = k


@njit
def _clear(cnt, sm, occ, n_occ, slot):  # pragma: no cover - compiled
    # Zero the bins ``slot`` lists, so the slot is all zeros again.
    for f in range(cnt.shape[1]):
        o = occ[slot, f]
        for j in range(n_occ[slot, f]):
            cnt[slot, f, o[j]] = 0
            sm[slot, f, o[j]] = 0.0


@njit
def _grow_numba(xb, y, rows, min_samples_leaf, n_slots, subtract_rows):  # pragma: no cover
    n_fit = rows.shape[0]
    p = xb.shape[1]
    msl = max(min_samples_leaf, 1)
    max_nodes = 2 * (n_fit // msl) + 3
    feature = np.full(max_nodes, -1, np.int64)
    threshold = np.zeros(max_nodes, np.int64)
    left = np.full(max_nodes, -1, np.int64)
    right = np.full(max_nodes, -1, np.int64)
    # The fitted rows' bins and targets, copied in node order: a node's rows are contiguous
    # (and ascending by row inside it), so its histogram reads memory in sequence.
    # A row's bins are padded to whole 8-byte words (xw), which a split moves at once.
    n_words = max((p + 7) // 8, 1)
    xw = np.zeros((n_fit, n_words), np.uint64)
    xs = xw.view(np.uint8)[:, :p]
    ys = np.empty(n_fit, np.float64)
    for i in range(n_fit):
        r = rows[i]
        ys[i] = y[r]
        for f in range(p):
            xs[i, f] = xb[r, f]
    bufw = np.empty((n_fit, n_words), np.uint64)
    ybuf = np.empty(n_fit, np.float64)
    # Histogram slots: the last one is scratch; the others hold pending nodes' histograms,
    # each with its occupied bins listed in order (occ, n_occ): a node's search, its
    # children's subtraction and its clearing walk those, not every bin between its lowest
    # and highest (a deep node's few rows spread over most of the 255).
    cnt = np.zeros((n_slots + 1, p, N_BINS), np.int64)
    sm = np.zeros((n_slots + 1, p, N_BINS), np.float64)
    occ = np.empty((n_slots + 1, p, N_BINS), np.uint8)
    n_occ = np.zeros((n_slots + 1, p), np.int64)
    scratch = n_slots
    free = np.arange(n_slots - 1, -1, -1)
    n_free = n_slots
    gains = np.empty((p, N_BINS), np.float64)
    f_best = np.empty(p, np.float64)
    stack_node = np.empty(max_nodes, np.int64)
    stack_lo = np.empty(max_nodes, np.int64)
    stack_hi = np.empty(max_nodes, np.int64)
    stack_slot = np.empty(max_nodes, np.int64)
    stack_node[0] = 0
    stack_lo[0] = 0
    stack_hi[0] = n_fit
    stack_slot[0] = -1
    top = 1
    n_nodes = 1
    while top > 0:
        top -= 1
        nid = stack_node[top]
        lo = stack_lo[top]
        hi = stack_hi[top]
        slot = stack_slot[top]
        m = hi - lo
        if m < 2 * msl or m < 2:
            continue  # never given a slot
        s_y = 0.0
        s_y2 = 0.0
        for i in range(lo, hi):
            v = ys[i]
            s_y += v
            s_y2 += v * v
        if _is_pure_nb(s_y, s_y2, m):
            if slot >= 0:
                _clear(cnt, sm, occ, n_occ, slot)
                free[n_free] = slot
                n_free += 1
            continue
        if slot < 0:
            if n_free > 0:
                n_free -= 1
                slot = free[n_free]
            else:
                slot = scratch
            _scan(xs, ys, lo, hi, cnt, sm, occ, n_occ, slot, True)
        mean = s_y / m
        best_gain = 0.0
        # Gains at the occupied bins only: an empty bin would repeat the gain of the
        # occupied one before it, and the first-tie rule picks that one anyway.
        for f in range(p):
            hc = cnt[slot, f]
            hs = sm[slot, f]
            o = occ[slot, f]
            cl = 0
            sl = 0.0
            top_gain = -1.0
            for j in range(n_occ[slot, f] - 1):  # the last bin leaves no row on the right
                t = o[j]
                cl += hc[t]
                sl += hs[t]
                cr = m - cl
                gain = -1.0
                if cl >= min_samples_leaf and cr >= min_samples_leaf:
                    dl = sl - cl * mean
                    gain = m * dl * dl / (cl * cr)
                    top_gain = max(top_gain, gain)
                gains[f, j] = gain
            f_best[f] = top_gain
            best_gain = max(best_gain, top_gain)
        if not best_gain > 1e-12 * (s_y2 - s_y * mean):
            _clear(cnt, sm, occ, n_occ, slot)
            if slot != scratch:
                free[n_free] = slot
                n_free += 1
            continue
        # First candidate (feature, then threshold) that ties with the best: only the first
        # feature whose best reaches the bar is searched.
        best_f = -1
        best_t = -1
        bar = best_gain * (1.0 - TIE)
        for f in range(p):
            if f_best[f] >= bar:
                best_f = f
                break
        for j in range(n_occ[slot, best_f] - 1):
            if gains[best_f, j] >= bar:
                best_t = np.int64(occ[slot, best_f, j])
                break
        # Rows to the left child stay, the others go to the buffer and after them; each
        # row is written to both places (whole words at a time), without a branch on a
        # side that is random.
        nl = 0
        nr = 0
        for i in range(lo, hi):
            go = xs[i, best_f] <= best_t
            v = ys[i]
            for w in range(n_words):
                word = xw[i, w]
                xw[lo + nl, w] = word
                bufw[nr, w] = word
            ys[lo + nl] = v
            ybuf[nr] = v
            nl += go
            nr += 1 - go
        for k in range(nr):
            for w in range(n_words):
                xw[lo + nl + k, w] = bufw[k, w]
            ys[lo + nl + k] = ybuf[k]
        feature[nid] = best_f
        threshold[nid] = best_t
        left[nid] = n_nodes
        right[nid] = n_nodes + 1
        # The children's histograms: the smaller one's from its rows, the larger one's as
        # the parent's minus the smaller's (exact: counts are integers and sums of y lie
        # on a grid where every sum is exact, see exact_sum_grid), both over the parent's
        # occupied bins, and each child's occupied bins are the parent's it still holds.
        slot_l = -1
        slot_r = -1
        big = max(nl, nr)
        if big >= 2 * msl and big >= subtract_rows and slot != scratch:
            small_left = nl < nr
            s_lo = lo if small_left else lo + nl
            s_hi = lo + nl if small_left else hi
            small_m = s_hi - s_lo
            keep_small = small_m >= 2 * msl and n_free > 0
            if keep_small:
                n_free -= 1
                s_slot = free[n_free]
            else:
                s_slot = scratch
            _scan(xs, ys, s_lo, s_hi, cnt, sm, occ, n_occ, s_slot, False)
            for f in range(p):
                o = occ[slot, f]
                so = occ[s_slot, f]
                hc = cnt[slot, f]
                hs = sm[slot, f]
                sc = cnt[s_slot, f]
                ss = sm[s_slot, f]
                k_big = 0
                k_small = 0
                for j in range(n_occ[slot, f]):
                    t = o[j]
                    c_s = sc[t]
                    c = hc[t] - c_s
                    hc[t] = c
                    # 0.0 where the larger child has no row: its sum is exactly 0 anyway.
                    hs[t] = hs[t] - ss[t] if c > 0 else 0.0
                    so[k_small] = t
                    k_small += c_s != 0
                    o[k_big] = t  # never ahead of j: the list is filtered in place
                    k_big += c != 0
                    if not keep_small:  # the scratch is cleared as it is read
                        sc[t] = 0
                        ss[t] = 0.0
                n_occ[slot, f] = k_big
                n_occ[s_slot, f] = k_small
            if not keep_small:
                s_slot = -1
            if small_left:
                slot_l, slot_r = s_slot, slot
            else:
                slot_l, slot_r = slot, s_slot
        else:
            _clear(cnt, sm, occ, n_occ, slot)
            if slot != scratch:
                free[n_free] = slot
                n_free += 1
        stack_node[top] = n_nodes + 1
        stack_lo[top] = lo + nl
        stack_hi[top] = hi
        stack_slot[top] = slot_r
        top += 1
        stack_node[top] = n_nodes
        stack_lo[top] = lo
        stack_hi[top] = lo + nl
        stack_slot[top] = slot_l
        top += 1
        n_nodes += 2
    return feature[:n_nodes], threshold[:n_nodes], left[:n_nodes], right[:n_nodes]

@njit
def _apply_numba(xb, rows, feature, threshold, left, right, root=0):  # pragma: no cover
    # Each row walks from the root; a node's right child is its left child + 1 (both
    # growers number them so: apply_tree checks), so a step is an add, not a branch on
    # a random side.  Four rows walk side by side: their steps are independent, so the
    # processor overlaps their memory reads instead of waiting on one chain of them.
    n = rows.shape[0]
    out = np.empty(n, np.int64)
    n4 = n - n % 4
    for i in range(0, n4, 4):
        r0 = rows[i]
        r1 = rows[i + 1]
        r2 = rows[i + 2]
        r3 = rows[i + 3]
        a = root
        b = root
        c = root
        d = root
        while True:
            fa = feature[a]
            fb = feature[b]
            fc = feature[c]
            fd = feature[d]
            if fa < 0 and fb < 0 and fc < 0 and fd < 0:
                break
            if fa >= 0:
                a = left[a] + (xb[r0, fa] > threshold[a])
            if fb >= 0:
                b = left[b] + (xb[r1, fb] > threshold[b])
            if fc >= 0:
                c = left[c] + (xb[r2, fc] > threshold[c])
            if fd >= 0:
                d = left[d] + (xb[r3, fd] > threshold[d])
        out[i] = a
        out[i + 1] = b
        out[i + 2] = c
        out[i + 3] = d
    for i in range(n4, n):
        r = rows[i]
        node = root
        f = feature[node]
        while f >= 0:
            node = left[node] + (xb[r, f] > threshold[node])
            f = feature[node]
        out[i] = node
    return out


# Entries per numpy call when features are processed together (see _grow_numpy): enough to
# spread numpy's per-call cost over the small nodes of deep levels, few enough that the work
# arrays, sized by this and not by n x p, stay a few MB.
_BATCH = 1 << 17


class _Scratch:
    """Work arrays reused across levels and batches of features.

    Fresh large temporaries cost page faults on every level (in a VM these dominated the
    run time); writing into these with ``out=`` keeps the same memory warm.
    """

    def __init__(self, n: int) -> None:
        self.sums = np.empty(n + 1, np.int64)  # prefix sums of y, in grid steps
        self.flag = np.empty(n, bool)
        # int64 even where intp is 32 bits (Pyodide): _regroup packs two counts in one.
        self.p = np.empty(n, np.int64)
        self.q = np.empty(n, np.int64)
        self.r = np.empty(n, np.int64)
        self.y = np.empty(n, np.int64)


def _level_gains(
    bins: np.ndarray,
    y: np.ndarray,
    m: np.ndarray,
    node_start: np.ndarray,
    mean: np.ndarray,
    min_samples_leaf: int,
    work: _Scratch,
    step: float | np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Gains of the candidate splits of all nodes of a level.

    ``bins`` and ``y`` hold the level's rows grouped by node (``m[k] > 0`` rows of node k
    from ``node_start[k]`` on), sorted by bin inside a node and by row among equal bins.
    A "node" here may be a (feature, node) pair: several features' orders laid end to end
    are one sequence of such nodes, so one call serves them all.
    Every occupied (node, bin) cell is a candidate "go left when bin <= this bin".
    Returns ``(gain, cell_node, cell_start, first_cell)``: the first three per cell in that
    order (``cell_start``: the cell's first position in ``bins``), ``gain`` -1 where a side
    would have fewer than ``min_samples_leaf`` (>= 1) rows, so also at a node's last cell;
    ``first_cell`` is each node's first cell.  Empty bins
    between occupied ones are skipped: they repeat the previous bin's gain, and
    the kernel's first-tie rule picks the lower, occupied, bin anyway.  ``y`` is in whole
    grid steps of ``step`` (:func:`exact_sum_grid`): one for all nodes, or one per node.
    """
    size = bins.size
    new_cell = work.flag[:size]
    new_cell[0] = True
    np.not_equal(bins[1:], bins[:-1], out=new_cell[1:])
    new_cell[node_start] = True
    cell_start = np.flatnonzero(new_cell)
    n_cells = cell_start.size
    first_cell = np.searchsorted(cell_start, node_start)  # a node's first row starts a cell
    per_node = np.diff(first_cell, append=n_cells)
    cell_end = np.append(cell_start[1:], size)
    # y in whole grid steps (exact_sum_grid): prefix sums over the whole level minus those
    # before each node are the kernel's running sums, exactly (and int64 sums are fast).
    before = work.sums[: size + 1]
    before[0] = 0
    np.cumsum(y, out=before[1:])
    sl = before.take(cell_end)
    sl -= np.repeat(before.take(node_start), per_node)
    c_node = np.repeat(np.arange(m.size), per_node)
    # Whole steps below 2**53: exact.  ``step`` is per node when trees of several grids
    # share the level.
    sl = sl * (step if np.ndim(step) == 0 else step[c_node])
    cl = cell_end - np.repeat(node_start, per_node)
    gain = _cell_gains(cl, sl, m[c_node], mean[c_node], min_samples_leaf)
    return gain, c_node, cell_start, first_cell


class _Orders:
    """Rows (positions into the fitted rows) and bins of the features that may still split.

    Each feature's rows are grouped by node, sorted by bin inside a node and by row among
    equal bins.  The features ``feats`` are laid end to end, ``size`` entries each: feature
    ``feats[j]`` holds entries ``1 + j * size`` to ``(j + 1) * size``, so one numpy call
    serves many features.  Entry 0 is a spare slot for rows leaving the tree (see
    :func:`_regroup`).  (y is gathered through ``perm`` when needed: cheaper than moving it
    along at every level.)
    """

    def __init__(self, n_slots: int) -> None:
        self.perm = np.empty(n_slots, np.intp)
        self.bins = np.empty(n_slots, np.uint8)
        self.feats = np.empty(0, np.int64)
        self.size = 0

    def keep(self, live: np.ndarray) -> None:
        """Drop the features where ``live`` is False, moving the others' entries down."""
        size = self.size
        for j, f in enumerate(np.flatnonzero(live).tolist()):
            if j != f:  # distinct segments: the copies never overlap
                self.perm[1 + j * size : 1 + (j + 1) * size] = (
                    self.perm[1 + f * size : 1 + (f + 1) * size])
                self.bins[1 + j * size : 1 + (j + 1) * size] = (
                    self.bins[1 + f * size : 1 + (f + 1) * size])
        self.feats = self.feats[live]


_LOW32 = 0xFFFFFFFF
_OFFSET_BITS = 40  # a row's move packs its offset (< 2**40) and a shift above it


class _Moves:
    """Where one level sends each row, in every feature's order (see :func:`_regroup`).

    Per fitted row: ``code`` (1 << 32 for a row going to a left child, 1 for a right child,
    0 for a row that left the tree) and ``move`` = offset | shift << 40, with shift 32 (left),
    0 (right) or 63 (left the tree: reads 0, and with offset 0 all such rows land on the
    slot just before their batch's entries).  Offset: 1 (that slot) plus the child's start
    minus the rows of the same side in earlier children.  ``phantom`` packs the kept rows
    going right in the left count's place and those going left in the right count's place.
    Filled once per level; each batch of features only gathers them.
    """

    def __init__(self, n: int) -> None:
        self.code = np.zeros(n, np.int64)  # int64 even where intp is 32 bits (Pyodide)
        self.move = np.zeros(n, np.int64)
        self.kept = 0
        self.phantom = 0

    def fill(self, gone: list[np.ndarray], active: np.ndarray, child: np.ndarray,
             n_children: int) -> None:
        """Rows in ``gone`` leave the orders; ``active`` rows go on, to ``child``."""
        counts = np.bincount(child, minlength=n_children)
        offset = np.cumsum(counts) - counts + 1
        n_left = np.cumsum(counts[0::2])
        n_right = np.cumsum(counts[1::2])
        offset[0::2] -= n_left - counts[0::2]
        offset[1::2] -= n_right - counts[1::2]
        side = np.arange(n_children) & 1  # 0 left, 1 right
        code = np.where(side == 0, np.int64(1) << 32, np.int64(1))
        move = offset.astype(np.int64) | (np.where(side == 0, 32, 0).astype(np.int64)
                                          << _OFFSET_BITS)
        self.kept = int(active.size)
        right_total = int(n_right[-1]) if n_right.size else 0
        self.phantom = right_total << 32 | (self.kept - right_total)
        for rows in gone:  # the other rows' entries are all overwritten below
            self.code[rows] = 0
            self.move[rows] = 63 << _OFFSET_BITS
        self.code[active] = code[child]
        self.move[active] = move[child]


def _regroup(src: _Orders, dst: _Orders, moves: _Moves, work: _Scratch) -> None:
    """Stable partition of every feature's order into the children's groups, into ``dst``.

    Children ``2k`` and ``2k+1`` come from the k-th split node, so a stable sort by child
    only moves each row within its parent's block: left rows first, then right rows, order
    kept.  A row's place in its child is its offset plus the rows of the same side before
    it over all parents.  Both counts come from one cumsum of the packed codes, so no row
    has to be compressed out or selected first.  The cumsum runs on through a batch's
    features; ``moves.phantom`` added at the end of each feature's entries turns the counts
    carried into the next feature into that feature's start (kept rows of one feature:
    left rows go up by the right ones, right rows by the left ones).  Counts stay below
    2**31: a batch has at most ``max(_BATCH, n_fit)`` entries.  Batches run last to first:
    the rows leaving the tree land on the slot before a batch's entries, the last entry
    of the batch before it, which is written afterwards (entry 0 for the first batch).
    """
    size, kept = src.size, moves.kept
    per = max(1, _BATCH // size)  # features per batch
    for a in reversed(range(0, src.feats.size, per)):
        n = (min(a + per, src.feats.size) - a) * size
        lo = 1 + a * size
        perm = src.perm[lo : lo + n]
        code = np.take(moves.code, perm, out=work.p[:n])
        code[size - 1 : n - 1 : size] += moves.phantom
        dest = work.q[:n]
        dest[0] = 0
        np.cumsum(code[:-1], out=dest[1:])  # rows before each one, the phantoms included
        move = np.take(moves.move, perm, out=work.p[:n])
        np.right_shift(dest, np.right_shift(move, _OFFSET_BITS, out=work.r[:n]), out=dest)
        dest &= _LOW32
        move &= (1 << _OFFSET_BITS) - 1
        dest += move
        dst.perm[a * kept :][dest] = perm
        dst.bins[a * kept :][dest] = src.bins[lo : lo + n]
    dst.feats, dst.size = src.feats, kept


# Cells per active row below which a level is searched with histograms (see _grow_numpy).
_HIST_CELLS_PER_ROW = 1.0


class _CellCandidates:
    """One level's split candidates: the gains of occupied (feature, node, bin) cells.

    ``node_best`` (features, nodes) is each feature's best gain in each node, -1 where no
    threshold leaves ``min_samples_leaf`` rows on both sides; ``batches`` holds
    ``(a, k, gain, first_cell, cell_bin, nodes)`` for features ``a .. a+k-1``, cells
    ordered by feature, node, bin, ``first_cell`` each (feature, node)'s first cell.
    """

    node_best: np.ndarray
    batches: list[tuple[int, int, np.ndarray, np.ndarray, np.ndarray, int]]

    @property
    def live(self) -> np.ndarray:
        """Features with a valid split in some node.  The others cannot split below either:
        a child's rows on each side of any threshold are a subset of its parent's."""
        return (self.node_best >= 0.0).any(axis=1)

    def thresholds(self, win_f: np.ndarray, bar: np.ndarray) -> np.ndarray:
        """Lowest bin at which feature ``win_f[k]`` (a row of ``node_best``) reaches
        ``bar[k]`` in node k; -1 where ``win_f`` is -1."""
        best_t = np.full(win_f.size, -1, np.int64)
        for a, k, g, first_cell, cell_bin, nn in self.batches:
            won = np.flatnonzero((win_f >= a) & (win_f < a + k))
            if not won.size:  # no node takes these features: skip their cells
                continue
            # The lowest bin reaching the bar.  Only the cells of the (feature, node) pairs
            # that won are searched; every one has a cell reaching the bar.
            pair = (win_f[won] - a) * nn + won
            start = first_cell[pair]
            length = np.append(first_cell[1:], g.size)[pair] - start
            seg = np.repeat(np.arange(won.size), length)
            cells = np.arange(seg.size) + np.repeat(start - (np.cumsum(length) - length), length)
            hit = np.flatnonzero(g[cells] >= bar[won][seg])
            hs = seg[hit]
            first = cells[hit[np.r_[True, hs[1:] != hs[:-1]]]]  # lowest bin of each node
            best_t[won] = cell_bin[first]
        return best_t


class _HistCandidates(_CellCandidates):
    """Candidates from per-(feature, node) histograms over all 256 bins.

    Cheap while a level has few nodes for its rows: a few passes over the rows (gather, key,
    two bincounts) and a few over the dense histograms, instead of keeping every feature's
    rows sorted; the gains are computed on occupied cells only.  y is on the grid of
    :func:`exact_sum_grid`, so the bin sums and their running sums along a node's bins (exact
    zeros up to its first occupied bin) are the kernel's to the bit, whatever the order.
    """

    def __init__(self, cols: np.ndarray, feats: np.ndarray, yf: np.ndarray, active: np.ndarray,
                 ln: np.ndarray, m: np.ndarray, mean: np.ndarray, msl: int) -> None:
        nn = m.size
        width = nn * N_BINS
        ya = yf[active]
        base = ln * N_BINS
        per = max(1, _BATCH // max(active.size, width))  # features per batch
        n_feat = feats.size
        self.node_best = np.empty((n_feat, nn))
        self.batches = []
        for a in range(0, n_feat, per):
            fs = feats[a : a + per]
            k = fs.size
            key = np.empty((k, active.size), np.intp)
            for j, f in enumerate(fs.tolist()):  # key: (feature in batch, node, bin)
                np.add(cols[f].take(active), base + j * width if j else base, out=key[j])
            key = key.ravel()
            cnt = np.bincount(key, minlength=k * width)
            total = np.bincount(key, weights=np.tile(ya, k) if k > 1 else ya,
                                minlength=k * width)
            occ = np.flatnonzero(cnt)  # occupied cells, by feature, node, bin
            pair = occ >> 8  # feature * nn + node (N_BINS is 256)
            first_cell = np.flatnonzero(np.r_[True, pair[1:] != pair[:-1]])
            cl = np.cumsum(cnt.reshape(-1, N_BINS), axis=1, out=cnt.reshape(-1, N_BINS))
            sl = np.cumsum(total.reshape(-1, N_BINS), axis=1, out=total.reshape(-1, N_BINS))
            node = pair % nn if k > 1 else pair
            g = _cell_gains(cl.ravel()[occ], sl.ravel()[occ], m[node], mean[node], msl)
            # Every (feature, node) has rows, so a first cell: reduceat is per pair.
            self.node_best[a : a + k] = np.maximum.reduceat(g, first_cell).reshape(k, nn)
            self.batches.append((a, k, g, first_cell, (occ & (N_BINS - 1)), nn))


def _cell_gains(cl: np.ndarray, sl: np.ndarray, mc: np.ndarray, mean: np.ndarray,
                msl: int) -> np.ndarray:
    """The kernel's gain of "go left up to this cell": ``cl`` rows and ``sl`` sum of y on the
    left of nodes with ``mc`` rows and mean ``mean``; -1 where a side has fewer than ``msl``
    rows (so also at a node's last cell)."""
    cr = mc - cl
    dl = sl - cl * mean
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = mc * dl * dl / (cl * cr)  # the kernel's operations, in its order
    gain[np.minimum(cl, cr) < msl] = -1.0
    return gain


class _SortedCandidates(_CellCandidates):
    """Candidates from each feature's rows kept sorted by bin inside every node.

    Work per occupied (feature, node, bin) cell, never per empty bin: the way to search
    levels with many small nodes.  See :func:`_level_gains`.
    """

    def __init__(self, orders: _Orders, steps: np.ndarray, step: float | np.ndarray,
                 m: np.ndarray, mean: np.ndarray, msl: int, work: _Scratch) -> None:
        nn = m.size
        n_feat = orders.feats.size
        size = orders.size
        node_start = np.cumsum(m) - m
        per = max(1, _BATCH // size)  # features per batch
        self.node_best = np.empty((n_feat, nn))  # each feature's best gain in each node
        self.batches = []
        for a in range(0, n_feat, per):
            k = min(a + per, n_feat) - a
            lo = 1 + a * size
            perm, b = orders.perm[lo : lo + k * size], orders.bins[lo : lo + k * size]
            yo = np.take(steps, perm, out=work.y[: perm.size])
            # Feature j's nodes follow feature j-1's: each cell lies within one feature,
            # so its sums are those of that feature alone.
            g, c_node, cell_start, first_cell = _level_gains(
                b, yo, np.tile(m, k), (node_start + size * np.arange(k)[:, None]).ravel(),
                np.tile(mean, k), msl, work,
                step if np.ndim(step) == 0 else np.tile(step, k),
            )
            # Cells are grouped by node and every open node has rows: reduceat is per node.
            self.node_best[a : a + k] = np.maximum.reduceat(g, first_cell).reshape(k, nn)
            # The bins are copied: the orders are regrouped before the thresholds are read.
            self.batches.append((a, k, g, first_cell, b[cell_start], nn))


def _sorted_orders(cols: np.ndarray, feats: np.ndarray, active: np.ndarray, ln: np.ndarray,
                   nn: int) -> _Orders:
    """Each feature's ``active`` rows grouped by node, sorted by bin, then by row."""
    size = active.size
    orders = _Orders(1 + feats.size * size)
    base = ln * N_BINS
    # A stable sort keeps ascending rows among equal keys; 16-bit keys sort by radix.
    dtype = np.uint16 if nn * N_BINS <= 1 << 16 else np.int64
    for j, f in enumerate(feats.tolist()):
        b = cols[f].take(active)
        key = (base + b).astype(dtype, copy=False)
        order = np.argsort(key, kind="stable")
        orders.perm[1 + j * size : 1 + (j + 1) * size] = active.take(order)
        orders.bins[1 + j * size : 1 + (j + 1) * size] = b.take(order)
    orders.feats, orders.size = feats, size
    return orders


def _grow_numpy(xb: np.ndarray, y: np.ndarray, rows: np.ndarray, min_samples_leaf: int,
                step: np.ndarray, tree_of: np.ndarray | None = None) -> Tree:
    """Level-wise version of ``_grow_numba``: all open nodes of one depth at once.

    Grows one tree per value of ``tree_of`` (the tree of each of ``rows``; all rows in
    tree 0 when None), together: tree ``i``'s root is node ``i`` and a level holds the open
    nodes of every tree, so small trees share each numpy call (see :func:`fit_forest`).
    ``y`` (at the rows of tree ``i``) lies on the grid of ``step[i]`` made by
    :func:`exact_sum_grid`, so its sums are exact in any order, and as whole numbers of
    steps they are int64 sums, which numpy adds several times faster than floats.

    While a level has few nodes for its rows (``_HIST_CELLS_PER_ROW``), splits are found
    from dense histograms (:class:`_HistCandidates`).  Once nodes get many and small, each
    feature's rows are sorted by (node, bin) once, and every later level partitions them
    stably into the children, so they stay grouped by node and sorted by bin inside each
    node (ascending row order among equal bins), and a split search is a few cumsums over
    the occupied (node, bin) cells (:class:`_SortedCandidates`).  Features are handled
    together, in batches of about ``_BATCH`` entries, so deep levels with many small nodes
    cost a few dozen numpy calls per batch instead of per feature.
    """
    p = xb.shape[1]
    n_fit = rows.shape[0]
    step = np.asarray(step, np.float64).reshape(-1)
    n_trees = step.size
    tree_of = np.zeros(n_fit, np.intp) if tree_of is None else np.asarray(tree_of, np.intp)
    # The kernel's rules with min_samples_leaf 0 are those with 1 (a split leaves >= 1 row
    # per side; a 1-row node is pure); clamping lets cr == 0 mark invalid splits.
    msl = max(int(min_samples_leaf), 1)
    # A split leaves >= msl rows a side, so at most 2 * n / msl + 1 nodes per tree of n rows
    # (as the kernel).
    max_nodes = int((2 * (np.bincount(tree_of, minlength=n_trees) // msl) + 3).sum())
    feature = np.full(max_nodes, -1, np.int64)
    threshold = np.zeros(max_nodes, np.int64)
    left = np.full(max_nodes, -1, np.int64)
    right = np.full(max_nodes, -1, np.int64)
    n_nodes = n_trees
    # Work on positions 0..n_fit-1 into ``rows`` (ascending, so position order = row order).
    cols = np.ascontiguousarray(xb[rows].T)  # feature-major: one contiguous array per column
    yf = np.ascontiguousarray(y[rows], dtype=np.float64)
    steps = (yf / step[tree_of]).astype(np.int64)  # whole numbers: exact
    node_of = tree_of.copy()  # local node (index into the frontier) of each row
    active = np.arange(n_fit, dtype=np.intp)  # rows of open nodes, ascending
    feats = np.arange(p, dtype=np.int64)  # features that may still split
    orders: _Orders | None = None  # built when the levels switch to sorted orders
    spare = work = moves = None

    def open_nodes(node: np.ndarray, n_nodes: int) -> tuple[np.ndarray, ...]:
        """Rows, sums of y and y^2 per node, and which nodes the kernel would split.

        Sums run over ``active`` (ascending rows), the kernel's order.
        """
        ya = yf[active]
        m = np.bincount(node, minlength=n_nodes)
        s_y = np.bincount(node, weights=ya, minlength=n_nodes)
        s_y2 = np.bincount(node, weights=ya * ya, minlength=n_nodes)
        sse = s_y2 - s_y * s_y / np.maximum(m, 1)
        return m, s_y, s_y2, (m >= 2 * msl) & ~(sse <= 1e-12 * s_y2 + 1e-300)

    m, s_y, s_y2, splittable = open_nodes(node_of, n_trees)
    frontier = np.flatnonzero(splittable)  # every node in the frontier can be split
    if not splittable.all():  # roots that are leaves: their rows leave at once
        active = active[splittable[node_of]]
        node_of[active] = (np.cumsum(splittable) - 1)[node_of[active]]
        m, s_y, s_y2 = m[splittable], s_y[splittable], s_y2[splittable]
    # The grid step of each open node (its tree's): a scalar when all trees share one.
    same_step = bool((step == step[0]).all())
    node_step = step[frontier]
    while frontier.size and feats.size:  # no feature left: no node can split
        nn = frontier.size
        ln = node_of[active]
        mean = s_y / m
        cand: _CellCandidates
        if orders is None and nn * N_BINS <= _HIST_CELLS_PER_ROW * active.size:
            cand = _HistCandidates(cols, feats, yf, active, ln, m, mean, msl)
        else:
            if orders is None:
                orders = _sorted_orders(cols, feats, active, ln, nn)
                spare = _Orders(orders.perm.size)
                work = _Scratch(min(max(_BATCH, active.size), feats.size * active.size))
                moves = _Moves(n_fit)
            cand = _SortedCandidates(orders, steps, step[0] if same_step else node_step, m,
                                     mean, msl, work)
        best_gain = np.maximum(cand.node_best.max(axis=0), 0.0)
        ok = best_gain > 1e-12 * (s_y2 - s_y * mean)
        bar = best_gain * (1.0 - TIE)
        # First tie, as the kernel: the first feature reaching the bar in each node, then
        # its lowest bin reaching the bar.
        reach = cand.node_best >= bar
        reach &= ok
        win_f = np.where(reach.any(axis=0), reach.argmax(axis=0), -1)
        best_t = cand.thresholds(win_f, bar)
        best_f = np.where(win_f >= 0, feats[np.maximum(win_f, 0)], -1)
        split = np.flatnonzero(best_f >= 0)
        if split.size == 0:
            break
        first_child = n_nodes
        nid = frontier[split]
        feature[nid] = best_f[split]
        threshold[nid] = best_t[split]
        left[nid] = first_child + 2 * np.arange(split.size)
        right[nid] = left[nid] + 1
        n_nodes += 2 * split.size
        # Child of every row: 2k (left) or 2k+1 (right) for the k-th split node.
        n_children = 2 * split.size
        child_of_node = np.full(nn, -1, np.intp)
        child_of_node[split] = 2 * np.arange(split.size)
        c = child_of_node[ln]
        moving = c >= 0
        gone = [active[~moving]]  # rows of nodes that became leaves
        active, c, lm = active[moving], c[moving], ln[moving]
        # Flat indices: 2-D fancy indexing is several times slower.
        c += cols.ravel().take(best_f[lm] * n_fit + active) > best_t[lm]
        # Children the kernel would not split are leaves already: their rows leave now,
        # before the next level's split search and regrouping.
        m, s_y, s_y2, splittable = open_nodes(c, n_children)
        stay = splittable[c]
        gone.append(active[~stay])
        active, c = active[stay], c[stay]
        compact = np.cumsum(splittable) - 1  # children ids -> the next level's node ids
        node_of[active] = compact[c]
        m, s_y, s_y2 = m[splittable], s_y[splittable], s_y2[splittable]
        node_step = np.repeat(node_step[split], 2)[splittable]  # a child's tree: its parent's
        live = cand.live
        if not live.all():  # drop features that cannot split any more
            feats = feats[live]
            if orders is not None:
                orders.keep(live)
        if orders is not None:
            moves.fill(gone, active, c, n_children)  # the same for every feature
            _regroup(orders, spare, moves, work)  # the old arrays become the next destination
            orders, spare = spare, orders
        frontier = first_child + np.flatnonzero(splittable)
    return Tree(*(a[:n_nodes].copy() for a in (feature, threshold, left, right)),
                roots=tuple(range(n_trees)))


def _apply_numpy(xb: np.ndarray, rows: np.ndarray, tree: Tree, root: int = 0) -> np.ndarray:
    node = np.full(rows.shape[0], root, np.int64)
    split = tree.feature >= 0
    # Both growers number a node's children consecutively: the right child is left + 1,
    # so a step is one add instead of a select between two gathers.
    consecutive = np.array_equal(tree.right[split], tree.left[split] + 1)
    active = np.flatnonzero(split[node])
    # Flat indices into xb: 2-D fancy indexing is several times slower.
    flat = np.ascontiguousarray(xb).ravel()
    pos = rows[active] * xb.shape[1]
    nd = node[active]
    while active.size:
        go_right = flat.take(pos + tree.feature[nd]) > tree.threshold[nd]
        if consecutive:
            nd = tree.left[nd] + go_right
        else:
            nd = np.where(go_right, tree.right[nd], tree.left[nd])
        inner = split[nd]
        if not inner.all():
            # Only rows that reach a leaf are written; the rest go down one more level.
            done = ~inner
            node[active[done]] = nd[done]
            active, nd, pos = active[inner], nd[inner], pos[inner]
    return node


def exact_sum_grid(values: np.ndarray) -> tuple[np.ndarray, float]:
    """``values`` scaled by a power of two and rounded to a grid on which sums are exact.

    Returns ``(on_grid, step)``.  The values are first scaled below 1 in size (a power of
    two: exact), so a partial sum of ``n`` of them stays below ``n < 2**e``; on a grid of
    ``step = 2**(e - 52)`` every such sum is a whole number of steps below ``2**53`` of
    them, which float64 holds exactly.  Sums, and the gains made of them, then do not
    depend on the order of the additions: the numpy grower adds in whatever order is
    fastest and still matches the kernel to the bit.  The step is ``n / 2**52`` of the
    largest value or finer (1.5e-11 for 50,000 rows): far below any difference a split
    could be chosen by.  ``values`` must be finite.
    """
    top = float(np.max(np.abs(values))) if values.size else 0.0
    if top == 0.0:
        return np.zeros(values.shape), 1.0
    scaled = np.ldexp(values, -math.frexp(top)[1])  # |scaled| < 1; exact, never overflows
    step = math.ldexp(1.0, math.frexp(values.size)[1] - 52)  # n < 2**e
    return np.round(scaled / step) * step, step  # dividing by a power of two is exact


def fit_tree(xb: np.ndarray, y: np.ndarray, rows: np.ndarray, min_samples_leaf: int) -> Tree:
    """Grow a stratification tree on ``rows`` (ascending indices into ``xb``/``y``)."""
    return fit_forest(xb, y, [rows], min_samples_leaf)


def fit_forest(xb: np.ndarray, y: np.ndarray, row_sets: list[np.ndarray],
               min_samples_leaf: int) -> Tree:
    """One stratification tree per set of rows, each grown on its rows alone.

    ``row_sets`` are disjoint arrays of ascending indices into ``xb``/``y``.  The trees
    share the node arrays of the returned :class:`Tree`; ``roots[i]`` is tree ``i``'s root
    (see :func:`apply_tree`).  Each tree is exactly the one :func:`fit_tree` grows on its
    rows; the numpy grower grows them together, a level of every tree per pass, which
    halves its per-call cost for the two small honest trees of a feature.
    """
    y = np.asarray(y, np.float64)
    sets = [np.ascontiguousarray(r, dtype=np.int64) for r in row_sets]
    on_grid = np.zeros(xb.shape[0])  # only the fitted rows are read
    steps = np.ones(len(sets))
    grown = []  # the sets that get a tree of their own; the others are single leaves
    for i, rows in enumerate(sets):
        y_fit = y[rows]
        # Nothing to stratify on, or a target that is not finite everywhere (no split
        # could be measured; the kernel's sums would be NaN): a single leaf.
        if xb.shape[1] and np.isfinite(y_fit).all():
            on_grid[rows], steps[i] = exact_sum_grid(y_fit)
            grown.append(i)
    msl = int(min_samples_leaf)
    if get_backend(xb.shape[0]) == "numpy" and len(grown) == len(sets):
        owner = np.full(xb.shape[0], -1, np.intp)
        for i, rows in enumerate(sets):
            owner[rows] = i
        rows = np.flatnonzero(owner >= 0)  # ascending, as the grower needs
        return _numbered_as_the_kernel(_grow_numpy(xb, on_grid, rows, msl, steps, owner[rows]))
    trees = []
    for i, rows in enumerate(sets):
        if i not in grown:
            trees.append(Tree(*(np.array([v], np.int64) for v in (-1, 0, -1, -1))))
        elif get_backend() == "numba":
            trees.append(_grow_numba_tree(xb, on_grid, rows, msl))
        else:
            trees.append(_numbered_as_the_kernel(
                _grow_numpy(xb, on_grid, rows, msl, steps[i : i + 1])))
    return _join(trees)


def _numbered_as_the_kernel(tree: Tree) -> Tree:
    """``tree`` (one or a forest) with its nodes numbered as ``_grow_numba`` numbers them.

    The kernel grows depth-first, left child first, and numbers a split node's children
    when it splits it: the k-th node split (in that order) gets children ``2k + 1`` and
    ``2k + 2``; a forest's trees follow each other as :func:`_join` lays them.  The numpy
    grower finds the same splits level by level, so only the numbers differ - and anything
    keyed by a leaf's number (the strata band of a sampled fit deals strata into groups by a
    hash of it) would differ between the backends.  Done a level at a time: a node's rank
    among the split nodes in that order is its parent's plus one, plus, for a right child,
    the split nodes under its left sibling.
    """
    size = tree.feature.size
    split = tree.feature >= 0
    levels = [np.asarray(tree.roots, np.int64)]
    while True:
        inner = levels[-1][split[levels[-1]]]
        if inner.size == 0:
            break
        levels.append(np.concatenate([tree.left[inner], tree.right[inner]]))
    below = split.astype(np.int64)  # split nodes in each node's subtree
    for level in reversed(levels):
        inner = level[split[level]]
        below[inner] += below[tree.left[inner]] + below[tree.right[inner]]
    rank = np.zeros(size, np.int64)  # among its own tree's split nodes, in the kernel's order
    new = np.zeros(size, np.int64)
    sizes = 1 + 2 * below[levels[0]]
    new[levels[0]] = np.concatenate([[0], np.cumsum(sizes[:-1])])  # each tree's root
    base = np.zeros(size, np.int64)  # each node's tree's first number
    base[levels[0]] = new[levels[0]]
    for level in levels:
        inner = level[split[level]]
        lt, rt = tree.left[inner], tree.right[inner]
        rank[lt] = rank[inner] + 1
        rank[rt] = rank[inner] + 1 + below[lt]
        base[lt] = base[rt] = base[inner]
        new[lt] = base[inner] + 2 * rank[inner] + 1
        new[rt] = new[lt] + 1
    if sizes.sum() != size:  # every node hangs from a root (the growers leave no others)
        raise AssertionError("a tree node no root reaches")
    feature = np.empty(size, np.int64)
    threshold = np.empty(size, np.int64)
    left = np.full(size, -1, np.int64)
    right = np.full(size, -1, np.int64)
    feature[new] = tree.feature
    threshold[new] = tree.threshold
    left[new[split]] = new[tree.left[split]]
    right[new[split]] = new[tree.right[split]]
    return Tree(feature, threshold, left, right, roots=tuple(int(r) for r in new[levels[0]]))


def _join(trees: list[Tree]) -> Tree:
    """The trees' nodes in one set of arrays, one tree after the other."""
    if len(trees) == 1:
        return trees[0]
    offset = np.cumsum([0] + [t.feature.size for t in trees[:-1]])

    def moved(side: str) -> np.ndarray:
        return np.concatenate([np.where(getattr(t, side) >= 0, getattr(t, side) + o, -1)
                               for t, o in zip(trees, offset, strict=True)])

    return Tree(np.concatenate([t.feature for t in trees]),
                np.concatenate([t.threshold for t in trees]), moved("left"), moved("right"),
                roots=tuple(int(o) for o in offset))


def apply_tree(xb: np.ndarray, rows: np.ndarray, tree: Tree, index: int = 0) -> np.ndarray:
    """Leaf node index of each row in ``rows`` in tree ``index`` of a :func:`fit_forest`
    (node indices are unique across its trees)."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    root = tree.roots[index]
    if get_backend(rows.size) == "numba" and _consecutive(tree):
        return _apply_numba(xb, rows, tree.feature, tree.threshold, tree.left, tree.right,
                            root)
    return _apply_numpy(xb, rows, tree, root)


def _consecutive(tree: Tree) -> bool:
    """Whether every split node's right child is its left child + 1, as both growers (and
    :func:`_join`) number them: :func:`_apply_numba` steps by adding the side."""
    split = tree.feature >= 0
    return bool(np.array_equal(tree.right[split], tree.left[split] + 1))
