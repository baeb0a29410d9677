"""Matplotlib pictures of StratPD results: a curve, category bars, and the impact ranking.

Only presentation lives here; the numbers come from the engine's result DataFrames.
Figures are built with :class:`matplotlib.figure.Figure` and an Agg canvas, never through
``pyplot``, so making a chart neither needs a display nor touches global plotting state
(the Excel add-in and the CLI call this from worker threads and headless servers).
"""

from __future__ import annotations

import io
import re
import textwrap
import warnings
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..errors import StratPDNote
from ..schema import MISSING_LABEL, Finding, curve_points, missing_row
from .labels import (
    BAND_COLOR,
    CATEGORICAL_COLOR,
    CURVE_COLOR,
    DENSITY_COLOR,
    MAX_BARS,
    PER_POINT,
    curve_title,
    drawn_categories,
    impact_title,
    is_categorical,
    left_out_note,
    plain_axes,
    share_fractions,
    shown_band,
    value_label,
    xml_text,
)
from .words import sentence

__all__ = [
    "FIGURE_FORMATS",
    "curve_figure",
    "figure_bytes",
    "curve_title",
    "figure_png",
    "impact_figure",
    "impact_title",
    "share_fractions",
    "is_categorical",
]

# Column names are text, not TeX: "$ spent" or "cost_$" must not switch on mathtext.
_PLAIN = {"parse_math": False}
# Above this many points the markers hide the line, so only the line is drawn.
_MAX_MARKERS = 30
# Up to this many distinct x values each one gets its own stick in the density strip;
# more than that and a histogram reads better.
_MAX_STICKS = 40


