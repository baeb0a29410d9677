"""stratpd-xl: model-free partial dependence (StratPD / CatStratPD) for spreadsheets.

>>> import stratpd_xl as sx
>>> curve = sx.stratpd(df, "price", "carat")          # doctest: +SKIP
>>> ranking = sx.impact(df, "price")                  # doctest: +SKIP
>>> pairs = sx.interactions(df, "price")              # doctest: +SKIP

Layers, one folder each, each importing only those below it (``tests/test_layout.py``)::

    front ends      cli, demo, excel/, libreoffice/ (thin adapters)
    spreadsheet     the formulas and the report sheet, cells in and out (Excel and Calc)
    workflow        names -> checks -> usable columns -> engine -> results with notes
    input/          cells and files -> typed DataFrames (sheet: the typing step; files)
    engine/         the numbers (numpy/numba)
    presentation/   labels, tables, charts, drawing, report
    bottom          params (the parameter table), schema, errors, yesno, _backend

The engine is imported on first use of its names, so ``import stratpd_xl.input.sheet`` or
``stratpd_xl.presentation.labels`` loads neither numba nor matplotlib.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import StratPDInputError
from .params import PARAMETERS, Settings

if TYPE_CHECKING:  # pragma: no cover
    from .engine import (
        Analysis,
        analyse,
        catstratpd,
        impact,
        interactions,
        partial_dependence,
        stratpd,
        stratpd2,
    )

__all__ = [
    "PARAMETERS",
    "Analysis",
    "Settings",
    "StratPDInputError",
    "analyse",
    "catstratpd",
    "impact",
    "interactions",
    "main",
    "partial_dependence",
    "stratpd",
    "stratpd2",
]
__version__ = "0.1.0"

_ENGINE_NAMES = frozenset(
    {"Analysis", "analyse", "catstratpd", "impact", "interactions", "partial_dependence",
     "stratpd", "stratpd2"}
)


def __getattr__(name: str) -> Any:
    if name in _ENGINE_NAMES:
        from . import engine

        return getattr(engine, name)
    raise AttributeError(f"module 'stratpd_xl' has no attribute {name!r}")


def main() -> None:
    """Entry point of the Excel ribbon button ("Analyse selection"); see ``excel.ribbon``."""
    from .excel.ribbon import main as _ribbon_main

    _ribbon_main()
