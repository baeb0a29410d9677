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
    "compare",
    "ice",
    "impact",
    "interactions",
    "main",
    "partial_dependence",
    "read_table",
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

        value = getattr(engine, name)
        if name != "Analysis":  # the functions, whose first argument is the table
            value = _in_memory(value)
        globals()[name] = value  # loaded once
        return value
    raise AttributeError(f"module 'stratpd_xl' has no attribute {name!r}")


def __dir__() -> list[str]:
    # The engine's names load on first use (__getattr__); dir() and tab completion list
    # them all the same.
    return sorted(set(globals()) | set(__all__))


def _in_memory(function: Any) -> Any:
    """``function`` handing a Dask DataFrame or a file path to the drivers of
    :mod:`stratpd_xl.scale` (``stratpd``, ``catstratpd``, ``impact``), and refusing a Dask
    table in one sentence before the engine sees it (the other functions)."""
    import functools
    import os

    from .input.tables import refuse_lazy_table

    scaled = function.__name__ in ("stratpd", "catstratpd", "impact")

    @functools.wraps(function)
    def checked(data: Any, *args: Any, **kw: Any) -> Any:
        if scaled:
            from . import scale

            if scale.is_dask_frame(data) or isinstance(data, str | os.PathLike):
                return getattr(scale, function.__name__)(data, *args, **kw)
        refuse_lazy_table(data)
        return function(data, *args, **kw)

    return checked


def read_table(path: Any, *, columns: Any = None, sheet: str | None = None,
               decimal: str | None = None, encoding: str | None = None) -> Any:
    """Read a table from a file, typed as the command line and the add-in type it.

    ``path`` is a ``.csv``/``.txt``/``.tsv``, ``.xlsx``/``.xlsm``/``.xlsb``/``.xls``,
    ``.ods`` or ``.parquet`` file, or a folder of ``.parquet`` files (Parquet needs
    ``pip install "stratpd-xl[parquet]"``).  For Parquet, ``columns`` lists the exact names of
    the columns to read, and only those are decoded: the others cost no memory.  Other
    arguments and the limits: :func:`stratpd_xl.input.files.read_table`.

    >>> sales = sx.read_table("sales.parquet", columns=["price", "area", "year"])  # doctest: +SKIP
    >>> curve = sx.stratpd(sales, "price", "area")                                  # doctest: +SKIP
    """
    from .input.files import read_table as _read_table

    if isinstance(columns, str):  # one name, not its letters
        columns = [columns]
    return _read_table(path, sheet=sheet, decimal=decimal, encoding=encoding,
                       columns=[str(c) for c in columns] if columns is not None else None)


def compare(data: Any, target: str, feature: Any, **kw: Any) -> Any:
    """StratPD's curve beside a fitted model's partial dependence and ALE (a second opinion).

    ``feature`` is one column, or a list of two for the model's two-way partial dependence.
    Keyword arguments are the parameters of :func:`stratpd` (``min_samples_leaf``,
    ``n_trials``, ``random_state``, ...), ``positive``, and ``categorical`` (columns to treat
    as categories).

    Returns
    -------
    DataFrame
        One feature: ``x`` (or ``category``), ``stratpd`` (+ ``stratpd_low`` /
        ``stratpd_high`` when ``n_trials > 1``), ``pdp``, ``ale``, centred alike; ``attrs``
        hold ``model_r2``, ``agreement``, ``sentence`` and more (see
        :func:`stratpd_xl.model.compare_curves`).  A pair: a long table (one column per
        feature, ``pdp``) with ``attrs["h2"]``.
    """
    from .workflow import compare as _compare

    return _compare(data, target, feature, **_split(kw)).table


def ice(data: Any, target: str, feature: str, *, rows: int | None = None, **kw: Any) -> Any:
    """Individual conditional expectation curves of a fitted model for ``rows`` random rows.

    Returns
    -------
    DataFrame
        ``row``, ``x``, ``prediction``, ``centred`` (prediction minus the row's prediction at
        the first x); keyword arguments as for :func:`compare`.
    """
    from .workflow import ice as _ice

    return _ice(data, target, feature, rows=rows, **_split(kw)).table


def _split(kw: dict[str, Any]) -> dict[str, Any]:
    """Engine parameters into one checked Settings; the rest passed on as they are."""
    settings = Settings.make(**{k: v for k, v in kw.items() if k in PARAMETERS})
    return {"settings": settings, **{k: v for k, v in kw.items() if k not in PARAMETERS}}


def main() -> None:
    """Entry point of the Excel ribbon button ("Analyse selection"); see ``excel.ribbon``."""
    from .excel.ribbon import main as _ribbon_main

    _ribbon_main()
