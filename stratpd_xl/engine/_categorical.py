"""CatStratPD for a categorical x_j: within-leaf category contrasts, merged across leaves.

Each leaf L gives mean y per category present in it; only differences between categories
inside a leaf carry information (all else is held equal there).  The paper merges leaves
greedily: it starts from one leaf's delta vector and folds in every leaf that shares a
category with the running vector, re-anchored on a random shared category and weighted by
counts.  The result depends on the merge order and on the random anchors.

We solve the problem that merge approximates, exactly: find leaf offsets a_L and category
effects b_c minimising  sum_i (y_i - a_L(i) - b_c(i))^2  over the rows of leaves holding at
least two categories.  Chaining through shared categories is still what links categories
(the normal equations only couple categories that meet in some leaf), every row weighs
the same, and the answer is unique and order-free.  Eliminating the offsets leaves a
K x K weighted graph-Laplacian system in the category effects (K = number of categories),
solved once: densely for small K; for large K by preconditioned conjugate gradients on the
Laplacian applied as an operator (never formed: one leaf holding thousands of categories
would make it dense, and a sparse LU of it needs gigabytes at 30,000 categories).
Categories that never meet the largest linked group in any leaf cannot be compared with
it and get no estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_DENSE_MAX = 1500  # above this many categories an iterative solve is faster
# Conjugate gradients stop at a relative residual of 1e-10 (effects agree with the direct
# solve to about 8 digits) or after this many steps, when the categories are linked so
# loosely (long chains) that their effects are not worth reporting.
_CG_RTOL = 1e-10
_CG_MAX_STEPS = 20_000


def unique_ints(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True, return_counts=True)`` of whole numbers.

    Cells and strata are numbered densely (below a few times the rows), so a count per
    number finds them in one pass where ``np.unique`` sorts (a trial's 100,000 rows: 6.4 ms
    sorted); other values are sorted.  The same arrays either way.
    """
    values = np.asarray(values).reshape(-1)
    top = int(values.max()) + 1 if values.size else 0
    if values.size == 0 or top > 4 * values.size + 4096 or values.min() < 0:
        u, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
        return u, inverse.reshape(-1), counts
    counts = np.bincount(values, minlength=top)
    u = np.flatnonzero(counts)
    rank = np.zeros(top, np.intp)
    rank[u] = np.arange(u.size)
    return u.astype(values.dtype), rank[values], counts[u]


@dataclass(frozen=True)
class Effects:
    """Per-category effects relative to ``baseline`` (NaN where not estimable)."""

    effect: np.ndarray  # (K,)
    count: np.ndarray  # rows that informed each category's effect
    baseline: int
    n_ignored: int
    n_leaves: int
    # (K, K) sampling covariance of ``effect`` (NaN rows/columns where not estimable), when
    # asked for and the solve is dense; see :func:`contrast_se`.
    cov: np.ndarray | None = None


def category_effects(
    codes: np.ndarray, n_categories: int, y: np.ndarray, leaf: np.ndarray,
    with_cov: bool = False,
) -> Effects:
    """Estimate category effects from rows grouped into leaves.

    Parameters
    ----------
    codes : int array (n,)
        Category code 0..n_categories-1 of every row.
    n_categories : int
        Number of categories (codes may not use all).
    y : float array (n,)
        Target.
    leaf : int array (n,)
        Stratum of every row.
    with_cov : bool
        Also return the effects' covariance (``Effects.cov``) for up to ``_DENSE_MAX``
        categories: the least-squares one, residual variance times the inverse Laplacian.
    """
    n = y.shape[0]
    k = int(n_categories)
    n_leaves = int(leaf.max()) + 1 if n else 0
    cell, w, total, cell_ss = category_cells(leaf.astype(np.int64) * k + codes, y, with_cov)
    return effects_of_cells(cell, w, total / w, cell_ss, k, n, n_leaves, with_cov)


