"""Read a table from a file (.csv/.txt/.tsv, .xlsx/.xlsm/.xlsb/.xls, .ods) into a DataFrame.

Files go through the same sheet layer as cells: each reader hands over the raw block of cell
values and :func:`stratpd_xl.sheet.frame_from_columns` does the typing, so a CSV exported from
a sheet gives the same table as the sheet itself.  Workbooks are read by python-calamine.  In
text files pandas' C reader parses the numbers itself where that gives exactly what the sheet
layer would (see ``_typed_text``); every other column reaches the sheet layer as raw text.

Hostile files (decompression bombs, sheets padded to column XFD, looping .xls sector chains,
devices, pipes, damaged XML) are refused with one sentence before any reader allocates memory
for them; the limits are the ``MAX_*`` constants below (documented in SECURITY.md, "Input
files").
"""

from __future__ import annotations

import csv
import html
import io
import re
import stat
import struct
import warnings
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple
from xml.parsers.expat import ExpatError, ParserCreate

import numpy as np
import pandas as pd

from ._xls_scan import XlsDamaged, xls_sheets
from .errors import StratPDInputError
from .sheet import find_header, frame_from_cells, frame_from_columns, guess_decimal

__all__ = ["TEXT_SUFFIXES", "WORKBOOK_SUFFIXES", "read_table", "sniff_text"]

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
#: Largest total declared uncompressed size of a workbook's zip members.
MAX_UNZIPPED_BYTES = 1024**3
#: Largest compression ratio of one zip member over 1 MiB; spreadsheet XML packs ~5-30x,
#: a decompression bomb ~1000x.
MAX_ZIP_RATIO = 200
#: Largest worksheet grid (last row x last column) a workbook may declare through its cells.
MAX_GRID_CELLS = 50_000_000
#: A grid this many times larger than its real cells (and over a million) is padding.
MAX_PADDING_FACTOR = 20
#: Sheet names listed when a sheet is not found.
SHOWN_SHEET_NAMES = 10


def read_table(
    path: str | Path,
    *,
    sheet: str | None = None,
    decimal: str | None = None,
    encoding: str | None = None,
) -> pd.DataFrame:
    """Read the table in a file; the first row holds the column names.

    Parameters
    ----------
    path
        A ``.csv``/``.txt``/``.tsv`` text file, an ``.xlsx``/``.xlsm``/``.xlsb``/``.xls``
        workbook or an ``.ods`` spreadsheet; a regular file of at most ``MAX_FILE_BYTES``.
    sheet
        Worksheet name for workbooks (case-insensitive); default the first sheet.
    decimal
        ``"."`` or ``","`` for numbers in text files; default: detected (a decimal comma is
        assumed when the file is not comma-separated and some value such as "1,5" can only be
        read that way).
    encoding
        Text file encoding; default UTF-8 (with or without BOM, or UTF-16 with BOM), falling
        back to Windows-1252 and then Latin-1.

    Returns
    -------
    pandas.DataFrame
        As :func:`stratpd_xl.sheet.frame_from_cells` returns it; ``frame.attrs["source"]``
        describes the file (path, format, sheet, delimiter, decimal, encoding).

    Raises
    ------
    StratPDInputError
        File missing or unreadable, not a regular file, over a size limit, damaged, padded or
        a decompression bomb, unknown format, unknown sheet, bad option.
    """
    path = Path(path)
    if decimal not in (None, ".", ","):
        raise StratPDInputError(f'the decimal separator must be "." or ","; got "{decimal}"')
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
        cells, sheet_name = _workbook_cells(path, sheet, suffix)
    else:
        raise StratPDInputError(
            f'unknown file type "{suffix or path.name}"; use a .csv, .txt, .xlsx, .xls or .ods file'
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
    frame.attrs["source"] = {"path": str(path), "format": suffix[1:], "sheet": sheet_name}
    return frame


def _check_regular_file(path: Path) -> None:
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
            f'"{path}" is a folder; give the path of a .csv, .xlsx or .ods file'
        )
    if not stat.S_ISREG(info.st_mode):
        raise StratPDInputError(
            f'"{path}" is not a regular file (a device, pipe or socket); '
            "give the path of a .csv, .xlsx or .ods file"
        )
    if info.st_size > MAX_FILE_BYTES:
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
    text, used = _decode(raw, encoding, path)
    # Excel writes, and obeys, a first line "sep=;" naming the delimiter.
    hint = re.match(r'"?sep=([^\r\n])"?[ \t]*\r?\n', text)
    named, hint_bytes = (hint.group(1), len(hint.group(0).encode("utf-8"))) if hint else (None, 0)
    if hint:
        text = text[hint.end() :]
    hint = None  # the match holds the whole text once more
    dialect = sniff_text(text, delimiter=named)
    delimiter = dialect["delimiter"]
    if decimal is None:
        decimal = dialect["decimal"]
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
    frame.attrs["source"] = {
        "path": str(path),
        "format": "text",
        "delimiter": delimiter,
        "decimal": decimal or ".",
        "encoding": used,
    }
    return frame


