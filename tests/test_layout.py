"""The package's folders are its layers, and imports point one way, from the front ends down.

front ends (``cli``, ``demo``, ``excel``, ``libreoffice``, the package's ``__init__``) ->
``spreadsheet`` (the formulas' cells in / cells out, shared by Excel and Calc) -> ``workflow`` ->
``scale`` (the engine's stages over chunks and Dask partitions) -> ``input`` / ``engine`` (and
``model``, which builds on it) / ``presentation`` -> bottom
(``_backend``, ``errors``, ``params``, ``schema``, ``yesno``).  Every import is counted, the
ones inside functions too: a lazy import is still a dependency.  A new package must be given a
place here before it can land.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd
import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "stratpd_xl"

BOTTOM = {"_backend", "errors", "identifiers", "params", "schema", "yesno"}
#: layer -> the layers its modules may import (each may always import itself and the bottom)
ALLOWED = {
    "bottom": set(),
    "input": set(),
    "engine": set(),
    # A fitted model's second opinion: numbers built on the engine's tables.
    "model": {"engine"},
    "presentation": set(),
    # More rows than memory: the engine's stages driven over chunks and Dask partitions.
    "scale": {"input", "engine"},
    "workflow": {"input", "engine", "model", "presentation", "scale"},
    "spreadsheet": {"workflow", "input", "engine", "model", "presentation"},
    "front": {"spreadsheet", "workflow", "input", "engine", "model", "presentation", "scale",
              "front"},
}
FRONT = {"__init__", "__main__", "cli", "demo", "excel", "libreoffice"}


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _layer(module: str) -> str:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    if top in BOTTOM:
        return "bottom"
    if top in FRONT:
        return "front"
    if top in ALLOWED:
        return top
    raise AssertionError(
        f"{module} is in no layer: add its top-level name to tests/test_layout.py"
    )


def _imports(module: str) -> set[str]:
    """The package's modules that ``module`` imports, anywhere in its code."""
    path = MODULES[module]
    is_package = path.name == "__init__.py"
    here = module.split(".") if is_package else module.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            # ``from pkg import name`` imports the submodule pkg.name when there is one
            names = [
                f"{stem}.{alias.name}" if f"{stem}.{alias.name}" in MODULES else stem
                for alias in node.names
            ]
        else:
            continue
        for name in names:
            while name and name not in MODULES:  # a.b.function -> a.b
                name = name.rpartition(".")[0]
            if name.startswith("stratpd_xl") and name != module:
                found.add(name)
    return found


GRAPH = {module: _imports(module) for module in MODULES}


def test_at_most_twelve_modules_loose_at_the_top() -> None:
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(loose) <= 12, loose


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down_the_layers(module: str) -> None:
    layer = _layer(module)
    allowed = ALLOWED[layer] | {layer, "bottom"}
    wrong = sorted(m for m in GRAPH[module] if _layer(m) not in allowed)
    assert not wrong, f"{module} ({layer}) imports {wrong}"


def test_no_import_cycles() -> None:
    # Tarjan's strongly connected components; any component of two or more is a cycle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in GRAPH[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in GRAPH:
        if module not in index:
            visit(module)
    assert not cycles, cycles


def test_the_check_sees_lazy_and_relative_imports() -> None:
    # The graph must hold imports made inside functions and written relatively, or the two
    # tests above would pass on anything.
    assert "stratpd_xl.input._scan_kernels" in GRAPH["stratpd_xl.input._workbook_scan"]
    assert "stratpd_xl.engine" in GRAPH["stratpd_xl.workflow"]
    assert "stratpd_xl.presentation.report" in GRAPH["stratpd_xl.cli"]


def test_the_command_line_formats_no_numbers_itself() -> None:
    # The printed table's number rule (digits, exponents for 1e15+, percentages) lives in
    # presentation/tables.py beside the workbook's; a front end that imports numpy has
    # started doing arithmetic of its own.
    tree = ast.parse((PACKAGE / "cli.py").read_text(encoding="utf-8"))
    numeric = sorted({alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                      for alias in node.names if alias.name.split(".")[0] == "numpy"}
                     | {node.module for node in ast.walk(tree)
                        if isinstance(node, ast.ImportFrom) and node.module
                        and node.module.split(".")[0] == "numpy"})
    assert not numeric, numeric
    from stratpd_xl.presentation.tables import text_table

    printed = text_table(pd.DataFrame({"x": [0.1 + 0.2, 2.5], "pd": [3e306, -1e306],
                                       "share": [0.25, 0.75]})).splitlines()
    assert printed[1].split() == ["0.3", "3e+306", "25.0%"], printed