def _new_figure(width_in: float, height_in: float) -> Figure:
    fig = Figure(figsize=(width_in, height_in), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _wrapped(title: str, width_in: float) -> str:
    # ~11 characters per inch at the title's font size keeps long names inside the picture.
    return "\n".join(textwrap.wrap(title, max(30, int(width_in * 11))))


def _column(result: pd.DataFrame, name: str) -> np.ndarray | None:
    if name not in result.columns:
        return None
    return pd.to_numeric(result[name], errors="coerce").to_numpy(dtype=float)


def curve_figure(result: pd.DataFrame, *, width_in: float = 6.4, height_in: float = 4.0) -> Figure:
    """Draw a StratPD curve or CatStratPD bars the way an analyst would paste it into a slide.

    Numeric features get the curve (with markers when there are few points), a 95 % band
    when the result has one (see :func:`_numeric_band`), and a strip underneath showing where the
    data lies (the number of slopes averaged at each x).  Categorical features get one bar per
    category, in the order given, with error bars from the band when present.

    Parameters
    ----------
    result : DataFrame
        A result of ``stratpd`` (columns ``x``, ``pd``, ``slope``, ``n_slopes``) or
        ``catstratpd`` (columns ``category``, ``pd``, ``count``), optionally with ``pd_low``
        and ``pd_high``; ``attrs`` supply the target, feature, method and n for the labels.
    width_in, height_in : float
        Size of the figure in inches.

    Returns
    -------
    matplotlib.figure.Figure
        A figure with an Agg canvas attached; render it with :func:`figure_png`.
    """
    from .classes import class_figure, is_by_class
    from .pairs import by_group_figure, is_by_group

    if is_by_group(result):  # stratpd(..., by=...): a line or bars per group
        return by_group_figure(result, width_in=width_in, height_in=height_in)
    if is_by_class(result):  # stratpd(..., classes=True): a line or bars per class
        return class_figure(result, width_in=width_in, height_in=height_in)
    fig = _new_figure(width_in, height_in)
    if is_categorical(result):
        _draw_categorical(fig, result)
    else:
        _draw_numeric(fig, result)
    fig.suptitle(_wrapped(curve_title(result), width_in), fontsize=11, **_PLAIN)
    found = Finding.from_result(result)
    if found is not None:
        # The conclusion under the chart, so a pasted picture (and a formula's chart) carries
        # its reading; constrained layout makes room for it.
        target = str(result.attrs.get("target", "target"))
        fig.supxlabel(_wrapped(sentence(found, target), width_in * 1.25), fontsize=8,
                      color="#333333", **_PLAIN)
    return fig


def _y_label(result: pd.DataFrame, axis_in: float = 2.2) -> str:
    """The value axis's title, wrapped to the axis's height (``axis_in`` inches, about 13
    characters an inch at its font size), so a long one such as a yes/no target's "change in
    P(default = Yes) vs its average, points" is not cut off at the top of the picture."""
    return "\n".join(textwrap.wrap(value_label(result), max(18, int(axis_in * 13))))


def _numeric_band(result: pd.DataFrame) -> tuple[Any, Any, str]:
    """The band to draw and its legend (:func:`labels.shown_band`)."""
    low_col, high_col, label = shown_band(result)
    return _column(result, low_col), _column(result, high_col), label


def _draw_numeric(fig: Figure, result: pd.DataFrame) -> None:
    ax, ax_density = fig.subplots(
        2, 1, sharex=True, gridspec_kw={"height_ratios": [5, 1], "hspace": 0.02}
    )
    blank = missing_row(result)
    result = curve_points(result)
    x = result["x"].to_numpy() if "x" in result.columns else np.arange(len(result))
    y = _column(result, "pd")
    y = np.full(len(result), np.nan) if y is None else y
    low, high, band_label = _numeric_band(result)
    feature = str(result.attrs.get("feature", "x"))

    ax.axhline(0.0, color="#bbbbbb", linewidth=0.8, zorder=1)
    has_band = low is not None and high is not None
    if has_band:
        ax.fill_between(
            x, low, high, color=BAND_COLOR, alpha=0.45, linewidth=0, zorder=2,
            label=band_label,
        )
    ax.plot(
        x, y, color=CURVE_COLOR, linewidth=2.0, zorder=3, label="partial dependence",
        marker="o" if len(result) <= _MAX_MARKERS else None, markersize=4,
    )
    if has_band:
        ax.legend(loc="best", fontsize=8, frameon=False)
    shown = y if not has_band else np.concatenate([y, low, high])
    if blank is not None:
        shown = np.concatenate([shown, _draw_blank(ax, result.attrs, blank)])
    _thousands(ax, shown)
    if len(result) == 0:
        ax.text(0.5, 0.5, "no points to draw", transform=ax.transAxes, ha="center", color="0.4")
    # The curve's axis takes a little over half the picture's height (the strip, the title
    # and the sentence take the rest).
    ax.set_ylabel(_y_label(result, 0.6 * fig.get_figheight()), **_PLAIN)
    ax.grid(True, color="#eeeeee", linewidth=0.8)
    ax.tick_params(labelbottom=False)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)

    strip = result.attrs.get("strip")
    if isinstance(strip, dict) and "count" in strip:
        # The engine counted the rows at each value (or in whole-number-aligned bins): every
        # value with rows has a bar, whether or not the curve has a point there.
        counts = np.asarray(strip["count"], dtype=float)
        if "values" in strip:
            ax_density.vlines(np.asarray(strip["values"], dtype=float), 0, counts,
                              color=DENSITY_COLOR, linewidth=3)
        else:
            ax_density.stairs(counts, np.asarray(strip["edges"], dtype=float), fill=True,
                              color=DENSITY_COLOR, linewidth=0)
        _finish_strip(ax_density, feature, x, result, "rows")
        return
    weights = _column(result, "n_slopes")
    weights = np.ones(len(result)) if weights is None else np.nan_to_num(weights, nan=0.0)
    spans = _column(result, "n_x")
    if spans is not None:
        # A point of a summarised curve stands for n_x values, each backed by ~n_slopes.
        weights = weights * np.nan_to_num(spans, nan=1.0)
    n_distinct = pd.Series(x).nunique()
    if n_distinct == 0:
        pass
    elif n_distinct <= _MAX_STICKS:
        ax_density.vlines(x, 0, weights, color=DENSITY_COLOR, linewidth=3)
    else:
        # One step outline, not hist's 40 bars: a patch per bar was a third of a curve's
        # drawing time.  Dates go through the axis' own units, as the curve's line does.
        counts, edges = np.histogram(
            np.asarray(ax_density.convert_xunits(x), dtype=float), bins=_MAX_STICKS,
            weights=weights,
        )
        ax_density.stairs(counts, edges, fill=True, color=DENSITY_COLOR, linewidth=0)
    _finish_strip(ax_density, feature, x, result, "data")


