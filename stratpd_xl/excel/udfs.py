"""Cell formulas ``=STRATPD(...)`` and ``=STRATIMPACT(...)`` (xlwings UDFs, Excel on Windows).

Named in the add-in config as ``UDF Modules = stratpd_xl.excel.udfs``.  Each formula returns a
2-D list: Excel 365 spills it under the formula (no legacy ``expand``); older Excel needs it
entered as an array formula over a large enough range.

The functions stay thin: cells -> sheet layer -> engine -> tables/charts -> cells.  They are plain
Python functions too: pass a DataFrame as ``data`` and leave ``caller=None`` (no picture).

Recalculation: Excel calls a UDF again whenever anything it depends on changes (and on a full
recalculation), so results are kept in a small LRU cache keyed on the cell values and the
arguments, and the numba kernels and matplotlib are warmed up in a background thread when Excel
imports this module, so the first formula does not wait for a compile.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xlwings as xw

from .. import workflow
from ..errors import StratPDInputError, error_text
from ..input import sheet
from ..params import PARAMETERS, Settings
from ..presentation import tables
from . import KEEP_HINT, pictures

__all__ = ["STRATIMPACT", "STRATPD", "clear_cache", "wait_for_warm_up"]

_log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- declarations
# Argument options as data: the decorators below apply them, and tests feed the same options to
# xlwings' conversion pipeline.  ``ndim=2`` keeps a one-row or one-column range 2-D;
# ``err_to_str`` hands Excel errors over as "#N/A" etc., which the sheet layer treats as missing.

STRATPD_ARGS: dict[str, dict[str, Any]] = {
    "data": {"ndim": 2, "err_to_str": True,
             "doc": "The table, header row included, e.g. Data!A1:J5001."},
    "target": {"doc": 'Column to explain, e.g. "price".'},
    "col": {"doc": 'Column whose effect you want, e.g. "carat".'},
    "min_samples_leaf": {
        "doc": f"Smallest group of similar rows (default "
        f"{PARAMETERS['min_samples_leaf'].default})."
    },
    "trials": {
        "doc": "Trials on random halves of the rows; more than 1 adds a 95% low/high band "
        "(default 1)."
    },
    "chart": {"doc": "FALSE: no chart picture beside the table (default TRUE)."},
    "max_points": {
        "doc": f"Most curve points (default {PARAMETERS['max_points'].default}); 0 for every "
        "distinct value."
    },
    "positive": {
        "doc": "Yes/no target only: the value that counts, e.g. \"yes\" (default TRUE/yes/1, "
        "else the rarer value)."
    },
}
STRATIMPACT_ARGS: dict[str, dict[str, Any]] = {
    "data": STRATPD_ARGS["data"],
    "target": STRATPD_ARGS["target"],
    "min_samples_leaf": STRATPD_ARGS["min_samples_leaf"],
    "positive": STRATPD_ARGS["positive"],
}
# call_in_wizard stays on: xlwings' wizard guard makes add-in UDFs show 0 when a workbook opens
# (xlwings issue 1574), and a cached result makes the wizard's extra call cheap.
FUNC_OPTIONS: dict[str, Any] = {"category": "StratPD"}

DEFAULT_MIN_SAMPLES_LEAF = PARAMETERS["min_samples_leaf"].default
MAX_TRIALS = PARAMETERS["n_trials"].maximum
# A formula must show the same numbers on every recalculation, so the seed is fixed.
RANDOM_STATE = 0
CACHE_SIZE = 32

_TRUE_WORDS = frozenset({"true", "wahr", "vrai", "yes", "1"})
_FALSE_WORDS = frozenset({"false", "falsch", "faux", "no", "0"})


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


# --------------------------------------------------------------------------- cache


class _LRU:
    """A small thread-safe least-recently-used cache (Excel may call from several threads)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                self.hits += 1
                return self._items[key]
            self.misses += 1
            return None

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.hits = self.misses = 0


_cache = _LRU(CACHE_SIZE)


def clear_cache() -> None:
    """Forget all cached results (e.g. after changing the engine backend)."""
    _cache.clear()


@dataclass
class _Curve:
    cells: list[list[Any]]
    result: pd.DataFrame
    png: bytes | None = None


