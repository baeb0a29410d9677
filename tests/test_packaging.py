"""Packaging facts the release steps (docs/release.md) rely on."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import stratpd_xl

ROOT = Path(__file__).resolve().parents[1]


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_version_is_one_number():
    assert stratpd_xl.__version__ == _project()["version"]


def test_bundled_data_is_package_data():
    # The demo, the README's examples and the wheel all need the CSV inside the package.
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "tool"]["setuptools"]["package-data"]["stratpd_xl"]
    assert "data/*.csv" in package_data
    assert (ROOT / "stratpd_xl" / "data" / "diamonds.csv").is_file()


def _make_plan(target: str, tmp_path: Path) -> str:
    """What ``make TARGET`` would run in a fresh clone (no .venv yet), without running it."""
    import shutil
    import subprocess

    import pytest

    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    # Run as from a shell, not as a sub-make of `make test` (whose MAKEFLAGS would print
    # "Entering directory <tmp path>" lines).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", target],
        cwd=tmp_path, capture_output=True, text=True, env=env,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_demo_installs_the_runtime_only_and_says_so(tmp_path):
    plan = _make_plan("demo", tmp_path)
    assert "pip --disable-pip-version-check install --progress-bar off -e ." in plan
    assert "[test]" not in plan and "pytest" not in plan  # no test tools for a demo
    assert " -q" not in plan  # pip names what it installs, the user is not left guessing
    assert "echo \"make: installing stratpd-xl and its runtime libraries" in plan
    assert plan.rstrip().endswith(".venv/bin/stratpd-xl demo")


def test_make_test_adds_the_test_tools_after_the_runtime(tmp_path):
    plan = _make_plan("test", tmp_path)
    runtime = plan.index("install --progress-bar off -e .\n")
    tools = plan.index('install --progress-bar off -e ".[test]"')
    assert runtime < tools < plan.index("-m pytest")
