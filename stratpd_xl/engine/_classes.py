"""Targets with several classes: one curve per class, in percentage points of that class's
probability, from one stratification.

Each class's curve is StratPD's on the class's indicator (100 for a row of that class, 0
otherwise) inside the same strata.  With the strata fixed, every step after them is linear
in the target: the slopes' averages (counted by rows, as for a yes/no target), the
integral, the centring on the rows, a category's least-squares effect.  The indicators of
all classes add up to 100 in every row, whose curve is flat: so the class curves add up to
0 at every x (and the class effects in every category), a check the result carries
(``attrs["class_sum"]``).  For that the adjustment for the other columns is not applied (it
is fitted to one target, and a fit per class would break the sum) and no curve is cut at a
chance's limits.

One stratification needs one target to grow the trees on.  A tree on several targets at
once would take the split that lowers their summed squared error (the Gini gain of the
classes); our trees take one.  They are grown on a projection of the class indicators on
a random direction (standard normal weights, one per class, from ``random_state``): the
expected gain of a split along a random direction is the summed gain of the classes
(``E[(w . d)^2] = |d|^2`` for standard normal ``w``), so the trees seek the splits that
separate the classes, with no class favoured by its name or code.  The honest split and the
band's halves are as for any target.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from ..errors import StratPDInputError
from ..params import Settings
from ._band import _band, _half_samples, _rise, _simultaneous_band, rise_ends
from ._categorical import category_effects
from ._finish import _centred, _contrast, _numeric_x_out, _params, _row_weights, _scale_shape
from ._fit import _rows_for, _table
from ._numeric import curve_on_grid, integrate, resmoothed, slope_field, unique_x
from ._shape import curve_shape
from ._stratify import stratify
from ._summary import summarise
from ._table import CATEGORICAL, NUMERIC, as_float, column_label, power_of_two_scale

#: Most classes a target may have for one curve each; more is one sentence.
MAX_CLASSES = 20

#: The long table's first column.
CLASS = "class"


def _class_values(series: pd.Series, target: str) -> list[Any]:
    """The target's classes in a stable order (a category's own order, else sorted)."""
    values = series.dropna()
    if isinstance(series.dtype, pd.CategoricalDtype):
        found = [c for c in series.cat.categories if (values == c).any()]
    else:
        if pd.api.types.is_float_dtype(values.dtype) and not np.all(
                np.mod(values.to_numpy(float), 1) == 0):
            raise StratPDInputError(
                f'target "{target}" holds numbers with decimals, not classes; analyse it as '
                "a number (without classes), or round it to whole-number codes first"
            )
        found = list(pd.unique(values))
        try:
            found = sorted(found)
        except TypeError:
            found = sorted(found, key=str)
    if len(found) < 2:
        raise StratPDInputError(
            f'target "{target}" has {len(found)} class; classes need at least two values'
        )
    if len(found) > MAX_CLASSES:
        raise StratPDInputError(
            f'target "{target}" has {len(found):,} different values, more than the '
            f"{MAX_CLASSES} classes a curve each can show: pick one with positive= (its "
            "probability against all others), or group the values into fewer classes first"
        )
    return found


def _chosen(classes: Any, found: list[Any], target: str) -> list[int]:
    """Positions in ``found`` of the classes to show: all for ``True``/``"all"``."""
    if classes is True or (isinstance(classes, str) and classes.strip().lower() == "all"):
        return list(range(len(found)))
    wanted = [classes] if isinstance(classes, str) or not isinstance(classes, Iterable) \
        else list(classes)
    shown = {str(v): i for i, v in enumerate(found)}
    out = []
    for value in wanted:
        key = str(value).strip()
        if key not in shown:
            listed = ", ".join(f'"{v}"' for v in found[:MAX_CLASSES])
            raise StratPDInputError(
                f'class "{value}" does not occur in target "{target}"; its classes are: '
                f"{listed}"
            )
        if shown[key] not in out:
            out.append(shown[key])
    return out


def class_table(data: Any, target: str, feature: str, kind: str | None, p: Settings,
                classes: Any = True) -> tuple[pd.DataFrame, dict[Any, np.ndarray]]:
    """The long table of one curve (or category table) per class, and each shown class's
    per-row values for the impact ranking (see :func:`stratpd_xl.stratpd`, ``classes``)."""
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    labels = [column_label(c, j) for j, c in enumerate(frame.columns)]
    target = column_label(target, role="target")
    if labels.count(target) != 1:
        # The table's own sentence (unknown or repeated column).
        _table(frame, target)
    series = frame.iloc[:, labels.index(target)]
    found = _class_values(series, target)
    shown = _chosen(classes, found, target)
    code = pd.Index(found, dtype=object).get_indexer(series.astype(object))
    code = np.where(series.notna().to_numpy(bool), code, -1)
    # The trees' target: the classes projected on a random direction (module docstring).
    weights = np.random.default_rng(
        [0 if p.random_state is None else int(p.random_state), len(found)]
    ).standard_normal(len(found))
    projected = np.where(code >= 0, weights[np.maximum(code, 0)], np.nan)
    renamed = frame.set_axis(labels, axis=1).copy(deep=False)
    renamed[target] = projected
    table = _table(renamed, target, keep=[feature, *p.keep], exclude=p.exclude,
                   roles={column_label(feature, role="feature"): "feature"})
    feature = column_label(feature, role="feature")
    kind = kind or table.kinds[feature]
    # The rows the table kept (those with a class) in their order, with their class.
    row_code = code[code >= 0]
    if kind == NUMERIC:
        if table.kinds[feature] != NUMERIC:
            raise StratPDInputError(
                f'column "{feature}" holds text or categories; use catstratpd (or '
                'kind="categorical")')
        out, per_row, n_used, n_missing, n_leaves, said = _numeric(
            table, feature, p, row_code, len(found), shown)
    elif kind == CATEGORICAL:
        out, per_row, n_used, n_missing, n_leaves, said = _categorical(
            table, feature, p, row_code, len(found), shown)
    else:
        raise StratPDInputError(f'kind must be "numeric" or "categorical", not {kind!r}')
    names = [found[k] for k in shown]
    result = pd.concat(out, ignore_index=True)
    result.insert(0, CLASS, pd.Categorical(np.repeat(
        np.array(names, dtype=object), [len(o) for o in out]), categories=names, ordered=True))
    counts = np.bincount(row_code, minlength=len(found))
    impact = {found[k]: float(np.mean(np.abs(v - v.mean()))) if v.size else 0.0
              for k, v in per_row.items()}
    result.attrs = {
        "method": "StratPD by class" if kind == NUMERIC else "CatStratPD by class",
        "target": table.target, "feature": feature, "kind": kind,
        "classes": names, "all_classes": list(found),
        "class_rows": {found[k]: int(counts[k]) for k in range(len(found))},
        "class_impact": {found[k]: impact[found[k]] for k in shown},
        "class_sum": out_sum(out, len(found) == len(shown)),
        # Each shown class's numbers for a sentence, as one curve's attrs carry them: a
        # numeric curve's "rise" and "shape", or the categories' "contrast".
        "class_findings": {found[k]: v for k, v in said.items()},
        "units": "percentage points",
        "n_rows": table.n_rows, "n_used": n_used, "n_dropped_missing": n_missing,
        "n_leaves": n_leaves, "params": _params(p, table, categorical=kind == CATEGORICAL),
        "left_out": dict(table.left_out), "adjusted": False,
        "adjust_note": "classes: one adjustment per class would break their sum",
        "warnings": [],
    }
    return result, {found[k]: v for k, v in per_row.items()}


def out_sum(out: list[pd.DataFrame], every: bool) -> float:
    """The largest absolute sum of the classes' ``pd`` at any point (0 to rounding when
    every class is shown; NaN when some are not)."""
    if not every or not out:
        return float("nan")
    return float(np.max(np.abs(np.sum([o["pd"].to_numpy(float) for o in out], axis=0))))


def _numeric(table: Any, feature: str, p: Settings, row_code: np.ndarray, k: int,
             shown: list[int]) -> tuple[list[pd.DataFrame], dict[int, np.ndarray], int, int,
                                        int, dict[int, dict[str, Any]]]:
    x_all = as_float(table.frame[feature])
    rows = _rows_for(table, feature, ~np.isnan(x_all), p)
    x_scale = power_of_two_scale(x_all[rows.index])
    x = x_all[rows.index] / x_scale
    xb = table.strata_matrix(feature, rows.index)
    rng = np.random.default_rng(p.random_state)
    leaf = stratify(xb, rows.y, p.min_samples_leaf, rng, honest=p.honest)
    unique = unique_x(x)
    codes = row_code[rows.index]
    indicator = [np.where(codes == c, 100.0, 0.0) for c in range(k)]
    fields = [slope_field(x, indicator[c], leaf, unique, by_rows=True) for c in range(k)]
    # The points kept depend on the strata and x only: the same for every class.
    curves = [integrate(f, p.min_slopes_per_x) for f in fields]
    if curves[0] is None:
        raise StratPDInputError(
            f'no value of "{feature}" is backed by {p.min_slopes_per_x} leaf slopes (x varies '
            "too little inside the strata); lower min_slopes_per_x or min_samples_leaf, or "
            "add rows")
    grid = curves[0].x
    up_to = curves[0].points_up_to(fields[0].ux.size)
    weights = _row_weights(grid, fields[0].ux, fields[0].ux_rows, up_to)
    full = [_centred(c.pd, weights) for c in curves]
    trials = None
    if p.n_trials > 1:
        trials = np.empty((k, p.n_trials, grid.size))
        for t, (pick, leaf_b) in enumerate(_half_samples(xb, rows.y, p, rng)):
            for c in range(k):
                trials[c, t] = _centred(curve_on_grid(
                    slope_field(x[pick], indicator[c][pick], leaf_b, by_rows=True),
                    p.min_slopes_per_x, grid), weights)
    out, per_row, said = [], {}, {}
    inside = (x >= grid[0]) & (x <= grid[-1])
    ends = rise_ends(np.sort(x))
    n = rows.y.size
    column = table.frame[feature]
    for c in shown:
        columns: dict[str, Any] = {"x": grid, "pd": full[c], "slope": curves[c].slope,
                                   "n_slopes": curves[c].count.astype(np.int64)}
        bias = None
        if trials is not None:
            bias = _centred(resmoothed(fields[c], curves[c]), weights) - full[c]
            low, high = _band(trials[c], full[c], n, bias)
            columns.update(pd_low=low, pd_high=high)
            low, high, _ = _simultaneous_band(trials[c], full[c], n, bias)
            columns.update(curve_low=low, curve_high=high)
        # The class's rise and shape between x's 10th and 90th percentiles, as a curve of
        # one target states them (engine/_band.py, engine/_shape.py), in its own units.
        rise = _rise(ends, grid, full[c], None if trials is None else trials[c], n, bias)
        shape = curve_shape(
            grid, full[c], None if trials is None else trials[c], fields[c].ux,
            fields[c].ux_rows, (rise["x_from"], rise["x_to"]),
            lambda values, centre: _band(values[:, None], np.array([centre]), n))
        _scale_shape(shape, x_scale, 1.0, column)
        at = _numeric_x_out(np.array([rise["x_from"], rise["x_to"]]) * x_scale, column)
        rise["x_from"], rise["x_to"] = (v.item() if hasattr(v, "item") else v
                                        for v in list(at))
        said[c] = {"rise": rise, "shape": shape}
        if p.max_points is not None and grid.size > p.max_points:
            summary = summarise(grid, curves[c].pd, curves[c].count, fields[c].ux,
                                fields[c].ux_rows, p.max_points, up_to)
            columns = {name: v[summary.index] for name, v in columns.items()}
            columns.update(slope=summary.slope, n_slopes=summary.n_slopes, n_x=summary.n_x)
        columns["x"] = _numeric_x_out(columns["x"] * x_scale, table.frame[feature])
        columns["slope"] = np.asarray(columns["slope"], float) / x_scale
        out.append(pd.DataFrame(columns))
        per_row[c] = np.interp(fields[c].ux, grid, full[c])[fields[c].row_ux[inside]]
    return (out, per_row, int(rows.y.size - fields[0].n_ignored), rows.n_dropped_missing,
            fields[0].n_leaves, said)


def _categorical(table: Any, feature: str, p: Settings, row_code: np.ndarray, k: int,
                 shown: list[int]) -> tuple[list[pd.DataFrame], dict[int, np.ndarray], int,
                                            int, int, dict[int, dict[str, Any]]]:
    from ._missing import with_missing_category

    codes_all, cats = table.category_codes(feature)
    codes_all, cats, _ = with_missing_category(codes_all, cats)
    rows = _rows_for(table, feature, codes_all >= 0, p)
    codes = codes_all[rows.index]
    xb = table.strata_matrix(feature, rows.index)
    rng = np.random.default_rng(p.random_state)
    leaf = stratify(xb, rows.y, p.min_samples_leaf, rng, honest=p.honest)
    target_codes = row_code[rows.index]
    indicator = [np.where(target_codes == c, 100.0, 0.0) for c in range(k)]
    effects = [category_effects(codes, len(cats), indicator[c], leaf) for c in range(k)]
    known = np.flatnonzero(~np.isnan(effects[0].effect))
    if known.size < 2:
        raise StratPDInputError(
            f'the categories of "{feature}" never meet inside a stratum, so no effect can be '
            "estimated; raise min_samples_leaf or add rows")
    trials = None
    if p.n_trials > 1:
        trials = np.full((k, p.n_trials, len(cats)), np.nan)
        for t, (pick, leaf_b) in enumerate(_half_samples(xb, rows.y, p, rng)):
            for c in range(k):
                e = category_effects(codes[pick], len(cats), indicator[c][pick], leaf_b).effect
                trials[c, t] = e - e[effects[c].baseline]
    out, per_row, said = [], {}, {}
    for c in shown:
        eff = effects[c]
        columns: dict[str, Any] = {"category": pd.Index(cats[known], dtype=object),
                                   "pd": eff.effect[known], "count": eff.count[known]}
        if trials is not None:
            low, high = _band(trials[c][:, known], eff.effect[known], rows.y.size)
            columns.update(pd_low=low, pd_high=high)
            low, high, _ = _simultaneous_band(trials[c][:, known], eff.effect[known],
                                              rows.y.size)
            columns.update(curve_low=low, curve_high=high)
        out.append(pd.DataFrame(columns))
        said[c] = {"contrast": _contrast(
            out[-1], cats[eff.baseline],
            None if trials is None else trials[c][:, known], rows.y.size)}
        values = eff.effect[codes]
        per_row[c] = values[~np.isnan(values)]
    return (out, per_row, int(rows.y.size - effects[0].n_ignored), rows.n_dropped_missing,
            effects[0].n_leaves, said)


def class_ranking(data: Any, target: str, features: list[str] | None, p: Settings,
                  classes: Any, progress: Any = None, thin_share: float = 0.2,
                  ) -> tuple[pd.DataFrame, dict[str, pd.DataFrame], dict[str, str]]:
    """The impact ranking of a target read as classes: each feature's impact is its largest
    class's (``class`` names it; ``class_impact`` in its curve's ``attrs`` has them all),
    then as :func:`stratpd_xl.analyse` ranks (``share``, ``rows``, ``thin``).  The features'
    long tables (:func:`class_table`) and the skipped ones with the reason."""
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    target = column_label(target, role="target")
    if features is None:
        labels = [column_label(c, j) for j, c in enumerate(frame.columns)]
        features = [c for c in labels if c != target and c not in p.exclude]
    names = list(dict.fromkeys(f for f in features if f != target))
    rows, curves, skipped = [], {}, {}
    n_target = 0
    for i, f in enumerate(names):
        if progress is not None:
            progress(i, len(names), f)
        try:
            curve, _ = class_table(frame, target, f, None, p, classes)
        except StratPDInputError as exc:
            skipped[f] = str(exc)
            continue
        if f in curve.attrs["left_out"]:
            continue  # an identifier, as the ranking of one target leaves it out
        curves[f] = curve
        n_target = sum(curve.attrs["class_rows"].values())
        impact = curve.attrs["class_impact"]
        top = max(impact, key=lambda c: impact[c])
        rows.append({"feature": f, "kind": curve.attrs["kind"], "class": top,
                     "impact": impact[top], "rows": int(curve.attrs["n_used"])})
    if progress is not None:
        progress(len(names), len(names), "")
    ranking = pd.DataFrame(rows, columns=["feature", "kind", "class", "impact", "rows"])
    total = ranking["impact"].sum()
    ranking["share"] = ranking["impact"] / total if total > 0 else 0.0
    ranking["thin"] = ranking["rows"] < thin_share * n_target
    ranking = ranking.sort_values(["thin", "impact"], ascending=[True, False],
                                  kind="stable").reset_index(drop=True)
    ranking = ranking[["feature", "kind", "class", "impact", "share", "rows", "thin"]]
    return ranking, curves, skipped
