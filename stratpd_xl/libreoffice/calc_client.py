"""The Calc extension's side of the worker: start it, talk to it, restart it, never hang.

This file runs inside LibreOffice's own Python (copied into the extension as
``pythonpath/stratpd_xl_calc_client.py``), which may be another version than the user's (as
old as 3.8) and lacks numpy and pandas, so it uses the standard library only and imports
nothing of stratpd-xl.  It starts ``<python> -m stratpd_xl.libreoffice.worker`` with the interpreter
recorded when the extension was built, sends one JSON line per request and reads one JSON line
back (:mod:`stratpd_xl.libreoffice.worker` is the other side).

Every failure becomes one sentence for the cell: a missing interpreter, a worker that dies,
answers garbage or takes longer than the time-out is killed, and the next call starts a fresh
one.  A reader thread feeds a queue, so waiting has a time-out on every platform (``select``
does not work on Windows pipes).
"""

from __future__ import annotations

import base64
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from array import array
from typing import Any

#: Protocol version: the worker says it in its first line; a mismatch means "rebuild".
PROTOCOL = 1
WORKER_MODULE = "stratpd_xl.libreoffice.worker"
DEFAULT_START_TIMEOUT = 120.0  # first start: imports and loading compiled kernels
DEFAULT_CALL_TIMEOUT = 600.0  # one formula on a million rows stays well under this
LOG_LIMIT = 1_000_000  # bytes of the worker's log kept before it starts afresh
REINSTALL = "run `stratpd-xl libreoffice install` again from the Python where stratpd-xl is " \
    "installed"


class WorkerError(Exception):
    """The worker could not answer; the message is one sentence for the user."""


