"""The .ods row scan and the .xlsx reference scan, each in one compiled pass over the bytes.

:func:`._workbook_scan._ods_rows` measures a stretch of whole rows with a dozen numpy
passes; on a 200,000-row sheet (290 MB of content.xml) they take longer than python-calamine's
own read.  :func:`ods_rows` walks the same bytes once, tag by tag, and handles only the shape
spreadsheet programs write: rows holding cells, cells holding ``text:`` elements, repeats
written ``number-...-repeated="digits"``.  Anything else it declines (``None``) and the numpy
scan decides, so the two agree by construction wherever this one answers (the tests check it
on random and mangled XML).  Without numba, or with ``STRATPD_XL_BACKEND=numpy``, it always
declines.

:func:`xlsx_refs` does the same for :func:`._workbook_scan._xlsx_refs` (ten numpy
passes over each megabyte of sheet XML; 0.6 s of a 200,000-row workbook's 73 MB beyond
inflating it): it declines any ``=`` with white space beside it and namespaced tags, and
answers everything else exactly as the numpy scan does.
"""

from __future__ import annotations

import numpy as np

from .. import _backend
from .._backend import njit

# Tag names are compared 8 bytes at a time with the numpy scan's own constants: the two scans
# must read the same bytes as the same names.
from ._scan_words import (
    _BLE_CELL,
    _BLE_ROW,
    _HUGE,
    _LETTER,
    _LOW5,
    _LOW7,
    _NAME_END,
    _SPACE,
    _TABLE_CO,
    _TABLE_TA,
    _TEXT_NS,
    _VERED_TA,
)
from ._scan_words import _ODS_EMPTY_TAG as _EMPTY_TAG

__all__ = ["ods_rows", "xlsx_refs"]


_REPEATED = np.frombuffer(b"repeated", np.uint8)
_ROWS_PREFIX = np.frombuffer(b"number-rows-", np.uint8)
_COLUMNS_PREFIX = np.frombuffer(b"number-columns-", np.uint8)
_VALUE_TYPE = np.frombuffer(b"value-type", np.uint8)
_FORMULA = np.frombuffer(b"formula", np.uint8)
_LAST_CELL = np.frombuffer(b"/></table:table-row>", np.uint8)
_PAD = 32  # zero bytes after the text, so a name's 8-byte words never read past the end

_CELLS_CAP = 2**24  # as _workbook_scan._CELLS_CAP
_NONE, _DECLINE = -1, -2  # from _repeat: no repeat here / an unusual one


@njit
def _at(a: np.ndarray, i: int, word: np.ndarray) -> bool:
    if i < 0 or i + len(word) > len(a):
        return False
    for k in range(len(word)):
        if a[i + k] != word[k]:
            return False
    return True


@njit
def _find(a: np.ndarray, lo: int, hi: int, word: np.ndarray) -> int:
    """Where ``word`` first lies wholly inside ``a[lo:hi]``, or -1."""
    for i in range(lo, hi - len(word) + 1):
        if a[i] == word[0] and _at(a, i, word):
            return i
    return -1


@njit
def _names_d(a: np.ndarray, eq: int) -> bool:
    """Whether the "=" at ``eq`` follows a name ending in "d" (as in "...-repeated =")."""
    k = eq - 1
    while k > 0 and (a[k] == 32 or 9 <= a[k] <= 13):  # the regex's \s
        k -= 1
    return a[k] == 100


@njit
def _repeat(a: np.ndarray, lt: int, gt: int, prefix: np.ndarray, last_cell_rule: bool) -> int:
    """The repeat count of the tag ``a[lt:gt+1]``: ``_NONE``, ``_DECLINE`` or the count.

    Answers only for the one form the numpy scan's pattern reads without doubt:
    ``<prefix>repeated="<1-12 digits>"``, once in the tag.  A self-closed cell whose repeat
    ends the row counts as one column there (``last_cell_rule``), as in the numpy scan.
    """
    hit = _find(a, lt, gt, _REPEATED)
    if hit < 0:
        return _NONE
    if _find(a, hit + 1, gt, _REPEATED) >= 0 or not _at(a, hit - len(prefix), prefix):
        return _DECLINE
    i = hit + len(_REPEATED)
    if i + 1 >= gt or a[i] != 61 or a[i + 1] != 34:  # ="
        return _DECLINE
    i += 2
    value = digits = 0
    while i < gt and 48 <= a[i] <= 57:
        value = value * 10 + (a[i] - 48)
        digits += 1
        i += 1
    if digits == 0 or digits > 12 or i >= gt or a[i] != 34:
        return _DECLINE
    if last_cell_rule and _at(a, i + 1, _LAST_CELL):
        return _NONE
    return value


