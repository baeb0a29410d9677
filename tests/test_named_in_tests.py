"""Every public function, command-line option and formula argument is named in some test.

A name no test mentions is a name no test can fail for.  Public: what a module lists in
``__all__`` (modules whose name starts with "_" are private, and so is what they hold); the
options of every command of ``stratpd-xl``; the arguments of the five formulas, looked for
in the tests that call that formula.  A name is found when a test file holds it as a word
(an option with its dashes), anywhere except in this file.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import stratpd_xl
from stratpd_xl.cli import build_parser
from stratpd_xl.excel import udfs

HERE = Path(__file__).resolve()
TESTS = {p: p.read_text(encoding="utf-8") for p in sorted(HERE.parent.rglob("*.py"))
         if p != HERE}
FORMULAS = ["STRATPD", "STRATCOMPARE", "STRATIMPACT", "STRATPDBY", "STRATPD2"]
# Runs inside LibreOffice's own Python (it imports the extension's modules by their names
# there); tests/test_calc_extension.py drives it through Calc.
INSIDE_LIBREOFFICE = {"stratpd_xl.libreoffice.calc_component"}
# Names that are only data (constants, type aliases): a test names what it calls.
NOT_CALLABLE = (str, int, float, dict, list, tuple, frozenset, set)


def _named(word: str, texts: list[str] | None = None) -> bool:
    pattern = re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])")
    return any(pattern.search(t) for t in (texts if texts is not None else TESTS.values()))


def _public_modules() -> list[str]:
    names = ["stratpd_xl"]
    for info in pkgutil.walk_packages(stratpd_xl.__path__, "stratpd_xl."):
        parts = info.name.split(".")
        if not any(p.startswith("_") for p in parts[1:]) and info.name not in INSIDE_LIBREOFFICE:
            names.append(info.name)
    return names


def _public_functions() -> dict[str, str]:
    found: dict[str, str] = {}
    for name in _public_modules():
        with pytest.MonkeyPatch.context() as env:  # excel/lite.py turns the warm-up off
            env.setenv("STRATPD_XL_WARMUP", "0")
            module = importlib.import_module(name)
        for attr in getattr(module, "__all__", []):
            value = getattr(module, attr, None)
            if value is None or isinstance(value, NOT_CALLABLE) or inspect.ismodule(value):
                continue
            found.setdefault(attr, name)
    return found


def _options(parser: argparse.ArgumentParser, command: str = "stratpd-xl"
             ) -> dict[str, str]:
    found: dict[str, str] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.setdefault(name, command)
                found.update({k: v for k, v in _options(sub, f"{command} {name}").items()
                              if k not in found})
        elif action.option_strings and not isinstance(action, argparse._HelpAction):
            longest = max(action.option_strings, key=len)
            found.setdefault(longest, command)
    return found


def test_every_public_function_is_named_in_a_test():
    missing = sorted(f"{module}.{name}" for name, module in _public_functions().items()
                     if not _named(name))
    assert not missing, (f"named in no test: {', '.join(missing)}; a public function needs a "
                         "test that calls it (or a leading _ if it is not public)")


def test_every_command_line_option_is_named_in_a_test():
    missing = sorted(f"{command} {option}" for option, command in _options(build_parser()).items()
                     if not _named(option))
    assert not missing, f"named in no test: {', '.join(missing)}"


def test_every_formula_argument_is_named_in_a_test_of_that_formula():
    missing = []
    for formula in FORMULAS:
        texts = [t for t in TESTS.values() if re.search(rf"\b{formula}\(", t)]
        for arg in inspect.signature(getattr(udfs, formula)).parameters:
            if arg != "caller" and not _named(arg, texts):
                missing.append(f"{formula}({arg})")
    assert not missing, f"named in no test of the formula: {', '.join(missing)}"


def test_the_check_sees_a_name_no_test_has():
    assert not _named("stratpd_xl_no_test_says_this")
    assert _named("--max-features") and not _named("--max")
    assert "--max-features" in _options(build_parser())
    assert "interactions" in _public_functions()
