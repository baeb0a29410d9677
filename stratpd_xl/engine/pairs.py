"""Two columns at a time, from the data alone: an interaction ranking and a two-way surface.

:func:`interactions` measures how much the effect of one column changes with another (0
when the two add up); :func:`stratpd2` estimates the two-way partial dependence of the
target on two columns (experimental).  Both stratify like StratPD: one tree per feature on
every other column; the other feature's groups then split the strata further.  The method
and its evidence are in ``docs/method.md`` ("Interactions").
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pandas as pd

from .. import _backend
from .._backend import one_blas_thread
from ..errors import StratPDInputError, argument
from ..params import PARAMETERS, Settings, column_arguments
from ._finish import _numeric_x_out, _params
from ._fit import _table
from ._groups import (
    MAX_GROUPS,
    Effects,
    Groups,
    groups_of,
    leaf_halves,
    local_reach,
    main_effect,
    pooled_reads,
    short_number,
    spread,
)
from ._leaks import merged
from ._stratify import stratify
from ._table import (
    CATEGORICAL,
    NUMERIC,
    Table,
    as_float,
    category_codes,
    column_label,
    require_column,
)
from ._warnings import _leaks_of
from .api import _roles

__all__ = ["interactions", "stratpd2"]

_DEFAULT: dict[str, Any] = {name: p.default for name, p in PARAMETERS.items()}
Progress = Callable[[int, int, str], None]
# Random splits of the strata into halves for the noise floor (more: steadier, slower).
NOISE_SPLITS = 4
# The spread between group curves that counts is what exceeds this many times its noise.
NOISE_MARGIN = 2.0
# The strength's denominator is at least this share of the target's variance.
FLOOR_SHARE = 0.005
# Most categories on a surface's axis.
MAX_AXIS_CATEGORIES = 40


def _effects(table: Table, feature: str, p: Settings) -> tuple[Effects, np.ndarray] | None:
    """The feature's strata over the rows that have it, or None when there are too few."""
    kind = table.kinds[feature]
    if kind == NUMERIC:
        value = as_float(table.frame[feature])
        present = ~np.isnan(value)
        n_categories = 0
    else:
        value, cats = table.category_codes(feature)
        present = value >= 0
        n_categories = len(cats)
    rows = np.flatnonzero(present)
    if rows.size < 4 * p.min_samples_leaf:
        return None
    y = table.y[rows]
    # The same seed per feature as its StratPD curve, so the strata are the curve's.
    rng = np.random.default_rng(p.random_state)
    leaf = stratify(table.strata_matrix(feature, rows), y, p.min_samples_leaf, rng,
                    honest=p.honest)
    # Rows in ascending x from here on: every subset of them is then sorted too, which makes
    # the many curve reads (interpolation) and sorts of the group curves several times
    # cheaper.
    order = np.argsort(value[rows], kind="stable")
    rows, y, leaf = rows[order], y[order], leaf[order]
    return Effects(kind, value[rows], y, leaf, p.min_slopes_per_x, n_categories), rows


def _names(table: Table, features: Iterable[str] | None) -> list[str]:
    names = list(table.columns) if features is None else [str(f) for f in features]
    for f in names:
        require_column(table.all_columns, f, "feature")
    return list(dict.fromkeys(f for f in names if f != table.target))


