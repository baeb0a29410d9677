"""Turn the stratifying columns into small integer bins for the histogram tree.

* numeric columns: up to 255 quantile bins (exact values when a column has <= 255 of them);
* categorical columns: levels ordered by their mean target, then binned like numbers.
  Ordering levels by mean response makes a single threshold split optimal for regression
  (Fisher 1958; also what LightGBM does), so arbitrary label codes do not hurt the strata;
* missing values: bin 0, so rows with gaps in *other* columns still take part and can be
  split off into strata of their own.
"""

from __future__ import annotations

import functools

import numpy as np

from .._backend import get_backend, njit
from ._tree import N_BINS

MAX_VALUE_BINS = N_BINS - 1
_QUANTILE_SAMPLE = 200_000  # bin edges from a subsample, as HistGradientBoosting does


def bin_numeric(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Bin a float column (NaN = missing) into ``uint8`` codes 0..255."""
    return bin_with_edges(values, numeric_edges(values, rng))


def numeric_edges(values: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
    """The bin edges :func:`bin_numeric` uses for ``values`` (empty for no values): fixed
    once on a table (or a sample of one), they bin any other rows of it the same way.
    ``rng``: where a sample of a long column is drawn from (None: ``default_rng(0)``'s
    first draw, made once per column length)."""
    v = values[~np.isnan(values)]
    if v.size == 0:
        return np.empty(0)
    if v.size <= _QUANTILE_SAMPLE:
        sample = v
    elif rng is None:
        sample = v[_first_sample(v.size)]
    else:
        sample = rng.choice(v, _QUANTILE_SAMPLE, replace=False)
    s = np.sort(sample)  # one sort serves both the distinct values and the quantiles
    new_value = np.r_[True, s[1:] != s[:-1]]
    if np.count_nonzero(new_value) <= MAX_VALUE_BINS:
        # Few distinct values: one bin per value (exact whenever the sample is the column).
        return s[new_value]
    # Upper edges of quantile bins; np.unique drops edges repeated by heavy ties.
    at = np.linspace(0, 1, MAX_VALUE_BINS + 1)[1:-1] * (s.size - 1)
    return np.unique(s[at.astype(np.int64)])


@functools.lru_cache(maxsize=4)
def _first_sample(n: int) -> np.ndarray:
    """The rows ``np.random.default_rng(0).choice(values, _QUANTILE_SAMPLE, replace=False)``
    draws from ``n`` values: the same for every column of a table, so drawn once (a
    permutation of a million positions, 8 ms a column)."""
    rows = np.random.default_rng(0).choice(n, _QUANTILE_SAMPLE, replace=False)
    rows.flags.writeable = False
    return rows


def bin_with_edges(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """``uint8`` bins of a float column (NaN = missing = 0) by :func:`numeric_edges`."""
    out = np.zeros(values.shape[0], np.uint8)
    if edges.size == 0:
        return out
    if get_backend(values.shape[0]) == "numba":
        # One pass, no mask or gathered copy: numpy's searchsorted of unsorted values took
        # 50 ms of a million-row column's 75 (ten such columns per table).
        _bin_kernel(np.ascontiguousarray(values, np.float64),
                    np.ascontiguousarray(edges, np.float64), out)
        return out
    ok = ~np.isnan(values)
    out[ok] = 1 + np.minimum(np.searchsorted(edges, values[ok], side="left"),
                             MAX_VALUE_BINS - 1)
    return out


# Cells of a lookup table per edge over the edges' range (see _bin_kernel).
_CELLS_PER_EDGE = 4


@njit
def _bin_kernel(values, edges, out):  # pragma: no cover - compiled
    # 1 + searchsorted(edges, v, side="left") capped at MAX_VALUE_BINS, 0 for NaN: the
    # number of edges below v.  A lookup table over the edges' range finds the few edges
    # a value must still be compared with: the range is cut into equal cells, and cell(v)
    # = floor((v - first edge) * cells / range) never decreases as v grows (subtracting,
    # multiplying by a positive number and rounding are monotone), so every edge of a
    # lower cell is below v and every edge of a higher cell above it.  A binary search
    # of all the edges per value (numpy's searchsorted) is a chain of ~8 dependent loads.
    top = MAX_VALUE_BINS - 1
    m = edges.shape[0]
    first = edges[0]
    last = edges[m - 1]
    n_cells = _CELLS_PER_EDGE * m
    scale = n_cells / (last - first) if last > first else 0.0
    if not (scale > 0.0 and scale < np.inf):
        scale = 0.0  # one edge, or a range too wide or too narrow: one cell
        n_cells = 1
    # start[c]: how many edges lie in cells below c.
    start = np.zeros(n_cells + 1, np.int64)
    for j in range(m):
        c = min(np.int64((edges[j] - first) * scale), n_cells - 1) if scale > 0.0 else 0
        start[c + 1] += 1
    for c in range(n_cells):
        start[c + 1] += start[c]
    for i in range(values.shape[0]):
        v = values[i]
        if v != v:
            continue  # out is 0 already
        if v <= first:
            k = 0
        elif v > last:
            k = m
        else:
            c = min(np.int64((v - first) * scale), n_cells - 1) if scale > 0.0 else 0
            k = start[c]
            end = start[c + 1]
            while end - k > 8:  # many edges in one cell (heavy ties nearby): halve
                mid = (k + end) >> 1
                if edges[mid] < v:
                    k = mid + 1
                else:
                    end = mid
            while k < end and edges[k] < v:
                k += 1
        out[i] = 1 + min(k, top)


def bin_codes_by_target(codes: np.ndarray, n_levels: int, y: np.ndarray) -> np.ndarray:
    """Bin integer level codes (-1 = missing), ordering levels by their mean ``y``."""
    return bin_codes(codes, level_bins(codes, n_levels, y))


def level_bins(codes: np.ndarray, n_levels: int, y: np.ndarray) -> np.ndarray:
    """The bin (1..255) of each of ``n_levels`` levels, as :func:`bin_codes_by_target`
    makes them: fixed once, they bin any other rows of the column the same way."""
    ok = codes >= 0
    counts = np.bincount(codes[ok], minlength=n_levels)
    sums = np.bincount(codes[ok], weights=y[ok], minlength=n_levels)
    means = np.where(counts > 0, sums / np.maximum(counts, 1), np.inf)
    # Compare means in standard units rounded to 9 digits: equal means stay tied (and keep
    # the levels' own order) whatever the target's offset or scale.
    spread = float(np.std(y[ok])) if ok.any() else 1.0
    means = np.round((means - float(np.mean(y[ok])) if ok.any() else means) / (spread or 1.0), 9)
    # Stable order: ties keep the levels' own order, so results do not depend on chance.
    rank = np.empty(n_levels, np.int64)
    rank[np.argsort(means, kind="stable")] = np.arange(n_levels)
    if n_levels <= MAX_VALUE_BINS:
        return (1 + rank).astype(np.uint8)
    # Many levels: group neighbouring (in mean y) levels into equal-frequency bins.
    cum = np.cumsum(counts[np.argsort(means, kind="stable")])
    level_bin = np.minimum((cum - 1) * MAX_VALUE_BINS // max(cum[-1], 1), MAX_VALUE_BINS - 1)
    return (1 + level_bin[rank]).astype(np.uint8)


def bin_codes(codes: np.ndarray, bins: np.ndarray) -> np.ndarray:
    """``uint8`` bins of level codes (-1 missing = 0) by :func:`level_bins`."""
    out = np.zeros(codes.shape[0], np.uint8)
    ok = codes >= 0
    out[ok] = bins[codes[ok]]
    return out
