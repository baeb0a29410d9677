"""Read a table from a file (.csv/.txt/.tsv, .xlsx/.xlsm/.xlsb/.xls, .ods, .parquet) into a
DataFrame.

Files go through the same sheet layer as cells: each reader hands over the raw block of cell
values and :func:`stratpd_xl.input.sheet.frame_from_columns` does the typing, so a CSV exported from
a sheet gives the same table as the sheet itself.  Workbooks are read by python-calamine.  In
text files pandas' C reader parses the numbers itself where that gives exactly what the sheet
layer would (see ``_typed_text``); every other column reaches the sheet layer as raw text.
Parquet files (and folders of them) are read by pyarrow, the ``parquet`` extra, in
:mod:`._parquet`: measured from their footers, then only the columns asked for are decoded.

Hostile files (decompression bombs, sheets padded to column XFD, looping .xls sector chains,
devices, pipes, damaged XML) are refused with one sentence before any reader allocates memory
for them; the limits are the ``MAX_*`` constants below (documented in SECURITY.md, "Input
files").  The byte-level scans that measure a workbook's sheets live in
:mod:`._workbook_scan` (.xlsx, .xlsb, .ods) and :mod:`._xls_scan` (.xls);
the limits are applied here.
"""

from __future__ import annotations

import csv
import io
import re
import stat
import warnings
import zipfile
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.parsers.expat import ExpatError

import numpy as np
import pandas as pd

from ..errors import StratPDInputError
from ._parquet import PARQUET_SUFFIXES, parquet_columns
from ._workbook_scan import (
    SHARED_STRINGS_TRUSTED,
    Errors,
    ods_extents,
    xlsb_extent,
    xlsb_members,
    xlsx_extent,
    xlsx_members,
    xlsx_shared_strings,
)
from ._xls_scan import XlsDamaged, xls_sheets
from .sheet import find_header, frame_from_cells, frame_from_columns, guess_decimal, leading_zeros

__all__ = ["PARQUET_SUFFIXES", "TEXT_SUFFIXES", "WORKBOOK_SUFFIXES", "read_table", "sniff_text"]

TEXT_SUFFIXES = (".csv", ".txt", ".tsv")
WORKBOOK_SUFFIXES = (".xlsx", ".xlsm", ".xlsb", ".xls", ".ods")
_DELIMITERS = (",", ";", "\t", "|")
_SNIFF_LINES = 200
#: Rows read as raw text to find the header before the C reader types the rest.
_HEAD_ROWS = 200

# Limits on hostile input (see SECURITY.md, "Input files").  Module constants so tests can lower
# them; each is far above a table StratPD can analyse in memory anyway.
#: Largest file read at all, in bytes (a text file is read whole; a workbook is a zip).
MAX_FILE_BYTES = 512 * 1024**2
#: Largest table held in memory once a Parquet file's needed columns are read, estimated from
#: its footer before anything is decoded (8 bytes a number, about 60 a text cell).  Until the
#: streamed engine reads files in chunks, this is what bounds a Parquet file, not its size.
MAX_HELD_BYTES = MAX_FILE_BYTES
#: Largest total declared uncompressed size of a workbook's zip members.
MAX_UNZIPPED_BYTES = 1024**3
#: Largest compression ratio of one zip member over 1 MiB; spreadsheet XML packs ~5-30x,
#: a decompression bomb ~1000x.
MAX_ZIP_RATIO = 200
#: Largest worksheet grid (last row x last column) a workbook may declare through its cells.
MAX_GRID_CELLS = 50_000_000
#: Most rows of a worksheet (Excel's and LibreOffice's): the workbook reader stops there, so
#: an .ods row repeated 3,000,000 times would lose every row after the 1,048,576th.
MAX_SHEET_ROWS = 1_048_576
#: A grid this many times larger than its real cells (and over a million) is padding.
MAX_PADDING_FACTOR = 20
#: Sheet names listed when a sheet is not found.
SHOWN_SHEET_NAMES = 10
#: Most columns of a text file: a worksheet's width (Excel's XFD).  5,000,000 empty header
#: cells (a 5 MB line) took 5.8 GB before pandas gave up building the columns.
MAX_COLUMNS = 16_384
#: Longest line of a text file, in bytes: 16,384 cells of 1,000 characters.  One 100 MB line
#: without a break was split into 50 million fields by the delimiter guess (killed at 6 GB).
MAX_LINE_BYTES = 16 * 1024**2
#: Characters of the first lines the delimiter guess reads at most.
_SNIFF_CHARS = 2**20


