"""Byte tables and tag words shared by the numpy scans and their compiled counterparts.

:mod:`._workbook_scan` (numpy, always importable) and :mod:`._scan_kernels` (numba) must read
the same bytes as the same names, so both take these from here; neither imports the other's
constants, which keeps the import graph one-way (the numpy scan calls the kernels lazily).
"""

from __future__ import annotations

import numpy as np

#: Past Excel's 16,384 columns and 1,048,576 rows by far; calamine would still try them.
_HUGE = 10**10

_SPACE = np.zeros(256, bool)
_SPACE[list(b" \t\r\n")] = True
_NAME_END = _SPACE.copy()  # what may follow a tag's name
_NAME_END[list(b"/>")] = True
_LETTER = np.zeros(256, np.int64)  # A-Z and a-z -> 1-26, like calamine
for _i in range(26):
    _LETTER[65 + _i] = _LETTER[97 + _i] = _i + 1

#: Longest self-closed cell tag looked into for a value or formula (LibreOffice's: ~60 bytes).
_ODS_EMPTY_TAG = 256


def _word(text: bytes) -> int:
    """Up to 8 bytes as one little-endian integer, so a tag name compares in one step."""
    return int.from_bytes(text.ljust(8, b"\0"), "little")


_TEXT_NS, _LOW5 = _word(b"text:"), 2**40 - 1
_TABLE_TA, _BLE_CELL, _BLE_ROW, _LOW7 = (
    _word(b"table:ta"), _word(b"ble-cell"), _word(b"ble-row"), 2**56 - 1
)
_TABLE_CO, _VERED_TA = _word(b"table:co"), _word(b"vered-ta")
