"""Every code block of README.md runs as written.

Python blocks run as scripts with this interpreter, shell blocks with bash and the installed
``stratpd-xl`` entry point first on PATH, each in a fresh temporary folder (no block leans on
the repository's files).  The set-up block (``make demo`` / ``make test``) cannot run inside
the test suite it starts, so its ``make`` targets are checked with ``make -n`` instead.  A block
in any other language fails the test, so no example escapes it.  The intro snippet must also
reproduce the README's picture byte for byte (``docs/make_chart_example.py`` writes it).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PYTHON_LANGS = {"python", "py"}
SHELL_LANGS = {"sh", "bash", "shell"}
# The README's picture and the file its snippet writes.
PICTURE = ROOT / "docs" / "chart-example.png"
SNIPPET_OUTPUT = "carat.png"


def _blocks(text: str) -> list[tuple[int, str, str]]:
    """(line number, language, code) of every fenced block, in order."""
    blocks = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        opening = re.match(r"^(\s*)```(\S*)\s*$", lines[i])
        if opening is None:
            i += 1
            continue
        start, lang = i + 1, opening.group(2).lower()
        i += 1
        body = []
        while i < len(lines) and not lines[i].strip().startswith("```"):
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise AssertionError(f"README.md line {start}: code block never closed")
        blocks.append((start, lang, "\n".join(body) + "\n"))
        i += 1
    return blocks


BLOCKS = _blocks(README.read_text(encoding="utf-8"))


def _is_setup(code: str) -> bool:
    commands = [ln.split("#", 1)[0].strip() for ln in code.splitlines()]
    commands = [c for c in commands if c]
    return bool(commands) and all(c.startswith("make ") for c in commands)


def _run(cmd: list[str], tmp_path: Path, where: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        # The installed entry point (stratpd-xl) of this interpreter's environment first.
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
        "MPLBACKEND": "Agg",
        "STRATPD_XL_DEBUG": "1",  # a broken example shows its traceback
    }
    result = subprocess.run(
        cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, (
        f"{where} failed (exit {result.returncode}):\n{result.stdout[-3000:]}\n"
        f"{result.stderr[-3000:]}"
    )
    return result


def test_readme_has_blocks_of_known_languages_only():
    assert len(BLOCKS) >= 4
    for line, lang, _ in BLOCKS:
        assert lang in PYTHON_LANGS | SHELL_LANGS, (
            f"README.md line {line}: a ```{lang or '(no language)'} block; tag it python or sh "
            "so tests/test_readme.py runs it"
        )


@pytest.mark.parametrize(
    ("line", "lang", "code"), BLOCKS, ids=[f"line{line}-{lang}" for line, lang, _ in BLOCKS]
)
def test_readme_block_runs(line, lang, code, tmp_path):
    where = f"README.md block at line {line}"
    if lang in PYTHON_LANGS:
        script = tmp_path / "block.py"
        script.write_text(code, encoding="utf-8")
        _run([sys.executable, str(script)], tmp_path, where)
        if "<!-- section:intro -->" in _section_of(line):
            _check_picture(tmp_path / SNIPPET_OUTPUT)
    elif _is_setup(code):
        if shutil.which("make") is None:
            pytest.skip("make is not installed")
        targets = [t for ln in code.splitlines()
                   for t in shlex.split(ln.split("#", 1)[0])[1:]]
        # -n: the targets exist and their recipes parse, without running the suite again.
        result = subprocess.run(["make", "-n", *targets], cwd=ROOT, capture_output=True,
                                text=True, timeout=60)
        assert result.returncode == 0, f"{where}: make -n {' '.join(targets)}: {result.stderr}"
    else:
        script = tmp_path / "block.sh"
        script.write_text("set -euo pipefail\n" + code, encoding="utf-8")
        _run(["bash", str(script)], tmp_path, where)


def _section_of(line: int) -> str:
    """The nearest section marker above a line."""
    above = README.read_text(encoding="utf-8").split("\n")[: line - 1]
    for text in reversed(above):
        if text.startswith("<!-- section:"):
            return text
    return ""


def _check_picture(made: Path) -> None:
    assert made.exists(), f"the intro snippet did not write {SNIPPET_OUTPUT}"
    assert made.read_bytes() == PICTURE.read_bytes(), (
        "the README's picture is not what its snippet draws; run "
        "`python docs/make_chart_example.py` and commit docs/chart-example.png"
    )


def test_set_up_block_is_recognised():
    # The only block not run as written is the one naming make targets; make sure the rule
    # that spares it cannot spare anything else.
    spared = [line for line, lang, code in BLOCKS if lang in SHELL_LANGS and _is_setup(code)]
    assert len(spared) == 1
    assert not _is_setup("make demo\nrm -rf /\n")


def test_readme_is_for_users():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 400, "README.md is for users: put the long form in docs/"
    # No story of how the project is worked on, and no path outside the repository.
    assert not re.search(r"\bsessions?\b", text, re.I)
    assert "../" not in text
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (ROOT / target).exists(), f"README.md links to a missing file: {target}"


def test_readme_names_every_column_and_attribute_of_the_results():
    # "What the numbers mean" must stay complete as the engine grows.
    import stratpd_xl as sx
    from stratpd_xl.demo import demo_data

    text = README.read_text(encoding="utf-8")
    frame = demo_data().drop(columns=["x", "y", "z"]).sample(2000, random_state=0)
    frame["sold"] = (frame["price"] > frame["price"].median()).map({True: "yes", False: "no"})
    curve = sx.stratpd(frame.drop(columns="sold"), "price", "carat", n_trials=3)
    effects = sx.catstratpd(frame.drop(columns="sold"), "price", "cut", n_trials=3)
    ranking = sx.impact(frame.drop(columns="sold"), "price", ["carat", "cut"])
    yes_no = sx.stratpd(frame.drop(columns="price"), "sold", "carat")
    for result in (curve, effects, ranking, yes_no):
        for name in [*result.columns, *result.attrs]:
            assert f"`{name}`" in text, f"README.md does not say what `{name}` is"
