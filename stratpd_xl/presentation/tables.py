"""Result tables with the column headers an analyst sees (in a sheet, a CSV or the report).

The engine's results use short machine names (``x``, ``pd``, ``n_slopes`` ...); these helpers
rename and order them for people.  No statistics are computed here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..schema import MISSING_LABEL, missing_row
from ..yesno import probability_label
from .labels import PER_POINT, WHOLE_CURVE, decimals, is_categorical, share_fractions

__all__ = [
    "ALL_HIGH",
    "ALL_LOW",
    "BAND_HIGH",
    "BAND_LOW",
    "WHOLE_HIGH",
    "WHOLE_LOW",
    "PD",
    "ROWS",
    "SLOPES",
    "SIMULTANEOUS",
    "SUMMARISED",
    "band_headers",
    "curve_headers",
    "curve_table",
    "impact_table",
    "inert_table",
    "is_by_class",
    "inert_text",
    "pd_header",
    "text_table",
]

PD = "partial dependence"
# The two bands say which they are, in the words of the charts' legends: per point (each
# point's own 95 % range) or for the whole curve at once (all points inside together).
BAND_LOW = f"low ({PER_POINT})"
BAND_HIGH = f"high ({PER_POINT})"
WHOLE_LOW = f"low ({WHOLE_CURVE})"
WHOLE_HIGH = f"high ({WHOLE_CURVE})"
#: The simultaneous band of categorical effects holds every category at once.
ALL_LOW = "low (95% band, all categories)"
ALL_HIGH = "high (95% band, all categories)"
SIMULTANEOUS = (WHOLE_LOW, WHOLE_HIGH, ALL_LOW, ALL_HIGH)
SLOPES = "slopes averaged"
SUMMARISED = "values summarised"
ROWS = "rows"


# A spreadsheet reads a cell starting with one of these as a formula (OWASP "CSV injection");
# a category named '=HYPERLINK(...)' must arrive as text, not as a live link or command.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def inert_text(value: object) -> object:
    """``value`` unchanged unless it is text a spreadsheet would run as a formula.

    Parameters
    ----------
    value
        Any cell value.

    Returns
    -------
    object
        Text starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a
        leading apostrophe (shown as text by Excel and LibreOffice); text that is a plain
        number such as ``"-2.5"`` and every non-text value are returned as they are.
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START) and not _is_number(value):
        return "'" + value
    return value