def _frame_key(frame: pd.DataFrame) -> Hashable:
    """A fingerprint of a typed table, computed from its column arrays.

    Two blocks of cells that type to the same table give the same answer, so the typed frame
    is the right thing to key on; the digest keeps 32 cached 200,000-row tables small.
    """
    digest = hashlib.sha256()
    for name, column in frame.items():
        digest.update(f"{name}\x00{column.dtype}\x00".encode("utf-8", "surrogatepass"))
        if isinstance(column.dtype, np.dtype) and column.dtype.kind in "iufMm":
            # Fixed-width values are their own fingerprint: hashing the buffer is a third of
            # the cost of hashing pandas' per-row hashes (and tells NaN payloads apart, which
            # only costs a cache miss).
            digest.update(np.ascontiguousarray(column.to_numpy()).data)
        else:
            digest.update(pd.util.hash_pandas_object(column, index=False).to_numpy().data)
    return (frame.shape, digest.hexdigest())


# --------------------------------------------------------------------------- arguments


def _table(data: Any) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data
    if data is None:  # =STRATPD(, "price", "carat"): the argument was left empty
        raise StratPDInputError(
            "data is missing; give the range of a table with its header row, e.g. "
            "Data!A1:J5001"
        )
    if not isinstance(data, list | tuple):
        raise StratPDInputError(
            "data must be a range with a header row, e.g. Data!A1:J5001; got a single value"
        )
    return sheet.frame_from_cells(data)


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _settings(**values: Any) -> Settings:
    """Formula arguments -> settings: a blank argument takes the table's default."""
    given = {name: value for name, value in values.items() if not _is_missing(value)}
    return Settings.make(random_state=RANDOM_STATE, **given)


def _flag(value: Any, name: str) -> bool:
    """An optional TRUE/FALSE argument: blank -> TRUE; numbers and words are understood."""
    if _is_missing(value):
        return True
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | float) and np.isfinite(value):
        return value != 0
    if isinstance(value, str):
        word = value.strip().casefold()
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
    raise StratPDInputError(f"{name} must be TRUE or FALSE; got {value!r}")


def _error(exc: BaseException, prefix: str) -> list[list[Any]]:
    return [[error_text(exc, prefix=prefix)]]


# --------------------------------------------------------------------------- formulas


def _positive(value: Any) -> Any:
    """A blank formula argument means "choose the positive value for me"."""
    return None if _is_missing(value) else value


def _curve(data: Any, target: Any, col: Any, settings: Settings, positive: Any = None) -> _Curve:
    frame = _table(data)
    key = ("STRATPD", _frame_key(frame), str(target), str(col), settings, repr(positive))
    cached = _cache.get(key)
    if cached is not None:
        return cached
    result = workflow.curve(
        frame, target, col, settings=settings, how_to_keep=KEEP_HINT, positive=positive
    )
    curve = _Curve(sheet.cells_from_frame(tables.curve_table(result.curve)), result.curve)
    _cache.put(key, curve)
    return curve


def _chart_png(curve: _Curve) -> bytes:
    if curve.png is None:
        from ..presentation import charts  # matplotlib only when a picture is wanted

        curve.png = charts.figure_png(charts.curve_figure(curve.result))
    return curve.png