def read_table(
    path: str | Path,
    *,
    sheet: str | None = None,
    decimal: str | None = None,
    encoding: str | None = None,
    columns: Sequence[str] | None = None,
    named: Sequence[str] = (),
) -> pd.DataFrame:
    """Read the table in a file; the first row holds the column names.

    Parameters
    ----------
    path
        A ``.csv``/``.txt``/``.tsv`` text file, an ``.xlsx``/``.xlsm``/``.xlsb``/``.xls``
        workbook or an ``.ods`` spreadsheet, a regular file of at most ``MAX_FILE_BYTES``;
        or a ``.parquet`` file or a folder of them (the ``parquet`` extra), whose columns
        read may hold at most ``MAX_HELD_BYTES`` once read, whatever the files' size.
    sheet
        Worksheet name for workbooks (case-insensitive); default the first sheet.
    decimal
        ``"."`` or ``","`` for numbers in text files; default: detected (a decimal comma is
        assumed when the file is not comma-separated and some value such as "1,5" can only be
        read that way).
    encoding
        Text file encoding; default UTF-8 (with or without BOM, or UTF-16 with BOM), falling
        back to Windows-1252 and then Latin-1.
    columns
        For Parquet: the exact names of the columns to read, and only those are decoded (a
        nested column named here is refused); default every column that can be analysed
        (nested columns and raw bytes are left out with a note).
    named
        For Parquet: the names the caller will use (target, features, as typed); one that
        is a column left out (nested, raw bytes) is refused with its type instead of "not
        found".

    Returns
    -------
    pandas.DataFrame
        As :func:`stratpd_xl.input.sheet.frame_from_cells` returns it; ``frame.attrs["source"]``
        describes the file (path, format, sheet, delimiter, decimal, encoding).

    Raises
    ------
    StratPDInputError
        File missing or unreadable, not a regular file, over a size limit, damaged, padded or
        a decompression bomb, unknown format, unknown sheet, bad option; a Parquet table
        over ``MAX_HELD_BYTES``, damaged, or whose files disagree about a column.
    """
    path = Path(path)
    if decimal not in (None, ".", ","):
        raise StratPDInputError(f'the decimal separator must be "." or ","; got "{decimal}"')
    if path.suffix.lower() in PARQUET_SUFFIXES or path.is_dir():
        return _read_parquet(path, sheet, decimal, encoding, columns, named)
    if columns is not None:
        raise StratPDInputError(
            f'"{path.name}" is not a Parquet file: its columns are all read; leave out columns'
        )
    _check_regular_file(path)
    try:  # one clear sentence for permissions and locks, whatever the format
        path.open("rb").close()
    except OSError as exc:
        raise StratPDInputError(
            f'cannot open "{path}": {exc.strerror or exc}; check that you may read it'
        ) from exc
    suffix = path.suffix.lower()
    if suffix in TEXT_SUFFIXES:
        if sheet is not None:
            raise StratPDInputError(
                f'"{path.name}" is a text file with no sheets; leave out --sheet'
            )
        return _read_text(path, decimal=decimal, encoding=encoding)
    if suffix in WORKBOOK_SUFFIXES:
        cells, sheet_name, sheet_notes = _workbook_cells(path, sheet, suffix)
    else:
        raise StratPDInputError(
            f'unknown file type "{suffix or path.name}"; use a .csv, .txt, .xlsx, .xls, .ods '
            "or .parquet file"
        )
    # calamine's rows are all one width: one object grid, handed over column by column.
    grid = np.empty((len(cells), len(cells[0]) if cells else 0), dtype=object)
    if grid.size:
        grid[:] = cells
    frame = frame_from_columns(
        list(grid.T),
        decimal=decimal,
        skip_titles=True,
        where=f'sheet "{sheet_name}" of "{path.name}"',
    )
    frame.attrs["notes"] = sheet_notes + frame.attrs["notes"]
    frame.attrs["source"] = {"path": str(path), "format": suffix[1:], "sheet": sheet_name}
    return frame


def _read_parquet(path: Path, sheet: str | None, decimal: str | None, encoding: str | None,
                  columns: Sequence[str] | None, named: Sequence[str] = ()) -> pd.DataFrame:
    """A Parquet file or folder through the same typing step as a CSV's columns."""
    if sheet is not None:
        raise StratPDInputError(
            f'"{path.name}" is a Parquet table with no sheets; leave out --sheet'
        )
    if encoding is not None:
        raise StratPDInputError(
            f'"{path.name}" is a Parquet table, whose text is always UTF-8; leave out --encoding'
        )
    if not path.is_dir():
        _check_regular_file(path, sized=False)  # bounded by MAX_HELD_BYTES
    names, values, notes, source = parquet_columns(path, columns, MAX_HELD_BYTES, MAX_COLUMNS,
                                                   named)
    where = f'"{path.name}"'
    frame = frame_from_columns(values, header=names, decimal=decimal, where=where)
    frame.attrs["notes"] = notes + frame.attrs["notes"]
    frame.attrs["source"] = source
    return frame


def _check_regular_file(path: Path, *, sized: bool = True) -> None:
    """Refuse before opening what is not a regular file of a sane size.

    Opening a FIFO blocks until a writer comes; /dev/zero or /dev/urandom never end.  stat()
    does neither, so it comes before any open().
    """
    try:
        info = path.stat()
    except FileNotFoundError:
        raise StratPDInputError(f'file "{path}" not found; check the name and folder') from None
    except OSError as exc:
        raise StratPDInputError(
            f'cannot open "{path}": {exc.strerror or exc}; check that you may read it'
        ) from exc
    if stat.S_ISDIR(info.st_mode):
        raise StratPDInputError(
            f'"{path}" is a folder; give the path of a .csv, .xlsx, .ods or .parquet file'
        )
    if not stat.S_ISREG(info.st_mode):
        raise StratPDInputError(
            f'"{path}" is not a regular file (a device, pipe or socket); '
            "give the path of a .csv, .xlsx or .ods file"
        )
    if sized and info.st_size > MAX_FILE_BYTES:
        raise StratPDInputError(
            f'"{path.name}" is {_size(info.st_size)}, over the {_size(MAX_FILE_BYTES)} limit '
            "for input files; keep only the rows and columns to analyse"
        )


def _size(n: int) -> str:
    return f"{n / 1024**2:.0f} MB" if n >= 1024**2 else f"{n} bytes"


def _frame(cells: list[list[Any]], decimal: str | None, where: str) -> pd.DataFrame:
    """frame_from_cells for a whole file or sheet: title rows skipped, the file named in errors."""
    return frame_from_cells(cells, decimal=decimal, skip_titles=True, where=where)


# --------------------------------------------------------------------------- text files


