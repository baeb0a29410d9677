"""Tables read chunk by chunk, with memory bounded by the chunk, not the file (docs/engine.md).

A ``.parquet`` file or folder is read with pyarrow (the ``parquet`` extra) a batch at a time,
after the footers' checks of :func:`._parquet.parquet_plan`; a large CSV with pandas' C
reader in chunks.  Either way each chunk's raw columns go through the sheet layer's typing
step (:func:`stratpd_xl.input.sheet.typed_column`) and then through one fixed
:class:`Typing`, so every chunk is typed like the first: a chunk whose column is all blank
stays a column of numbers, a stray word in a column of numbers is a blank with a note.

:func:`sketch` is "pass 0": one read that collects, in a mergeable :class:`Sketch`, what the
fit needs from all rows: the row count, each column's gaps, minimum and maximum, each text
column's levels with their rows and sums of the target, the target's largest absolute value
and first distinct values, and the sample ``S``: the rows with the smallest
``hash(seed, row id)`` (a bottom-k sketch, which merges across chunks and Dask partitions
and needs no row count in advance).  A table of at most ``sample_rows`` rows has ``S`` = all
rows in their order.  Row ids are positions in the whole table and are each chunk's index.
"""

from __future__ import annotations

import io
import math
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pandas as pd

from ..errors import StratPDInputError
from ..params import STRATA_ROWS
from ._parquet import PARQUET_SUFFIXES, _numpy, _size, damaged, parquet_plan
from .sheet import typed_column
from .sheet._values import classify_text, classify_value, column_names, is_blank

__all__ = [
    "CHUNK_ROWS",
    "MAX_LEVELS",
    "SAMPLE_ROWS",
    "ChunkProgress",
    "Sketch",
    "StreamedTable",
    "Typing",
    "open_table",
    "row_keys",
    "sample_threshold",
    "sketch",
    "sketch_frame",
]

#: Rows per chunk read (about 75 MB for 9 numbers a row).
CHUNK_ROWS = 2**20
#: Rows of the sample ``S`` the strata are fitted on (docs/engine.md, ``strata_rows``).
SAMPLE_ROWS = STRATA_ROWS
#: Most levels of a text column counted in pass 0; beyond them it is identifier-like.
MAX_LEVELS = 65_536
#: Distinct target values kept (a yes/no target has two).
Y_VALUES = 3
#: What a streamed read may hold at once (the chunk and the sample), as for a whole table.
MAX_HELD_BYTES = 512 * 1024**2
#: Bytes a cell costs once typed, as ``_parquet`` counts them.
_CELL_BYTES = {"text": 24}
_NUMBER_BYTES = 8

KINDS = ("number", "date", "bool", "text")


# --------------------------------------------------------------------------- row keys


def row_keys(rows: np.ndarray, seed: int) -> np.ndarray:
    """``hash(seed, row id)`` for each row id: splitmix64, uint64, the same on every machine.

    The sample is the rows with the smallest keys, so it is drawn without a row count and
    the same rows are drawn however the table is cut into chunks or partitions.
    """
    with np.errstate(over="ignore"):
        z = np.asarray(rows, dtype=np.uint64) + np.uint64(
            (0x9E3779B97F4A7C15 * (int(seed) + 1)) & 0xFFFFFFFFFFFFFFFF
        )
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def sample_threshold(rows: int, seed: int, k: int) -> int | None:
    """The largest key of the ``k`` rows with the smallest keys among row ids ``0 .. rows -
    1`` (None when ``k >= rows``: every row is in the sample).

    Known from the row count alone, so every chunk or partition can drop at once the rows
    that cannot be in the sample, and pass 0 holds the sample, not a sample per partition.
    Computed in blocks of about ``2 k`` ids (``2^16`` to ``2^22``): what it holds is bounded
    by the sample's size, not the table's (about 100 MB for ``k`` = 2^22).
    """
    if k >= rows:
        return None
    block = min(1 << 22, max(1 << 16, 2 * k))
    best = np.empty(0, dtype=np.uint64)
    for start in range(0, rows, block):
        keys = row_keys(np.arange(start, min(rows, start + block), dtype=np.uint64), seed)
        both = np.concatenate([best, keys])
        best = both if both.size <= k else np.partition(both, k - 1)[:k]
    return int(best.max())