@_excel_function(
    STRATPD_ARGS,
    "Partial dependence of target on col from the data alone (StratPD): a table of x values "
    "and how much the target changes, all else equal, plus a chart beside it.",
)
def STRATPD(  # noqa: N802 - Excel formula names are upper case
    data: Any,
    target: Any,
    col: Any,
    min_samples_leaf: Any = DEFAULT_MIN_SAMPLES_LEAF,
    trials: Any = 1,
    chart: Any = True,
    max_points: Any = None,
    positive: Any = None,
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
        Last of the formula's arguments, so formulas written before it keep working.
    caller : xlwings.Range, optional
        Filled in by xlwings with the formula's cell; ``None`` from Python.

    Returns
    -------
    list of list
        Header row plus one row per x value or category: the feature, "partial dependence",
        the band columns when trials > 1, and "slopes averaged" (numeric) or "rows"
        (categorical).  On bad input one cell ``"STRATPD: <what to fix>"``.
    """
    try:
        settings = _settings(
            min_samples_leaf=min_samples_leaf, n_trials=trials, max_points=max_points
        )
        want_chart = _flag(chart, "chart")
        curve = _curve(data, target, col, settings, _positive(positive))
    except Exception as exc:  # the cell shows a sentence; never a traceback
        _drop_picture(caller)
        return _error(exc, "STRATPD")
    if caller is not None:
        if want_chart:
            _show_picture(caller, curve)
        else:
            _drop_picture(caller)
    return curve.cells


def _show_picture(caller: Any, curve: _Curve) -> None:
    # A picture that cannot be placed (protected sheet, Excel busy) must not cost the table;
    # the reason goes to the log (xlwings' console with "Show Console" in the config).
    try:
        pictures.place_picture(caller, _chart_png(curve), len(curve.cells[0]))
    except Exception as exc:
        _log.warning("STRATPD chart not placed: %s: %s", type(exc).__name__, exc)


def _drop_picture(caller: Any) -> None:
    if caller is None:
        return
    try:
        pictures.remove_picture(caller)
    except Exception as exc:
        _log.warning("STRATPD chart not removed: %s: %s", type(exc).__name__, exc)


@_excel_function(
    STRATIMPACT_ARGS,
    "Model-free ranking of the columns by how much each alone moves the target (StratPD "
    "impact), largest first.",
)
def STRATIMPACT(  # noqa: N802 - Excel formula names are upper case
    data: Any,
    target: Any,
    min_samples_leaf: Any = DEFAULT_MIN_SAMPLES_LEAF,
    positive: Any = None,
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

    Returns
    -------
    list of list
        Header ``feature, kind, impact, share`` and one row per feature, largest impact first;
        on bad input one cell ``"STRATIMPACT: <what to fix>"``.
    """
    try:
        settings = _settings(min_samples_leaf=min_samples_leaf)
        frame = _table(data)
        chosen = _positive(positive)
        key = ("STRATIMPACT", _frame_key(frame), str(target), settings, repr(chosen))
        cells = _cache.get(key)
        if cells is None:
            result = workflow.analysis(
                frame, target, settings=settings, how_to_keep=KEEP_HINT, positive=chosen
            )
            cells = sheet.cells_from_frame(tables.impact_table(result.impact))
            _cache.put(key, cells)
        return cells
    except Exception as exc:  # the cell shows a sentence; never a traceback
        return _error(exc, "STRATIMPACT")


# --------------------------------------------------------------------------- warm-up


def _warm_up() -> None:
    """Run each engine kernel and the chart code once on a tiny table.

    numba compiles on first use (cached on disk afterwards, but loading still takes a moment)
    and matplotlib builds its font cache on first use; doing both here, while Excel is still
    busy loading, keeps the first formula fast.
    """
    try:
        from .. import engine
        from ..presentation import charts

        rng = np.random.default_rng(0)
        n = 80
        frame = pd.DataFrame(
            {"x": rng.normal(size=n), "c": rng.choice(["a", "b", "c"], size=n)}
        )
        frame["y"] = 2 * frame["x"] + (frame["c"] == "b") + rng.normal(scale=0.1, size=n)
        curve = engine.partial_dependence(frame, "y", "x", min_samples_leaf=5)
        engine.partial_dependence(frame, "y", "c", min_samples_leaf=5)
        sheet.frame_from_cells([["a", "b"], [1.0, "x"], [2.0, None]])
        charts.figure_png(charts.curve_figure(curve), dpi=20)
    except Exception:  # noqa: BLE001 - a failed warm-up only costs time later
        pass


_warm_up_thread: threading.Thread | None = None
if os.environ.get("STRATPD_XL_WARMUP", "1") != "0":
    _warm_up_thread = threading.Thread(target=_warm_up, name="stratpd-warm-up", daemon=True)
    _warm_up_thread.start()


def wait_for_warm_up(timeout: float | None = None) -> bool:
    """Block until the warm-up finished (True) or ``timeout`` seconds passed (False)."""
    if _warm_up_thread is None:
        return True
    _warm_up_thread.join(timeout)
    return not _warm_up_thread.is_alive()

