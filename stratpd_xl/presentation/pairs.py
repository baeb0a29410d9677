"""Tables and pictures of the two-column results: by-group curves, interactions, surfaces.

Like :mod:`.charts`, figures are built on an Agg canvas without ``pyplot``; like
:mod:`.tables`, tables only rename and order the engine's columns for people.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..yesno import probability_label
from .labels import CATEGORICAL_COLOR, CURVE_COLOR, is_categorical, plain_axes
from .tables import BAND_HIGH, BAND_LOW, PD, ROWS, SLOPES, SUMMARISED, pd_header
from .words import spoken_value

__all__ = [
    "by_group_figure",
    "by_group_table",
    "interactions_figure",
    "interactions_table",
    "is_by_group",
    "surface_figure",
    "surface_table",
]

_PLAIN = {"parse_math": False}
# Line colours of the groups: the curve colour first, then well separated hues.
_GROUP_COLORS = (CURVE_COLOR, CATEGORICAL_COLOR, "#3A9A5B", "#B23A48", "#7B5EA7", "#8C6D31",
                 "#4FA3B8", "#C465A8", "#6B6B6B", "#A3B83A", "#2F3E9E", "#E0B13A")


def is_by_group(result: pd.DataFrame) -> bool:
    """True for a ``stratpd(..., by=...)`` result (one curve per group, ``group`` column)."""
    return "group" in result.columns and "by" in result.attrs


def _figure(width_in: float, height_in: float) -> Figure:
    fig = Figure(figsize=(width_in, height_in), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _value_label(attrs: dict[str, Any]) -> str:
    return probability_label(attrs) or f"partial dependence of {attrs.get('target', 'target')}"


def by_group_title(result: pd.DataFrame) -> str:
    """``"partial dependence of sales on price, by region (StratPD)"``."""
    a = result.attrs
    method = str(a.get("method", "StratPD by group")).replace(" by group", "")
    what = (f"{probability_label(a)}, by {a.get('feature', 'feature')}"
            if a.get("target_label") else
            f"partial dependence of {a.get('target', 'target')} on {a.get('feature', 'x')}")
    return f"{what}, by {a.get('by', 'group')} ({method})"


def by_group_table(result: pd.DataFrame) -> pd.DataFrame:
    """A by-group result with people's headers: the ``by`` column's name, the feature's, ..."""
    by = str(result.attrs.get("by") or "group")
    feature = str(result.attrs.get("feature") or "x")
    columns = {"group": by}
    first = "category" if is_categorical(result) else "x"
    columns[first] = feature if feature != by else f"{feature} (feature)"
    columns["pd"] = pd_header(result)
    names = {"pd_low": BAND_LOW, "pd_high": BAND_HIGH, "count": ROWS, "n_slopes": SLOPES,
             "n_x": SUMMARISED}
    columns.update({k: v for k, v in names.items() if k in result.columns})
    table = result[[c for c in columns if c in result.columns]].rename(columns=columns)
    table[by] = table[by].astype(str)
    table.attrs = dict(result.attrs)
    return table.reset_index(drop=True)