@one_blas_thread()
def interactions(
    data: pd.DataFrame,
    target: str,
    features: Iterable[str] | None = None,
    *,
    min_samples_leaf: int = _DEFAULT["min_samples_leaf"],
    min_slopes_per_x: int = _DEFAULT["min_slopes_per_x"],
    random_state: int | None = _DEFAULT["random_state"],
    honest: bool = _DEFAULT["honest"],
    bands: int = _DEFAULT["bands"],
    max_features: int = _DEFAULT["max_features"],
    positive: Any = None,
    progress: Progress | None = None,
    exclude: str | Iterable[str] | None = None,
) -> pd.DataFrame:
    """Model-free ranking of pairs of columns by how much one's effect changes with the other.

    For a pair (a, b): the StratPD curve (CatStratPD effects) of ``a`` is estimated in each
    group of ``b`` (its levels, or ``bands`` bands of its values) with ``a``'s strata, and
    compared with ``a``'s curve over all rows, each centred on the group's rows.  The mean
    square of the differences, less twice what estimation noise alone gives (measured by
    splitting the strata into random halves), is the interaction's size I_ab; it is
    averaged over the two directions (a in groups of b, b in groups of a), times the share
    of it that remains with the other paired columns held fixed (:func:`held_shares`: 0 for
    a column that only moves with an interacting one), and scaled like Friedman's H^2::

        strength = I / (I + M_a + M_b + 0.005 var(y))

    where M_a is the mean square of a's own (centred) curve over the rows; the last term
    keeps two columns that barely move the target from showing a large share of almost
    nothing (where Friedman's H^2 is unstable).  0 means the effects add up; 1 would mean
    all of the pair's effect is interaction.  Grouping by bands
    sees the part of the interaction between bands (about 94 % of x1 x2 with four bands
    of a uniform x2).

    Parameters
    ----------
    data, target, features
        As for :func:`stratpd_xl.analyse`; ``features`` default every other column.
    min_samples_leaf, min_slopes_per_x, random_state, honest
        As for :func:`stratpd_xl.stratpd` (``adjust`` does not apply: the target is used
        as it is).
    bands : int, default 4
        Bands of a numeric column used as groups; a categorical column with more than 12
        levels is not used as groups (its pairs use the other direction only).
    max_features : int, default 10
        Pair only this many features: those whose values move the target most inside their
        strata (interactions included, so a feature whose effect averages out is kept).
    positive : optional
        The value of a yes/no target that counts as 1 (see :func:`stratpd_xl.stratpd`).
    progress : callable(done, total, label), optional
        Called before each step that takes time (each feature's strata, each paired
        feature's fits, each pair), with the steps done and the steps in all, and once at
        the end with ``done == total`` (the features looked at).
    exclude : str or list of str, optional
        Columns left out of the strata and of the pairs (see :func:`stratpd_xl.stratpd`).

    Returns
    -------
    DataFrame
        One row per pair, strongest first: ``feature_1``, ``feature_2``, ``strength`` (0 to
        1), ``size`` (the root mean square of the interaction part, target units).
        ``attrs``: ``method``, ``target``, ``n_rows``, ``params``, ``paired`` (the features
        paired, by local effect), ``skipped`` (feature -> reason) and ``warnings``
        (columns that restate the target among them: see :func:`stratpd_xl.stratpd`).

    Raises
    ------
    StratPDInputError
        Fewer than two usable features, or an unknown column.
    """
    p = Settings.make(min_samples_leaf=min_samples_leaf, min_slopes_per_x=min_slopes_per_x,
                      random_state=random_state, honest=honest, bands=bands,
                      max_features=max_features, exclude=exclude)
    # interactions(d, "price", "area"): one feature, not the letters a, r, e, a.
    listed = column_arguments(features)
    named = None if listed is None else [column_label(f, role="feature") for f in listed]
    table = _table(data, target, positive, keep=[*(named or ()), *p.keep], exclude=p.exclude,
                   roles=_roles(*(named or ())))
    names = _names(table, named)
    if len(names) < 2:
        raise StratPDInputError(
            "interactions need at least two columns besides the target; name two or more "
            "features"
        )
    table.bin_columns(list(table.columns))
    found: dict[str, tuple[Effects, np.ndarray]] = {}
    skipped: dict[str, str] = {}
    # Progress counts every step that takes time: each feature's strata, each paired
    # feature's fits, each pair (the pairs took 40 s on a wide table behind a bar that
    # already said "4/5, about 0 s left").
    n_paired = min(len(names), p.max_features)
    steps = len(names) + n_paired + n_paired * (n_paired - 1) // 2

    def told(first: int, labels: list[str]) -> Callable[[int], None] | None:
        if progress is None:
            return None
        return lambda i: progress(min(first + i, steps - 1), steps, labels[i])

    for f, made in zip(names, _in_order(table, [lambda f=f: _effects(table, f, p)
                                                for f in names], told(0, names)),
                       strict=True):
        if made is None:
            skipped[f] = (f"fewer than {4 * p.min_samples_leaf} rows have a value; add rows "
                          "or lower min_samples_leaf")
        else:
            found[f] = made
    reach = {f: local_reach(e) for f, (e, _) in found.items()}
    paired = sorted(found, key=lambda f: -reach[f])[: p.max_features]
    if len(paired) < 2:
        raise StratPDInputError(
            "fewer than two features could be stratified ("
            + "; ".join(f'"{f}": {why}' for f, why in skipped.items())
            + "); add rows or lower min_samples_leaf"
        )
    groups: dict[str, Groups | None] = {}
    for f in paired:
        try:
            groups[f] = groups_of(table.frame[f], f, p.bands, kind=table.kinds[f])
        except StratPDInputError:
            groups[f] = None  # too many levels, or one value: not a grouping column
    rng = np.random.default_rng(p.random_state)
    # The random halves in the features' order, before the fits run two at a time.
    halves_of = {f: leaf_halves(found[f][0].leaf, rng, NOISE_SPLITS) for f in paired}

    def fit(f: str) -> tuple[Any, ...]:
        eff, _ = found[f]
        pooled = eff.fit(np.arange(eff.y.size))
        halves = halves_of[f]
        grid = pooled[0] if pooled is not None else np.zeros(0)
        pooled_halves = [[eff.refit(np.flatnonzero(h), grid), eff.refit(np.flatnonzero(~h), grid)]
                         for h in halves]
        # A column that only moves with one that interacts (x4 = 0.85 x1 + noise beside
        # x1 x x2) splits a's strata much as the interacting one does: its credit is the
        # share of the strata's slopes it explains with the other paired columns held fixed.
        held = held_shares(table, eff, found[f][1], f, paired, groups)
        return (pooled, main_effect(eff, pooled), halves, pooled_halves,
                pooled_reads(eff, pooled, pooled_halves), held)

    fits = dict(zip(paired, _in_order(table, [lambda f=f: fit(f) for f in paired],
                                      told(len(names), [f"fitting {f}" for f in paired])),
                    strict=True))
    held = {f: fits[f][5] for f in paired}
    min_rows = 2 * p.min_samples_leaf
    # Two columns that barely move the target must not show a large share of almost nothing
    # (Friedman's H^2 is unstable there): the denominator never falls below a small share
    # of the target's variance.
    floor = FLOOR_SHARE * float(np.var(table.y))

    def pair(a: str, b: str) -> dict[str, Any] | None:
        sizes = []
        for j, k in ((a, b), (b, a)):
            gk = groups[k]
            if gk is None:
                continue
            eff, rows = found[j]
            pooled, _, halves, pooled_halves, reads, _ = fits[j]
            if pooled is None:
                continue
            s = spread(eff, pooled, gk.codes[rows], len(gk.labels), min_rows, halves,
                       pooled_halves, reads)
            if math.isfinite(s.between):
                # Only the spread beyond what noise explains with room to spare counts:
                # without interaction the spread is noise x a chance factor that rarely
                # exceeds 2 (a noise-sized residue would be a large share of two tiny
                # effects).
                sizes.append(max(0.0, s.between - NOISE_MARGIN * s.noise))
        if not sizes:
            return None
        # An interaction is symmetric (b changes a's slope as a changes b's): where b's
        # groups add nothing to a's slopes beyond the other columns', the spread seen the
        # other way round is a correlated column's effect leaking into b's strata.
        size = float(np.mean(sizes)) * min(held[a].get(b, 1.0), held[b].get(a, 1.0))
        total = size + fits[a][1] + fits[b][1] + floor
        return {
            "feature_1": a, "feature_2": b,
            "strength": size / total if total > 0 else 0.0,
            "size": math.sqrt(size) * table.y_scale,
        }

    pairs = list(itertools.combinations(paired, 2))
    rows_out = [r for r in _in_order(table, [lambda ab=ab: pair(*ab) for ab in pairs],
                                     told(len(names) + n_paired,
                                          [f"{a} x {b}" for a, b in pairs]))
                if r is not None]
    if progress is not None:
        progress(len(names), len(names), "")  # the end: how many features were looked at
    result = pd.DataFrame(rows_out, columns=["feature_1", "feature_2", "strength", "size"])
    result = result.sort_values("strength", ascending=False, kind="stable").reset_index(
        drop=True)
    # Columns restating the target erase every effect, interactions too (engine/_leaks.py).
    leaks = merged(leak for f in paired
                   for leak in _leaks_of(table, f, found[f][1], found[f][0].y,
                                         found[f][0].leaf, None))
    warnings_ = [leak.note(table.target) for leak in leaks]
    left = [f for f in found if f not in paired]
    if left:
        warnings_.append(
            f"{len(left)} feature(s) with the smallest local effects were not paired "
            f"({', '.join(left[:8])}{' ...' if len(left) > 8 else ''}); raise max_features "
            "to pair them too"
        )
    many = [f for f in paired if groups[f] is None and table.kinds[f] == CATEGORICAL]
    if many:
        warnings_.append(
            f"{', '.join(many)}: more than {MAX_GROUPS} levels, so the pairs with "
            f"{'it' if len(many) == 1 else 'them'} look only at how "
            f"{'its' if len(many) == 1 else 'their'} effect changes with the other column"
        )
    result.attrs = {
        "method": "StratPD interactions",
        "target": table.target,
        "n_rows": table.n_rows,
        "params": _params(p, table, interactions=True),
        "left_out": dict(table.left_out),
        "paired": paired,
        "skipped": skipped,
        "warnings": warnings_,
        **table.yes_no,
    }
    return result


