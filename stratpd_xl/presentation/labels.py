"""Words, titles, colours and sheet names for results: presentation without drawing.

Shared by the charts (matplotlib), the workbooks (xlsxwriter), the formulas and the ribbon; this
module imports neither matplotlib nor xlsxwriter, so naming a column costs nothing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..schema import CATEGORICAL, result_kind
from ..yesno import probability_label

#: The classes' colours (a target read as classes): Okabe & Ito's eight (black last),
#: distinct for the common colour-vision deficiencies; the picture and the workbook's
#: native chart draw class k in colour k.
CLASS_COLORS = ("#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#F0E442",
                "#000000")

__all__ = [
    "PER_POINT",
    "PLAIN_PARAMETERS",
    "WHOLE_CURVE",
    "WHOLE_CURVE_BAND_MAX_RATIO",
    "BAND_COLOR",
    "CATEGORICAL_COLOR",
    "CLASS_COLORS",
    "CURVE_COLOR",
    "DENSITY_COLOR",
    "MAX_BARS",
    "curve_title",
    "decimals",
    "drawn_categories",
    "impact_title",
    "is_categorical",
    "left_out_note",
    "rows_ignored_note",
    "share_fractions",
    "shown_band",
    "value_label",
    "unique_sheet_names",
    "visible_text",
    "xml_text",
]

# Control characters from a file (a cell or column name holding ESC [2J, an OSC title
# sequence, a carriage return that hides the line before it) act on a terminal and are not
# XML 1.0 (an SVG holding one does not open): they are shown as \x1b instead.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Not XML either, and not UTF-8: a lone surrogate (half an emoji), U+FFFE, U+FFFF.
_NOT_XML = re.compile(r"[\ud800-\udfff\ufffe\uffff]")


def visible_text(text: str) -> str:
    """``text`` safe to write to a terminal: control characters (but tab and line break)
    written as ``\\xNN``."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def xml_text(text: str) -> str:
    """``text`` as an SVG or PDF can hold it: control characters as ``\\xNN`` (as the
    terminal shows them), a lone surrogate or a non-character as U+FFFD."""
    return _NOT_XML.sub("\ufffd", visible_text(text))

# One palette for pictures and native Excel charts.
CURVE_COLOR = "#1F5F9F"
BAND_COLOR = "#8FB4D9"
DENSITY_COLOR = "#9A9A9A"
CATEGORICAL_COLOR = "#D9822B"

#: Most category bars a picture or a native chart draws: the categories with the most rows
#: (and the baseline).  10,000 labels drew as one black smear and took minutes; the table
#: keeps every category.
MAX_BARS = 40

#: Parameter -> (what it means in plain words, what "not set" means), for every sheet that
#: lists the settings an answer was computed with.
PLAIN_PARAMETERS: dict[str, tuple[str, str]] = {
    "min_samples_leaf": ("smallest group of similar rows", "(not set)"),
    "min_slopes_per_x": ("fewest slopes behind a curve point", "(not set)"),
    "n_trials": ("trials on random halves (for the 95 % band)", "(not set)"),
    "random_state": ("seed of the random halves", "none: new halves each run"),
    "max_points": ("most points on a curve", "every value"),
    "honest": ("groups formed on the other half of the rows (honest)", "(not set)"),
    "adjust": ("other columns' straight-line part taken out first (adjust)", "(not set)"),
    "exclude": ("columns left out as asked (exclude)", "none"),
}


def decimals(values: Any) -> int | None:
    """Decimals that show about four significant digits of the largest value: the one rule for
    numbers in workbooks and the printed table (``None`` when all are whole numbers).

    One count for a whole column, or for columns read together (a curve and its band), so
    their digits line up.
    """
    numeric = pd.to_numeric(pd.Series(np.ravel(values)), errors="coerce").to_numpy(dtype=float)
    finite = np.abs(numeric[np.isfinite(numeric)])
    if finite.size == 0 or finite.max() == 0:
        return 0
    if np.all(finite == np.round(finite)) and finite.max() < 1e15:
        return None
    return int(np.clip(3 - math.floor(math.log10(finite.max())), 0, 6))


# The band for the whole curve is drawn when it is at most this many times as wide as the
# pointwise one (typically 1.7); wider, it would hide the curve's shape.
WHOLE_CURVE_BAND_MAX_RATIO = 2.0
#: The legends of the two bands; the tables' headers use the same words.
PER_POINT = "95% band per point"
WHOLE_CURVE = "95% band, whole curve"


