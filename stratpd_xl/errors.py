"""The one exception type that every front end turns into cell text or an exit code."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import NoReturn

__all__ = ["StratPDInputError", "StratPDNote", "argument", "error_text", "exit_process",
           "is_interrupt"]

# A setting named in a message: its Python name between two NULs (no typed text has them).
_MARKED = re.compile("\x00([A-Za-z_][A-Za-z0-9_]*)\x00")
#: How ``str(exc)`` words a setting: the command line's and Python's ways to set it where they
#: differ from the bare name.
_DEFAULT_WORDS = {"positive": "--positive (positive= in Python)",
                  "classes": "--classes (classes= in Python)"}


def argument(name: str) -> str:
    """The place in a message that names the setting ``name`` (its Python name, ``n_trials``).

    Each front end words it its own way when it shows the message: ``trials (argument 5 of
    STRATPD)`` in a formula (the name and place of the signature the user types into), ``the
    name StratPD_trials`` for *Analyse selection*, the Python name elsewhere.
    """
    return f"\x00{name}\x00"


class StratPDInputError(ValueError):
    """Bad input from the user, with a one-sentence message that names the fix.

    Raised by the engine (unknown column, too few rows, bad parameter) and by the sheet
    layer (unreadable cells, ambiguous headers).  Adapters show ``str(exc)`` to the user
    as it is: in a cell, on stderr with exit code 2, or in Excel's status bar.  A setting
    the message names is marked with :func:`argument`, so each front end can word it
    (:meth:`worded`); ``str(exc)`` gives the Python name.
    """

    def __str__(self) -> str:
        return self.worded(None)

    @property
    def raw(self) -> str:
        """The message with its settings still marked (to nest it in another message)."""
        return str(self.args[0]) if self.args else ""

    @property
    def names_settings(self) -> bool:
        """Whether the message names a setting (marked with :func:`argument`)."""
        return _MARKED.search(self.raw) is not None

    def worded(self, words: Callable[[str], str] | None) -> str:
        """The message with each setting worded by ``words(python_name)`` (default: the
        Python name, or how the command line and Python set it)."""
        if words is None:
            return _MARKED.sub(lambda m: _DEFAULT_WORDS.get(m[1], m[1]), self.raw)
        return _MARKED.sub(lambda m: words(m[1]), self.raw)


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


def exit_process(code: int) -> NoReturn:
    """End a ``python -m`` process with the command's exit code, 130 after Ctrl+C included.

    CPython remembers a ``KeyboardInterrupt`` that left code run by ``exec()`` or ``eval()``
    of a string - ``collections.namedtuple``, ``dataclasses`` and scipy's lazily loaded
    modules run such code all through a command - even when the command caught it further
    up and said "cancelled".  ``python -m`` then ends the process by SIGINT (exit status -2)
    instead of with 130.  Any ``exec()`` of a string starts by forgetting that record.

    Parameters
    ----------
    code
        The exit code, as ``stratpd_xl.cli.main`` returns it.
    """
    exec("")  # forgets an interrupt that was handled (CPython 3.8 and later)
    sys.exit(code)


def error_text(exc: BaseException, *, prefix: str = "STRATPD",
               argument_words: Callable[[str], str] | None = None) -> str:
    """One line for a cell, status bar or stderr; never a traceback.

    Parameters
    ----------
    exc
        The exception caught by a front end.
    prefix
        Start of the text, so a cell shows where the message comes from.
    argument_words
        How this front end names a setting (``argument_words("n_trials")`` gives
        ``"trials (argument 5 of STRATPD)"`` in a formula); see
        :meth:`StratPDInputError.worded`.

    Returns
    -------
    str
        ``"STRATPD: <sentence>"`` for :class:`StratPDInputError` (the sentence names the fix);
        for anything else a short sentence saying it is a bug to report, with the exception
        type and the first line of its message so the report is useful.
    """
    if isinstance(exc, StratPDInputError):
        return f"{prefix}: {_one_line(exc.worded(argument_words))}"
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
