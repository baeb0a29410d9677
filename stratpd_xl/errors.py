"""The one exception type that every front end turns into cell text or an exit code."""

from __future__ import annotations

__all__ = ["StratPDInputError", "StratPDNote", "error_text", "is_interrupt"]


class StratPDInputError(ValueError):
    """Bad input from the user, with a one-sentence message that names the fix.

    Raised by the engine (unknown column, too few rows, bad parameter) and by the sheet
    layer (unreadable cells, ambiguous headers).  Adapters show ``str(exc)`` to the user
    as it is: in a cell, on stderr with exit code 2, or in Excel's status bar.
    """


class StratPDNote(UserWarning):  # noqa: N818 - a note, not an error
    """Something the user should read (a front end shows it as a note); no error.

    Raised with :func:`warnings.warn` where a library's own warning arises, in words the
    user can act on; the CLI prints it as ``note: ...``.
    """


def is_interrupt(exc: BaseException) -> bool:
    """True for Ctrl+C, also when it surfaces wrapped in another exception.

    Ctrl+C inside compiled code (numba, numpy) can come out as ``SystemError: ... returned a
    result with an exception set`` whose ``__context__``/``__cause__`` is the
    ``KeyboardInterrupt``; the user cancelled, it is no bug.

    Parameters
    ----------
    exc
        The exception caught by a front end.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def error_text(exc: BaseException, *, prefix: str = "STRATPD") -> str:
    """One line for a cell, status bar or stderr; never a traceback.

    Parameters
    ----------
    exc
        The exception caught by a front end.
    prefix
        Start of the text, so a cell shows where the message comes from.

    Returns
    -------
    str
        ``"STRATPD: <sentence>"`` for :class:`StratPDInputError` (the sentence names the fix);
        for anything else a short sentence saying it is a bug to report, with the exception
        type and the first line of its message so the report is useful.
    """
    if isinstance(exc, StratPDInputError):
        return f"{prefix}: {_one_line(str(exc))}"
    if is_interrupt(exc):
        return f"{prefix}: cancelled"
    if isinstance(exc, MemoryError):
        return f"{prefix}: out of memory; try fewer rows or columns"
    detail = _one_line(str(exc))
    detail = detail if len(detail) <= 120 else detail[:117] + "..."
    what = type(exc).__name__ + (f": {detail}" if detail else "")
    return f"{prefix}: internal error ({what}); this is a bug in stratpd-xl, please report it"


def _one_line(text: str) -> str:
    return " ".join(text.split())
