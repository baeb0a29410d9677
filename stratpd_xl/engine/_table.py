"""From a DataFrame to the arrays the engine works on.

Column kinds: float/int/datetime columns are numeric; bool, text (object/string) and
pandas ``category`` columns are categorical, so nobody has to encode anything.  Binning of
the stratifying columns depends only on each column's own values and the target, never on
column order or names, so renaming or reordering columns changes no result.
"""

from __future__ import annotations

import difflib
import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import _backend
from ..errors import StratPDInputError
from ..params import column_argument
from ..schema import CATEGORICAL, NUMERIC
from ._binning import bin_codes, bin_with_edges, level_bins, numeric_edges


def column_kind(series: pd.Series) -> str:
    """``"numeric"`` or ``"categorical"`` for a column, by its dtype."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype):
        return CATEGORICAL
    if (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_datetime64_any_dtype(dtype)
            or pd.api.types.is_timedelta64_dtype(dtype)):
        return NUMERIC
    return CATEGORICAL


def column_label(name: Any, position: int | None = None, role: str = "column") -> str:
    """The engine's name of a column label: its text (a tuple label of a MultiIndex as
    ``str`` shows it, both where the table is built and where a user names it); a label
    that is no name (None, NaN, blank) is ``"column N"`` at its 1-based position, as the
    sheet layer names an empty header cell."""
    if position is None:  # a name the user gave, not a label of the table
        column_argument(name, role)
    blank = name is None or (isinstance(name, float) and math.isnan(name))
    if (blank or not str(name).strip()) and position is not None:
        return f"column {position + 1}"
    return str(name)


def numbers_as_text(series: pd.Series) -> str | None:
    """An example cell when a text column holds only numbers written as text, else None."""
    if column_kind(series) != CATEGORICAL or pd.api.types.is_bool_dtype(series.dtype):
        return None
    present = series.dropna()
    if present.empty or not all(isinstance(v, str) for v in present.iloc[:1000]):
        return None
    if pd.to_numeric(present, errors="coerce").notna().all():
        return str(present.iloc[0])
    return None


_UNHASHABLE = (list, dict, set, np.ndarray)


def _check_cells(data: pd.DataFrame) -> None:
    """Refuse cells that hold a list, dict or array: no column of such cells can be compared
    (they raised a raw "unhashable type")."""
    for j, (name, column) in enumerate(data.items()):
        if column.dtype != object or pd.api.types.infer_dtype(column, skipna=True) in (
            "string", "boolean", "integer", "floating", "mixed-integer-float", "empty",
            "datetime", "date", "decimal", "bytes",
        ):
            continue
        for i, value in enumerate(column.to_numpy()):
            if isinstance(value, _UNHASHABLE):
                kind = type(value).__name__
                raise StratPDInputError(
                    f'column "{column_label(name, j)}" holds a {kind} in a cell (row {i + 1}: '
                    f"{str(value)[:40]}); give one value per cell, e.g. data.explode(...) or "
                    "join the items into text, or drop the column"
                )


def as_float(series: pd.Series) -> np.ndarray:
    """Numeric/datetime/bool column as float64 with NaN for missing (datetimes in days).

    Infinite numbers are missing too, as the sheet layer reads them: no slope, sum or least
    squares fit can use them.
    """
    if pd.api.types.is_timedelta64_dtype(series.dtype):
        ns = series.astype("timedelta64[ns]").to_numpy().astype("int64").astype(np.float64)
        ns[series.isna().to_numpy()] = np.nan
        return ns / 86_400e9
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        s = series
        if getattr(s.dt, "tz", None) is not None:
            s = s.dt.tz_convert("UTC").dt.tz_localize(None)
        ns = s.astype("datetime64[ns]").to_numpy().astype("int64").astype(np.float64)
        ns[s.isna().to_numpy()] = np.nan
        return ns / 86_400e9
    if pd.api.types.is_bool_dtype(series.dtype):
        return series.astype("float64").to_numpy(dtype=np.float64, na_value=np.nan)
    values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    infinite = np.isinf(values)
    if infinite.any():
        values = np.where(infinite, np.nan, values)  # to_numpy may return the frame's memory
    return values


def power_of_two_scale(values: np.ndarray) -> float:
    """A power of two near ``max |values|`` (1.0 for none or zeros).

    The engine divides y and x by it so that squares, sums and slopes of any finite input
    stay finite (a target near 1e306 would overflow a sum of squares), and multiplies the
    results back.  A power of two makes both steps exact: ordinary data gives bit-for-bit
    the numbers it gave without scaling.
    """
    if values.dtype.kind == "f" and values.size:
        # The largest and smallest value without copying the column (fmax/fmin skip NaN):
        # when both are finite no infinity is among the values, and the largest size is
        # the larger of their sizes.  This runs for every column of every analysis.
        hi = float(np.fmax.reduce(values, axis=None))
        lo = float(np.fmin.reduce(values, axis=None))
        if math.isnan(hi):  # every value missing
            return 1.0
        if math.isfinite(hi) and math.isfinite(lo):
            return _power_below(max(abs(hi), abs(lo)))
    finite = np.abs(values[np.isfinite(values)])
    return _power_below(float(finite.max()) if finite.size else 0.0)


def _power_below(top: float) -> float:
    if top == 0.0:
        return 1.0
    # frexp: top = m * 2**e with 0.5 <= m < 1; 2**(e - 1) never overflows.
    return math.ldexp(1.0, math.frexp(top)[1] - 1)


def category_codes(series: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Integer codes (-1 missing) and the categories in display order."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        cat = series.cat.remove_unused_categories()
        return cat.cat.codes.to_numpy(np.int64), pd.Index(cat.cat.categories)
    if pd.api.types.is_bool_dtype(series.dtype):
        s = series.astype("boolean")
        cats = pd.Index([v for v in (False, True) if (s == v).any()], dtype=object)
        codes = np.full(len(s), -1, np.int64)
        for i, v in enumerate(cats):
            codes[(s == v).fillna(False).to_numpy(bool)] = i
        return codes, cats
    if isinstance(series.dtype, pd.StringDtype):
        # Text (pandas' own string type, pyarrow's where installed): coded where it is
        # stored, then the codes renumbered in the categories' order.  The same codes as
        # below without making a Python string of every cell (a million-row column: 40 %
        # of a curve's fresh memory and 0.15 s).
        found, uniques = pd.factorize(series, use_na_sentinel=True)
        texts = list(uniques.astype(object))
        order = sorted(range(len(texts)), key=texts.__getitem__)
        rank = np.empty(len(texts), np.int64)
        rank[order] = np.arange(len(texts))
        codes = np.full(found.shape, -1, np.int64)
        codes[found >= 0] = rank[found[found >= 0]]
        return codes, pd.Index([texts[i] for i in order], dtype=object)
    values = series.astype(object).where(series.notna(), None)
    present = pd.unique(values[values.notna()])
    # Sort numbers numerically and text alphabetically; mixed columns by their text.
    try:
        ordered = sorted(present)
    except TypeError:
        ordered = sorted(present, key=str)
    cats = pd.Index(ordered, dtype=object)
    codes = cats.get_indexer(values)
    return codes.astype(np.int64), cats


@dataclass
class Table:
    """Target plus every other column, encoded once for any number of features."""

    target: str
    n_rows: int  # rows given
    y: np.ndarray  # rows with a target value only, divided by y_scale
    n_missing_target: int
    columns: list[str]  # every column but the target
    all_columns: list[str]  # as given, for messages
    kinds: dict[str, str]
    frame: pd.DataFrame  # the rows with a target value, original columns
    y_scale: float = 1.0  # a power of two: target units = y * y_scale
    # attrs a yes/no target adds to every result (positive value, label, units); else empty.
    yes_no: dict[str, Any] = field(default_factory=dict)
    _bins: dict[str, np.ndarray] = field(default_factory=dict)
    # How each binned column was binned (numeric: the edges; text: the categories and each
    # one's bin), so other rows of the same table can be binned the same way.
    _encoders: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    # Each column as the linear adjustment reads it (all rows), made once per table:
    # (block, has missing values), or None for a column the adjustment leaves out.
    linear_blocks: dict[str, Any] = field(default_factory=dict)
    # The standardised design of all those columns for the last set of rows it was made for:
    # (key of the rows, design or None when it cannot be shared); every feature's fit with
    # the same rows takes its columns from it.  None: not shared (a single curve).
    linear_design: tuple[bytes, Any] | None = None
    _fingerprints: dict[str, bytes] = field(default_factory=dict)
    # Columns left out of the strata and the adjustment -> the sentence saying why.
    left_out: dict[str, str] = field(default_factory=dict)
    # The columns the user excluded (exact names), already dropped from ``frame``.
    excluded: list[str] = field(default_factory=list)
    # Numeric columns that look like the target with noise, and their R^2 (engine/_leaks.py),
    # found once per table; None until looked for.
    copies: list[tuple[str, float]] | None = None
    _codes: dict[str, tuple[np.ndarray, pd.Index]] = field(default_factory=dict)
    # Positions in the data given of the rows kept (those with a target value); None: all.
    kept: np.ndarray | None = None
    _gaps: dict[str, np.ndarray | None] = field(default_factory=dict)

    def category_codes(self, name: str) -> tuple[np.ndarray, pd.Index]:
        """:func:`category_codes` of column ``name`` (all rows), read-only, once per table:
        the binning, the adjustment, a text feature and the gap checks all read them."""
        cached = self._codes.get(name)
        if cached is None:
            codes, cats = category_codes(self.frame[name])
            codes.flags.writeable = False
            cached = self._codes[name] = (codes, cats)
        return cached

    def gaps(self, name: str) -> np.ndarray | None:
        """Column ``name``'s missing cells (all rows, read-only), or None when it has none;
        once per table, not once per feature that checks the other columns' gaps."""
        if name not in self._gaps:
            gap = self.frame[name].isna().to_numpy()
            gap.flags.writeable = False
            self._gaps[name] = gap if gap.any() else None
        return self._gaps[name]

    def _compute_bins(self, name: str) -> tuple[np.ndarray, bytes, tuple[Any, ...]]:
        s = self.frame[name]
        if self.kinds[name] == NUMERIC:
            # A fixed seed: bin edges are a property of the column, not of the call.
            values = as_float(s)
            edges = numeric_edges(values)
            b, encoder = bin_with_edges(values, edges), (NUMERIC, edges)
        else:
            codes, cats = self.category_codes(name)
            bins = level_bins(codes, len(cats), self.y)
            b, encoder = bin_codes(codes, bins), (CATEGORICAL, cats, bins)
        return b, hashlib.blake2b(b.tobytes(), digest_size=16).digest(), encoder

    def bin_columns(self, names: list[str]) -> None:
        """Bin the columns ``names`` not binned yet (each column is binned once)."""
        todo = [c for c in names if c not in self._bins]
        if (len(todo) > 1 and len(self.y) >= _backend.PARALLEL_ROWS
                and _backend.can_start_threads()):
            # numpy's sorting and searching release the GIL: bin two columns at a time.
            with ThreadPoolExecutor(max_workers=2) as pool:
                done = list(pool.map(self._compute_bins, todo))
        else:
            done = [self._compute_bins(c) for c in todo]
        for c, (b, fingerprint, encoder) in zip(todo, done, strict=True):
            self._bins[c] = b
            self._fingerprints[c] = fingerprint
            self._encoders[c] = encoder

    def strata_columns(self, feature: str) -> list[str]:
        """The columns of :meth:`strata_matrix` for ``feature``, in its order."""
        others = [c for c in self.columns if c != feature]
        self.bin_columns(others)
        # Order by content so that renaming/reordering columns gives the same tree.
        others.sort(key=lambda c: self._fingerprints[c])
        return others

    def encoders(self, names: list[str]) -> list[tuple[Any, ...]]:
        """How each of the binned columns ``names`` was binned (see :func:`bin_frame`)."""
        return [self._encoders[c] for c in names]

    def strata_matrix(self, feature: str, rows: np.ndarray) -> np.ndarray:
        """Binned columns other than ``feature`` for ``rows`` (positions, ascending and
        distinct, as ``np.flatnonzero`` gives them), in a canonical column order."""
        others = self.strata_columns(feature)
        if not others:
            return np.zeros((rows.size, 0), np.uint8)
        out = np.empty((rows.size, len(others)), np.uint8)
        every_row = rows.size == len(self.y)  # rows: ascending, distinct
        for j, c in enumerate(others):
            out[:, j] = self._bins[c] if every_row else self._bins[c][rows]
        return out