# --------------------------------------------------------------------------- typing


def _kind_of(series: pd.Series) -> str | None:
    """The kind the typing step gave a column, or None when it holds no value."""
    if not series.notna().any():
        return None
    dtype = series.dtype
    if dtype.kind in "iuf":
        return "number"
    if dtype.kind == "M":
        return "date"
    if dtype.kind == "b":
        return "bool"
    if dtype.kind == "O" and all(isinstance(v, bool | np.bool_) for v in series.dropna()[:64]):
        return "bool"
    return "text"


@dataclass
class Typing:
    """Each column's kind, fixed by the first chunk holding a value in it.

    Later chunks are made that kind whatever their own cells would say; cells that are not
    of it become blanks, counted for one note per column (:meth:`notes`).  Columns of
    numbers are float64 while streaming; :meth:`final` makes them int64 when every value
    read was whole, as the typing step does for a whole table.
    """

    decimal: str | None = None
    kinds: dict[str, str | None] = field(default_factory=dict)
    whole: dict[str, bool] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)
    step_notes: list[str] = field(default_factory=list)

    def frame(self, names: Sequence[str], raws: Sequence[np.ndarray], start: int) -> pd.DataFrame:
        """Raw columns of one chunk -> the typed chunk, index = row ids from ``start``."""
        typed: dict[str, pd.Series] = {}
        for name, raw in zip(names, raws, strict=True):
            series, notes = typed_column(name, raw, self.decimal)
            for note in notes:  # the step's own notes, once each (they are per chunk)
                if note not in self.step_notes and len(self.step_notes) < 50:
                    self.step_notes.append(note)
            typed[name] = self._fixed(name, series, raw)
        frame = pd.DataFrame(typed)
        frame.index = pd.RangeIndex(start, start + len(frame))
        return frame

    def _fixed(self, name: str, series: pd.Series, raw: np.ndarray) -> pd.Series:
        kind = _kind_of(series)
        fixed = self.kinds.get(name)
        if fixed is None:
            self.kinds[name] = fixed = kind
        if fixed is None or kind is None:
            # Nothing read yet, or nothing in this chunk: blanks of the column's kind.
            return _blank(name, fixed, len(series))
        if kind != fixed:
            series = self._coerce(name, raw, fixed)
        if fixed == "number":
            values = series.to_numpy(dtype=float, na_value=np.nan)
            finite = values[~np.isnan(values)]
            if self.whole.get(name, True):
                self.whole[name] = bool(np.all(finite == np.round(finite))
                                        and np.all(np.abs(finite) < 2**53))
            return pd.Series(values, name=name)
        return series.reset_index(drop=True)

    def _coerce(self, name: str, raw: np.ndarray, kind: str) -> pd.Series:
        """Each cell of ``raw`` as ``kind`` by the typing step's rules for one cell, the
        others blank (classified once per distinct value)."""
        arr = np.asarray(raw)
        if arr.dtype != object:
            arr = np.array(arr.tolist(), dtype=object)
        codes, uniques = pd.factorize(arr, use_na_sentinel=True)
        values = np.empty(len(uniques) + 1, dtype=object)
        bad = np.zeros(len(uniques) + 1, dtype=bool)
        for u, cell in enumerate(uniques):
            if is_blank(cell):
                continue
            if isinstance(cell, str):
                got, value = classify_text(cell.strip(), self.decimal or ".", "mdy")
            else:
                got, value = classify_value(cell)
            if kind == "text":
                values[u] = cell.strip() if isinstance(cell, str) else str(value)
            elif got == kind:
                values[u] = value
            else:
                bad[u] = True
        picked = values[codes]  # the sentinel -1 picks the last slot: None
        count = int(bad[codes].sum())
        if count:
            self.dropped[name] = self.dropped.get(name, 0) + count
            shown = self.examples.setdefault(name, [])
            for u in np.flatnonzero(bad[:-1])[:3]:
                if len(shown) < 3 and str(uniques[u]).strip() not in shown:
                    shown.append(str(uniques[u]).strip())
        if kind == "number":
            return pd.Series(np.where(pd.isna(picked), np.nan, picked).astype(float), name=name)
        if kind == "date":
            return pd.Series(pd.to_datetime(pd.Series(picked, dtype=object)), name=name)
        if kind == "text":
            return pd.Series(picked, name=name, dtype="str")
        return pd.Series(picked, name=name, dtype=object)

    def final(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``frame`` (the sample, or a chunk) with whole-number columns as int64 when every
        value read in them was whole and none is missing, as a whole table is typed."""
        out = frame.copy(deep=False)
        for name in out.columns:
            if self.kinds.get(name) == "number" and self.whole.get(name, False):
                values = out[name].to_numpy()
                if values.dtype.kind == "f" and not np.isnan(values).any():
                    out[name] = values.astype(np.int64)
        return out

    def notes(self, where: str) -> list[str]:
        """The typing step's notes, and one per column whose later chunks held cells of
        another kind than its first."""
        found = list(self.step_notes)
        for name, count in self.dropped.items():
            kind = self.kinds[name]
            word = {"number": "a number", "date": "a date", "bool": "TRUE/FALSE"}.get(kind, kind)
            shown = ", ".join(f'"{e}"' for e in self.examples.get(name, []))
            found.append(
                f'column "{name}" of {where}: {count:,} cell{"s" if count > 1 else ""} that '
                f"{'are' if count > 1 else 'is'} not {word} ({shown}) treated as missing "
                "(the column's kind was fixed by its first rows)"
            )
        return found


def _blank(name: str, kind: str | None, n: int) -> pd.Series:
    if kind in (None, "number"):
        return pd.Series(np.full(n, np.nan), name=name)
    if kind == "date":
        return pd.Series(np.full(n, np.datetime64("NaT"), dtype="datetime64[us]"), name=name)
    if kind == "text":
        return pd.Series(np.full(n, None, dtype=object), name=name, dtype="str")
    return pd.Series(np.full(n, None, dtype=object), name=name, dtype=object)


# --------------------------------------------------------------------------- readers


@dataclass
class StreamedTable:
    """A table on disk read in chunks: its columns, rows when the file says, and notes.

    Iterate :meth:`chunks` for typed chunks (index = row ids); the :class:`Typing` is kept
    across iterations, so a second pass over the file types every chunk as the first did.
    """

    path: Path
    format: str  # "parquet" or "text"
    names: list[str]
    chunk_rows: int
    rows: int | None  # known from the footers; None for a CSV until read once
    size: int  # bytes on disk, for progress when rows are unknown
    typing: Typing
    row_bytes: int  # what a row of all the columns costs once typed
    notes: list[str] = field(default_factory=list)
    _reader: Any = None
    _columns: list[str] | None = None

    @property
    def label(self) -> str:
        return f'"{self.path.name}"'

    def chunks(self, columns: Sequence[str] | None = None,
               progress: ChunkProgress | None = None) -> Iterator[pd.DataFrame]:
        """Typed chunks of ``columns`` (default all), each of at most ``chunk_rows`` rows."""
        wanted = list(columns) if columns is not None else list(self.names)
        missing = [c for c in wanted if c not in self.names]
        if missing:
            raise StratPDInputError(
                f'column "{missing[0]}" not found in {self.label}; its columns are: '
                + ", ".join(self.names[:50]) + (" ..." if len(self.names) > 50 else "")
            )
        start = 0
        for raws, done in self._reader(wanted):
            n = len(raws[0]) if raws else 0
            if n == 0:
                continue
            frame = self.typing.frame(wanted, raws, start)
            start += n
            if progress is not None:
                progress.chunk(start, done)
            yield frame
        if self.rows is None:
            self.rows = start


def open_table(
    path: str | Path,
    *,
    columns: Sequence[str] | None = None,
    chunk_rows: int = CHUNK_ROWS,
    decimal: str | None = None,
    encoding: str | None = None,
) -> StreamedTable:
    """Open a ``.parquet`` file or folder, or a ``.csv``/``.txt``/``.tsv`` file, for reading
    in chunks; the checks that need no row (footers, row groups, the header line) run here.

    Parameters
    ----------
    columns
        Exact names of the columns to read; default every column that can be analysed.
    chunk_rows
        Rows a chunk holds at most; lowered so that a chunk holds at most a quarter of
        ``MAX_HELD_BYTES`` once typed.
    decimal, encoding
        As for :func:`stratpd_xl.input.files.read_table` (text files).
    """
    path = Path(path)
    if chunk_rows < 1:
        raise StratPDInputError(f"chunk_rows must be at least 1; got {chunk_rows}")
    if decimal not in (None, ".", ","):
        raise StratPDInputError(f'the decimal separator must be "." or ","; got "{decimal}"')
    if path.suffix.lower() in PARQUET_SUFFIXES or path.is_dir():
        if encoding is not None:
            raise StratPDInputError(
                f'"{path.name}" is a Parquet table, whose text is always UTF-8; leave out '
                "--encoding"
            )
        return _open_parquet(path, columns, chunk_rows, decimal)
    from .files import TEXT_SUFFIXES

    if path.suffix.lower() in TEXT_SUFFIXES:
        return _open_text(path, columns, chunk_rows, decimal, encoding)
    raise StratPDInputError(
        f'"{path.name}" cannot be read in chunks; give a .parquet file or folder, or a .csv '
        "file (workbooks are read whole)"
    )


def _bounded_rows(chunk_rows: int, width: int) -> int:
    return max(1, min(chunk_rows, MAX_HELD_BYTES // 4 // max(width, 1)))


def _open_parquet(path: Path, columns: Sequence[str] | None, chunk_rows: int,
                  decimal: str | None) -> StreamedTable:
    from .files import MAX_COLUMNS

    plan = parquet_plan(path, columns, MAX_COLUMNS)
    if plan.rows == 0:
        raise StratPDInputError(f'"{plan.label}" holds no rows; write the table\'s rows into it')
    width = sum(_CELL_BYTES.get(c.kind, _NUMBER_BYTES) for c in plan.wanted)
    _check_row_groups(plan)
    _check_row_counts(plan)
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = _bounded_rows(chunk_rows, width)
    texts = {c.name for c in plan.wanted if c.kind == "text"}

    def read(wanted: list[str]) -> Iterator[tuple[list[np.ndarray], float]]:
        zones: dict[str, str] = {}
        done = 0
        for file, meta in zip(plan.files, plan.metas, strict=True):
            if meta.num_rows == 0:
                continue
            try:
                # A file at a time, a batch at a time, nothing pre-buffered: the reader holds
                # about two chunks beyond the one being typed (pyarrow.dataset's scanner, even
                # with a read-ahead of one batch and one file, held 5.5 MB against 2.3 MB for
                # chunks of 640 KB).  Text is read dictionary-encoded: a string per distinct.
                with pq.ParquetFile(file, pre_buffer=False,
                                    read_dictionary=[n for n in wanted if n in texts]) as handle:
                    for batch in handle.iter_batches(batch_size=rows, columns=wanted,
                                                     use_threads=False,
                                                     use_pandas_metadata=False):
                        if batch.num_rows == 0:
                            continue
                        raws = []
                        for name in wanted:
                            column = pa.chunked_array([batch.column(name)])
                            try:
                                raws.append(_numpy(pa, column, zones, name))
                            except (pa.ArrowException, UnicodeDecodeError) as exc:
                                raise StratPDInputError(
                                    f'column "{name}" of "{file.name}" holds text that is not '
                                    "UTF-8 (damaged, or bytes written in another encoding); "
                                    "write it again as UTF-8 text"
                                ) from exc
                        done += batch.num_rows
                        yield raws, done / plan.rows
            except StratPDInputError:
                raise
            except (pa.ArrowException, OSError, ValueError, UnicodeDecodeError) as exc:
                raise damaged(file) from exc

    table = StreamedTable(path, "parquet", plan.names, rows, plan.rows,
                          sum(f.stat().st_size for f in plan.files), Typing(decimal), width,
                          list(plan.notes))
    table._reader = read
    return table


#: Most rows a Parquet file may claim per byte of its size.  A table's columns vary, so even
#: bit-packed they take bits a row; a footer claiming more rows is damaged or forged (and
#: pass 0 would hash every claimed row id before reading one).
MAX_ROWS_PER_BYTE = 1000


def _check_row_counts(plan: Any) -> None:
    for file, meta in zip(plan.files, plan.metas, strict=True):
        size = file.stat().st_size
        if meta.num_rows > MAX_ROWS_PER_BYTE * max(size, 1):
            raise StratPDInputError(
                f'the footer of "{file.name}" claims {meta.num_rows:,} rows in a file of '
                f"{_size(size)} (damaged or forged); write it again from its source"
            )


def _check_row_groups(plan: Any) -> None:
    """Refuse a row group that would hold more than ``MAX_HELD_BYTES`` of the columns read
    once decompressed: the reader decodes a row group's column chunks whole."""
    names = set(plan.names)
    for file, meta in zip(plan.files, plan.metas, strict=True):
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            size = sum(max(group.column(k).total_uncompressed_size, 0)
                       for k in range(group.num_columns)
                       if group.column(k).path_in_schema in names)
            if size > MAX_HELD_BYTES:
                raise StratPDInputError(
                    f'row group {g + 1} of "{file.name}" holds {_size(size)} of the columns '
                    f"read once decompressed ({group.num_rows:,} rows), over the "
                    f"{_size(MAX_HELD_BYTES)} a chunk may hold; write the file again in row "
                    "groups of about a million rows (row_group_size=1_000_000)"
                )


def _open_text(path: Path, columns: Sequence[str] | None, chunk_rows: int,
               decimal: str | None, encoding: str | None) -> StreamedTable:
    from . import files

    files._check_regular_file(path, sized=False)
    with path.open("rb") as handle:
        head = handle.read(files._SNIFF_CHARS)
    size = path.stat().st_size
    if len(head) == size:
        files._check_line_length(head, path)
    bom = files._UTF8_BOM
    text, used = files._decode(head if len(head) == size else _whole_lines(head), encoding,
                               path)
    skip_bytes = len(bom) if head.startswith(bom) and used == "utf-8" else 0
    import re

    hint = re.match(r'"?sep=([^\r\n])"?[ \t]*\r?\n', text)
    named = hint.group(1) if hint else None
    if hint:
        text = text[hint.end():]
    dialect = files.sniff_text(text, delimiter=named)
    delimiter = dialect["delimiter"]
    if decimal is None:
        decimal = dialect["decimal"]
    reader_encoding = "utf-8" if used == "utf-8" else used
    first = pd.read_csv(io.StringIO(text), sep=delimiter, nrows=0, dtype=str,
                        skipinitialspace=False, engine="c")
    header = column_names(list(first.columns))
    wanted_all = list(header)
    if columns is not None:
        missing = [c for c in columns if c not in wanted_all]
        if missing:
            raise StratPDInputError(
                f'column "{missing[0]}" not found in "{path.name}"; its columns are: '
                + ", ".join(wanted_all[:50]) + (" ..." if len(wanted_all) > 50 else "")
            )
        wanted_all = [c for c in wanted_all if c in set(columns)]
    # Text columns are not known before they are read: each counted as a text cell.
    width = len(wanted_all) * _CELL_BYTES["text"]
    rows = _bounded_rows(chunk_rows, width)

    def read(wanted: list[str]) -> Iterator[tuple[list[np.ndarray], float]]:
        positions = [header.index(n) for n in wanted]
        with path.open("rb") as raw:
            raw.seek(skip_bytes)
            if hint:
                raw.readline()
            handle = _LineLimit(raw, path, files.MAX_LINE_BYTES)
            try:
                reader = pd.read_csv(
                    handle, sep=delimiter, header=0, names=header, usecols=positions,
                    dtype=str, keep_default_na=False, na_values=[""], chunksize=rows,
                    encoding=reader_encoding, engine="c", skip_blank_lines=True,
                    on_bad_lines="error", quotechar='"', low_memory=False,
                )
                for chunk in reader:
                    raws = [chunk[n].to_numpy(dtype=object) for n in wanted]
                    yield raws, min(handle.tell() / max(size, 1), 1.0)
            except StratPDInputError:
                raise
            except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
                raise StratPDInputError(
                    f'cannot read "{path.name}" as a table of {_delimiter_name(delimiter)}-'
                    f"separated text: {str(exc).strip().splitlines()[-1]}; check the row it "
                    "names, or save the table again as .csv"
                ) from exc

    table = StreamedTable(path, "text", wanted_all, rows, None, size, Typing(decimal), width)
    table._reader = read
    return table


class _LineLimit:
    """A binary file that refuses, as it is read, a line longer than ``limit`` bytes: the C
    reader would hold such a line whole (a file of one 10 GB "line")."""

    def __init__(self, handle: Any, path: Path, limit: int) -> None:
        self.handle, self.path, self.limit = handle, path, limit
        self.run = 0  # bytes since the last line break
        self.line = 1

    def read(self, size: int = -1) -> bytes:
        block = self.handle.read(size)
        last = block.rfind(b"\n")
        if last < 0:
            self.run += len(block)
        else:
            self.line += block.count(b"\n")
            self.run = len(block) - last - 1
        if self.run > self.limit:
            raise StratPDInputError(
                f'line {self.line:,} of "{self.path.name}" is over {_size(self.limit)} long '
                "without a line break; check that the file is a table saved as CSV, one row a "
                "line"
            )
        return block

    def tell(self) -> int:
        return self.handle.tell()

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.handle)