def _in_order(table: Table, calls: list[Callable[[], Any]],
              before: Callable[[int], None] | None) -> list[Any]:
    """The calls' results in order, ``before(i)`` called (in this thread) before each.

    On large tables two run at a time: each pair's (and feature's) numbers depend on it
    alone, and their numpy and numba work mostly runs without the GIL.  Calls not yet
    started are cancelled when ``before`` raises (a progress callback that stops).
    """
    if (len(calls) < 2 or table.y.size < _backend.PARALLEL_ROWS
            or not _backend.can_start_threads()):
        out = []
        for i, call in enumerate(calls):
            if before is not None:
                before(i)
            out.append(call())
        return out
    pool = ThreadPoolExecutor(max_workers=2)
    try:
        futures = [pool.submit(call) for call in calls]
        out = []
        for i, future in enumerate(futures):
            if before is not None:
                before(i)
            out.append(future.result())
        return out
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def held_shares(table: Table, eff: Effects, rows: np.ndarray, feature: str,
                paired: list[str], groups: dict[str, Groups | None]) -> dict[str, float]:
    """For each paired column b, how much of its interaction with ``feature`` remains with
    the other paired columns held fixed, 0 to 1 (1 for a categorical feature: not measured).

    Inside each stratum the feature's slope (least squares of y on x) is what an interaction
    changes.  Its variation over the strata (weighted by x's sum of squares in each) is
    explained by the paired columns' groups (each stratum's share of rows in each group, and
    a numeric column's mean in it),
    credited in turn: the column adding most to what those before it explain goes first,
    and its share is what it adds over what it explains alone, both less what as many
    columns of noise would explain.  About 1 for a column that interacts, about 0 for one
    that only moves with an interacting column (x4 = 0.85 x1 + noise beside x1 x x2 had
    0.96 against the true pair's 0.99).  Columns that are not paired (``max_features``) are
    not held.
    """
    out: dict[str, float] = {}
    if eff.kind != NUMERIC:
        return out
    leaf, x, y = eff.leaf, eff.value, eff.y
    n_leaves = int(leaf.max()) + 1
    count = np.bincount(leaf, minlength=n_leaves).astype(float)
    mx = np.bincount(leaf, weights=x, minlength=n_leaves) / np.maximum(count, 1)
    my = np.bincount(leaf, weights=y, minlength=n_leaves) / np.maximum(count, 1)
    dx = x - mx[leaf]
    sxx = np.bincount(leaf, weights=dx * dx, minlength=n_leaves)
    sxy = np.bincount(leaf, weights=dx * (y - my[leaf]), minlength=n_leaves)
    used = sxx > 1e-12 * max(float(sxx.max()), 1e-300)
    slope = sxy[used] / sxx[used]
    root_w = np.sqrt(sxx[used] / sxx[used].sum())
    shares = {}
    for f in paired:
        g = groups.get(f)
        if f == feature or g is None or len(g.labels) < 2:
            continue
        codes = g.codes[rows]
        ok = codes >= 0
        k = len(g.labels)
        cells = np.bincount(leaf[ok] * k + codes[ok], minlength=n_leaves * k).reshape(
            n_leaves, k)
        block = (cells / np.maximum(count, 1)[:, None])[:, 1:]
        if table.kinds[f] == NUMERIC:
            # Its mean in the stratum too: bands alone leave the values inside a band to
            # whichever column moves with them.
            v = as_float(table.frame[f])[rows]
            have = np.isfinite(v)
            v = np.where(have, v, v[have].mean() if have.any() else 0.0)
            block = np.column_stack([block, np.bincount(leaf, weights=v, minlength=n_leaves)
                                     / np.maximum(count, 1)])
        shares[f] = block[used]
    if not shares or slope.size < 3 * (sum(s.shape[1] for s in shares.values()) + 1):
        return {f: 1.0 for f in shares}

    total = float(np.sum(((slope - root_w**2 @ slope) * root_w) ** 2))

    known: dict[tuple[str, ...], float] = {}

    def explained(names: list[str]) -> float:
        if not names:
            return 0.0
        if tuple(names) in known:  # a column alone: asked in the first round and again
            return known[tuple(names)]
        d = np.column_stack([shares[f] for f in names])
        d = (d - root_w**2 @ d) * root_w[:, None]
        s = (slope - root_w**2 @ slope) * root_w
        beta = np.linalg.lstsq(d, s, rcond=1e-10)[0]
        known[tuple(names)] = float(np.sum((d @ beta) ** 2))
        return known[tuple(names)]

    # What p columns of pure noise would explain of the slopes (their residual variance
    # over the strata's effective number, the weights being uneven).
    every = list(shares)
    width = sum(shares[f].shape[1] for f in every)
    n_eff = 1.0 / float(np.sum(root_w**4))
    per_column = max(total - explained(every), 0.0) / max(n_eff - width - 1, 1.0)
    # Columns credited in turn, the one adding most first: a column that only moves with
    # one already credited adds (about) nothing beyond it.
    chosen: list[str] = []
    now = 0.0
    while len(chosen) < len(every):
        gains = {f: explained([*chosen, f]) - now for f in every if f not in chosen}
        b = max(gains, key=lambda f: gains[f])
        noise = per_column * shares[b].shape[1]
        alone = explained([b]) - noise
        out[b] = float(np.clip((gains[b] - noise) / alone, 0.0, 1.0)) if alone > 0 else 1.0
        chosen.append(b)
        now += gains[b]
    return out