def inert_table(table: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``table`` whose headers and text cells cannot run as formulas.

    Used by every text writer (CSV files, printed tables) so that opening or pasting an
    answer never runs a formula hidden in a category or column name.  Numbers, dates and
    missing values are untouched.

    Parameters
    ----------
    table : DataFrame
        A result table.

    Returns
    -------
    DataFrame
        The same shape and ``attrs``; see :func:`inert_text` for what changes.
    """
    out = table.copy()
    out.columns = [inert_text(str(c)) for c in table.columns]
    for j in range(out.shape[1]):
        col = out.iloc[:, j]
        if pd.api.types.is_numeric_dtype(col.dtype) or pd.api.types.is_datetime64_any_dtype(
            col.dtype
        ):
            continue
        out.isetitem(j, col.astype(object).map(inert_text))
    out.attrs = dict(table.attrs)
    return out


#: The first column of a result with a curve per class of the target, as tables show it.
CLASS = "class"


def is_by_class(result: pd.DataFrame) -> bool:
    """True for a result (or its table) with a curve or effects per class of the target
    (``stratpd(..., classes=True)``): a ``class`` column and the classes in ``attrs``."""
    return CLASS in getattr(result, "columns", ()) and "classes" in (
        getattr(result, "attrs", None) or {})


def pd_header(result: pd.DataFrame) -> str:
    """Header of the ``pd`` column: ``"partial dependence"``, or for a yes/no target what it
    measures, ``"change in P(churn = yes), points"``, and for a target read as classes
    ``"change in P(species = class), points"`` (``attrs`` of a result or of its table).
    """
    if is_by_class(result):
        return f"change in P({result.attrs.get('target', 'target')} = {CLASS}), points"
    return probability_label(result.attrs) or PD


def band_headers(result: pd.DataFrame) -> dict[str, str]:
    """Result column -> table header of the two bands (``pd_low``... ``curve_high``): per
    point, and for the whole curve (a numeric curve) or all categories (categorical)."""
    whole = (ALL_LOW, ALL_HIGH) if is_categorical(result) else (WHOLE_LOW, WHOLE_HIGH)
    return {"pd_low": BAND_LOW, "pd_high": BAND_HIGH,
            "curve_low": whole[0], "curve_high": whole[1]}


def _feature_header(result: pd.DataFrame, default: str, others: list[str]) -> str:
    name = str(result.attrs.get("feature") or default)
    # A feature literally called "rows" or "partial dependence" would give two columns with
    # one header, which Excel tables reject and readers of the CSV would misread.
    if name.strip().casefold() in {o.casefold() for o in others}:
        name = f"{name} (feature)"
    return name


def curve_table(result: pd.DataFrame) -> pd.DataFrame:
    """A curve result with user-facing headers, ready to write into cells or a CSV.

    Parameters
    ----------
    result : DataFrame
        A result of ``stratpd`` or ``catstratpd``.

    Returns
    -------
    DataFrame
        Numeric: columns ``<feature>``, ``"partial dependence"`` (for a yes/no target
        ``"change in P(churn = yes), points"``), with trials ``"low (95% band per point)"``,
        ``"high (95% band per point)"``, ``"low (95% band, whole curve)"`` and
        ``"high (95% band, whole curve)"`` (``pd_low``, ``pd_high``, ``curve_low``,
        ``curve_high``), ``"slopes averaged"``, and ``"values summarised"`` when the curve
        was summarised (``n_x``).
        Categorical: ``<feature>``, ``"partial dependence"``, ``"rows"`` and the band columns,
        the simultaneous one as ``"low (95% band, all categories)"`` and ``"high (...)"``.
        Values are unchanged (datetimes stay datetimes, missing values stay NaN), but for
        a numeric curve's row of the feature's blanks (``missing``), last, whose feature
        cell reads "(missing)"; ``attrs`` are copied from ``result``.  A result with a
        curve per class of the target has ``"class"`` first, its classes one under the other.
    """
    columns = curve_headers(result)
    missing = [c for c in columns if c not in result.columns]
    if missing:
        raise ValueError(f"result has no column {missing[0]!r}; is it a StratPD result?")
    table = result[list(columns)].rename(columns=columns).reset_index(drop=True)
    blank = missing_row(result)
    if blank is not None and not is_categorical(result):
        # The feature's column holds values and, on the blanks' row, the words for them.
        shown = table.iloc[:, 0].astype(object)
        shown.iloc[-1] = MISSING_LABEL
        table.isetitem(0, shown)
    if is_by_class(result):
        table.insert(0, CLASS, result[CLASS].astype(object).to_numpy())
    table.attrs = dict(result.attrs)
    return table


def curve_headers(result: pd.DataFrame) -> dict[str, str]:
    """Result column -> the header :func:`curve_table` gives it, in the table's order (the
    columns a table shows; ``slope`` and ``few_rows`` are not among them)."""
    headers = band_headers(result)
    classes = [CLASS] if is_by_class(result) else []
    # A band is shown when both its ends are there.
    bands = {k: headers[k] for pair in (("pd_low", "pd_high"), ("curve_low", "curve_high"))
             if set(pair) <= set(result.columns) for k in pair}
    if is_categorical(result):
        fixed = [pd_header(result), ROWS, *headers.values(), *classes]
        columns = {"category": _feature_header(result, "category", fixed), "pd": fixed[0]}
        if "count" in result.columns:
            columns["count"] = ROWS
    else:
        fixed = [pd_header(result), *headers.values(), SLOPES, SUMMARISED, *classes]
        columns = {"x": _feature_header(result, "x", fixed), "pd": fixed[0]}
    columns.update(bands)
    if not is_categorical(result) and "n_slopes" in result.columns:
        columns["n_slopes"] = SLOPES
    if not is_categorical(result) and "n_x" in result.columns:
        # A summarised curve: how many distinct values each point stands for.
        columns["n_x"] = SUMMARISED
    return columns


def impact_table(ranking: pd.DataFrame) -> pd.DataFrame:
    """An impact ranking with user-facing headers.

    Parameters
    ----------
    ranking : DataFrame
        A result of ``impact``: columns ``feature``, ``kind``, ``impact``, ``share``.

    Returns
    -------
    DataFrame
        Columns ``"feature"``, ``"kind"``, ``"class"`` (a target read as classes: the
        class each feature moves most, whose impact it is), ``"impact"``, ``"share"`` (a
        fraction of 1, shown as a percentage in workbooks), ``"rows"`` (rows behind the
        feature's curve), ``"thin"`` (under 20 % of the rows: ranked after the others) and
        ``"evidence"`` (why a feature is ranked after the others: tied to other columns, or
        thin; empty when nothing sets it apart) when the ranking has them, in the order
        given; ``attrs`` are copied.
    """
    table = pd.DataFrame(
        {
            "feature": ranking["feature"].astype(str).to_numpy(),
            "kind": (ranking["kind"].astype(str).to_numpy() if "kind" in ranking.columns
                     else ["numeric"] * len(ranking)),
            "impact": pd.to_numeric(ranking["impact"], errors="coerce").to_numpy(dtype=float),
            "share": share_fractions(ranking),
        }
    )
    if CLASS in ranking.columns:
        table.insert(2, CLASS, ranking[CLASS].astype(object).to_numpy())
    # The evidence, as the rankings carry it: the rows behind each curve, whether they are
    # few (thin), and why a feature is set apart (presentation.evidence).
    for name in ("rows", "thin", "evidence"):
        if name in ranking.columns:
            table[name] = ranking[name].to_numpy()
    table.attrs = dict(ranking.attrs)
    return table


#: Numbers from this size on are printed with an exponent (four significant digits).
HUGE = 1e15


def text_table(table: pd.DataFrame) -> str:
    """``table`` as plain text for a person, the command line's printout.

    The workbook's number rule (:func:`~stratpd_xl.presentation.labels.decimals`: about four
    significant digits, one count of decimals per column, a curve and its band alike), shares
    in percent, feature values without float noise, numbers of 1e15 or more with an exponent
    (a target near 1e306 would print 300 digits a number), and text cells made inert
    (:func:`inert_table`).  Control characters are the caller's to make visible.
    """
    shown = inert_table(table)
    band = [c for c in ("pd", "pd_low", "pd_high", "curve_low", "curve_high")
            if c in shown.columns]
    for name in shown.columns:
        column = shown[name]
        if pd.api.types.is_float_dtype(column.dtype) and _huge(column):
            shown[name] = [("" if v != v else f"{v:.4g}") for v in column.astype(float)]
        elif name == "share":
            shown[name] = [("" if v != v else f"{v:.1%}") for v in column.astype(float)]
        elif name in ("x", "category") and pd.api.types.is_float_dtype(column.dtype):
            # Feature values as the workbook shows them: no float noise (0.3, not
            # 0.30000000000000004), one count of decimals for the column.
            places = _value_places(column)
            shown[name] = [("" if v != v else f"{v:,.{places}f}" if abs(v) >= 10_000
                            else f"{v:.{places}f}") for v in column]
        elif pd.api.types.is_float_dtype(column.dtype):
            places = decimals(shown[band].to_numpy() if name in band else column)
            shown[name] = [("" if v != v else f"{v:.{places or 0}f}") for v in column]
    with pd.option_context("display.max_rows", None, "display.width", 200):
        return shown.to_string(index=False, float_format=lambda v: f"{v:.6g}")


def _huge(column: pd.Series) -> bool:
    """True when a column holds a finite number of :data:`HUGE` or more, beyond plain digits."""
    values = column.to_numpy(dtype=float, na_value=np.nan)
    finite = np.abs(values[np.isfinite(values)])
    return bool(finite.size) and float(finite.max()) >= HUGE


def _value_places(column: pd.Series) -> int:
    """Decimals a column of feature values has, counted at 12 significant digits (at most
    6), the rule of the workbook's feature columns."""
    finite = pd.to_numeric(column, errors="coerce").dropna().unique()[:2000]
    return min(max((len(f"{float(f'{v:.12g}'):f}".rstrip("0").partition(".")[2])
                    for v in finite), default=0), 6)
