"""``python -m stratpd_xl.libreoffice.worker``: the stratpd-xl side of the Calc extension.

LibreOffice starts this once (from the interpreter recorded in the extension) and keeps it
running, so numba's kernels, the imports and the formulas' cache stay warm between
recalculations.  It reads one JSON request per line on stdin and writes one JSON answer per
line on stdout:

    -> {"id": 7, "op": "STRATIMPACT", "args": {"data": [[...], ...], "target": "price"}}
    <- {"id": 7, "result": [["feature", "kind", "impact", "share"], ...]}

The first line it writes is ``{"hello": "stratpd-xl", "protocol": 1, "version": "..."}``.  The
formulas are :mod:`stratpd_xl.spreadsheet`'s, as in Excel; an answer never carries a traceback
(the formulas' own errors are their one-cell texts; anything else is one sentence under
``"error"``).  Anything a library prints goes to stderr, never into the answers.

Only the extension writes to this process, but a broken or foreign extension must not stop it:
a request line is read at most ``MAX_REQUEST_BYTES`` long (the rest of a longer one is skipped
unread), nested at most ``MAX_DEPTH`` deep, and whatever it holds ends in one answer, never in
the worker's death.  An answer is strict JSON in UTF-8: the ``id`` is echoed only when it is a
whole number (never ``NaN`` or an object), and text that UTF-8 cannot carry (a lone surrogate
from a cell) is sent as U+FFFD.
"""

from __future__ import annotations

import base64
import inspect
import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

import numpy as np

from .. import __version__, spreadsheet
from ..errors import error_text
from . import calc_client, report
from .report import cells_for_calc

__all__ = ["MAX_DEPTH", "MAX_REQUEST_BYTES", "main", "serve"]

#: Longest request line read: a range of a million rows by 24 number columns travels in
#: about 190 MB (its doubles in base64); reading a 1 GB line whole took 3.7 GB.  A larger range
#: is refused with a sentence asking to run ``stratpd-xl`` on the range saved as a file.
MAX_REQUEST_BYTES = 256 * 1024**2
#: Deepest nesting a request may have: the request, its arguments, a packed range, its
#: columns, a column, its cells is 6 levels.  200,000 brackets deep killed the worker
#: (``RecursionError`` inside the JSON reader).
MAX_DEPTH = 8
_REBUILD = "rebuild the extension (run `stratpd-xl libreoffice install` again)"
# The id the client writes first, read from the head of a line too long to parse.
_HEAD_ID = re.compile(rb'\A\s*\{\s*"id"\s*:\s*(-?\d{1,15})\s*[,}]')


class _Malformed(Exception):  # noqa: N818 - a request no extension of this version sends
    """A request this worker cannot take; the message is one sentence."""


def unpack_block(value: Any) -> Any:
    """The rows :func:`~stratpd_xl.libreoffice.calc_client.pack_block` packed; other values
    as they are."""
    if not isinstance(value, dict) or "columns" not in value:
        return value
    columns = []
    for column in value["columns"]:
        if "doubles" in column:
            body = np.frombuffer(base64.b64decode(column["doubles"]), dtype="<f8").tolist()
        else:
            body = column["cells"]
        if len(body) != value["rows"] - 1:
            raise _Malformed(f"a packed column has the wrong length; {_REBUILD}")
        columns.append([column["head"], *body])
    return [list(row) for row in zip(*columns, strict=True)]


#: Calc's formulas: the spreadsheet layer's functions, as Excel calls them.
FORMULAS: dict[str, Callable[..., Any]] = {
    "STRATPD": spreadsheet.stratpd,
    "STRATIMPACT": spreadsheet.stratimpact,
    "STRATPDBY": spreadsheet.stratpdby,
    "STRATPD2": spreadsheet.stratpd2,
    "STRATCOMPARE": spreadsheet.stratcompare,
}


def _unpack_all(args: dict[str, Any]) -> dict[str, Any]:
    # Any range argument comes packed (the data, a range of names to exclude).
    try:
        return {name: unpack_block(value) for name, value in args.items()}
    except _Malformed:
        raise
    except (KeyError, TypeError, ValueError, AttributeError):  # binascii.Error is a ValueError
        raise _Malformed(f"a packed range is damaged; {_REBUILD}") from None


