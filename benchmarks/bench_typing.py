"""Typing speed: the per-cell reference (tests/reference_typing.py) against the sheet layer.

Run: ``PYTHONPATH=. python benchmarks/bench_typing.py``.  Prints case, rows, old and new
seconds and the ratio; it asserts nothing (timings depend on the machine).
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path
from typing import Any

import numpy as np

from stratpd_xl.input.sheet import frame_from_cells, typed_column

_REF_PATH = Path(__file__).resolve().parents[1] / "tests" / "reference_typing.py"
_spec = importlib.util.spec_from_file_location("reference_typing", _REF_PATH)
assert _spec and _spec.loader
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)


def _reference_rows(rows: list[tuple[Any, ...]]) -> None:
    """The old block path: zip per column, then the per-cell typing of each column."""
    header, body = rows[0], rows[1:]
    for j, col in enumerate(zip(*body, strict=True)):
        reference.typed_column(str(header[j]), np.array(col, dtype=object))


def _timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    rng = np.random.default_rng(0)
    n = 200_000
    floats = rng.normal(size=(n, 8)).round(3)
    words = np.array(["north", "south", "east", "west"], dtype=object)[rng.integers(0, 4, n)]
    target = rng.normal(size=n)
    # xlwings hands over tuples of rows holding Python floats and str.
    rows = [tuple(f"x{j}" for j in range(8)) + ("region", "y")]
    rows += [(*f, w, t) for f, w, t in zip(floats.tolist(), words, target.tolist(), strict=True)]
    m = 1_000_000
    values = rng.uniform(0, 9999, m)
    dot = np.array([f"{v:.2f}" for v in values], dtype=object)
    comma = np.array(
        [f"{v:,.2f}".replace(",", "_").replace(".", ",").replace("_", ".") for v in values],
        dtype=object,
    )
    cases = [
        (
            "200k x 10 xlwings rows",
            n,
            lambda: _reference_rows(rows),
            lambda: frame_from_cells(rows),
        ),
        (
            '1M "1234.56" strings',
            m,
            lambda: reference.typed_column("a", dot),
            lambda: typed_column("a", dot),
        ),
        (
            '1M "1.234,56" strings',
            m,
            lambda: reference.typed_column("a", comma),
            lambda: typed_column("a", comma),
        ),
        (
            "1M float64",
            m,
            lambda: reference.typed_column("a", values),
            lambda: typed_column("a", values),
        ),
    ]
    print(f"{'case':<26}{'rows':>10}{'old s':>10}{'new s':>10}{'ratio':>9}")
    for case, size, old, new in cases:
        t_old, t_new = _timed(old), _timed(new)
        print(f"{case:<26}{size:>10,}{t_old:>10.3f}{t_new:>10.3f}{t_old / t_new:>9.1f}")


if __name__ == "__main__":
    main()