def bin_frame(frame: pd.DataFrame, names: list[str], encoders: list[tuple[Any, ...]]
              ) -> np.ndarray:
    """The columns ``names`` of ``frame`` binned as :meth:`Table.encoders` says, as
    :meth:`Table.strata_matrix` holds them: other rows of a table binned as its own were.

    A category the table did not hold is binned as missing (bin 0)."""
    if not names:
        return np.zeros((len(frame), 0), np.uint8)
    cols = []
    for name, encoder in zip(names, encoders, strict=True):
        if encoder[0] == NUMERIC:
            cols.append(bin_with_edges(as_float(frame[name]), encoder[1]))
        else:
            cols.append(bin_codes(codes_among(frame[name], encoder[1]), encoder[2]))
    return np.ascontiguousarray(np.column_stack(cols))


def codes_among(series: pd.Series, cats: pd.Index) -> np.ndarray:
    """Codes (-1 missing or not among them) of ``series``' values in the categories
    ``cats`` of :func:`category_codes`."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        series = series.astype(object)
    values = series.astype(object).where(series.notna(), None)
    return cats.get_indexer(values).astype(np.int64)


def as_frame(data: Any) -> pd.DataFrame:
    """``data`` as a DataFrame (a dict of columns, a list of records...), or one sentence."""
    if data is None:
        raise StratPDInputError(
            "data is missing; pass a table (a pandas DataFrame with one column per variable)"
        )
    if isinstance(data, np.ndarray) and data.ndim == 2 and data.dtype.names is None:
        raise StratPDInputError(
            "data is an array without column names; pass a DataFrame that names them: "
            "pd.DataFrame(array, columns=[...])"
        )
    if not isinstance(data, pd.DataFrame):
        try:
            data = pd.DataFrame(data)
        except Exception as exc:  # noqa: BLE001 - anything unusable gets one sentence
            raise StratPDInputError(
                "data must be a table (a pandas DataFrame with one column per variable)"
            ) from exc
    return data


def checked_frame(data: Any) -> pd.DataFrame:
    """``data`` as a DataFrame whose columns have unique names (:func:`column_label`) and
    whose cells hold one value each, or one sentence (see :func:`as_frame`)."""
    data = as_frame(data)
    columns = [column_label(c, j) for j, c in enumerate(data.columns)]
    if len(set(columns)) != len(columns):
        dup = sorted({c for c in columns if columns.count(c) > 1})
        raise StratPDInputError(
            f"column names must be unique; rename the repeated column(s): {', '.join(dup)}"
        )
    data = data.set_axis(columns, axis=1)
    _check_cells(data)
    return data


def build_table(data: pd.DataFrame, target: str) -> Table:
    """Validate ``data``/``target`` and keep the rows that have a target value."""
    target = column_label(target, role="target")
    data = checked_frame(data)
    columns = list(data.columns)
    require_column(columns, target, "target")
    y_raw = data[target]
    example = numbers_as_text(y_raw)
    if example is not None:
        raise StratPDInputError(
            f'target column "{target}" holds numbers stored as text ("{example}"); convert '
            f'it first: data["{target}"] = pd.to_numeric(data["{target}"])'
        )
    if column_kind(y_raw) != NUMERIC or pd.api.types.is_datetime64_any_dtype(y_raw.dtype) \
            or pd.api.types.is_timedelta64_dtype(y_raw.dtype):
        raise StratPDInputError(
            f'target column "{target}" must hold numbers; choose a numeric column as target'
        )
    y_all = as_float(y_raw)
    if len(data) and not np.isfinite(y_all).any():
        raise StratPDInputError(
            f'target column "{target}" has no values'
            + (" that are finite numbers (all are infinite)" if np.isinf(
                pd.to_numeric(y_raw, errors="coerce")).any() else "")
            + "; choose a column that holds the numbers to explain"
        )
    has_y = ~np.isnan(y_all)
    # Columns are read by position only; copy the table only when rows must go.
    frame = data if has_y.all() else data.loc[has_y].reset_index(drop=True)
    others = [c for c in columns if c != target]
    y = y_all[has_y]
    y_scale = power_of_two_scale(y)
    return Table(
        target=target,
        n_rows=len(data),
        y=y / y_scale,
        y_scale=y_scale,
        n_missing_target=int((~has_y).sum()),
        columns=others,
        all_columns=columns,
        kinds={c: column_kind(frame[c]) for c in others},
        frame=frame,
        kept=None if has_y.all() else np.flatnonzero(has_y),
    )


def require_column(columns: list[str], name: str, role: str) -> None:
    """Raise a one-sentence error when ``name`` is not one of ``columns``."""
    if not columns:
        raise StratPDInputError(
            f'{role} column "{name}" not found: the table has no columns; pass the table '
            "with its header row"
        )
    if name not in columns:
        listed = ", ".join(columns[:20]) + (", ..." if len(columns) > 20 else "")
        raise StratPDInputError(f'{role} column "{name}" not found; columns are: {listed}')


#: Why an excluded column is in ``attrs["left_out"]`` and a front end's left-out list.
EXCLUDED = "excluded as asked, so it neither groups the rows nor enters the adjustment"


def excluded_columns(
    columns: list[str], target: str, given: Sequence[str],
    roles: Mapping[str, str] | None = None, resolve: Callable[[str], str] | None = None,
) -> list[str]:
    """The exact names of the columns ``given`` to exclude, checked against ``columns``.

    A text that is no column but holds commas is a list of names ("casual, registered"),
    so one cell or one option can name several; a column whose name holds a comma is
    matched whole first.  ``roles`` maps the columns the analysis needs (the feature, a
    ``by`` column) to their role.  ``resolve`` finds the column a text names (default: the
    exact name); the front ends pass their forgiving match (case and spaces ignored).

    Raises
    ------
    StratPDInputError
        An unknown name (with the close matches, or the columns), the target, or a column
        in ``roles``: one sentence saying what to do.
    """

    def exact(name: str) -> str:
        if name not in columns:
            raise StratPDInputError(unknown_column_text(columns, name, "excluded"))
        return name

    find = resolve or exact
    names: list[str] = []
    for text in given:
        text = str(text).strip()
        try:
            parts = [find(text)]
        except StratPDInputError:
            if "," not in text:
                raise
            parts = [find(part.strip()) for part in text.split(",") if part.strip()]
        for name in parts:
            if name == target:
                raise StratPDInputError(
                    f'"{name}" is the target, so it cannot be excluded; take it out of '
                    "exclude, or choose another target"
                )
            role = (roles or {}).get(name)
            if role is not None:
                raise StratPDInputError(
                    f'"{name}" is both the {role} and excluded; take it out of exclude (it '
                    f"leaves columns out of the strata), or choose another {role}"
                )
            if name not in names:
                names.append(name)
    return names


def unknown_column_text(columns: list[str], name: str, role: str) -> str:
    """'excluded column "casul" not found (did you mean "casual"?); columns are: ...'."""
    close = difflib.get_close_matches(name, columns, n=3, cutoff=0.6)
    hint = (" (did you mean " + " or ".join(f'"{c}"' for c in close) + "?)") if close else ""
    listed = ", ".join(columns[:20]) + (", ..." if len(columns) > 20 else "")
    return f'{role} column "{name}" not found{hint}; columns are: {listed}'


__all__ = [
    "CATEGORICAL",
    "EXCLUDED",
    "NUMERIC",
    "Table",
    "as_float",
    "as_frame",
    "build_table",
    "category_codes",
    "column_label",
    "excluded_columns",
    "numbers_as_text",
    "power_of_two_scale",
    "column_kind",
    "require_column",
]