def _whole_lines(head: bytes) -> bytes:
    """The head of a file cut after its last line break (no half character or line)."""
    cut = head.rfind(b"\n")
    return head[: cut + 1] if cut > 0 else head


def _delimiter_name(delimiter: str) -> str:
    return {",": "comma", ";": "semicolon", "\t": "tab", "|": "bar"}.get(delimiter, delimiter)


# --------------------------------------------------------------------------- progress


class ChunkProgress:
    """One line per chunk on ``stream`` (stderr): rows read, share done and an ETA.

    ``quiet`` prints nothing.  On a terminal the line is redrawn in place.
    """

    def __init__(self, label: str, *, total_rows: int | None = None,
                 stream: TextIO | None = None, quiet: bool = False) -> None:
        self.label = label
        self.total_rows = total_rows
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.start = time.perf_counter()
        self.chunks = 0
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def chunk(self, rows: int, done: float) -> None:
        """A chunk was read: ``rows`` read so far, ``done`` the share of the input (0-1)."""
        self.chunks += 1
        if self.quiet:
            return
        elapsed = time.perf_counter() - self.start
        share = rows / self.total_rows if self.total_rows else done
        left = elapsed * (1 - share) / share if share > 0 else math.nan
        eta = f", about {_seconds(left)} left" if share < 1 and math.isfinite(left) else ""
        line = (f"{self.label}: {rows:,} rows ({share:.0%}) in {_seconds(elapsed)}{eta}")
        self.stream.write(("\r" + line + "\x1b[K") if self._tty else line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if not self.quiet and self._tty and self.chunks:
            self.stream.write("\n")
            self.stream.flush()


def _seconds(s: float) -> str:
    if s < 60:
        return f"{s:.0f} s" if s >= 10 else f"{s:.1f} s"
    return f"{s // 60:.0f} min {s % 60:02.0f} s"


# --------------------------------------------------------------------------- pass 0


@dataclass
class Sketch:
    """What pass 0 collects from all rows; ``a + b`` merges two (any order, any tree).

    Attributes
    ----------
    rows : int
        Rows read.
    missing : dict
        Column -> blank cells.
    low, high : dict
        Column -> smallest and largest value of a column of numbers or dates.
    levels : dict
        Text column -> ``{level: [rows, rows with a target, sum of the target]}``, or None
        once it has more than ``MAX_LEVELS`` levels (identifier-like).
    y_abs_max : float
        Largest absolute value of a numeric target (0 for a text target).
    y_values : list
        The target's first distinct values, up to ``Y_VALUES`` (``y_many`` when there are more).
    sample, keys : DataFrame, ndarray
        The rows with the ``sample_rows`` smallest keys (:func:`row_keys`), index = row ids,
        in row order, and their keys.
    """

    target: str
    sample_rows: int
    rows: int = 0
    missing: dict[str, int] = field(default_factory=dict)
    low: dict[str, Any] = field(default_factory=dict)
    high: dict[str, Any] = field(default_factory=dict)
    levels: dict[str, dict[Any, list[float]] | None] = field(default_factory=dict)
    y_abs_max: float = 0.0
    y_values: list[Any] = field(default_factory=list)
    y_many: bool = False
    sample: pd.DataFrame | None = None
    keys: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.uint64))
    dropped: int = 0  # rows of a sample let go (:meth:`drop_sample`)

    @property
    def sample_size(self) -> int:
        """Rows in the sample (also after :meth:`drop_sample`)."""
        return len(self.sample) if self.sample is not None else self.dropped

    @property
    def complete(self) -> bool:
        """True when the sample holds every row (then the fit sees the whole table)."""
        return self.sample_size == self.rows

    def drop_sample(self) -> None:
        """Let go of the sample once the strata are fitted on it (the pass does not need
        it); its size stays known."""
        self.dropped = self.sample_size
        self.sample = None
        self.keys = np.empty(0, dtype=np.uint64)

    def __add__(self, other: Sketch) -> Sketch:
        if not isinstance(other, Sketch):
            return NotImplemented
        out = Sketch(self.target, min(self.sample_rows, other.sample_rows))
        out.rows = self.rows + other.rows
        for name in dict.fromkeys([*self.missing, *other.missing]):
            out.missing[name] = self.missing.get(name, 0) + other.missing.get(name, 0)
        for mine, theirs, dest, pick in ((self.low, other.low, out.low, min),
                                         (self.high, other.high, out.high, max)):
            for name in dict.fromkeys([*mine, *theirs]):
                values = [v for v in (mine.get(name), theirs.get(name)) if v is not None]
                dest[name] = pick(values) if values else None
        for name in dict.fromkeys([*self.levels, *other.levels]):
            a, b = self.levels.get(name, {}), other.levels.get(name, {})
            if a is None or b is None:
                out.levels[name] = None
                continue
            merged = {k: list(v) for k, v in a.items()}
            for k, v in b.items():
                have = merged.get(k)
                if have is None:
                    merged[k] = list(v)
                else:
                    for i in range(3):
                        have[i] += v[i]
            out.levels[name] = merged if len(merged) <= MAX_LEVELS else None
        out.y_abs_max = max(self.y_abs_max, other.y_abs_max)
        values = list(self.y_values)
        for v in other.y_values:
            if v not in values:
                values.append(v)
        out.y_many = self.y_many or other.y_many or len(values) > Y_VALUES
        out.y_values = values[:Y_VALUES]
        out.sample, out.keys = _bottom(
            [s for s in (self.sample, other.sample) if s is not None],
            [self.keys, other.keys], out.sample_rows)
        return out

    def __radd__(self, other: Any) -> Sketch:
        if other == 0:  # sum() starts from 0
            return self
        return self.__add__(other)


