"""Measure .xlsx, .xlsb and .ods sheets before python-calamine opens the workbook.

calamine builds a sheet's whole grid, from its first to its last cell, when it reads it (an
.ods: every table, as soon as the file is opened), and trusts the coordinates, repeat counts
and record sizes it finds.  A few kilobytes can so ask for gigabytes.  The scans here read the
same parts calamine reads, as bytes and bounded (no XML tree, which would build the very grid
to avoid), and report each sheet's extent, real cells and error cells, so that
:mod:`stratpd_xl.input.files` can refuse a padded or damaged workbook in one sentence first.  The
.xls counterpart is :mod:`stratpd_xl.input._xls_scan`.
"""

from __future__ import annotations

import html
import queue
import re
import struct
import threading
import zipfile
from collections.abc import Callable, Iterator
from contextlib import closing
from typing import Any, NamedTuple
from xml.parsers.expat import ParserCreate

import numpy as np

# The byte tables and tag words the compiled scans share with this one.
from ._scan_words import (
    _BLE_CELL,
    _BLE_ROW,
    _HUGE,
    _LETTER,
    _LOW5,
    _LOW7,
    _NAME_END,
    _ODS_EMPTY_TAG,
    _SPACE,
    _TABLE_CO,
    _TABLE_TA,
    _TEXT_NS,
    _VERED_TA,
)

__all__ = [
    "Errors", "ods_extents", "xlsb_extent", "xlsb_members", "xlsx_extent", "xlsx_members",
    "xlsx_shared_strings",
]


def _stream_chunks(handle: Any, *, close: bytes, size: int = 2**20, longest: int = 0) -> Any:
    """An XML stream in buffers of about ``size`` bytes, each ending after the last ``close`` tag.

    So a whole cell, and usually a whole row, is in one buffer.  A buffer without ``close``
    grows by ``size`` up to ``longest`` bytes before it is cut after its last tag, so rows
    longer than ``size`` stay whole.
    """
    tail = b""
    while True:
        chunk = handle.read(size)
        if not chunk:
            break
        buffer = tail + chunk
        cut = buffer.rfind(close)
        if cut < 0 and len(buffer) < longest:
            tail = buffer
            continue
        cut = cut + len(close) if cut >= 0 else buffer.rfind(b">") + 1
        yield buffer[:cut]
        tail = buffer[cut:]
    if tail:
        yield tail


_END = object()


def _read_ahead(chunks: Iterator[bytes], depth: int = 8) -> Iterator[bytes]:
    """``chunks``, produced by a second thread while the caller scans the previous ones.

    Inflating content.xml and the compiled scan both release the GIL, so on two cores the
    read costs little beyond the scan.  At most ``depth`` chunks wait; errors of the reading
    reach the caller as they would have.  Close the generator (``contextlib.closing``) before
    the stream it reads: that stops and joins the thread.  Serial where threads cannot start.
    """
    from .._backend import can_start_threads

    if not can_start_threads():
        yield from chunks
        return
    box: queue.Queue[Any] = queue.Queue(depth)
    stop = threading.Event()

    def hand_over(item: Any) -> bool:
        while not stop.is_set():
            try:
                box.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for chunk in chunks:
                if not hand_over(chunk):
                    return
        except BaseException as exc:  # noqa: BLE001 - re-raised in the scanning thread
            hand_over(exc)
        else:
            hand_over(_END)

    worker = threading.Thread(target=produce, name="stratpd-xl-read-ahead", daemon=True)
    worker.start()
    try:
        while (item := box.get()) is not _END:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        worker.join()


# Only coordinates and error cells matter, so the raw XML is read as bytes and costs no tree:
# the XML parsers would build the whole padded grid we are trying to avoid.
_XLSX_REF = re.compile(rb'\br="([A-Z]{0,3})([0-9]{1,8})"')
_XLSX_VALUE = re.compile(rb"<(?:\w+:)?v>([^<]*)</(?:\w+:)?v>")

#: Error cells as (row, column) -> text ("#DIV/0!"): calamine hands them over as blanks, and
#: the sheet layer should say how many errors it treated as missing.
Errors = dict[tuple[int, int], str]


_XLSX_CELL = re.compile(rb"<(?:\w+:)?c(?=[\s/>])")
_XLSX_ROW = re.compile(rb"<(?:\w+:)?row(?=[\s/>])")
#: Any attribute named r, as calamine reads it: letters of either case, then digits.
_XLSX_ANY_REF = re.compile(rb"""\sr\s*=\s*["']([A-Za-z]*)([0-9]*)""")
_XLSX_SPACED_REF = re.compile(rb"\sr\s+=|\sr=\s")
_XLSX_FORMULA = re.compile(rb"<(?:\w+:)?f[\s/>]")
# A cell holding a formula and no value: <c ...><f>...</f></c>, <c ...><f .../></c> (a shared
# formula), or with an empty <v/>.
_XLSX_UNSAVED = re.compile(
    rb"<(?:\w+:)?c(?:\s[^>]*[^/])?>\s*<(?:\w+:)?f(?:\s[^>]*)?(?:/>|>[^<]*</(?:\w+:)?f>)"
    rb"\s*(?:<(?:\w+:)?v\s*/>|<(?:\w+:)?v>\s*</(?:\w+:)?v>)?\s*</(?:\w+:)?c>"
)
_XLSX_ERROR_CELL = re.compile(rb'<(?:\w+:)?c\s([^>]*\bt="e"[^>]*)>')
_DIGIT = np.full(256, -1, np.int64)
_DIGIT[48:58] = np.arange(10)


