"""One feature's analysis, through the stages of docs/engine.md: StratPD's curve and
CatStratPD's category effects from a :class:`Table`."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from ..errors import StratPDInputError
from ..params import Settings
from ..schema import Note
from ._adjust import Adjustment, numeric_basis
from ._band import _band, _half_samples, _rise, _simultaneous_band, _trial_y
from ._categorical import category_effects
from ._design import MAX_ADJUST_LEVELS, _standardised
from ._finish import (
    _adjust_attrs,
    _attrs,
    _centred,
    _contrast,
    _data_strip,
    _numeric_x_out,
    _probability_limits,
    _row_weights,
    _scale_shape,
    _within,
)
from ._fit import _adjustment, _rows_for
from ._numeric import curve_on_grid, integrate, resmoothed, rise_se, slope_field, unique_x
from ._shape import curve_shape
from ._stratify import stratify
from ._summary import summarise
from ._table import (
    CATEGORICAL,
    NUMERIC,
    Table,
    as_float,
    column_label,
    numbers_as_text,
    power_of_two_scale,
    require_column,
)
from ._uncertain import SMALL_ROWS, rare_outcome_note, small_table_note
from ._warnings import (
    CODEPENDENT_R2,
    FEW_ROWS,
    LOW_WITHIN_SHARE,
    _code_like,
    _duplicating,
    _leaks_of,
    _named,
    _order_check,
    _raise_if_restated,
    _rise_check,
    _table_warnings,
    within_strata_share,
)


def _stratpd_table(
    table: Table, feature: str, p: Settings, row_pd: bool = False, tree_threads: bool = True
) -> tuple[pd.DataFrame, np.ndarray | None]:
    """StratPD curve, plus (if asked) the per-row pd used by the impact ranking."""
    x_all = as_float(table.frame[feature])
    present = ~np.isnan(x_all)
    rows = _rows_for(table, feature, present, p)
    # Work on x and y divided by powers of two (exact), so slopes and sums of any finite
    # input stay finite; results are multiplied back at the end.
    x_scale = power_of_two_scale(x_all[rows.index])
    x = x_all[rows.index] / x_scale
    xb = table.strata_matrix(feature, rows.index)
    rng = np.random.default_rng(p.random_state)
    leaf = stratify(xb, rows.y, p.min_samples_leaf, rng, honest=p.honest,
                    threads=tree_threads)
    # Slopes are taken on y minus the other columns' part where that measurably helps
    # (see engine/_adjust.py): inside a stratum the other columns still vary a little, and
    # with many columns correlated with x that leftover variation rides along with x and
    # inflates its slope (x1 among 20 columns correlated 0.6: 1.73 for a true 1).
    # Its own stream: the trials' halves are the same with and without the adjustment.
    adj_rng = rng.spawn(1)[0]
    # x's distinct values once for the basis, the slopes and the rise; its rows in order
    # (the same values) make its percentiles several times faster than x itself does.
    unique = unique_x(x)
    x_sorted = np.repeat(unique.ux, np.bincount(unique.xi, minlength=unique.ux.size))
    adj = (_adjustment(table, feature, rows.index,
                       _standardised(numeric_basis(x, x_sorted)), rows.y,
                       leaf, adj_rng, numeric=True) if p.adjust else None)
    r2 = np.nan if adj is None else adj.r2
    part = None if adj is None else adj.part
    y_slopes = rows.y if part is None else rows.y - part
    # A yes/no target's strata are uneven (see slope_field): their slopes count by rows.
    by_rows = bool(table.yes_no)
    field_ = slope_field(x, y_slopes, leaf, unique, by_rows=by_rows)
    curve = integrate(field_, p.min_slopes_per_x)
    reversal = None
    if part is not None and curve is not None:
        # Checked against the plain curve inside the same strata (see _rise_check).
        plain_field = field_.for_target(rows.y)
        plain = integrate(plain_field, p.min_slopes_per_x)
        reversal = None if plain is None else _rise_check(feature, x_sorted, curve, plain)
        if reversal:
            field_, curve, part = plain_field, plain, None
            adj = replace(adj, part=None, reason="it turned the plain comparison's "
                          "direction inside the strata the other way")
    x_share = within_strata_share(x, leaf)
    leaks = _leaks_of(table, feature, rows.index, rows.y, leaf, adj,
                      feature_varies=x_share >= LOW_WITHIN_SHARE)
    if curve is None:
        _raise_if_restated(leaks, table)
        if field_.ux.size <= 2:  # a 0/1 column: two values make a comparison, not a curve
            shown = " and ".join(f"{v * x_scale:g}" for v in field_.ux)
            raise StratPDInputError(
                f'"{feature}" has only {field_.ux.size} values ({shown}) and none is backed by '
                f"{p.min_slopes_per_x} leaf slopes (it varies too little inside the strata); "
                f"analyse it as categories (--categorical {feature} on the command line, "
                'kind="categorical" in Python), or lower min_slopes_per_x or min_samples_leaf'
            )
        raise StratPDInputError(
            f'no value of "{feature}" is backed by {p.min_slopes_per_x} leaf slopes (x varies '
            "too little inside the strata); lower min_slopes_per_x or min_samples_leaf, or "
            "add rows"
        )
    up_to = curve.points_up_to(field_.ux.size)
    weights = _row_weights(curve.x, field_.ux, field_.ux_rows, up_to)
    limits = _probability_limits(table, rows.y)
    full_pd = _within(_centred(curve.pd, weights), limits)
    n_cut = int(np.sum(full_pd != _centred(curve.pd, weights)))
    out = {
        "x": curve.x,
        "pd": full_pd,
        "slope": curve.slope,
        "n_slopes": curve.count.astype(np.int64),
    }
    trials = None
    if p.n_trials > 1:
        trials = np.empty((p.n_trials, curve.x.size))
        for t, (pick, leaf_b) in enumerate(_half_samples(xb, rows.y, p, rng, tree_threads)):
            # Every trial is centred with the same (full-data) weights, so the band measures
            # the spread of the curve's shape, not of an arbitrary anchor point.
            trials[t] = _within(_centred(curve_on_grid(
                slope_field(x[pick], _trial_y(rows.y, adj, pick, leaf_b), leaf_b,
                            by_rows=by_rows),
                p.min_slopes_per_x, curve.x
            ), weights), limits)
        # pd stays the full-data curve (the same as without trials); the trials only give
        # its spread (their mean drifts at the sparse ends, where halves lose points).  The
        # leaf slopes are secants, so the curve is the truth averaged over their spans
        # (peaks flatten); that bias, estimated by averaging the curve once more over the
        # same spans, widens both bands (docs/method.md, "A band that measures the shape").
        bias = _centred(resmoothed(field_, curve), weights) - _centred(curve.pd, weights)
        low, high = _band(trials, full_pd, rows.y.size, bias)
        out.update(pd_low=_within(low, limits), pd_high=_within(high, limits))
        low, high, crit = _simultaneous_band(trials, full_pd, rows.y.size, bias)
        out.update(curve_low=_within(low, limits), curve_high=_within(high, limits))
    rise = _rise(x_sorted, curve.x, full_pd, trials, rows.y.size,
                 None if trials is None else bias)
    # A small table's curve says when its change is uncertain (a cheap error from the strata
    # where there are no trials; see _uncertain.small_table_note).
    rise_error = (rise_se(field_, curve, rows.y if part is None else rows.y - part, leaf,
                          (rise["x_from"], rise["x_to"])) * table.y_scale
                  if rows.y.size < SMALL_ROWS and trials is None else np.nan)
    shape = curve_shape(
        curve.x, full_pd, trials, field_.ux, field_.ux_rows, (rise["x_from"], rise["x_to"]),
        lambda values, centre: _band(values[:, None], np.array([centre]), rows.y.size),
    )
    n_full = int(curve.x.size)
    if p.max_points is not None and n_full > p.max_points:
        summary = summarise(curve.x, curve.pd, curve.count, field_.ux, field_.ux_rows,
                            p.max_points, up_to)
        k = summary.index
        out = {name: values[k] for name, values in out.items()}
        out.update(slope=summary.slope, n_slopes=summary.n_slopes, n_x=summary.n_x)
    out["x"] = _numeric_x_out(out["x"] * x_scale, table.frame[feature])
    for name in ("pd", "pd_low", "pd_high", "curve_low", "curve_high"):
        if name in out:
            out[name] = out[name] * table.y_scale
    for name in ("change", "swing", "low", "high"):
        if name in rise:
            rise[name] *= table.y_scale
    ends = _numeric_x_out(np.array([rise["x_from"], rise["x_to"]]) * x_scale,
                          table.frame[feature])
    rise["x_from"], rise["x_to"] = (v.item() if hasattr(v, "item") else v
                                    for v in list(ends))
    _scale_shape(shape, x_scale, table.y_scale, table.frame[feature])
    with np.errstate(over="ignore"):
        # A local slope beyond the float range (a huge target over a small x step) cannot
        # be shown: it becomes missing, as any cell would show it.
        # One exact power-of-two step: y_scale / x_scale itself may be out of range.
        shift = math.frexp(table.y_scale)[1] - math.frexp(x_scale)[1]
        slope = np.ldexp(np.asarray(out["slope"], dtype=np.float64), shift)
    out["slope"] = np.where(np.isfinite(slope), slope, np.nan)
    result = pd.DataFrame(out)
    share = x_share
    warnings_ = []
    if share < LOW_WITHIN_SHARE:
        twins = _duplicating(table, feature, rows.index)
        warnings_.append(Note(
            f'"{feature}" barely varies inside the strata ({share:.1%} of its variation): the '
            f"other columns{_named(twins)} nearly determine it, so its curve rests on small "
            "differences and can be noise; leave out the columns that duplicate it (exclude)",
            "duplicate", columns=twins, features=[feature], moves=1 - share,
        ))
    if r2 > CODEPENDENT_R2 and share >= LOW_WITHIN_SHARE:  # else already said above
        twins = _duplicating(table, feature, rows.index)
        warnings_.append(Note(
            f'"{feature}" is almost exactly a linear function of the other columns'
            f"{_named(twins)} (inside the strata a least-squares fit explains {r2:.1%} of it): "
            "they carry the same information, "
            "so no data show its effect with them held fixed; leave out the columns that "
            "duplicate it (exclude) or analyse them together",
            "duplicate", columns=twins, features=[feature], moves=r2,
        ))
    if n_cut:
        warnings_.append(Note(
            f'a chance cannot go below 0 % or above 100 %, but the curve of "{feature}" went '
            f"past that at {n_cut:,} of its {n_full:,} points (where few rows back its slopes "
            "or the chance is near 0 % or 100 %); those points are cut at the limits: read "
            "them with care, or add rows",
            "limits", columns=[feature], features=[feature], moves=n_cut / max(n_full, 1),
        ))
    rare = rare_outcome_note(table.yes_no, table.target, feature, rows.y, rise)
    small = None if rare else small_table_note(feature, rows.y.size, rise, rise_error)
    warnings_ += [note for note in (rare, small) if note]
    warnings_ += _table_warnings(table, feature, NUMERIC, rows, leaf, reversal,
                                 part is not None, leaks)
    dates = pd.api.types.is_datetime64_any_dtype(table.frame[feature].dtype)
    strip = (field_.ux >= curve.x[0]) & (field_.ux <= curve.x[-1])
    note = None if dates else _code_like(
        feature, field_.ux * x_scale, curve.x, curve.pd,
        np.interp(curve.x, field_.ux, field_.ux_rows), float(np.std(rows.y)))
    if note:
        warnings_.append(note)
    result.attrs = _attrs(
        table, feature, NUMERIC, rows, field_.n_ignored, field_.n_leaves, p,
        n_unique_x=int(field_.ux.size), n_points_full=n_full, within_strata_share=share,
        rise=rise, shape=shape, **_adjust_attrs(adj),
        **({} if dates else {"strip": _data_strip(
            field_.ux[strip] * x_scale, field_.ux_rows[strip])}),
        warnings=warnings_,
    )
    if not row_pd:
        return result, None
    # Rows inside the curve's range, at the curve's height, for the impact ranking
    # (interpolated once per distinct x, which is sorted: far faster than per row).
    inside = (x >= curve.x[0]) & (x <= curve.x[-1])
    return result, np.interp(field_.ux, curve.x, full_pd)[field_.row_ux[inside]]


def _catstratpd_table(
    table: Table, feature: str, p: Settings, row_pd: bool = False, tree_threads: bool = True
) -> tuple[pd.DataFrame, np.ndarray | None]:
    """CatStratPD table, plus (if asked) the per-row pd used by the impact ranking."""
    codes_all, cats = table.category_codes(feature)
    rows = _rows_for(table, feature, codes_all >= 0, p)
    codes = codes_all[rows.index]
    xb = table.strata_matrix(feature, rows.index)
    rng = np.random.default_rng(p.random_state)
    leaf = stratify(xb, rows.y, p.min_samples_leaf, rng, honest=p.honest,
                    threads=tree_threads)
    # The same linear adjustment as for numeric features (see _stratpd_table), with the
    # feature's categories as indicator columns in the fit.
    adj = None
    adj_rng = rng.spawn(1)[0]  # see _stratpd_table
    if p.adjust and 2 <= len(cats) <= MAX_ADJUST_LEVELS:
        indicators = (codes[:, None] == np.arange(1, len(cats))).astype(float)
        adj = _adjustment(table, feature, rows.index, indicators, rows.y, leaf, adj_rng,
                          numeric=False)
    elif p.adjust:
        adj = Adjustment(None, np.nan, np.nan,
                         f"more than {MAX_ADJUST_LEVELS} categories in the feature")
    part = None if adj is None else adj.part
    y_effects = rows.y if part is None else rows.y - part
    eff = category_effects(codes, len(cats), y_effects, leaf)
    reversal = None
    if part is not None:
        # Checked against the plain comparison inside the same strata (see _order_check).
        plain = category_effects(codes, len(cats), rows.y, leaf, with_cov=True)
        reversal, fall_back = _order_check(feature, cats, eff, plain)
        if fall_back:
            eff, part = plain, None
            adj = replace(adj, part=None, reason="it reversed a clear order of the plain "
                          "comparison inside the strata")
    known = np.flatnonzero(~np.isnan(eff.effect))
    leaks = _leaks_of(table, feature, rows.index, rows.y, leaf, adj,
                      feature_varies=known.size >= 2)
    if known.size < 2:
        _raise_if_restated(leaks, table)
        raise StratPDInputError(
            f'the categories of "{feature}" never meet inside a stratum, so no effect can be '
            "estimated; raise min_samples_leaf or add rows"
        )
    out = {
        "category": pd.Index(cats[known], dtype=object),
        "pd": eff.effect[known],
        "count": eff.count[known],
    }
    values = eff.effect
    trial_effects = None
    if p.n_trials > 1:
        trials = np.full((p.n_trials, len(cats)), np.nan)
        for t, (pick, leaf_b) in enumerate(_half_samples(xb, rows.y, p, rng, tree_threads)):
            e = category_effects(codes[pick], len(cats),
                                 _trial_y(rows.y, adj, pick, leaf_b), leaf_b).effect
            # Same baseline as the full-data estimate, so the trials are comparable.
            trials[t] = e - e[eff.baseline]
        # pd stays the full-data estimate, as for numeric curves.
        low, high = _band(trials[:, known], eff.effect[known], rows.y.size)
        out.update(pd_low=low, pd_high=high)
        low, high, crit = _simultaneous_band(trials[:, known], eff.effect[known],
                                             rows.y.size)
        out.update(curve_low=low, curve_high=high)
        trial_effects = trials[:, known] * table.y_scale
    for name in ("pd", "pd_low", "pd_high", "curve_low", "curve_high"):
        if name in out:
            out[name] = out[name] * table.y_scale
            if table.yes_no:
                # Two categories' chances differ by at most 100 points.
                out[name] = np.clip(out[name], -100.0, 100.0)
    result = pd.DataFrame(out)
    unknown = [str(c) for c in cats[np.isnan(eff.effect)]]
    warnings_ = []
    if eff.n_ignored > 0.5 * rows.y.size:
        twins = _duplicating(table, feature, rows.index)
        warnings_.append(Note(
            f'{eff.n_ignored / rows.y.size:.0%} of the rows sit in strata holding one category '
            f'of "{feature}" only: the other columns{_named(twins)} nearly determine it, so its '
            "effects rest on few rows; leave out the columns that duplicate it (exclude)",
            "duplicate", columns=twins, features=[feature], moves=eff.n_ignored / rows.y.size,
        ))
    warnings_ += _table_warnings(table, feature, CATEGORICAL, rows, leaf, reversal,
                                 part is not None, leaks)
    few = eff.count[known] < FEW_ROWS
    result["few_rows"] = few
    if few.any():
        names = ", ".join(f'"{c}"' for c in cats[known][few][:8])
        more = f" and {few.sum() - 8:,} more" if few.sum() > 8 else ""
        warnings_.append(Note(
            f'{int(few.sum()):,} categor{"y" if few.sum() == 1 else "ies"} of "{feature}" '
            f"rest{'s' if few.sum() == 1 else ''} on fewer than {FEW_ROWS} rows ({names}{more}; "
            "few_rows in the table): their effects are little more than those rows' noise; "
            "merge rare categories or add rows",
            "few rows", columns=[feature], features=[feature], moves=0.2,
        ))
    contrast = _contrast(result, cats[eff.baseline], trial_effects, rows.y.size)
    if table.yes_no:  # two chances differ by at most 100 points
        for name in ("change", "low", "high"):
            if name in contrast:
                contrast[name] = float(np.clip(contrast[name], -100.0, 100.0))
    result.attrs = _attrs(
        table, feature, CATEGORICAL, rows, eff.n_ignored, eff.n_leaves, p,
        baseline=cats[eff.baseline], categories_without_estimate=unknown, warnings=warnings_,
        contrast=contrast, **_adjust_attrs(adj),
    )
    if not row_pd:
        return result, None
    per_row = values[codes]
    return result, per_row[~np.isnan(per_row)]


_IMPLS = {NUMERIC: _stratpd_table, CATEGORICAL: _catstratpd_table}


def _run(
    table: Table, feature: str, kind: str | None, p: Settings, row_pd: bool = False,
    tree_threads: bool = True,
) -> tuple[pd.DataFrame, np.ndarray | None]:
    feature = column_label(feature, role="feature")
    require_column(table.all_columns, feature, "feature")
    if feature == table.target:
        raise StratPDInputError(
            f'"{feature}" is the target; choose another column as feature'
        )
    kind = kind or table.kinds[feature]
    if kind not in _IMPLS:
        raise StratPDInputError(f'kind must be "numeric" or "categorical", not {kind!r}')
    if kind == NUMERIC and table.kinds[feature] == CATEGORICAL:
        example = numbers_as_text(table.frame[feature])
        if example is not None:
            raise StratPDInputError(
                f'column "{feature}" holds numbers stored as text ("{example}"); convert it '
                f'first: data["{feature}"] = pd.to_numeric(data["{feature}"]), or use '
                "catstratpd to treat them as categories"
            )
        raise StratPDInputError(
            f'column "{feature}" holds text or categories; use catstratpd (or kind="categorical")'
        )
    return _IMPLS[kind](table, feature, p, row_pd, tree_threads)