def shown_band(result: pd.DataFrame) -> tuple[str, str, str]:
    """The band a curve's charts draw: (low column, high column, legend).

    The simultaneous band (``curve_low``/``curve_high``, holding the whole curve 95 % of
    the time) when it is not too wide, else the band per point (``pd_low``/``pd_high``);
    the legend says which.  The columns may be absent (no trials): then there is no band.
    """
    columns = set(result.columns)
    if {"curve_low", "curve_high", "pd_low", "pd_high"} <= columns:
        def width(low: str, high: str) -> np.float64:
            values = (pd.to_numeric(result[high], errors="coerce")
                      - pd.to_numeric(result[low], errors="coerce")).to_numpy(dtype=float)
            return np.float64(np.nanmean(values) if np.isfinite(values).any() else np.nan)

        with np.errstate(all="ignore"):  # 0 / 0 (an exact fit) is nan: the whole curve's
            ratio = width("curve_low", "curve_high") / width("pd_low", "pd_high")
        if not ratio > WHOLE_CURVE_BAND_MAX_RATIO:  # also a nil band (exact fit)
            return "curve_low", "curve_high", WHOLE_CURVE
    return "pd_low", "pd_high", PER_POINT


def rows_ignored_note(result: pd.DataFrame) -> str:
    """Why rows were ignored, said next to their count."""
    feature = result.attrs.get("feature", "the feature")
    if is_categorical(result):
        return (f"in their group of similar rows every row has the same {feature}, so the "
                "group shows no difference between categories")
    return (f"in their group of similar rows every row has the same {feature}, so the group "
            "shows no slope")


# Excel's forbidden characters, plus what XML 1.0 cannot hold (control characters,
# surrogates, U+FFFE/U+FFFF).
_INVALID_SHEET_CHARS = re.compile(r"[\[\]:*?/\\\x00-\x1f\x7f\ud800-\udfff\ufffe\uffff]")
_MAX_SHEET = 31


def is_categorical(result: pd.DataFrame) -> bool:
    """Tell a CatStratPD result (one row per category) from a StratPD curve.

    Parameters
    ----------
    result : DataFrame
        A result of ``stratpd`` or ``catstratpd``.

    Returns
    -------
    bool
        True for a categorical result.
    """
    return result_kind(result) == CATEGORICAL


def _n_label(attrs: Mapping[str, Any]) -> str:
    n = attrs.get("n_used", attrs.get("n_rows"))
    if n is None:
        return ""
    try:
        return f", n={int(n):,}"
    except (TypeError, ValueError):
        return f", n={n}"


def curve_title(result: pd.DataFrame) -> str:
    """The one-line title of a curve, shared by the picture and the native Excel chart.

    Parameters
    ----------
    result : DataFrame
        A result of ``stratpd`` or ``catstratpd`` with its ``attrs``.

    Returns
    -------
    str
        e.g. ``"partial dependence of price on carat (StratPD, n=53,940)"``.
    """
    attrs = result.attrs
    categorical = is_categorical(result)
    method = attrs.get("method") or ("CatStratPD" if categorical else "StratPD")
    target = attrs.get("target", "target")
    feature = attrs.get("feature", "feature")
    if attrs.get("target_label"):
        # A yes/no target: the curve is a change in probability, in percentage points.
        return f"{probability_label(attrs)}, by {feature} ({method}{_n_label(attrs)})"
    return f"partial dependence of {target} on {feature} ({method}{_n_label(attrs)})"


def value_label(result: pd.DataFrame) -> str:
    """What the ``pd`` values measure, said where they are read (a chart's value axis):
    ``"change in price vs its average"`` for a curve (it averages 0 over the rows),
    ``"change in price vs Fair"`` for categories (the baseline is 0), and for a yes/no
    target ``"change in P(churn = yes) vs its average, points"``."""
    attrs = result.attrs
    what = attrs.get("target_label") or attrs.get("target", "target")
    baseline = attrs.get("baseline")
    versus = (f"vs {baseline}" if is_categorical(result) and baseline is not None
              else "vs its average")
    points = ", points" if attrs.get("target_label") else ""
    return f"change in {what} {versus}{points}"


def impact_title(ranking: pd.DataFrame) -> str:
    """The title of the impact ranking chart.

    Parameters
    ----------
    ranking : DataFrame
        A result of ``impact`` with its ``attrs``.

    Returns
    -------
    str
        e.g. ``"impact of each feature on price (n=53,940)"``.
    """
    target = ranking.attrs.get("target_label") or ranking.attrs.get("target", "target")
    n = ranking.attrs.get("n_rows")
    n_part = f" (n={int(n):,})" if isinstance(n, int | np.integer) else ""
    points = ", points" if ranking.attrs.get("target_label") else ""
    return f"impact of each feature on {target}{points}{n_part}"