def _draw_blank(ax: Any, attrs: dict[str, Any], blank: pd.DataFrame) -> np.ndarray:
    """The blank rows' point beside the axis's right end: a marker at their offset from the
    curve's typical level, its 95 % band as an error bar, "(missing)" and its rows under it
    (engine/_missing.py); the values it spans, for the axis' number format."""
    from matplotlib.transforms import blended_transform_factory

    facts = attrs.get("missing") or {}
    value = float(blank["pd"].iloc[0])
    low, high = float(facts.get("low", value)), float(facts.get("high", value))
    # x in the axes' fraction, y in the data: the point stays beside the axis whatever x is.
    beside = blended_transform_factory(ax.transAxes, ax.transData)
    ax.errorbar([1.06], [value], yerr=[[value - low], [high - value]], fmt="D",
                color=CURVE_COLOR, markersize=6, capsize=3, linewidth=1.2, clip_on=False,
                transform=beside, zorder=4)
    rows = int(facts.get("rows", 0))
    ax.annotate(f"{MISSING_LABEL}\n{rows:,} rows", (1.06, low), xycoords=beside,
                xytext=(0, -4), textcoords="offset points", ha="center", va="top",
                fontsize=7, color="#333333", annotation_clip=False)
    bottom, top = ax.get_ylim()
    pad = 0.05 * max(top - bottom, high - low, 1e-12)
    ax.set_ylim(min(bottom, low - pad), max(top, high + pad))
    return np.array([value, low, high])


def _finish_strip(ax_density: Any, feature: str, x: Any, result: pd.DataFrame,
                  label: str) -> None:
    if np.asarray(x).dtype.kind in "fiu":
        _thousands(ax_density, np.asarray(x, dtype=float), axis="x")
    ax_density.set_ylim(bottom=0)
    ax_density.set_yticks([])
    ax_density.set_ylabel(label, fontsize=8, rotation=0, ha="right", va="center")
    ax_density.set_xlabel(feature, **_PLAIN)
    for side in ("top", "right", "left"):
        ax_density.spines[side].set_visible(False)
    if np.issubdtype(np.asarray(x).dtype, np.datetime64) or isinstance(
        result["x"].dtype if "x" in result.columns else None, pd.DatetimeTZDtype
    ):
        # Dates need room; matplotlib's concise formatter keeps the labels short.
        from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

        locator = AutoDateLocator()
        ax_density.xaxis.set_major_locator(locator)
        ax_density.xaxis.set_major_formatter(ConciseDateFormatter(locator))


#: From this size on a tick label shows its own exponent ("1.5e+300"): matplotlib's shared
#: "1e300" in the axis corner left ticks that read as 1.0, 1.5, 2.0.
_EXPONENT_FROM = 1e15


def _thousands(ax: Any, values: np.ndarray, axis: str = "y") -> None:
    """Thousands separators on an axis when the numbers are large enough to need them, and
    an exponent on every tick when they are huge or tiny."""
    finite = np.abs(values[np.isfinite(values)])
    if not finite.size:
        return
    from matplotlib.ticker import FuncFormatter, StrMethodFormatter

    target = ax.yaxis if axis == "y" else ax.xaxis
    top = finite.max()
    nonzero = finite[finite > 0]
    if top >= _EXPONENT_FROM or (nonzero.size and top < 1e-4):
        target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))
        if axis == "x":  # "1.25e+300" is wide: fewer ticks side by side
            from matplotlib.ticker import MaxNLocator

            target.set_major_locator(MaxNLocator(4))
    elif top >= 1000 and axis == "y":
        target.set_major_formatter(StrMethodFormatter("{x:,.0f}"))