def _read_text(path: Path, *, decimal: str | None, encoding: str | None) -> pd.DataFrame:
    try:
        # At most one byte over the limit: the file may have grown since stat().
        with path.open("rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise StratPDInputError(f'cannot read "{path}": {exc.strerror or exc}') from exc
    if len(raw) > MAX_FILE_BYTES:
        raise StratPDInputError(
            f'"{path.name}" is over the {_size(MAX_FILE_BYTES)} limit for input files; '
            "keep only the rows and columns to analyse"
        )
    _check_line_length(raw, path)
    text, used = _decode(raw, encoding, path)
    # Excel writes, and obeys, a first line "sep=;" naming the delimiter.
    hint = re.match(r'"?sep=([^\r\n])"?[ \t]*\r?\n', text)
    named, hint_bytes = (hint.group(1), len(hint.group(0).encode("utf-8"))) if hint else (None, 0)
    if hint:
        text = text[hint.end() :]
    hint = None  # the match holds the whole text once more
    dialect = sniff_text(text, delimiter=named)
    delimiter = dialect["delimiter"]
    _check_width(text, delimiter, path)
    _unclosed_quote(text, delimiter, path)
    mixed: list[str] = []
    if decimal is None:
        decimal = dialect["decimal"]
        mixed = dialect["comma_columns"]
    where = f'"{path.name}"'
    source: bytes | str = text
    if encoding is None and used == "utf-8":
        # The bytes themselves: the C reader would encode the decoded text back to UTF-8
        # (0.8 s of a million-row file).  The BOM and the "sep=" line are not text cells.
        skip = (len(_UTF8_BOM) if raw.startswith(_UTF8_BOM) else 0) + hint_bytes
        source = raw[skip:] if skip else raw
    parsed = _typed_text(text, source, delimiter, decimal, where)
    if parsed is not None:
        # Typing needs neither the bytes nor the text: a 512 MB file held twice at the peak.
        del raw, text, source
        columns, header, notes = parsed
        frame = frame_from_columns(columns, header=header, decimal=decimal, where=where)
        frame.attrs["notes"] = notes + frame.attrs["notes"]
    else:
        columns = _text_columns(text, delimiter)
        if columns is None:
            rows = _text_rows(text, delimiter, path)
            frame = _frame(rows, decimal, where)
        else:
            frame = frame_from_columns(columns, decimal=decimal, skip_titles=True, where=where)
    if mixed:
        listed = ", ".join(f'"{name}"' for name in mixed[:5])
        frame.attrs["notes"] = [
            f"{listed} {'holds' if len(mixed) == 1 else 'hold'} numbers with a decimal comma "
            '(quoted, as "1.000,50"), the other columns a decimal point: each column was read '
            "its own way; give --decimal to read every column one way"
        ] + frame.attrs["notes"]
    frame.attrs["source"] = {
        "path": str(path),
        "format": "text",
        "delimiter": delimiter,
        "decimal": decimal or ".",
        "encoding": used,
    }
    return frame


def _check_line_length(raw: bytes, path: Path) -> None:
    """Refuse a line no table has, before the delimiter guess splits it into millions of cells."""
    if len(raw) <= MAX_LINE_BYTES:
        return
    longest, start = _longest_line_at(raw)
    if longest > MAX_LINE_BYTES:
        line = raw.count(b"\n", 0, start) + 1
        raise StratPDInputError(
            f'line {line:,} of "{path.name}" is {_size(longest)} long without a line break '
            f"(limit {_size(MAX_LINE_BYTES)}); check that the file is a table saved as CSV, "
            "one row a line"
        )


def _too_wide(path: Path, row: int) -> StratPDInputError:
    return StratPDInputError(
        f'row {row:,} of "{path.name}" has more than {MAX_COLUMNS:,} cells, the width of a '
        "worksheet; keep only the columns to analyse"
    )


def _check_width(text: str, delimiter: str, path: Path) -> None:
    """Refuse before any reader builds a column per cell: millions of columns never end."""
    head = "\n".join(_head_lines(text))
    for i, row in enumerate(_sample_rows(head, delimiter)):
        if len(row) > MAX_COLUMNS:
            raise _too_wide(path, i + 1)


def _text_rows(text: str, delimiter: str, path: Path) -> list[list[str]]:
    """The reference reader (csv module): any file the C reader does not split the same way."""
    rows: list[list[str]] = []
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        for row in reader:
            if len(row) > MAX_COLUMNS:  # a wide row further down than the sample
                raise _too_wide(path, len(rows) + 1)
            rows.append(row)
        return rows
    except csv.Error as exc:
        raise StratPDInputError(
            f'"{path.name}" is not a readable CSV file (line {reader.line_num:,}: {exc}); '
            "check that it is a table saved as CSV"
        ) from exc


_UTF8_BOM = b"\xef\xbb\xbf"


def _c_reader_options(delimiter: str, width: int) -> dict[str, Any]:
    """How the C reader splits a file as the csv module does (quotes doubled, blank rows kept)."""
    return {
        "sep": delimiter,
        "header": None,
        "names": range(width),
        "index_col": False,
        "skip_blank_lines": False,
        "quotechar": '"',
        "doublequote": True,
        "quoting": csv.QUOTE_MINIMAL,
        "engine": "c",
        "low_memory": False,
    }


def _sniffed_width(text: str, delimiter: str) -> int:
    """Width from the widest of the first lines, so title rows above the header do not fix it
    at one column; a longer line further down makes the C reader raise (then: csv module)."""
    head = "\n".join(_head_lines(text))
    return max((len(row) for row in _sample_rows(head, delimiter)), default=1)


def _typed_text(
    text: str, source: bytes | str, delimiter: str, decimal: str | None, where: str
) -> tuple[list[np.ndarray], list[Any], list[str]] | None:
    """(columns below the header, header cells, title notes) for ``frame_from_columns``, with
    numbers parsed by pandas' C reader; ``None`` when that cannot be exact.

    The header is found on the first rows read as raw text (the sheet layer's rule), then the
    rows below it are read with type inference and only the columns that come back as text
    are typed cell by cell.  What the C reader accepts as a number is a subset of what the
    sheet layer reads as the same number: the digits, one sign, the decimal separator and an
    exponent, surrounded by ASCII white space, rounded correctly (fast_float), never "nan"
    (only empty fields are missing) and never thousands separators (not passed).  Its one
    extra, "inf"/"Infinity", sends the column back to the text rules (read again as text), as
    do a column that chunks typed differently and one of integers beyond int64 (parsed by
    Python's ``int``, which takes "1_000").
    The tests compare this path with the raw-text one on generated files.
    """
    if "\x00" in text or not text or text.isspace():  # strip() would copy the text
        return None
    width = _sniffed_width(text, delimiter)
    options = _c_reader_options(delimiter, width)

    def buffer() -> io.BytesIO | io.StringIO:
        return io.BytesIO(source) if isinstance(source, bytes) else io.StringIO(source)

    try:
        head = pd.read_csv(
            buffer(), nrows=_HEAD_ROWS, dtype=object, na_filter=False, **options
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError):
        return None
    head_columns = [head[c].to_numpy(dtype=object, na_value="") for c in head.columns]
    found = find_header(
        head_columns, skip_titles=True, where=where, complete=len(head) < _HEAD_ROWS
    )
    if found is None:
        return None
    row, notes = found
    if row + 1 >= len(head):
        # Nothing read below the header: the text path gives the sentence or the table.
        return None
    header = [c[row] for c in head_columns]
    # Codes with leading zeros ("007") in the first rows: the column is typed from its texts,
    # which the sheet layer keeps for categories ("007" and "7" are 7 to the C reader).
    coded = {j for j, c in enumerate(head_columns) if leading_zeros(list(c[row + 1 :]))}
    # header=row, not skiprows: rows above are then split as records, as the head was read
    # (skiprows counts lines its own way when quotes hold line breaks or lines end in "\r").
    options["header"] = row
    try:
        with warnings.catch_warnings():
            # Chunks typed apart (low_memory: a third less memory, and faster) may disagree
            # about a column; pandas warns, and such columns are read again as text below.
            warnings.simplefilter("ignore", pd.errors.DtypeWarning)
            table = pd.read_csv(
                buffer(),
                keep_default_na=False,
                na_values=[""],
                decimal=decimal or ".",
                **{**options, "low_memory": True},
            )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError):
        return None
    # The head decides nothing alone: a "007" on row 5,000 of a column read as numbers would
    # merge with "7".  One pass over the bytes says whether any field may start "0<digit>";
    # only then are the number columns read again as text to see which ones hold such codes.
    numbers = [j for j, c in enumerate(table.columns)
               if table[c].dtype.kind in "fiu" and j not in coded]
    if numbers and _may_hold_leading_zero(source, delimiter):
        # A few columns at a time: a text cell costs ~60 bytes, a number 8.
        step = max(1, _TEXT_CELLS // max(len(table), 1))
        for at in range(0, len(numbers), step):
            group = numbers[at : at + step]
            try:
                raw = pd.read_csv(buffer(), usecols=group, dtype=object, na_filter=False,
                                  **options)
            except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError):
                return None
            coded |= {j for j in group if leading_zeros(raw[j].tolist())}
            del raw
    columns: list[np.ndarray] = []
    again: list[int] = []  # columns the text rules must see as text
    for j, c in enumerate(table.columns):
        values = table[c].to_numpy()
        if values.dtype.kind == "f" and np.isinf(values).any():
            again.append(j)  # "inf" or 1e999: the text rules decide what that cell was
        elif values.dtype.kind in "fiu" and j in coded:
            again.append(j)
        elif table[c].dtype == object and not _one_kind(values):
            again.append(j)  # numbers or TRUE in some chunks, text in others; or big ints
        if values.dtype.kind not in "fiub":
            values = table[c].to_numpy(dtype=object)
        columns.append(values)
    del table
    if again:
        try:
            raw = pd.read_csv(buffer(), usecols=again, dtype=object, na_filter=False, **options)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError):
            return None
        for j in again:
            columns[j] = raw[j].to_numpy(dtype=object, na_value="")
        del raw
    if _over_field_limit(text, source, columns, delimiter, decimal):
        return None
    return columns, header, notes


