"""A block of cells (rows of a selection, a sheet, a CSV) -> a typed DataFrame.

The block is handled column by column: rows are transposed once, blank rows and columns are
found from per-column masks, one-cell title rows above the table are skipped, and each column
is typed by :func:`._columns.typed_column`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...errors import StratPDInputError
from ._columns import blank_mask, scan_column, typed_rows
from ._values import column_names, header_text, is_blank

__all__ = ["find_header", "frame_from_cells", "frame_from_columns", "whole_characters"]

# Title rows are looked for among the first rows only: a table's body is never a title.
_TITLE_SCAN_ROWS = 50


def frame_from_cells(
    values: Sequence[Sequence[Any]] | np.ndarray | pd.DataFrame,
    *,
    decimal: str | None = None,
    skip_titles: bool = False,
    where: str = "the selection",
) -> pd.DataFrame:
    """Turn a block of cell values (first row = column names) into a typed DataFrame.

    Parameters
    ----------
    values
        Rows of cell values as Excel (xlwings), LibreOffice, a workbook reader or a CSV reader
        hand them over.  Rows may have different lengths; ``None``, ``""`` and NaN are blank.
    decimal
        Decimal separator of numbers stored as text: ``"."`` ("1,234.5"), ``","`` ("1.234,5")
        or ``None`` to decide per column (comma only when some value can only be read that way,
        such as "1,5").
    skip_titles
        Skip one-cell rows above a table of three or more columns ("Sales 2024", "Source: ...")
        and say so in the notes; for whole sheets and files, where people put titles.
    where
        How error sentences name the block (``'sheet "Data" of "sales.xlsx"'``).

    Returns
    -------
    pandas.DataFrame
        One column per non-blank column of the block, named by the header row (blank names
        become ``"column 3"``, repeated names ``"price (2)"``).  Column types: numbers
        (int64/float64, including numbers stored as text), dates (datetime64), booleans
        (bool, or object when some are blank) and text.  Excel error values such as ``#N/A``
        and blank cells are missing values; blank rows and all-blank columns are dropped.
        ``frame.attrs["notes"]`` lists sentences about cells that were treated as missing.

    Raises
    ------
    StratPDInputError
        When the block is empty or has no data rows under the header.
    """
    rows = _as_rows(values)
    width = max(map(len, rows), default=0)
    if width == 0:
        return frame_from_columns([], decimal=decimal, skip_titles=skip_titles, where=where)
    # Short rows are padded with blanks.
    if min(map(len, rows)) != width:
        rows = [
            row if len(row) == width else [*row, *([None] * (width - len(row)))] for row in rows
        ]
    # One pass over the cells in C; fromiter over the chained rows takes half the time of
    # assigning the rows to a 2-D array, which first probes each row as a sequence.
    block = np.fromiter(
        itertools.chain.from_iterable(rows), dtype=object, count=len(rows) * width
    ).reshape(len(rows), width)
    columns = [block[:, j] for j in range(width)]
    return frame_from_columns(columns, decimal=decimal, skip_titles=skip_titles, where=where)


def frame_from_columns(
    columns: Sequence[Sequence[Any] | np.ndarray | pd.Series],
    *,
    header: Sequence[Any] | None = None,
    decimal: str | None = None,
    skip_titles: bool = False,
    where: str = "the selection",
) -> pd.DataFrame:
    """Like :func:`frame_from_cells`, for a block given column by column.

    Parameters
    ----------
    columns
        The block's columns, all of one length: object arrays of raw cells, or arrays a
        reader already typed (float64 columns take the fast path).
    header
        The header cells when the reader read them apart from ``columns`` (then ``columns``
        hold only data rows and title rows are not looked for); ``None`` when the header is
        the first non-blank row of ``columns``.
    decimal, skip_titles, where
        As for :func:`frame_from_cells`.
    """
    if decimal not in (None, ".", ","):
        raise StratPDInputError(f'decimal separator must be "." or ","; got "{decimal}"')
    columns = [_as_array(c) for c in columns]
    lengths = {len(c) for c in columns}
    if len(lengths) > 1:
        raise ValueError("columns must all have the same length")
    n = lengths.pop() if lengths else 0
    filled = np.zeros(n, dtype=bool)
    scans = [scan_column(c) for c in columns]
    blanks = [scan.blank for scan in scans]
    for mask in blanks:
        filled |= ~mask
    notes: list[str] = []
    if header is None:
        found = _find_header(columns, blanks, filled, skip_titles, where, complete=True)
        assert found is not None  # a complete block always decides
        head, notes = found
        header = [c[head] for c in columns]
        body_rows = np.flatnonzero(filled)
        body_rows = body_rows[body_rows > head]
    else:
        header = list(header) + [None] * (len(columns) - len(header))
        body_rows = np.flatnonzero(filled)
    if body_rows.size == 0:
        raise StratPDInputError(
            f"{where} has a header row but no data rows; select the header and the rows below it"
            if where == "the selection"
            else f"{where} has a header row but no data rows; add the data below the column names"
        )
    # Body rows without a blank row among them are a slice: views instead of copies.
    first, last = int(body_rows[0]), int(body_rows[-1])
    take: slice | np.ndarray = (
        slice(first, last + 1) if last - first + 1 == body_rows.size else body_rows
    )
    names = column_names(list(header))
    typed: dict[str, pd.Series] = {}
    code_texts: dict[str, tuple[Any, ...]] = {}
    for j, name in enumerate(names):
        blank = blanks[j][take]
        if is_blank(header[j]) and blank.all():
            continue  # an all-blank column, e.g. a spacer column inside the selection
        # The blank scan's floats of an all-number body serve again.
        series, col_notes = typed_rows(name, columns[j], scans[j], take, decimal)
        if "texts" in series.attrs:  # numbers with leading zeros: kept for categories
            code_texts[name] = series.attrs.pop("texts")
        typed[name] = series.reset_index(drop=True)
        notes.extend(col_notes)
    if not typed:
        raise StratPDInputError(f"{where} holds no columns with values")
    try:
        frame = pd.DataFrame(typed)
    except UnicodeEncodeError:
        # A name holding half a character: pandas' pyarrow strings cannot hold it, so the
        # names stay Python text until whole_characters mends them and says so.
        frame = pd.DataFrame(dict(enumerate(typed.values())))
        frame.columns = pd.Index(list(typed), dtype=object)
    frame.attrs["notes"] = notes
    frame = whole_characters(frame)
    # Names given to repeated headers ("y (2)" for a second "y"): naming "y" is then ambiguous.
    renamed = {
        name: base
        for j, name in enumerate(names)
        if name in typed and name != (base := header_text(header[j]) or f"column {j + 1}")
    }
    if renamed:
        frame.attrs["renamed"] = renamed
    if code_texts:
        frame.attrs["texts"] = code_texts
    return frame


def _mended(text: str) -> str:
    # Through UTF-16: a pair of surrogates is its character again, a lone one U+FFFD.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _is_whole(texts: Sequence[str]) -> bool:
    """True when ``texts`` hold no lone surrogate; TypeError when one is not text."""
    try:
        "".join(texts).encode("utf-8")  # one pass in C; fails only on a surrogate
    except UnicodeEncodeError:
        return False
    return True


def _all_whole(values: np.ndarray) -> bool:
    """True when no text among ``values`` holds half a character: one join in C, the blanks
    (NaN) taken out first when there are any (a Python loop over a million cells cost 0.25 s)."""
    try:
        return _is_whole(values)  # type: ignore[arg-type]
    except TypeError:
        pass
    present = values[~np.asarray(pd.isna(values), dtype=bool)]
    try:
        return _is_whole(present)  # type: ignore[arg-type]
    except TypeError:  # numbers or dates among the texts
        return _is_whole([v for v in present if type(v) is str])


def whole_characters(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with text that holds half a character made whole, and a note saying so.

    Excel's ``=LEFT(A2,1)`` of a cell starting with an emoji leaves half of it (a lone UTF-16
    surrogate), which no file, hash or answer in UTF-8 can carry ("internal error" from
    pandas' hashing).  In column names and text cells, two halves written apart become their
    character and a lone half is U+FFFD (shown as a question mark in a box); the note counts
    the cells.  A frame without such text is returned as it is (one C pass per text column).
    """
    names = [str(c) for c in frame.columns]
    bad_names = [] if _is_whole(names) else [n for n in names if not _is_whole([n])]
    fixed: dict[str, pd.Series] = {}
    counts: dict[str, int] = {}
    for name, column in frame.items():
        dtype = column.dtype
        if isinstance(dtype, pd.CategoricalDtype):
            values = np.asarray(dtype.categories, dtype=object)
        elif pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
            values = column.to_numpy(dtype=object)
        else:
            continue
        if _all_whole(values):
            continue
        # Cells left with a U+FFFD (a pair written apart is only joined, and not counted).
        counts[str(name)] = sum(1 for v in column.to_numpy(dtype=object) if type(v) is str
                                and _mended(v).count("\ufffd") > v.count("\ufffd"))
        if isinstance(dtype, pd.CategoricalDtype):
            # Two categories may become one ("a\ud800" and "a\udc00" are both "a?").
            fixed[name] = column.astype(object).map(
                lambda v: _mended(v) if type(v) is str else v).astype("category")
        else:
            fixed[name] = column.map(lambda v: _mended(v) if type(v) is str else v)
    if not fixed and not bad_names:
        return frame
    out = frame.assign(**fixed) if fixed else frame.copy(deep=False)
    if bad_names:
        out.columns = [_mended(str(c)) if str(c) in bad_names else c for c in frame.columns]
    out.attrs = dict(frame.attrs)
    cells = sum(counts.values())
    where = [f'{n:,} in "{_mended(c)}"' for c, n in counts.items() if n]
    parts = []
    if cells:
        parts.append(f"{cells:,} text cell{'s' if cells != 1 else ''} ({', '.join(where[:5])})")
    if bad_names:
        parts.append(f"{len(bad_names)} column name{'s' if len(bad_names) > 1 else ''}")
    if parts:
        out.attrs["notes"] = [*(frame.attrs.get("notes") or []),
                              " and ".join(parts) + " held half of a character (a lone surrogate, "
                              "as =LEFT of a cell starting with an emoji leaves); it is shown "
                              "as \ufffd"]
    return out


