"""Print pip pins that make a CPython stand in for a Pyodide release's package set.

``python tests/pyodide/pins.py tests/pyodide/pyodide-lock-0.27.5.json`` prints ``name==version``
for numpy, pandas, scipy, matplotlib and scikit-learn and everything they depend on, at the
versions that Pyodide's lock file ships, plus the pure-Python runtime dependencies micropip takes
from PyPI (``pure_python_wheels.json``).  ``make test-lite-compat`` installs these into a Python
3.12.
Standard library only: it runs before anything is installed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOTS = ("numpy", "pandas", "scipy", "matplotlib", "scikit-learn")
# Pyodide's own builds with no PyPI counterpart: BLAS linked into scipy's wheels, and the
# browser backend of matplotlib.
PYODIDE_ONLY = frozenset({"openblas", "matplotlib-pyodide"})


def pins(lock: dict) -> list[str]:
    """``name==version`` for ``ROOTS`` and their dependencies in ``lock``, then the pure wheels."""
    packages = lock["packages"]
    seen: set[str] = set()
    todo = list(ROOTS)
    while todo:
        name = todo.pop()
        if name in seen or name in PYODIDE_ONLY:
            continue
        seen.add(name)
        todo += packages[name]["depends"]
    out = [f"{name}=={packages[name]['version']}" for name in sorted(seen)]
    pure = json.loads((HERE / "pure_python_wheels.json").read_text())
    out += [f"{name}=={info['version']}" for name, info in pure.items() if not name.startswith("_")]
    return out


if __name__ == "__main__":
    print("\n".join(pins(json.loads(Path(sys.argv[1]).read_text()))))