class Worker:
    """One long-lived worker process, started on first use and after any failure.

    Parameters
    ----------
    python : str
        The stratpd-xl environment's interpreter.
    start_timeout, call_timeout : float
        Seconds to wait for the worker's greeting and for one answer.
    log_path : str, optional
        Where the worker's stderr goes (default: ``stratpd-xl-calc.log`` in the temp folder);
        its last line is quoted when the worker stops.
    """

    def __init__(self, python: str, *, start_timeout: float = DEFAULT_START_TIMEOUT,
                 call_timeout: float = DEFAULT_CALL_TIMEOUT, log_path: str | None = None) -> None:
        self.python = python
        self.start_timeout = start_timeout
        self.call_timeout = call_timeout
        self.log_path = log_path or os.path.join(tempfile.gettempdir(), "stratpd-xl-calc.log")
        self._proc: subprocess.Popen | None = None
        self._lines: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._next_id = 0

    # ------------------------------------------------------------------ process
    def _start(self) -> None:
        if not self.python or not os.path.isfile(self.python):
            raise WorkerError(f"the stratpd-xl Python {self.python!r} is not there; {REINSTALL}")
        flags = 0
        if sys.platform == "win32":  # no console window flashing up behind Calc
            flags = subprocess.CREATE_NO_WINDOW  # type: ignore[attr-defined]
        env = dict(os.environ)
        # LibreOffice's own Python settings must not leak into the user's interpreter.
        for name in ("PYTHONHOME", "PYTHONPATH", "PYTHONSTARTUP"):
            env.pop(name, None)
        env["PYTHONIOENCODING"] = "utf-8"
        try:
            # Appended to across starts, begun afresh once it passes LOG_LIMIT.
            big = os.path.exists(self.log_path) and os.path.getsize(self.log_path) > LOG_LIMIT
            log = open(self.log_path, "wb" if big else "ab")  # noqa: SIM115 - closed below
        except OSError:
            log = subprocess.DEVNULL
        try:
            self._proc = subprocess.Popen(
                [self.python, "-m", WORKER_MODULE], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=log, env=env, creationflags=flags,
            )
        except OSError as exc:
            raise WorkerError(
                f"the stratpd-xl Python {self.python!r} could not be started "
                f"({exc.strerror or exc}); {REINSTALL}"
            ) from exc
        finally:
            if log is not subprocess.DEVNULL:
                log.close()
        self._lines = queue.Queue()
        threading.Thread(target=self._read, args=(self._proc, self._lines), daemon=True,
                         name="stratpd-xl-worker-reader").start()
        hello = self._receive(self.start_timeout, "start")
        if hello.get("protocol") != PROTOCOL:
            self.stop()
            raise WorkerError(
                f"the installed stratpd-xl (version {hello.get('version', '?')}) does not match "
                f"this extension; {REINSTALL}"
            )

    @staticmethod
    def _read(proc: subprocess.Popen, lines: queue.Queue) -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.put(line)
        lines.put(None)  # end of output: the worker stopped

    def stop(self) -> None:
        """Stop the worker (it is started again on the next call)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass

    def _last_log_line(self) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(max(0, os.path.getsize(self.log_path) - 4000))
                lines = [x.strip() for x in f.read().decode("utf-8", "replace").splitlines()]
        except OSError:
            return ""
        lines = [x for x in lines if x]
        return lines[-1][:200] if lines else ""

    def _receive(self, timeout: float, what: str) -> dict:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            self.stop()
            raise WorkerError(
                f"stratpd-xl took longer than {timeout:.0f} s to {what} and was stopped; "
                "try fewer rows, or recalculate to start it again"
            ) from None
        if line is None:
            self.stop()
            last = self._last_log_line()
            raise WorkerError(
                "the stratpd-xl worker stopped" + (f" ({last})" if last else "")
                + f"; {REINSTALL}"
            )
        try:
            message = json.loads(line)
        except ValueError:
            self.stop()
            raise WorkerError(f"the stratpd-xl worker answered garbage; {REINSTALL}") from None
        if not isinstance(message, dict):
            self.stop()
            raise WorkerError(f"the stratpd-xl worker answered garbage; {REINSTALL}")
        return message

    # ------------------------------------------------------------------ calls
    def call(self, op: str, **args: Any) -> Any:
        """Send one request and return the worker's ``result``.

        Raises
        ------
        WorkerError
            With one sentence, when the worker cannot be started or does not answer in time
            (it is stopped then, and started again by the next call).
        """
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self.stop()
                self._start()
            self._next_id += 1
            # default=str: a UNO value JSON does not know (a struct, an enum) goes as its text.
            request = json.dumps({"id": self._next_id, "op": op, "args": args},
                                 ensure_ascii=False, separators=(",", ":"), default=str)
            try:
                self._proc.stdin.write(request.encode("utf-8") + b"\n")  # type: ignore[union-attr]
                self._proc.stdin.flush()  # type: ignore[union-attr]
            except OSError:
                self.stop()
                raise WorkerError(f"the stratpd-xl worker stopped; {REINSTALL}") from None
            answer = self._receive(self.call_timeout, "answer")
            if answer.get("id") != self._next_id:
                self.stop()
                raise WorkerError(f"the stratpd-xl worker answered out of turn; {REINSTALL}")
            if "error" in answer:
                raise WorkerError(str(answer["error"]))
            return answer.get("result")


def pack_block(rows: list | tuple) -> Any:
    """A block of cells (rows of floats, text and None, as Calc hands a range) for the wire.

    A column whose cells under the header are all numbers travels as the bytes of its doubles
    (base64), which JSON would otherwise write and read digit by digit - most of the cost of a
    large range; other columns travel as JSON lists.  :func:`unpack_block` in the worker
    rebuilds the same rows, so the formulas see exactly what Calc gave.  A block that is not a
    rectangle of at least two rows goes as it is.
    """
    if len(rows) < 2 or len({len(r) for r in rows}) != 1:
        return rows
    columns = []
    for column in zip(*rows):  # noqa: B905 - LibreOffice's Python may predate strict=
        body = column[1:]
        if all(type(v) is float for v in body):
            packed = base64.b64encode(array("d", body).tobytes()).decode("ascii")
            columns.append({"head": column[0], "doubles": packed})
        else:
            columns.append({"head": column[0], "cells": list(body)})
    return {"columns": columns, "rows": len(rows)}


def load_config(path: str) -> dict:
    """The extension's ``config.json`` (written at build time), or ``{}`` when unreadable."""
    try:
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
    except (OSError, ValueError):
        return {}
    return config if isinstance(config, dict) else {}