# --------------------------------------------------------------------------- surface


def _axis_points(eff: Effects, grid: int) -> np.ndarray:
    """Where the surface is read along the curve axis: quantiles of x, or the categories.

    The middles of ``grid`` equal shares of the rows, not the extremes: a band's curve
    rarely reaches the overall minimum or maximum.
    """
    if eff.kind == NUMERIC:
        return np.unique(np.quantile(eff.value, (np.arange(grid) + 0.5) / grid))
    return np.unique(eff.value)


def _nearest(eff: Effects, points: np.ndarray) -> np.ndarray:
    """Each row's axis point: the nearest grid x (numeric), or its category."""
    if eff.kind != NUMERIC:
        return np.searchsorted(points, eff.value)
    mids = (points[1:] + points[:-1]) / 2
    return np.searchsorted(mids, eff.value)


@one_blas_thread()
def stratpd2(
    data: pd.DataFrame,
    target: str,
    f1: str,
    f2: str,
    *,
    min_samples_leaf: int = _DEFAULT["min_samples_leaf"],
    min_slopes_per_x: int = _DEFAULT["min_slopes_per_x"],
    random_state: int | None = _DEFAULT["random_state"],
    honest: bool = _DEFAULT["honest"],
    grid: int = _DEFAULT["grid"],
    positive: Any = None,
    exclude: str | Iterable[str] | None = None,
    keep: str | Iterable[str] | None = None,
) -> pd.DataFrame:
    """Two-way partial dependence of ``target`` on ``f1`` and ``f2``, from the data alone.

    Experimental (see ``docs/method.md``).  The rows are stratified on every column but
    ``f1`` (``f2`` included); the strata are split further by ``grid`` bands of ``f2``
    (its levels when categorical).  Inside each, the changes of y over ``f1`` give f1's
    curve in that band; its differences from f1's curve over all rows, band to band, are
    the mixed second differences, which summed up give the interaction part, centred as
    ALE's second-order effect is (zero mean over each band and over each f1 point).  The
    surface is f1's curve + f2's curve (each StratPD/CatStratPD) + that interaction.  When
    ``f1`` is categorical and ``f2`` numeric, the roles swap (the numeric one gives the
    curve); the columns keep the names given.

    Parameters
    ----------
    data, target
        As for :func:`stratpd_xl.stratpd`.
    f1, f2 : str
        Two different columns, numeric or categorical.
    grid : int, default 10
        Points along a numeric f1 (the middle quantiles of ``grid`` equal shares of its
        rows) and bands of a numeric f2.
    min_samples_leaf, min_slopes_per_x, random_state, honest, positive, exclude
        As for :func:`stratpd_xl.stratpd`.
    keep : str or list of str, optional
        Columns to stratify on even if they look like row numbers or ids.

    Returns
    -------
    DataFrame
        One row per cell, ``x2`` slowest: ``x1`` (f1's value at the grid point, or its
        category), ``x2`` (f2's band, read at its median, or its category), ``band``
        (f2's band or category as text), ``pd`` (the surface, averaging 0 over the rows),
        ``interaction`` (its interaction part), ``n_rows`` (rows nearest the cell) and
        ``thin`` (fewer than ``min_samples_leaf`` rows, or no estimate).  ``attrs``:
        ``method``, ``target``, ``feature_1``, ``feature_2``, ``kind_1``, ``kind_2``,
        ``n_rows``, ``n_used``, ``interaction_share`` (mean square of the interaction part
        over that of the surface, over the cells with data; not corrected for noise),
        ``params``, ``warnings`` (where the data are thin).

    Raises
    ------
    StratPDInputError
        The same column twice, too few rows for the grid, a categorical f2 with more than
        12 levels (or f1 with more than 40), or no curve of f1 in two bands.
    """
    p = Settings.make(min_samples_leaf=min_samples_leaf, min_slopes_per_x=min_slopes_per_x,
                      random_state=random_state, honest=honest, grid=grid, exclude=exclude,
                      keep=keep or ())
    f1, f2 = str(f1), str(f2)
    if f1 == f2:
        raise StratPDInputError(
            f'a two-way surface needs two different columns; "{f1}" is given twice: choose '
            "another column for the second feature"
        )
    table = _table(data, target, positive, keep=[f1, f2, *p.keep], exclude=p.exclude,
                   roles=_roles(f1, f2))
    for f in (f1, f2):
        require_column(table.all_columns, f, "feature")
        if f == table.target:
            raise StratPDInputError(f'"{f}" is the target; choose another column as feature')
    swap = table.kinds[f1] == CATEGORICAL and table.kinds[f2] == NUMERIC
    a, b = (f2, f1) if swap else (f1, f2)
    made_a = _effects(table, a, p)
    made_b = _effects(table, b, p)
    if made_a is None or made_b is None:
        raise StratPDInputError(
            f'too few rows have values in "{a}" and "{b}" for a two-way surface; add rows or '
            "lower min_samples_leaf"
        )
    eff_a, rows_a = made_a
    eff_b, rows_b = made_b
    gb = groups_of(table.frame[b].iloc[rows_a].reset_index(drop=True), b, p.grid,
                   kind=table.kinds[b])
    points = _axis_points(eff_a, p.grid)
    if eff_a.kind == CATEGORICAL and points.size > MAX_AXIS_CATEGORIES:
        raise StratPDInputError(
            f'"{a}" has {points.size} categories, too many for a surface; choose a column with '
            f"at most {MAX_AXIS_CATEGORIES} or group its levels first"
        )
    n_cells = points.size * len(gb.labels)
    used = int((gb.codes >= 0).sum())
    if used < n_cells * p.min_samples_leaf:
        fewer = max(3, int(math.sqrt(used / p.min_samples_leaf)))
        raise StratPDInputError(
            f"{used:,} rows are too few for a {points.size} x {len(gb.labels)} surface (about "
            f"{used // max(n_cells, 1)} per cell, fewer than {argument('min_samples_leaf')} = "
            f"{p.min_samples_leaf}); use {argument('grid')} = {min(fewer, p.grid - 1)} or "
            "less, or add rows"
        )
    all_a = np.arange(eff_a.y.size)
    pooled_a = eff_a.fit(all_a)
    pooled_b = eff_b.fit(np.arange(eff_b.y.size))
    if pooled_a is None or pooled_b is None:
        raise StratPDInputError(
            f'"{a if pooled_a is None else b}" gives no curve (it varies too little inside '
            "the strata); lower min_slopes_per_x or min_samples_leaf, or add rows"
        )
    # Main effects, each centred on its rows (as every StratPD curve is).
    row_a = eff_a.row_values(pooled_a, all_a)
    centre_a = float(np.nanmean(row_a))
    main_a = eff_a.at(pooled_a, points) - centre_a
    row_b = eff_b.row_values(pooled_b, np.arange(eff_b.y.size))
    row_b = row_b - np.nanmean(row_b)
    # f2's effect of each band: its curve averaged over the band's rows (of f2's rows).
    at_a = np.full(table.y.size, -1)
    at_a[rows_a] = np.arange(rows_a.size)  # each table row's place among f1's rows
    band_b = np.where(at_a[rows_b] >= 0, gb.codes[np.maximum(at_a[rows_b], 0)], -1)
    n_bands = len(gb.labels)
    main_b = np.array([np.nanmean(row_b[band_b == g]) if np.any(band_b == g) else np.nan
                       for g in range(n_bands)])
    nearest = _nearest(eff_a, points)
    inter = np.full((points.size, n_bands), np.nan)
    counts = np.zeros((points.size, n_bands), np.int64)
    made = 0
    for g in range(n_bands):
        rows = np.flatnonzero(gb.codes == g)
        counts[:, g] = np.bincount(nearest[rows], minlength=points.size)
        fitted = eff_a.fit(rows) if rows.size >= 2 * p.min_samples_leaf else None
        if fitted is None:
            continue
        own = eff_a.row_values(fitted, rows) - eff_a.row_values(pooled_a, rows)
        ok = ~np.isnan(own)
        if not ok.any():
            continue
        made += 1
        inter[:, g] = (eff_a.at(fitted, points) - eff_a.at(pooled_a, points)
                       - float(own[ok].mean()))
    if made < 2:
        raise StratPDInputError(
            f'"{a}" has a curve in fewer than two bands of "{b}"; use a smaller grid or add rows'
        )
    # ALE's second centring: no part of f1's own effect left in the interaction.
    w = np.where(np.isnan(inter), 0.0, counts.astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        by_point = np.nansum(np.nan_to_num(inter) * w, axis=1) / w.sum(axis=1)
    inter = inter - np.nan_to_num(by_point)[:, None]
    surface = main_a[:, None] + main_b[None, :] + inter
    ok = ~np.isnan(surface) & (counts > 0)
    weights = np.where(ok, counts, 0).astype(float)
    if weights.sum() > 0:
        surface = surface - float(np.nansum(surface * weights) / weights.sum())
    share = (float(np.nansum(inter**2 * weights) / np.nansum(surface**2 * weights))
             if np.nansum(surface**2 * weights) > 0 else 0.0)
    thin = np.isnan(surface) | (counts < p.min_samples_leaf)
    # Axis values in the columns' own terms.
    if eff_a.kind == NUMERIC:
        a_values: Any = _numeric_x_out(points, table.frame[a])
    else:
        a_values = np.asarray(category_codes(table.frame[a])[1], dtype=object)[points]
    if table.kinds[b] == NUMERIC:
        # A band is read at the median of its rows (a value group at its value).
        b_raw = as_float(table.frame[b].iloc[rows_a].reset_index(drop=True))
        medians = np.array([np.median(b_raw[gb.codes == g]) for g in range(n_bands)])
        b_values: Any = _numeric_x_out(medians, table.frame[b])
    else:
        b_values = np.array(gb.labels, dtype=object)
    ia, ib = np.meshgrid(np.arange(points.size), np.arange(n_bands), indexing="ij")
    ia, ib = ia.T.reshape(-1), ib.T.reshape(-1)  # the band (x2) varies slowest
    out = {
        "x1": np.asarray(a_values)[ia],
        "x2": np.asarray(b_values)[ib],
        "band": np.array(gb.labels, dtype=object)[ib],
        "pd": surface[ia, ib] * table.y_scale,
        "interaction": inter[ia, ib] * table.y_scale,
        "n_rows": counts[ia, ib],
        "thin": thin[ia, ib],
    }
    if swap:  # back to the order given: f2 (numeric) was the curve's axis
        out = {"x1": out["x2"], "x2": out["x1"],
               "band": np.array([short_number(float(v)) for v in points[ia]], dtype=object),
               **{k: v for k, v in out.items() if k not in ("x1", "x2", "band")}}
    result = pd.DataFrame(out)
    # Columns restating the target flatten the surface as they do a curve (engine/_leaks.py).
    leaks = merged(leak for eff, rows, f in ((eff_a, rows_a, a), (eff_b, rows_b, b))
                   for leak in _leaks_of(table, f, rows, eff.y, eff.leaf, None))
    warnings_ = [leak.note(table.target) for leak in leaks]
    warnings_ += _thin_note(result, f1, f2, p.min_samples_leaf)
    result.attrs = {
        "method": "StratPD2 (experimental)",
        "target": table.target,
        "feature_1": f1,
        "feature_2": f2,
        "kind_1": table.kinds[f1],
        "kind_2": table.kinds[f2],
        "n_rows": table.n_rows,
        "n_used": used,
        "interaction_share": share,
        "params": _params(p, table, interactions=True),
        "left_out": dict(table.left_out),
        "warnings": warnings_,
        **table.yes_no,
    }
    return result


def _thin_note(result: pd.DataFrame, f1: str, f2: str, min_rows: int) -> list[str]:
    """A sentence on where the surface rests on few rows (or on none)."""
    thin = result["thin"].to_numpy(bool)
    if not thin.any():
        return []
    empty = int(result["pd"].isna().sum())
    worst = result[thin].groupby("band", sort=False).size().sort_values(ascending=False)
    places = []
    for band in worst.index[:2]:
        cells = result[thin & (result["band"] == band).to_numpy()]
        x = cells["x1"]
        if pd.api.types.is_numeric_dtype(x.dtype) and len(cells) > 1:
            where = f"{f1} {short_number(float(x.min()))} to {short_number(float(x.max()))}"
        else:
            where = f"{f1} = " + ", ".join(str(v) for v in x.iloc[:3])
        places.append(f"{f2} = {band} with {where}")
    none = f", {empty} with no estimate" if empty else ""
    return [
        f"the data are thin in {int(thin.sum())} of {len(result)} cells (fewer than "
        f"{min_rows} rows{none}; thin = True), most at {' and at '.join(places)}: read "
        "those cells with care, or use a smaller grid"
    ]
