"""The numbers: StratPD and CatStratPD (Parr & Wilson 2020).  No spreadsheet, no I/O."""

from .._backend import get_backend, set_backend
from ._table import column_kind
from .api import Analysis, analyse, catstratpd, impact, partial_dependence, stratpd
from .pairs import interactions, stratpd2

__all__ = [
    "Analysis",
    "analyse",
    "catstratpd",
    "column_kind",
    "get_backend",
    "impact",
    "interactions",
    "partial_dependence",
    "set_backend",
    "stratpd",
    "stratpd2",
]
