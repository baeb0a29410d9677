"""Which columns the user meant, whether the table can give an answer, which columns to use.

Names are matched ignoring case, spaces and underscores; checks raise
:class:`~stratpd_xl.errors.StratPDInputError` with one sentence that names the fix.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...errors import StratPDInputError
from ...identifiers import identifier_reason, with_parent
from ...params import PARAMETERS, column_argument
from ...yesno import yes_no_target
from ._values import header_text, name_key

__all__ = ["check_rows", "default_features", "is_numeric", "resolve_column", "usable_table"]

_MAX_LISTED_COLUMNS = 15


def resolve_column(frame: pd.DataFrame, name: Any, *, role: str = "feature") -> str:
    """Find the column the user meant, ignoring case, spaces and underscores.

    Parameters
    ----------
    frame
        The table, usually from :func:`frame_from_cells`.
    name
        What the user typed (or the cell holding it).
    role
        ``"target"`` or ``"feature"``; only used in the error sentence.

    Returns
    -------
    str
        The exact column name in ``frame``.

    Raises
    ------
    StratPDInputError
        ``column "pricee" not found; columns are: price, bedrooms, ...`` (with a suggestion
        when one name is close), or when the name is blank.
    """
    columns = [str(c) for c in frame.columns]
    text = header_text(column_argument(name, role))
    if not text:
        raise StratPDInputError(
            f"no {role} column given; name one of the columns: {_list_columns(columns)}"
        )
    key = name_key(text)
    matches = [text] if text in columns else [c for c in columns if name_key(c) == key]
    if len(matches) == 1:
        _check_not_repeated(frame, matches[0], role)
        return matches[0]
    if len(matches) > 1:  # only possible for frames not made by frame_from_cells
        listed = ", ".join(f'"{m}"' for m in matches)
        raise StratPDInputError(
            f'{role} column "{text}" matches several columns ({listed}); rename one of them'
        )
    close = difflib.get_close_matches(key, [name_key(c) for c in columns], n=1, cutoff=0.75)
    hint = ""
    if close:
        hint = f' (did you mean "{next(c for c in columns if name_key(c) == close[0])}"?)'
    role_word = "" if role == "feature" else f"{role} "
    raise StratPDInputError(
        f'{role_word}column "{text}" not found{hint}; columns are: {_list_columns(columns)}'
    )


def _check_not_repeated(frame: pd.DataFrame, column: str, role: str) -> None:
    """Refuse a name several header cells share: the first was taken, silently (a repeated
    target header gave -5 where the second column held +10)."""
    renamed = frame.attrs.get("renamed") or {}
    if column in renamed:
        return  # "y (2)": the user picked the repeat by the name the table gave it
    repeats = [c for c, base in renamed.items() if name_key(base) == name_key(column)]
    if repeats:
        others = " and ".join(f'"{r}"' for r in repeats[:3])
        raise StratPDInputError(
            f'{len(repeats) + 1} columns are named "{column}", so the {role} is unclear; '
            f'rename them in the header row, or type {others} for the '
            f"{'second' if len(repeats) == 1 else 'later'} one"
        )


def _list_columns(columns: list[str]) -> str:
    if not columns:
        return "(none)"
    shown = ", ".join(columns[:_MAX_LISTED_COLUMNS])
    rest = len(columns) - _MAX_LISTED_COLUMNS
    return shown + (f", ... ({rest} more)" if rest > 0 else "")


def check_rows(
    frame: pd.DataFrame,
    target: str,
    feature: str | None = None,
    *,
    min_samples_leaf: int = PARAMETERS["min_samples_leaf"].default,  # type: ignore[assignment]
    positive: Any = None,
    classes: bool = False,
) -> None:
    """Check, before the engine runs, that the table can give a curve; explain what to fix.

    Parameters
    ----------
    frame
        The table.
    target, feature
        Exact column names (use :func:`resolve_column` first).  Without ``feature`` only the
        target is checked (as for an impact ranking over all columns).
    min_samples_leaf
        The engine parameter; StratPD needs at least twice this many usable rows.
    positive
        For a yes/no target, the value that counts as 1 (see :mod:`stratpd_xl.yesno`).
    classes
        The target is read as classes (a curve per class): text is fine.

    Raises
    ------
    StratPDInputError
        For example ``only 12 rows with a value in "price"; StratPD needs at least
        2 x min_samples_leaf (20) rows: add rows or lower min_samples_leaf``.
    """
    if isinstance(min_samples_leaf, bool) or not isinstance(min_samples_leaf, int | np.integer):
        raise StratPDInputError(
            f"min_samples_leaf must be a whole number such as 10; got {min_samples_leaf!r}"
        )
    if min_samples_leaf < 1:
        raise StratPDInputError(f"min_samples_leaf must be at least 1; got {min_samples_leaf}")
    for col, role in ((target, "target"), (feature, "feature")):
        if col is not None and col not in frame.columns:
            resolve_column(frame, col, role=role)  # raises the "not found" sentence
    if feature is not None and feature == target:
        raise StratPDInputError(
            f'"{target}" is both the target and the feature; pick a different feature column'
        )

    y = frame[target]
    present = y.dropna()
    # The typing step reads "inf" as an infinite number, missing, and notes how many.
    if present.empty and any(str(note).startswith(f'column "{target}": ')
                             and "infinite number" in str(note)
                             for note in frame.attrs.get("notes") or ()):
        raise StratPDInputError(
            f'target "{target}" holds only infinite numbers; pick a column of finite numbers'
        )
    if present.empty:
        raise StratPDInputError(
            f'target "{target}" has no values (its cells are empty, or errors or infinite '
            "numbers read as missing); pick the column that holds the numbers to explain"
        )
    if not is_numeric(y) and pd.to_numeric(present.astype(str).str.strip(), errors="coerce"
                                            ).abs().eq(np.inf).all():
        raise StratPDInputError(
            f'target "{target}" holds only infinite numbers (e.g. "{present.iloc[0]}"); '
            "pick a column of finite numbers"
        )
    # Two values (TRUE/FALSE, yes/no, two texts) or a chosen positive value: a probability.
    yes_no = None if classes else yes_no_target(y, target, positive)
    if yes_no is None and not classes and not is_numeric(y):
        example = present
        shown = f' (e.g. "{example.iloc[0]}")' if len(example) else ""
        raise StratPDInputError(
            f'target "{target}" is not numeric{shown}; StratPD needs a numeric or yes/no '
            "target: pick a column of numbers or of two values"
        )

    needed = 2 * int(min_samples_leaf)
    usable = y.notna()
    where = f'in "{target}"'
    if feature is not None:
        usable &= frame[feature].notna()
        where = f'in both "{target}" and "{feature}"'
    n = int(usable.sum())
    if n < needed:
        raise StratPDInputError(
            f"only {n} row{'s' if n != 1 else ''} with a value {where}; StratPD needs at least "
            f"2 x min_samples_leaf ({needed}) rows: add rows or lower min_samples_leaf"
        )
    if yes_no is None and y[usable].nunique() == 1:  # one class is no classes either
        raise StratPDInputError(
            f'target "{target}" has the same value ({y[usable].iloc[0]}) in every row used; '
            "nothing varies to explain: pick a target whose values vary"
        )
    if feature is not None:
        distinct = frame.loc[usable, feature].nunique()
        if distinct < 2:
            raise StratPDInputError(
                f'feature "{feature}" has the same value in every row used; '
                "pick a feature whose values vary"
            )


def default_features(
    frame: pd.DataFrame,
    target: str,
    *,
    min_rows: int = 20,
    how_to_keep: str = "name it with --feature to analyse it anyway",
) -> tuple[list[str], dict[str, str]]:
    """The columns worth analysing when the user did not name any, and why others are left out.

    Parameters
    ----------
    frame
        The table.
    target
        Exact name of the target column (never a feature).
    min_rows
        Identifier detection only applies to columns with at least this many values.
    how_to_keep
        End of the identifier sentence: how, in this front end, to analyse such a column anyway.

    Returns
    -------
    features : list of str
        Every other column, in table order, except those below.
    left_out : dict
        Column name -> sentence: columns without values, columns with one value in every row,
        text columns with a different value in (nearly) every row, such as customer IDs or
        comments, which would split the rows into groups of one and swamp the other columns,
        and numeric row numbers and keys (:func:`stratpd_xl.identifiers.identifier_reason`).
    """
    features: list[str] = []
    left_out: dict[str, str] = {}
    # The features so far while each groups the rows (a key's parents: a school before its
    # pupils' numbers), else None.
    parents: list[tuple[str, pd.Series]] | None = []
    rows = frame[target].notna() if target in frame.columns else pd.Series(True, frame.index)
    every_row = bool(rows.all())
    target_values = frame[target] if target in frame.columns else None
    for position, name in enumerate(frame.columns):
        if name == target:
            continue
        values = frame[name] if every_row else frame.loc[rows, name]
        if isinstance(values.dtype, np.dtype) and values.dtype.kind in "iuf":
            # Numbers need only "none", "one" or "several" values: min and max, no hashing.
            numbers = values.to_numpy()
            numbers = numbers[~np.isnan(numbers)] if numbers.dtype.kind == "f" else numbers
            if numbers.size == 0:
                left_out[name] = "it has no values in rows with a target value"
            elif numbers.min() == numbers.max():
                left_out[name] = "it has the same value in every row"
            elif why := identifier_reason(name, frame[name], target_values, position,
                                          leading=not features, parents=parents or ()):
                # Row numbers and numeric keys (stratpd_xl.identifiers): R's rownames,
                # pandas' saved index, a customer ID.
                left_out[name] = f"{why}; {how_to_keep}"
            else:
                features.append(name)
                parents = with_parent(parents, name, frame[name])
            continue
        values = values.dropna()
        distinct = values.nunique()
        if values.empty:
            left_out[name] = "it has no values in rows with a target value"
        elif distinct < 2:
            left_out[name] = "it has the same value in every row"
        elif (
            not is_numeric(values)
            and not pd.api.types.is_datetime64_any_dtype(values.dtype)
            and not pd.api.types.is_bool_dtype(values.dtype)
            and len(values) >= min_rows
            and distinct >= 0.9 * len(values)
        ):
            left_out[name] = (
                f"it looks like an identifier ({distinct:,} different texts in {len(values):,} "
                f"rows); {how_to_keep}"
            )
        else:
            features.append(name)
            parents = with_parent(parents, name, frame[name])
    return features, left_out


def usable_table(
    frame: pd.DataFrame,
    target: str,
    keep: Sequence[str] = (),
    *,
    how_to_keep: str = "name it with --feature to analyse it anyway",
) -> tuple[pd.DataFrame, list[str], dict[str, str]]:
    """The table without the columns :func:`default_features` leaves out, unless kept.

    They are dropped from the table, not only from the features, because the engine stratifies
    on every other column and an identifier would split the rows into groups of one.  Every
    front end (CLI, formulas, ribbon) goes through here, so they all analyse the same columns.

    Returns
    -------
    frame : DataFrame
        ``frame`` without the dropped columns.
    features : list of str
        The usable features (``keep`` is never dropped).
    dropped : dict
        Column name -> sentence saying why it was left out.
    """
    usable, left_out = default_features(frame, target, how_to_keep=how_to_keep)
    dropped = {name: why for name, why in left_out.items() if name not in keep}
    return frame.drop(columns=list(dropped)), usable, dropped


def is_numeric(series: pd.Series) -> bool:
    return bool(
        pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype)
    )