# Cells of number columns read again as text at once, looking for codes (about 250 MB).
_TEXT_CELLS = 4_000_000
_ZERO, _DIGITS = ord("0"), 10
# What may stand between a field's start and its first digit: white space, a quote, a sign.
_BEFORE_DIGITS = np.zeros(256, dtype=bool)
_BEFORE_DIGITS[np.frombuffer(b' \t"+-', dtype=np.uint8)] = True
# Bytes scanned at a time: the candidates' positions (8 bytes each) stay a few megabytes.
_SCAN_BYTES = 1 << 22


def _may_hold_leading_zero(source: bytes | str, delimiter: str) -> bool:
    """Whether some field of the file may start with a zero followed by a digit ("007",
    ' "-01"'), a code the C reader would read as the number 7.

    A zero and a digit are looked for in the bytes (vectorised, in slices: 0.2 s for 50 MB);
    each one is a field's start when only white space, quotes and signs stand between it and
    a delimiter, a line break or the file's start.  A quoted field holding the delimiter may
    answer yes for nothing: the columns are then only read once more as text.
    """
    data = source if isinstance(source, bytes) else source.encode("utf-8", "replace")
    view = np.frombuffer(data, dtype=np.uint8)
    starts = np.zeros(256, dtype=bool)
    starts[[ord("\n"), ord("\r"), *delimiter.encode("utf-8")[:1]]] = True
    for lo in range(0, max(len(view) - 1, 0), _SCAN_BYTES):
        part = view[lo : lo + _SCAN_BYTES + 1]
        # uint8 arithmetic wraps below "0", so "< 10" keeps just the digits.
        at = np.flatnonzero((part[:-1] == _ZERO) & (part[1:] - _ZERO < _DIGITS)) + lo
        if not at.size:
            continue
        before = at - 1
        for _ in range(8):  # past a few spaces, a quote and a sign
            inside = before >= 0
            inside[inside] = _BEFORE_DIGITS[view[before[inside]]]
            if not inside.any():
                break
            before[inside] -= 1
        else:
            return True  # a long run of spaces before "0<digit>": read the columns again
        if (before < 0).any() or starts[view[before]].any():
            return True
    return False


def _one_kind(values: np.ndarray) -> bool:
    """An object column from the C reader holds one kind of value besides blanks (NaN): all
    text or all TRUE/FALSE (with blanks), as one chunk gives them.

    Integers beyond int64 do not count: pandas parses them with Python's ``int``, which also
    takes "1_000" (and white space inside the field), text to the sheet layer's rules.
    """
    kinds = set(map(type, values))
    if int in kinds:
        return False
    if float in kinds:
        floats = np.fromiter((type(v) is float for v in values), dtype=bool, count=len(values))
        if not np.isnan(values[floats].astype(float)).all():
            return False  # numbers from a chunk typed float
        kinds.discard(float)
    return len(kinds) <= 1


def _over_field_limit(
    text: str,
    source: bytes | str,
    columns: list[np.ndarray],
    delimiter: str,
    decimal: str | None,
) -> bool:
    """Whether a field may be longer than the csv module's limit (which refuses the file).

    Text cells are measured.  A field read as a number holds only digits, a sign, the decimal
    separator, an exponent and white space (line breaks too, when quoted): so it can only be
    that long inside a run of that many such characters in the file.
    """
    limit = csv.field_size_limit()
    data = source if isinstance(source, bytes) else None
    if len(text) <= limit or not _may_hold_long_field(text, limit, data):
        return False
    numbers = False
    for col in columns:
        if col.dtype != object:
            numbers = True
            continue
        if max((len(v) for v in col if type(v) is str), default=0) > limit:
            return True
        numbers = numbers or any(type(v) is int for v in col)  # beyond int64
    if not numbers:
        return False
    if data is None:
        data = text.encode("utf-8")
    allowed = np.zeros(256, dtype=bool)
    number_chars = "0123456789+-.eE \t\n\r\x0b\x0c" + (decimal or ".")
    allowed[np.frombuffer(number_chars.encode(), dtype=np.uint8)] = True
    if delimiter != "\t":  # a quoted number may hold tabs, but never the delimiter
        allowed[ord(delimiter)] = False
    stops = np.flatnonzero(~allowed[np.frombuffer(data, dtype=np.uint8)])
    edges = np.concatenate(([-1], stops, [len(data)]))
    return bool(np.diff(edges).max() - 1 > limit)