def _column_number(letters: bytes) -> int:
    col = 0
    for letter in letters.upper()[:4]:
        col = col * 26 + letter - 64
    return col if len(letters) < 4 else _HUGE


def _ref_number(digits: bytes) -> int:
    return min(int(digits[:11]), _HUGE) if digits else 0


def _leading_number(padded: bytes, start: np.ndarray) -> np.ndarray:
    """The number the digits from each ``start`` spell (0 if none, at most _HUGE).

    The 8 bytes at each start are one big-endian number; digits are found and summed for all
    starts at once, 8 bytes wide (about 15 array operations instead of a loop per digit).
    """
    words = np.ndarray((len(padded) - 7,), dtype=">u8", buffer=padded, strides=(1,))
    x = words[start].astype(np.uint64) ^ np.uint64(0x3030303030303030)  # digits -> 0..9
    low7 = x & np.uint64(0x7F7F7F7F7F7F7F7F)
    # The high bit of each byte: set where the byte is not a digit (no carry between bytes).
    stops = (x | (low7 + np.uint64(0x7676767676767676))) & np.uint64(0x8080808080808080)
    top = np.floor(np.log2(np.maximum(stops, 1).astype(np.float64))).astype(np.int64)
    count = np.where(stops == 0, 8, (63 - top) // 8)  # digits before the first other byte
    digits = x >> (8 * (8 - np.clip(count, 1, 8))).astype(np.uint64)
    pairs = (digits & np.uint64(0x00FF00FF00FF00FF)) + (
        (digits >> np.uint64(8)) & np.uint64(0x00FF00FF00FF00FF)
    ) * np.uint64(10)
    quads = (pairs & np.uint64(0x0000FFFF0000FFFF)) + (
        (pairs >> np.uint64(16)) & np.uint64(0x0000FFFF0000FFFF)
    ) * np.uint64(100)
    number = (quads & np.uint64(0xFFFFFFFF)) + (quads >> np.uint64(32)) * np.uint64(10_000)
    number = np.where(count == 0, 0, number.astype(np.int64))
    for i in np.flatnonzero(count >= 8):  # rare: far past any sheet, read for the message
        digits = re.match(rb"[0-9]{1,11}", padded[start[i] : start[i] + 11])
        number[i] = min(int(digits.group()), _HUGE) if digits else _HUGE
    return number


class _Refs(NamedTuple):
    """What a stretch of sheet XML says about the grid calamine will build."""

    width: int  # largest column an r attribute names
    height: int  # largest row an r attribute names
    cell_refs: int  # r attributes with a column
    row_refs: int  # r attributes without
    cells: np.ndarray  # where cell tags start
    rows: np.ndarray  # where row tags start


def _xlsx_refs(buffer: bytes) -> _Refs | None:
    """The ``r="..."`` attributes and the cell and row tags of a stretch of sheet XML, with
    array operations; ``None`` for white space around an ``r=`` or namespaced tags, which
    :func:`_xlsx_refs_slow` reads instead.

    Every attribute has an "=", so every ``r`` attribute calamine can see is found; one in
    text or in a comment only overstates the sheet.
    """
    padded = buffer + bytes(16)
    a = np.frombuffer(padded, np.uint8)
    eq = np.flatnonzero(a == 61)
    eq = eq[eq >= 2]
    spaced = _SPACE[a[eq - 1]] | _SPACE[a[eq + 1]]
    if spaced.any() and _XLSX_SPACED_REF.search(padded):
        return None
    value = eq[(a[eq - 1] == 114) & _SPACE[a[eq - 2]] & ((a[eq + 1] == 34) | (a[eq + 1] == 39))]
    value += 2
    # Letters: up to three make a column (XFD = 16,384); a fourth means far past any sheet.
    letters = np.zeros(len(value), np.int64)
    col = np.zeros(len(value), np.int64)
    alive = np.arange(len(value))
    for k in range(4):
        code = _LETTER[a[value[alive] + k]]
        alive, code = alive[code > 0], code[code > 0]
        if not alive.size:
            break
        letters[alive] += 1
        col[alive] = col[alive] * 26 + code
    col[letters > 3] = _HUGE
    row = _leading_number(padded, value + letters)
    # Tags named c or row: the letter after "<", then the end of the name.  A namespace
    # prefix ("<x:c") is left to the regular expressions, which tell opening from closing tags.
    opens = (a[:-1] == 60) | (a[:-1] == 58)
    cells = np.flatnonzero(opens & (a[1:] == 99)) + 1
    cells = cells[_NAME_END[a[cells + 1]]]
    rows = np.flatnonzero(opens & (a[1:] == 114)) + 1
    rows = rows[(a[rows + 1] == 111) & (a[rows + 2] == 119) & _NAME_END[a[rows + 3]]]
    if (a[cells - 1] == 58).any() or (a[rows - 1] == 58).any():
        return None
    with_column = int(np.count_nonzero(letters))
    return _Refs(
        int(col.max(initial=0)),
        int(row.max(initial=0)),
        with_column,
        len(value) - with_column,
        cells,
        rows,
    )


def _xlsx_refs_slow(buffer: bytes) -> _Refs:
    """:func:`_xlsx_refs` by regular expressions, for any spacing (a Python step per match)."""
    matches = _XLSX_ANY_REF.findall(buffer)
    named = [m for m in matches if m[0]]
    return _Refs(
        max((_column_number(m[0]) for m in named), default=0),
        max((_ref_number(m[1]) for m in matches), default=0),
        len(named),
        len(matches) - len(named),
        np.array([m.start() for m in _XLSX_CELL.finditer(buffer)], np.int64),
        np.array([m.start() for m in _XLSX_ROW.finditer(buffer)], np.int64),
    )


def xlsx_extent(book: zipfile.ZipFile, member: str) -> tuple[int, int, int, Errors, int]:
    """(last row, last column, number of cells, error cells, formulas without a saved value)
    a worksheet's XML can make calamine allocate.

    A formula cell without a saved value (a file written by a script and never calculated)
    reads as blank; its count lets the reader say so instead of dropping rows silently.

    calamine places a cell without ``r`` after the previous cell of its row, and a row without
    ``r`` after the previous row: then the sheet is taken to be as wide as its widest row's
    cells beyond the largest column named, and as tall as its rows beyond the largest row
    named.  One compiled pass (or array operations) per megabyte, not a Python loop per cell:
    this runs on every read.
    """
    height = width = cells = rows = cell_refs = row_refs = widest = carry = unsaved = 0
    errors: Errors = {}
    compiled = None
    if book.getinfo(member).file_size >= COMPILED_SCAN_FROM:
        # Only for large sheets: its first call loads numba, and the first ever compiles it.
        from ._scan_kernels import xlsx_refs as compiled
    with book.open(member) as handle:
        chunks = _stream_chunks(handle, close=b"</row>")
        # Reading ahead pays off beside the compiled scan only: numpy's scan holds the GIL.
        with closing(_read_ahead(chunks) if compiled else chunks) as ahead:
            for buffer in ahead:
                quick = compiled(buffer) if compiled else None
                found = _Refs(*quick) if quick else _xlsx_refs(buffer) or _xlsx_refs_slow(buffer)
                width, height = max(width, found.width), max(height, found.height)
                cell_refs, row_refs = cell_refs + found.cell_refs, row_refs + found.row_refs
                cells += len(found.cells)
                rows += len(found.rows)
                if cells > cell_refs:  # cells without r: how many can one row hold?
                    per_row = np.bincount(
                        np.searchsorted(found.rows, found.cells), minlength=len(found.rows) + 1
                    )
                    per_row[0] += carry  # the row the previous buffer left open
                    widest = max(widest, int(per_row.max()))
                    carry = 0 if buffer.endswith(b"</row>") else int(per_row[-1])
                if _XLSX_FORMULA.search(buffer) is not None:
                    unsaved += len(_XLSX_UNSAVED.findall(buffer))
                if buffer.rfind(b't="e"') < 0:
                    continue
                for match in _XLSX_ERROR_CELL.finditer(buffer):
                    attrs = match.group(1)
                    ref = _XLSX_REF.search(attrs)
                    if ref is None or not ref.group(1) or attrs.endswith(b"/"):
                        continue
                    value = _XLSX_VALUE.search(buffer, match.end(), match.end() + 4000)
                    if value:
                        key = (int(ref.group(2)) - 1, _column_number(ref.group(1)) - 1)
                        errors[key] = value.group(1).decode("ascii", "replace")
    if cells > cell_refs:
        width += widest
    if rows > row_refs:
        height += rows
    return height, width, cells, errors, unsaved


# The shared-string table: calamine reserves room for the "uniqueCount" its <sst> tag claims
# (24 bytes a string) before reading any string, so 4,294,967,295 aborted the process asking
# for 103 GB.  The claim is checked against the <si> elements really there.
_SST_START = re.compile(rb"<(?:[^\s<>/:]+:)?sst(?=[\s/>])([^>]*)>")
_UNIQUE_COUNT = re.compile(rb"""(?:^|\s)uniqueCount\s*=\s*(["'])([^"']*)\1""")
_SI = re.compile(rb"<(?:[^\s<>/:]+:)?si(?=[\s/>])")
#: A claim of up to this many strings costs calamine at most 24 MB: not worth a count.
SHARED_STRINGS_TRUSTED = 1_000_000
#: The <sst> tag must close within this many bytes (a real one has under 300).
_SST_TAG_BYTES = 2**20


def xlsx_shared_strings(book: zipfile.ZipFile) -> tuple[int, int] | None:
    """(strings claimed, ``<si>`` elements found) of a workbook's shared-string table, when
    the claim is large enough to matter (over ``SHARED_STRINGS_TRUSTED``); else ``None``.

    Raises ``ValueError`` when the ``<sst>`` tag is not found in the part's first megabyte
    (calamine would still find it further on, and trust it).
    """
    member = next((n for n in book.namelist() if n.lower() == "xl/sharedstrings.xml"), None)
    if member is None:
        return None
    with book.open(member) as handle:
        head = handle.read(_SST_TAG_BYTES)
        start = _SST_START.search(head)
        if start is None:
            if len(head) == _SST_TAG_BYTES:
                raise ValueError("no <sst> tag in the first megabyte of the shared strings")
            return None
        claim = _UNIQUE_COUNT.search(start.group(1))
        text = html.unescape(claim.group(2).decode("utf-8", "replace")).strip() if claim else ""
        if not text.isdigit() or int(text) <= SHARED_STRINGS_TRUSTED:
            return None  # no claim, a small one, or one calamine cannot read as a number
        # Counted up to the head's last ">": an <si tag cut there is counted with the rest.
        cut = head.rfind(b">") + 1
        found = len(_SI.findall(head, start.end(), cut))
        tail = head[cut:]
        for chunk in _stream_chunks(handle, close=b"</si>"):
            found += len(_SI.findall(tail + chunk))
            tail = b""
    return int(text), found


_ODS_TAGS = re.compile(
    # The lookahead, not \b: "table:table" must not match "table:table-row" at the hyphen.
    # Attributes are read quote by quote: a ">" may sit inside a value.
    rb"<(table:table|/table:table-row|/table:table|table:table-row|table:table-cell"
    rb"""|table:covered-table-cell)(?=[\s/>])((?:[^>"']|"[^"]*"|'[^']*')*?)(/?)>"""
)
_ODS_NAME = re.compile(rb'table:name="([^"]*)"')
_ODS_ROWS = re.compile(rb'table:number-rows-repeated\s*=\s*["\']([^"\']*)')
_ODS_COLS = re.compile(rb'table:number-columns-repeated\s*=\s*["\']([^"\']*)')
#: Repeats but the one on a row's last cell when self-closed (LibreOffice's trailing empty
#: cells, one a row): a filled cell there is left to the tag-by-tag scan.
_ODS_REPEAT = re.compile(
    rb'number-(rows|columns)-repeated\s*=\s*"([^"]*)"(?!/></table:table-row>)'
)
_ODS_TEXT = re.compile(rb"<text:p>([^<]*)</text:p>")
_ODS_ROW_END = b"</table:table-row>"
_ODS_DOC_END = b"</office:document-content>"
#: content.xml size from which the compiled scan is used (~15,000 cells).  Below it the numpy
#: scan takes milliseconds, less than loading numba; the size only picks between two scans
#: that give the same answer, so a false size in the zip costs time, never safety.
COMPILED_SCAN_FROM = 4 * 2**20
_BOM = b"\xef\xbb\xbf"
#: A repeat's share in a count of filled cells is capped here (over 16 million: more than
#: any sheet's rows or columns), so that rows x columns cannot overflow 64 bits.
_CELLS_CAP = 2**24

def _repeat(value: bytes) -> int:
    """A repeat count as calamine reads it (a plain non-negative integer), capped far above
    any sheet so one absurd count cannot overflow the arithmetic."""
    if not value.strip().lstrip(b"+").isdigit():
        raise ValueError(f"repeat count {value[:20]!r} is not a number")
    return min(int(value), 2**40)


class _OdsScan:
    """Per table of content.xml: used rows, used columns, filled cell elements, error cells.

    Trailing empty rows and cells (LibreOffice writes a million of them as one repeated
    element) are not used area: readers drop them.  Repeated empty cells *before* a filled one
    are, and are how a small file pads a sheet to 16,384 columns.  Stretches of whole rows are
    measured with array operations (:func:`_ods_rows`); table bounds, error cells and anything
    unusual tag by tag.  The array scan is compiled (:mod:`stratpd_xl.input._scan_kernels`) where
    numba runs, and numpy otherwise or where the compiled one declines.
    """

    def __init__(self, compiled: Callable[[bytes], Any] | None = None) -> None:
        #: :func:`stratpd_xl.input._scan_kernels.ods_rows`, tried first on each buffer when given.
        self.compiled = compiled
        self.extents: dict[str, tuple[int, int, int, Errors]] = {}
        self.name = ""
        self.height = self.width = self.cells = self.row_pos = 0
        self.col_pos = self.row_used = self.row_repeat = 0
        self.errors: Errors = {}
        #: Per table, its most repeated row holding cells: (times, row number from 1).
        self.repeats: dict[str, tuple[int, int]] = {}
        self.repeat = (0, 0)
        self.table_open = False
        #: A stretch the array scan could not vouch for: expat checks the whole XML at the end.
        self.unchecked = False

    def feed(self, chunk: bytes) -> None:
        rows = None if self.compiled is None else self.compiled(chunk)  # None: numpy decides
        if rows is None:
            tags = _xml_tags(chunk)
            rows = None if tags is None else _ods_rows(*tags)
            if rows is None:
                self.unchecked |= tags is None
                self._tags(chunk)
                return
        spans, used, cells = rows
        if used.any():
            most = int(np.argmax(np.where(used > 0, spans, 0)))
            if spans[most] > self.repeat[0]:
                self.repeat = (int(spans[most]), self.row_pos + int(spans[:most].sum()) + 1)
            last = int(np.flatnonzero(used)[-1])
            self.height = self.row_pos + int(spans[: last + 1].sum())
            self.width = max(self.width, int(used.max()))
            self.cells += cells
        self.row_pos += int(spans.sum())

    def _tags(self, chunk: bytes) -> None:
        if not chunk.startswith((b"<?xml", _BOM + b"<?xml")):  # the only <? allowed
            body = chunk
        else:
            body = chunk[chunk.find(b"?>") + 2 :]
        if b"<!" in body or b"<?" in body:
            raise ValueError("content.xml holds markup no spreadsheet writes")
        for match in _ODS_TAGS.finditer(chunk):
            tag, attrs, closed = match.groups()
            if tag == b"table:table":
                self.finish()
                found = _ODS_NAME.search(attrs)
                self.name = (
                    html.unescape(found.group(1).decode("utf-8", "replace")) if found else ""
                )
                self.height = self.width = self.cells = self.row_pos = 0
                self.errors = {}
                self.repeat = (0, 0)
                self.table_open = not closed
            elif tag == b"/table:table":
                self.table_open = False
            elif tag == b"table:table-row":
                repeat = _ODS_ROWS.search(attrs)
                self.row_repeat = _repeat(repeat.group(1)) if repeat else 1
                self.col_pos = self.row_used = 0
                if closed:
                    self.row_pos += self.row_repeat
            elif tag == b"/table:table-row":
                if self.row_used and self.row_repeat > self.repeat[0]:
                    self.repeat = (self.row_repeat, self.row_pos + 1)
                self.row_pos += self.row_repeat
                if self.row_used:
                    self.height = self.row_pos
                    self.width = max(self.width, self.row_used)
            else:
                repeat = _ODS_COLS.search(attrs)
                start = self.col_pos
                self.col_pos += _repeat(repeat.group(1)) if repeat else 1
                if not closed or b"value-type" in attrs or b"formula" in attrs:
                    # A filled cell repeated, or in a repeated row, is that many cells.
                    self.cells += (self.col_pos - start) * self.row_repeat
                    self.row_used = self.col_pos
                if b'calcext:value-type="error"' in attrs and self.row_repeat == 1:
                    text = _ODS_TEXT.search(chunk, match.end(), match.end() + 4000)
                    for col in range(start, min(self.col_pos, start + 1000)):
                        self.errors[(self.row_pos, col)] = (
                            text.group(1).decode() if text else "#VALUE!"
                        )

    def finish(self) -> None:
        if self.name in self.extents:  # keyed by name, calamine would keep only the last
            raise ValueError(f"two tables are named {self.name[:40]!r}")
        if self.name:
            self.extents[self.name] = (self.height, self.width, self.cells, self.errors)
            self.repeats[self.name] = self.repeat
            self.name = ""


def _xml_tags(chunk: bytes) -> tuple[bytes, np.ndarray, np.ndarray] | None:
    """(zero-padded text, tag starts, tag ends) of XML whose "<" and ">" positions tell the truth.

    That is: every "<" opens a tag that ends before the next "<", with its double quotes paired
    and no single quote inside, so no tag hides in an attribute value.  ``None`` otherwise (or
    when the text does not end with a whole tag).  Raises ``ValueError`` for a comment, CDATA,
    DOCTYPE or processing instruction (but the XML declaration), which could hide tags.
    """
    padded = chunk + bytes(32)  # a tag's name can be looked at past the end of the text
    a = np.frombuffer(padded, np.uint8)
    lt = np.flatnonzero(a == 60)
    gt = np.flatnonzero(a == 62)
    n = len(lt)
    if n == 0 or not len(gt) or gt[-1] < lt[-1]:
        return None
    end = gt if len(gt) == n else gt[np.searchsorted(gt, lt)]
    if (end < lt).any() or (end[:-1] > lt[1:]).any():
        return None
    bounds = np.empty(2 * n, np.int64)
    bounds[0::2], bounds[1::2] = lt, end
    if np.bitwise_xor.reduceat((a == 34).view(np.uint8), bounds)[0::2].any():
        return None  # an odd number of double quotes in a tag: a ">" inside a value
    if 39 in a:  # a single quote inside a tag could hide a ">"
        marks = np.flatnonzero(a == 39)
        owner = np.searchsorted(lt, marks, side="right") - 1
        if ((owner >= 0) & (marks < end[np.maximum(owner, 0)])).any():
            return None
    first = a[lt + 1]
    markup = np.flatnonzero((first == 33) | (first == 63))  # <! and <?
    if markup.size and not (markup.size == 1 and chunk.startswith((b"<?xml", _BOM + b"<?xml"))):
        raise ValueError("the XML holds markup no spreadsheet writes")
    return padded, lt, end


def _ods_rows(
    padded: bytes, lt: np.ndarray, end: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int] | None:
    """(rows each row element stands for, used columns of each, filled cells) of a stretch of
    whole rows, from its tags' positions (:func:`_xml_tags`); ``None`` to go tag by tag.

    Only rows, cells and ``text:`` elements may occur: rows open and close in turn, every cell
    inside a row.  A cell that is not self-closed, or holds a value or formula, is filled; a
    row's used width runs to the end of its last filled cell, repeats counted.
    """
    if padded.rfind(b'value-type="error"') >= 0:  # rfind: the faster search here
        return None  # error cells: their texts are read tag by tag
    a = np.frombuffer(padded, np.uint8)
    # The 8 bytes from any position as one number: a tag's name in one or two look-ups.
    words = np.ndarray((len(a) - 7,), dtype="<u8", buffer=padded, strides=(1,))
    close = a[lt + 1] == 47
    name = lt + 1 + close
    head = words[name]
    # Half the tags are text:p and its kin inside cells: the rest must be rows and cells.
    other = np.flatnonzero((head & _LOW5) != _TEXT_NS)
    name, head, shut = name[other], head[other], close[other]
    tail = words[name + 8]
    table = head == _TABLE_TA
    cell = table & (tail == _BLE_CELL) & _NAME_END[a[name + 16]]
    row = table & ((tail & _LOW7) == _BLE_ROW) & _NAME_END[a[name + 15]]
    covered = np.flatnonzero(head == _TABLE_CO)
    if covered.size:
        covered = covered[
            (tail[covered] == _VERED_TA)
            & (words[name[covered] + 16] == _BLE_CELL)
            & _NAME_END[a[name[covered] + 24]]
        ]
        cell[covered] = True
    if not (cell | row).all():
        return None
    rows = other[row]
    row_shut = shut[row]
    if not len(rows) or len(rows) % 2 or row_shut[0::2].any() or not row_shut[1::2].all():
        return None
    opens, closes = rows[0::2], rows[1::2]
    if (a[end[opens] - 1] == 47).any():  # a self-closed row
        return None
    cells = other[cell & ~shut]
    row_of = np.searchsorted(opens, cells) - 1
    if (row_of < 0).any() or (cells > closes[np.maximum(row_of, 0)]).any():
        return None
    row_spans = np.ones(len(opens), np.int64)
    spans = np.ones(len(cells), np.int64)
    for match in _ODS_REPEAT.finditer(padded):  # rare: equal neighbours, gaps, repeated rows
        tag = int(np.searchsorted(lt, match.start(), side="right")) - 1
        if tag < 0 or match.start() > end[tag]:
            continue  # text, not an attribute
        tags, target = (opens, row_spans) if match.group(1) == b"rows" else (cells, spans)
        where = int(np.searchsorted(tags, tag))
        if where < len(tags) and tags[where] == tag:
            target[where] = _repeat(match.group(2))
    filled = a[end[cells] - 1] != 47  # not self-closed
    empty = np.flatnonzero(~filled)
    if empty.size:
        starts, stops = lt[cells[empty]], end[cells[empty]] + 1
        width = int((stops - starts).max())
        if width > _ODS_EMPTY_TAG:
            return None
        offsets = np.arange(width)
        window = a[np.minimum(starts[:, None] + offsets, len(a) - 1)]
        window[offsets >= (stops - starts)[:, None]] = 0
        flat = window.tobytes()
        for word in (b"value-type", b"formula"):
            for hit in re.finditer(word, flat):
                filled[empty[hit.start() // width]] = True
        if filled[empty].any() and b"-repeated" in flat:
            return None  # maybe a filled repeated last cell, whose repeat was skipped above
    ends = np.cumsum(spans)
    first_cell = np.searchsorted(row_of, np.arange(len(opens)))
    ends -= np.concatenate(([0], ends))[first_cell][row_of]
    used = np.zeros(len(opens), np.int64)
    hits = np.flatnonzero(filled)
    if hits.size:
        rows_hit = row_of[hits]
        last = np.append(rows_hit[1:] != rows_hit[:-1], True)
        used[rows_hit[last]] = ends[hits[last]]
    # Filled cells with their repeats, in rows and columns: a row of 3 cells repeated
    # 3,000,000 times holds 9,000,000.  Each factor is capped far above any sheet (and the sum
    # taken in floats) so absurd counts cannot overflow.
    weights = np.minimum(spans[hits], _CELLS_CAP) * np.minimum(row_spans[row_of[hits]],
                                                                _CELLS_CAP)
    return row_spans, used, int(min(weights.sum(dtype=np.float64), 2.0**60))


def ods_extents(
    book: zipfile.ZipFile, repeats: dict[str, tuple[int, int]] | None = None
) -> dict[str, tuple[int, int, int, Errors]]:
    """Per table: (used rows, used columns, filled cells, error cells), repeats counted.

    ``repeats``, when given, receives each table's most repeated row holding cells: (how many
    rows it stands for, its row number from 1), to name it when a sheet is too long.

    Raises ``ValueError`` for content python-calamine would misread or never finish: cut short
    (a table left open makes it loop forever), not well-formed where the fast scan could not
    vouch for it, or with markup (``<!``: comments, CDATA, a DOCTYPE; ``<?`` after the
    declaration) that could hide tags from this scan.
    """
    compiled = None
    if book.getinfo("content.xml").file_size >= COMPILED_SCAN_FROM:
        # Only for large sheets: its first call loads numba, and the first ever compiles it
        # (~6 s).
        from ._scan_kernels import ods_rows as compiled
    scan = _OdsScan(compiled=compiled)
    last = b""
    with book.open("content.xml") as handle:
        # 256 kB buffers: the numpy scan's dozen passes over each stay in a 2-4 MB cache (1 MB
        # buffers took 10 % longer); rows up to 4 MB (~40,000 filled cells) stay whole.
        chunks = _stream_chunks(handle, close=_ODS_ROW_END, size=2**18, longest=2**22)
        # Reading ahead pays off beside the compiled scan only: numpy's scan holds the GIL.
        with closing(_read_ahead(chunks) if compiled else chunks) as ahead:
            for chunk in ahead:
                scan.feed(chunk)
                last = (last + chunk[-64:])[-64:]  # not last + chunk: a copy of every buffer
    scan.finish()
    if scan.table_open or not last.rstrip().endswith(_ODS_DOC_END):
        raise ValueError("content.xml is cut short")
    if scan.unchecked:
        _check_xml(book, "content.xml")
    if repeats is not None:
        repeats.update(scan.repeats)
    return scan.extents


def _check_xml(book: zipfile.ZipFile, member: str) -> None:
    """Expat (no tree, no handlers) checks that the member is well-formed XML."""
    parser = ParserCreate()
    with book.open(member) as handle:
        while chunk := handle.read(2**20):
            parser.Parse(chunk, False)
    parser.Parse(b"", True)


# .xlsb worksheets: BIFF12 records (MS-XLSB 2.1.4), each a type and a size written as 7-bit
# groups (type up to 2 bytes, size up to 4), then the payload.
_XLSB_ROW = 0x0000  # BrtRowHdr: row number (u32) first
_XLSB_BEGIN_DATA, _XLSB_END_DATA = 0x0091, 0x0092  # BrtBeginSheetData / BrtEndSheetData
_XLSB_DIMENSION = 0x0094  # BrtWsDim: 4 x u32, read by calamine without a length check
#: Cell records calamine keeps (Rk, Error, Bool, Real, St, Isst, FmlaString, FmlaNum,
#: FmlaBool), column (u32) first, and the payload size it reads up to without checking.
_XLSB_CELLS = {0x02: 12, 0x03: 9, 0x04: 9, 0x05: 16, 0x06: 12, 0x07: 12, 0x08: 14, 0x09: 16,
               0x0A: 9}
_XLSB_LAST_ROW = 0x0010_0000  # calamine stops reading at a row number past this


def xlsb_extent(book: zipfile.ZipFile, member: str) -> tuple[int, int, int, Errors]:
    """(last row, last column, number of cells, no error cells) of an .xlsb worksheet: the grid
    calamine will allocate, from its row and cell records (the declared dimension is ignored).

    Read as calamine reads it: records from BrtBeginSheetData to BrtEndSheetData, a cell's row
    from the last row header.  A cell record shorter than calamine assumes makes it read
    outside its buffer (a crash, not an error), so it is "damaged" here.  One Python step per
    record: about a third of a second per million cells.
    """
    height = width = cells = row = 0
    started = False
    unpack, minimum = struct.unpack_from, _XLSB_CELLS
    with book.open(member) as handle:
        data, pos, skip = b"", 0, 0
        while True:
            chunk = handle.read(2**20)
            last = not chunk
            if skip:  # the rest of a record too large to hold
                taken = min(skip, len(chunk))
                chunk, skip = chunk[taken:], skip - taken
            data = data[pos:] + chunk
            pos, end = 0, len(data)
            while end - pos >= (1 if last else 8):
                start = pos
                kind = data[pos]
                size = data[pos + 1] if pos + 1 < end else 0
                if kind < 0x80 and size < 0x80:  # most records: one byte each
                    pos += 2
                else:
                    pos += 1
                    if kind & 0x80:
                        kind = (kind & 0x7F) | ((data[pos] & 0x7F) << 7) if pos < end else -1
                        pos += 1
                    size = shift = 0
                    for _ in range(4):
                        byte = data[pos] if pos < end else 0
                        pos += 1
                        size |= (byte & 0x7F) << shift
                        shift += 7
                        if not byte & 0x80:
                            break
                if pos + size > end:
                    if last:
                        raise ValueError("the sheet ends inside a record")
                    if size > 2**20:  # look at its head, drop the rest as it comes
                        head = 16 if kind in _XLSB_CELLS or kind == _XLSB_ROW else 0
                        if end - pos < head:
                            pos = start
                            break
                        skip = pos + size - end
                        size = end - pos
                    else:
                        pos = start
                        break
                need = minimum.get(kind)
                if need is not None and started:  # a cell
                    if size < need:
                        raise ValueError("a cell record is too short")
                    cells += 1
                    col = unpack("<I", data, pos)[0]
                    if col >= width:
                        width = col + 1
                    if row >= height:
                        height = row + 1
                elif not started:
                    if kind == _XLSB_DIMENSION and size < 16:
                        raise ValueError("the dimension record is too short")  # calamine panics
                    started = kind == _XLSB_BEGIN_DATA
                elif kind == _XLSB_ROW:
                    if size < 4:
                        raise ValueError("a row record is too short")
                    row = unpack("<I", data, pos)[0]
                    if row > _XLSB_LAST_ROW:
                        return height, width, cells, {}
                elif kind == _XLSB_END_DATA:
                    return height, width, cells, {}
                pos += size
            if last:
                return height, width, cells, {}


_XLSB_SHEET = 0x009C  # BrtBundleSh: state, tab id, relationship id, name
_XLSB_END_SHEETS = 0x0090


def xlsb_members(book: zipfile.ZipFile) -> dict[str, str]:
    """Sheet name -> zip member, from xl/workbook.bin and its relationships."""
    try:
        targets = _rel_targets(book.read("xl/_rels/workbook.bin.rels"))
        data = book.read("xl/workbook.bin")
    except KeyError:
        return {}
    members, pos = {}, 0
    while pos < len(data):
        kind = data[pos]
        pos += 1
        if kind & 0x80 and pos < len(data):
            kind = (kind & 0x7F) | ((data[pos] & 0x7F) << 7)
            pos += 1
        size = shift = 0
        for _ in range(4):
            byte = data[pos] if pos < len(data) else 0
            pos += 1
            size |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        if kind == _XLSB_END_SHEETS:
            break
        if kind == _XLSB_SHEET and size >= 12:
            record = data[pos : pos + size]
            chars = struct.unpack_from("<I", record, 8)[0]
            if chars != 0xFFFF_FFFF and 16 + 2 * chars <= len(record):
                rel = record[12 : 12 + 2 * chars].decode("utf-16-le", "replace")
                named = struct.unpack_from("<I", record, 12 + 2 * chars)[0]
                at = 16 + 2 * chars
                name = record[at : at + 2 * named].decode("utf-16-le", "replace")
                if rel in targets:
                    members[name] = targets[rel]
        pos += size
    return members


_SHEET_TAG = re.compile(rb"<(?:\w+:)?sheet\s([^>]*)>")
_REL_TAG = re.compile(rb"<(?:\w+:)?Relationship\s([^>]*)>")
_ATTR = re.compile(rb'([\w:]+)="([^"]*)"')


def xlsx_members(book: zipfile.ZipFile) -> dict[str, str]:
    """Sheet name -> zip member of its XML, from workbook.xml and its relationships."""
    try:
        sheets = _SHEET_TAG.findall(book.read("xl/workbook.xml"))
        targets = _rel_targets(book.read("xl/_rels/workbook.xml.rels"))
    except KeyError:
        return {}
    members = {}
    for sheet in sheets:
        attrs = {k.split(b":")[-1]: v for k, v in _ATTR.findall(sheet)}
        name = html.unescape(attrs.get(b"name", b"").decode("utf-8", "replace"))
        rel = attrs.get(b"id", b"").decode("utf-8", "replace")
        if rel in targets:
            members[name] = targets[rel]
    return members


def _rel_targets(rels_xml: bytes) -> dict[str, str]:
    """Relationship id -> zip member it points at, from a workbook's .rels part."""
    targets = {}
    for rel in _REL_TAG.findall(rels_xml):
        attrs = dict(_ATTR.findall(rel))
        target = attrs.get(b"Target", b"").decode("utf-8", "replace")
        rel_id = attrs.get(b"Id", b"").decode("utf-8", "replace")
        targets[rel_id] = target.lstrip("/") if target.startswith("/") else "xl/" + target
    return targets
