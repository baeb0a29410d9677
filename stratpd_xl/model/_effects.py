"""What a fitted model says about one feature or a pair: PD, ICE, ALE, two-way PD and H².

Every function works on a :class:`~stratpd_xl.model._fit.Fitted` model and a grid of the
feature's values (category codes for a categorical feature) and returns numbers in target
units, not centred; :func:`centre` and :func:`row_weights` centre them the one way every
curve of the comparison shares.
"""

from __future__ import annotations

import numpy as np

from ._fit import Fitted

__all__ = [
    "BRUTE_ROWS",
    "ICE_ROWS",
    "accumulated_local_effects",
    "agreement",
    "centre",
    "h_squared",
    "individual_curves",
    "partial_dependence",
    "row_weights",
    "two_way_partial_dependence",
]

#: Rows averaged over where the partial dependence must predict row by row (a yes/no target,
#: or a model with categorical columns): 500 rows x 200 grid points is one call to predict of
#: 100,000 rows (the per-point average of 500 rows varies by about sd / 22).
BRUTE_ROWS = 500
#: Rows whose individual curves are drawn by default.
ICE_ROWS = 50
#: Quantile bins of the accumulated local effects, and the rows they use at most (200 a bin).
ALE_BINS = 100
ALE_ROWS = 20_000


def _method(model: Fitted) -> str:
    """scikit-learn's tree recursion where it gives the model's partial dependence, else brute.

    The recursion is exact and needs no rows, but answers on the decision function's scale
    (log-odds for a classifier: probabilities need the brute force), and its walk through
    a histogram model's trees has no branch for categorical splits: with any categorical
    column in the model it silently returns wrong values (a flat curve here; scikit-learn
    pull request 34554 describes it), so such models get the brute force too.
    """
    return "brute" if model.yes_no or model.categories else "recursion"


def _sample(model: Fitted, size: int, seed: int) -> np.ndarray:
    n = model.x.shape[0]
    if n <= size:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size, replace=False))


def _with_grid(model: Fitted, columns: list[int], grids: list[np.ndarray],
               seed: int) -> np.ndarray:
    """Rows handed to scikit-learn's recursion whose ``columns`` hold exactly the grids' values.

    ``partial_dependence`` makes its grid from the distinct values of X's column when they
    are fewer than ``grid_resolution``, so these rows make its grid ours (scikit-learn 1.7's
    ``custom_values`` says it directly; Pyodide ships 1.6).  The recursion reads nothing else
    of X.
    """
    size = max(len(g) for g in grids)
    rows = model.x[_sample(model, size, seed)].copy()
    size = rows.shape[0]
    if size < max(len(g) for g in grids):  # fewer rows than grid values: repeat rows
        rows = rows[np.resize(np.arange(size), max(len(g) for g in grids))]
    for column, grid in zip(columns, grids, strict=True):
        rows[:, column] = np.resize(np.asarray(grid, float), rows.shape[0])
    return rows


def partial_dependence(model: Fitted, feature: str, grid: np.ndarray, *,
                       seed: int = 0) -> np.ndarray:
    """The model's partial dependence on ``feature`` at each value of ``grid``.

    scikit-learn's ``partial_dependence`` with its tree recursion where that gives the
    model's answer (see :func:`_method`); elsewhere the brute force, the mean prediction of
    ``BRUTE_ROWS`` random rows with the feature set to each grid value, which is what
    scikit-learn's brute force computes, in one call to predict instead of one per grid value
    (200 calls of 1,000 rows took 4.5 s on the busy 2-core machine, one call of 200,000 rows
    under 1 s).

    Parameters
    ----------
    model : Fitted
    feature : str
        A column of the model.
    grid : ndarray
        Distinct feature values, ascending (codes for a categorical feature).
    seed : int
        Picks the rows averaged over by the brute force.

    Returns
    -------
    ndarray
        ``mean_i f(grid_k, x_i,others)`` for each grid value, in target units.
    """
    grid = np.asarray(grid, float)
    if _method(model) == "brute":
        rows = _sample(model, BRUTE_ROWS, seed)
        return individual_curves(model, feature, grid, rows).mean(axis=0)
    from sklearn.inspection import partial_dependence as sk_pd

    j = model.index(feature)
    x = _with_grid(model, [j], [grid], seed)
    result = sk_pd(model.estimator, x, [j], method="recursion", kind="average",
                   grid_resolution=grid.size + 1, percentiles=(0, 1))
    got = np.asarray(result["grid_values"][0], float)
    average = np.asarray(result["average"], float).reshape(-1)
    # Back onto the grid as given (scikit-learn returns its distinct values, sorted).
    return average[np.searchsorted(got, grid)]


def individual_curves(model: Fitted, feature: str, grid: np.ndarray,
                      rows: np.ndarray) -> np.ndarray:
    """Predictions of each of ``rows`` with ``feature`` set to each grid value (ICE).

    One call to predict for all rows x grid values.

    Returns
    -------
    ndarray
        Shape (rows, grid values), target units.
    """
    j = model.index(feature)
    grid = np.asarray(grid, float)
    block = np.repeat(model.x[rows], grid.size, axis=0)
    block[:, j] = np.tile(grid, rows.size)
    return model.predict(block).reshape(rows.size, grid.size)


