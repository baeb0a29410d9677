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
"""

from __future__ import annotations

import base64
import json
import os
import sys
from collections.abc import Callable
from typing import Any, BinaryIO

import numpy as np

from .. import __version__, spreadsheet
from ..errors import error_text
from . import calc_client, report
from .report import cells_for_calc

__all__ = ["main", "serve"]


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
            raise ValueError("a packed column has the wrong length")
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


def _formula(function: Callable[..., Any]) -> Callable[[dict[str, Any]], list[list[Any]]]:
    def answer(args: dict[str, Any]) -> list[list[Any]]:
        # Any range argument comes packed (the data, a range of names to exclude).
        args = {name: unpack_block(value) for name, value in args.items()}
        out = function(args.pop("data", None), **args)
        return cells_for_calc(out.cells if isinstance(out, spreadsheet.FormulaResult) else out)

    return answer


def _report(args: dict[str, Any]) -> dict[str, Any]:
    values = unpack_block(args.pop("values", None))
    return report.plan(values, **args)


OPERATIONS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "PING": lambda args: "pong",
    "REPORT": _report,
    **{name: _formula(function) for name, function in FORMULAS.items()},
}


def _answer(request: Any) -> dict[str, Any]:
    if not isinstance(request, dict) or request.get("op") not in OPERATIONS:
        return {"id": None, "error": "stratpd-xl: unknown request; rebuild the extension"}
    args = request.get("args") or {}
    try:
        return {"id": request.get("id"), "result": OPERATIONS[request["op"]](args)}
    except Exception as exc:  # noqa: BLE001 - one sentence back, the worker keeps serving
        # The extension puts its own "StratPD: " in front.
        text = error_text(exc, prefix="StratPD").removeprefix("StratPD: ")
        return {"id": request.get("id"), "error": text}


def serve(requests: BinaryIO, answers: BinaryIO) -> None:
    """Answer requests line by line until ``requests`` ends."""

    def send(message: dict[str, Any]) -> None:
        answers.write(json.dumps(message, ensure_ascii=False, separators=(",", ":"))
                      .encode("utf-8") + b"\n")
        answers.flush()

    send({"hello": "stratpd-xl", "protocol": calc_client.PROTOCOL, "version": __version__})
    for line in requests:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except ValueError:
            send({"id": None, "error": "stratpd-xl: unreadable request; rebuild the extension"})
            continue
        send(_answer(request))


def main() -> None:
    """Serve stdin/stdout; the real stdout is kept for answers, prints go to stderr."""
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    spreadsheet.start_warm_up()
    serve(sys.stdin.buffer, answers)


if __name__ == "__main__":
    main()
