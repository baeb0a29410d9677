"""Measure an ``.xls`` workbook (BIFF in an OLE compound file) before python-calamine opens it.

calamine parses every sheet of an ``.xls`` as soon as it opens the file: it reserves memory
for each sheet's declared DIMENSIONS and builds each sheet's grid from its first to its last
cell.  Its compound-file reader trusts the file's sector chains (a cycle makes it read until
memory runs out) and reserves vectors from header fields.  This module reads the same
structures the way calamine does, but bounded, so :mod:`stratpd_xl.input.files` can refuse a
hostile file in one sentence before calamine touches it.

The compound-file reader is written from the MS-CFB specification (sections 2.2-2.6: header,
DIFAT, FAT, directory, mini stream); no OLE library is imported at run time.  The record scan
follows MS-XLS 2.1.4 (record = type u16, size u16, data) and what calamine 0.37's ``xls.rs``
keeps: which records make cells, how it reads DIMENSIONS, where each sheet's records start
(BoundSheet8) and end (the EOF of its own substream, embedded chart substreams skipped).
"""

from __future__ import annotations

import mmap
import struct
from pathlib import Path
from typing import NamedTuple

_SIGNATURE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENDOFCHAIN = 0xFFFF_FFFE
_RESERVED = 0xFFFF_FFFA  # ids from here on are markers, not sectors (MS-CFB 2.1)
_DIFSECT = 0xFFFF_FFFC
_MINI_CUTOFF = 4096  # streams shorter than this live in the mini stream (calamine: < 4096)
_STREAM_NAMES = ("Workbook", "Book", "WORKBOOK", "BOOK")  # calamine's order
#: calamine reserves a vector of this many u32 from header bytes 62-66 (a misread field);
#: 2**28 entries is 1 GB, past anything a real file's mini FAT fields spell.
_MAX_HEADER_RESERVE = 2**28

_BOF, _EOF, _BOUNDSHEET, _FILEPASS = 0x0809, 0x000A, 0x0085, 0x002F
_DIMENSIONS, _FORMULA, _STRING, _MULRK = 0x0200, 0x0006, 0x0207, 0x00BD
#: Records calamine turns into one cell at (row u16, column u16), their first four bytes:
#: NUMBER, LABEL, RSTRING, BOOLERR, RK, LABELSST.  BLANK (0x0201) and MULBLANK (0x00BE) are
#: not kept by calamine, so they do not widen the grid it builds.
_CELLS = frozenset((0x0203, 0x0204, 0x00D6, 0x0205, 0x027E, 0x00FD))


class XlsSheet(NamedTuple):
    """What calamine will allocate for one sheet of an ``.xls``."""

    name: str
    #: Last row + 1 and last column + 1 over the cells calamine keeps (0 when empty).
    height: int
    width: int
    #: Cells calamine keeps (formulas included).
    cells: int
    #: Cells calamine reserves from the sheet's DIMENSIONS record (the largest one).
    reserved: int


class XlsDamaged(ValueError):
    """The compound file or its records cannot be read as calamine would read them."""


def xls_sheets(path: Path) -> list[XlsSheet]:
    """Every sheet calamine will build from the ``.xls`` at ``path``, measured without it.

    An encrypted workbook (FilePass) gives no sheets: calamine refuses it before any sheet.

    Raises
    ------
    XlsDamaged
        A sector chain with a cycle or leaving the file, a stream declared larger than the
        file, a header field calamine would reserve gigabytes from, a record cut short.
    """
    with path.open("rb") as handle:
        size = path.stat().st_size
        if size < 512:
            raise XlsDamaged("shorter than a compound file header")
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            stream = _workbook_stream(data, size)
    return _scan_workbook(stream)


# --------------------------------------------------------------------------- compound file