def accumulated_local_effects(model: Fitted, feature: str, grid: np.ndarray, *,
                              seed: int = 0) -> np.ndarray:
    """The model's accumulated local effects (Apley & Zhu 2020) at each grid value.

    Numeric feature: quantile bins of the rows' values (at most ``ALE_BINS``); each row in
    a bin is predicted at the bin's two edges, in one call to predict for all rows, and the
    average differences are summed from the lowest edge; the result is read at the grid
    values by linear interpolation.  Categorical feature: categories in the column's order;
    the step from one category to the next is the average change in prediction of the rows
    of both when moved from the one to the other.

    Returns
    -------
    ndarray
        Accumulated effect at each grid value (0 at the lowest edge or first category), in
        target units; NaN for a grid value outside the rows' range.
    """
    j = model.index(feature)
    values = model.values(feature)
    rows = np.flatnonzero(~np.isnan(values))
    if rows.size > ALE_ROWS:
        rows = np.sort(np.random.default_rng(seed).choice(rows, ALE_ROWS, replace=False))
    x = values[rows]
    grid = np.asarray(grid, float)
    if model.is_categorical(feature):
        return _categorical_ale(model, j, rows, x.astype(int), grid)
    edges = np.unique(np.quantile(x, np.linspace(0, 1, ALE_BINS + 1)))
    if edges.size < 2:
        return np.zeros(grid.size)
    # Bin k holds (edges[k], edges[k + 1]]; the lowest edge's rows join the first bin.
    k = np.clip(np.searchsorted(edges, x, side="left") - 1, 0, edges.size - 2)
    block = np.concatenate([model.x[rows], model.x[rows]])
    block[:, j] = np.r_[edges[k], edges[k + 1]]
    pred = model.predict(block)
    step = pred[rows.size:] - pred[: rows.size]
    n_bin = np.bincount(k, minlength=edges.size - 1)
    mean_step = np.bincount(k, weights=step, minlength=edges.size - 1) / np.maximum(n_bin, 1)
    at_edges = np.r_[0.0, np.cumsum(mean_step)]
    out = np.interp(grid, edges, at_edges)
    out[(grid < edges[0]) | (grid > edges[-1])] = np.nan
    return out


def _categorical_ale(model: Fitted, j: int, rows: np.ndarray, codes: np.ndarray,
                     grid: np.ndarray) -> np.ndarray:
    n_cats = len(model.categories[model.columns[j]])
    if n_cats < 2:
        return np.zeros(grid.size)
    # Each row predicted one category down and one up (where those exist), in one call.
    down = codes > 0
    up = codes < n_cats - 1
    parts = [(rows[down], codes[down] - 1, codes[down]), (rows[up], codes[up] + 1, codes[up])]
    block = np.concatenate([model.x[r] for r, _, _ in parts] + [model.x[rows]])
    block[:, j] = np.concatenate([c for _, c, _ in parts] + [codes])
    pred = model.predict(block)
    n_down = int(down.sum())
    n_up = int(up.sum())
    own = pred[n_down + n_up:]
    # Step from category k-1 to k: rows of k (own - down) and rows of k-1 (up - own).
    total = np.zeros(n_cats)
    count = np.zeros(n_cats)
    np.add.at(total, codes[down], own[down] - pred[:n_down])
    np.add.at(count, codes[down], 1)
    np.add.at(total, codes[up] + 1, pred[n_down:n_down + n_up] - own[up])
    np.add.at(count, codes[up] + 1, 1)
    steps = np.where(count > 0, total / np.maximum(count, 1), 0.0)
    steps[0] = 0.0
    ale = np.cumsum(steps)
    return ale[grid.astype(int)]


