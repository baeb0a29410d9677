"""``pip install stratpd-xl`` resolves under Pyodide (xlwings Lite), checked offline.

Every runtime dependency in ``pyproject.toml`` is evaluated with Pyodide's environment markers;
what remains must be shipped by Pyodide (its ``pyodide-lock.json``, committed) in a version the
specifier allows, or be a pure-Python wheel on PyPI (a small committed table).  Dependencies of
those are followed too.  Without numba the engine must fall back to numpy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "pyodide"
LOCK = json.loads((DATA / "pyodide-lock-314.0.7.json").read_text())
PURE = {
    canonicalize_name(k): v
    for k, v in json.loads((DATA / "pure_python_wheels.json").read_text()).items()
    if not k.startswith("_")
}
SHIPPED = {canonicalize_name(name): info for name, info in LOCK["packages"].items()}


def _pyodide_env() -> dict[str, str]:
    env = default_environment()
    python = LOCK["info"]["python"]
    env.update(
        sys_platform="emscripten",
        platform_system="Emscripten",
        os_name="posix",
        platform_machine="wasm32",
        implementation_name="cpython",
        platform_python_implementation="CPython",
        python_version=".".join(python.split(".")[:2]),
        python_full_version=python,
    )
    return env


def _runtime_requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [Requirement(line) for line in project["dependencies"]]


def unresolved(requirements: list[Requirement], env: dict[str, str]) -> list[str]:
    """Why each requirement (and what it pulls in) cannot be installed under ``env``."""
    problems: list[str] = []
    seen: set[str] = set()
    todo = [r for r in requirements if r.marker is None or r.marker.evaluate(env)]
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        seen.add(name)
        if name in SHIPPED:
            version, depends = SHIPPED[name]["version"], SHIPPED[name]["depends"]
            where = "Pyodide ships"
        elif name in PURE:
            version, depends = PURE[name]["version"], PURE[name]["depends"]
            where = "pure-Python wheel"
        else:
            problems.append(f"{req}: neither shipped by Pyodide nor a pure-Python wheel")
            continue
        if req.specifier and not req.specifier.contains(version, prereleases=True):
            problems.append(f"{req}: {where} {version}")
        todo += [Requirement(d) for d in depends]
    return problems


def test_every_runtime_dependency_resolves_under_pyodide():
    assert unresolved(_runtime_requirements(), _pyodide_env()) == []


def test_the_check_fails_for_what_pyodide_cannot_install():
    env = _pyodide_env()
    assert unresolved([Requirement("numba>=0.60")], env) == [
        "numba>=0.60: neither shipped by Pyodide nor a pure-Python wheel"
    ]
    assert unresolved([Requirement("pandas>=4")], env) == ["pandas>=4: Pyodide ships 3.0.2"]
    assert unresolved([Requirement("odfpy>=1.4")], env)  # sdist only


def test_desktop_only_dependencies_stay_on_the_desktop():
    by_name = {canonicalize_name(r.name): r for r in _runtime_requirements()}
    desktop = default_environment() | {"sys_platform": "win32", "platform_system": "Windows"}
    for name in ("numba", "xlwings"):
        marker = by_name[name].marker
        assert marker is not None and not marker.evaluate(_pyodide_env()), name
        assert marker.evaluate(desktop), f"{name} must still install on Windows"
    assert str(by_name["xlwings"].specifier) == "==0.37.8"


def test_pure_python_table_lists_only_universal_wheels():
    for name, info in PURE.items():
        assert info["wheel"].endswith("-none-any.whl"), name
        assert info["wheel"].split("-")[1] == info["version"], name


def test_engine_uses_numpy_when_numba_cannot_be_imported(tmp_path):
    code = (
        "import sys; sys.modules['numba'] = None\n"  # import numba -> ImportError, as in Pyodide
        "import numpy as np, pandas as pd\n"
        "from stratpd_xl.engine import _backend\n"
        "import stratpd_xl as sx\n"
        "r = np.random.default_rng(0); x, z = r.uniform(size=400), r.uniform(size=400)\n"
        "df = pd.DataFrame({'x': x, 'z': z, 'y': 3 * x + z})\n"
        "curve = sx.stratpd(df, 'y', 'x')\n"
        "print(_backend.HAVE_NUMBA, _backend.get_backend(), len(curve) > 0)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "STRATPD_XL_BACKEND": ""}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "numpy", "True"]


@pytest.mark.parametrize("name", ["numpy", "pandas", "scipy", "matplotlib"])
def test_compiled_dependencies_come_from_the_lock(name):
    assert SHIPPED[name]["file_name"].endswith("_wasm32.whl")