def category_cells(key: np.ndarray, y: np.ndarray, with_ss: bool = True
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The rows reduced to their cells ``key`` (stratum x categories + category): the cells
    (ascending), their rows, their sums of ``y`` (over the rows in row order) and the sums
    of squares about their means (zeros without ``with_ss``)."""
    cell, inverse, w = unique_ints(key)
    total = np.bincount(inverse, weights=y, minlength=cell.size)
    ybar = total / w
    # Squares about the cell means (the rows' own noise), for the covariance.
    cell_ss = (np.bincount(inverse, weights=(y - ybar[inverse]) ** 2, minlength=cell.size)
               if with_ss else np.zeros(cell.size))
    return cell, w, total, cell_ss


def effects_of_cells(cell: np.ndarray, w: np.ndarray, ybar: np.ndarray, cell_ss: np.ndarray,
                     k: int, n: int, n_leaves: int, with_cov: bool = False) -> Effects:
    """:func:`category_effects` from the rows' cells: ``cell`` (stratum x ``k`` + category,
    ascending, strata labelled 0..``n_leaves``-1), rows ``w``, mean target ``ybar``, sums of
    squares about it ``cell_ss``; ``n`` rows in all."""
    effect = np.full(k, np.nan)
    count = np.zeros(k, np.int64)
    link = _linked(cell, w, k, n_leaves)
    if link is None:
        return Effects(effect, count, -1, n, n_leaves)
    ybar, cell_ss = ybar[link.keep], cell_ss[link.keep]
    lj, cj, wf, w_leaf, w_cat = link.lj, link.cj, link.wf, link.w_leaf, link.w_cat
    q = link.cats.size
    y_leaf = np.bincount(lj, weights=wf * ybar, minlength=w_leaf.size) / w_leaf
    rhs = np.bincount(cj, weights=wf * (ybar - y_leaf[lj]), minlength=q)
    # Effects are defined up to a constant: pin the first category (in the column's order).
    free = slice(1, q)
    b = np.zeros(q)
    cov = None
    if 1 < q <= _DENSE_MAX:
        lap_free = _laplacian_free(link)
        b[free] = np.linalg.solve(lap_free, rhs[free])
        if with_cov:
            cov = _covariance(lap_free, b, link.cats, k, lj, cj, wf, ybar, y_leaf, w_leaf,
                              float(cell_ss.sum()), int(w_cat.sum()))
    elif q > 1:
        b[free] = _solve_iteratively(link.wmat, w_leaf, w_cat, rhs)
    effect[link.cats] = b
    count[link.cats] = w_cat.astype(np.int64)
    return Effects(effect, count, int(link.cats[0]), n - int(w_cat.sum()), n_leaves, cov)


@dataclass(frozen=True)
class _Linked:
    """The cells that compare categories: those of leaves holding at least two categories,
    in the linked group of leaves and categories holding the most rows."""

    keep: np.ndarray  # positions of those cells among the cells given
    lj: np.ndarray  # each kept cell's leaf, 0..m-1
    cj: np.ndarray  # each kept cell's category, 0..q-1 (positions in ``cats``)
    cats: np.ndarray  # the categories compared (codes, ascending)
    wf: np.ndarray  # each kept cell's rows, as floats
    w_leaf: np.ndarray  # rows per leaf
    w_cat: np.ndarray  # rows per category
    wmat: object  # (m, q) sparse matrix of the cells' rows


def _linked(cell: np.ndarray, w: np.ndarray, k: int, n_leaves: int) -> _Linked | None:
    """:class:`_Linked` of the cells ``cell`` (stratum x ``k`` + category) with rows ``w``;
    None when no leaf holds two categories."""
    # scipy only here: importing it costs ~0.15 s that numeric curves should not pay.
    from scipy import sparse
    from scipy.sparse.csgraph import connected_components

    c_leaf = cell // k
    c_cat = cell % k
    # Leaves with a single category hold no within-leaf contrast.
    cats_in_leaf = np.bincount(c_leaf, minlength=n_leaves)
    keep = np.flatnonzero(cats_in_leaf[c_leaf] > 1)
    if keep.size == 0:
        return None
    c_leaf, c_cat, w = c_leaf[keep], c_cat[keep], w[keep]
    # Link leaves and categories; keep the linked group holding the most rows.
    leaf_ids, li, _ = unique_ints(c_leaf)
    n_l = leaf_ids.size
    graph = sparse.coo_matrix(
        (np.ones(li.size), (li, n_l + c_cat)), shape=(n_l + k, n_l + k)
    ).tocsr()
    _, comp = connected_components(graph, directed=False)
    comp_rows = np.bincount(comp[li], weights=w)
    main = int(np.argmax(comp_rows))
    in_main = comp[li] == main
    keep, li, c_cat, w = keep[in_main], li[in_main], c_cat[in_main], w[in_main]
    cats, cj, _ = unique_ints(c_cat)
    leaves, lj, _ = unique_ints(li)
    m, q = leaves.size, cats.size
    wf = w.astype(np.float64)
    w_leaf = np.bincount(lj, weights=wf, minlength=m)
    w_cat = np.bincount(cj, weights=wf, minlength=q)
    wmat = sparse.csr_matrix((wf, (lj, cj)), shape=(m, q))
    return _Linked(keep, lj, cj, cats, wf, w_leaf, w_cat, wmat)


def _laplacian_free(link: _Linked) -> np.ndarray:
    """The dense Laplacian of the effects' normal equations, the pinned first category's
    row and column left out."""
    from scipy import sparse

    wmat = link.wmat
    lap = sparse.diags(link.w_cat) - (wmat.T @ sparse.diags(1.0 / link.w_leaf) @ wmat)
    return lap.toarray()[1:, 1:]


def contrast_weights(codes: np.ndarray, n_categories: int, leaf: np.ndarray,
                     direction: np.ndarray) -> np.ndarray | None:
    """Weights ``omega`` of the rows such that ``omega @ y == direction @ effect`` for the
    effects :func:`category_effects` gives any target ``y`` on these strata (``direction``
    over the categories, 0 where a category gets no effect, summing to 0 so that the pinned
    category does not matter); None for more than ``_DENSE_MAX`` categories.

    The effects solve ``L b = r`` with ``r_j`` the sum over category j's rows of ``y`` less
    its leaf's mean, so ``direction @ b = u @ r`` with ``L u = direction``: each row weighs
    its category's ``u`` less its leaf's mean ``u``.  The adjustment's size check measures
    its noise along a contrast this way (``_adjust.Adjustment.size_move``).
    """
    n = codes.shape[0]
    k = int(n_categories)
    omega = np.zeros(n)
    if n == 0:
        return omega
    cell, inverse, w = unique_ints(leaf.astype(np.int64) * k + codes)
    link = _linked(cell, w, k, int(leaf.max()) + 1)
    if link is None or link.cats.size < 2:
        return omega
    if link.cats.size > _DENSE_MAX:
        return None
    u = np.zeros(link.cats.size)
    u[1:] = np.linalg.solve(_laplacian_free(link), direction[link.cats][1:])
    u_leaf = np.bincount(link.lj, weights=link.wf * u[link.cj],
                         minlength=link.w_leaf.size) / link.w_leaf
    at_cell = np.zeros(cell.size)
    at_cell[link.keep] = u[link.cj] - u_leaf[link.lj]
    return at_cell[inverse.reshape(-1)]


def _covariance(
    lap_free: np.ndarray, b: np.ndarray, cats: np.ndarray, k: int, lj: np.ndarray,
    cj: np.ndarray, wf: np.ndarray, ybar: np.ndarray, y_leaf: np.ndarray,
    w_leaf: np.ndarray, within_ss: float, n_used: int,
) -> np.ndarray:
    """Least-squares covariance of the effects (pinned category 0), in all K categories.

    The residual variance is the model's: squares about the cell means plus the cells'
    misfit to leaf offset + category effect, over the rows less the fitted parameters.
    """
    offset = y_leaf - np.bincount(lj, weights=wf * b[cj], minlength=w_leaf.size) / w_leaf
    misfit = float(np.sum(wf * (ybar - offset[lj] - b[cj]) ** 2))
    dof = max(n_used - w_leaf.size - (b.size - 1), 1)
    sigma2 = (within_ss + misfit) / dof
    inner = np.zeros((b.size, b.size))
    inner[1:, 1:] = sigma2 * np.linalg.inv(lap_free)
    cov = np.full((k, k), np.nan)
    cov[np.ix_(cats, cats)] = inner
    return cov


def contrast_se(cov: np.ndarray, i: int, j: int) -> float:
    """Standard error of ``effect[i] - effect[j]`` from :attr:`Effects.cov`."""
    return float(np.sqrt(max(cov[i, i] + cov[j, j] - 2.0 * cov[i, j], 0.0)))


def _solve_iteratively(
    wmat: object, w_leaf: np.ndarray, w_cat: np.ndarray, rhs: np.ndarray
) -> np.ndarray:
    """Effects of categories 1..q-1 (category 0 pinned at 0) by Jacobi-preconditioned CG.

    The Laplacian ``diag(w_cat) - W' diag(1/w_leaf) W`` is applied as two sparse products,
    so memory stays proportional to the number of (leaf, category) cells.
    """
    from scipy.sparse.linalg import LinearOperator, cg

    from ..errors import StratPDInputError

    q = w_cat.size
    wsq = wmat.multiply(wmat)  # type: ignore[attr-defined]
    diag = (w_cat - np.asarray(wsq.T @ (1.0 / w_leaf)).reshape(-1))[1:]
    full = np.zeros(q)

    def apply(v: np.ndarray) -> np.ndarray:
        full[1:] = v.reshape(-1)
        out = w_cat * full - wmat.T @ ((wmat @ full) / w_leaf)  # type: ignore[attr-defined]
        return out[1:]

    op = LinearOperator((q - 1, q - 1), matvec=apply, dtype=np.float64)
    precondition = LinearOperator((q - 1, q - 1), matvec=lambda v: v.reshape(-1) / diag,
                                  dtype=np.float64)
    scale = float(np.linalg.norm(rhs[1:])) or 1.0
    solution, info = cg(op, rhs[1:] / scale, rtol=_CG_RTOL, maxiter=_CG_MAX_STEPS,
                        M=precondition)
    if info != 0:
        raise StratPDInputError(
            f"the {q:,} categories are linked too loosely through the strata to estimate "
            "their effects; group rare categories together or analyse fewer of them"
        )
    return solution * scale
