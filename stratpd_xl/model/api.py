"""The model's curves beside StratPD's, on StratPD's grid, centred alike; ICE; a pair's PD.

Numbers only: the sentences that explain them are :mod:`stratpd_xl.presentation.compare`'s,
the checks :mod:`stratpd_xl.workflow`'s.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ..engine._table import as_float
from ..schema import CATEGORICAL, CATEGORY, PD, PD_HIGH, PD_LOW, X, curve_points, result_kind
from ._effects import (
    ICE_ROWS,
    accumulated_local_effects,
    agreement,
    centre,
    h_squared,
    individual_curves,
    partial_dependence,
    row_weights,
    two_way_partial_dependence,
)
from ._fit import Fitted, one_thread

__all__ = [
    "AGREEMENT_FLOOR",
    "PAIR_GRID",
    "compare_curves",
    "curve_grid",
    "feature_grid",
    "extrapolation_share",
    "ice_table",
    "pair_table",
]

#: Effects smaller than this share of the target's standard deviation count as "no effect"
#: when two curves are compared (see :func:`~stratpd_xl.model._effects.agreement`).
AGREEMENT_FLOOR = 0.05
#: Points per numeric feature of a two-way grid (quantiles 2.5 % .. 97.5 % of its rows).
PAIR_GRID = 20
#: Rows (real and shuffled, each) of the classifier that measures extrapolation.
PREDICTABILITY_ROWS = 5_000
#: A shuffled row where the data are at most this share as dense as independent columns
#: would make them counts as outside the data.
OUTSIDE_RATIO = 0.25
# A gap between the curves at least this share of their largest gap belongs to the region
# of disagreement around it.
REGION_SHARE = 0.5


def curve_grid(model: Fitted, curve: pd.DataFrame, feature: str) -> np.ndarray:
    """A StratPD or CatStratPD curve's x values (or categories) as the model reads them."""
    if result_kind(curve) == CATEGORICAL:
        return model.encode(feature, curve[CATEGORY])
    return as_float(pd.Series(curve[X]))


def _weights(model: Fitted, feature: str, grid: np.ndarray, categorical: bool) -> np.ndarray:
    values = model.values(feature)
    if categorical:
        counts = np.bincount(values[~np.isnan(values)].astype(int),
                             minlength=len(model.categories[feature]))
        return counts[grid.astype(int)].astype(float)
    return row_weights(grid, values)


