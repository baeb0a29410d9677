"""``pip install stratpd-xl`` resolves under Pyodide (xlwings Lite), checked offline.

Every runtime dependency in ``pyproject.toml`` is evaluated with Pyodide's environment markers;
what remains must be shipped by Pyodide (its ``pyodide-lock.json``, committed) in a version the
specifier allows, or be a pure-Python wheel on PyPI (a small committed table).  Dependencies of
those are followed too.  Without numba the engine must fall back to numpy.

Checked for each committed lock: 0.27.5 is what xlwings Lite runs today (Python 3.12,
pandas 2.2.3), 314.0.7 the newest release.  That the code gives the same numbers with 0.27.5's
versions is ``make test-lite-compat``'s job (it needs a Python 3.12 with those wheels).
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
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "pyodide"
LOCKS = {
    version: json.loads((DATA / f"pyodide-lock-{version}.json").read_text())
    for version in ("0.27.5", "314.0.7")
}
PURE = {
    canonicalize_name(k): v
    for k, v in json.loads((DATA / "pure_python_wheels.json").read_text()).items()
    if not k.startswith("_")
}


def _shipped(version: str) -> dict[str, dict]:
    return {canonicalize_name(name): info for name, info in LOCKS[version]["packages"].items()}


def _pyodide_env(version: str) -> dict[str, str]:
    env = default_environment()
    python = LOCKS[version]["info"]["python"]
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


PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _runtime_requirements() -> list[Requirement]:
    return [Requirement(line) for line in PROJECT["dependencies"]]


def unresolved(requirements: list[Requirement], version: str) -> list[str]:
    """Why each requirement (and what it pulls in) cannot be installed in Pyodide ``version``."""
    env, shipped = _pyodide_env(version), _shipped(version)
    problems: list[str] = []
    seen: set[str] = set()
    todo = [r for r in requirements if r.marker is None or r.marker.evaluate(env)]
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        seen.add(name)
        if name in shipped:
            have, depends = shipped[name]["version"], shipped[name]["depends"]
            where = "Pyodide ships"
        elif name in PURE:
            have, depends = PURE[name]["version"], PURE[name]["depends"]
            where = "pure-Python wheel"
        else:
            problems.append(f"{req}: neither shipped by Pyodide nor a pure-Python wheel")
            continue
        if req.specifier and not req.specifier.contains(have, prereleases=True):
            problems.append(f"{req}: {where} {have}")
        todo += [Requirement(d) for d in depends]
    return problems


@pytest.mark.parametrize("version", sorted(LOCKS))
def test_every_runtime_dependency_resolves_under_pyodide(version):
    assert unresolved(_runtime_requirements(), version) == []


@pytest.mark.parametrize("version", sorted(LOCKS))
def test_pyodide_python_is_allowed(version):
    python = LOCKS[version]["info"]["python"]
    assert SpecifierSet(PROJECT["requires-python"]).contains(python), python


@pytest.mark.parametrize(("version", "pandas"), [("0.27.5", "2.2.3"), ("314.0.7", "3.0.2")])
def test_the_check_fails_for_what_pyodide_cannot_install(version, pandas):
    assert unresolved([Requirement("numba>=0.60")], version) == [
        "numba>=0.60: neither shipped by Pyodide nor a pure-Python wheel"
    ]
    assert unresolved([Requirement("pandas>=4")], version) == [f"pandas>=4: Pyodide ships {pandas}"]
    assert unresolved([Requirement("odfpy>=1.4")], version)  # sdist only
    if version == "0.27.5":
        # What stopped `pip install stratpd-xl` in xlwings Lite before the emscripten markers.
        assert unresolved([Requirement("pandas>=3,<4")], version) == [
            "pandas<4,>=3: Pyodide ships 2.2.3"
        ]
        assert unresolved([Requirement("python-calamine>=0.5")], version)


def _desktop_requirements(sys_platform: str) -> dict[str, Requirement]:
    env = default_environment() | {"sys_platform": sys_platform}
    return {
        canonicalize_name(r.name): r
        for r in _runtime_requirements()
        if r.marker is None or r.marker.evaluate(env)
    }


def test_desktop_only_dependencies_stay_on_the_desktop():
    for version in LOCKS:
        kept = {
            canonicalize_name(r.name)
            for r in _runtime_requirements()
            if r.marker is None or r.marker.evaluate(_pyodide_env(version))
        }
        assert not kept & {"numba", "xlwings", "python-calamine"}, version
    for sys_platform in ("win32", "darwin", "linux"):
        desktop = _desktop_requirements(sys_platform)
        assert {"numba", "xlwings", "python-calamine"} <= set(desktop), sys_platform
        assert str(desktop["xlwings"].specifier) == "==0.37.8"
        # pandas 2.2 is accepted for Pyodide only; the desktop keeps pandas 3.
        assert desktop["pandas"].specifier == SpecifierSet(">=3,<4"), sys_platform


def test_pure_python_table_lists_only_universal_wheels():
    for name, info in PURE.items():
        assert info["wheel"].endswith("-none-any.whl"), name
        assert info["wheel"].split("-")[1] == info["version"], name


def test_engine_uses_numpy_when_numba_cannot_be_imported(tmp_path):
    code = (
        "import sys; sys.modules['numba'] = None\n"  # import numba -> ImportError, as in Pyodide
        "import numpy as np, pandas as pd\n"
        "from stratpd_xl import _backend\n"
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


@pytest.mark.parametrize("version", sorted(LOCKS))
@pytest.mark.parametrize("name", ["numpy", "pandas", "scipy", "matplotlib"])
def test_compiled_dependencies_come_from_the_lock(name, version):
    assert _shipped(version)[name]["file_name"].endswith("_wasm32.whl")