def _text_rows(text: str, delimiter: str, path: Path) -> list[list[str]]:
    """The reference reader (csv module): any file the C reader does not split the same way."""
    try:
        return list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    except csv.Error as exc:
        raise StratPDInputError(
            f'"{path.name}" is not a readable CSV file ({exc}); check that it is a table '
            "saved as CSV"
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
    does a column that chunks typed differently.
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
    columns: list[np.ndarray] = []
    again: list[int] = []  # columns the text rules must see as text
    for j, c in enumerate(table.columns):
        values = table[c].to_numpy()
        if values.dtype.kind == "f" and np.isinf(values).any():
            again.append(j)  # "inf" or 1e999: the text rules decide what that cell was
        elif table[c].dtype == object and not _one_kind(values):
            again.append(j)  # numbers or TRUE in some chunks, text in others
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


def _one_kind(values: np.ndarray) -> bool:
    """An object column from the C reader holds one kind of value besides blanks (NaN): all
    text, all TRUE/FALSE (with blanks) or all integers beyond int64, as one chunk gives them."""
    kinds = set(map(type, values))
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
        raise StratPDInputError(
            f'"{path.name}" does not look like a text file; save it as .csv, .xlsx or .ods'
        )
    # UTF-8 first (strict, so a Windows file cannot pass as UTF-8), then the usual Windows
    # code page, then Latin-1 which accepts any byte.
    for candidate in ("utf-8-sig", "cp1252", "latin-1"):
        try:
            return raw.decode(candidate), "utf-8" if candidate == "utf-8-sig" else candidate
        except UnicodeDecodeError:
            continue
    raise AssertionError("latin-1 decodes every byte")  # pragma: no cover


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


def _longest_line(data: bytes, chunk: int = 2**22) -> int:
    """Bytes in the longest "\n"-separated line, a few MiB at a time (no file-sized mask)."""
    view = np.frombuffer(data, dtype=np.uint8)
    longest = start = 0  # start: where the current line begins
    for lo in range(0, view.size, chunk):
        breaks = np.flatnonzero(view[lo : lo + chunk] == ord("\n")) + lo
        if breaks.size:
            inner = int(np.diff(breaks).max()) - 1 if breaks.size > 1 else 0
            longest = max(longest, int(breaks[0]) - start, inner)
            start = int(breaks[-1]) + 1
    return max(longest, view.size - start)


def _head_lines(text: str, count: int = _SNIFF_LINES) -> list[str]:
    """``text.splitlines()[:count]`` without splitting the whole text (0.3 s a million lines).

    Every line that ends before the ``count``-th "\n" is complete, whatever other line
    breaks ``splitlines`` also knows, so the prefix up to it gives the same first lines.
    """
    end = -1
    for _ in range(count):
        end = text.find("\n", end + 1)
        if end < 0:
            return text.splitlines()[:count]
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
    rows = _sample_rows(sample, delimiter)[1:]
    return {"delimiter": delimiter, "decimal": _sniff_decimal(rows, delimiter)}


def _sample_rows(sample: str, delimiter: str) -> list[list[str]]:
    """Rows of the sample; a CSV error here only means "not this delimiter" (reading reports it)."""
    rows: list[list[str]] = []
    try:
        for row in csv.reader(io.StringIO(sample), delimiter=delimiter):
            rows.append(row)
    except csv.Error:
        pass
    return rows


def _sniff_decimal(rows: list[list[str]], delimiter: str) -> str | None:
    """Comma when values can only be decimal-comma numbers and none decimal-point ones."""
    found = guess_decimal(cell for row in rows for cell in row)
    if found is not None:
        return found
    # A comma-separated file can only hold a decimal comma inside quotes; absent evidence,
    # a ";" or tab file from a European locale is still ambiguous, so let columns decide.
    return "." if delimiter == "," else None


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


def _check_grid(path: Path, sheet: str, height: int, width: int, cells: int) -> None:
    """Refuse a sheet whose used area is mostly padding, before any reader allocates it."""
    grid = height * width
    if grid > MAX_GRID_CELLS or (grid > 1_000_000 and grid > MAX_PADDING_FACTOR * max(cells, 1)):
        raise StratPDInputError(
            f'sheet "{sheet}" of "{path.name}" spans {height:,} rows x {width:,} columns but '
            f"holds only {cells:,} cells; delete the stray cells far from the table "
            f"(limit {MAX_GRID_CELLS:,} cells) and save again"
        )


def _check_every_grid(path: Path, sheets: list[tuple[str, int, int, int]]) -> None:
    """Refuse any padded sheet, and sheets that are padding together, of a workbook whose
    reader builds every sheet when it opens the file (.ods, .xls).

    ``sheets`` holds (name, used rows, used columns, cells) of each.  Each sheet may stay just
    under the limits; 300 such sheets still cost 300 grids (a 3 kB .ods took 22 s and 9.4 GB).
    """
    for name, height, width, cells in sheets:
        _check_grid(path, name, height, width, cells)
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
_XLSX_ERROR_CELL = re.compile(rb'<(?:\w+:)?c\s([^>]*\bt="e"[^>]*)>')
#: Past Excel's 16,384 columns and 1,048,576 rows by far; calamine would still try them.
_HUGE = 10**10

_SPACE = np.zeros(256, bool)
_SPACE[list(b" \t\r\n")] = True
_NAME_END = _SPACE.copy()  # what may follow a tag's name
_NAME_END[list(b"/>")] = True
_LETTER = np.zeros(256, np.int64)  # A-Z and a-z -> 1-26, like calamine
for _i in range(26):
    _LETTER[65 + _i] = _LETTER[97 + _i] = _i + 1
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


def _xlsx_extent(book: zipfile.ZipFile, member: str) -> tuple[int, int, int, Errors]:
    """(last row, last column, number of cells, error cells) a worksheet's XML can make calamine
    allocate.

    calamine places a cell without ``r`` after the previous cell of its row, and a row without
    ``r`` after the previous row: then the sheet is taken to be as wide as its widest row's
    cells beyond the largest column named, and as tall as its rows beyond the largest row
    named.  Array operations per megabyte, not a Python loop per cell: this runs on every read.
    """
    height = width = cells = rows = cell_refs = row_refs = widest = carry = 0
    errors: Errors = {}
    with book.open(member) as handle:
        for buffer in _stream_chunks(handle, close=b"</row>"):
            found = _xlsx_refs(buffer) or _xlsx_refs_slow(buffer)
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
    return height, width, cells, errors


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
_BOM = b"\xef\xbb\xbf"
#: Longest self-closed cell tag looked into for a value or formula (LibreOffice's: ~60 bytes).
_ODS_EMPTY_TAG = 256


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
    unusual tag by tag.
    """

    def __init__(self) -> None:
        self.extents: dict[str, tuple[int, int, int, Errors]] = {}
        self.name = ""
        self.height = self.width = self.cells = self.row_pos = 0
        self.col_pos = self.row_used = self.row_repeat = 0
        self.errors: Errors = {}
        self.table_open = False
        #: A stretch the array scan could not vouch for: expat checks the whole XML at the end.
        self.unchecked = False

    def feed(self, chunk: bytes) -> None:
        tags = _xml_tags(chunk)
        rows = None if tags is None else _ods_rows(*tags)
        if rows is None:
            self.unchecked |= tags is None
            self._tags(chunk)
            return
        spans, used, cells = rows
        if used.any():
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
                self.row_pos += self.row_repeat
                if self.row_used:
                    self.height = self.row_pos
                    self.width = max(self.width, self.row_used)
            else:
                repeat = _ODS_COLS.search(attrs)
                start = self.col_pos
                self.col_pos += _repeat(repeat.group(1)) if repeat else 1
                if not closed or b"value-type" in attrs or b"formula" in attrs:
                    self.cells += 1
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


def _word(text: bytes) -> int:
    return int.from_bytes(text.ljust(8, b"\0"), "little")


_TEXT_NS, _LOW5 = _word(b"text:"), 2**40 - 1
_TABLE_TA, _BLE_CELL, _BLE_ROW, _LOW7 = (
    _word(b"table:ta"), _word(b"ble-cell"), _word(b"ble-row"), 2**56 - 1
)
_TABLE_CO, _VERED_TA = _word(b"table:co"), _word(b"vered-ta")


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
    return row_spans, used, int(hits.size)


def _ods_extents(book: zipfile.ZipFile) -> dict[str, tuple[int, int, int, Errors]]:
    """Per table: (used rows, used columns, filled cell elements, error cells), repeats counted.

    Raises ``ValueError`` for content python-calamine would misread or never finish: cut short
    (a table left open makes it loop forever), not well-formed where the fast scan could not
    vouch for it, or with markup (``<!``: comments, CDATA, a DOCTYPE; ``<?`` after the
    declaration) that could hide tags from this scan.
    """
    scan = _OdsScan()
    last = b""
    with book.open("content.xml") as handle:
        # 256 kB buffers: the scan's dozen passes over each stay in a 2-4 MB cache (1 MB
        # buffers took 10 % longer); rows up to 4 MB (~40,000 filled cells) stay whole.
        for chunk in _stream_chunks(handle, close=_ODS_ROW_END, size=2**18, longest=2**22):
            scan.feed(chunk)
            last = (last + chunk[-64:])[-64:]  # not last + chunk: a copy of every buffer
    scan.finish()
    if scan.table_open or not last.rstrip().endswith(_ODS_DOC_END):
        raise ValueError("content.xml is cut short")
    if scan.unchecked:
        _check_xml(book, "content.xml")
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


def _xlsb_extent(book: zipfile.ZipFile, member: str) -> tuple[int, int, int, Errors]:
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


def _xlsb_members(book: zipfile.ZipFile) -> dict[str, str]:
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


def _xlsx_members(book: zipfile.ZipFile) -> dict[str, str]:
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


def _workbook_cells(path: Path, sheet: str | None, suffix: str) -> tuple[list[list[Any]], str]:
    """The chosen sheet's cells through calamine, after the cheap checks against bombs.

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
    ods_extents: dict[str, tuple[int, int, int, Errors]] = {}
    xls_extents = _xls_extents(path, damaged) if suffix == ".xls" else {}
    archive = None if suffix == ".xls" else _open_zip(path, damaged)  # .xls is not a zip
    try:
        if archive is not None and suffix == ".ods":
            # calamine reads every table of an .ods when it opens it: all are measured first.
            try:
                ods_extents = _ods_extents(archive)
            except (zipfile.BadZipFile, OSError, EOFError, ValueError, KeyError, ExpatError) as exc:
                raise StratPDInputError(damaged) from exc
            tables = [(table, h, w, cells) for table, (h, w, cells, _) in ods_extents.items()]
            _check_every_grid(path, tables)
        try:
            book = python_calamine.CalamineWorkbook.from_path(str(path))
        except BaseException as exc:  # any failure inside the parser means a damaged file
            if not isinstance(exc, Exception) and not _is_panic(exc):
                raise
            raise StratPDInputError(damaged) from exc
        metadata = {m.name: m for m in book.sheets_metadata}
        name = _pick_sheet(list(book.sheet_names), sheet, path)
        kind = getattr(metadata.get(name), "typ", None)
        if kind is not None and kind != python_calamine.SheetTypeEnum.WorkSheet:
            raise StratPDInputError(f'sheet "{name}" in "{path.name}" is a chart, not a table')
        try:
            if archive is not None and suffix in (".xlsx", ".xlsm"):
                member = _xlsx_members(archive).get(name)
                if member in archive.namelist():
                    extent = _xlsx_extent(archive, member)
                else:  # unusual markup hid the sheet's member: measure every worksheet
                    for other in archive.namelist():
                        if other.startswith("xl/worksheets/") and other.endswith(".xml"):
                            _check_grid(path, name, *_xlsx_extent(archive, other)[:3])
            elif suffix == ".ods":
                extent = ods_extents.get(name)
            elif suffix == ".xls":
                extent = xls_extents.get(name)
            elif archive is not None and suffix == ".xlsb":
                member = _xlsb_members(archive).get(name)
                if member in archive.namelist():
                    extent = _xlsb_extent(archive, member)
                else:  # the sheet's member not found: measure every worksheet
                    for other in archive.namelist():
                        if other.startswith("xl/worksheets/") and other.endswith(".bin"):
                            _check_grid(path, name, *_xlsb_extent(archive, other)[:3])
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
            raise StratPDInputError(damaged) from exc
    finally:
        if archive is not None:
            archive.close()
    if extent is not None:
        _check_grid(path, name, *extent[:3])
    try:
        ws = book.get_sheet_by_name(name)
        if extent is None:  # a sheet our scans did not find by name: measured as built
            # total_height/total_width are the last row and column indexes, not counts.
            last = ws.end
            height, width = (last[0] + 1, last[1] + 1) if last is not None else (0, 0)
            _check_grid(path, name, height, width, ws.height * ws.width)
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
    return rows, name
