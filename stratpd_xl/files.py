"""Read a table from a file (.csv/.txt/.tsv, .xlsx/.xlsm, .ods) into a clean DataFrame.

Files go through the same sheet layer as cells: each reader only hands over the raw block of
cell values and :func:`stratpd_xl.sheet.frame_from_cells` does the typing, so a CSV exported
from a sheet gives the same table as the sheet itself.
"""

from __future__ import annotations

import csv
import io
import re
import stat
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any
from xml.parsers.expat import ExpatError, ParserCreate

import pandas as pd

from .errors import StratPDInputError
from .sheet import frame_from_cells, guess_decimal

__all__ = ["TEXT_SUFFIXES", "WORKBOOK_SUFFIXES", "read_table", "sniff_text"]

TEXT_SUFFIXES = (".csv", ".txt", ".tsv")
WORKBOOK_SUFFIXES = (".xlsx", ".xlsm", ".ods")
_DELIMITERS = (",", ";", "\t", "|")
_SNIFF_LINES = 200

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
        A ``.csv``/``.txt``/``.tsv`` text file, an ``.xlsx``/``.xlsm`` workbook or an ``.ods``
        spreadsheet.
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
        File missing or unreadable, unknown format, unknown sheet, bad option.
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
    if suffix == ".xls":
        raise StratPDInputError(
            f'"{path.name}" is in the old .xls format; save it as .xlsx or .csv and try again'
        )
    if suffix in (".xlsx", ".xlsm"):
        cells, sheet_name = _xlsx_cells(path, sheet)
    elif suffix == ".ods":
        cells, sheet_name = _ods_cells(path, sheet)
    else:
        raise StratPDInputError(
            f'unknown file type "{suffix or path.name}"; use a .csv, .txt, .xlsx or .ods file'
        )
    frame = _frame(cells, decimal, f'sheet "{sheet_name}" of "{path.name}"')
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
    if hint:
        text = text[hint.end() :]
    dialect = sniff_text(text, delimiter=hint.group(1) if hint else None)
    delimiter = dialect["delimiter"]
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    except csv.Error as exc:
        raise StratPDInputError(
            f'"{path.name}" is not a readable CSV file ({exc}); check that it is a table '
            "saved as CSV"
        ) from exc
    if decimal is None:
        decimal = dialect["decimal"]
    frame = _frame(rows, decimal, f'"{path.name}"')
    frame.attrs["source"] = {
        "path": str(path),
        "format": "text",
        "delimiter": delimiter,
        "decimal": decimal or ".",
        "encoding": used,
    }
    return frame


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
    lines = [ln for ln in text.splitlines()[:_SNIFF_LINES] if ln.strip()]
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
        raise StratPDInputError(
            f'"{path.name}" unpacks to {_size(total)}, '
            + ("over the limit" if total > MAX_UNZIPPED_BYTES else "far more than a real table")
            + f" for workbooks ({_size(MAX_UNZIPPED_BYTES)}, {MAX_ZIP_RATIO}x packing); "
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


def _stream_tags(handle: Any, pattern: re.Pattern[bytes], *, check_xml: bool = False) -> Any:
    """Matches of ``pattern`` in an XML stream read 1 MiB at a time, never split inside a tag.

    With ``check_xml``, expat (no tree, no handlers) also checks that the XML is well formed:
    odfpy only prints a parse error and then reads an empty document.
    """
    parser = ParserCreate() if check_xml else None
    tail = b""
    while True:
        chunk = handle.read(2**20)
        if parser is not None:
            parser.Parse(chunk, not chunk)
        if not chunk:
            break
        buffer = tail + chunk
        cut = buffer.rfind(b">") + 1
        yield from pattern.finditer(buffer, 0, cut)
        tail = buffer[cut:]


# Only the coordinates matter, so a regular expression over the raw XML is enough and costs no
# tree: the XML parsers would build the whole padded grid we are trying to avoid.
_XLSX_TAGS = re.compile(rb"<(?:\w+:)?(c|row)(?=[\s/>])([^>]*)>")
_XLSX_REF = re.compile(rb'\br="([A-Z]{0,3})([0-9]{1,8})"')


def _xlsx_extent(book: zipfile.ZipFile, member: str) -> tuple[int, int, int]:
    """(last row, last column, number of cells) that a worksheet's XML declares."""
    height = width = cells = 0
    with book.open(member) as handle:
        for match in _stream_tags(handle, _XLSX_TAGS):
            ref = _XLSX_REF.search(match.group(2))
            if match.group(1) == b"c":
                cells += 1
            if ref is None:
                continue
            height = max(height, int(ref.group(2)))
            if ref.group(1):
                col = 0
                for letter in ref.group(1):
                    col = col * 26 + letter - 64
                width = max(width, col)
    return height, width, cells


def _xlsx_cells(path: Path, sheet: str | None) -> tuple[list[list[Any]], str]:
    import openpyxl

    damaged = (
        f'cannot read "{path.name}" as an Excel workbook (damaged or password-protected?); '
        "open it and save it again as .xlsx"
    )
    with _open_zip(path, damaged) as archive:
        try:
            # data_only: the values Excel last calculated, not formulas; error cells come as
            # "#N/A".
            book = openpyxl.load_workbook(path, read_only=True, data_only=True)
        except Exception as exc:  # any failure inside the parser means a damaged file
            raise StratPDInputError(damaged) from exc
        try:
            name = _pick_sheet(book.sheetnames, sheet, path)
            ws = book[name]
            if not hasattr(ws, "iter_rows"):
                raise StratPDInputError(f'sheet "{name}" in "{path.name}" is a chart, not a table')
            member = getattr(ws, "_worksheet_path", None)
            if member:
                _check_grid(path, name, *_xlsx_extent(archive, member.lstrip("/")))
            # Files written by other tools often declare a wrong used range ("A1"); without
            # this the read-only reader would stop at the declared range and drop the data.
            ws.reset_dimensions()
            try:
                cells = [list(row) for row in ws.iter_rows(values_only=True)]
            except (MemoryError, StratPDInputError):
                raise
            except Exception as exc:  # malformed XML, bad shared-string index, ...
                raise StratPDInputError(damaged) from exc
        finally:
            book.close()
    return cells, name


_ODS_TAGS = re.compile(
    # The lookahead, not \b: "table:table" must not match "table:table-row" at the hyphen.
    rb"<(table:table|/table:table-row|table:table-row|table:table-cell|table:covered-table-cell)"
    rb"(?=[\s/>])([^>]*?)(/?)>"
)
_ODS_NAME = re.compile(rb'table:name="([^"]*)"')
_ODS_ROWS = re.compile(rb'table:number-rows-repeated="([0-9]+)"')
_ODS_COLS = re.compile(rb'table:number-columns-repeated="([0-9]+)"')


def _ods_extents(book: zipfile.ZipFile) -> dict[str, tuple[int, int, int]]:
    """Per table: (used rows, used columns, filled cell elements), repeats counted.

    Trailing empty rows and cells (LibreOffice writes a million of them as one repeated
    element) are not used area: readers drop them.  Repeated empty cells *before* a filled one
    are, and are how a small file pads a sheet to 16,384 columns.
    """
    import html

    extents: dict[str, tuple[int, int, int]] = {}
    name = ""
    height = width = cells = row_pos = col_pos = row_used = row_repeat = 0
    with book.open("content.xml") as handle:
        for match in _stream_tags(handle, _ODS_TAGS, check_xml=True):
            tag, attrs, closed = match.groups()
            if tag == b"table:table":
                if name:
                    extents[name] = (height, width, cells)
                found = _ODS_NAME.search(attrs)
                name = html.unescape(found.group(1).decode("utf-8", "replace")) if found else ""
                height = width = cells = row_pos = 0
            elif tag == b"table:table-row":
                repeat = _ODS_ROWS.search(attrs)
                row_repeat = int(repeat.group(1)) if repeat else 1
                col_pos = row_used = 0
                if closed:
                    row_pos += row_repeat
            elif tag == b"/table:table-row":
                row_pos += row_repeat
                if row_used:
                    height, width = row_pos, max(width, row_used)
            else:
                repeat = _ODS_COLS.search(attrs)
                col_pos += int(repeat.group(1)) if repeat else 1
                if not closed or b"office:value-type" in attrs:
                    cells += 1
                    row_used = col_pos
    if name:
        extents[name] = (height, width, cells)
    return extents


def _ods_cells(path: Path, sheet: str | None) -> tuple[list[list[Any]], str]:
    damaged = (
        f'cannot read "{path.name}" as an OpenDocument spreadsheet (damaged?); '
        "open it in LibreOffice and save it again as .ods"
    )
    with _open_zip(path, damaged) as archive:
        if "content.xml" not in archive.namelist():
            raise StratPDInputError(damaged)
        try:
            extents = _ods_extents(archive)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, ExpatError) as exc:
            raise StratPDInputError(damaged) from exc
    try:
        book = pd.ExcelFile(path, engine="odf")
    except Exception as exc:  # any failure inside the parser means a damaged file
        raise StratPDInputError(damaged) from exc
    with book:
        name = _pick_sheet([str(s) for s in book.sheet_names], sheet, path)
        if name in extents:
            _check_grid(path, name, *extents[name])
        try:
            raw = pd.read_excel(book, sheet_name=name, header=None, dtype=object)
        except MemoryError:
            raise
        except Exception as exc:  # malformed XML, ...
            raise StratPDInputError(damaged) from exc
    cells = raw.astype(object).where(raw.notna(), None).values.tolist()
    return cells, name