def _bottom(samples: list[pd.DataFrame], keys: list[np.ndarray], k: int
            ) -> tuple[pd.DataFrame | None, np.ndarray]:
    """The ``k`` rows with the smallest keys among ``samples``, in row-id order."""
    if not samples:
        return None, np.empty(0, dtype=np.uint64)
    frame = samples[0] if len(samples) == 1 else pd.concat(samples)
    key = keys[0] if len(keys) == 1 else np.concatenate([kk for kk in keys if len(kk)]
                                                        or [keys[0]])
    if len(key) > k:
        keep = np.argpartition(key, k - 1)[:k]
        frame, key = frame.iloc[keep], key[keep]
    order = np.argsort(frame.index.to_numpy(), kind="stable")
    if not np.all(order[1:] > order[:-1]):
        frame, key = frame.iloc[order], key[order]
    return frame, key


def sketch_frame(frame: pd.DataFrame, target: str, *, seed: int = 0,
                 sample_rows: int = SAMPLE_ROWS, threshold: int | None = None) -> Sketch:
    """Pass 0's sketch of one typed chunk or partition (index = row ids).

    ``threshold``: rows whose key is above it cannot enter the sample (the largest key of a
    full sample so far, or :func:`sample_threshold`), so they are not copied.
    """
    out = Sketch(target, sample_rows)
    out.rows = len(frame)
    y = frame[target] if target in frame.columns else None
    y_num = None
    if y is not None and y.dtype.kind in "iufb":
        y_num = y.to_numpy(dtype=float, na_value=np.nan)
        finite = y_num[~np.isnan(y_num)]
        out.y_abs_max = float(np.abs(finite).max()) if finite.size else 0.0
    for name in frame.columns:
        col = frame[name]
        blank = col.isna().to_numpy()
        out.missing[name] = int(blank.sum())
        kind = col.dtype.kind
        if kind in "iufM" and not blank.all():
            out.low[name], out.high[name] = col.min(), col.max()
        if col.dtype == object or isinstance(col.dtype, pd.StringDtype) or kind in "OU" \
                or str(col.dtype) == "str":
            codes, uniques = pd.factorize(col, use_na_sentinel=True)
            if len(uniques) > MAX_LEVELS:
                out.levels[name] = None
                continue
            ok = codes >= 0
            counts = np.bincount(codes[ok], minlength=len(uniques))
            if y_num is not None:
                has_y = ok & ~np.isnan(y_num)
                with_y = np.bincount(codes[has_y], minlength=len(uniques))
                sums = np.bincount(codes[has_y], weights=y_num[has_y], minlength=len(uniques))
            else:
                with_y = np.bincount(codes[ok & (y.notna().to_numpy() if y is not None
                                                 else ok)], minlength=len(uniques))
                sums = np.zeros(len(uniques))
            out.levels[name] = {
                level: [int(c), int(w), float(s)]
                for level, c, w, s in zip(uniques.tolist(), counts, with_y, sums, strict=True)
            }
    if y is not None:
        distinct = pd.unique(y.dropna())
        out.y_values = distinct[:Y_VALUES].tolist()
        out.y_many = len(distinct) > Y_VALUES
    ids = frame.index.to_numpy()
    keys = row_keys(ids, seed)
    pick = np.ones(len(keys), dtype=bool) if threshold is None else keys <= np.uint64(threshold)
    if len(keys) and not pick.all():
        frame, keys = frame[pick], keys[pick]
    out.sample, out.keys = _bottom([frame], [keys], sample_rows)
    return out