def extrapolation_share(model: Fitted, feature: str, *, seed: int = 0) -> float:
    """Share of the rows partial dependence asks the model about that lie outside the data.

    Partial dependence pairs every value of the feature with every row's other columns.
    Where the columns move together, many such pairs never occur in the data, and the model
    answers there by extrapolating.  This measures how many: a small gradient-boosting
    classifier learns to tell real rows from rows whose feature is shuffled (the pairs
    partial dependence makes), on at most ``PREDICTABILITY_ROWS`` rows of each; on shuffled
    rows it did not learn from, its odds give the data's density relative to what
    independent columns would have there.  A shuffled row counts as outside the data where
    that ratio is below ``OUTSIDE_RATIO``.  Near 0: the pairs look like the data (independent
    columns); a large share: PD averages over combinations that do not exist.
    """
    from sklearn.ensemble import HistGradientBoostingClassifier

    j = model.index(feature)
    values = model.values(feature)
    rows = np.flatnonzero(~np.isnan(values))
    if rows.size < 40 or len(model.columns) < 2:
        return 0.0
    rng = np.random.default_rng(seed)
    rows = rng.permutation(rows)[:PREDICTABILITY_ROWS]
    real = model.x[rows]
    shuffled = real.copy()
    shuffled[:, j] = rng.permutation(real[:, j])
    cut = rows.size // 4
    x = np.concatenate([real[cut:], shuffled[cut:]])
    label = np.r_[np.ones(rows.size - cut), np.zeros(rows.size - cut)]
    mask = np.array([c in model.categories for c in model.columns])
    options = {"max_iter": 100, "learning_rate": 0.1, "random_state": seed,
               "early_stopping": True, "n_iter_no_change": 5,
               "categorical_features": mask if mask.any() else None,
               "min_samples_leaf": int(min(20, max(5, x.shape[0] // 40)))}
    with one_thread():
        classifier = HistGradientBoostingClassifier(**options).fit(x, label)
        p_real = classifier.predict_proba(shuffled[:cut])[:, 1]
    ratio = p_real / np.maximum(1 - p_real, 1e-12)
    return float(np.mean(ratio < OUTSIDE_RATIO))


#: Rows near a point of a numeric curve, for the model's uncertainty there: those within this
#: share of the feature's 5 %-95 % range on either side.
NEAR_SHARE = 0.05
#: Student's t for a 95 % band from many rows.
Z95 = 1.96


def model_halfwidth(model: Fitted, feature: str, grid: np.ndarray, categorical: bool
                    ) -> np.ndarray:
    """A 95 % half-width of the model's curve at each grid point (model units).

    The model's error on rows it did not see (``sqrt(1 - R²)`` times the target's standard
    deviation; for yes/no the root of the Brier score) over the root of the training rows
    the model learnt that point from: the rows of the category, or of x within
    :data:`NEAR_SHARE` of the range on either side.  A model fitted to few rows near a value,
    or a weak model, has a wide band there.
    """
    r2 = model.score.get("r2")
    if r2 is None or not np.isfinite(r2):
        return np.zeros(grid.size)
    error = math.sqrt(max(0.0, 1.0 - float(r2))) * float(np.std(model.y))
    values = model.values(feature)
    values = values[~np.isnan(values)]
    share = model.score.get("n_train") or values.size
    share = min(1.0, float(share) / max(1, len(model.y)))
    if categorical:
        near = np.bincount(values.astype(int), minlength=len(model.categories[feature]))
        near = near[grid.astype(int)].astype(float)
    else:
        lo, hi = np.percentile(values, [5, 95]) if values.size else (0.0, 0.0)
        h = NEAR_SHARE * (hi - lo)
        ordered = np.sort(values)
        near = (np.searchsorted(ordered, grid + h, side="right")
                - np.searchsorted(ordered, grid - h, side="left")).astype(float)
    return Z95 * error / np.sqrt(np.maximum(near * share, 1.0))


def _region(gap: np.ndarray) -> tuple[int, int]:
    """First and last index of the run of large gaps around the largest one."""
    top = int(np.nanargmax(gap))
    big = np.nan_to_num(gap) >= REGION_SHARE * gap[top]
    lo = top
    while lo > 0 and big[lo - 1]:
        lo -= 1
    hi = top
    while hi < gap.size - 1 and big[hi + 1]:
        hi += 1
    return lo, hi


def compare_curves(model: Fitted, curve: pd.DataFrame, *, seed: int = 0,
                   extrapolation: float | None = None) -> pd.DataFrame:
    """StratPD's curve, the model's partial dependence and its ALE on StratPD's grid.

    Parameters
    ----------
    model : Fitted
        A model of the same table and target as ``curve``.
    curve : DataFrame
        A StratPD (``x``) or CatStratPD (``category``) result of the engine.
    seed : int
        For the rows the model's curves average over, where they are sampled.
    extrapolation : float, optional
        :func:`extrapolation_share` when already measured (it does not depend on the
        target: the classes of one model share it).

    Returns
    -------
    DataFrame
        ``x`` (or ``category``), ``stratpd``, ``stratpd_low``/``stratpd_high`` (when the
        curve has a band), ``pdp``, ``ale``: every curve centred so that its average over the
        table's rows is 0 (for categories: weighted by their rows), so they overlay.
        ``attrs``: the curve's own (``feature``, ``target``, ``kind``, ...), plus
        ``model_r2`` (held-out R²; for a yes/no target the Brier skill score),
        ``model_auc`` and ``model_brier`` (yes/no), ``model_rows`` (rows learnt from, rows
        scored), ``agreement`` (StratPD vs PDP, see
        :func:`~stratpd_xl.model._effects.agreement`), ``agreement_ale`` (StratPD vs ALE),
        ``largest_gap`` (largest |stratpd - pdp| beyond both bands, target units; the largest
        gap when the bands hold it everywhere), ``disagree_from`` /
        ``disagree_to`` (x range around it where the gap is at least half as large) or
        ``disagree_category``, ``disagree_rows`` (rows in that range),
        ``extrapolation`` (see :func:`extrapolation_share`), ``effect_size``,
        ``pdp_size`` and ``ale_size`` (root mean square of each centred curve over the rows),
        ``band_size`` (the same of what both curves' bands allow together: StratPD's
        pointwise band and :func:`model_halfwidth`), ``direction``/``direction_ale`` (the
        row-weighted correlation of StratPD's curve with the PDP / ALE: 1 same story, -1
        opposite) and ``target_sd``.
    """
    # The feature's blank rows (a numeric curve's last row, a "(missing)" category) have
    # no value to set the model's feature to: the curves are compared on the values.
    curve = curve_points(curve)
    feature = str(curve.attrs.get("feature"))
    categorical = result_kind(curve) == CATEGORICAL
    grid = curve_grid(model, curve, feature)
    weights = _weights(model, feature, grid, categorical)
    # Computed in the model's units (see Fitted.unit) and reported in target units.
    unit = model.unit
    pdp = centre(partial_dependence(model, feature, grid, seed=seed), weights)
    ale = centre(accumulated_local_effects(model, feature, grid, seed=seed), weights)
    raw = curve[PD].to_numpy(float) / unit
    shift = raw - centre(raw, weights)
    key = CATEGORY if categorical else X
    table = pd.DataFrame({key: curve[key].to_numpy(), "stratpd": (raw - shift) * unit})
    if PD_LOW in curve.columns:
        table["stratpd_low"] = (curve[PD_LOW].to_numpy(float) / unit - shift) * unit
        table["stratpd_high"] = (curve[PD_HIGH].to_numpy(float) / unit - shift) * unit
    table["pdp"] = pdp * unit
    table["ale"] = ale * unit

    target_sd = float(np.std(model.y))
    floor = AGREEMENT_FLOOR * target_sd
    s = raw - shift
    # What both curves' uncertainty allows at each point: StratPD's band (when it has one)
    # and the model's (model_halfwidth), together.
    model_hw = model_halfwidth(model, feature, grid, categorical)
    data_hw = (np.nan_to_num((curve[PD_HIGH].to_numpy(float) - curve[PD_LOW].to_numpy(float))
                             / 2 / unit) if PD_LOW in curve.columns else np.zeros(grid.size))
    tolerance = np.sqrt(model_hw**2 + data_hw**2)
    gap = np.maximum(0.0, np.abs(s - pdp) - tolerance)
    if not np.nanmax(np.r_[gap, 0.0]) > 0:
        gap = np.abs(s - pdp)  # within the bands everywhere: name where they differ most
    ok = ~np.isnan(gap) & (weights > 0)

    def size(v: np.ndarray) -> float:
        keep = ok & ~np.isnan(v)
        return (float(np.sqrt(np.average(v[keep] ** 2, weights=weights[keep]))) * unit
                if keep.any() else float("nan"))

    def direction(v: np.ndarray) -> float:
        """The weighted correlation of StratPD's curve with ``v`` (both centred)."""
        keep = ok & ~np.isnan(v)
        if not keep.any():
            return float("nan")
        w = weights[keep]
        num = np.average(s[keep] * v[keep], weights=w)
        den = math.sqrt(np.average(s[keep] ** 2, weights=w) * np.average(v[keep] ** 2, weights=w))
        return float(num / den) if den > 0 else float("nan")
    attrs: dict[str, Any] = {k: v for k, v in curve.attrs.items() if k != "params"}
    attrs["params"] = curve.attrs.get("params")
    attrs.update(
        model_r2=model.score.get("r2"),
        model_auc=model.score.get("auc"),
        model_brier=model.score.get("brier"),
        model_rows={"train": model.score.get("n_train"), "test": model.score.get("n_test")},
        model_columns=list(model.columns),
        model_left_out=dict(model.left_out),
        agreement=agreement(s, pdp, weights, floor, tolerance),
        agreement_ale=agreement(s, ale, weights, floor, tolerance),
        target_sd=target_sd * unit,
        effect_size=size(s), pdp_size=size(pdp), ale_size=size(ale),
        band_size=size(tolerance),
        direction=direction(pdp), direction_ale=direction(ale),
        extrapolation=(extrapolation_share(model, feature, seed=seed)
                       if extrapolation is None else extrapolation),
    )
    if ok.any():
        masked = np.where(ok, gap, np.nan)
        lo, hi = _region(masked)
        attrs["largest_gap"] = float(np.nanmax(masked)) * unit
        if categorical:
            top = int(np.nanargmax(masked))
            attrs["disagree_category"] = table[CATEGORY].iloc[top]
            attrs["disagree_rows"] = int(weights[top])
        else:
            attrs["disagree_from"] = table[X].iloc[lo]
            attrs["disagree_to"] = table[X].iloc[hi]
            values = model.values(feature)
            inside = (values >= grid[lo]) & (values <= grid[hi])
            attrs["disagree_rows"] = int(np.sum(inside))
    table.attrs = attrs
    return table


def feature_grid(model: Fitted, feature: str, points: int = PAIR_GRID,
                 span: tuple[float, float] = (0.025, 0.975)) -> np.ndarray:
    """Every category (codes) of a categorical feature, or ``points`` quantiles of a numeric
    one's rows from ``span[0]`` to ``span[1]`` (distinct, ascending)."""
    values = model.values(feature)
    values = values[~np.isnan(values)]
    if model.is_categorical(feature):
        return np.unique(values)
    return np.unique(np.quantile(values, np.linspace(span[0], span[1], points)))


def _labels(model: Fitted, feature: str, grid: np.ndarray) -> np.ndarray:
    if model.is_categorical(feature):
        return np.asarray(model.categories[feature][grid.astype(int)], dtype=object)
    return grid


def pair_table(model: Fitted, features: tuple[str, str], *, seed: int = 0) -> pd.DataFrame:
    """The model's two-way partial dependence on a pair, as a long table, and its H².

    Returns
    -------
    DataFrame
        One row per grid cell: a column for each feature (its name; a grid of up to
        ``PAIR_GRID`` quantiles for a numeric feature, every category for a categorical one)
        and ``pdp``, centred so that its average over the rows (each at its nearest cell) is 0.
        ``attrs``: ``features``, ``target``, ``h2`` (Friedman's H² of the pair, see
        :func:`~stratpd_xl.model._effects.h_squared`), ``model_r2``, ``model_auc``,
        ``model_brier``, ``kinds``.
    """
    grids = (feature_grid(model, features[0]), feature_grid(model, features[1]))
    pd2 = two_way_partial_dependence(model, features, grids, seed=seed)
    h2 = h_squared(model, features, grids, pd2, seed=seed)
    a, b = model.values(features[0]), model.values(features[1])
    ok = ~np.isnan(a) & ~np.isnan(b)
    mids = [(g[1:] + g[:-1]) / 2 for g in grids]
    counts = np.zeros(pd2.shape)
    np.add.at(counts, (np.searchsorted(mids[0], a[ok]), np.searchsorted(mids[1], b[ok])), 1)
    if counts.sum() > 0:
        pd2 = pd2 - np.average(pd2, weights=counts)
    first, second = (_labels(model, f, g) for f, g in zip(features, grids, strict=True))
    names = [f if f != "pdp" else f"{f} (feature)" for f in features]
    table = pd.DataFrame({
        names[0]: np.repeat(first, second.size),
        names[1]: np.tile(second, first.size),
        "pdp": pd2.reshape(-1) * model.unit,
    })
    table.attrs = {
        "features": list(names),
        "target": model.target,
        "h2": h2,
        "kinds": ["categorical" if model.is_categorical(f) else "numeric" for f in features],
        "model_r2": model.score.get("r2"),
        "model_auc": model.score.get("auc"),
        "model_brier": model.score.get("brier"),
    }
    return table


def ice_table(model: Fitted, feature: str, grid: np.ndarray, labels: Any = None, *,
              n_rows: int = ICE_ROWS, seed: int = 0) -> pd.DataFrame:
    """Individual conditional expectation curves of ``n_rows`` random rows.

    Parameters
    ----------
    grid : ndarray
        Feature values (codes for a categorical feature).
    labels : sequence, optional
        What to show in ``x`` for each grid value (default the values; categories for codes).

    Returns
    -------
    DataFrame
        ``row`` (the row's position in the table, from 0),
        ``x``, ``prediction`` (the model's prediction with the feature set to x) and
        ``centred`` (prediction minus the row's prediction at the first x: centred ICE,
        Goldstein et al. 2015).  ``attrs``: ``feature``, ``target``, ``n_curves``.
    """
    grid = np.asarray(grid, float)
    n = model.x.shape[0]
    rows = (np.arange(n) if n <= n_rows
            else np.sort(np.random.default_rng(seed).choice(n, n_rows, replace=False)))
    pred = individual_curves(model, feature, grid, rows)
    shown = _labels(model, feature, grid) if labels is None else np.asarray(labels)
    table = pd.DataFrame({
        "row": np.repeat(model.positions[rows], grid.size),
        "x": np.tile(shown, rows.size),
        "prediction": pred.reshape(-1) * model.unit,
        "centred": (pred - pred[:, :1]).reshape(-1) * model.unit,
    })
    table.attrs = {"feature": feature, "target": model.target, "n_curves": int(rows.size)}
    return table


#: attrs of a class result that belong to all its classes together, not to one class.
_CLASS_ATTRS = ("classes", "all_classes", "class_rows", "class_impact", "class_sum",
                "class_findings")


def compare_classes(model: Fitted, curves: pd.DataFrame, *, seed: int = 0) -> pd.DataFrame:
    """StratPD's curve of each class beside the classifier's per-class partial dependence.

    Parameters
    ----------
    model : Fitted
        :func:`~stratpd_xl.model._classes.fit_classes`' classifier of the same table.
    curves : DataFrame
        The engine's long table of a target read as classes (``class`` first).

    Returns
    -------
    DataFrame
        ``class``, then :func:`compare_curves`' columns for each class one under the other
        (each class read as a yes/no model of its chance, in points).  ``attrs``: the first
        class's comparison's, with ``agreement`` and ``agreement_ale`` the lowest of the
        classes', plus ``classes``, ``class_checks`` (class -> that class's comparison
        ``attrs``: ``agreement``, ``model_auc``, ``target_label`` ...) and ``class_agreement``
        (class -> agreement).
    """
    from ._classes import class_key, class_view

    keys = [class_key(c) for c in model.score["labels"]]
    feature = str(curves.attrs.get("feature"))
    target = curves.attrs.get("target", model.target)
    shared = extrapolation_share(model, feature, seed=seed) if feature in model.columns else 0.0
    parts, checks = [], {}
    for name in curves.attrs["classes"]:
        one = curves.loc[curves["class"] == name].drop(columns="class").reset_index(drop=True)
        one.attrs = {k: v for k, v in curves.attrs.items() if k not in _CLASS_ATTRS}
        one.attrs["target_label"] = f"P({target} = {name})"
        table = compare_curves(class_view(model, keys.index(class_key(name))), one, seed=seed,
                               extrapolation=shared)
        checks[name] = dict(table.attrs)
        parts.append(table)
    out = pd.concat(parts, ignore_index=True)
    out.insert(0, "class", np.repeat(np.array(list(checks), dtype=object),
                                     [len(p) for p in parts]))
    first = next(iter(checks.values()))
    # The scores and the target's label are each class's own (class_checks).
    attrs = {k: v for k, v in first.items()
             if k not in ("target_label", "model_r2", "model_auc", "model_brier")}
    attrs.update({k: curves.attrs[k] for k in _CLASS_ATTRS if k in curves.attrs})
    for key in ("agreement", "agreement_ale"):
        values = [float(c[key]) for c in checks.values() if np.isfinite(c[key])]
        attrs[key] = min(values) if values else float("nan")
    attrs["class_agreement"] = {name: c["agreement"] for name, c in checks.items()}
    attrs["class_checks"] = checks
    out.attrs = attrs
    return out
