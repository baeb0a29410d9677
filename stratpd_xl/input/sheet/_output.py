"""A DataFrame -> header row plus rows of plain Python values, ready to be written into cells."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import numpy as np
import pandas as pd

from ._values import naive

__all__ = ["cells_from_frame"]


def cells_from_frame(frame: pd.DataFrame) -> list[list[Any]]:
    """Header row plus rows of plain Python values, ready to be written into cells.

    Parameters
    ----------
    frame
        Any DataFrame, typically an engine result.

    Returns
    -------
    list of list
        ``[[names...], [row 1...], ...]``: missing values are ``None``, numpy scalars are
        Python ``int``/``float``/``bool``, datetime64 values are ``datetime.datetime`` (so a
        sheet shows dates), infinities are ``None`` (no spreadsheet can hold them).
    """
    header: list[Any] = [str(c) for c in frame.columns]
    columns = [_cells_of_column(frame.iloc[:, j]) for j in range(frame.shape[1])]
    rows = [list(r) for r in zip(*columns, strict=True)] if columns else []
    return [header, *rows]


def _cells_of_column(series: pd.Series) -> list[Any]:
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return [None if pd.isna(v) else naive(v.to_pydatetime()) for v in series]
    return [_cell_value(v) for v in series.tolist()]


def _cell_value(value: Any) -> Any:
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        f = float(value)
        return f if math.isfinite(f) else None
    if isinstance(value, pd.Timestamp):
        return naive(value.to_pydatetime())
    if isinstance(value, np.datetime64):
        return None if np.isnat(value) else naive(pd.Timestamp(value).to_pydatetime())
    if isinstance(value, pd.Timedelta | dt.timedelta):
        return str(value)
    return value