def sketch(table: StreamedTable, target: str, *, seed: int = 0,
           sample_rows: int = SAMPLE_ROWS, columns: Sequence[str] | None = None,
           progress: ChunkProgress | None = None) -> Sketch:
    """Pass 0 over ``table``: one read, chunk by chunk, merged as it goes.

    The sample is kept to ``sample_rows`` rows, lowered so that it holds at most
    ``MAX_HELD_BYTES`` once typed (a note says so); the :class:`Typing` of ``table`` is fixed
    by this pass, and the sample comes back typed by it (:meth:`Typing.final`).
    """
    wanted = list(columns) if columns is not None else list(table.names)
    width = max(1, table.row_bytes * len(wanted) // max(len(table.names), 1))
    held = max(1, MAX_HELD_BYTES // max(width, 1))
    if sample_rows > held:
        table.notes.append(
            f"the strata are fitted on a sample of {held:,} rows (what {_size(MAX_HELD_BYTES)} "
            f"holds of {len(wanted)} columns), not {sample_rows:,}"
        )
        sample_rows = held
    total: Sketch | None = None
    known = sample_threshold(table.rows, seed, sample_rows) if table.rows else None
    for chunk in table.chunks(wanted, progress):
        threshold = known
        if (known is None and total is not None and total.sample is not None
                and len(total.keys) >= sample_rows):
            threshold = int(total.keys.max())
        part = sketch_frame(chunk, target, seed=seed, sample_rows=sample_rows,
                            threshold=threshold)
        total = part if total is None else total + part
    if progress is not None:
        progress.close()
    if total is None or total.rows == 0:
        raise StratPDInputError(f"{table.label} holds no rows; write the table's rows into it")
    total.sample = table.typing.final(total.sample)
    table.notes.extend(table.typing.notes(table.label))
    return total