def share_fractions(ranking: pd.DataFrame) -> np.ndarray:
    """The ``share`` column of an impact ranking as fractions of 1.

    Parameters
    ----------
    ranking : DataFrame
        A result of ``impact``.

    Returns
    -------
    numpy.ndarray
        Shares as floats in [0, 1]; computed from ``impact`` when ``share`` is absent.
    """
    if "share" in ranking.columns:
        share = pd.to_numeric(ranking["share"], errors="coerce").to_numpy(dtype=float)
    else:
        impact = pd.to_numeric(ranking["impact"], errors="coerce").to_numpy(dtype=float)
        total = np.nansum(impact)
        share = impact / total if total > 0 else np.full(len(impact), np.nan)
    return share


def unique_sheet_names(names: Iterable[str], *, taken: Iterable[str] = ()) -> list[str]:
    """Turn arbitrary names into valid, unique Excel sheet names.

    Excel sheet names are at most 31 characters (counted in UTF-16 units), may not contain
    ``[ ] : * ? / \\``, may not start or end with an apostrophe, may not be blank or
    ``History``, and are compared case-insensitively.  Clashes get a ``" (2)"``,
    ``" (3)"`` ... suffix.  Characters XML cannot hold are replaced like forbidden ones.

    Parameters
    ----------
    names : iterable of str
        Wanted names, e.g. feature names.
    taken : iterable of str
        Names already used in the workbook (e.g. ``"Summary"``).

    Returns
    -------
    list of str
        One valid name per input, in order.
    """
    used = {t.casefold() for t in taken}
    out: list[str] = []
    for raw in names:
        base = _INVALID_SHEET_CHARS.sub("_", str(raw))
        base = _tidy_sheet_name(_cut_utf16(base, _MAX_SHEET)) or "feature"
        if base.casefold() == "history":
            base = "History_"
        name, k = base, 1
        while name.casefold() in used:
            k += 1
            suffix = f" ({k})"
            name = _tidy_sheet_name(_cut_utf16(base, _MAX_SHEET - len(suffix))) + suffix
        used.add(name.casefold())
        out.append(name)
    return out


def _cut_utf16(name: str, limit: int) -> str:
    """The longest prefix of ``name`` within ``limit`` UTF-16 code units.

    Excel counts sheet-name length in UTF-16, where characters beyond U+FFFF (emoji,
    some CJK) take two units each.
    """
    units = 0
    for i, char in enumerate(name):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > limit:
            return name[:i]
    return name


def _tidy_sheet_name(name: str) -> str:
    # Strip until stable: removing a space can expose an apostrophe and vice versa.
    previous = None
    while previous != name:
        previous, name = name, name.strip().strip("'")
    return name


def drawn_categories(result: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """(the rows a picture or chart shows, how many categories it leaves out) of a
    CatStratPD result.

    Up to ``MAX_BARS`` categories are all drawn; beyond that the ones backed by the most rows
    (ties: the larger effect), always with the baseline, in the result's order.
    """
    n = len(result)
    if n <= MAX_BARS:
        return result, 0

    def numbers(name: str) -> np.ndarray:
        if name not in result.columns:
            return np.zeros(n)
        values = pd.to_numeric(result[name], errors="coerce").to_numpy(dtype=float)
        return np.nan_to_num(values, nan=0.0)

    order = np.lexsort((-np.abs(numbers("pd")), -numbers("count")))  # most rows first
    keep = list(order[:MAX_BARS])
    baseline = result.attrs.get("baseline")
    if baseline is not None and "category" in result.columns:
        at = np.flatnonzero(result["category"].astype(str).to_numpy() == str(baseline))
        if at.size and at[0] not in keep:
            keep[-1] = at[0]
    return result.iloc[np.sort(keep)], n - MAX_BARS


def left_out_note(shown: int, left_out: int) -> str:
    """What a category chart showing ``shown`` bars says of the ``left_out`` others."""
    return f"the {shown} categories with the most rows; {left_out:,} more in the table"


def plain_axes(ax: Any, axis: str = "both", **grid: Any) -> None:
    """The charts' one look: a light grid on ``axis`` under the data, no top or right frame."""
    ax.grid(True, axis=axis, color="#eeeeee", linewidth=0.8, **grid)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
