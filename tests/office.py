"""Finding real LibreOffice for the tests that open our outputs in Calc."""

from __future__ import annotations

import os
import shutil

import pytest


def soffice() -> str:
    """Path of ``soffice``; in CI its absence fails the test instead of skipping it."""
    exe = shutil.which("soffice") or shutil.which("libreoffice")
    if exe is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("LibreOffice (soffice) is required in CI")
        pytest.skip("LibreOffice (soffice) not installed")
    return exe