def _text_columns(text: str, delimiter: str) -> list[np.ndarray] | None:
    """The cells as columns of raw text, split by pandas' C reader; ``None`` to fall back.

    Every cell stays text (no NA strings, no number parsing): typing is the sheet layer's job,
    so the result is the one the csv module gives.  The C reader takes its width from the
    first line and refuses longer lines later (title rows, ragged rows): those files, and
    NUL characters, go to the csv module instead.
    """
    if "\x00" in text or not text or text.isspace():  # strip() would copy the text
        return None
    options = _c_reader_options(delimiter, _sniffed_width(text, delimiter))
    try:
        table = pd.read_csv(io.StringIO(text), dtype=object, na_filter=False, **options)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError):
        return None
    # Short rows come back padded with NaN; the csv module's short rows are padded blank.
    columns = [table[c].to_numpy(dtype=object, na_value="") for c in table.columns]
    # The csv module refuses fields over its limit (with a sentence); keep that answer.
    limit = csv.field_size_limit()
    if len(text) > limit and _may_hold_long_field(text, limit) and any(
        max(map(len, col), default=0) > limit for col in columns
    ):
        return None
    return columns


def _decode(raw: bytes, encoding: str | None, path: Path) -> tuple[str, str]:
    if encoding is not None:
        family = encoding.lower().replace("_", "-")
        if family.startswith(("utf-16", "utf16")) and raw and b"\x00" not in raw[:4096]:
            # Decoding UTF-8 as UTF-16 never fails: it gave Chinese-looking text, "no data rows".
            raise StratPDInputError(
                f'"{path.name}" is not {encoding} text (UTF-16 has a zero byte beside every '
                "Latin letter, this file has none); leave out --encoding, or try "
                "--encoding utf-8"
            )
        try:
            return raw.decode(encoding), encoding
        except LookupError as exc:
            raise StratPDInputError(
                f'unknown encoding "{encoding}"; try utf-8, cp1252 or latin-1'
            ) from exc
        except UnicodeDecodeError as exc:
            raise StratPDInputError(
                f'"{path.name}" is not valid {encoding} text (byte {exc.start}); '
                "try another --encoding such as utf-8 or cp1252"
            ) from exc
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):  # Excel's "Unicode text" export
        return raw.decode("utf-16"), "utf-16"
    if b"\x00" in raw[:4096]:
        raise StratPDInputError(_nul_sentence(raw, path))
    # UTF-8 first (strict, so a Windows file cannot pass as UTF-8), then the usual Windows
    # code page, then Latin-1 which accepts any byte.
    for candidate in ("utf-8-sig", "cp1252", "latin-1"):
        try:
            return raw.decode(candidate), "utf-8" if candidate == "utf-8-sig" else candidate
        except UnicodeDecodeError:
            continue
    raise AssertionError("latin-1 decodes every byte")  # pragma: no cover


def _nul_sentence(raw: bytes, path: Path) -> str:
    """Why a file with NUL bytes is refused, and what to type: UTF-16 without its BOM (every
    other byte zero) reads with --encoding; anything else is not a text file."""
    head = np.frombuffer(raw[:4096], dtype=np.uint8)
    even, odd = head[0::2], head[1::2]
    if head.size >= 4 and (odd == 0).mean() > 0.6 and (even == 0).mean() < 0.1:
        return (f'"{path.name}" looks like UTF-16 text without its byte order mark; '
                "read it with --encoding utf-16-le")
    if head.size >= 4 and (even == 0).mean() > 0.6 and (odd == 0).mean() < 0.1:
        return (f'"{path.name}" looks like UTF-16 text without its byte order mark; '
                "read it with --encoding utf-16-be")
    at = raw.index(b"\x00")
    line = raw.count(b"\n", 0, at) + 1
    return (f'"{path.name}" holds a NUL byte (a zero byte, at byte {at + 1:,}, line {line:,}), '
            "so it does not look like a text file; save it again as .csv, .xlsx or .ods")


def _unclosed_quote(text: str, delimiter: str, path: Path) -> None:
    """Refuse a quote that opens a cell and is never closed: the csv rules read everything
    after it as one cell, and the table came out with "only 0 rows"."""
    if text.count('"') % 2 == 0:
        return
    at = text.rfind('"')  # with an odd count, the last quote opens the span left open
    before = text[at - 1] if at > 0 else "\n"
    if before not in (delimiter, "\n", "\r") or text.count("\n", at) < 2:
        return  # a quote inside a cell (12" pipe) is text; a last line is only that line
    line = text.count("\n", 0, at) + 1
    raise StratPDInputError(
        f'line {line:,} of "{path.name}" opens a quote (") that is never closed, so every '
        "line after it would be read as one cell; close the quote or remove it and save again"
    )


def _may_hold_long_field(text: str, limit: int, data: bytes | None = None) -> bool:
    """False when no field can be longer than ``limit``: without quotes a field never spans
    lines, so the longest line bounds it (a tenth of the work of measuring every cell).

    ``data``, the text's UTF-8 bytes when at hand, makes that a numpy pass: a line has at
    least as many bytes as characters.
    """
    if '"' in text:
        return True
    if data is not None and _longest_line(data) <= limit:
        return False
    return max(map(len, text.split("\n")), default=0) > limit


def _longest_line(data: bytes) -> int:
    """Bytes in the longest "\n"-separated line."""
    return _longest_line_at(data)[0]


