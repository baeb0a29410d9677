"""What every test shares: nothing written into the checkout, no environment left changed.

* Bytecode goes under the system's temporary folder (``sys.pycache_prefix`` here,
  ``PYTHONPYCACHEPREFIX`` for the Pythons the tests start) unless ``PYTHONDONTWRITEBYTECODE``
  says to write none, and so do numba's compiled kernels
  and hypothesis' files, so a run leaves the checkout as it found it and parallel runs
  (``pytest -n``) share no file in it.
* A test that changes ``os.environ`` must do it through ``monkeypatch``: one that leaves a
  variable changed (``STRATPD_XL_WARMUP=0`` set at import switched the warm-up thread off for
  every later test) fails, and so does a test module that changes it while it is collected.
* Ctrl+C must reach the commands the tests start: a test that leaves SIGINT ignored or blocked
  in the test process (both pass on to every child process) fails.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

# A suite started where Ctrl+C is ignored (in the background of a non-interactive shell:
# `( bash .ci/run & )`) passes that on to every command the tests start, so the tests that
# interrupt a command saw it finish instead (4 failures, exit 0 for 130).  The tests run
# with Ctrl+C as a terminal gives it.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
if hasattr(signal, "pthread_sigmask"):
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})

_SCRATCH = Path(tempfile.gettempdir()) / f"stratpd-xl-tests-{getattr(os, 'getuid', int)()}"

# Set once, before anything is compared: the same for every test and every worker.  Not when
# the environment says to write no bytecode at all (PYTHONDONTWRITEBYTECODE): then nothing is
# written to redirect, and a prefix only hides the installed libraries' own compiled files
# (Python reads bytecode from the prefix alone), so every Python a test starts compiled pandas,
# numpy, scikit-learn and matplotlib from their sources again: 2.1 -> 6.0 s of CPU to import
# the command line's libraries.
if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
    os.environ.setdefault("PYTHONPYCACHEPREFIX", str(_SCRATCH / "pycache"))
    sys.pycache_prefix = os.environ["PYTHONPYCACHEPREFIX"]
# numba's compiled kernels (cache=True), which it would keep beside the modules.
os.environ.setdefault("NUMBA_CACHE_DIR", str(_SCRATCH / "numba"))
# hypothesis' examples and its Unicode tables (its .hypothesis folder).
set_hypothesis_home_dir(str(_SCRATCH / "hypothesis"))
# No per-example deadline: an example that reads or writes a file took 393 ms of hypothesis'
# 200 in a full run at load 15 and failed as "flaky"; speed is measured by benchmarks/.
settings.register_profile("stratpd-xl", deadline=None)
settings.load_profile("stratpd-xl")

# Set by pytest and pytest-xdist themselves while a test runs, and by scikit-learn when it is
# first imported (for OpenMP).
_RUNNER_VARIABLES = ("PYTEST_", "COV_CORE_", "KMP_DUPLICATE_LIB_OK", "KMP_INIT_AT_FORK")
_AT_START = dict(os.environ)


def _changed(before: dict[str, str]) -> list[str]:
    now = os.environ
    keys = {k for k in set(before) | set(now) if not k.startswith(_RUNNER_VARIABLES)}
    return sorted(f"{k}: {before.get(k)!r} -> {now.get(k)!r}" for k in keys
                  if before.get(k) != now.get(k))


# The files that take longest, longest first.  `make test` runs one pytest process per core with
# a whole file per process (pytest-xdist --dist loadfile, --no-loadscope-reorder) and hands the
# files out in the order collected: sent last, a file of a few slow tests (a fresh venv, a
# wheel, LibreOffice) kept one process busy minutes after the other had run out of work.
# Only the order changes; a file not named keeps its place after these.  Measured by file (setup,
# call and teardown summed) in a full run on 2026-11-27: 459 s to 110 s at load 4-18, of 4,428 s.
LONGEST_FIRST = (
    "test_engine_tree.py", "test_cli.py", "test_installer.py", "test_files.py",
    "test_excel_udfs.py", "test_calc_worker.py", "test_ribbon.py", "test_readme.py",
    "test_ods_scan.py", "test_addin_build.py", "test_many_categories.py", "test_model.py",
    "test_hostile.py", "test_presentation_functions.py", "test_calc_extension.py",
)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: file order kept


def pytest_collection_finish(session: pytest.Session) -> None:
    changed = _changed(_AT_START)
    if changed:
        raise pytest.UsageError(
            "importing the test modules changed the environment of every test (use "
            "monkeypatch inside a test instead): " + "; ".join(changed))


@pytest.fixture(autouse=True)
def _environment_restored() -> Iterator[None]:
    before = dict(os.environ)
    yield
    changed = _changed(before)
    assert not changed, (
        "the test left the environment changed for every later test (use monkeypatch): "
        + "; ".join(changed))


def _sigint_state() -> tuple[object, ...]:
    """SIGINT's Python handler, and whether the process ignores or its main thread blocks it
    (Linux's /proc: a library can change both below Python)."""
    found: dict[str, bool] = {}
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("SigIgn", "SigBlk"):
                found[key] = bool(int(value, 16) & (1 << (signal.SIGINT - 1)))
    return signal.getsignal(signal.SIGINT), found.get("SigIgn"), found.get("SigBlk")


@pytest.fixture(autouse=True)
def _ctrl_c_restored() -> Iterator[None]:
    before = _sigint_state()
    yield
    after = _sigint_state()
    assert after == before, (
        "the test left Ctrl+C (SIGINT) changed for every later test and the commands they "
        f"start: handler, ignored, blocked {before} -> {after}")


def pytest_sessionfinish(session: pytest.Session) -> None:
    # The formulas' warm-up thread (started by importing them) compiles with numba; a process
    # that exits in the middle of that aborts ("terminate called without an active exception").
    spreadsheet = sys.modules.get("stratpd_xl.spreadsheet")
    if spreadsheet is not None:
        spreadsheet.wait_for_warm_up(300)
