"""docs/formulas.md documents every formula with its arguments in the order the hosts use.

The argument lists live in :mod:`stratpd_xl.spreadsheet` (Excel's and Calc's function wizards
read them); a formula or argument added there and not to the reference fails here.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from stratpd_xl import spreadsheet

DOC = Path(__file__).resolve().parents[1] / "docs" / "formulas.md"

FORMULAS = {
    "STRATPD": (spreadsheet.stratpd, spreadsheet.STRATPD_ARGS),
    "STRATIMPACT": (spreadsheet.stratimpact, spreadsheet.STRATIMPACT_ARGS),
    "STRATPDBY": (spreadsheet.stratpdby, spreadsheet.STRATPDBY_ARGS),
    "STRATPD2": (spreadsheet.stratpd2, spreadsheet.STRATPD2_ARGS),
    "STRATCOMPARE": (spreadsheet.stratcompare, spreadsheet.STRATCOMPARE_ARGS),
}


def _signature(name: str) -> str:
    """``=NAME(required, ..., [optional], ...)`` as the reference must show it."""
    function, declared = FORMULAS[name]
    required = [
        p.name for p in inspect.signature(function).parameters.values()
        if p.kind is p.POSITIONAL_OR_KEYWORD
    ]
    parts = [a if a in required else f"[{a}]" for a in declared]
    return f"={name}({', '.join(parts)})"


def test_every_formula_the_hosts_declare_is_listed():
    assert set(FORMULAS) == set(spreadsheet.DESCRIPTIONS)


@pytest.mark.parametrize("name", sorted(FORMULAS))
def test_reference_shows_the_formula_with_its_arguments_in_order(name):
    headings = re.findall(r"^## `(=[A-Z0-9]+\(.*\))`$", DOC.read_text(encoding="utf-8"), re.M)
    assert _signature(name) in headings, f"docs/formulas.md lacks the heading {_signature(name)}"


def test_readme_lists_every_formula():
    readme = (DOC.parents[1] / "README.md").read_text(encoding="utf-8")
    for name in FORMULAS:
        assert f"`={name}(" in readme, f"README's formula table lacks ={name}"
