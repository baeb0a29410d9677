"""The helpers that drive real LibreOffice for the Calc tests (tests/office.py)."""

from __future__ import annotations

import multiprocessing
import random
import re

from tests import office


def _draw(seed: int, out) -> None:
    random.seed(seed)  # two test processes can start from the same random state
    out.put(office.pipe_name())


def test_two_test_processes_never_get_the_same_soffice_pipe():
    # Under pytest-xdist two processes start soffice at once; with a "free" port both could be
    # handed the same number before either office bound it, and a driver then drove the other
    # process's office.  The pipe's name is the caller's, and must differ even between
    # processes forked with the same random state.
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    workers = [context.Process(target=_draw, args=(0, out)) for _ in range(2)]
    for w in workers:
        w.start()
    names = [out.get(timeout=60) for _ in workers]
    for w in workers:
        w.join(timeout=60)
    assert names[0] != names[1]
    assert len({office.pipe_name() for _ in range(1000)}) == 1000


def test_the_pipe_name_is_one_soffice_and_uno_accept():
    # LibreOffice's connection strings split on "," ";" and "=", and the pipe is a file
    # /tmp/OSL_PIPE_<uid>_<name> whose path must stay under the 108 bytes of a Unix socket.
    name = office.pipe_name()
    assert re.fullmatch(r"[A-Za-z0-9-]+", name)
    assert len(f"/tmp/OSL_PIPE_4294967295_{name}") < 108