def _bind(function: Callable[..., Any], data: Any, args: dict[str, Any]) -> None:
    """Refuse arguments the function does not take before calling it (a TypeError there
    would read as a bug of stratpd-xl, when it is an extension of another version)."""
    try:
        inspect.signature(function).bind(data, **args)
    except TypeError:
        names = ", ".join(sorted(args))
        raise _Malformed(f"the request's arguments ({names}) do not fit; {_REBUILD}") from None


def _formula(function: Callable[..., Any]) -> Callable[[dict[str, Any]], list[list[Any]]]:
    def answer(args: dict[str, Any]) -> list[list[Any]]:
        args = _unpack_all(args)
        data = args.pop("data", None)
        _bind(function, data, args)
        out = function(data, **args)
        return cells_for_calc(out.cells if isinstance(out, spreadsheet.FormulaResult) else out)

    return answer


def _report(args: dict[str, Any]) -> dict[str, Any]:
    args = _unpack_all(args)
    values = args.pop("values", None)
    _bind(report.plan, values, args)
    return report.plan(values, **args)


OPERATIONS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "PING": lambda args: "pong",
    "REPORT": _report,
    **{name: _formula(function) for name, function in FORMULAS.items()},
}


def _too_deep(value: Any) -> bool:
    """True when containers nest more than ``MAX_DEPTH`` levels (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, dict | list):
                if depth >= MAX_DEPTH:
                    return True
                stack.append((child, depth + 1))
    return False


def _request_id(request: Any) -> int | None:
    """The id to echo: a whole number, or None (``NaN``, text or an object is not echoed)."""
    value = request.get("id") if isinstance(request, dict) else None
    return value if type(value) is int and abs(value) < 2**53 else None


def _answer(request: Any) -> dict[str, Any]:
    ident = _request_id(request)
    if not isinstance(request, dict) or request.get("op") not in OPERATIONS:
        return {"id": ident, "error": f"stratpd-xl: unknown request; {_REBUILD}"}
    args = request.get("args") or {}
    if not isinstance(args, dict):
        return {"id": ident, "error": f"stratpd-xl: malformed request; {_REBUILD}"}
    try:
        return {"id": ident, "result": OPERATIONS[request["op"]](args)}
    except _Malformed as exc:
        return {"id": ident, "error": f"stratpd-xl: {exc}"}
    except Exception as exc:  # noqa: BLE001 - one sentence back, the worker keeps serving
        # The extension puts its own "StratPD: " in front.
        text = error_text(exc, prefix="StratPD").removeprefix("StratPD: ")
        return {"id": ident, "error": text}


def _parse(line: bytes) -> dict[str, Any]:
    """The answer to one request line, whatever it holds."""
    try:
        request = json.loads(line)
    except RecursionError:
        return {"id": None, "error": f"stratpd-xl: a request nested too deeply; {_REBUILD}"}
    except ValueError:  # also text that is not UTF-8
        return {"id": None, "error": f"stratpd-xl: unreadable request; {_REBUILD}"}
    if isinstance(request, dict | list) and _too_deep(request):
        return {"id": _request_id(request),
                "error": f"stratpd-xl: a request nested too deeply; {_REBUILD}"}
    return _answer(request)


def _encoded(message: dict[str, Any]) -> bytes:
    """One line of strict JSON in UTF-8 (no NaN; a lone surrogate goes as U+FFFD)."""
    try:
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:  # a value JSON cannot carry: a bug of the answer
        text = json.dumps({"id": message.get("id"), "error": error_text(exc, prefix="StratPD")
                           .removeprefix("StratPD: ")}, ensure_ascii=False)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        # Pairs of surrogates become their character, a lone one U+FFFD.
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return text.encode("utf-8") + b"\n"


def _too_long(head: bytes) -> dict[str, Any]:
    """The answer to a line over ``MAX_REQUEST_BYTES``, under its id when its head has one."""
    found = _HEAD_ID.match(head[:100])
    return {"id": int(found.group(1)) if found else None,
            "error": f"stratpd-xl: the range is over {MAX_REQUEST_BYTES // 1024**2} MB of "
                     "cells, more than a formula takes; save it as a file and run "
                     "`stratpd-xl` on the file"}


def _read_lines(requests: BinaryIO) -> Iterator[tuple[bytes, bool]]:
    """Each request line and whether it is whole: a line over ``MAX_REQUEST_BYTES`` is read
    on to its end 1 MB at a time and dropped, keeping its first megabyte only."""
    while True:
        pieces: list[bytes] = []
        size = 0
        while piece := requests.readline(1 << 20):
            size += len(piece)
            if size <= MAX_REQUEST_BYTES or not pieces:
                pieces.append(piece)
            elif len(pieces) > 1:
                del pieces[1:]  # past the limit: the head is all that is kept
            if piece.endswith(b"\n"):
                break
        if not pieces:
            return
        yield b"".join(pieces), size <= MAX_REQUEST_BYTES


def serve(requests: BinaryIO, answers: BinaryIO) -> None:
    """Answer requests line by line until ``requests`` ends."""

    def send(message: dict[str, Any]) -> None:
        answers.write(_encoded(message))
        answers.flush()

    send({"hello": "stratpd-xl", "protocol": calc_client.PROTOCOL, "version": __version__,
          "watch": environment_stamps()})
    for line, whole in _read_lines(requests):
        if not whole:
            send(_too_long(line))
            continue
        if not line.strip():
            continue
        try:
            send(_parse(line))
        except Exception as exc:  # noqa: BLE001 - whatever happened, the worker keeps serving
            send({"id": None, "error": error_text(exc, prefix="StratPD")
                  .removeprefix("StratPD: ")})


def environment_stamps() -> dict[str, int]:
    """Files whose change means this worker is out of date, with their modification times:
    the interpreter, stratpd-xl's package and the folder its installed packages live in (pip
    adds and removes entries there on an upgrade or uninstall).  The client compares them
    before each call and starts a fresh worker when one changed; a module loaded lazily from a
    replaced environment would otherwise fail in the middle of a formula."""
    package = os.path.dirname(os.path.abspath(spreadsheet.__file__))
    paths = [sys.executable, os.path.join(package, "__init__.py"), os.path.dirname(package)]
    stamps = {}
    for path in paths:
        try:
            stamps[path] = os.stat(path).st_mtime_ns
        except OSError:
            continue
    return stamps


#: Seconds between checks that this worker is still its LibreOffice's one.
CLAIM_CHECK = 2.0


def claim(folder: str, *, check: float = CLAIM_CHECK) -> str | None:
    """Be the only worker of the LibreOffice that started this one.

    Writes this process's id to ``calc-worker-<parent id>.pid`` in ``folder`` and leaves as
    soon as another worker of the same parent wrote its own there: the extension reinstalled
    while LibreOffice runs starts a new worker, and the old one must not stay (about 0.5 GB).
    Returns the file, or None when it cannot be written.
    """
    path = os.path.join(folder, f"calc-worker-{os.getppid()}.pid")
    mine = str(os.getpid())
    try:
        os.makedirs(folder, exist_ok=True)
        with open(path, "w", encoding="ascii") as f:
            f.write(mine)
    except OSError:
        return None

    def watch() -> None:
        while True:
            time.sleep(check)
            try:
                with open(path, encoding="ascii") as f:
                    owner = f.read().strip()
            except OSError:
                continue  # removed or unreadable for a moment: keep serving
            if owner and owner != mine:
                print(f"stratpd-xl worker {mine}: replaced by worker {owner}", file=sys.stderr,
                      flush=True)
                os._exit(0)

    threading.Thread(target=watch, daemon=True, name="stratpd-xl-claim").start()
    return path


def main() -> None:
    """Serve stdin/stdout; the real stdout is kept for answers, prints go to stderr."""
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    folder = os.environ.get(calc_client.FOLDER_VARIABLE)
    if folder:
        claim(folder)
    spreadsheet.start_warm_up()
    serve(sys.stdin.buffer, answers)


if __name__ == "__main__":
    main()
