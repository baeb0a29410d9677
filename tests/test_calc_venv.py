"""The Calc extension installed and used from an activated venv, as the README tells users.

A distribution's LibreOffice embeds the system Python, which looks for ``python3`` on ``PATH``
to find its home: with a venv activated it takes the venv's, misses the system's ``uno``, and
``unopkg add`` fails with "C++ code threw St9bad_alloc" (a LibreOffice started from that shell
loads no Python extension at all).  Here a throw-away venv is activated (its ``bin`` first on
``PATH``, ``VIRTUAL_ENV`` set), ``stratpd-xl libreoffice install`` runs from it, and a headless
LibreOffice started in the same environment computes a formula with the venv's worker.

Without LibreOffice, ``uno`` or ``unopkg`` the module is skipped, except under CI.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stratpd_xl.libreoffice import extension
from tests.office import (
    folder_for_calc,
    profile_for_unopkg,
    require_calc_tools,
    run_calc,
    unopkg_for_tests,
)
from tests.test_calc_extension import DATA, EXPECTED, _address, _numbers_close

ROOT = Path(__file__).resolve().parents[1]


def _impact() -> tuple[str, str, str]:
    """The impact formula's sheet, range and text (the range as large as the API's answer)."""
    return ("Data", _address(len(EXPECTED.impact), len(EXPECTED.impact[0])),
            'STRATIMPACT(A1:J301;"price")')


def _make_venv(base: Path, system_python: str) -> Path:
    """A venv of the system Python (the one LibreOffice embeds), as a user makes it, that sees
    this environment's packages (stratpd-xl and its libraries) through a ``.pth`` file, so
    nothing is downloaded."""
    version = subprocess.run(
        [system_python, "-c", "import sys; print(sys.version_info[:2])"],
        capture_output=True, text=True, timeout=60).stdout.strip()
    if version != str(sys.version_info[:2]):
        pytest.skip(f"the system Python is {version}, these tests' {sys.version_info[:2]}: "
                    "its venv cannot load this environment's packages")
    venv = base / "venv"
    subprocess.run([system_python, "-m", "venv", "--without-pip", str(venv)], check=True,
                   capture_output=True, timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True, timeout=60).stdout.strip()
    Path(site, "stratpd_xl_tests.pth").write_text(
        f"{ROOT}\n{sysconfig.get_paths()['purelib']}\n", encoding="utf-8")
    return venv


def _activated(venv: Path, **more: str) -> dict[str, str]:
    """What ``. venv/bin/activate`` leaves in the environment."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "PYTHONPATH")}
    env.update(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
               **more)
    return env


@pytest.fixture(scope="module")
def venv_calc() -> Iterator[dict[str, Any]]:
    python = require_calc_tools()
    with folder_for_calc("stratpd-venv-") as base:
        venv = _make_venv(base, python)
        unopkg = unopkg_for_tests(base, extension.find_unopkg())
        # numba's cache empty before the install, as on a fresh machine: install fills it.
        cache = str(base / "numba-cache")
        env = _activated(venv, STRATPD_XL_UNOPKG=str(unopkg), NUMBA_CACHE_DIR=cache)
        # What the fix is for: the venv's environment handed to unopkg as it is.
        oxt = extension.build(base / "stratpd-xl.oxt")
        bare = subprocess.run(
            [str(unopkg), "add", "--force", "--suppress-license", str(oxt),
             f"-env:UserInstallation={profile_for_unopkg(base / 'bare').as_uri()}"],
            env=env, capture_output=True, text=True, timeout=300)
        profile = profile_for_unopkg(base / "profile")
        install = subprocess.run(
            [str(venv / "bin" / "python"), "-m", "stratpd_xl", "libreoffice", "install",
             "--profile", str(profile)],
            env=env, capture_output=True, text=True, timeout=600)
        result: dict[str, Any] = {"bare": bare, "install": install, "venv": venv}
        if install.returncode == 0:
            sheet, cells, formula = _impact()
            request = {"tables": {"Data": DATA},
                       "formulas": {"impact": {"sheet": sheet, "range": cells,
                                               "formula": formula}}}
            # LibreOffice started from the same shell: the venv still active.
            # numba says in the worker's log which kernels it loaded and which it compiled.
            # The formula itself runs on numba: on 300 rows numpy would answer while the
            # background thread loads, and whether that thread had logged before LibreOffice
            # closed depended on the machine's load (an empty log at load 15).
            result["calc"] = run_calc(profile, request, base, python=python, timeout=600,
                                      env=_activated(venv, XDG_CACHE_HOME=str(base),
                                                     NUMBA_CACHE_DIR=cache,
                                                     NUMBA_DEBUG_CACHE="1",
                                                     STRATPD_XL_BACKEND="numba"))
            log = base / "stratpd-xl" / "calc-worker.log"
            result["worker_log"] = log.read_text(encoding="utf-8") if log.exists() else ""
        yield result


def test_unopkg_fails_with_the_venv_in_its_environment(venv_calc):
    # The failure the install avoids (LibreOffice 7.4 on Debian): if unopkg ever copes with
    # an activated venv, this test says so and the workaround can go.
    bare = venv_calc["bare"]
    assert bare.returncode != 0
    assert "bad_alloc" in bare.stdout + bare.stderr


def test_install_from_an_activated_venv(venv_calc):
    install = venv_calc["install"]
    assert install.returncode == 0, install.stderr
    assert "compiling the engine's kernels once" in install.stdout
    assert "installed the StratPD extension" in install.stdout


def test_calc_started_from_the_venv_shell_computes_with_the_venvs_worker(venv_calc):
    assert "calc" in venv_calc, venv_calc["install"].stderr
    _numbers_close(venv_calc["calc"]["formulas"]["impact"]["cells"], EXPECTED.impact)


def test_office_environment_drops_the_venv():
    venv = Path(sys.prefix)
    if not (venv / "pyvenv.cfg").is_file():
        pytest.skip("the tests do not run in a venv")
    scripts = str(Path(sys.executable).parent)
    env = extension.office_environment({
        "PATH": os.pathsep.join([scripts, "/usr/bin", "/bin"]), "VIRTUAL_ENV": str(venv),
        "PYTHONHOME": str(venv), "PYTHONPATH": "x", "HOME": "/home/me", "LANG": "de_DE.UTF-8"})
    assert env == {"PATH": os.pathsep.join(["/usr/bin", "/bin"]), "HOME": "/home/me",
                   "LANG": "de_DE.UTF-8"}


def test_the_uno_hook_leaves_the_venvs_own_python_alone(tmp_path):
    # The line install writes into the venv acts only inside LibreOffice (pyuno built in).
    folder = tmp_path / "system"
    folder.mkdir()
    (folder / "uno.py").write_text("")
    site = tmp_path / "site"
    site.mkdir()
    (site / extension.UNO_HOOK).write_text(extension.uno_hook_line(folder))
    code = "import site, sys; site.addsitedir(sys.argv[1]); print(sys.argv[2] in sys.path)"
    out = subprocess.run([sys.executable, "-c", code, str(site), str(folder)],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_the_first_formula_after_install_does_not_compile(venv_calc):
    # install compiled the engine into numba's (here empty) cache: the worker of the first
    # formula loads every kernel it runs and compiles none (compiling took 25 s of the first
    # formula before; the seconds it takes now are in docs/libreoffice.md).
    log = venv_calc["worker_log"]
    assert "data loaded" in log
    assert "data saved" not in log, [line for line in log.splitlines() if "saved" in line][:3]
