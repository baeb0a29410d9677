"""Tables handed to the Python API that are not in memory (Dask), refused in one sentence by
the functions that need every row in memory (``sx.stratpd``, ``sx.catstratpd`` and
``sx.impact`` take them: :mod:`stratpd_xl.scale`).

The check goes by the type's module name, so neither this module nor the package imports
dask: a Dask DataFrame passed to ``pandas.DataFrame`` became a frame of its partitions'
positions ("target column 'y' not found; columns are: 0, 1, 2, ...").
"""

from __future__ import annotations

from typing import Any

from ..errors import StratPDInputError

__all__ = ["refuse_lazy_table"]


def refuse_lazy_table(data: Any) -> None:
    """Raise one sentence when ``data`` is a Dask collection (DataFrame, Series, Array).

    Raises
    ------
    StratPDInputError
        Naming the ways on: the functions that take a Dask DataFrame, ``.compute()`` when the
        table fits in memory, or Parquet and :func:`stratpd_xl.read_table` with the columns
        to analyse.
    """
    module = getattr(type(data), "__module__", "") or ""
    if module != "dask" and not module.startswith("dask."):
        return
    kind = "Dask DataFrame" if hasattr(data, "columns") else f"Dask {type(data).__name__}"
    raise StratPDInputError(
        f"a {kind} is analysed in parallel by sx.stratpd, sx.catstratpd and sx.impact only: "
        "here pass data.compute() if it fits in memory, or write it with "
        'data.to_parquet("folder") and pass sx.read_table("folder", columns=[...]) with the '
        "columns to analyse"
    )