@njit
def _ods_rows(a: np.ndarray, words: np.ndarray) -> tuple[bool, np.ndarray, np.ndarray, int]:
    """(answered, rows each row element stands for, used columns of each, filled cells).

    ``a`` is the text followed by ``_PAD`` zero bytes; ``words[i]`` the 8 bytes from ``i``.
    Every "<" must be closed by a ">" before the next "<", with an even number of double
    quotes and no single quote in between: the numpy scan's conditions for trusting tag
    positions.  Bytes between tags are not looked at.
    """
    n = len(a) - _PAD
    cap = n // 17 + 1  # "<table:table-row>" is 17 bytes
    spans = np.ones(cap, np.int64)
    used = np.zeros(cap, np.int64)
    no = (False, spans[:0], used[:0], 0)
    rows = filled = col = row_used = 0
    row_span = 1
    in_row = False
    i = 0
    while i < n:
        if a[i] != 60:  # <
            # Text that could start the numpy scan's repeat pattern, which may then swallow
            # the next tags' attributes up to a quote: leave such text to that scan.
            if a[i] == 61 and _names_d(a, i):
                return no
            i += 1
            continue
        lt, gt = i, i + 1
        quotes = 0
        assigns_d = False  # an attribute whose name ends in "d": maybe a repeat
        while gt < n:
            c = a[gt]
            if c == 62:  # >
                break
            if c == 60 or c == 39:  # < or '
                return no
            if c == 34:
                quotes += 1
            elif c == 61:  # =
                assigns_d |= _names_d(a, gt)
            gt += 1
        if gt >= n or quotes & 1:
            return no
        i = gt + 1
        close = a[lt + 1] == 47
        name = lt + 2 if close else lt + 1
        shut = a[gt - 1] == 47  # self-closed
        head = words[name]
        if assigns_d and (close or (head & _LOW5) == _TEXT_NS):
            return no  # a repeat pattern where the numpy scan does not count it
        if (head & _LOW5) == _TEXT_NS:
            continue
        if head == _TABLE_TA:
            tail = words[name + 8]
            is_row = (tail & _LOW7) == _BLE_ROW and _NAME_END[a[name + 15]]
            is_cell = tail == _BLE_CELL and _NAME_END[a[name + 16]]
        elif head == _TABLE_CO:
            is_row = False
            is_cell = (
                words[name + 8] == _VERED_TA
                and words[name + 16] == _BLE_CELL
                and _NAME_END[a[name + 24]]
            )
        else:
            return no
        if is_row:
            if close:
                if not in_row:
                    return no
                spans[rows] = row_span
                used[rows] = row_used
                rows += 1
                in_row = False
                continue
            if in_row or shut:
                return no
            in_row = True
            col = row_used = 0
            repeat = _repeat(a, lt, gt, _ROWS_PREFIX, False) if assigns_d else _NONE
            if repeat == _DECLINE:
                return no
            row_span = 1 if repeat == _NONE else repeat
            continue
        if not is_cell:
            return no
        if close:
            continue
        if not in_row:
            return no
        repeat = _repeat(a, lt, gt, _COLUMNS_PREFIX, shut) if assigns_d else _NONE
        if repeat == _DECLINE:
            return no
        span = 1 if repeat == _NONE else repeat
        col += span
        if not shut:
            # Repeats count, capped as the numpy scan caps them (no 64-bit overflow).
            filled = min(filled + min(span, _CELLS_CAP) * min(row_span, _CELLS_CAP), 2**60)
            row_used = col
        elif (
            gt - lt + 1 > _EMPTY_TAG
            or _find(a, lt, gt + 1, _VALUE_TYPE) >= 0
            or _find(a, lt, gt + 1, _FORMULA) >= 0
        ):
            return no  # a value in a self-closed cell: rare, the numpy scan looks closer
    if in_row or rows == 0:
        return no
    return True, spans[:rows].copy(), used[:rows].copy(), filled