def find_header(
    columns: Sequence[Sequence[Any] | np.ndarray | pd.Series],
    *,
    skip_titles: bool = False,
    where: str = "the selection",
    complete: bool = True,
) -> tuple[int, list[str]] | None:
    """Which row of a block holds the column names, as :func:`frame_from_columns` decides it.

    For readers that read the header apart from the data (numbers typed by the reader itself):
    they look at the first rows here, then hand the rest to ``frame_from_columns(header=...)``.

    Parameters
    ----------
    columns
        The block's columns of raw cells, all of one length: the whole block or its first rows.
    skip_titles, where
        As for :func:`frame_from_cells`.
    complete
        False when ``columns`` hold only the first rows of a longer block.

    Returns
    -------
    (row, notes) or None
        The index of the header row in ``columns`` and the notes about title rows skipped
        above it; ``None`` when the first rows of a longer block are too few to decide (too
        few filled rows to tell title rows from a table), so the caller reads the whole block.

    Raises
    ------
    StratPDInputError
        When a complete block is empty.
    """
    columns = [_as_array(c) for c in columns]
    n = len(columns[0]) if columns else 0
    filled = np.zeros(n, dtype=bool)
    blanks = [blank_mask(c) for c in columns]
    for mask in blanks:
        filled |= ~mask
    return _find_header(columns, blanks, filled, skip_titles, where, complete=complete)