def _workbook_stream(data: mmap.mmap, size: int) -> bytes:
    """The Workbook (or Book) stream, read through chains that are checked at every step."""
    if data[:8] != _SIGNATURE:
        raise XlsDamaged("not a compound file")
    major, _order, shift, mini_shift = struct.unpack_from("<HHHH", data, 26)
    if shift not in (9, 12) or mini_shift != 6:
        raise XlsDamaged("unknown sector size")
    sector = 1 << shift
    (fat_count, dir_start, _tx, _cutoff, mini_fat_start, mini_fat_count, difat_start,
     _difat_count) = struct.unpack_from("<IIIIIIII", data, 44)
    # Sector n starts at (n + 1) * sector; a last sector cut short is read as far as it goes.
    sectors = max(0, -(-(size - sector) // sector))
    if fat_count > sectors or mini_fat_count > sectors:
        raise XlsDamaged("the header counts more sectors than the file holds")
    if struct.unpack_from("<I", data, 62)[0] > _MAX_HEADER_RESERVE:
        raise XlsDamaged("the header's mini FAT fields are out of range")

    def read(sid: int) -> bytes:
        if sid >= sectors:
            raise XlsDamaged("a sector number points past the end of the file")
        start = (sid + 1) * sector
        return data[start : min(start + sector, size)]

    # DIFAT: 109 FAT sector numbers in the header, then a chain of DIFAT sectors, each holding
    # sector / 4 - 1 numbers and the next DIFAT sector's number.
    difat = list(struct.unpack_from("<109I", data, 76))
    seen: set[int] = set()
    sid = difat_start
    while sid < _RESERVED:
        if sid in seen:
            raise XlsDamaged("the DIFAT chain loops")
        seen.add(sid)
        block = read(sid)
        ids = list(struct.unpack_from(f"<{len(block) // 4}I", block))
        if not ids:
            raise XlsDamaged("the DIFAT chain leaves the file")
        sid = ids.pop()
        difat.extend(ids)
    fat_sectors = [i for i in difat if i < _DIFSECT]
    if len(fat_sectors) > sectors:
        raise XlsDamaged("more FAT sectors than the file holds")
    fat_bytes = b"".join(read(i) for i in fat_sectors)
    fat = struct.unpack_from(f"<{len(fat_bytes) // 4}I", fat_bytes)

    def chain(start: int, table: tuple[int, ...], get, unit: int, length: int) -> bytes:
        """Sectors from ``start`` until ENDOFCHAIN or ``length`` bytes, never one twice."""
        parts, total, sid, visited = [], 0, start, set()
        while sid != _ENDOFCHAIN and total < length:
            if sid in visited:
                raise XlsDamaged("a sector chain loops")
            if sid >= len(table):
                raise XlsDamaged("a sector chain leaves the FAT")
            visited.add(sid)
            part = get(sid)
            parts.append(part)
            total += len(part)
            sid = table[sid]
        return b"".join(parts)[:length]

    directory = chain(dir_start, fat, read, sector, size)
    entries = [directory[i : i + 128] for i in range(0, len(directory) - 127, 128)]
    if not entries:
        raise XlsDamaged("no directory")

    def entry(raw: bytes) -> tuple[str, int, int]:
        name = raw[:64].decode("utf-16-le", "replace").split("\0", 1)[0]
        start = struct.unpack_from("<I", raw, 116)[0]
        length = struct.unpack_from("<I" if shift == 9 else "<Q", raw, 120)[0]
        return name, start, length

    found = {}
    for raw in entries:
        name, start, length = entry(raw)
        found.setdefault(name, (start, length))
    for name in _STREAM_NAMES:
        if name in found:
            start, length = found[name]
            break
    else:
        return b""  # calamine says the stream is missing: a damaged file, its own error
    if length > size:
        raise XlsDamaged("the workbook stream is declared larger than the file")
    if length >= _MINI_CUTOFF:
        return chain(start, fat, read, sector, length)
    # A small stream: 64-byte sectors of the mini stream (the root entry's chain), numbered
    # by the mini FAT (its own chain of ordinary sectors).
    _, root_start, root_length = entry(entries[0])
    if root_length > size or mini_fat_count == 0:
        raise XlsDamaged("the mini stream is declared larger than the file")
    mini = chain(root_start, fat, read, sector, root_length)
    mini_fat_bytes = chain(mini_fat_start, fat, read, sector, mini_fat_count * sector)
    mini_fat = struct.unpack_from(f"<{len(mini_fat_bytes) // 4}I", mini_fat_bytes)
    return chain(start, mini_fat, lambda i: mini[i * 64 : i * 64 + 64], 64, length)


# --------------------------------------------------------------------------- BIFF records


def _scan_workbook(stream: bytes) -> list[XlsSheet]:
    """The sheets listed in the globals substream (BoundSheet8), each measured from its
    stream position as calamine reads it."""
    unpack = struct.unpack_from
    end = len(stream)
    pos = 0
    listed: list[tuple[int, str]] = []
    biff8 = True
    while pos + 4 <= end:
        kind, length = unpack("<HH", stream, pos)
        data = pos + 4
        pos = data + length
        if pos > end:
            raise XlsDamaged("a record runs past the end of the workbook stream")
        if kind == _EOF:
            break
        if kind == _FILEPASS and length >= 2 and unpack("<H", stream, data)[0] != 0:
            return []  # encrypted: calamine stops here with its password error
        if kind == _BOF and length >= 2:
            biff8 = unpack("<H", stream, data)[0] not in (0x0200, 0x0002, 0x0007, 0x0300,
                                                          0x0400, 0x0500)
        elif kind == _BOUNDSHEET and length >= 7:
            listed.append((unpack("<I", stream, data)[0], _sheet_name(stream[data + 6 : pos],
                                                                      biff8)))
    measured: dict[int, tuple[int, int, int, int]] = {}
    # Real sheets are disjoint substreams, so together they are read within one length of the
    # stream; sheets pointing into each other would make calamine (and us) read it n times.
    budget = end
    sheets = []
    for start, name in listed:
        if start > end:
            raise XlsDamaged("a sheet starts past the end of the workbook stream")
        if start not in measured:
            *extent, read = _scan_sheet(stream, start, budget)
            measured[start] = (extent[0], extent[1], extent[2], extent[3])
            budget -= read
        sheets.append(XlsSheet(name, *measured[start]))
    return sheets


def _sheet_name(raw: bytes, biff8: bool) -> str:
    """A ShortXLUnicodeString (BIFF8) or a byte string (BIFF5), for messages only."""
    if not raw:
        return ""
    count = raw[0]
    if biff8 and len(raw) >= 2:
        wide = raw[1] & 1
        text = raw[2 : 2 + count * (2 if wide else 1)]
        name = text.decode("utf-16-le" if wide else "latin-1", "replace")
    else:
        name = raw[1 : 1 + count].decode("latin-1", "replace")
    return name.replace("\0", "")


def _scan_sheet(stream: bytes, pos: int, budget: int) -> tuple[int, int, int, int, int]:
    """(height, width, cells, reserved, bytes read) of the sheet whose records start at
    ``pos``, reading at most ``budget`` bytes."""
    unpack = struct.unpack_from
    start = pos
    end = len(stream)
    stop = min(end, pos + budget)
    height = width = cells = reserved = 0
    seen_bof = False
    depth = 0
    formula = (0, 0)
    cell_kinds = _CELLS
    while pos + 4 <= end:
        kind, length = unpack("<HH", stream, pos)
        data = pos + 4
        pos = data + length
        if pos > stop:
            if pos > end:
                raise XlsDamaged("a record runs past the end of the workbook stream")
            raise XlsDamaged("sheets overlap in the workbook stream")
        if depth:  # inside an embedded chart or other substream: calamine skips it
            if kind == _BOF:
                depth += 1
            elif kind == _EOF:
                depth -= 1
            continue
        if kind in cell_kinds:
            if length < 4:
                raise XlsDamaged("a cell record is too short")
            row, col = unpack("<HH", stream, data)
        elif kind == _FORMULA:
            if length < 20:
                raise XlsDamaged("a formula record is too short")
            row, col = formula = unpack("<HH", stream, data)
        elif kind == _STRING:  # a formula's text value, placed at the last formula's cell
            row, col = formula
        elif kind == _MULRK:
            if length < 6:
                raise XlsDamaged("a MULRK record is too short")
            row, col = unpack("<HH", stream, data)
            many = (length - 6) // 6
            cells += many - 1
            col += many - 1
        elif kind == _BOF:
            if seen_bof:
                depth = 1
            seen_bof = True
            continue
        elif kind == _EOF:
            break
        elif kind == _DIMENSIONS:
            reserved = max(reserved, _dimensions(stream[data:pos]))
            continue
        else:
            continue
        cells += 1
        if row >= height:
            height = row + 1
        if col >= width:
            width = col + 1
    return height, width, cells, reserved, pos - start


def _dimensions(raw: bytes) -> int:
    """The cells calamine reserves for a DIMENSIONS record, with its u32 arithmetic."""
    if len(raw) == 10:
        first_row, last_row, first_col, last_col = struct.unpack_from("<HHHH", raw)
    elif len(raw) == 14:
        first_row, last_row, first_col, last_col = struct.unpack_from("<IIHH", raw)
    else:
        raise XlsDamaged("a DIMENSIONS record has an unknown size")  # calamine's error too
    if first_col > 0xFF or last_col < first_col:
        first_col = 0
    if last_row < 1 or last_col < 1:
        return 1
    rows = (last_row - first_row) % 2**32  # calamine: (last - 1) - first + 1, wrapping u32
    cols = (last_col - first_col) % 2**32
    return rows * cols
