"""Where a formula's chart picture goes, what it is called, and how it is replaced.

A ``=STRATPD(...)`` formula spills its table down and right from the formula cell; its picture
sits to the right of the table with one empty column between, top-aligned with the formula.
The picture's name comes from the formula cell ("StratPD B2"), so each formula owns one picture
and a recalculation replaces that picture instead of stacking a new one on top.

The functions take xlwings-like objects (a Range with ``sheet``, ``address``, ``offset``,
``left``, ``top``; a sheet with ``pictures``) and nothing else, so tests drive them with a
small recording fake and no Excel.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
from typing import Any

#: Prefix of every picture this add-in places; also marks them as ours in the Selection pane.
NAME_PREFIX = "StratPD"
#: Empty columns between the spilled table and the picture.
GAP_COLUMNS = 1
# Names this module gives ("StratPD B2"); the ribbon's pictures ("StratPD curve x") never match.
_CELL_NAME = re.compile(rf"{NAME_PREFIX} [A-Z]{{1,3}}[0-9]{{1,7}}")

# Digest of the PNG last placed under each (book, sheet, picture name): an unchanged chart is
# not re-inserted on every recalculation, which would flicker and grow Excel's undo history.
_placed: dict[tuple[str, str, str], str] = {}
_placed_lock = threading.Lock()


def top_left_cell(address: str) -> str:
    """``"$B$2:$D$40"`` -> ``"B2"``: the cell a formula is written in."""
    return address.split(":")[0].replace("$", "").split("!")[-1]


def picture_name(address: str) -> str:
    """Stable picture name for the formula at ``address``: ``"StratPD B2"``."""
    return f"{NAME_PREFIX} {top_left_cell(address)}"


def _sheet_key(caller: Any, name: str) -> tuple[str, str, str]:
    sheet = caller.sheet
    book = getattr(getattr(sheet, "book", None), "name", "")
    return (str(book), str(sheet.name), name)


def place_picture(caller: Any, png: bytes, table_columns: int) -> str:
    """Put ``png`` beside the table spilled by the formula in ``caller``; return its name.

    A picture of the same name is updated in place (xlwings keeps its position and size, so
    a picture the user moved or resized stays where they put it), unless the table grew
    under it, in which case it moves right of the table again.  An identical PNG already
    placed under that name is left alone.  When the formula moved because rows or columns
    were inserted, the picture Excel moved along with it is renamed and reused.

    Parameters
    ----------
    caller : xlwings.Range
        The formula's cell (xlwings passes it to a UDF parameter named ``caller``).
    png : bytes
        The picture, e.g. from :func:`stratpd_xl.presentation.charts.figure_png`.
    table_columns : int
        Width of the spilled table, so the picture starts right of it.

    Returns
    -------
    str
        The picture's name.
    """
    name = picture_name(caller.address)
    anchor = caller.offset(0, table_columns + GAP_COLUMNS)
    pictures = caller.sheet.pictures
    key = _sheet_key(caller, name)
    digest = hashlib.sha256(png).hexdigest()
    exists = name in pictures
    if not exists:
        exists = _adopt_moved_picture(pictures, name, anchor)
    with _placed_lock:
        if exists and _placed.get(key) == digest:
            picture = pictures[name]
            if picture.left < anchor.left:  # the table grew under the picture
                picture.left = anchor.left
            return name

    fd, path = tempfile.mkstemp(prefix="stratpd-", suffix=".png")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(png)
        if exists:
            picture = pictures[name]
            picture = picture.update(path) or picture
            if picture.left < anchor.left:
                picture.left = anchor.left
        else:
            pictures.add(path, name=name, left=anchor.left, top=anchor.top)
    finally:
        try:
            os.unlink(path)
        except OSError:  # Excel on Windows may still hold the file; the temp dir is cleaned
            pass
    with _placed_lock:
        _placed[key] = digest
    return name


def _adopt_moved_picture(pictures: Any, name: str, anchor: Any) -> bool:
    """Rename the picture of a formula that moved (rows or columns inserted before it).

    Excel moves the formula and its picture together, so the picture still named after the
    old cell sits exactly where the new one would go; taking it over avoids an orphan copy.
    """
    for picture in pictures:
        old = picture.name
        if old == name or not _CELL_NAME.fullmatch(old):
            continue
        if abs(picture.left - anchor.left) < 0.5 and abs(picture.top - anchor.top) < 0.5:
            picture.name = name
            return True
    return False


def remove_picture(caller: Any) -> bool:
    """Delete the picture of the formula in ``caller`` if there is one (chart off, or error).

    Returns
    -------
    bool
        True when a picture was deleted.
    """
    name = picture_name(caller.address)
    pictures = caller.sheet.pictures
    with _placed_lock:
        _placed.pop(_sheet_key(caller, name), None)
    if name not in pictures:
        return False
    pictures[name].delete()
    return True