def draw_per_group(ax: Any, result: pd.DataFrame, column: str, groups: list[Any],
                   label: Any, colors: tuple[str, ...], dashes: tuple[str, ...] = ("-",),
                   band_alpha: float = 0.18) -> None:
    """On ``ax``, the rows of each of ``groups`` (values of ``column``, compared as text): a
    line over ``x`` with its band shaded (numeric), or bars per category with the band as
    error bars (categorical), labelled ``label(group)``, coloured in turn from ``colors``
    (then the next of ``dashes``)."""
    band = {"pd_low", "pd_high"} <= set(result.columns)
    key = result[column].astype(str)
    if is_categorical(result):
        cats = list(dict.fromkeys(result["category"].astype(str)))
        width = 0.8 / max(len(groups), 1)
        for i, g in enumerate(groups):
            part = result[key == str(g)]
            pos = np.array([cats.index(str(c)) for c in part["category"]]) + (i - (
                len(groups) - 1) / 2) * width
            y = part["pd"].to_numpy(dtype=float)
            yerr = None
            if band:
                yerr = np.nan_to_num(np.vstack([
                    np.clip(y - part["pd_low"].to_numpy(dtype=float), 0, None),
                    np.clip(part["pd_high"].to_numpy(dtype=float) - y, 0, None)]))
            ax.bar(pos, y, width=width, yerr=yerr, label=label(g),
                   color=colors[i % len(colors)],
                   error_kw={"ecolor": "#444444", "capsize": 2, "linewidth": 0.8})
        ax.set_xticks(np.arange(len(cats)))
        ax.set_xticklabels(cats, rotation=35 if sum(map(len, cats)) > 60 else 0, **_PLAIN)
        ax.set_xlabel(str(result.attrs.get("feature", "category")), **_PLAIN)
        return
    for i, g in enumerate(groups):
        part = result[key == str(g)]
        color = colors[i % len(colors)]
        x = part["x"].to_numpy()
        if band:
            ax.fill_between(x, part["pd_low"].to_numpy(dtype=float),
                            part["pd_high"].to_numpy(dtype=float), color=color,
                            alpha=band_alpha, linewidth=0)
        ax.plot(x, part["pd"].to_numpy(dtype=float), color=color, linewidth=1.8,
                linestyle=dashes[(i // len(colors)) % len(dashes)], label=label(g))
    ax.set_xlabel(str(result.attrs.get("feature", "x")), **_PLAIN)


def by_group_figure(result: pd.DataFrame, *, width_in: float = 6.4,
                    height_in: float = 4.0) -> Figure:
    """One line (numeric feature) or one set of bars (categorical) per group, with bands."""
    fig = _figure(width_in, height_in)
    ax = fig.subplots()
    groups = [str(g) for g in result["group"].cat.categories] if isinstance(
        result["group"].dtype, pd.CategoricalDtype) else list(dict.fromkeys(
            result["group"].astype(str)))
    by = str(result.attrs.get("by", "group"))
    draw_per_group(ax, result, "group", groups, lambda g: f"{by} = {g}", _GROUP_COLORS)
    ax.axhline(0.0, color="#bbbbbb", linewidth=0.8, zorder=0)
    ax.set_ylabel(_value_label(result.attrs), **_PLAIN)
    ax.legend(fontsize=8, frameon=False, loc="best")
    plain_axes(ax)
    fig.suptitle(by_group_title(result), fontsize=11, **_PLAIN)
    return fig


def interactions_table(ranking: pd.DataFrame) -> pd.DataFrame:
    """The interaction ranking with people's headers: pair, strength, size."""
    table = pd.DataFrame({
        "feature 1": ranking["feature_1"].astype(str).to_numpy(),
        "feature 2": ranking["feature_2"].astype(str).to_numpy(),
        "strength": pd.to_numeric(ranking["strength"], errors="coerce").to_numpy(float),
        SIZE: pd.to_numeric(ranking["size"], errors="coerce").to_numpy(float),
    })
    table.attrs = dict(ranking.attrs)
    return table


#: The header of the ranking's ``size`` column, saying what it measures.
SIZE = "size (typical interaction part, target units)"


def interactions_title(ranking: pd.DataFrame) -> str:
    target = ranking.attrs.get("target_label") or ranking.attrs.get("target", "target")
    return f"interaction strength of each pair on {target} (0 = effects add up)"


def interactions_figure(ranking: pd.DataFrame, *, top: int = 15) -> Figure:
    """Horizontal bars of the strongest pairs' strength, strongest on top."""
    shown = ranking.head(top)
    n = len(shown)
    fig = _figure(6.4, max(2.4, 1.3 + 0.32 * n))
    ax = fig.subplots()
    labels = [f"{a} x {b}" for a, b in zip(shown["feature_1"], shown["feature_2"],
                                            strict=True)]
    values = pd.to_numeric(shown["strength"], errors="coerce").fillna(0).to_numpy(float)
    ax.barh(np.arange(n), values, color=CURVE_COLOR, height=0.65)
    ax.set_yticks(np.arange(n))
    ax.set_yticklabels(labels, **_PLAIN)
    ax.invert_yaxis()
    for pos, value in enumerate(values):  # the value beside each bar: 0.07 reads at a glance
        ax.text(value + 0.01, pos, f"{value:.2f}", va="center", ha="left", fontsize=8,
                color="#333333")
    ax.set_xlim(0, max(1.0, float(values.max()) if n else 1.0))
    ax.set_xlabel("strength (0 = effects add up, 1 = all interaction)")
    if n == 0:
        ax.text(0.5, 0.5, "no pairs to rank", transform=ax.transAxes, ha="center")
    ax.grid(True, axis="x", color="#eeeeee", linewidth=0.8)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.suptitle(interactions_title(ranking), fontsize=11, **_PLAIN)
    return fig


def surface_table(surface: pd.DataFrame) -> pd.DataFrame:
    """A surface with people's headers: the two features' names, the value, rows, thin."""
    a = surface.attrs
    f1, f2 = str(a.get("feature_1", "x1")), str(a.get("feature_2", "x2"))
    if f2 == f1:
        f2 = f"{f2} (2)"
    table = pd.DataFrame({
        f1: surface["x1"].to_numpy(),
        f2: surface["band"].astype(str).to_numpy(),
        pd_header(surface) if a.get("target_label") else PD: surface["pd"].to_numpy(float),
        "interaction part": surface["interaction"].to_numpy(float),
        ROWS: surface["n_rows"].to_numpy(),
        "thin": surface["thin"].to_numpy(bool),
    })
    table.attrs = dict(a)
    return table


def surface_figure(surface: pd.DataFrame, *, width_in: float = 6.4,
                   height_in: float = 4.6) -> Figure:
    """A heat map of the surface: f1 across, f2's bands up; thin cells hatched."""
    a = surface.attrs
    f1, f2 = str(a.get("feature_1", "x1")), str(a.get("feature_2", "x2"))
    cols = list(dict.fromkeys(surface["x1"].tolist()))
    rows = list(dict.fromkeys(surface["band"].astype(str).tolist()))
    ci = surface["x1"].map({v: i for i, v in enumerate(cols)}).to_numpy()
    ri = surface["band"].astype(str).map({v: i for i, v in enumerate(rows)}).to_numpy()
    grid = np.full((len(rows), len(cols)), np.nan)
    thin = np.zeros_like(grid, dtype=bool)
    grid[ri, ci] = surface["pd"].to_numpy(float)
    thin[ri, ci] = surface["thin"].to_numpy(bool)
    fig = _figure(width_in, height_in)
    ax = fig.subplots()
    finite = grid[np.isfinite(grid)]
    top = float(np.abs(finite).max()) if finite.size else 1.0
    image = ax.imshow(grid, origin="lower", aspect="auto", cmap="RdBu_r",
                      vmin=-top or -1, vmax=top or 1, interpolation="nearest")
    for r, c in zip(*np.nonzero(thin), strict=True):
        ax.add_patch(_hatch(c, r))
    ax.set_xticks(np.arange(len(cols)))
    ax.set_xticklabels([_tick(v) for v in cols], rotation=45 if len(cols) > 6 else 0,
                       fontsize=8, **_PLAIN)
    ax.set_yticks(np.arange(len(rows)))
    ax.set_yticklabels(rows, fontsize=8, **_PLAIN)
    ax.set_xlabel(f1, **_PLAIN)
    ax.set_ylabel(f2, **_PLAIN)
    bar = fig.colorbar(image, ax=ax, shrink=0.9)
    bar.set_label(_value_label(a), **_PLAIN)
    target = a.get("target_label") or a.get("target", "target")
    fig.suptitle(f"two-way partial dependence of {target} on {f1} and {f2} (experimental; "
                 "hatched: thin data)", fontsize=10, **_PLAIN)
    return fig


def _hatch(col: int, row: int) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((col - 0.5, row - 0.5), 1, 1, fill=False, hatch="///",
                     edgecolor="#777777", linewidth=0)


def _tick(value: Any) -> str:
    """A grid value as the sentences write feature values (dates as dates, no e-notation)."""
    return spoken_value(value)

