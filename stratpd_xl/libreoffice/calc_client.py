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

The worker's stderr goes to ``calc-worker.log`` in the user's cache folder
(:func:`cache_folder`); when it dies, the cell quotes the last error *this* worker wrote there
and names how it ended (its exit code or signal).  A worker whose environment changed since it
started (stratpd-xl upgraded or removed) is replaced before the next call.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import subprocess
import sys
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
RECALCULATE = "recalculate (Ctrl+Shift+F9) to start it again"
#: What replaces :data:`RECALCULATE` in a cell whose worker the extension restarts by itself.
RESTARTING = "starting it again, this cell fills in by itself"
#: The worker reads this to know the folder of its per-LibreOffice pid file.
FOLDER_VARIABLE = "STRATPD_XL_CALC_FOLDER"
# Lines of a Python error, the ones worth quoting from the worker's log.
_ERROR_ENDINGS = ("Error", "Exception", "Interrupt", "Exit")


def cache_folder() -> str:
    """This user's cache folder for stratpd-xl: the worker's log and pid files.

    ``%LOCALAPPDATA%\\stratpd-xl`` on Windows, ``~/Library/Caches/stratpd-xl`` on macOS,
    ``$XDG_CACHE_HOME/stratpd-xl`` (``~/.cache/stratpd-xl``) elsewhere: one per user, so two
    users of a machine neither share nor block each other's log.
    """
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser(r"~\AppData\Local")
    elif sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "stratpd-xl")


def _how_it_ended(code: int | None) -> str:
    if code is None:
        return ""
    if code < 0:
        return f"killed by signal {-code}"
    return f"exit code {code}"


#: Longest answer line read from the worker (a formula's cells or a report's plan take a few
#: MB); a longer one means a runaway worker, which is stopped.
ANSWER_LIMIT = 64 * 1024**2
_TOO_LONG = b"<answer over ANSWER_LIMIT>"  # what the reader thread queues for such a line


class WorkerError(Exception):
    """The worker could not answer; the message is one sentence for the user.

    ``restartable`` is true for a worker that stopped (killed, crashed) where a new one may
    well answer: the sentence then ends in :data:`RECALCULATE`.
    """

    def __init__(self, message: str, *, restartable: bool = False) -> None:
        super().__init__(message)
        self.restartable = restartable

    def restarting(self) -> str:
        """The sentence for a cell whose worker is being started again by itself."""
        return str(self).replace(RECALCULATE, RESTARTING)


class Worker:
    """One long-lived worker process, started on first use and after any failure.

    Parameters
    ----------
    python : str
        The stratpd-xl environment's interpreter.
    start_timeout, call_timeout : float
        Seconds to wait for the worker's greeting and for one answer.
    log_path : str, optional
        Where the worker's stderr goes (default: ``calc-worker.log`` in ``folder``); the last
        error this worker wrote there is quoted when it stops.
    folder : str, optional
        The user's cache folder (default: :func:`cache_folder`).
    """

    def __init__(self, python: str, *, start_timeout: float = DEFAULT_START_TIMEOUT,
                 call_timeout: float = DEFAULT_CALL_TIMEOUT, log_path: str | None = None,
                 folder: str | None = None) -> None:
        self.python = python
        self.start_timeout = start_timeout
        self.call_timeout = call_timeout
        self.folder = folder or cache_folder()
        self.log_path = log_path or os.path.join(self.folder, "calc-worker.log")
        self._log_start = 0  # where this worker's lines begin in the log
        self._watch: dict = {}  # files of its environment, with their times, at its start
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
        env[FOLDER_VARIABLE] = self.folder
        try:
            os.makedirs(os.path.dirname(os.path.abspath(self.log_path)), exist_ok=True)
            # Appended to across starts, begun afresh once it passes LOG_LIMIT.
            big = os.path.exists(self.log_path) and os.path.getsize(self.log_path) > LOG_LIMIT
            log = open(self.log_path, "wb" if big else "ab")  # noqa: SIM115 - closed below
            self._log_start = log.tell()
        except OSError:
            log = subprocess.DEVNULL
            self._log_start = 0
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
        watch = hello.get("watch")
        self._watch = watch if isinstance(watch, dict) else {}
        if hello.get("protocol") != PROTOCOL:
            self.stop()
            raise WorkerError(
                f"the installed stratpd-xl (version {hello.get('version', '?')}) does not match "
                f"this extension; {REINSTALL}"
            )

    @staticmethod
    def _read(proc: subprocess.Popen, lines: queue.Queue) -> None:
        while True:
            # At most ANSWER_LIMIT bytes a line: a runaway worker writing without end must
            # not fill LibreOffice's memory until the time-out.
            line = proc.stdout.readline(ANSWER_LIMIT + 1)  # type: ignore[union-attr]
            if not line:
                break
            if len(line) > ANSWER_LIMIT:
                lines.put(_TOO_LONG)
                return  # the worker is stopped by the call that reads this
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

    def changed(self) -> bool:
        """Whether the worker's environment changed since it started: a file it named in its
        greeting (its package, the folder of installed packages) is gone or newer."""
        for path, stamp in self._watch.items():
            try:
                if os.stat(path).st_mtime_ns != stamp:
                    return True
            except (OSError, TypeError):
                return True
        return False

    def _own_last_error(self) -> str:
        """The last error this worker wrote to the log (the last line when none looks like
        one); lines from before its start, or from other workers, are not its."""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(max(self._log_start, os.path.getsize(self.log_path) - 8000))
                lines = [x.strip() for x in f.read().decode("utf-8", "replace").splitlines()]
        except OSError:
            return ""
        lines = [x for x in lines if x]
        errors = [x for x in lines if x.split(":")[0].endswith(_ERROR_ENDINGS)
                  or x.startswith("No module named")]
        found = errors or lines
        return found[-1][:200] if found else ""

    def _died(self) -> WorkerError:
        """The sentence for a worker that stopped: how it ended, its own last error and what
        to do (reinstall when it cannot import stratpd-xl, else recalculate)."""
        proc = self._proc
        code = None
        if proc is not None:
            try:
                code = proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
        self.stop()
        said = [x for x in (_how_it_ended(code), self._own_last_error()) if x]
        fix = REINSTALL if any("No module named" in x for x in said) else RECALCULATE
        return WorkerError("the stratpd-xl worker stopped"
                           + (f" ({': '.join(said)})" if said else "") + f"; {fix}",
                           restartable=fix == RECALCULATE)

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
            raise self._died()
        if line is _TOO_LONG:
            self.stop()
            raise WorkerError(
                f"the stratpd-xl worker wrote an answer over {ANSWER_LIMIT // 1024**2} MB and "
                "was stopped; recalculate to start it again"
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
            # A worker that died while idle, or whose environment changed, is replaced.
            if self._proc is None or self._proc.poll() is not None or self.changed():
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
                raise self._died() from None
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