def _find_header(
    columns: list[np.ndarray],
    blanks: list[np.ndarray],
    filled: np.ndarray,
    skip_titles: bool,
    where: str,
    *,
    complete: bool,
) -> tuple[int, list[str]] | None:
    rows = np.flatnonzero(filled)
    # Title rows are looked for among the first _TITLE_SCAN_ROWS filled rows, and only while
    # more than two rows follow; a head with a few more rows than that decides as the whole.
    if not complete and rows.size < _TITLE_SCAN_ROWS + 3:
        return None
    if rows.size == 0:
        raise StratPDInputError(
            "the selection is empty; select the table including its header row"
            if where == "the selection"
            else f"{where} is empty; it needs a header row and data rows below it"
        )
    notes: list[str] = []
    start = _title_rows(columns, blanks, rows) if skip_titles else 0
    if start:
        titles = [_first_text(columns, int(i)) for i in rows[:start]]
        shown = "; ".join(t if len(t) <= 40 else t[:37] + "..." for t in titles)
        notes.append(
            f"skipped {start} title {'row' if start == 1 else 'rows'} above the table ({shown})"
        )
    return int(rows[start]), notes


def _as_array(column: Sequence[Any] | np.ndarray | pd.Series) -> np.ndarray:
    if isinstance(column, pd.Series):
        return column.to_numpy()
    if isinstance(column, np.ndarray):
        return column
    return np.array(list(column), dtype=object)


def _title_rows(columns: list[np.ndarray], blanks: list[np.ndarray], rows: np.ndarray) -> int:
    """How many one-cell rows sit above a table of at least three columns."""
    head = rows[:_TITLE_SCAN_ROWS]
    counts = np.zeros(head.size, dtype=np.int64)
    for mask in blanks:
        counts += ~mask[head]
    widest = int(counts.max())
    skip = 0
    # Sheets made for people often carry a title ("Sales 2024", "Source: ...") in one cell
    # above the table; as a header it would turn every column into text.
    while widest >= 3 and skip < head.size and rows.size - skip > 2 and counts[skip] == 1:
        skip += 1
    return skip


def _first_text(columns: list[np.ndarray], row: int) -> str:
    return next(str(c[row]).strip() for c in columns if not is_blank(c[row]))


def _as_rows(values: Any) -> list[Sequence[Any]]:
    """Accept list-of-rows, tuples, numpy 2-D arrays and DataFrames; reject scalars clearly."""
    if isinstance(values, pd.DataFrame):
        return [list(map(str, values.columns))] + values.astype(object).values.tolist()
    if isinstance(values, np.ndarray):
        values = values.tolist()
    if values is None or isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise StratPDInputError(
            "expected a block of cells with a header row; select the whole table, not one cell"
        )
    rows = list(values)
    if rows and not any(isinstance(r, Sequence) and not isinstance(r, str | bytes) for r in rows):
        # A single row arrives flat from some front ends (xlwings without ndim=2).
        rows = [rows]
    # Rows that are lists or tuples (what Excel front ends pass) are used as they are; an
    # ABC isinstance or a copy per row would cost more than the whole transposition.
    if set(map(type, rows)) <= {list, tuple}:
        return rows
    out: list[Sequence[Any]] = []
    for row in rows:
        if isinstance(row, Sequence) and not isinstance(row, str | bytes):
            out.append(row)
        else:
            out.append([row])
    return out
