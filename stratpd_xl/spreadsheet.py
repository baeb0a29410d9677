"""What the spreadsheet front ends do, whichever spreadsheet runs them: cells in, cells out.

``=STRATPD(...)``, ``=STRATIMPACT(...)``, ``=STRATPDBY(...)`` (a curve per group) and
``=STRATPD2(...)`` (a two-way surface) exist in Excel (xlwings, :mod:`stratpd_xl.excel`)
and in LibreOffice Calc (an extension, :mod:`stratpd_xl.libreoffice`).  Both hosts hand over a
2-D block of cell values and a few optional arguments, and show a 2-D block back; everything in
between lives here once: the arguments' help texts and defaults (from :data:`PARAMETERS`), how a
blank or TRUE/FALSE argument is read, the typing of the cells, the call to
:mod:`stratpd_xl.workflow`, the result cells, the one-cell error texts and a small cache, so
a recalculation with unchanged cells costs a digest, not an analysis.

The same holds for the "Analyse selection" command: :func:`report_sheet` analyses the selected
cells and lays out the new sheet as a list of items (cell blocks, a number format, charts), which
Excel draws with chart pictures and Calc with native charts.

The host adapters only convert their own values (COM, UNO) and place what the host can place
(Excel: a chart picture beside the formula).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from . import workflow
from .errors import StratPDInputError, argument, error_text
from .input import sheet
from .params import PARAMETERS, Settings
from .presentation import tables, words
from .presentation.labels import PLAIN_PARAMETERS, decimals, unique_sheet_names
from .presentation.notes import notes_table
from .presentation.notes import shown as shown_notes
from .schema import counted

__all__ = [
    "DESCRIPTIONS", "KEEP_HINT", "STRATCOMPARE_ARGS", "STRATIMPACT_ARGS", "STRATPD_ARGS",
    "Cells", "Chart", "Curve", "stratcompare",
    "FormulaResult", "Layout", "NumberFormat", "ReportSheet", "chart_png", "clear_cache",
    "report_sheet", "start_warm_up", "stratimpact", "stratpd", "stratpd2", "stratpdby",
    "wait_for_warm_up", "STRATPD2_ARGS", "STRATPDBY_ARGS", "keep_hint",
]

#: How *Analyse selection* tells its user to analyse a column left out as a row number or an
#: id; a formula names its own ``keep`` argument instead (:func:`keep_hint`).
KEEP_HINT = "list it in the workbook name StratPD_keep to analyse it anyway"

DEFAULT_MIN_SAMPLES_LEAF = PARAMETERS["min_samples_leaf"].default
# A formula must show the same numbers on every recalculation, so the seed is fixed.
RANDOM_STATE = PARAMETERS["random_state"].default
CACHE_SIZE = 32

# --------------------------------------------------------------------------- declarations
#: The range every example and message shows, in Excel's syntax; Calc writes a sheet's cells
#: with a dot, and its extension shows :data:`CALC_EXAMPLE_RANGE` instead.
EXAMPLE_RANGE = "Data!A1:J5001"
CALC_EXAMPLE_RANGE = "Data.A1:J5001"
#: Argument -> help text, in the formula's order: Excel's and Calc's function wizards show these.
STRATPD_ARGS: dict[str, str] = {
    "data": f"The table, header row included, e.g. {EXAMPLE_RANGE}.",
    "target": 'Column to explain, e.g. "price".',
    "col": 'Column whose effect you want, e.g. "carat".',
    "min_samples_leaf": f"Smallest group of similar rows (default {DEFAULT_MIN_SAMPLES_LEAF}).",
    "trials": f"Trials on random halves of the rows; more than 1 adds a 95% low/high band "
    f"(default {PARAMETERS['n_trials'].default}).",
    "chart": "FALSE: no chart picture beside the table (default TRUE).",
    "max_points": f"Most curve points (default {PARAMETERS['max_points'].default}); 0 for every "
    "distinct value.",
    "positive": "Yes/no target only: the value that counts, e.g. \"yes\" (default TRUE/yes/1, "
    "else the rarer value).",
    # Last, after positive: formulas written before it keep their arguments' places.
    "exclude": "Columns to leave out of the analysis (e.g. parts of the target): a name, names "
    "separated by commas such as \"casual, registered\", or a range holding names (default "
    "none).",
    # After exclude, for the same reason.
    "keep": "Columns to analyse even if they look like row numbers or ids, e.g. \"store_id\": "
    "a name, names separated by commas, or a range holding names (default none).",
    # Last, for the same reason.
    "classes": "A target with several values (text, or codes; 2 to 20): \"all\" for a curve per "
    "class, or the classes to show, e.g. \"setosa, virginica\" or a range holding them; the "
    "table gets a class column first (default none).",
}
STRATIMPACT_ARGS: dict[str, str] = {
    name: STRATPD_ARGS[name]
    for name in ("data", "target", "min_samples_leaf", "positive", "exclude", "keep")
} | {"classes": "A target with several values (text, or codes; 2 to 20): \"all\" ranks each "
     "column by the class it moves most, named in a class column (default none)."}
STRATPDBY_ARGS: dict[str, str] = {
    **{name: STRATPD_ARGS[name] for name in ("data", "target", "col")},
    "by": 'Column to group the rows by, e.g. "region": one curve per level, or per band of '
    "its values if it holds numbers.",
    "bands": f"Bands of a numeric by column (default {PARAMETERS['bands'].default}).",
    **{name: STRATPD_ARGS[name] for name in ("min_samples_leaf", "trials", "chart",
                                              "positive", "exclude", "keep")},
}
STRATPD2_ARGS: dict[str, str] = {
    **{name: STRATPD_ARGS[name] for name in ("data", "target")},
    "col1": 'First column, across the heat map, e.g. "carat".',
    "col2": 'Second column, up the heat map, e.g. "cut".',
    "grid": f"Points per column (default {PARAMETERS['grid'].default}).",
    "min_samples_leaf": STRATPD_ARGS["min_samples_leaf"],
    "chart": "FALSE: no heat map picture beside the table (default TRUE).",
    "positive": STRATPD_ARGS["positive"],
    "exclude": STRATPD_ARGS["exclude"],
    "keep": STRATPD_ARGS["keep"],
}
STRATCOMPARE_ARGS: dict[str, str] = {
    **{name: STRATPD_ARGS[name] for name in ("data", "target", "col", "min_samples_leaf",
                                             "trials")},
    "chart": "FALSE: no picture of the curves beside the table (default TRUE).",
    "positive": STRATPD_ARGS["positive"],
    "exclude": STRATPD_ARGS["exclude"],
    "keep": STRATPD_ARGS["keep"],
    "classes": "A target with several values (text, or codes; 2 to 20): \"all\" puts each "
    "class's curve beside the model's partial dependence of its chance, class first, with an "
    "agreement per class (default none).",
}
#: Formula -> its arguments in order: the signature every host's wrapper is generated from.
FORMULA_ARGS: dict[str, dict[str, str]] = {
    "STRATPD": STRATPD_ARGS,
    "STRATIMPACT": STRATIMPACT_ARGS,
    "STRATPDBY": STRATPDBY_ARGS,
    "STRATPD2": STRATPD2_ARGS,
    "STRATCOMPARE": STRATCOMPARE_ARGS,
}
#: A setting's Python name -> its formula argument's name, where they differ.
_FORMULA_NAME = {"n_trials": "trials"}
#: The workbook names *Analyse selection* (Excel's ribbon, Calc's menu, Lite's script) reads,
#: by formula argument: each sets what the argument of that name sets in a formula.
MENU_NAMES: dict[str, str] = {
    "target": "StratPD_target",
    "exclude": "StratPD_exclude",
    "positive": "StratPD_positive",
    "trials": "StratPD_trials",
    "keep": "StratPD_keep",
}


def formula_argument_words(formula: str) -> Callable[[str], str]:
    """How an error in ``=FORMULA(...)`` names a setting: by the formula's argument name and
    its place in the signature, ``"trials (argument 5 of STRATPD)"``."""
    order = list(FORMULA_ARGS[formula])

    def words(setting: str) -> str:
        name = _FORMULA_NAME.get(setting, setting)
        if name not in order:
            return name
        return f"{name} (argument {order.index(name) + 1} of {formula})"

    return words


def keep_hint(formula: str) -> str:
    """How ``=FORMULA(...)`` tells its user to analyse a column it left out as a row number or
    an id: by its ``keep`` argument, named with its place in the signature."""
    return f"give its name as {formula_argument_words(formula)('keep')} to analyse it anyway"


def menu_argument_words(setting: str) -> str:
    """How an error of *Analyse selection* names a setting: the workbook name that sets it."""
    name = _FORMULA_NAME.get(setting, setting)
    return f"the name {MENU_NAMES[name]}" if name in MENU_NAMES else name


#: Formula -> the one-line description the function wizards show (Excel cuts at 255 characters).
DESCRIPTIONS: dict[str, str] = {
    "STRATPD": "Partial dependence of target on col from the data alone (StratPD): a table of "
    "x values and how much the target changes, all else equal, plus a chart beside it.",
    "STRATIMPACT": "Model-free ranking of the columns by how much each alone moves the target "
    "(StratPD impact), largest first.",
    "STRATPDBY": "Partial dependence of target on col in each group of another column (StratPD "
    "by group): one curve per level of by, or per band of its values, in one table, plus a "
    "chart with a line per group.",
    "STRATPD2": "Two-way partial dependence of target on col1 and col2 from the data alone "
    "(experimental): a table over a grid of both and a heat map beside it.",
    "STRATCOMPARE": "StratPD beside a fitted model's partial dependence (PDP) and ALE for col, "
    "centred alike, with how well model and data agree and why they may not; a picture "
    "beside it.",
}

_TRUE_WORDS = frozenset({"true", "wahr", "vrai", "yes", "1"})
_FALSE_WORDS = frozenset({"false", "falsch", "faux", "no", "0"})


# --------------------------------------------------------------------------- cache


class _LRU:
    """A small thread-safe least-recently-used cache (a host may call from several threads)."""

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
class Curve:
    """A formula's curve: the cells it shows, the engine's result, and its picture once drawn.

    ``kind`` says which picture: ``"curve"`` (a curve, or curves by group), ``"surface"``
    (a heat map) or ``"compare"`` (StratPD beside the model's curves).
    """

    cells: list[list[Any]]
    result: pd.DataFrame
    png: bytes | None = None
    kind: str = "curve"


@dataclass(frozen=True)
class FormulaResult:
    """What ``=STRATPD`` gives its host: the cells, and the curve when the host may draw it.

    Attributes
    ----------
    cells : list of list
        The block to show (on bad input one cell ``"STRATPD: <what to fix>"``).
    curve : Curve or None
        ``None`` on bad input.
    chart : bool
        Whether the user asked for a chart (the ``chart`` argument).
    """

    cells: list[list[Any]]
    curve: Curve | None = None
    chart: bool = False


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
            # As bytes: a buffer of dates (dtype "M") or durations ("m") is refused by hashlib.
            digest.update(np.ascontiguousarray(column.to_numpy()).view(np.uint8).data)
        else:
            digest.update(pd.util.hash_pandas_object(column, index=False).to_numpy().data)
    return (frame.shape, digest.hexdigest())


# --------------------------------------------------------------------------- arguments


def _table(data: Any) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return sheet.whole_characters(data)
    if data is None:  # =STRATPD(, "price", "carat"): the argument was left empty
        raise StratPDInputError(
            "data is missing; give the range of a table with its header row, e.g. "
            f"{EXAMPLE_RANGE}"
        )
    if not isinstance(data, list | tuple):
        raise StratPDInputError(
            f"data must be a range with a header row, e.g. {EXAMPLE_RANGE}; got a single value"
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
    raise StratPDInputError(f"{argument(name)} must be TRUE or FALSE; got {value!r}")


def _positive(value: Any) -> Any:
    """A blank formula argument means "choose the positive value for me"."""
    return None if _is_missing(value) else value


# TRUE/FALSE in the words _flag reads, but "yes", "no", "1" and "0" can be classes' names.
_ALL_CLASSES = frozenset({"all"} | (_TRUE_WORDS - {"yes", "1"}))
_NO_CLASSES = _FALSE_WORDS - {"no", "0"}


def _classes(value: Any) -> Any:
    """A formula's ``classes``: blank or FALSE -> None (the target is a number or yes/no);
    TRUE or "all" -> every class; else the classes named, in a text separated by commas or
    in a range (blank cells skipped; a whole number as a code, 2 not 2.0)."""
    if _is_missing(value):
        return None
    if isinstance(value, bool | np.bool_):
        return True if value else None
    if isinstance(value, str):
        word = value.strip().casefold()
        if word in _ALL_CLASSES:
            return True
        if word in _NO_CLASSES:
            return None
    items = [v for item in value for v in (item if isinstance(item, list | tuple) else [item])
             ] if isinstance(value, list | tuple) else [value]
    named: list[Any] = []
    for item in items:
        if _is_missing(item) or (isinstance(item, float) and not np.isfinite(item)):
            continue
        if isinstance(item, float) and item.is_integer():
            item = int(item)
        if isinstance(item, str):
            named += [t.strip() for t in item.split(",") if t.strip()]
        else:
            named.append(item)
    return named or None


# --------------------------------------------------------------------------- formulas


def _curve(data: Any, target: Any, col: Any, settings: Settings, positive: Any = None,
           classes: Any = None) -> Curve:
    frame = _table(data)
    key = ("STRATPD", _frame_key(frame), str(target), str(col), settings, repr(positive),
           repr(classes))
    cached = _cache.get(key)
    if cached is not None:
        return cached
    result = workflow.curve(
        frame, target, col, settings=settings, how_to_keep=keep_hint("STRATPD"),
        positive=positive, classes=classes,
    )
    curve = Curve(sheet.cells_from_frame(tables.curve_table(result.curve)), result.curve)
    _cache.put(key, curve)
    return curve


def chart_png(curve: Curve) -> bytes:
    """The curve's chart as PNG bytes, drawn once per cached curve."""
    if curve.png is None:
        from .presentation import charts  # matplotlib only when a picture is wanted

        if curve.kind == "surface":
            from .presentation.pairs import surface_figure

            figure = surface_figure(curve.result)
        elif curve.kind == "compare":
            from .presentation.compare import compare_figure

            figure = compare_figure(curve.result)
        else:
            figure = charts.curve_figure(curve.result)
        curve.png = charts.figure_png(figure)
    return curve.png


def _optional(given: dict[str, Any], declared: dict[str, str], formula: str) -> dict[str, Any]:
    """The optional arguments a host passed; a name the formula does not declare is a bug."""
    unknown = set(given) - set(declared)
    if unknown:
        raise TypeError(f"{formula} has no argument(s) {', '.join(sorted(unknown))}")
    return given


def stratpd(data: Any, target: Any, col: Any, **optional: Any) -> FormulaResult:
    """``=STRATPD(...)``'s cells: partial dependence of target on col (StratPD / CatStratPD).

    Parameters
    ----------
    data : rows of cell values, or a DataFrame
        The table, header row first (a DataFrame is taken as typed).
    target, col : str
        The column to explain and the one whose effect is wanted, as the user typed them.
    **optional
        ``min_samples_leaf``, ``trials``, ``chart``, ``max_points``, ``positive``,
        ``exclude``, ``keep`` and ``classes`` as :data:`STRATPD_ARGS` explains them.  A
        blank (``None``, empty text) or left-out argument takes its default from
        :data:`~stratpd_xl.params.PARAMETERS`;
        ``chart`` (whether the host should draw the curve) defaults to yes, ``positive``
        (the value of a yes/no target that counts) to TRUE/yes/1, else the rarer value,
        ``exclude`` (columns to leave out; a range's blank cells are ignored) and ``keep``
        (columns to analyse even if they look like row numbers or ids) to none, and
        ``classes`` (a curve per class of a target with several values) to none.

    Returns
    -------
    FormulaResult
        Header row plus one row per x value or category: the feature, "partial dependence",
        the band columns when trials > 1, and "slopes averaged" (numeric) or "rows"
        (categorical); with ``classes``, a ``class`` column first and the classes' curves
        one under the other, in points of each class's chance.  On bad input one cell
        ``"STRATPD: <what to fix>"`` and no curve.
    """
    given = _optional(optional, STRATPD_ARGS, "STRATPD")
    try:
        settings = _settings(
            min_samples_leaf=given.get("min_samples_leaf"), n_trials=given.get("trials"),
            max_points=given.get("max_points"), exclude=given.get("exclude"),
            keep=given.get("keep"),
        )
        want_chart = _flag(given.get("chart"), "chart")
        curve = _curve(data, target, col, settings, _positive(given.get("positive")),
                       _classes(given.get("classes")))
    except Exception as exc:  # the cell shows a sentence; never a traceback
        return FormulaResult([[error_text(exc, prefix="STRATPD",
                                          argument_words=formula_argument_words("STRATPD"))]])
    return FormulaResult(curve.cells, curve, want_chart)


def stratcompare(data: Any, target: Any, col: Any, **optional: Any) -> FormulaResult:
    """``=STRATCOMPARE(...)``'s cells: StratPD beside a fitted model's PDP and ALE.

    Parameters are as for :func:`stratpd`; the optional ones are ``min_samples_leaf``,
    ``trials``, ``chart``, ``positive``, ``exclude``, ``keep`` and ``classes``
    (:data:`STRATCOMPARE_ARGS`: with ``classes``, a ``class`` column first and each class's
    curve beside the classifier's partial dependence of its chance).

    Returns
    -------
    FormulaResult
        Header row (the feature, "StratPD (data)", the band when trials > 1, "model PDP",
        "model ALE") and one row per x value or category, then a blank row and the
        sentences: the model's held-out score and where and why model and data disagree.
        On bad input one cell ``"STRATCOMPARE: <what to fix>"``.
    """
    from .presentation.compare import compare_cells

    given = _optional(optional, STRATCOMPARE_ARGS, "STRATCOMPARE")
    chosen = _positive(given.get("positive"))
    settings: list[Settings] = []

    def check() -> None:
        settings.append(_settings(min_samples_leaf=given.get("min_samples_leaf"),
                                  n_trials=given.get("trials"), exclude=given.get("exclude"),
                                  keep=given.get("keep")))

    def compute(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
        table = workflow.compare(frame, target, col, settings=settings[0],
                                 how_to_keep=keep_hint("STRATCOMPARE"), positive=chosen,
                                 classes=_classes(given.get("classes"))).table
        return table, compare_cells(table)

    key = (str(target), str(col), repr(sorted(given.items())))
    return _pairs_formula("STRATCOMPARE", key, data, given.get("chart"), "compare", compute,
                          check)


def stratimpact(data: Any, target: Any, **optional: Any) -> list[list[Any]]:
    """``=STRATIMPACT(...)``'s cells: the columns ranked by how much each alone moves target.

    Parameters are as for :func:`stratpd`; the optional ones are ``min_samples_leaf``,
    ``positive``, ``exclude``, ``keep`` and ``classes`` (:data:`STRATIMPACT_ARGS`).

    Returns
    -------
    list of list
        Header ``feature, kind, impact, share`` and one row per feature, largest impact first
        (with ``classes``, ``class`` after ``kind``: the class the feature moves most, whose
        impact it is); on bad input one cell ``"STRATIMPACT: <what to fix>"``.
    """
    given = _optional(optional, STRATIMPACT_ARGS, "STRATIMPACT")
    try:
        settings = _settings(min_samples_leaf=given.get("min_samples_leaf"),
                             exclude=given.get("exclude"), keep=given.get("keep"))
        frame = _table(data)
        chosen = _positive(given.get("positive"))
        classes = _classes(given.get("classes"))
        key = ("STRATIMPACT", _frame_key(frame), str(target), settings, repr(chosen),
               repr(classes))
        cells = _cache.get(key)
        if cells is None:
            result = workflow.analysis(
                frame, target, settings=settings, how_to_keep=keep_hint("STRATIMPACT"),
                positive=chosen, classes=classes,
            )
            cells = sheet.cells_from_frame(tables.impact_table(result.impact))
            _cache.put(key, cells)
        return cells
    except Exception as exc:  # the cell shows a sentence; never a traceback
        return [[error_text(exc, prefix="STRATIMPACT",
                            argument_words=formula_argument_words("STRATIMPACT"))]]


def _pairs_formula(name: str, key: tuple[Any, ...], data: Any, chart: Any, kind: str,
                   compute: Callable[[pd.DataFrame], tuple[pd.DataFrame, pd.DataFrame]],
                   check: Callable[[], None] = lambda: None) -> FormulaResult:
    """The shared steps of ``=STRATPDBY``, ``=STRATPD2`` and ``=STRATCOMPARE``: cache, cells,
    one-cell errors."""
    try:
        check()
        want_chart = _flag(chart, "chart")
        frame = _table(data)
        full_key = (name, _frame_key(frame), *key)
        curve = _cache.get(full_key)
        if curve is None:
            result, table = compute(frame)
            curve = Curve(sheet.cells_from_frame(table), result, kind=kind)
            _cache.put(full_key, curve)
    except Exception as exc:  # the cell shows a sentence; never a traceback
        return FormulaResult([[error_text(exc, prefix=name,
                                          argument_words=formula_argument_words(name))]])
    return FormulaResult(curve.cells, curve, want_chart)


def stratpdby(data: Any, target: Any, col: Any, by: Any, **optional: Any) -> FormulaResult:
    """``=STRATPDBY(...)``'s cells: the curve of col in each group of by, one under the other.

    Parameters
    ----------
    data, target, col
        As for :func:`stratpd`.
    by : str
        The column to group by: at most 12 levels, or numbers cut into ``bands`` bands.
    **optional
        ``bands``, ``min_samples_leaf``, ``trials``, ``chart``, ``positive``, ``exclude``
        and ``keep`` as :data:`STRATPDBY_ARGS` explains them; blank or left out takes the
        default.

    Returns
    -------
    FormulaResult
        Header (the by column's name, the feature's, "partial dependence", band and count
        columns) and one row per group and point; on bad input one cell
        ``"STRATPDBY: <what to fix>"``.
    """
    from .presentation.pairs import by_group_table

    given = _optional(optional, STRATPDBY_ARGS, "STRATPDBY")
    chosen = _positive(given.get("positive"))
    settings: list[Settings] = []

    def check() -> None:
        settings.append(_settings(min_samples_leaf=given.get("min_samples_leaf"),
                                  n_trials=given.get("trials"), by=by,
                                  bands=given.get("bands"), exclude=given.get("exclude"),
                                  keep=given.get("keep")))
        if settings[0].by is None:
            raise StratPDInputError('by is missing; name the column to group by, e.g. "region"')

    def compute(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
        result = workflow.curve(frame, target, col, settings=settings[0],
                                how_to_keep=keep_hint("STRATPDBY"), positive=chosen).curve
        return result, by_group_table(result)

    key = (str(target), str(col), repr(by), repr(sorted(given.items())))
    return _pairs_formula("STRATPDBY", key, data, given.get("chart"), "curve", compute, check)


def stratpd2(data: Any, target: Any, col1: Any, col2: Any, **optional: Any) -> FormulaResult:
    """``=STRATPD2(...)``'s cells: the two-way surface of target over col1 and col2.

    Parameters
    ----------
    data, target
        As for :func:`stratpd`.
    col1, col2 : str
        Two different columns.
    **optional
        ``grid``, ``min_samples_leaf``, ``chart``, ``positive``, ``exclude`` and ``keep`` as
        :data:`STRATPD2_ARGS` explains them; blank or left out takes the default.

    Returns
    -------
    FormulaResult
        Header (col1, col2, "partial dependence", "interaction part", "rows", "thin") and one
        row per cell; on bad input one cell ``"STRATPD2: <what to fix>"``.
    """
    from .presentation.pairs import surface_table

    given = _optional(optional, STRATPD2_ARGS, "STRATPD2")
    chosen = _positive(given.get("positive"))

    def compute(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
        settings = _settings(min_samples_leaf=given.get("min_samples_leaf"),
                             grid=given.get("grid"), exclude=given.get("exclude"),
                             keep=given.get("keep"))
        result = workflow.surface(frame, target, col1, col2, settings=settings,
                                  how_to_keep=keep_hint("STRATPD2"), positive=chosen).surface
        return result, surface_table(result)

    key = (str(target), str(col1), str(col2), repr(sorted(given.items())))
    return _pairs_formula("STRATPD2", key, data, given.get("chart"), "surface", compute)


# --------------------------------------------------------------------------- warm-up


def _warm_up() -> None:
    """Run the engine's kernels, the cell typing and the chart code once on a tiny table.

    numba compiles on first use (cached on disk afterwards, but loading still takes a moment)
    and matplotlib builds its font cache on first use; doing both while the host is still
    busy loading keeps the first formula fast.
    """
    try:
        from .presentation import charts

        curve = workflow.warm_up()  # the engine's kernels, through the formulas' own path
        sheet.frame_from_cells([["a", "b"], [1.0, "x"], [2.0, None]])
        charts.figure_png(charts.curve_figure(curve), dpi=20)
    except Exception:  # noqa: BLE001 - a failed warm-up only costs time later
        pass


_warm_up_thread: threading.Thread | None = None


def start_warm_up() -> None:
    """Warm up in a background thread, once; ``STRATPD_XL_WARMUP=0`` turns it off.

    Pyodide (xlwings Lite) cannot start threads, so its front end sets the variable.
    """
    global _warm_up_thread
    if _warm_up_thread is not None or os.environ.get("STRATPD_XL_WARMUP", "1") == "0":
        return
    _warm_up_thread = threading.Thread(target=_warm_up, name="stratpd-warm-up", daemon=True)
    _warm_up_thread.start()


def wait_for_warm_up(timeout: float | None = None) -> bool:
    """Block until the warm-up finished (True) or ``timeout`` seconds passed (False)."""
    if _warm_up_thread is None:
        return True
    _warm_up_thread.join(timeout)
    return not _warm_up_thread.is_alive()


# --------------------------------------------------------------------------- the report sheet

#: Chart names; different words, so that no feature name can make two charts clash.
RANKING_CHART = "StratPD ranking"
CURVE_CHART = "StratPD curve {feature}"
#: The heading of the table of every note at the end of an Analyse selection sheet.
EVERY_NOTE = "Every note, the ones that matter most first"


@dataclass(frozen=True)
class Layout:
    """Where things go on the new sheet (rows and columns are 1-based)."""

    title_row: int = 1
    ranking_row: int = 4
    gap_columns: int = 1  # empty columns between a table and its chart
    picture_rows: int = 22  # rows a 4-inch-high chart covers at Excel's default row height
    gap_rows: int = 2  # empty rows between two feature blocks


@dataclass(frozen=True)
class Cells:
    """A block of values whose top-left cell is (row, col), 1-based."""

    row: int
    col: int
    cells: list[list[Any]]

    @property
    def height(self) -> int:
        return len(self.cells)

    @property
    def width(self) -> int:
        return max((len(r) for r in self.cells), default=0)


@dataclass(frozen=True)
class NumberFormat:
    """A number format (Excel's and Calc's code, e.g. ``"0.0%"``) for a rectangle of cells."""

    row: int
    col: int
    last_row: int
    last_col: int
    format: str


@dataclass(frozen=True)
class Chart:
    """A chart whose top-left corner is at (row, col), drawn from ``table``.

    ``feature`` is ``None`` for the impact ranking, else the feature whose curve it shows.
    """

    name: str
    row: int
    col: int
    table: Cells
    feature: str | None = None


@dataclass(frozen=True)
class ReportSheet:
    """The analysis of a selection and the new sheet that shows it.

    Attributes
    ----------
    name : str
        A sheet name not taken yet.
    result : workflow.AnalysisResult
        The analysis (the charts are drawn from its ranking and curves).
    settings : Settings
        The parameters used.
    items : list
        :class:`Cells`, :class:`NumberFormat` and :class:`Chart` in the order to write them;
        no two blocks and charts overlap.
    """

    name: str
    result: workflow.AnalysisResult
    settings: Settings
    items: list[Cells | NumberFormat | Chart]
    #: Column (1-based) -> width in characters (Excel's unit, the width of a "0"), enough for
    #: the tables' headers and values; longer text runs on into the empty cells beside it.
    widths: dict[int, float] = dataclasses.field(default_factory=dict)
    #: Header rows to wrap, as ``(row, first column, last column)``: a header of several
    #: words wraps over lines rather than widening its column of short numbers.
    headers: list[tuple[int, int, int]] = dataclasses.field(default_factory=list)


def report_sheet(
    values: Sequence[Sequence[Any]],
    *,
    target: Any = None,
    taken: Sequence[str] = (),
    source: str = "",
    progress: workflow.Progress | None = None,
    layout: Layout = Layout(),
    positive: Any = None,
    **engine_kw: Any,
) -> ReportSheet:
    """Analyse the selected cells and lay out the sheet that shows the results.

    Parameters
    ----------
    values : 2-D sequence
        Cell values of the selection, header row first.
    target : str, optional
        The column to explain (default: the selection's last column).
    taken : sequence of str
        Names of the workbook's sheets, which the new sheet must not reuse.
    source : str
        The selection's address, shown on the new sheet.
    progress : callable, optional
        ``progress(done, total, feature)`` before each feature and at the end.
    layout : Layout
        Positions on the new sheet.
    positive : optional
        A yes/no target's value that counts (blank: TRUE/yes/1, else the rarer value).
    **engine_kw
        Analysis parameters (e.g. ``min_samples_leaf``; ``n_trials`` defaults to the
        command line report's, so the curves carry a band); a blank one takes its default;
        the seed is fixed, so pressing the button twice gives the same numbers.

    Raises
    ------
    StratPDInputError
        When the selection cannot be analysed (one sentence naming the fix; a setting is
        named by the workbook name that sets it, e.g. ``StratPD_trials``).
    """
    given = {k: v for k, v in engine_kw.items() if not _is_missing(v)}
    try:
        frame = sheet.frame_from_cells(values)
        settings = Settings.for_report(**{"random_state": RANDOM_STATE, **given})
        result = workflow.analysis(
            frame, target if target is not None else frame.columns[-1], settings=settings,
            how_to_keep=KEEP_HINT, progress=progress, positive=_positive(positive),
        )
    except StratPDInputError as exc:
        if not exc.names_settings:
            raise
        raise StratPDInputError(exc.worded(menu_argument_words)) from exc
    name = unique_sheet_names([f"StratPD {result.target}"], taken=taken)[0]
    items = _report_items(result, source, settings, layout)
    headers = [(i.row, i.col, i.col + i.width - 1) for i in items
               if isinstance(i, Cells) and i.height > 1 and i.width > 1]
    return ReportSheet(name, result, settings, items, column_widths(items), headers)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool | np.bool_)


def number_formats(table: Cells, skip: Sequence[str] = ()) -> list[NumberFormat]:
    """Number formats for a result table's columns after the first (the feature's own values,
    shown as the user typed them), as the report workbook rounds them: whole numbers with
    thousands separators, and the other number columns read together (a curve and its band)
    with one count of decimals, about four significant digits of the largest
    (:func:`stratpd_xl.presentation.labels.decimals`)."""
    header, body = table.cells[0], table.cells[1:]
    if not body:
        return []
    whole: list[int] = []
    measured: list[int] = []
    for j in range(1, len(header)):
        if header[j] in skip:
            continue
        column = [r[j] for r in body if j < len(r) and r[j] is not None]
        if not column or not all(_is_number(v) for v in column):
            continue
        (whole if decimals(column) is None else measured).append(j)
    formats: list[NumberFormat] = []
    last = table.row + table.height - 1
    for j in whole:
        formats.append(NumberFormat(table.row + 1, table.col + j, last, table.col + j, "#,##0"))
    if measured:
        values = [r[j] for r in body for j in measured if j < len(r) and _is_number(r[j])]
        places = decimals(values) or 0
        code = "#,##0" + ("." + "0" * places if places else "")
        formats += [NumberFormat(table.row + 1, table.col + j, last, table.col + j, code)
                    for j in measured]
    return formats


#: Widest column the report sets, in characters, and the widest text that widens one: longer
#: text (a sentence, a note) runs on into the empty cells beside it.  A header of several
#: words wraps at about :data:`HEADER_WIDTH` characters (the report workbook's rule).
MAX_WIDTH = 30.0
_LONGEST_TEXT = 30
HEADER_WIDTH = 13


def column_widths(items: Sequence[Cells | NumberFormat | Chart]) -> dict[int, float]:
    """Each column's width in characters: its longest value (numbers as shown, about four
    significant digits with separators) and header (wrapped: see :data:`HEADER_WIDTH`), at
    most :data:`MAX_WIDTH`."""
    widths: dict[int, float] = {}
    for item in items:
        if not isinstance(item, Cells) or item.height < 2 or item.width < 2:
            continue  # a title or a block of sentences: it runs on to the right
        for j, value in enumerate(item.cells[0]):
            words = str(value).split()
            wanted = len(str(value)) if len(words) < 2 else max(
                min(len(str(value)), HEADER_WIDTH), max(len(w) for w in words))
            col = item.col + j
            widths[col] = max(widths.get(col, 0.0), min(wanted + 2.0, MAX_WIDTH))
        for row in item.cells[1:]:
            for j, value in enumerate(row):
                if value is None or isinstance(value, bool | np.bool_):
                    continue
                text = f"{value:,.4g}" if _is_number(value) and not float(value).is_integer() \
                    else (f"{value:,}" if _is_number(value) else str(value))
                if len(text) > _LONGEST_TEXT:
                    continue
                col = item.col + j
                widths[col] = max(widths.get(col, 0.0), min(len(text) + 2.0, MAX_WIDTH))
    return widths


def _report_items(
    result: workflow.AnalysisResult, source: str, settings: Settings, layout: Layout
) -> list[Cells | NumberFormat | Chart]:
    items: list[Cells | NumberFormat | Chart] = []
    rows = counted(result.n_rows) + (f" from {source}" if source else "")
    leaf = PLAIN_PARAMETERS["min_samples_leaf"][0]
    items.append(Cells(layout.title_row, 1, [
        [f"StratPD: what moves {result.target}, all else equal"],
        [f"{rows}; {leaf} {settings.min_samples_leaf}; model-free partial "
         "dependence (Parr & Wilson 2020)"],
    ]))
    # The conclusion in words, as the command line's report says it: each top feature's
    # sentence with its own warnings under it, then the few other notes that matter most;
    # every note is in a table at the end of the sheet (the report's Notes sheet).
    said, notes = words.summary(result.findings, result.notes, result.target)
    lines: list[list[Any]] = []
    if said:
        lines.append(["What the data say"])
        for text, caveats in said:
            lines.append([text])
            lines += [[f"note: {c}"] for c in caveats]
    if notes:
        lines.append(["Notes"])
        lines += [[f"note: {n}"] for n in shown_notes(notes, f'every one is under "{EVERY_NOTE}" '
                                                             "at the end of this sheet")]
    row = layout.ranking_row
    if lines:
        items.append(Cells(row, 1, [[tables.inert_text(v) for v in line] for line in lines]))
        row += len(lines) + 1
    items.append(Cells(row, 1, [["Impact ranking"]]))
    ranking = Cells(row + 1, 1, sheet.cells_from_frame(tables.impact_table(result.impact)))
    share_col = 1 + ranking.cells[0].index("share")
    items += [
        ranking,
        *number_formats(ranking, skip=("share",)),
        NumberFormat(row + 2, share_col, row + ranking.height, share_col, "0.0%"),
        Chart(RANKING_CHART, row, 1 + ranking.width + layout.gap_columns, ranking),
    ]
    row += 1 + max(ranking.height, layout.picture_rows) + layout.gap_rows

    for feature in result.impact["feature"]:
        curve = result.curves[feature]
        table = Cells(row + 1, 1, sheet.cells_from_frame(tables.curve_table(curve)))
        items += [
            Cells(row, 1, [[f"{feature}: partial dependence of {result.target}"]]),
            table,
            *number_formats(table),
            Chart(CURVE_CHART.format(feature=feature), row, 1 + table.width + layout.gap_columns,
                  table, feature),
        ]
        row += 1 + max(table.height, layout.picture_rows) + layout.gap_rows
    if result.notes:
        # Columns' names are the user's text: inert, as every cell this sheet writes.
        every = tables.inert_table(notes_table(result.notes))
        items += [Cells(row, 1, [[EVERY_NOTE]]),
                  Cells(row + 1, 1, sheet.cells_from_frame(every))]
    return items
