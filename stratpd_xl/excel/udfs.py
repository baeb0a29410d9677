"""Cell formulas ``=STRATPD(...)``, ``=STRATIMPACT(...)``, ``=STRATPDBY(...)`` and
``=STRATPD2(...)`` (xlwings UDFs, Excel on Windows).

Named in the add-in config as ``UDF Modules = stratpd_xl.excel.udfs``.  Each formula returns a
2-D list: Excel 365 spills it under the formula (no legacy ``expand``); older Excel needs it
entered as an array formula over a large enough range.

Only the Excel part lives here: xlwings' declarations and the chart picture beside the formula.
What the formulas compute, their arguments' help and their error cells are
:mod:`stratpd_xl.spreadsheet`'s, shared with LibreOffice Calc.  They are plain Python
functions too: pass a DataFrame as ``data`` and leave ``caller=None`` (no picture).

Recalculation: Excel calls a UDF again whenever anything it depends on changes (and on a full
recalculation); the shared layer caches results by the cells' digest, and the numba kernels and
matplotlib are warmed up in a background thread when Excel imports this module, so the first
formula does not wait for a compile.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import xlwings as xw

from .. import spreadsheet
from ..params import PARAMETERS
from ..spreadsheet import DESCRIPTIONS, clear_cache, wait_for_warm_up
from . import pictures

__all__ = [
    "STRATCOMPARE", "STRATIMPACT", "STRATPD", "STRATPD2", "STRATPDBY", "clear_cache",
    "wait_for_warm_up",
]

_log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- declarations
# Argument options as data: the decorators below apply them, and tests feed the same options to
# xlwings' conversion pipeline.  ``ndim=2`` keeps a one-row or one-column range 2-D;
# ``err_to_str`` hands Excel errors over as "#N/A" etc., which the sheet layer treats as missing.
_DATA_OPTIONS: dict[str, Any] = {"ndim": 2, "err_to_str": True}
STRATPD_ARGS: dict[str, dict[str, Any]] = {
    name: {**(_DATA_OPTIONS if name == "data" else {}), "doc": doc}
    for name, doc in spreadsheet.STRATPD_ARGS.items()
}
STRATIMPACT_ARGS: dict[str, dict[str, Any]] = {
    name: STRATPD_ARGS[name] for name in spreadsheet.STRATIMPACT_ARGS
}
STRATPDBY_ARGS: dict[str, dict[str, Any]] = {
    name: {**(_DATA_OPTIONS if name == "data" else {}), "doc": doc}
    for name, doc in spreadsheet.STRATPDBY_ARGS.items()
}
STRATPD2_ARGS: dict[str, dict[str, Any]] = {
    name: {**(_DATA_OPTIONS if name == "data" else {}), "doc": doc}
    for name, doc in spreadsheet.STRATPD2_ARGS.items()
}
STRATCOMPARE_ARGS: dict[str, dict[str, Any]] = {
    name: {**(_DATA_OPTIONS if name == "data" else {}), "doc": doc}
    for name, doc in spreadsheet.STRATCOMPARE_ARGS.items()
}
# call_in_wizard stays on: xlwings' wizard guard makes add-in UDFs show 0 when a workbook opens
# (xlwings issue 1574), and a cached result makes the wizard's extra call cheap.
FUNC_OPTIONS: dict[str, Any] = {"category": "StratPD"}

DEFAULT_MIN_SAMPLES_LEAF = spreadsheet.DEFAULT_MIN_SAMPLES_LEAF
MAX_TRIALS = PARAMETERS["n_trials"].maximum


def _excel_function(
    args: dict[str, dict[str, Any]], description: str
) -> Callable[[Callable], Callable]:
    """Apply ``xw.arg`` for every declared argument, then ``xw.func``.

    ``description`` replaces the docstring as the text of Excel's function wizard: xlwings would
    show the docstring's first 255 characters, which for a numpy docstring is mostly headings.
    """
    if len(description) > 255:
        raise ValueError("Excel cuts function descriptions at 255 characters")

    def wrap(f: Callable) -> Callable:
        for name, options in args.items():
            f = xw.arg(name, **options)(f)
        f = xw.func(**FUNC_OPTIONS)(f)
        info = getattr(f, "__xlfunc__", None)  # only present where xlwings UDFs run (Windows)
        if info is not None:
            info["ret"]["doc"] = description
        return f

    return wrap


# --------------------------------------------------------------------------- formulas


@_excel_function(STRATPD_ARGS, DESCRIPTIONS["STRATPD"])
def STRATPD(  # noqa: N802 - Excel formula names are upper case
    data: Any,
    target: Any,
    col: Any,
    min_samples_leaf: Any = DEFAULT_MIN_SAMPLES_LEAF,
    trials: Any = 1,
    chart: Any = True,
    max_points: Any = None,
    positive: Any = None,
    exclude: Any = None,
    keep: Any = None,
    classes: Any = None,
    caller: Any = None,
) -> list[list[Any]]:
    """Partial dependence of target on col, from the data alone (StratPD / CatStratPD).

    Parameters
    ----------
    data : 2-D list of cell values or DataFrame
        The table; the first row of a cell range is the header.
    target, col : str
        Column names (case, spaces and underscores do not matter).
    min_samples_leaf : int, default 10
        Smallest group of similar rows.
    trials : int, default 1
        Trials, each on a random half of the rows; with more than 1 the table gets the 95 %
        low/high band columns.
    chart : bool, default True
        Place a picture of the curve beside the table (only when called from Excel).
    max_points : int, default 200
        Most points of a numeric curve; 0 for every distinct value.  A summarised curve
        gets a column saying how many values each point stands for.
    positive : optional
        For a yes/no target, the value that counts (default TRUE/yes/1, else the rarer
        value); the table then shows changes in its probability, in percentage points.
    exclude : optional
        Columns to leave out of the analysis: a name, names separated by commas, or a range
        holding names (blank cells ignored).  After ``positive``, so formulas written before
        either keep working.
    keep : optional
        Columns to analyse even if they look like row numbers or ids (left out otherwise,
        with a note): a name, names separated by commas, or a range holding names.  After
        ``exclude``, for the same reason.
    classes : optional
        A target with several values (text, or whole-number codes; 2 to 20): ``"all"`` (or
        TRUE) for a curve per class, or the classes to show (a text separated by commas, or
        a range holding them); the table gets a ``class`` column first.  Last, for the same
        reason.
    caller : xlwings.Range, optional
        Filled in by xlwings with the formula's cell; ``None`` from Python.

    Returns
    -------
    list of list
        As :func:`stratpd_xl.spreadsheet.stratpd`: header row plus one row per x value or
        category; on bad input one cell ``"STRATPD: <what to fix>"``.
    """
    out = spreadsheet.stratpd(
        data, target, col, min_samples_leaf=min_samples_leaf, trials=trials, chart=chart,
        max_points=max_points, positive=positive, exclude=exclude, keep=keep, classes=classes,
    )
    return _with_picture(out, caller)


@_excel_function(STRATCOMPARE_ARGS, DESCRIPTIONS["STRATCOMPARE"])
def STRATCOMPARE(  # noqa: N802 - Excel formula names are upper case
    data: Any,
    target: Any,
    col: Any,
    min_samples_leaf: Any = DEFAULT_MIN_SAMPLES_LEAF,
    trials: Any = 1,
    chart: Any = True,
    positive: Any = None,
    exclude: Any = None,
    keep: Any = None,
    classes: Any = None,
    caller: Any = None,
) -> list[list[Any]]:
    """StratPD beside a fitted model's partial dependence (PDP) and ALE for col.

    Parameters are as for :func:`STRATPD` (no ``max_points``); ``chart`` places the overlay
    picture (StratPD with its band, PDP, ALE) beside the table; ``classes`` compares each
    class's curve with the classifier's per-class partial dependence.

    Returns
    -------
    list of list
        As :func:`stratpd_xl.spreadsheet.stratcompare`: the side-by-side table, then the
        model's score and where and why model and data disagree; on bad input one cell
        ``"STRATCOMPARE: <what to fix>"``.
    """
    out = spreadsheet.stratcompare(
        data, target, col, min_samples_leaf=min_samples_leaf, trials=trials, chart=chart,
        positive=positive, exclude=exclude, keep=keep, classes=classes,
    )
    return _with_picture(out, caller)


def _show_picture(caller: Any, curve: spreadsheet.Curve) -> None:
    # A picture that cannot be placed (protected sheet, Excel busy) must not cost the table;
    # the reason goes to the log (xlwings' console with "Show Console" in the config).
    try:
        pictures.place_picture(caller, spreadsheet.chart_png(curve), len(curve.cells[0]))
    except Exception as exc:
        _log.warning("STRATPD chart not placed: %s: %s", type(exc).__name__, exc)


def _drop_picture(caller: Any) -> None:
    try:
        pictures.remove_picture(caller)
    except Exception as exc:
        _log.warning("STRATPD chart not removed: %s: %s", type(exc).__name__, exc)


@_excel_function(STRATIMPACT_ARGS, DESCRIPTIONS["STRATIMPACT"])
def STRATIMPACT(  # noqa: N802 - Excel formula names are upper case
    data: Any,
    target: Any,
    min_samples_leaf: Any = DEFAULT_MIN_SAMPLES_LEAF,
    positive: Any = None,
    exclude: Any = None,
    keep: Any = None,
    classes: Any = None,
) -> list[list[Any]]:
    """Model-free ranking of the columns by how much each alone moves the target.

    Parameters
    ----------
    data : 2-D list of cell values or DataFrame
        The table; the first row of a cell range is the header.
    target : str
        The column to explain; every other column is ranked.
    min_samples_leaf : int, default 10
        Smallest group of similar rows.
    positive : optional
        For a yes/no target, the value that counts (as in ``STRATPD``).
    exclude : optional
        Columns to leave out, neither ranked nor used to group the rows (as in ``STRATPD``).
    keep : optional
        Columns to rank even if they look like row numbers or ids (as in ``STRATPD``).
    classes : optional
        A target with several values: ``"all"`` ranks each column by the class it moves
        most, named in a ``class`` column (as in ``STRATPD``).

    Returns
    -------
    list of list
        Header ``feature, kind, impact, share`` and one row per feature, largest impact first;
        on bad input one cell ``"STRATIMPACT: <what to fix>"``.
    """
    return spreadsheet.stratimpact(
        data, target, min_samples_leaf=min_samples_leaf, positive=positive, exclude=exclude,
        keep=keep, classes=classes,
    )


def _with_picture(out: spreadsheet.FormulaResult, caller: Any) -> list[list[Any]]:
    """The cells of a formula with a picture: placed (or removed) beside the formula."""
    if caller is not None:
        if out.curve is not None and out.chart:
            _show_picture(caller, out.curve)
        else:
            _drop_picture(caller)
    return out.cells


@_excel_function(STRATPDBY_ARGS, DESCRIPTIONS["STRATPDBY"])
def STRATPDBY(  # noqa: N802 - Excel formula names are upper case
    data: Any,
    target: Any,
    col: Any,
    by: Any,
    bands: Any = None,
    min_samples_leaf: Any = DEFAULT_MIN_SAMPLES_LEAF,
    trials: Any = 1,
    chart: Any = True,
    positive: Any = None,
    exclude: Any = None,
    keep: Any = None,
    caller: Any = None,
) -> list[list[Any]]:
    """The curve of col in each group of by, one under the other, and a chart of them.

    Parameters
    ----------
    data, target, col, min_samples_leaf, trials, chart, positive, exclude, keep, caller
        As for :func:`STRATPD`.
    by : str
        The column to group by: at most 12 levels, or numbers cut into ``bands`` bands.
    bands : int, default 4
        Bands of a numeric ``by``.

    Returns
    -------
    list of list
        As :func:`stratpd_xl.spreadsheet.stratpdby`; on bad input one cell
        ``"STRATPDBY: <what to fix>"``.
    """
    return _with_picture(spreadsheet.stratpdby(
        data, target, col, by, bands=bands, min_samples_leaf=min_samples_leaf, trials=trials,
        chart=chart, positive=positive, exclude=exclude, keep=keep,
    ), caller)


@_excel_function(STRATPD2_ARGS, DESCRIPTIONS["STRATPD2"])
def STRATPD2(  # noqa: N802 - Excel formula names are upper case
    data: Any,
    target: Any,
    col1: Any,
    col2: Any,
    grid: Any = None,
    min_samples_leaf: Any = DEFAULT_MIN_SAMPLES_LEAF,
    chart: Any = True,
    positive: Any = None,
    exclude: Any = None,
    keep: Any = None,
    caller: Any = None,
) -> list[list[Any]]:
    """The two-way surface of target over col1 and col2 (experimental), and its heat map.

    Parameters
    ----------
    data, target, min_samples_leaf, chart, positive, exclude, keep, caller
        As for :func:`STRATPD`.
    col1, col2 : str
        Two different columns.
    grid : int, default 10
        Points per column.

    Returns
    -------
    list of list
        As :func:`stratpd_xl.spreadsheet.stratpd2`; on bad input one cell
        ``"STRATPD2: <what to fix>"``.
    """
    return _with_picture(spreadsheet.stratpd2(
        data, target, col1, col2, grid=grid, min_samples_leaf=min_samples_leaf, chart=chart,
        positive=positive, exclude=exclude, keep=keep,
    ), caller)


# Warm the kernels while Excel is still loading (not in xlwings Lite: it sets
# STRATPD_XL_WARMUP=0, as Pyodide cannot start threads).
spreadsheet.start_warm_up()
