"""Rewrite a Parquet file's footer (Thrift compact protocol), so hostile files can be made
that no writer produces: a row group claiming billions of rows or 10 GB once decompressed.

Only what a footer uses is decoded: integers, binaries, lists and structs; the decoded
footer is a list of (field id, type, value) and is encoded back the same way.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

# Compact protocol type codes.
TRUE, FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(1, 13)
Field = tuple[int, int, Any]


def _varint(data: bytes, at: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def _unzigzag(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


def _value(data: bytes, at: int, kind: int) -> tuple[Any, int]:
    if kind in (TRUE, FALSE):
        return kind == TRUE, at
    if kind == BYTE:
        return data[at], at + 1
    if kind in (I16, I32, I64):
        n, at = _varint(data, at)
        return _unzigzag(n), at
    if kind == DOUBLE:
        return struct.unpack_from("<d", data, at)[0], at + 8
    if kind == BINARY:
        size, at = _varint(data, at)
        return data[at : at + size], at + size
    if kind in (LIST, SET):
        head = data[at]
        at += 1
        size, element = head >> 4, head & 0x0F
        if size == 15:
            size, at = _varint(data, at)
        items = []
        for _ in range(size):
            if element in (TRUE, FALSE):  # a list of bools holds one byte each
                items.append(data[at] == TRUE)
                at += 1
            else:
                item, at = _value(data, at, element)
                items.append(item)
        return (element, items), at
    if kind == STRUCT:
        return _struct(data, at)
    raise ValueError(f"thrift type {kind} not handled")


def _struct(data: bytes, at: int) -> tuple[list[Field], int]:
    fields: list[Field] = []
    last = 0
    while True:
        head = data[at]
        at += 1
        if head == 0:
            return fields, at
        delta, kind = head >> 4, head & 0x0F
        if delta:
            fid = last + delta
        else:
            n, at = _varint(data, at)
            fid = _unzigzag(n)
        value, at = _value(data, at, kind)
        fields.append((fid, kind, value))
        last = fid


def _put_varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _zigzag(n: int) -> int:
    return (n << 1) ^ (n >> 63)


def _encode_value(kind: int, value: Any) -> bytes:
    if kind in (TRUE, FALSE):
        return b""
    if kind == BYTE:
        return bytes([value])
    if kind in (I16, I32, I64):
        return _put_varint(_zigzag(value))
    if kind == DOUBLE:
        return struct.pack("<d", value)
    if kind == BINARY:
        return _put_varint(len(value)) + value
    if kind in (LIST, SET):
        element, items = value
        head = (bytes([(len(items) << 4) | element]) if len(items) < 15
                else bytes([0xF0 | element]) + _put_varint(len(items)))
        body = b"".join(
            bytes([TRUE if item else FALSE]) if element in (TRUE, FALSE)
            else _encode_value(element, item) for item in items
        )
        return head + body
    if kind == STRUCT:
        return _encode_struct(value)
    raise ValueError(f"thrift type {kind} not handled")


def _encode_struct(fields: list[Field]) -> bytes:
    out = bytearray()
    last = 0
    for fid, kind, value in fields:
        if kind in (TRUE, FALSE):
            kind = TRUE if value else FALSE
        if 0 < fid - last <= 15:
            out.append(((fid - last) << 4) | kind)
        else:
            out.append(kind)
            out += _put_varint(_zigzag(fid))
        out += _encode_value(kind, value)
        last = fid
    out.append(0)
    return bytes(out)


def _set(fields: list[Field], fid: int, value: Any) -> None:
    for i, (f, kind, _) in enumerate(fields):
        if f == fid:
            fields[i] = (f, kind, value)


def _get(fields: list[Field], fid: int) -> Any:
    return next(value for f, _, value in fields if f == fid)


def claim(path: Path, *, rows: int | None = None, uncompressed: int | None = None) -> Path:
    """Rewrite ``path``'s footer so that the file, its first row group and each of its
    column chunks claim ``rows`` rows and/or ``uncompressed`` bytes once decompressed; the
    pages stay as they were."""
    data = path.read_bytes()
    assert data[:4] == b"PAR1" and data[-4:] == b"PAR1"
    size = struct.unpack_from("<I", data, len(data) - 8)[0]
    start = len(data) - 8 - size
    meta, _ = _struct(data, start)
    groups = _get(meta, 4)[1]  # FileMetaData.row_groups
    group = groups[0]
    if rows is not None:
        _set(meta, 3, rows)  # FileMetaData.num_rows
        _set(group, 3, rows)  # RowGroup.num_rows
    chunks = _get(group, 1)[1]  # RowGroup.columns
    for chunk in chunks:
        column = _get(chunk, 3)  # ColumnChunk.meta_data
        if rows is not None:
            _set(column, 5, rows)  # ColumnMetaData.num_values
        if uncompressed is not None:
            _set(column, 6, uncompressed)  # ColumnMetaData.total_uncompressed_size
    if uncompressed is not None:
        _set(group, 2, uncompressed * len(chunks))  # RowGroup.total_byte_size
    footer = _encode_struct(meta)
    path.write_bytes(data[:start] + footer + struct.pack("<I", len(footer)) + b"PAR1")
    return path
