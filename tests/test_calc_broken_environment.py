"""The Calc extension when the stratpd-xl environment it was built for is gone or broken.

Its own soffice (one per module): the extension is installed as in
tests/test_calc_extension.py, but LibreOffice starts with ``STRATPD_XL_PYTHON`` pointing at a
missing interpreter, and two formulas ask for a worker in turn (the second tries to start one
again).  Each must come back at once as one sentence in its cell.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import stratpd_xl as sx
from stratpd_xl.cli import main as cli_main
from stratpd_xl.libreoffice import extension
from tests.office import install_extension, run_calc, soffice, uno_python
from tests.test_calc_extension import _require

TABLE = [["x", "y"], [1.0, 2.0], [2.0, 4.5], [3.0, 5.5]]


@pytest.fixture(scope="module")
def broken() -> Iterator[dict[str, Any]]:
    soffice()
    python = uno_python()
    _require(python is not None, "no Python with uno (apt-get install python3-uno)")
    try:
        extension.find_unopkg()
    except sx.StratPDInputError as exc:
        _require(False, str(exc))
    base = Path(tempfile.mkdtemp(prefix="stratpd-calc-broken-"))
    try:
        base.chmod(0o755)
        oxt = base / "stratpd-xl.oxt"
        assert cli_main(["libreoffice", "build", "-o", str(oxt)]) == 0
        install_extension(base / "profile", oxt, extension.find_unopkg())
        request = {
            "tables": {"Data": TABLE},
            "formulas": {
                "impact": {"sheet": "Data", "range": "D1", "formula": 'STRATIMPACT(A1:B4;"y")'},
                "again": {"sheet": "Data", "range": "D2", "formula": 'STRATPD(A1:B4;"y";"x")'},
            },
        }
        yield run_calc(base / "profile", request, base, python=python, timeout=300,
                       env={"STRATPD_XL_PYTHON": str(base / "gone" / "python")})
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize(("key", "prefix"), [("impact", "STRATIMPACT"), ("again", "STRATPD")])
def test_a_missing_environment_is_one_sentence_in_the_cell(broken, key, prefix):
    formula = broken["formulas"][key]
    [[text]] = formula["cells"]
    assert text.startswith(f"{prefix}: the stratpd-xl Python ")
    assert "is not there; run `stratpd-xl libreoffice install` again" in text
    assert "\n" not in text and "Traceback" not in text
    assert formula["seconds"] < 30, "no waiting for a worker that cannot start"


def test_the_sentence_names_the_interpreter_it_looked_for(broken):
    text = broken["formulas"]["impact"]["cells"][0][0]
    assert os.path.join("gone", "python") in text