def ods_rows(chunk: bytes) -> tuple[np.ndarray, np.ndarray, int] | None:
    """(rows each row element stands for, used columns of each, filled cells) of a stretch of
    whole rows, as :func:`._workbook_scan._ods_rows` gives it; ``None`` when this scan
    leaves the stretch to that one (numba missing, off or still compiling, error cells,
    anything unusual)."""
    if not SCAN.use_numba(_backend.WAIT_ROWS):  # see SCAN
        return None
    if chunk.rfind(b'value-type="error"') >= 0:  # error cells: their texts are read tag by tag
        return None
    padded = chunk + bytes(_PAD)
    a = np.frombuffer(padded, np.uint8)
    words = np.ndarray((len(padded) - 7,), dtype="<u8", buffer=padded, strides=(1,))
    answered, spans, used, filled = _ods_rows(a, words)
    return (spans, used, int(filled)) if answered else None


# --------------------------------------------------------------------------- .xlsx

_XLSX_PAD = 32  # zero bytes after the text: a reference's 4 letters and 11 digits stay inside


@njit
def _xlsx_refs(
    a: np.ndarray, n: int
) -> tuple[bool, int, int, int, int, np.ndarray, np.ndarray]:
    """(answered, largest column, largest row, r attributes with a column, without one, where
    cell tags start, where row tags start) of ``a[:n]``, as the numpy scan reads them.

    Declines (answered False) wherever the numpy scan might look closer: an ``=`` with white
    space on either side, or a namespaced ``c``/``row`` tag.
    """
    cells = np.empty(n // 3 + 1, np.int64)  # a cell tag is at least "<c>" long
    rows = np.empty(n // 5 + 1, np.int64)
    no = (False, 0, 0, 0, 0, cells[:0], rows[:0])
    width = height = with_column = refs = n_cells = n_rows = 0
    for i in range(n):
        byte = a[i]
        if byte == 61:  # "="
            if i < 2:
                continue
            if _SPACE[a[i - 1]] or _SPACE[a[i + 1]]:
                return no
            if a[i - 1] != 114 or not _SPACE[a[i - 2]] or (a[i + 1] != 34 and a[i + 1] != 39):
                continue
            p = i + 2  # r="...: up to four letters, then up to eleven digits
            letters = col = 0
            while letters < 4 and _LETTER[a[p + letters]] > 0:
                col = col * 26 + _LETTER[a[p + letters]]
                letters += 1
            if letters > 3:
                col = _HUGE
            q = p + letters
            row = digits = 0
            while digits < 11 and 48 <= a[q + digits] <= 57:
                row = row * 10 + (a[q + digits] - 48)
                digits += 1
            width = max(width, col)
            height = max(height, min(row, _HUGE))
            refs += 1
            if letters > 0:
                with_column += 1
        elif byte == 60 or byte == 58:  # "<", or ":" of a namespaced name
            if a[i + 1] == 99 and _NAME_END[a[i + 2]]:
                if byte == 58:
                    return no
                cells[n_cells] = i + 1
                n_cells += 1
            elif a[i + 1] == 114 and a[i + 2] == 111 and a[i + 3] == 119 and _NAME_END[a[i + 4]]:
                if byte == 58:
                    return no
                rows[n_rows] = i + 1
                n_rows += 1
    return (True, width, height, with_column, refs - with_column,
            cells[:n_cells].copy(), rows[:n_rows].copy())


def xlsx_refs(buffer: bytes) -> tuple[int, int, int, int, np.ndarray, np.ndarray] | None:
    """:func:`stratpd_xl.input._workbook_scan._xlsx_refs` of a stretch of sheet XML in one pass, or
    ``None`` when this scan leaves it to that one (numba missing, off or still compiling,
    anything unusual)."""
    if not SCAN.use_numba(_backend.WAIT_ROWS):  # see SCAN
        return None
    a = np.frombuffer(buffer + bytes(_XLSX_PAD), np.uint8)
    answered, width, height, with_column, without, cells, rows = _xlsx_refs(a, len(buffer))
    if not answered:
        return None
    return int(width), int(height), int(with_column), int(without), cells, rows


# --------------------------------------------------------------------------- compiling

def _compile() -> None:
    # Both scans once, on the types real stretches give them (bytes, so the same arrays).
    ods_rows(b'<table:table-row><table:table-cell office:value-type="float" '
             b'office:value="1"><text:p>1</text:p></table:table-cell></table:table-row>')
    _backend.checkpoint()
    xlsx_refs(b'<row r="1"><c r="A1"><v>1</v></c></row>')


#: The two scans' kernels.  The reader asks for them only on files of 4 MB and more
#: (``_workbook_scan.COMPILED_SCAN_FROM``), where they win back their compile: a scan waits
#: for them as a large analysis does, unless :func:`stratpd_xl.workflow.warm_up` has
#: compiled them already.
SCAN = _backend.Kernels("scan", _compile, shared=True)
