"""The sheet layer: cells and files' raw values <-> typed DataFrames, and which columns to use.

Every front end (Excel formula, ribbon add-in, CLI, file readers) goes through here, so a block
of cells behaves the same wherever it comes from.  No I/O and no statistics live here.

Public names
------------
frame_from_cells    2-D block of cell values (first row = header) -> typed DataFrame
frame_from_columns  the same, given column by column (the shared typing step of every reader)
find_header         which row holds the column names (for readers that read it apart)
typed_column        one column of raw values -> typed Series and notes
guess_decimal       decimal separator that a sample of number texts supports
leading_zeros       whether number texts carry leading zeros ("007": codes, kept for categories)
resolve_column      user-typed column name -> exact column name (case/space-insensitive)
check_rows          enough usable rows for StratPD, numeric target, ... -> None or an error
default_features    the columns worth analysing, and why the others are left out
usable_table        the table without those columns
cells_from_frame    DataFrame -> header row + rows of plain Python values (for writing to cells)
whole_characters    text holding half a character (a lone surrogate) made whole, with a note
"""

from ._block import find_header, frame_from_cells, frame_from_columns, whole_characters
from ._columns import blank_mask, leading_zeros, typed_column
from ._output import cells_from_frame
from ._policy import check_rows, default_features, resolve_column, usable_table
from ._values import EXCEL_ERRORS, LOCALISED_ERRORS, guess_decimal, is_blank

__all__ = [
    "EXCEL_ERRORS",
    "LOCALISED_ERRORS",
    "blank_mask",
    "cells_from_frame",
    "find_header",
    "check_rows",
    "default_features",
    "frame_from_cells",
    "frame_from_columns",
    "guess_decimal",
    "is_blank",
    "leading_zeros",
    "resolve_column",
    "typed_column",
    "usable_table",
    "whole_characters",
]
