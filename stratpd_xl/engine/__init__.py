"""The numbers: StratPD and CatStratPD (Parr & Wilson 2020).  No spreadsheet, no I/O."""

from .._backend import ENGINE, get_backend, set_backend
from ._fit import key_given_others
from ._kernels import compile_kernels
from ._table import EXCLUDED, checked_frame, column_kind, excluded_columns
from .api import Analysis, analyse, catstratpd, impact, partial_dependence, stratpd
from .pairs import interactions, stratpd2

ENGINE.set_compile(compile_kernels)

__all__ = [
    "EXCLUDED",
    "Analysis",
    "analyse",
    "catstratpd",
    "checked_frame",
    "column_kind",
    "excluded_columns",
    "get_backend",
    "impact",
    "interactions",
    "key_given_others",
    "partial_dependence",
    "set_backend",
    "stratpd",
    "stratpd2",
]