def _longest_line_at(data: bytes, chunk: int = 2**22) -> tuple[int, int]:
    """(bytes, start) of the longest "\n"-separated line (the first of equals), a few MiB at a
    time (no file-sized mask)."""
    view = np.frombuffer(data, dtype=np.uint8)
    best = (0, 0)
    start = 0  # where the current line begins
    for lo in range(0, view.size, chunk):
        breaks = np.flatnonzero(view[lo : lo + chunk] == ord("\n")) + lo
        if not breaks.size:
            continue
        if int(breaks[0]) - start > best[0]:
            best = (int(breaks[0]) - start, start)
        if breaks.size > 1:
            gaps = np.diff(breaks) - 1
            i = int(gaps.argmax())
            if int(gaps[i]) > best[0]:
                best = (int(gaps[i]), int(breaks[i]) + 1)
        start = int(breaks[-1]) + 1
    if view.size - start > best[0]:
        best = (view.size - start, start)
    return best


def _head_lines(text: str, count: int = _SNIFF_LINES) -> list[str]:
    """``text.splitlines()[:count]`` without splitting the whole text (0.3 s a million lines),
    and within the first ``_SNIFF_CHARS`` characters (a line longer than that is cut).

    Every line that ends before the ``count``-th "\n" is complete, whatever other line
    breaks ``splitlines`` also knows, so the prefix up to it gives the same first lines.
    """
    end = -1
    for _ in range(count):
        end = text.find("\n", end + 1, _SNIFF_CHARS)
        if end < 0:
            return text[:_SNIFF_CHARS].splitlines()[:count]
    return text[: end + 1].splitlines()[:count]


def sniff_text(text: str, *, delimiter: str | None = None) -> dict[str, Any]:
    """Guess the delimiter and decimal separator of delimited text.

    Parameters
    ----------
    text
        The whole file (only the first lines are looked at).
    delimiter
        A delimiter known in advance (from a "sep=" line); then only the decimal is guessed.

    Returns
    -------
    dict
        ``{"delimiter": one of , ; TAB |, "decimal": "." or "," or None}``; ``None`` means
        the sample did not decide (the sheet layer then decides per column).

    Notes
    -----
    The delimiter is the one that splits the sample lines into the same number (>1) of fields
    most consistently, parsing quotes properly (``csv.Sniffer`` guesses badly on numeric data
    with decimal commas).  With one column, the delimiter does not matter and "," is returned.
    """
    lines = [ln for ln in _head_lines(text) if ln.strip()]
    sample = "\n".join(lines)
    best: tuple[float, int, int] = (0.0, 1, 0)
    candidates = () if delimiter else _DELIMITERS
    delimiter = delimiter or ","
    for rank, cand in enumerate(reversed(candidates)):
        widths = [len(r) for r in _sample_rows(sample, cand) if r]
        if not widths:
            continue
        width, hits = Counter(widths).most_common(1)[0]
        if width < 2:
            continue
        # Consistency first, then more columns, then the rarer delimiter (tab beats ; beats ,)
        # because the rarer one splitting evenly is unlikely to be an accident.
        score = (hits / len(widths), width, rank)
        if score > best:
            best, delimiter = score, cand
    rows = _sample_rows(sample, delimiter)
    decimal, comma_columns = _sniff_decimal(rows[1:], delimiter)
    names = rows[0] if rows else []
    return {
        "delimiter": delimiter,
        "decimal": decimal,
        "comma_columns": [
            names[j].strip() if j < len(names) and names[j].strip() else f"column {j + 1}"
            for j in comma_columns
        ],
    }


def _sample_rows(sample: str, delimiter: str) -> list[list[str]]:
    """Rows of the sample; a CSV error here only means "not this delimiter" (reading reports it)."""
    rows: list[list[str]] = []
    try:
        for row in csv.reader(io.StringIO(sample), delimiter=delimiter):
            rows.append(row)
    except csv.Error:
        pass
    return rows


def _sniff_decimal(rows: list[list[str]], delimiter: str) -> tuple[str | None, list[int]]:
    """(decimal, columns) : comma when values can only be decimal-comma numbers and none
    decimal-point ones; ``None`` lets each column decide.

    A comma-separated file can only hold a decimal comma inside quotes, so there a quoted
    "30.100,00" says nothing about the other columns: when some columns show a decimal comma
    and others a decimal point, each column decides (``None``) and the comma columns' indexes
    come back for a note.  Read with one separator, 3.197 became 3197 in the point columns, or
    "30.100,00" text in the comma one (categories, silently).
    """
    if delimiter == ",":
        width = max(map(len, rows), default=0)
        per_column = [
            guess_decimal(row[j] for row in rows if j < len(row)) for j in range(width)
        ]
        commas = [j for j, d in enumerate(per_column) if d == ","]
        # "3.197" unquoted beside them is a decimal point (3197 read with the comma's rule).
        points = any(
            "." in row[j] for row in rows for j in range(len(row)) if per_column[j] != ","
        )
        if commas and points:
            return None, commas
        return ("," if commas else "."), []
    # Absent evidence, a ";" or tab file from a European locale is still ambiguous, so let
    # columns decide.
    return guess_decimal(cell for row in rows for cell in row), []


# --------------------------------------------------------------------------- workbooks


def _pick_sheet(names: list[str], sheet: str | None, path: Path) -> str:
    if not names:
        raise StratPDInputError(f'"{path.name}" has no worksheets')
    if sheet is None:
        return names[0]
    if sheet in names:
        return sheet
    folded = [n for n in names if n.strip().casefold() == sheet.strip().casefold()]
    if len(folded) == 1:
        return folded[0]
    # A workbook may hold thousands of sheets; the sentence stays one readable line.
    listed = ", ".join(names[:SHOWN_SHEET_NAMES])
    if len(names) > SHOWN_SHEET_NAMES:
        listed += f" ... and {len(names) - SHOWN_SHEET_NAMES} more"
    raise StratPDInputError(f'sheet "{sheet}" not found in "{path.name}"; sheets are: {listed}')


def _open_zip(path: Path, damaged: str) -> zipfile.ZipFile:
    """The workbook's zip, after checking members' declared sizes: bombs stop here, cheaply.

    Declared sizes cannot lie past this point: Python's zipfile stops inflating a member at its
    declared size (and then fails its CRC check), and the scans below read through it.
    """
    try:
        book = zipfile.ZipFile(path)
        infos = book.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as exc:
        raise StratPDInputError(damaged) from exc
    total = sum(info.file_size for info in infos)
    worst = max(
        (info.file_size / max(info.compress_size, 1) for info in infos if info.file_size > 2**20),
        default=0.0,
    )
    if total > MAX_UNZIPPED_BYTES or worst > MAX_ZIP_RATIO:
        book.close()
        limit = (
            f"over the {_size(MAX_UNZIPPED_BYTES)} limit"
            if total > MAX_UNZIPPED_BYTES
            else f"packed over {MAX_ZIP_RATIO}x, far tighter than a real table packs"
        )
        raise StratPDInputError(
            f'"{path.name}" unpacks to {_size(total)} ({limit}); '
            "save just the table as .csv or .xlsx"
        )
    return book


