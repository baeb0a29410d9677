"""Effects that change with another column: groups, by-group curves, and their differences.

Three results share these numbers (see ``docs/method.md``, "Interactions"):

* ``stratpd(..., by=column)``: one curve per level (or band of values) of ``column``;
* ``interactions``: how much one column's effect changes with another, 0 when additive;
* ``stratpd2``: a two-way surface.

The core is :class:`Effects`: one feature's strata (tree leaves grown once on every other
column) and its StratPD / CatStratPD estimate on any subset of its rows.  Restricting the
rows to one group of another column keeps the strata and adds the group as a further
split, so a feature's effect in every group of every other column costs one tree and a
sort per group, not a tree per group.  No I/O, no sentences beyond the notes of results.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import StratPDInputError, argument
from ..schema import counted
from ._categorical import category_effects
from ._numeric import (
    StrataSlopes,
    curve_on_grid,
    grid_curves_of_strata,
    integrate,
    slope_field,
    strata_slopes,
    unique_sorted_x,
)
from ._table import CATEGORICAL, NUMERIC, as_float, category_codes, column_kind

#: A categorical ``by`` column with more levels than this is refused (a chart of more lines
#: cannot be read, and each level needs rows of its own).
MAX_GROUPS = 12


# --------------------------------------------------------------------------- groups


def short_number(value: float) -> str:
    """A band edge as people write it: 3 significant digits, thousands separated."""
    if not math.isfinite(value):
        return str(value)
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:.0f}"
    if value == 0:
        return "0"
    text = f"{value:#.3g}"  # '#' keeps the zeros of 1.00, so 1.00 and 2.01 line up
    return text if "e" not in text else f"{value:.2e}"


@dataclass(frozen=True)
class Groups:
    """Rows sorted into groups: a code per row (-1 = missing) and a label per group."""

    codes: np.ndarray
    labels: list[str]
    banded: bool  # numeric column cut into bands of its values (else levels or values)


def _edge_text(value: float, dates: bool) -> str:
    if dates:
        return str(pd.Timestamp(round(value * 86_400e9)).date())
    return short_number(value)


def groups_of(series: pd.Series, name: str, bands: int, *,
              kind: str | None = None) -> Groups:
    """Group the rows by ``series``: its levels, or ``bands`` quantile bands of its values.

    A numeric column with at most ``bands`` distinct values gets one group per value.  Band
    edges are quantiles of the rows' values, so the bands hold about equal numbers of
    rows; a band is labelled by its range (``"2.5 to 7.1"``, lower edge included).

    Raises
    ------
    StratPDInputError
        A categorical column with more than :data:`MAX_GROUPS` levels, or fewer than two.
    """
    kind = kind or column_kind(series)
    if kind == CATEGORICAL:
        codes, cats = category_codes(series)
        used = np.unique(codes[codes >= 0])
        if used.size > MAX_GROUPS:
            raise StratPDInputError(
                f'"{name}" has {used.size:,} levels, too many for one curve each; choose a '
                f"column with at most {MAX_GROUPS} levels (such as a region or segment), "
                "or group its levels into a new column first"
            )
        if used.size < 2:
            raise StratPDInputError(
                f'"{name}" has {used.size} level(s) in the rows used: there is nothing to '
                "compare; choose a column with two or more levels"
            )
        # Drop levels without rows, keeping the column's own order.
        remap = np.full(len(cats), -1, np.int64)
        remap[used] = np.arange(used.size)
        out = np.where(codes >= 0, remap[np.maximum(codes, 0)], -1)
        return Groups(out, [str(cats[u]) for u in used], banded=False)
    values = as_float(series)
    dates = pd.api.types.is_datetime64_any_dtype(series.dtype)
    ok = ~np.isnan(values)
    distinct = np.unique(values[ok])
    if distinct.size < 2:
        raise StratPDInputError(
            f'"{name}" has {distinct.size} distinct value(s) in the rows used: there is '
            "nothing to compare; choose a column whose values vary"
        )
    codes = np.full(values.size, -1, np.int64)
    if distinct.size <= bands:
        codes[ok] = np.searchsorted(distinct, values[ok])
        return Groups(codes, [_edge_text(v, dates) for v in distinct], banded=False)
    edges = np.unique(np.quantile(values[ok], np.linspace(0, 1, bands + 1)))
    inner = edges[1:-1]
    codes[ok] = np.searchsorted(inner, values[ok], side="right")
    used = np.unique(codes[ok])
    labels = []
    for b in range(edges.size - 1):
        labels.append(f"{_edge_text(edges[b], dates)} to {_edge_text(edges[b + 1], dates)}")
    # Heavy ties can leave a band empty: renumber the bands that hold rows.
    remap = np.full(edges.size - 1, -1, np.int64)
    remap[used] = np.arange(used.size)
    codes[ok] = remap[codes[ok]]
    return Groups(codes, [labels[u] for u in used], banded=True)


# --------------------------------------------------------------------------- one feature


def _at(points: np.ndarray, xs: np.ndarray, values: np.ndarray, ascending: bool = False,
        ) -> np.ndarray:
    """A curve (``xs``, ``values``) read at ``points``; NaN outside its range or where NaN.

    ``ascending``: the points are sorted, so those inside the range are one slice of them
    (the same numbers, without two passes of masks over every point).
    """
    out = np.full(points.shape, np.nan)
    ok = ~np.isnan(values)
    if not ok.all():
        if not ok.any():
            return out
        xs, values = xs[ok], values[ok]
    if ascending:
        lo = int(np.searchsorted(points, xs[0], side="left"))
        hi = int(np.searchsorted(points, xs[-1], side="right"))
        out[lo:hi] = np.interp(points[lo:hi], xs, values)
        return out
    inside = (points >= xs[0]) & (points <= xs[-1])
    out[inside] = np.interp(points[inside], xs, values)
    return out


@dataclass
class Effects:
    """One feature's strata and its effect estimated on any subset of its rows.

    ``value`` holds x (numeric) or category codes (categorical) of the rows the feature
    has, in ascending order; ``leaf`` their strata (grown on every other column).  Subsets
    are given as ascending row positions, so their values are sorted too: distinct values
    and curve reads then need no sort.  Effects are uncentred: callers centre them over the
    rows they compare.
    """

    kind: str
    value: np.ndarray
    y: np.ndarray
    leaf: np.ndarray
    min_slopes_per_x: int
    n_categories: int = 0

    def fit(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """The effect estimated on ``rows``: (grid, values) - curve points, or per category."""
        return self.fit_field(rows)[0]

    def fit_field(self, rows: np.ndarray) -> tuple[
            tuple[np.ndarray, np.ndarray] | None, tuple[StrataSlopes, np.ndarray] | None]:
        """:meth:`fit` and, for a numeric feature's curve, its strata's slopes and where its
        points sit among the rows' distinct x, for :meth:`refits` of parts of the rows."""
        if self.kind == NUMERIC:
            x = self.value[rows]
            leaf = self.leaf[rows]
            y = self.y[rows]
            field = slope_field(x, y, leaf, unique_sorted_x(x))
            curve = integrate(field, self.min_slopes_per_x)
            if curve is None:
                return None, None
            return (curve.x, curve.pd), (strata_slopes(field, y, leaf), curve.at)
        eff = category_effects(self.value[rows], self.n_categories, self.y[rows],
                               self.leaf[rows]).effect
        return ((np.arange(self.n_categories), eff) if np.isfinite(eff).any() else None), None

    def refits(self, rows: np.ndarray, slopes: tuple[StrataSlopes, np.ndarray] | None,
               sides: list[np.ndarray], grid: np.ndarray) -> list[np.ndarray]:
        """``[self.refit(rows[side], grid) for side in sides]`` where each side holds whole
        strata and ``grid`` is the fit's; from ``slopes`` (:meth:`fit_field` of ``rows``)
        when numeric: the same numbers without a slope field per side."""
        if slopes is None or not all(side.any() for side in sides):
            return [self.refit(rows[side], grid) for side in sides]
        return grid_curves_of_strata(slopes[0], sides, max(1, self.min_slopes_per_x // 2),
                                     slopes[1])

    def refit(self, rows: np.ndarray, grid: np.ndarray) -> np.ndarray:
        """The effect on ``rows`` at the points of another fit's ``grid`` (for noise)."""
        if self.kind == NUMERIC:
            x = self.value[rows]
            field = slope_field(x, self.y[rows], self.leaf[rows], unique_sorted_x(x))
            # A half holds half the strata, so a point is backed by about half the slopes.
            return curve_on_grid(field, max(1, self.min_slopes_per_x // 2), grid)
        return category_effects(self.value[rows], self.n_categories, self.y[rows],
                                self.leaf[rows]).effect

    def at(self, fitted: tuple[np.ndarray, np.ndarray] | None, points: np.ndarray,
           ) -> np.ndarray:
        """A fit read at feature values ``points`` (x, or category codes)."""
        if fitted is None:
            return np.full(points.shape, np.nan)
        grid, values = fitted
        if self.kind == NUMERIC:
            return _at(points, grid, values)
        return values[points]

    def row_values(self, fitted: tuple[np.ndarray, np.ndarray] | None,
                   rows: np.ndarray) -> np.ndarray:
        """A fit read at the x of ``rows`` (ascending positions)."""
        if fitted is None:
            return np.full(rows.shape, np.nan)
        grid, values = fitted
        if self.kind == NUMERIC:
            return _at(self.value[rows], grid, values, ascending=True)
        return values[self.value[rows]]


def _centre(values: np.ndarray, ok: np.ndarray) -> np.ndarray:
    out = values - values[ok].mean() if ok.any() else values.copy()
    out[~ok] = np.nan
    return out


@dataclass(frozen=True)
class Spread:
    """How far a feature's effect in groups of another column is from its pooled effect.

    Mean squares over the rows (target units squared, the engine's scaled units).
    """

    between: float  # mean of (group effect - pooled effect)^2, both centred in the group
    noise: float  # what ``between`` would be from estimation noise alone
    rows: int  # rows compared


@dataclass(frozen=True)
class PooledReads:
    """A feature's pooled effect and its half-strata refits read at every one of its rows:
    made once per feature, then indexed by each group's rows in every pair it is in."""

    pooled: np.ndarray  # the pooled effect at each row
    halves: list[tuple[np.ndarray, np.ndarray]]  # per split, halves A and B at each row


def pooled_reads(effects: Effects, pooled: tuple[np.ndarray, np.ndarray] | None,
                 pooled_halves: list[list[np.ndarray]]) -> PooledReads:
    """:class:`PooledReads` of the feature (``pooled_halves`` on ``pooled``'s grid)."""
    every = np.arange(effects.y.size)
    if pooled is None:
        nothing = np.full(every.shape, np.nan)
        return PooledReads(nothing, [(nothing, nothing) for _ in pooled_halves])
    grid = pooled[0]
    return PooledReads(effects.row_values(pooled, every),
                       [(effects.row_values((grid, pa), every),
                         effects.row_values((grid, pb), every)) for pa, pb in pooled_halves])


def spread(effects: Effects, pooled: tuple[np.ndarray, np.ndarray] | None,
           groups: np.ndarray, n_groups: int, min_rows: int,
           halves: list[np.ndarray], pooled_halves: list[list[np.ndarray]],
           reads: PooledReads | None = None) -> Spread:
    """The feature's effect in each group against its pooled effect, and the noise floor.

    Parameters
    ----------
    effects : Effects
        The feature and its strata.
    pooled : fit
        ``effects.fit`` on all rows.
    groups : int array
        Group of each of the feature's rows (-1: none).
    n_groups : int
        Number of groups.
    min_rows : int
        Groups with fewer rows are left out.
    halves : list of bool arrays
        For each random split of the strata into two halves, which rows are in half A
        (whole strata go to one half, so the halves are independent samples of strata).
    pooled_halves : list of [values A, values B]
        The pooled effect refitted on each half, at ``pooled``'s grid.
    reads : PooledReads, optional
        :func:`pooled_reads` of these, when the caller keeps it for several calls.

    Notes
    -----
    With the strata split at random into halves A and B, the difference of the two halves'
    estimates, halved, has (about) the variance of the full estimate's noise: so the mean
    square of that difference is the part of ``between`` that noise alone would give.
    """
    if reads is None:
        reads = pooled_reads(effects, pooled, pooled_halves)
    between = noise = 0.0
    n_between = n_noise = 0
    for g in range(n_groups):
        rows = np.flatnonzero(groups == g)
        if rows.size < min_rows:
            continue
        fitted, slopes = effects.fit_field(rows)
        if fitted is None:
            continue
        own = effects.row_values(fitted, rows)
        base = reads.pooled[rows]
        ok = ~np.isnan(own) & ~np.isnan(base)
        if ok.sum() < 2:
            continue
        d = _centre(own, ok) - _centre(base, ok)
        between += float(np.sum(d[ok] ** 2))
        n_between += int(ok.sum())
        for in_a, (half_a, half_b) in zip(halves, reads.halves, strict=True):
            side = in_a[rows]
            parts = [effects.row_values((fitted[0], values), rows)
                     for values in effects.refits(rows, slopes, [side, ~side], fitted[0])]
            base_a, base_b = half_a[rows], half_b[rows]
            ok2 = ok & ~np.isnan(parts[0]) & ~np.isnan(parts[1])
            ok2 &= ~np.isnan(base_a) & ~np.isnan(base_b)
            if ok2.sum() < 2:
                continue
            da = _centre(parts[0], ok2) - _centre(base_a, ok2)
            db = _centre(parts[1], ok2) - _centre(base_b, ok2)
            noise += float(np.mean(((da[ok2] - db[ok2]) / 2) ** 2)) * int(ok.sum())
            n_noise += int(ok.sum())
    if n_between == 0:
        return Spread(math.nan, math.nan, 0)
    return Spread(between / n_between, noise / max(n_noise, 1), n_between)


def leaf_halves(leaf: np.ndarray, rng: np.random.Generator, n_splits: int) -> list[np.ndarray]:
    """``n_splits`` random splits of the strata into halves: for each, which rows are in A."""
    n_leaves = int(leaf.max()) + 1 if leaf.size else 0
    out = []
    for _ in range(n_splits):
        side = np.zeros(n_leaves, bool)
        side[rng.permutation(n_leaves)[: n_leaves // 2]] = True
        out.append(side[leaf])
    return out


def main_effect(effects: Effects, pooled: tuple[np.ndarray, np.ndarray] | None) -> float:
    """Mean square of the feature's centred effect over its rows (its main effect's size)."""
    values = effects.row_values(pooled, np.arange(effects.y.size))
    ok = ~np.isnan(values)
    return float(np.mean(_centre(values, ok)[ok] ** 2)) if ok.sum() > 1 else 0.0


def local_reach(effects: Effects) -> float:
    """Mean square of y explained by the feature inside the strata, interactions included.

    Inside each stratum, the part of y that a straight line in x (numeric) or the category
    means (categorical) explain: a feature whose effect averages out over the data (x1 in
    y = x1 x2 with x2 centred) still moves y inside strata.  Used to choose which features
    to pair; noise adds about the same to every feature.
    """
    leaf, y = effects.leaf, effects.y
    n_leaves = int(leaf.max()) + 1
    if effects.kind == NUMERIC:
        x = effects.value
        count = np.bincount(leaf, minlength=n_leaves).astype(float)
        mx = np.bincount(leaf, weights=x, minlength=n_leaves) / np.maximum(count, 1)
        my = np.bincount(leaf, weights=y, minlength=n_leaves) / np.maximum(count, 1)
        dx, dy = x - mx[leaf], y - my[leaf]
        sxx = np.bincount(leaf, weights=dx * dx, minlength=n_leaves)
        sxy = np.bincount(leaf, weights=dx * dy, minlength=n_leaves)
        with np.errstate(invalid="ignore", divide="ignore"):
            explained = np.where(sxx > 0, sxy * sxy / sxx, 0.0)
        return float(explained.sum() / y.size)
    cell = leaf.astype(np.int64) * effects.n_categories + effects.value
    _, inverse, count = np.unique(cell, return_inverse=True, return_counts=True)
    cell_mean = np.bincount(inverse, weights=y) / count
    leaf_mean = np.bincount(leaf, weights=y, minlength=n_leaves) / np.maximum(
        np.bincount(leaf, minlength=n_leaves), 1)
    return float(np.mean((cell_mean[inverse] - leaf_mean[leaf]) ** 2))


# --------------------------------------------------------------------------- by group


def _average_slope(curve: pd.DataFrame) -> tuple[float, float]:
    """A numeric curve's average slope (least squares of pd on x, weighted by the data at
    each point) and a cautious standard error from its band (NaN without a band).

    The band's points are taken as fully correlated, which can only widen the error.
    """
    x = as_float(curve["x"]) if "x" in curve.columns else np.array([])
    pd_values = curve["pd"].to_numpy(dtype=float)
    weight = curve["n_slopes"].to_numpy(dtype=float) if "n_slopes" in curve.columns else \
        np.ones(x.size)
    if "n_x" in curve.columns:
        weight = weight * curve["n_x"].to_numpy(dtype=float)
    ok = ~np.isnan(x) & ~np.isnan(pd_values) & (weight > 0)
    if ok.sum() < 2:
        return math.nan, math.nan
    w = weight[ok] / weight[ok].sum()
    xc = x[ok] - w @ x[ok]
    sxx = float(w @ (xc * xc))
    if sxx <= 0:
        return math.nan, math.nan
    c = w * xc / sxx
    slope = float(c @ pd_values[ok])
    if "pd_low" not in curve.columns or "pd_high" not in curve.columns:
        return slope, math.nan
    trials = int((curve.attrs.get("params") or {}).get("n_trials", 2))
    from scipy.special import stdtrit

    t = float(stdtrit(max(trials - 1, 1), 0.975))
    sd = (curve["pd_high"].to_numpy(dtype=float) - curve["pd_low"].to_numpy(dtype=float)) / (2 * t)
    return slope, float(np.nansum(np.abs(c) * sd[ok]))


def _times(ratio: float) -> str:
    if abs(ratio - 2) < 0.1:
        return "twice"
    if abs(ratio - 3) < 0.1:
        return "three times"
    return f"{ratio:.1f} times"


def slope_note(target: str, feature: str, by: str, slopes: dict[str, tuple[float, float]],
               ) -> str | None:
    """One sentence when the groups' average slopes differ beyond their bands, else None.

    Without bands (one trial) the sentence says that it may be noise.
    """
    known = {g: s for g, s in slopes.items() if math.isfinite(s[0])}
    if len(known) < 2:
        return None
    steep = max(known, key=lambda g: abs(known[g][0]))
    flat = min(known, key=lambda g: abs(known[g][0]))
    if not any(known[g][0] * known[steep][0] < 0 for g in known):
        pair = (steep, flat)
    else:  # opposite directions: the strongest of each sign
        other = max((g for g in known if known[g][0] * known[steep][0] < 0),
                    key=lambda g: abs(known[g][0]))
        pair = (steep, other)
    (a, (sa, ea)), (b, (sb, eb)) = (pair[0], known[pair[0]]), (pair[1], known[pair[1]])
    banded = math.isfinite(ea) and math.isfinite(eb)
    if banded:
        if abs(sa - sb) <= 1.96 * math.hypot(ea, eb):
            return None
        why = " (beyond their 95 % bands)"
    else:
        if sa * sb > 0 and abs(sa) < 1.5 * abs(sb):
            return None
        why = " (without a band this may be noise: use 10 or more trials to check)"
    what = f"the effect of {feature} on {target}"
    fa, fb = f"{by} = {a}", f"{by} = {b}"
    # A slope inside its own band (or, without bands, under a tenth of the other's) is flat,
    # whatever its sign: -0.0013 beside 2.1 is no effect "going down".
    if (math.isfinite(eb) and abs(sb) <= 1.96 * eb) or abs(sb) < 0.1 * abs(sa):
        within = ", within its 95 % band" if math.isfinite(eb) and abs(sb) <= 1.96 * eb else ""
        return (f"{what} is steep for {fa} (average slope {short_number(sa)}) but "
                f"{'flat' if within else 'nearly flat'} for {fb} ({short_number(sb)}{within})"
                f"{why}")
    if sa * sb < 0:
        return (f"{what} goes {'up' if sa > 0 else 'down'} for {fa} (average slope "
                f"{short_number(sa)}) but {'up' if sb > 0 else 'down'} for {fb} "
                f"({short_number(sb)}){why}")
    return (f"{what} is {_times(sa / sb)} as steep for {fa} (average slope "
            f"{short_number(sa)}) as for {fb} ({short_number(sb)}){why}")


def category_note(target: str, feature: str, by: str, curves: dict[str, pd.DataFrame],
                  ) -> str | None:
    """One sentence naming the category whose effect differs most between two groups,
    when their bands do not overlap (or, without bands, when it differs at all)."""
    best: tuple[float, str, str, str, float, float] | None = None
    labels = list(curves)
    banded = all({"pd_low", "pd_high"} <= set(c.columns) for c in curves.values())
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            ca, cb = curves[a], curves[b]
            if str(ca.attrs.get("baseline")) != str(cb.attrs.get("baseline")):
                continue
            merged = ca.merge(cb, on="category", suffixes=("_a", "_b"))
            for _, row in merged.iterrows():
                gap = abs(row["pd_a"] - row["pd_b"])
                if banded and not (row["pd_low_a"] > row["pd_high_b"]
                                   or row["pd_low_b"] > row["pd_high_a"]):
                    continue
                if math.isfinite(gap) and gap > 0 and (best is None or gap > best[0]):
                    best = (gap, str(row["category"]), a, b, row["pd_a"], row["pd_b"])
    if best is None:
        return None
    _, cat, a, b, va, vb = best
    baseline = curves[a].attrs.get("baseline")
    why = (" (their 95 % bands do not overlap)" if banded else
           " (without a band this may be noise: use 10 or more trials to check)")
    return (f"the effect of {feature} = {cat} on {target} (against {feature} = {baseline}) is "
            f"{short_number(va)} for {by} = {a} but {short_number(vb)} for {by} = {b}{why}")


def curves_by_group(
    data: pd.DataFrame, target: str, feature: str, by: str, bands: int,
    run: Callable[[pd.DataFrame], pd.DataFrame], params: dict[str, Any],
) -> pd.DataFrame:
    """One curve per group of ``by``, as one long table with a ``group`` column first.

    ``run(frame)`` returns the curve of ``feature`` for a frame of rows (the engine's
    ``stratpd`` / ``catstratpd`` with the caller's settings), so every group's curve is
    made, centred and banded exactly as a curve without groups.  A numeric ``by`` stays in
    the group's frame (it still varies inside a band); a categorical one is constant there
    and is dropped.
    """
    columns = [str(c) for c in data.columns]
    if by not in columns:
        listed = ", ".join(columns[:20]) + (", ..." if len(columns) > 20 else "")
        raise StratPDInputError(f'by column "{by}" not found; columns are: {listed}')
    if by == feature:
        raise StratPDInputError(
            f'"{by}" is both the feature and the by column; choose another column to group by'
        )
    if by == target:
        raise StratPDInputError(
            f'"{by}" is the target; choose another column to group by'
        )
    data = data.set_axis(columns, axis=1)
    groups = groups_of(data[by], by, bands)
    keep = [c for c in columns if groups.banded or c != by]
    curves: dict[str, pd.DataFrame] = {}
    skipped: dict[str, str] = {}
    sizes: dict[str, int] = {}
    for g, label in enumerate(groups.labels):
        rows = np.flatnonzero(groups.codes == g)
        sizes[label] = int(rows.size)
        try:
            curves[label] = run(data.iloc[rows][keep].reset_index(drop=True))
        except StratPDInputError as exc:
            skipped[label] = exc.raw  # settings stay marked: the front end words them
    if len(curves) < 2:
        reasons = "; ".join(f"{by} = {g}: {why}" for g, why in skipped.items())
        raise StratPDInputError(
            f'fewer than two groups of "{by}" gave a curve of "{feature}" ({reasons}); '
            f"group by a column with fewer, larger groups, use fewer {argument('bands')}, or "
            f"lower {argument('min_samples_leaf')}"
        )
    first = next(iter(curves.values()))
    kind = str(first.attrs.get("kind", NUMERIC))
    parts = []
    for label, curve in curves.items():
        part = curve.copy()
        part.insert(0, "group", label)
        parts.append(part)
    table = pd.concat(parts, ignore_index=True)
    # Group labels keep the by column's order (levels, or bands low to high).
    table["group"] = pd.Categorical(table["group"], categories=list(curves), ordered=True)
    warnings_ = [f"for {by} = {g}: {w}" for g, c in curves.items()
                 for w in c.attrs.get("warnings") or []]
    warnings_ += [f"no curve for {by} = {g}: {why}" for g, why in skipped.items()]
    n_missing = int((groups.codes < 0).sum())
    if n_missing:
        warnings_.append(f'{counted(n_missing)} {"has" if n_missing == 1 else "have"} no value '
                         f'in "{by}" and {"is" if n_missing == 1 else "are"} in no group')
    slopes: dict[str, tuple[float, float]] = {}
    if kind == NUMERIC:
        slopes = {g: _average_slope(c) for g, c in curves.items()}
        note = slope_note(target, feature, by, slopes)
    else:
        note = category_note(target, feature, by, curves)
    keep_attrs = ("kind", "target", "feature", "positive", "target_label", "units")
    table.attrs = {k: first.attrs[k] for k in keep_attrs if k in first.attrs}
    table.attrs.update(
        method=f"{first.attrs.get('method', 'StratPD')} by group",
        by=by,
        groups=list(curves),
        group_rows={g: sizes[g] for g in curves},
        group_slopes={g: s[0] for g, s in slopes.items()},
        n_rows=len(data),
        n_used=int(sum(int(c.attrs.get("n_used", 0)) for c in curves.values())),
        params=params,
        warnings=warnings_,
        findings=[note] if note else [],
        skipped_groups=skipped,
    )
    return table
