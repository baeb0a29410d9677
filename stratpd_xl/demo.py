"""The bundled demo: what drives the price of 53,940 diamonds (MIT-licensed data).

Used by ``stratpd-xl demo``, the workbook template builder and the README picture, so all
three show the same table analysed the same way.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from importlib import resources

import pandas as pd

__all__ = [
    "DEMO_FILE",
    "DEMO_LEFT_OUT",
    "DEMO_ORDERS",
    "DEMO_TARGET",
    "demo_csv_bytes",
    "demo_data",
]

# The bundled file's name; ``stratpd-xl demo`` copies it beside its outputs, so the README's
# commands have a real file to work on.
DEMO_FILE = "diamonds.csv"

DEMO_TARGET = "price"
# Quality grades of the diamonds data, worst to best, so charts show them in a sensible order.
DEMO_ORDERS = {
    "cut": ["Fair", "Good", "Very Good", "Premium", "Ideal"],
    "color": ["J", "I", "H", "G", "F", "E", "D"],
    "clarity": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"],
}
# The stone's length, width and depth in mm are, together, almost a function of carat: no
# stratum can hold carat fixed while one of them varies, so their "all else equal" curves are
# noise amplified (and they blur carat's own curve).  The demo asks the analyst's question:
# what do weight and the three grades do to the price?
DEMO_LEFT_OUT = {"x": "length in mm", "y": "width in mm", "z": "depth in mm"}


def demo_csv_bytes(without: Iterable[str] = ()) -> bytes:
    """The bundled ``diamonds.csv`` as it ships (UTF-8, comma-separated, 53,940 rows), or
    without the columns named in ``without`` (every other byte as it ships)."""
    raw = (resources.files("stratpd_xl") / "data" / DEMO_FILE).read_bytes()
    drop = set(without)
    if not drop:
        return raw
    rows = csv.reader(io.StringIO(raw.decode("utf-8"), newline=""))
    header = next(rows)
    keep = [j for j, name in enumerate(header) if name not in drop]
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\r\n" if b"\r\n" in raw[:4096] else "\n")
    writer.writerow([header[j] for j in keep])
    writer.writerows([row[j] for j in keep] for row in rows)
    return out.getvalue().encode("utf-8")


def demo_data() -> pd.DataFrame:
    """The bundled diamonds table (53,940 rows), read like any user file, grades ordered.

    Returns
    -------
    pandas.DataFrame
        Columns carat, cut, color, clarity, depth, table, price, x, y, z; ``cut``, ``color``
        and ``clarity`` are ordered categories from worst to best grade.
    """
    from .input.files import read_table

    with resources.as_file(resources.files("stratpd_xl") / "data" / DEMO_FILE) as path:
        frame = read_table(path)
    for column, order in DEMO_ORDERS.items():
        frame[column] = pd.Categorical(frame[column], categories=order, ordered=True)
    return frame