def _repeated(repeat: tuple[int, int] | None) -> str:
    """' (row 2 is written once and repeated 3,000,000 times)', when a repeat is the cause."""
    if repeat is None or repeat[0] < 1000:
        return ""
    times, row = repeat
    return (f" (row {row:,} is written once and repeated {times:,} times: "
            "table:number-rows-repeated)")


def _check_grid(path: Path, sheet: str, height: int, width: int, cells: int,
                repeat: tuple[int, int] | None = None, *, rows: bool = False) -> None:
    """Refuse a sheet whose used area is mostly padding, or too big, before any reader
    allocates it; with ``rows``, also one longer than a sheet (its reader would cut it).

    ``repeat`` is the sheet's most repeated row holding cells, (times, row), for an .ods.
    """
    grid = height * width
    padded = grid > 1_000_000 and grid > MAX_PADDING_FACTOR * max(cells, 1)
    if rows and height > MAX_SHEET_ROWS and not padded:
        raise StratPDInputError(
            f'sheet "{sheet}" of "{path.name}" is {height:,} rows long{_repeated(repeat)}, '
            f"more than the {MAX_SHEET_ROWS:,} rows a sheet holds (the rows after them would "
            "be lost); keep only the rows to analyse and save again"
        )
    if grid > MAX_GRID_CELLS and not padded:
        # Mostly real cells (an .ods row repeated 3 million times counts as 3 million rows):
        # too big, not padded.
        raise StratPDInputError(
            f'sheet "{sheet}" of "{path.name}" spans {height:,} rows x {width:,} columns '
            f"({cells:,} cells){_repeated(repeat)}, over the limit of {MAX_GRID_CELLS:,} "
            "cells; keep only the rows and columns to analyse (a row repeated many times "
            "counts as that many rows)"
        )
    if grid > MAX_GRID_CELLS or (grid > 1_000_000 and grid > MAX_PADDING_FACTOR * max(cells, 1)):
        raise StratPDInputError(
            f'sheet "{sheet}" of "{path.name}" spans {height:,} rows x {width:,} columns but '
            f"holds only {cells:,} cells; delete the stray cells far from the table "
            f"(limit {MAX_GRID_CELLS:,} cells) and save again"
        )


def _check_every_grid(path: Path, sheets: list[tuple[str, int, int, int]],
                      repeats: Mapping[str, tuple[int, int]] | None = None) -> None:
    """Refuse any padded sheet, and sheets that are padding together, of a workbook whose
    reader builds every sheet when it opens the file (.ods, .xls).

    ``sheets`` holds (name, used rows, used columns, cells) of each.  Each sheet may stay just
    under the limits; 300 such sheets still cost 300 grids (a 3 kB .ods took 22 s and 9.4 GB).
    """
    for name, height, width, cells in sheets:
        # Rows too: the reader cuts every sheet it builds at 1,048,576 rows when it opens it.
        _check_grid(path, name, height, width, cells, (repeats or {}).get(name), rows=True)
    grid = sum(height * width for _, height, width, _ in sheets)
    cells = sum(sheet[3] for sheet in sheets)
    if len(sheets) > 1 and (
        grid > MAX_GRID_CELLS or (grid > 1_000_000 and grid > MAX_PADDING_FACTOR * max(cells, 1))
    ):
        raise StratPDInputError(
            f'the {len(sheets):,} sheets of "{path.name}" span {grid:,} cells together but '
            f"hold only {cells:,}; delete the sheets and stray cells you do not need "
            f"(limit {MAX_GRID_CELLS:,} cells) and save again"
        )


def _check_shared_strings(path: Path, archive: zipfile.ZipFile, damaged: str) -> None:
    """Refuse a shared-string table that claims far more strings than it holds: calamine
    reserves memory for the claim when it opens the file (4,294,967,295 strings aborted the
    process asking for 103 GB)."""
    try:
        counts = xlsx_shared_strings(archive)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise StratPDInputError(damaged) from exc
    if counts is not None and counts[0] > counts[1] + SHARED_STRINGS_TRUSTED:
        raise StratPDInputError(
            f'"{path.name}" claims {counts[0]:,} shared strings but holds {counts[1]:,} '
            "(damaged?); open it and save it again as .xlsx"
        )


def _xls_extents(path: Path, damaged: str) -> dict[str, tuple[int, int, int, Errors]]:
    """Every sheet of an .xls measured before calamine opens it (it builds them all then).

    Refuses a damaged compound file (a looping or out-of-file sector chain would make
    calamine read until memory runs out), a DIMENSIONS record calamine would reserve more
    than any real sheet from (beyond 65,536 x 256 it aborts the process), any padded sheet,
    and sheets that are padding together.
    """
    try:
        sheets = xls_sheets(path)
    except (XlsDamaged, OSError, ValueError) as exc:
        raise StratPDInputError(damaged) from exc
    for sheet in sheets:
        if sheet.reserved > MAX_GRID_CELLS:
            raise StratPDInputError(
                f'sheet "{sheet.name}" of "{path.name}" declares {sheet.reserved:,} cells, '
                "more than an Excel 97-2003 sheet holds (65,536 x 256); open it and save it "
                "again as .xlsx"
            )
    # A list, not the dict below: sheets sharing a name are all parsed, so all count.
    _check_every_grid(path, [(s.name, s.height, s.width, s.cells) for s in sheets])
    return {s.name: (s.height, s.width, s.cells, {}) for s in sheets}


def _is_panic(exc: BaseException) -> bool:
    """A Rust panic inside calamine (a record shorter than it assumes): pyo3 raises it as
    PanicException, a BaseException, which ``except Exception`` would let through."""
    return type(exc).__name__ == "PanicException"