def _draw_categorical(fig: Figure, result: pd.DataFrame) -> None:
    ax = fig.subplots()
    result, left_out = drawn_categories(result)
    # Number categories without float noise (0.3, not 0.30000000000000004), as in tables.
    labels = ([f"{c:.12g}" if isinstance(c, float | np.floating) else str(c)
               for c in result["category"]] if "category" in result.columns else [])
    y = _column(result, "pd")
    y = np.full(len(result), np.nan) if y is None else y
    low, high = _column(result, "pd_low"), _column(result, "pd_high")
    positions = np.arange(len(result))

    yerr = None
    if low is not None and high is not None:
        # Error bars are distances from the bar top; a band that does not contain the
        # estimate (possible with few trials) is clipped rather than drawn upside down.
        yerr = np.vstack([np.clip(y - low, 0, None), np.clip(high - y, 0, None)])
        yerr = np.nan_to_num(yerr, nan=0.0)
    bars = ax.bar(
        positions, y, color=CATEGORICAL_COLOR, width=0.7, zorder=2, yerr=yerr,
        error_kw={"ecolor": "#444444", "capsize": 3, "linewidth": 1},
        label="partial dependence",
    )
    if yerr is not None and bars.errorbar is not None:
        # Say which band the bars show, as a curve's legend does.
        ax.legend([bars.errorbar], [PER_POINT], loc="best", fontsize=8, frameon=False)
    ax.axhline(0.0, color="#888888", linewidth=0.8, zorder=3)
    ax.set_xticks(positions)
    # Rotate only when the labels would not fit side by side (~70 characters across).
    if len(labels) > 20:
        ax.set_xticklabels(labels, rotation=90, fontsize=7, **_PLAIN)
    elif sum(len(s) + 3 for s in labels) > 70:
        ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8, **_PLAIN)
    else:
        ax.set_xticklabels(labels, **_PLAIN)
    baseline = result.attrs.get("baseline")
    if baseline is not None and str(baseline) in labels:
        # The baseline's bar has height 0 by definition; say so instead of leaving a gap.
        i = labels.index(str(baseline))
        # Above its error bar, if any, so the two do not overlap.
        top = high[i] if high is not None and np.isfinite(high[i]) else 0.0
        ax.annotate("baseline", (i, max(top, 0.0)), xytext=(0, 3),
                    textcoords="offset points", ha="center", va="bottom", fontsize=8,
                    color="#555555")
    if len(result) == 0:
        ax.text(0.5, 0.5, "no categories to draw", transform=ax.transAxes, ha="center")
    _thousands(ax, y)
    feature = str(result.attrs.get("feature", "category"))
    if left_out:
        # Said in the picture itself: it travels without the table that lists them all.
        feature += f"\n({left_out_note(len(result), left_out)})"
    ax.set_xlabel(feature, **_PLAIN)
    ax.set_ylabel(_y_label(result, 0.65 * fig.get_figheight()), **_PLAIN)
    plain_axes(ax, "y", zorder=0)


def impact_figure(ranking: pd.DataFrame) -> Figure:
    """Horizontal bars of each feature's impact, largest on top, labelled with its share.

    Parameters
    ----------
    ranking : DataFrame
        A result of ``impact``: columns ``feature``, ``kind``, ``impact``, ``share``.

    Returns
    -------
    matplotlib.figure.Figure
        A figure whose height grows with the number of features, up to ``MAX_BARS`` of them
        (the largest; the picture says how many more the table lists).
    """
    # The engine sorts already; sorting again (stably) keeps "largest on top" true for a
    # ranking an analyst filtered or edited.  The y axis is inverted so row 0 is on top.
    impact_all = pd.to_numeric(ranking["impact"], errors="coerce").fillna(-np.inf).to_numpy()
    order = np.argsort(-impact_all, kind="stable")[:MAX_BARS]
    left_out = len(ranking) - len(order)
    n = len(order)
    width_in = 6.4
    fig = _new_figure(width_in, max(2.4, 1.3 + 0.32 * n))
    ax = fig.subplots()
    ranked = ranking.iloc[order]
    impact = pd.to_numeric(ranked["impact"], errors="coerce").to_numpy(dtype=float)
    share = share_fractions(ranking)[order]
    kinds = ranked["kind"].astype(str).to_numpy() if "kind" in ranked.columns else ["numeric"] * n
    colors = [CATEGORICAL_COLOR if k == "categorical" else CURVE_COLOR for k in kinds]
    positions = np.arange(n)
    ax.barh(positions, np.nan_to_num(impact, nan=0.0), color=colors, height=0.65)
    ax.set_yticks(positions)
    ax.set_yticklabels([str(f) for f in ranked["feature"]], **_PLAIN)
    ax.invert_yaxis()
    finite = impact[np.isfinite(impact)]
    right = float(finite.max()) if finite.size else 1.0
    right = right if right > 0 else 1.0
    for pos, value, frac in zip(positions, impact, share, strict=True):
        if np.isfinite(frac):
            # "0%" next to a visible bar reads as an error; say "<1%" instead.
            label = "<1%" if 0 < frac < 0.005 else f"{frac:.0%}"
            ax.text(np.nan_to_num(value, nan=0.0) + right * 0.01, pos, label,
                    va="center", ha="left", fontsize=8, color="#333333")
    # Leave room on the right for the percentage labels.
    ax.set_xlim(0, right * 1.12)
    label = f"impact on {ranking.attrs.get('target', 'target')}"
    if left_out:  # 3,000 features drew for 95 s into an unreadable column of names
        label += f"\n(the {n} largest; {left_out:,} more in the table)"
    ax.set_xlabel(label, **_PLAIN)
    if {"numeric", "categorical"} <= set(kinds):
        from matplotlib.patches import Patch

        ax.legend(
            handles=[Patch(color=CURVE_COLOR, label="numeric"),
                     Patch(color=CATEGORICAL_COLOR, label="categorical")],
            loc="lower right", fontsize=8, frameon=False,
        )
    if n == 0:
        ax.text(0.5, 0.5, "no features to rank", transform=ax.transAxes, ha="center")
    plain_axes(ax, "x")
    fig.suptitle(_wrapped(impact_title(ranking), width_in), fontsize=11, **_PLAIN)
    return fig


