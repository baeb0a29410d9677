"""Read a table from a file (.csv/.txt/.tsv, .xlsx/.xlsm, .ods) into a clean DataFrame.

Files go through the same sheet layer as cells: each reader only hands over the raw block of
cell values and :func:`stratpd_xl.sheet.frame_from_cells` does the typing, so a CSV exported
from a sheet gives the same table as the sheet itself.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from .errors import StratPDInputError
from .sheet import frame_from_cells, guess_decimal

__all__ = ["TEXT_SUFFIXES", "WORKBOOK_SUFFIXES", "read_table", "sniff_text"]

TEXT_SUFFIXES = (".csv", ".txt", ".tsv")
WORKBOOK_SUFFIXES = (".xlsx", ".xlsm", ".ods")
_DELIMITERS = (",", ";", "\t", "|")
_SNIFF_LINES = 200


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
    if not path.exists():
        raise StratPDInputError(f'file "{path}" not found; check the name and folder')
    if path.is_dir():
        raise StratPDInputError(
            f'"{path}" is a folder; give the path of a .csv, .xlsx or .ods file'
        )
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


def _frame(cells: list[list[Any]], decimal: str | None, where: str) -> pd.DataFrame:
    """frame_from_cells for a whole file or sheet: title rows skipped, the file named in errors."""
    return frame_from_cells(cells, decimal=decimal, skip_titles=True, where=where)


# --------------------------------------------------------------------------- text files


def _read_text(path: Path, *, decimal: str | None, encoding: str | None) -> pd.DataFrame:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise StratPDInputError(f'cannot read "{path}": {exc.strerror or exc}') from exc
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
    listed = ", ".join(names)
    raise StratPDInputError(f'sheet "{sheet}" not found in "{path.name}"; sheets are: {listed}')


def _xlsx_cells(path: Path, sheet: str | None) -> tuple[list[list[Any]], str]:
    import openpyxl
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        # data_only: the values Excel last calculated, not formulas; error cells come as "#N/A".
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (zipfile.BadZipFile, InvalidFileException, KeyError, OSError) as exc:
        raise StratPDInputError(
            f'cannot read "{path.name}" as an Excel workbook (damaged or password-protected?); '
            "open it and save it again as .xlsx"
        ) from exc
    try:
        name = _pick_sheet(book.sheetnames, sheet, path)
        ws = book[name]
        if not hasattr(ws, "iter_rows"):
            raise StratPDInputError(f'sheet "{name}" in "{path.name}" is a chart, not a table')
        # Files written by other tools often declare a wrong used range ("A1"); without this
        # the read-only reader would stop at the declared range and drop the data.
        ws.reset_dimensions()
        cells = [list(row) for row in ws.iter_rows(values_only=True)]
    finally:
        book.close()
    return cells, name


def _ods_cells(path: Path, sheet: str | None) -> tuple[list[list[Any]], str]:
    try:
        book = pd.ExcelFile(path, engine="odf")
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise StratPDInputError(
            f'cannot read "{path.name}" as an OpenDocument spreadsheet; '
            "open it in LibreOffice and save it again as .ods"
        ) from exc
    with book:
        name = _pick_sheet([str(s) for s in book.sheet_names], sheet, path)
        raw = pd.read_excel(book, sheet_name=name, header=None, dtype=object)
    cells = raw.astype(object).where(raw.notna(), None).values.tolist()
    return cells, name
