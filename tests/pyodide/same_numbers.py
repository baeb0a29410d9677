"""The xlwings Lite formulas give the same cells with Pyodide 0.27.5's versions as on the desktop.

``python same_numbers.py dump OUT.json`` writes what ``=STRATPD`` and ``=STRATIMPACT`` (through
``stratpd_xl.excel.lite``, numpy backend) return, and the cells of the sheet "analyse_selection"
writes, for tables shaped as Excel hands them over: numbers, text, dates, TRUE/FALSE, blanks,
error text, a yes/no target.  ``make
test-lite-compat`` dumps once with the desktop's pandas 3 and once with Pyodide 0.27.5's pandas
2.2, then ``python same_numbers.py compare A.json B.json`` fails on any difference: text,
counts and shapes must be equal, and each number within 1e-10 of the largest number of its
table (a formula's result, a sheet).  Not closer: the band's Student-t quantile comes from
scipy's ``stdtrit``, which Pyodide's scipy 1.14 computes with the old cdflib code, off by
2.5e-11 relative (``stdtrit(9, 0.975)`` is 2.2621571628541 there and 2.262157162798205 from
1.15's Boost code), so every band cell differs from the 11th digit; a band end near zero
(a curve minus its half-width) then differs from the 4th digit of its own value, which is why
the tolerance is taken relative to the table, not to the cell.  Each side gives the same
numbers on every run.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import math
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
REL = 1e-10


def _diamonds(n: int) -> list[list[Any]]:
    with (ROOT / "stratpd_xl" / "data" / "diamonds.csv").open(newline="") as f:
        rows = list(csv.reader(f))[: n + 1]

    def cell(text: str) -> Any:
        try:
            return float(text)
        except ValueError:
            return text

    return [rows[0]] + [[cell(t) for t in r] for r in rows[1:]]


def _grids() -> dict[str, tuple[list[list[Any]], str]]:
    rng = np.random.default_rng(1)
    start = dt.datetime(2020, 1, 1)
    shops = ["North", "South", "East", None]
    mixed: list[list[Any]] = [["day", "shop", "open", "promo", "code", "sales"]]
    for i in range(300):
        day = start + dt.timedelta(days=int(rng.integers(0, 400)))
        shop = shops[int(rng.integers(0, 4))]
        is_open = bool(rng.integers(0, 2))
        promo = float(rng.uniform()) if rng.uniform() > 0.1 else None
        code = str(int(rng.integers(0, 5))) if i % 7 else "n/a"
        sales = (day - start).days / 100 + 2 * (shop == "North") + is_open + rng.normal()
        mixed.append([day, shop, is_open, promo, code, float(sales)])
    churn: list[list[Any]] = [["age", "plan", "income", "churn"]]
    for i in range(300):
        age = float(rng.integers(18, 80))
        plan = ["basic", "pro", "team"][int(rng.integers(0, 3))]
        income = float(rng.normal(50, 10)) if i % 11 else "#N/A"
        p = 0.2 + 0.4 * (plan == "basic") + age / 400
        churn.append([age, plan, income, "yes" if rng.uniform() < p else "no"])
    return {"diamonds": (_diamonds(400), "price"), "mixed": (mixed, "sales"),
            "churn": (churn, "churn")}


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, dt.date):
        return value.isoformat()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return repr(value)


def dump(path: str) -> None:
    """Write every formula result for the corpus to ``path`` (JSON)."""
    from stratpd_xl import _backend
    from stratpd_xl.excel import lite

    _backend.set_backend("numpy")  # what Pyodide has
    out: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (grid, target) in _grids().items():
            out[f"{name} impact"] = lite.stratimpact(grid, target, None, None)
            for col in grid[0]:
                if col == target:
                    continue
                for leaf, trials, points in [(None, 1, None), (5, 1, 0), (None, 5, 20)]:
                    key = f"{name} {col} leaf={leaf} trials={trials} max_points={points}"
                    out[key] = lite.stratpd(grid, target, col, leaf, trials, False, points, None)
        churn = _grids()["churn"][0]
        out["churn impact positive=no"] = lite.stratimpact(churn, "churn", None, "no")
        # Columns left out: a comma text, and a range of names as Excel hands it.
        diamonds = _grids()["diamonds"][0]
        out["diamonds impact exclude"] = lite.stratimpact(diamonds, "price", None, None,
                                                          "x, y, z")
        out["diamonds carat exclude"] = lite.stratpd(diamonds, "price", "carat", None, 1,
                                                     False, None, None, [["x"], ["y"], [None]])
        # The sheet the "analyse_selection" script writes: every cell and number format.
        from stratpd_xl.excel import ribbon
        from tests.test_ribbon import FakeBook, FakeName

        book = FakeBook(names=[FakeName("StratPD_target", '="price"'),
                               FakeName("StratPD_exclude", '="x, y, z"')])
        sheet = book.sheets[ribbon.analyse_selection(book, diamonds, source="Data!$A$1")]
        out["diamonds sheet exclude"] = [[r, c, v] for (r, c), v in sorted(sheet.cells.items())]
        for name, (grid, _target) in _grids().items():
            book = FakeBook()
            sheet = book.sheets[ribbon.analyse_selection(book, grid, source="Data!$A$1")]
            out[f"{name} sheet"] = [[r, c, v] for (r, c), v in sorted(sheet.cells.items())]
            out[f"{name} formats"] = sheet.formats
    Path(path).write_text(json.dumps(_plain(out), indent=0, sort_keys=True))


def _numbers(value: Any) -> list[float]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _numbers(v)]
    if isinstance(value, list):
        return [x for v in value for x in _numbers(v)]
    return [abs(value)] if type(value) is float else []


def differences(a: Any, b: Any, where: str = "", scale: float | None = None) -> list[str]:
    """Where ``a`` and ``b`` differ: numbers by more than ``REL`` times the largest number of
    their table (each top-level entry is a table), everything else at all."""
    if scale is None and where:
        scale = max(_numbers(a) + _numbers(b) + [1e-300])
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{where}: keys {sorted(a.keys() ^ b.keys())}"]
        return [d for k in a for d in differences(a[k], b[k], f"{where}{k}", scale)]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} vs {len(b)} items"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in differences(x, y, f"{where}[{i}]", scale)]
    if type(a) is float and type(b) is float:
        ok = abs(a - b) <= REL * (scale or 0.0)
    else:
        ok = type(a) is type(b) and a == b
    return [] if ok else [f"{where}: {a!r} vs {b!r}"]


if __name__ == "__main__":
    if sys.argv[1] == "dump":
        dump(sys.argv[2])
    else:
        found = differences(*(json.loads(Path(p).read_text()) for p in sys.argv[2:4]))
        print("\n".join(found[:20]) or f"same cells: {sys.argv[2]} and {sys.argv[3]}")
        sys.exit(1 if found else 0)
