"""stratpd-xl: model-free partial dependence (StratPD / CatStratPD) for spreadsheets.

>>> import stratpd_xl as sx
>>> curve = sx.stratpd(df, "price", "carat")          # doctest: +SKIP
>>> ranking = sx.impact(df, "price")                  # doctest: +SKIP
"""

from __future__ import annotations

from .engine import Analysis, analyse, catstratpd, impact, partial_dependence, stratpd
from .errors import StratPDInputError

__all__ = [
    "Analysis",
    "StratPDInputError",
    "analyse",
    "catstratpd",
    "impact",
    "main",
    "partial_dependence",
    "stratpd",
]
__version__ = "0.1.0"


def main() -> None:
    """Entry point of the Excel ribbon button ("Analyse selection"); see ``excel.ribbon``."""
    from .excel.ribbon import main as _ribbon_main

    _ribbon_main()