def _workbook_cells(
    path: Path, sheet: str | None, suffix: str
) -> tuple[list[list[Any]], str, list[str]]:
    """The chosen sheet's cells through calamine, after the cheap checks against bombs, its
    name, and notes (a hidden sheet passed over, formulas without a saved value).

    Formulas come as the values last calculated; error cells as their text ("#N/A"), which the
    sheet layer turns into missing values with a note.
    """
    try:
        import python_calamine  # desktop dependency; absent where Pyodide has no wheel of it
    except ImportError as exc:
        raise StratPDInputError(
            f'cannot read "{path.name}": this Python has no workbook reader (python-calamine '
            'is not installed); run "pip install python-calamine", or save the sheet as CSV'
        ) from exc

    if suffix == ".ods":
        damaged = (
            f'cannot read "{path.name}" as an OpenDocument spreadsheet (damaged?); '
            "open it in LibreOffice and save it again as .ods"
        )
    else:
        damaged = (
            f'cannot read "{path.name}" as an Excel workbook (damaged or password-protected?); '
            "open it and save it again as .xlsx"
        )
    extent: tuple[int, int, int, Errors] | None = None
    ods_tables: dict[str, tuple[int, int, int, Errors]] = {}
    repeats: dict[str, tuple[int, int]] = {}  # an .ods table's most repeated row with cells
    xls_extents = _xls_extents(path, damaged) if suffix == ".xls" else {}
    archive = None if suffix == ".xls" else _open_zip(path, damaged)  # .xls is not a zip
    try:
        if archive is not None and suffix == ".ods":
            # calamine reads every table of an .ods when it opens it: all are measured first.
            try:
                ods_tables = ods_extents(archive, repeats)
            except (zipfile.BadZipFile, OSError, EOFError, ValueError, KeyError, ExpatError) as exc:
                raise StratPDInputError(damaged) from exc
            tables = [(table, h, w, cells) for table, (h, w, cells, _) in ods_tables.items()]
            _check_every_grid(path, tables, repeats)
        if archive is not None and suffix in (".xlsx", ".xlsm"):
            _check_shared_strings(path, archive, damaged)
        try:
            book = python_calamine.CalamineWorkbook.from_path(str(path))
        except BaseException as exc:  # any failure inside the parser means a damaged file
            if not isinstance(exc, Exception) and not _is_panic(exc):
                raise
            raise StratPDInputError(damaged) from exc
        metadata = {m.name: m for m in book.sheets_metadata}
        notes: list[str] = []
        name = _pick_sheet(list(book.sheet_names), sheet, path)
        if sheet is None:
            name = _first_visible(book, python_calamine, name, path, notes)
        kind = getattr(metadata.get(name), "typ", None)
        if kind is not None and kind != python_calamine.SheetTypeEnum.WorkSheet:
            raise StratPDInputError(f'sheet "{name}" in "{path.name}" is a chart, not a table')
        try:
            if archive is not None and suffix in (".xlsx", ".xlsm"):
                member = xlsx_members(archive).get(name)
                if member in archive.namelist():
                    extent = xlsx_extent(archive, member)
                else:  # unusual markup hid the sheet's member: measure every worksheet
                    for other in archive.namelist():
                        if other.startswith("xl/worksheets/") and other.endswith(".xml"):
                            _check_grid(path, name, *xlsx_extent(archive, other)[:3])
            elif suffix == ".ods":
                extent = ods_tables.get(name)
            elif suffix == ".xls":
                extent = xls_extents.get(name)
            elif archive is not None and suffix == ".xlsb":
                member = xlsb_members(archive).get(name)
                if member in archive.namelist():
                    extent = xlsb_extent(archive, member)
                else:  # the sheet's member not found: measure every worksheet
                    for other in archive.namelist():
                        if other.startswith("xl/worksheets/") and other.endswith(".bin"):
                            _check_grid(path, name, *xlsb_extent(archive, other)[:3])
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
            raise StratPDInputError(damaged) from exc
    finally:
        if archive is not None:
            archive.close()
    if extent is not None:
        _check_grid(path, name, *extent[:3], repeats.get(name), rows=True)
        unsaved = extent[4] if len(extent) > 4 else 0
        if unsaved:
            notes.append(
                f'sheet "{name}" of "{path.name}": {unsaved:,} formula '
                f"{'cells have' if unsaved > 1 else 'cell has'} no saved value and "
                f"{'read' if unsaved > 1 else 'reads'} as blank (the file was written without "
                "calculating it); open it in Excel or LibreOffice and save it again"
            )
    try:
        ws = book.get_sheet_by_name(name)
        if extent is None:  # a sheet our scans did not find by name: measured as built
            # total_height/total_width are the last row and column indexes, not counts.
            last = ws.end
            height, width = (last[0] + 1, last[1] + 1) if last is not None else (0, 0)
            _check_grid(path, name, height, width, ws.height * ws.width, rows=True)
        rows = ws.to_python(skip_empty_area=False)
    except (MemoryError, StratPDInputError):
        raise
    except BaseException as exc:  # malformed XML, bad shared-string index, a panic ...
        if not isinstance(exc, Exception) and not _is_panic(exc):
            raise
        raise StratPDInputError(damaged) from exc
    finally:
        book.close()
    for (r, c), text in (extent[3] if extent else {}).items():
        if r < len(rows) and c < len(rows[r]) and rows[r][c] == "":
            rows[r][c] = text
    return rows, name, notes


def _first_visible(book: Any, calamine: Any, first: str, path: Path, notes: list[str]) -> str:
    """The sheet a spreadsheet shows first: the first visible one (a hidden first sheet was
    read without a word, while the user saw another)."""
    visible = {m.name: m.visible == calamine.SheetVisibleEnum.Visible for m in book.sheets_metadata}
    if visible.get(first, True):
        return first
    shown = [n for n in book.sheet_names if visible.get(n, True)]
    if not shown:
        notes.append(f'every sheet of "{path.name}" is hidden; read "{first}", the first')
        return first
    hidden = [n for n in book.sheet_names[: book.sheet_names.index(shown[0])]]
    listed = ", ".join(f'"{n}"' for n in hidden[:SHOWN_SHEET_NAMES])
    notes.append(
        f'read sheet "{shown[0]}", the first visible one of "{path.name}"; the hidden sheet'
        f"{'s' if len(hidden) > 1 else ''} {listed} before it {'are' if len(hidden) > 1 else 'is'}"
        f" read only when named (--sheet {hidden[0]})"
    )
    return shown[0]