def row_weights(grid: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Each grid value's share of the rows' values ``x``, by linear interpolation.

    ``weights @ curve`` is then the average over the rows of the curve read at each row's
    value (rows outside the grid's range and missing values left out), the same average
    StratPD centres its curve with.
    """
    grid = np.asarray(grid, float)
    x = x[~np.isnan(x)]
    x = x[(x >= grid[0]) & (x <= grid[-1])]
    weights = np.zeros(grid.size)
    if grid.size == 1:
        weights[0] = x.size
        return weights
    k = np.clip(np.searchsorted(grid, x, side="right") - 1, 0, grid.size - 2)
    t = (x - grid[k]) / (grid[k + 1] - grid[k])
    np.add.at(weights, k, 1 - t)
    np.add.at(weights, k + 1, t)
    return weights


def centre(curve: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``curve`` minus its ``weights``-average over the points where it has a value."""
    ok = ~np.isnan(curve) & (weights > 0)
    if not ok.any():
        return curve - np.nanmean(curve) if np.isfinite(curve).any() else curve
    return curve - float(np.average(curve[ok], weights=weights[ok]))


def agreement(a: np.ndarray, b: np.ndarray, weights: np.ndarray, floor: float,
              tolerance: np.ndarray | None = None) -> float:
    """How closely two centred curves agree, from 0 (not at all) to 1 (the same).

    ``1 - 2 ||e|| / max(||a||, ||b||, floor)`` clipped to [0, 1], with ``||v||`` the root of
    the ``weights``-average of v² (each point weighted by the rows it stands for) and ``e``
    the gap between the curves *beyond their uncertainty*: ``max(0, |a - b| - tolerance)``
    at each point (``tolerance`` the half-width both curves' 95 % bands allow together; 0
    when not given).  Curves apart by a tenth of the larger effect beyond their bands score
    0.8, by half of it or more 0; curves within each other's bands score 1.  Two curves
    whose effects are both below ``floor`` (in target units) agree; one flat and one not,
    or one the other's mirror image, give 0 unless the bands hold the difference.
    """
    ok = ~np.isnan(a) & ~np.isnan(b) & (weights > 0)
    if tolerance is not None:
        tolerance = np.nan_to_num(np.asarray(tolerance, dtype=float), nan=0.0)
    if not ok.any():
        return float("nan")
    w = weights[ok] / weights[ok].sum()
    gap = np.abs(a[ok] - b[ok])
    if tolerance is not None:
        gap = np.maximum(0.0, gap - np.maximum(tolerance[ok], 0.0))
    a, b = a[ok], b[ok]

    def norm(v: np.ndarray) -> float:
        return float(np.sqrt(np.sum(w * v * v)))

    scale = max(norm(a), norm(b), floor)
    if scale <= 0:
        return 1.0
    return float(min(1.0, max(0.0, 1.0 - 2.0 * norm(gap) / scale)))


def two_way_partial_dependence(model: Fitted, features: tuple[str, str],
                               grids: tuple[np.ndarray, np.ndarray], *,
                               seed: int = 0) -> np.ndarray:
    """The model's partial dependence on a pair of features over the grid of both.

    Returns
    -------
    ndarray
        Shape (len(grids[0]), len(grids[1])), target units.
    """
    cols = [model.index(f) for f in features]
    g = [np.asarray(v, float) for v in grids]
    if _method(model) == "brute":
        # As for one feature: the mean over BRUTE_ROWS rows, in one call to predict.
        rows = _sample(model, BRUTE_ROWS, seed)
        cells = g[0].size * g[1].size
        block = np.repeat(model.x[rows], cells, axis=0)
        block[:, cols[0]] = np.tile(np.repeat(g[0], g[1].size), rows.size)
        block[:, cols[1]] = np.tile(np.tile(g[1], g[0].size), rows.size)
        pred = model.predict(block).reshape(rows.size, g[0].size, g[1].size)
        return pred.mean(axis=0)
    from sklearn.inspection import partial_dependence as sk_pd

    x = _with_grid(model, cols, g, seed)
    result = sk_pd(model.estimator, x, [tuple(cols)], method="recursion", kind="average",
                   grid_resolution=max(v.size for v in g) + 1, percentiles=(0, 1))
    got = [np.asarray(v, float) for v in result["grid_values"]]
    average = np.asarray(result["average"], float).reshape(got[0].size, got[1].size)
    i0, i1 = (np.searchsorted(got[k], g[k]) for k in range(2))
    return average[np.ix_(i0, i1)]


def _nearest(grid: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Index of the grid value nearest each x."""
    if grid.size == 1:
        return np.zeros(x.size, int)
    mid = (grid[1:] + grid[:-1]) / 2
    return np.searchsorted(mid, x)


def h_squared(model: Fitted, features: tuple[str, str],
              grids: tuple[np.ndarray, np.ndarray], pd2: np.ndarray, *,
              seed: int = 0) -> float:
    """Friedman's H² of the pair: the share of the two-way PD's variance that the two
    one-way PDs do not explain (Friedman & Popescu 2008, eq. 44).

    ``sum_i (PD_jk - PD_j - PD_k)² / sum_i PD_jk²`` over the rows, every PD centred over
    the rows, each row read at its nearest grid cell (rows missing either value left out).
    0: the model adds the two effects; near 1: the effect of one depends on the other.
    """
    a = model.values(features[0])
    b = model.values(features[1])
    ok = ~np.isnan(a) & ~np.isnan(b)
    g0, g1 = (np.asarray(v, float) for v in grids)
    i = _nearest(g0, a[ok])
    k = _nearest(g1, b[ok])
    counts = np.zeros((g0.size, g1.size))
    np.add.at(counts, (i, k), 1)
    if counts.sum() == 0:
        return float("nan")
    pd_a = partial_dependence(model, features[0], g0, seed=seed)
    pd_b = partial_dependence(model, features[1], g1, seed=seed)
    w0, w1 = counts.sum(axis=1), counts.sum(axis=0)
    pd_a = pd_a - np.average(pd_a, weights=w0)
    pd_b = pd_b - np.average(pd_b, weights=w1)
    joint = pd2 - np.average(pd2, weights=counts)
    rest = joint - pd_a[:, None] - pd_b[None, :]
    denominator = float(np.sum(counts * joint**2))
    if denominator <= 0:
        return 0.0
    return float(min(1.0, np.sum(counts * rest**2) / denominator))
