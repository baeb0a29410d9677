"""xlwings Lite (Excel on the web and on Mac, Python in the browser via Pyodide).

``addin/xlwings_lite/main.py`` is pasted into xlwings Lite; its functions only declare the
formulas and the script to Excel and call in here, and from here the desktop code runs
unchanged: :func:`stratpd` and :func:`stratimpact` are the Windows formulas (same arguments, same
cells, same one-cell errors), :func:`analyse_selection` is the ribbon button (same new sheet).

Differences that Lite imposes, nothing else:

* a formula cannot place a picture beside itself (custom functions in Office.js only return
  values), so ``chart`` is accepted and has no effect;
* a single selected cell stands for the sheet's used range, not Excel's current region, which
  Lite cannot read synchronously;
* no background warm-up: Pyodide cannot start threads, and numba does not exist there (the
  engine uses its numpy backend).
"""

from __future__ import annotations

import os

# Before udfs is imported: its warm-up would start a thread, which Pyodide refuses.
os.environ.setdefault("STRATPD_XL_WARMUP", "0")

from typing import Any  # noqa: E402

from ..errors import error_text  # noqa: E402
from . import ribbon, udfs  # noqa: E402

__all__ = [
    "DEFAULT_MIN_SAMPLES_LEAF",
    "STRATCOMPARE_ARGS",
    "STRATIMPACT_ARGS",
    "STRATPD_ARGS",
    "analyse_selection",
    "stratcompare",
    "stratimpact",
    "stratpd",
]

#: Argument options and help texts, the same as the Windows formulas'.
STRATPD_ARGS = udfs.STRATPD_ARGS
STRATIMPACT_ARGS = udfs.STRATIMPACT_ARGS
STRATCOMPARE_ARGS = udfs.STRATCOMPARE_ARGS
DEFAULT_MIN_SAMPLES_LEAF = udfs.DEFAULT_MIN_SAMPLES_LEAF


def stratpd(
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
) -> list[list[Any]]:
    """``=STRATPD(...)``: see :func:`stratpd_xl.excel.udfs.STRATPD` (``chart`` has no effect)."""
    return udfs.STRATPD(
        data,
        target,
        col,
        min_samples_leaf=min_samples_leaf,
        trials=trials,
        chart=chart,
        max_points=max_points,
        positive=positive,
        exclude=exclude,
        keep=keep,
        classes=classes,
    )


def stratimpact(
    data: Any,
    target: Any,
    min_samples_leaf: Any = DEFAULT_MIN_SAMPLES_LEAF,
    positive: Any = None,
    exclude: Any = None,
    keep: Any = None,
    classes: Any = None,
) -> list[list[Any]]:
    """``=STRATIMPACT(...)``: see :func:`stratpd_xl.excel.udfs.STRATIMPACT`."""
    return udfs.STRATIMPACT(
        data, target, min_samples_leaf=min_samples_leaf, positive=positive, exclude=exclude,
        keep=keep, classes=classes,
    )


def stratcompare(
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
) -> list[list[Any]]:
    """``=STRATCOMPARE(...)``: see :func:`stratpd_xl.excel.udfs.STRATCOMPARE` (``chart`` has
    no effect)."""
    return udfs.STRATCOMPARE(
        data, target, col, min_samples_leaf=min_samples_leaf, trials=trials, chart=chart,
        positive=positive, exclude=exclude, keep=keep, classes=classes,
    )


def analyse_selection(book: Any) -> str | None:
    """The ribbon's "Analyse selection" for a Lite book; the name of the new sheet or None.

    Parameters
    ----------
    book : xlwings.Book
        The book xlwings Lite passes to a script.

    Returns
    -------
    str or None
        Name of the sheet written; None when the selection could not be analysed, in which
        case the user got one sentence in a message box and nothing was written.
    """
    warnings: list[str] = []
    try:
        values, source = ribbon.read_selection(book.selection)
        name = ribbon.analyse_selection(book, values, source=source, warn=warnings.append)
    except Exception as exc:  # the user sees one sentence, never a traceback
        book.app.alert(error_text(exc), title="StratPD", mode="critical")
        return None
    if warnings:
        book.app.alert(ribbon.warning_text(warnings), title="StratPD")
    return name
