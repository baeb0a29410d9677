"""Finding real LibreOffice for the tests that open our outputs in Calc, and driving it."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from stratpd_xl.libreoffice.extension import unopkg_crashed


def soffice() -> str:
    """Path of ``soffice``; in CI its absence fails the test instead of skipping it."""
    exe = shutil.which("soffice") or shutil.which("libreoffice")
    if exe is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("LibreOffice (soffice) is required in CI")
        pytest.skip("LibreOffice (soffice) not installed")
    return exe


# --------------------------------------------------------------------------- the Calc extension
# Shared by tests/test_calc_extension.py and benchmarks/bench_libreoffice.py: install the
# extension into a throw-away profile, start headless soffice on a named pipe, run
# tests/calc_driver.py with a Python that has uno, stop everything.

DRIVER = Path(__file__).resolve().parent / "calc_driver.py"
NOBODY = 65534  # unopkg refuses per-user installs as root; "nobody" installs instead


def _require(condition: bool, message: str) -> None:
    """Skip when a tool is missing, but fail under CI, where .ci/run installs it."""
    if condition:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


def require_calc_tools() -> str:
    """soffice, unopkg and a Python with ``uno`` must be there; that Python is returned."""
    from stratpd_xl.errors import StratPDInputError
    from stratpd_xl.libreoffice import extension

    soffice()
    python = uno_python()
    _require(python is not None, "no Python with uno (apt-get install python3-uno)")
    try:
        extension.find_unopkg()
    except StratPDInputError as exc:
        _require(False, str(exc))
    return python  # type: ignore[return-value]


@contextlib.contextmanager
def folder_for_calc(prefix: str) -> Iterator[Path]:
    """A temporary folder the user "nobody" can enter (pytest's, as root, is closed to it)."""
    base = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        base.chmod(0o755)
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def uno_python() -> str | None:
    """A Python that can ``import uno`` (LibreOffice's bridge; apt python3-uno), or None."""
    for exe in (os.environ.get("STRATPD_XL_UNO_PYTHON"), "/usr/bin/python3",
                shutil.which("python3")):
        if exe and Path(exe).exists():
            ok = subprocess.run([exe, "-c", "import uno"], capture_output=True, timeout=60)
            if ok.returncode == 0:
                return exe
    return None


def install_extension(profile: Path, oxt: Path, unopkg: str) -> None:
    """``unopkg add`` into ``profile``; as root, as the user "nobody".

    ``profile``'s parent must be open to "nobody" (not pytest's root-only temporary folder).
    """
    command = [unopkg, "add", "--force", "--suppress-license", str(oxt),
               f"-env:UserInstallation={profile.as_uri()}"]
    run: dict = {"capture_output": True, "timeout": 300}
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        profile.mkdir(parents=True, exist_ok=True)
        for path in (profile, oxt):
            os.chown(path, NOBODY, NOBODY)
        run.update(user=NOBODY, group=NOBODY, extra_groups=[],
                   env={"HOME": str(profile), "PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    # unopkg crashes now and then at start-up beside another LibreOffice (exit 139 in
    # parallel runs); the command's own install tries once more too (unopkg_crashed).
    done = subprocess.run(command, check=False, **run)
    if unopkg_crashed(done.returncode):
        done = subprocess.run(command, check=False, **run)
    done.check_returncode()


UNOPKG_AS_NOBODY = """\
import os, shutil, sys
unopkg, home, nobody = {unopkg!r}, {home!r}, {nobody!r}
args = sys.argv[1:]
if os.geteuid() == 0:  # unopkg refuses per-user installs as root: run it as "nobody"
    for i, arg in enumerate(args):
        if arg.endswith(".oxt") and os.path.isfile(arg):  # in a folder closed to "nobody"
            args[i] = shutil.copy(arg, home)
            os.chown(args[i], nobody, nobody)
    os.environ["HOME"] = home
    os.setgroups([])
    os.setgid(nobody)
    os.setuid(nobody)
os.execv(unopkg, [unopkg, *args])
"""


def unopkg_for_tests(folder: Path, unopkg: str) -> Path:
    """A stand-in ``unopkg`` (for ``STRATPD_XL_UNOPKG``) that runs the real one as "nobody"
    when the tests run as root, with the environment it was given.

    ``folder`` must be open to "nobody"; a profile handed to it must belong to "nobody".
    """
    home = folder / "unopkg-home"
    home.mkdir(parents=True, exist_ok=True)
    script = folder / "unopkg"
    script.write_text(f"#!{sys.executable}\n" + UNOPKG_AS_NOBODY.format(
        unopkg=unopkg, home=str(home), nobody=NOBODY), encoding="utf-8")
    script.chmod(0o755)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        os.chown(home, NOBODY, NOBODY)
    return script


def profile_for_unopkg(profile: Path) -> Path:
    """An empty profile folder that ``unopkg_for_tests`` can write (as "nobody" under root)."""
    profile.mkdir(parents=True, exist_ok=True)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        os.chown(profile, NOBODY, NOBODY)
    return profile


def pipe_name() -> str:
    """A name for soffice's UNO pipe that no other run can hold.

    A free TCP port is only free until soffice binds it: two test processes (pytest-xdist) could
    be handed the same one between ``bind(0)`` and soffice's own bind, and one driver then talked
    to the other's office.  A pipe is named by the caller, so 128 random bits make it unique.
    """
    return f"stratpd-xl-test-{uuid.uuid4().hex}"


def run_calc(profile: Path, request: dict, workdir: Path, *, python: str,
             timeout: float = 600, env: dict[str, str] | None = None) -> dict:
    """Start soffice on ``profile``, run the driver on ``request``, stop soffice; the result.

    ``env`` adds environment variables for soffice (and so for the extension inside it).

    soffice, oosplash, soffice.bin and the extension's worker share one session, which is
    ended whatever happens.
    """
    pipe = pipe_name()
    request_path, result_path = workdir / "request.json", workdir / "result.json"
    request_path.write_text(json.dumps(request))
    with (workdir / "soffice.log").open("w") as log:
        office = subprocess.Popen(
            [soffice(), "--headless", "--invisible", "--norestore", "--nologo", "--nodefault",
             "--nolockcheck", f"-env:UserInstallation={profile.as_uri()}",
             f"--accept=pipe,name={pipe};urp;"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, **(env or {})},
        )
        try:
            # The driver waits for the socket itself (with a time-out).
            run = subprocess.run(
                [python, str(DRIVER), pipe, str(request_path), str(result_path)],
                capture_output=True, text=True, timeout=timeout,
            )
        finally:
            try:
                os.killpg(office.pid, signal.SIGTERM)
                office.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(office.pid, signal.SIGKILL)
                office.wait(timeout=30)
            except ProcessLookupError:
                pass
    if run.returncode != 0:
        raise RuntimeError(f"the Calc driver failed:\n{run.stdout}\n{run.stderr}")
    return json.loads(result_path.read_text())