def _shown_text(fig: Figure) -> None:
    """Every text of the figure as a picture or an SVG/PDF can hold it (:func:`xml_text`):
    a category or name holding ``\\x01`` or ``ESC`` made an SVG no browser opens."""
    from matplotlib.text import Text

    for item in fig.findobj(Text):
        text = item.get_text()
        if isinstance(text, str) and (safe := xml_text(text)) != text:
            item.set_text(safe)
    # Tick labels are written again from their formatter at each drawing.
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for formatter in (axis.get_major_formatter(), axis.get_minor_formatter()):
                if not getattr(formatter, "_stratpd_xml", False):
                    formatter.format_ticks = partial(_xml_ticks, formatter.format_ticks)
                    formatter._stratpd_xml = True


def _xml_ticks(format_ticks: Any, values: Any) -> list[str]:
    return [xml_text(str(label)) for label in format_ticks(values)]


def figure_png(fig: Figure, *, dpi: int = 110) -> bytes:
    """Render a figure to PNG bytes without pyplot.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        Any figure, e.g. from :func:`curve_figure` or :func:`impact_figure`.
    dpi : int
        Resolution; 110 gives a 704 x 440 pixel picture for the default curve size.

    Returns
    -------
    bytes
        The PNG file's contents.
    """
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    _shown_text(fig)
    buffer = io.BytesIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(buffer, format="png", dpi=dpi, facecolor="white")
    # matplotlib warns once per character its font lacks; the user needs one sentence.
    missing = sorted({int(m.group(1)) for w in caught
                      if (m := _MISSING_GLYPH.search(str(w.message))) is not None})
    # Control characters (a tab in a name) are not worth naming.
    shown = ", ".join([c for c in map(chr, missing) if c.isprintable() and not c.isspace()][:10])
    if shown:
        warnings.warn(StratPDNote(
            f"the chart pictures show boxes for characters their font lacks ({shown})"
        ), stacklevel=2)
    return buffer.getvalue()


#: File types a chart can be written as: a picture, or vectors for decks and printed reports.
FIGURE_FORMATS = ("png", "svg", "pdf")


def figure_bytes(fig: Figure, fmt: str) -> bytes:
    """Render a figure as ``"png"``, ``"svg"`` or ``"pdf"``, the same bytes on every run.

    The vector formats carry no creation date and SVG's element ids come from a fixed salt,
    so the same result gives the same file (as :func:`figure_png` does).
    """
    fmt = fmt.lower().lstrip(".")
    if fmt == "png":
        return figure_png(fig)
    if fmt not in FIGURE_FORMATS:
        raise ValueError(f"unknown figure format {fmt!r}; use one of {FIGURE_FORMATS}")
    from matplotlib import rc_context

    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    _shown_text(fig)
    buffer = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {"CreationDate": None, "ModDate": None}
    with rc_context({"svg.hashsalt": "stratpd-xl", "svg.fonttype": "none"}):
        fig.savefig(buffer, format=fmt, facecolor="white", metadata=metadata)
    return buffer.getvalue()


_MISSING_GLYPH = re.compile(r"Glyph (\d+) .*missing from")
