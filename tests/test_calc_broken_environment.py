"""The Calc extension when the stratpd-xl environment it was built for is gone or broken.

Its own soffice (one per module): the extension is installed as in
tests/test_calc_extension.py, but LibreOffice starts with ``STRATPD_XL_PYTHON`` pointing at a
missing interpreter, and two formulas ask for a worker in turn (the second tries to start one
again).  Each must come back at once as one sentence in its cell.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from stratpd_xl.cli import main as cli_main
from stratpd_xl.libreoffice import extension
from tests.office import folder_for_calc, install_extension, require_calc_tools, run_calc

TABLE = [["x", "y"], [1.0, 2.0], [2.0, 4.5], [3.0, 5.5]]


@pytest.fixture(scope="module")
def broken() -> Iterator[dict[str, Any]]:
    python = require_calc_tools()
    with folder_for_calc("stratpd-calc-broken-") as base:
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
