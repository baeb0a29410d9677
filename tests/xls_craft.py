"""Build small .xls files byte by byte (BIFF8 records in an MS-CFB version 3 compound file),
so hostile ones can be made that no spreadsheet program would write."""

from __future__ import annotations

import struct

FREE, END, FATSECT = 0xFFFF_FFFF, 0xFFFF_FFFE, 0xFFFF_FFFD


def record(kind: int, data: bytes = b"") -> bytes:
    return struct.pack("<HH", kind, len(data)) + data


def bof(sheet: bool) -> bytes:
    return record(0x0809, struct.pack("<HHHHII", 0x0600, 0x0010 if sheet else 0x0005, 0, 0, 0, 0))


def number(row: int, col: int, value: float) -> bytes:
    return record(0x0203, struct.pack("<HHHd", row, col, 0, value))


def blank(row: int, col: int) -> bytes:
    return record(0x0201, struct.pack("<HHH", row, col, 0))


def dimensions(first_row: int, last_row: int, first_col: int, last_col: int) -> bytes:
    return record(0x0200, struct.pack("<IIHHH", first_row, last_row, first_col, last_col, 0))


def table(rows: int = 5) -> list[bytes]:
    """x = 0, 1, ..., y = 2x under a header of two numbers 1 and 2 (no string table needed)."""
    cells = [number(0, 0, 1.0), number(0, 1, 2.0)]
    for i in range(1, rows + 1):
        cells += [number(i, 0, float(i)), number(i, 1, 2.0 * i)]
    return cells


def workbook(sheets: dict[str, list[bytes]], positions: list[int] | None = None) -> bytes:
    """A workbook stream: globals (BOF, one BoundSheet8 per sheet, EOF), then each sheet's
    substream.  ``positions`` overrides where the BoundSheet8 records say the sheets start."""

    def bound(pos: int, name: str) -> bytes:
        return record(0x0085, struct.pack("<IBBBB", pos, 0, 0, len(name), 0) + name.encode())

    head = len(bof(False)) + sum(len(bound(0, n)) for n in sheets) + len(record(0x000A))
    bodies = [bof(True) + b"".join(recs) + record(0x000A) for recs in sheets.values()]
    starts, at = [], head
    for body in bodies:
        starts.append(at)
        at += len(body)
    starts = positions or starts
    bounds = b"".join(bound(p, n) for p, n in zip(starts, sheets, strict=True))
    return bof(False) + bounds + record(0x000A) + b"".join(bodies)


def compound(stream: bytes, *, name: str = "Workbook", size: int | None = None,
             fat_edit: dict[int, int] | None = None, header_edit: dict[int, bytes] | None = None
             ) -> bytes:
    """A compound file holding one stream (padded to 4,096 bytes, out of the mini stream).

    Sectors: the FAT, one directory sector, the stream.  ``fat_edit`` rewrites FAT entries
    (sector -> next), ``size`` the stream's declared length, ``header_edit`` header bytes.
    """
    stream = stream.ljust(4096, b"\0")
    data_sectors = -(-len(stream) // 512)
    fat_sectors = 1
    while fat_sectors * 128 < fat_sectors + 1 + data_sectors:
        fat_sectors += 1
    dir_sector = fat_sectors
    first = dir_sector + 1
    fat = [FATSECT] * fat_sectors + [END]
    fat += [first + i + 1 for i in range(data_sectors - 1)] + [END]
    fat += [FREE] * (fat_sectors * 128 - len(fat))
    for sector, nxt in (fat_edit or {}).items():
        fat[sector] = nxt

    def entry(label: str, kind: int, child: int, start: int, length: int) -> bytes:
        raw = (label + "\0").encode("utf-16-le") if label else b""
        return (raw.ljust(64, b"\0") + struct.pack("<HBB", len(raw), kind, 1)
                + struct.pack("<III", FREE, FREE, child) + bytes(16 + 4 + 16)
                + struct.pack("<IQ", start, length))

    directory = entry("Root Entry", 5, 1, END, 0)
    directory += entry(name, 2, FREE, first, len(stream) if size is None else size)
    directory += entry("", 0, FREE, 0, 0) * 2
    header = bytearray(512)
    header[:8] = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
    struct.pack_into("<HHHHH", header, 24, 0x3E, 3, 0xFFFE, 9, 6)
    struct.pack_into("<IIIIIIIII", header, 40, 0, fat_sectors, dir_sector, 0, 4096, END, 0,
                     END, 0)
    difat = list(range(fat_sectors)) + [FREE] * (109 - fat_sectors)
    struct.pack_into("<109I", header, 76, *difat)
    for offset, value in (header_edit or {}).items():
        header[offset : offset + len(value)] = value
    body = struct.pack(f"<{len(fat)}I", *fat) + directory + stream.ljust(data_sectors * 512, b"\0")
    return bytes(header) + body
