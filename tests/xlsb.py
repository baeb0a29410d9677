"""Writing small .xlsb workbooks for the tests, record by record (MS-XLSB), since neither
LibreOffice nor the Python writers save .xlsb.

Only what python-calamine reads: a relationships part, ``xl/workbook.bin`` naming the sheet,
and the sheet's records (dimension, row headers, number and inline-text cells).
"""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

ROW, REAL, TEXT = 0x0000, 0x0005, 0x0006
BEGIN_SHEET, END_SHEET, DIMENSION = 0x0081, 0x0082, 0x0094
BEGIN_DATA, END_DATA = 0x0091, 0x0092
SHEET, END_SHEETS, CALC = 0x009C, 0x0090, 0x009D

RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Target="worksheets/sheet1.bin" Type="http://schemas.'
    'openxmlformats.org/officeDocument/2006/relationships/worksheet"/></Relationships>'
)


def record(kind: int, payload: bytes = b"") -> bytes:
    """A BIFF12 record: type and size in 7-bit groups, low group first, high bit = more."""
    head = bytes([kind]) if kind < 0x80 else bytes([(kind & 0x7F) | 0x80, kind >> 7])
    size, groups = len(payload), []
    while True:
        groups.append((size & 0x7F) | (0x80 if size > 0x7F else 0))
        size >>= 7
        if not size:
            break
    return head + bytes(groups) + payload


def wide(text: str) -> bytes:
    return struct.pack("<I", len(text)) + text.encode("utf-16-le")


def cell(col: int, value: float | str) -> bytes:
    if isinstance(value, str):
        return record(TEXT, struct.pack("<II", col, 0) + wide(value))
    return record(REAL, struct.pack("<IId", col, 0, value))


def row_header(row: int) -> bytes:
    return record(ROW, struct.pack("<IIH", row, 0, 0) + bytes(7))


def sheet_records(
    rows: list[list[float | str | None]],
    *,
    extra: dict[int, bytes] | None = None,
    dimension: tuple[int, int, int, int] | None = None,
) -> bytes:
    """A worksheet stream; ``extra`` maps a row index to raw records appended to that row."""
    width = max((len(r) for r in rows), default=1)
    first, last, col0, col1 = dimension or (0, max(len(rows) - 1, 0), 0, width - 1)
    out = [
        record(BEGIN_SHEET),
        record(DIMENSION, struct.pack("<IIII", first, last, col0, col1)),
        record(BEGIN_DATA),
    ]
    for r, values in enumerate(rows):
        out.append(row_header(r))
        out += [cell(c, v) for c, v in enumerate(values) if v is not None]
        out.append((extra or {}).get(r, b""))
    out += [record(END_DATA), record(END_SHEET)]
    return b"".join(out)


def make_xlsb(path: Path, sheet: bytes, name: str = "Data") -> Path:
    workbook = b"".join(
        [
            record(SHEET, struct.pack("<II", 0, 1) + wide("rId1") + wide(name)),
            record(END_SHEETS),
            record(CALC, bytes(26)),
        ]
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as book:
        book.writestr("xl/_rels/workbook.bin.rels", RELS)
        book.writestr("xl/workbook.bin", workbook)
        book.writestr("xl/worksheets/sheet1.bin", sheet)
    return path
