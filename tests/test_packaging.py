"""Packaging facts the release steps (docs/release.md) rely on."""

from __future__ import annotations

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
