"""Raw columns of a Parquet file, or of a folder of Parquet files, measured before decoding.

pyarrow (the ``parquet`` extra) reads the footers first: the schema of every file and the
row counts and sizes of its row groups.  From them alone the table is refused when it would
not fit (``MAX_HELD_BYTES`` of numbers and texts once read), when the files disagree about a
column, or when a file is damaged; only then are the columns decoded, the ones asked for
and no other, each handed over as a numpy array to the sheet layer's typing step
(:func:`stratpd_xl.input.sheet.frame_from_columns`), as CSV columns are.  Nested columns
(lists, structs, maps) and raw bytes are left out with a note, or refused when named.

Streaming a table larger than memory, chunk by chunk, belongs to the streamed engine
(docs/engine.md, "The streamed reader"); this module reads what fits.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import StratPDInputError

__all__ = ["PARQUET_SUFFIXES", "ParquetPlan", "parquet_columns", "parquet_plan"]

PARQUET_SUFFIXES = (".parquet",)
#: Most .parquet files in a folder: each footer is opened and checked before any is read.
MAX_PARQUET_FILES = 10_000
#: Bytes a text cell costs once held, besides its characters (counted from the footer's
#: uncompressed sizes): a pointer, and the typing step's code for it.  Text is read
#: dictionary-encoded, so a text repeated on many rows is one Python string, not one a row.
TEXT_CELL_BYTES = 24
#: Bytes a number, date or TRUE/FALSE costs once held.
NUMBER_CELL_BYTES = 8
#: Largest footer (the file's schema and row-group directory) parsed: a real table's is
#: kilobytes to a few megabytes; pyarrow parses any size it is given, and each column chunk
#: it lists is looked at once here.
MAX_FOOTER_BYTES = 64 * 1024**2
#: Columns listed in a sentence.
_SHOWN = 8

_EXTRA = 'pip install "stratpd-xl[parquet]"'


@dataclass
class _Column:
    """One top-level column: its kind for the typing step and where it is read from."""

    name: str
    kind: str  # "number", "text", "date", "bool", "empty", or why it is left out
    arrow_type: Any
    files: list[int] = field(default_factory=list)


def _pyarrow(path: Path) -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise StratPDInputError(
            f'reading "{path.name}" needs the parquet extra (pyarrow): run {_EXTRA}, '
            "or save the table as .csv"
        ) from exc
    return pq


def _kind(pa: Any, t: Any) -> str:
    """What the typing step will make of an Arrow type, or why the column is left out."""
    types = pa.types
    if types.is_dictionary(t):
        return _kind(pa, t.value_type)
    if types.is_boolean(t):
        return "bool"
    if types.is_integer(t) or types.is_floating(t) or types.is_decimal(t):
        return "number"
    if types.is_string(t) or types.is_large_string(t) or getattr(types, "is_string_view",
                                                                  lambda _: False)(t):
        return "text"
    if types.is_timestamp(t) or types.is_date(t):
        return "date"
    if types.is_null(t):
        return "empty"
    if types.is_nested(t):
        return "nested values"
    if types.is_binary(t) or types.is_large_binary(t) or types.is_fixed_size_binary(t):
        return "raw bytes"
    return "values of another type"


def _files(path: Path) -> list[Path]:
    """The .parquet files of a folder (sorted, recursively, hidden and "_" files skipped, as
    Spark and Dask write "_SUCCESS" and "_metadata" beside the data), or the file itself."""
    if not path.is_dir():
        return [path]
    found: list[Path] = []
    for root, dirs, names in os.walk(path):  # symlinked folders are not followed: no loops
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        for name in sorted(names):
            if name.lower().endswith(PARQUET_SUFFIXES) and not name.startswith((".", "_")):
                found.append(Path(root) / name)
                if len(found) > MAX_PARQUET_FILES:
                    raise StratPDInputError(
                        f'"{path}" holds more than {MAX_PARQUET_FILES:,} .parquet files; '
                        "give a folder of fewer, larger files"
                    )
    if not found:
        raise StratPDInputError(
            f'"{path}" is a folder without .parquet files; give the path of a .csv, .xlsx, '
            ".ods or .parquet file, or of a folder of .parquet files"
        )
    for file in found:  # a FIFO named x.parquet would block the reader forever
        try:
            mode = file.stat().st_mode
        except OSError as exc:  # a dangling link, a file removed meanwhile
            raise StratPDInputError(
                f'cannot open "{file}": {exc.strerror or exc}; check that you may read it'
            ) from exc
        if not stat.S_ISREG(mode):
            raise StratPDInputError(
                f'"{file}" is not a regular file (a device, pipe or socket); remove it from '
                "the folder"
            )
    return found


def _size(n: float) -> str:
    return f"{n / 1024**2:,.0f} MB" if n >= 1024**2 else f"{n:,.0f} bytes"


def _listed(names: Sequence[str]) -> str:
    shown = ", ".join(f'"{n}"' for n in names[:_SHOWN])
    return shown + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")


def parquet_columns(
    path: Path,
    columns: Sequence[str] | None,
    max_held_bytes: int,
    max_columns: int,
    named: Sequence[str] = (),
) -> tuple[list[str], list[np.ndarray], list[str], dict[str, Any]]:
    """(names, numpy columns, notes, source) of a Parquet file or folder, after the checks.

    ``columns`` are the exact names to read (``None``: every column that can be analysed);
    ``named`` are names the caller will use as typed (a target, a feature): one that can
    only be a column left out (nested, raw bytes) is refused here, with its type.
    """
    pq = _pyarrow(path)
    import pyarrow as pa

    plan = parquet_plan(path, columns, max_columns, named)
    files, metas, wanted, label = plan.files, plan.metas, plan.wanted, plan.label
    notes = list(plan.notes)
    rows = plan.rows
    _check_size(files, metas, wanted, rows, label, max_held_bytes)
    if rows == 0:
        raise StratPDInputError(
            f'"{label}" holds no rows (only the columns {_listed([c.name for c in wanted])}); '
            "write the table's rows into it"
        )

    names = [c.name for c in wanted]
    arrays: list[list[np.ndarray]] = [[] for _ in wanted]
    zones: dict[str, str] = {}
    for i, file in enumerate(files):
        if metas[i].num_rows == 0:
            continue
        present = [c.name for c in wanted if i in c.files]
        texts = [c.name for c in wanted if c.kind == "text" and c.name in present]
        try:
            with pq.ParquetFile(file, read_dictionary=texts) as handle:
                for j, col in enumerate(wanted):
                    if col.name not in present:  # an all-null column absent from this file
                        arrays[j].append(np.full(metas[i].num_rows, None, dtype=object))
                        continue
                    # A column at a time: its Arrow buffers are freed once it is converted,
                    # so the reader holds one column twice at most, not the table.
                    chunked = handle.read(columns=[col.name], use_pandas_metadata=False)
                    try:
                        arrays[j].append(_numpy(pa, chunked.column(0), zones, col.name))
                    except (pa.ArrowException, UnicodeDecodeError) as exc:
                        if col.kind != "text":
                            raise
                        # Parquet text is UTF-8; other bytes fail when they become str.
                        raise StratPDInputError(
                            f'column "{col.name}" of "{file.name}" holds text that is not '
                            "UTF-8 (damaged, or bytes written in another encoding); write it "
                            "again as UTF-8 text"
                        ) from exc
                    del chunked
        except StratPDInputError:
            raise
        except (pa.ArrowException, OSError, ValueError, UnicodeDecodeError) as exc:
            raise damaged(file) from exc
    out = [parts[0] if len(parts) == 1 else _concatenate(parts) for parts in arrays]
    for name, zone in zones.items():
        notes.append(
            f'column "{name}" of "{label}" holds times in time zone {zone}: read as the '
            "local times there (the zone itself is dropped)"
        )
    source = {"path": str(path), "format": "parquet", "files": len(files)}
    return names, out, notes, source


_READ = ("number", "text", "date", "bool")


def _check_footer(file: Path) -> None:
    """Refuse a footer larger than ``MAX_FOOTER_BYTES`` from its declared length (the 4
    bytes before the closing "PAR1"), before pyarrow parses it."""
    try:
        with file.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            if size < 12:
                return  # too short to be Parquet: pyarrow says so
            handle.seek(-8, os.SEEK_END)
            tail = handle.read(8)
    except OSError as exc:
        raise StratPDInputError(
            f'cannot read "{file}": {exc.strerror or exc}; check that you may read it'
        ) from exc
    length = int.from_bytes(tail[:4], "little")
    # A length beyond the file is a damaged file, which pyarrow reports.
    if tail[4:] == b"PAR1" and MAX_FOOTER_BYTES < length <= size - 12:
        raise StratPDInputError(
            f'the footer of "{file.name}" (its list of columns and row groups) is '
            f"{_size(length)}, over the {_size(MAX_FOOTER_BYTES)} limit (a table's is "
            "kilobytes); write the table again in fewer, larger row groups"
        )


def _key(name: str) -> str:
    """A name as the column resolver matches it (case, spaces and underscores ignored)."""
    return "".join(name.casefold().replace("_", " ").split())


def _refuse_kind(col: _Column, label: str) -> None:
    raise StratPDInputError(
        f'column "{col.name}" of "{label}" holds {_what(col.kind, col.arrow_type)}, which '
        "cannot be analysed; choose a column of numbers, dates or text, or write its values "
        "into plain columns first"
    )


def _what(kind: str, arrow_type: Any) -> str:
    return {"number": "numbers", "text": "text", "date": "dates", "bool": "TRUE/FALSE",
            "empty": "no values"}.get(kind, f"{kind} ({arrow_type})")


def _check_size(files: list[Path], metas: list[Any], wanted: list[_Column], rows: int,
                label: str, limit: int) -> None:
    """Refuse, from the footers alone, a table that would not fit once read: its rows times
    the width each column takes once typed, and what its column chunks declare they
    decompress to (a row group claiming 10 GB is refused here, before it is decoded)."""
    width = sum(TEXT_CELL_BYTES if c.kind == "text" else NUMBER_CELL_BYTES for c in wanted)
    names = {c.name for c in wanted}
    texts = {c.name for c in wanted if c.kind == "text"}
    declared = characters = 0
    for meta in metas:
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            for k in range(group.num_columns):
                chunk = group.column(k)
                if chunk.path_in_schema in names:
                    size = max(chunk.total_uncompressed_size, 0)
                    declared += size
                    characters += size if chunk.path_in_schema in texts else 0
    held = rows * width + characters
    if held <= limit and declared <= limit:
        return
    what = (f"about {_size(held)} once read ({rows:,} rows x {len(wanted):,} columns)"
            if held >= declared else
            f"{_size(declared)} of data once decompressed ({rows:,} rows x "
            f"{len(wanted):,} columns, as "
            f"{'their footers declare' if len(files) > 1 else 'its footer declares'})")
    raise StratPDInputError(
        f'"{label}" holds {what}, over the {_size(limit)} limit for a table held in memory; '
        "read fewer columns (columns=[...] in Python), or write a sample of the rows or only "
        "the columns to analyse to a smaller file (tables larger than memory come with the "
        "streamed engine)"
    )


def _numpy(pa: Any, chunked: Any, zones: dict[str, str], name: str) -> np.ndarray:
    """One Arrow column as the array the typing step takes: float64 or int64 numbers (NaN
    for nulls), object arrays of str/bool/None, datetime64 dates (NaT for nulls)."""
    import pyarrow.compute as pc

    t = chunked.type
    if pa.types.is_dictionary(t):
        if _kind(pa, t.value_type) == "text":  # one Python string per distinct text
            return _dictionary_texts(pa, chunked)
        chunked = chunked.cast(t.value_type)
        t = t.value_type
    if pa.types.is_decimal(t):
        chunked = chunked.cast(pa.float64(), safe=False)
    elif pa.types.is_timestamp(t) and t.tz is not None:
        zones[name] = t.tz
        chunked = pc.local_timestamp(chunked)
    elif pa.types.is_date(t):
        chunked = chunked.cast(pa.timestamp("ms"))
    if pa.types.is_timestamp(chunked.type):
        # Microseconds, as a CSV's dates are typed: the typing step reads them cell by cell
        # (datetime objects; nanoseconds would come back as integers), years 1 to 9999.
        return chunked.cast(pa.timestamp("us")).to_numpy()
    if pa.types.is_null(chunked.type):
        return np.full(len(chunked), None, dtype=object)
    values = chunked.to_numpy()
    if values.dtype.kind == "f" and values.dtype != np.float64:
        values = values.astype(np.float64)
    return values


def _dictionary_texts(pa: Any, chunked: Any) -> np.ndarray:
    """A dictionary-encoded text column as an object array whose rows share the dictionary's
    strings (nulls None): a pointer a row instead of a string a row."""
    out = np.empty(len(chunked), dtype=object)
    at = 0
    for chunk in chunked.chunks:
        words = chunk.dictionary.to_numpy(zero_copy_only=False)
        codes = chunk.indices
        missing = codes.is_null().to_numpy(zero_copy_only=False)
        index = codes.fill_null(0).to_numpy() if len(words) else np.zeros(len(chunk), int)
        part = words[index] if len(words) else np.full(len(chunk), None, dtype=object)
        part[missing] = None
        out[at : at + len(chunk)] = part
        at += len(chunk)
    return out


def _concatenate(parts: list[np.ndarray]) -> np.ndarray:
    """Columns of several files as one: int and float files give floats, an object file
    (text, or TRUE/FALSE with blanks) makes the whole column object."""
    if any(p.dtype == object for p in parts) and not all(p.dtype == object for p in parts):
        parts = [p.astype(object) if p.dtype != object else p for p in parts]
    return np.concatenate(parts)


@dataclass
class ParquetPlan:
    """What the footers of a Parquet file or folder say, checked before any row is decoded."""

    path: Path
    label: str
    files: list[Path]
    metas: list[Any]
    schemas: list[Any]
    wanted: list[_Column]
    notes: list[str]

    @property
    def rows(self) -> int:
        return sum(m.num_rows for m in self.metas)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.wanted]


def damaged(file: Path) -> StratPDInputError:
    """The sentence for a file pyarrow cannot read as Parquet."""
    return StratPDInputError(
        f'cannot read "{file.name}" as a Parquet file (damaged, cut short or not Parquet); '
        "write it again from its source, or save the table as .csv"
    )


def parquet_plan(
    path: Path, columns: Sequence[str] | None, max_columns: int, named: Sequence[str] = ()
) -> ParquetPlan:
    """The files, footers and columns to read of a Parquet file or folder, after the checks
    that need no row: damaged or oversized footers, too many columns, a column repeated or
    typed differently in two files or missing from one, nested columns named.  Shared by
    the whole read (:func:`parquet_columns`) and the streamed one (:mod:`.stream`)."""
    pq = _pyarrow(path)
    import pyarrow as pa

    files = _files(path)
    label = path.name if not path.is_dir() else f"{path.name}/"

    metas = []
    schemas = []
    for file in files:
        _check_footer(file)
        try:
            with pq.ParquetFile(file) as handle:
                metas.append(handle.metadata)
                schemas.append(handle.schema_arrow)
        except (pa.ArrowException, OSError, ValueError, UnicodeDecodeError) as exc:
            raise damaged(file) from exc

    # Every column of every file, by name, with the kind each file gives it.
    found: dict[str, _Column] = {}
    for i, (file, schema) in enumerate(zip(files, schemas, strict=True)):
        if len(schema) > max_columns:
            raise StratPDInputError(
                f'"{file.name}" has {len(schema):,} columns, more than the {max_columns:,} '
                "of a worksheet; write a file with only the columns to analyse"
            )
        seen: set[str] = set()
        for f in schema:
            if f.name in seen:
                raise StratPDInputError(
                    f'column "{f.name}" appears twice in "{file.name}"; rename one and write '
                    "the file again"
                )
            seen.add(f.name)
            kind = _kind(pa, f.type)
            col = found.get(f.name)
            if col is None:
                found[f.name] = col = _Column(f.name, kind, f.type)
            elif col.kind == "empty":
                col.kind, col.arrow_type = kind, f.type
            elif kind not in (col.kind, "empty"):
                first = files[col.files[0]].name
                raise StratPDInputError(
                    f'column "{f.name}" holds {_what(col.kind, col.arrow_type)} in "{first}" '
                    f'but {_what(kind, f.type)} in "{file.name}"; write the files with one '
                    "type for each column (or read them one at a time)"
                )
            col.files.append(i)

    if columns is None:
        wanted = [c for c in found.values() if c.kind in _READ or c.kind == "empty"]
        left = [c for c in found.values() if c not in wanted]
        keys = {_key(n) for n in named}
        for col in left:
            if _key(col.name) in keys:
                _refuse_kind(col, label)
    else:
        missing = [c for c in columns if c not in found]
        if missing:
            raise StratPDInputError(
                f'column "{missing[0]}" not found in "{label}"; its columns are: '
                + ", ".join(list(found)[:50]) + (" ..." if len(found) > 50 else "")
            )
        wanted = [found[c] for c in dict.fromkeys(columns)]
        for col in wanted:
            if col.kind not in _READ and col.kind != "empty":
                _refuse_kind(col, label)
        left = []
    if len(files) > 1:
        absent = [(c, [f for j, f in enumerate(files) if j not in c.files]) for c in wanted]
        absent = [(c, fs) for c, fs in absent if fs]
        if absent:
            col, where = absent[0]
            raise StratPDInputError(
                f'column "{col.name}" is missing from "{where[0].name}"'
                + (f" and {len(where) - 1} more of the files" if len(where) > 1 else "")
                + f' of "{label}" (it is in "{files[col.files[0]].name}"); write the files '
                "with the same columns, or leave that file out"
            )
    notes: list[str] = []
    if left:
        kinds = sorted({c.kind for c in left})
        notes.append(
            f'left out {len(left)} column{"s" if len(left) > 1 else ""} of "{label}" that '
            f"cannot be analysed ({', '.join(kinds)}): {_listed([c.name for c in left])}; "
            "write their values into plain columns of numbers or text to analyse them"
        )
    if not wanted:
        raise StratPDInputError(
            f'"{label}" holds no columns of numbers, dates or text; write the table with '
            "plain columns"
        )
    return ParquetPlan(path, label, files, metas, schemas, wanted, notes)
