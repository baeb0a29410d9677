"""Yes/no targets (churn, conversion, default): which value counts, and the probability scale.

A target with two values (TRUE/FALSE, "yes"/"no", two texts, a pandas boolean or category
column, numbers 0/1) is turned into 100 for the *positive* value and 0 for the other, so every
curve, band and impact reads as a change in the probability of the positive value, in
percentage points.  With ``positive`` given, any target is "this value or not".

Light on purpose (numpy and pandas only): the sheet checks, the workflow, the engine and the
labels all ask this module, so they agree on which value counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .errors import StratPDInputError, argument

__all__ = ["POINTS", "YesNo", "probability_label", "yes_no_target"]

#: Values that mean "yes" whatever the language of the sheet (compared case-insensitively).
_YES_WORDS = frozenset({"true", "yes", "y", "1", "t", "wahr", "vrai", "ja", "oui", "si", "sí"})
_NO_WORDS = frozenset({"false", "no", "n", "0", "f", "falsch", "faux", "nein", "non"})
#: Units of every result of a yes/no target.
POINTS = "percentage points"
_MAX_LISTED = 6


@dataclass(frozen=True)
class YesNo:
    """A target read as "is it the positive value?".

    Attributes
    ----------
    target : str
        Column name.
    positive : Any
        The value that counts as 1 (as it appears in the column).
    y : float array
        100 where the target is ``positive``, 0 where it has another value, NaN where missing.
    """

    target: str
    positive: Any
    y: np.ndarray

    @property
    def label(self) -> str:
        """``P(churn = yes)``."""
        return f"P({self.target} = {_show(self.positive)})"


def probability_label(attrs: dict[str, Any]) -> str | None:
    """``"change in P(churn = yes), points"`` for a result of a yes/no target, else None."""
    label = attrs.get("target_label")
    return f"change in {label}, points" if label else None


def _show(value: Any) -> str:
    if isinstance(value, bool | np.bool_):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _distinct(series: pd.Series) -> list[Any]:
    values = series.dropna()
    if isinstance(series.dtype, pd.CategoricalDtype):
        # Category order is the user's; keep only categories that occur.
        present = set(values.astype(object))
        return [c for c in series.cat.categories if c in present]
    distinct = list(pd.unique(values.astype(object)))
    try:
        return sorted(distinct)
    except TypeError:
        return sorted(distinct, key=str)


def _is_number_column(series: pd.Series) -> bool:
    return bool(
        pd.api.types.is_numeric_dtype(series.dtype)
        and not pd.api.types.is_bool_dtype(series.dtype)
        and not isinstance(series.dtype, pd.CategoricalDtype)
    )


def _matches(value: Any, wanted: Any) -> bool:
    """Does a column value equal what the user typed (a cell, a CLI word, a Python value)?"""
    if isinstance(value, bool | np.bool_):
        if isinstance(wanted, bool | np.bool_):
            return bool(value) == bool(wanted)
        word = str(wanted).strip().casefold()
        return word in (_YES_WORDS if value else _NO_WORDS)
    if isinstance(value, int | float | np.integer | np.floating):
        try:
            return float(value) == float(str(wanted).strip() if isinstance(wanted, str)
                                         else wanted)
        except (TypeError, ValueError):
            return False
    if isinstance(wanted, str):
        return str(value).strip().casefold() == wanted.strip().casefold()
    return bool(value == wanted)


def _listed(values: list[Any]) -> str:
    shown = ", ".join(f'"{_show(v)}"' for v in values[:_MAX_LISTED])
    return shown + (f", ... ({len(values) - _MAX_LISTED} more)" if len(values) > _MAX_LISTED
                    else "")


def yes_no_target(series: pd.Series, target: str, positive: Any = None) -> YesNo | None:
    """The target as "is it the positive value?", or None when it stays a number.

    Parameters
    ----------
    series : Series
        The target column.
    target : str
        Its name, for labels and messages.
    positive : optional
        The value that counts as 1.  Default: a TRUE/yes/1/y-like value when exactly one of
        the two values is one, else the rarer value (ties: the later in sorted order).  Given
        for a target with more than two values, the others all count as 0.

    Returns
    -------
    YesNo or None
        None for a number column other than 0/1 when ``positive`` is not given.

    Raises
    ------
    StratPDInputError
        Text with more than two values and no ``positive``; ``positive`` not among the
        values.
    """
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return None  # dates are never probabilities; the numeric check explains
    blank_positive = positive is None or (isinstance(positive, str) and not positive.strip())
    if _is_number_column(series) and blank_positive:
        # Vectorised first: a number column with any value other than 0 or 1 stays a number
        # (every front end asks this of every target; pd.unique of 200,000 floats costs more).
        numbers = series.to_numpy(dtype=float, na_value=np.nan)
        if np.any((numbers != 0) & (numbers != 1) & ~np.isnan(numbers)):
            return None
    values = _distinct(series)
    if _is_number_column(series) and blank_positive:
        if len(values) != 2 or {float(v) for v in values} != {0.0, 1.0}:
            return None
    if not values:
        return None  # no values at all: the row checks say so
    if blank_positive:
        if len(values) > 2:
            raise StratPDInputError(
                f'target "{target}" is not numeric and has {len(values):,} different values '
                f"({_listed(values)}); StratPD explains numbers or a yes/no column: pick "
                f"the value whose probability you want with {argument('positive')}, e.g. "
                f'"{_show(values[0])}"'
                + (f", or a curve per class with {argument('classes')} \"all\""
                   if len(values) <= 20 else ""))
        if len(values) < 2:
            return None  # one value: the numeric check names it
        yes = [v for v in values if str(_show(v)).strip().casefold() in _YES_WORDS]
        if len(yes) == 1:
            chosen = yes[0]
        else:
            counts = [int((series.astype(object) == v).sum()) for v in values]
            # The rarer value is the event (churn, default); a tie takes the later value.
            chosen = values[1] if counts[1] <= counts[0] else values[0]
    else:
        found = [v for v in values if _matches(v, positive)]
        if not found:
            raise StratPDInputError(
                f'positive value "{positive}" does not occur in target "{target}"; its values '
                f"are: {_listed(values)}; give {argument('positive')} one of them")
        chosen = found[0]
    present = series.notna().to_numpy(bool)
    is_pos = (series.astype(object) == chosen).fillna(False).to_numpy(bool)
    y = np.where(present, np.where(is_pos, 100.0, 0.0), np.nan)
    if isinstance(chosen, np.generic):
        chosen = chosen.item()
    return YesNo(target, chosen, y)
