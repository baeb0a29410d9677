"""The one exception type that every front end turns into cell text or an exit code."""

from __future__ import annotations


class StratPDInputError(ValueError):
    """Bad input from the user, with a one-sentence message that names the fix.

    Raised by the engine (unknown column, too few rows, bad parameter) and by the sheet
    layer (unreadable cells, ambiguous headers).  Adapters show ``str(exc)`` to the user
    as it is: in a cell, on stderr with exit code 2, or in Excel's status bar.
    """
