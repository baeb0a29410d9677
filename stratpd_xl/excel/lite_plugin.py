"""The xlwings Lite formulas and script, declared for Excel: what a Lite workbook imports.

``addin/xlwings_lite/main.py`` is one line, ``from stratpd_xl.excel.lite_plugin import *``:
xlwings Lite registers the custom functions and scripts it finds in ``main``'s namespace, so
the five formulas (``=STRATPD``, ``=STRATIMPACT``, ``=STRATPDBY``, ``=STRATPD2``,
``=STRATCOMPARE``) and the *analyse_selection* script come with the installed package, and a
new version of the package brings its formulas along without editing the workbook.

Each formula is made here from the desktop wrapper of the same name
(:mod:`stratpd_xl.excel.udfs`): the same arguments in the same order with the same defaults
and help texts (only xlwings' ``caller`` left out), calling that wrapper, so Lite and Windows
cannot drift apart (``tests/test_xlwings_lite.py`` compares them).  ``chart`` is accepted and
draws nothing (an Office.js custom function cannot place a picture).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import xlwings as xw
from xlwings import arg, func, script

from .. import spreadsheet
from . import lite, udfs

__all__ = ["FORMULAS", "STRATCOMPARE", "STRATIMPACT", "STRATPD", "STRATPD2", "STRATPDBY",
           "analyse_selection"]

#: Formula -> the desktop wrapper's per-argument options (help text, conversions).
_OPTIONS: dict[str, dict[str, dict[str, Any]]] = {
    "STRATPD": udfs.STRATPD_ARGS,
    "STRATIMPACT": udfs.STRATIMPACT_ARGS,
    "STRATPDBY": udfs.STRATPDBY_ARGS,
    "STRATPD2": udfs.STRATPD2_ARGS,
    "STRATCOMPARE": udfs.STRATCOMPARE_ARGS,
}


def lite_signature(name: str) -> inspect.Signature:
    """The desktop formula's signature without xlwings' ``caller``: Lite's formula's."""
    desktop = inspect.signature(getattr(udfs, name))
    return desktop.replace(parameters=[p for p in desktop.parameters.values()
                                       if p.name != "caller"])


def _formula(name: str) -> Callable[..., Any]:
    desktop = getattr(udfs, name)
    signature = lite_signature(name)

    def formula(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return desktop(**bound.arguments)  # no caller: no picture, as Lite cannot place one

    formula.__name__ = formula.__qualname__ = name
    formula.__doc__ = spreadsheet.DESCRIPTIONS[name]
    formula.__signature__ = signature  # type: ignore[attr-defined]
    for argument, options in _OPTIONS[name].items():
        formula = arg(argument, **options)(formula)
    return func(formula)


#: The formulas Lite registers, by name (the same names as Excel's and Calc's).
FORMULAS: dict[str, Callable[..., Any]] = {name: _formula(name) for name in _OPTIONS}
STRATPD = FORMULAS["STRATPD"]
STRATIMPACT = FORMULAS["STRATIMPACT"]
STRATPDBY = FORMULAS["STRATPDBY"]
STRATPD2 = FORMULAS["STRATPD2"]
STRATCOMPARE = FORMULAS["STRATCOMPARE"]


@script
def analyse_selection(book: xw.Book) -> None:
    """Analyse the selected table (header row included) into a new sheet, as the ribbon does;
    the workbook names StratPD_target, StratPD_exclude, StratPD_keep, StratPD_positive and
    StratPD_trials set what they set there."""
    lite.analyse_selection(book)
