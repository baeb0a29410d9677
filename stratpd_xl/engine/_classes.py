"""Targets with several classes: one curve per class, in percentage points of that class's
probability, from one stratification.

Each class's curve is StratPD's on the class's indicator (100 for a row of that class, 0
otherwise) inside the same strata.  With the strata fixed, every step after them is linear
in the target: the slopes' averages (counted by rows, as for a yes/no target), the
integral, the centring on the rows, a category's least-squares effect.  The indicators of
all classes add up to 100 in every row, whose curve is flat: so the class curves add up to
0 at every x (and the class effects in every category), a check the result carries
(``attrs["class_sum"]``).  For that the adjustment for the other columns is not applied (it
is fitted to one target, and a fit per class would break the sum) and no curve is cut at a
chance's limits.

One stratification needs one target to grow the trees on.  A tree on several targets at
once would take the split that lowers their summed squared error (the Gini gain of the
classes); our trees take one.  They are grown on a projection of the class indicators on
a random direction (standard normal weights, one per class, from ``random_state``): the
expected gain of a split along a random direction is the summed gain of the classes
(``E[(w . d)^2] = |d|^2`` for standard normal ``w``), so the trees seek the splits that
separate the classes, with no class favoured by its name or code.  The honest split and the
band's halves are as for any target.

This module reads the target as classes; the four stages of docs/engine.md do the rest
(``engine.stages``: ``fit_strata(..., classes=...)``, the classes' section).  A cell's sums
are one per class (the rows of each class in it, times 100), so the sums of a pass hold
classes x cells numbers: 8 bytes per class beside a cell's 16 of key and rows.  A
chunk's row of a class the sample did not hold counts as a row without a target.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from ..errors import StratPDInputError
from ..params import Settings
from ._fit import _table
from ._table import column_label

#: Most classes a target may have for one curve each; more is one sentence.
MAX_CLASSES = 20

#: The long table's first column.
CLASS = "class"


def _class_values(series: pd.Series, target: str) -> list[Any]:
    """The target's classes in a stable order (a category's own order, else sorted)."""
    values = series.dropna()
    if isinstance(series.dtype, pd.CategoricalDtype):
        found = [c for c in series.cat.categories if (values == c).any()]
    else:
        if pd.api.types.is_float_dtype(values.dtype) and not np.all(
                np.mod(values.to_numpy(float), 1) == 0):
            raise StratPDInputError(
                f'target "{target}" holds numbers with decimals, not classes; analyse it as '
                "a number (without classes), or round it to whole-number codes first"
            )
        found = list(pd.unique(values))
        try:
            found = sorted(found)
        except TypeError:
            found = sorted(found, key=str)
    if len(found) < 2:
        raise StratPDInputError(
            f'target "{target}" has {len(found)} class; classes need at least two values'
        )
    if len(found) > MAX_CLASSES:
        raise StratPDInputError(
            f'target "{target}" has {len(found):,} different values, more than the '
            f"{MAX_CLASSES} classes a curve each can show: pick one with positive= (its "
            "probability against all others), or group the values into fewer classes first"
        )
    return found


def _chosen(classes: Any, found: list[Any], target: str) -> list[int]:
    """Positions in ``found`` of the classes to show: all for ``True``/``"all"``."""
    if classes is True or (isinstance(classes, str) and classes.strip().lower() == "all"):
        return list(range(len(found)))
    wanted = [classes] if isinstance(classes, str) or not isinstance(classes, Iterable) \
        else list(classes)
    shown = {str(v): i for i, v in enumerate(found)}
    out = []
    for value in wanted:
        key = str(value).strip()
        if key not in shown:
            listed = ", ".join(f'"{v}"' for v in found[:MAX_CLASSES])
            raise StratPDInputError(
                f'class "{value}" does not occur in target "{target}"; its classes are: '
                f"{listed}"
            )
        if shown[key] not in out:
            out.append(shown[key])
    return out


def read_classes(sample: pd.DataFrame, target: str, p: Settings, classes: Any
                 ) -> tuple[pd.DataFrame, str, list[Any], list[int], np.ndarray]:
    """The target read as classes: ``sample`` with the target replaced by the classes'
    projection the trees are grown on (module docstring), the target's label, the classes
    it holds (in order), the positions of those ``classes`` shows, and each row's class
    (-1: none)."""
    labels = [column_label(c, j) for j, c in enumerate(sample.columns)]
    target = column_label(target, role="target")
    if labels.count(target) != 1:
        # The table's own sentence (unknown or repeated column).
        _table(sample, target)
    series = sample.iloc[:, labels.index(target)]
    found = _class_values(series, target)
    shown = _chosen(classes, found, target)
    code = pd.Index(found, dtype=object).get_indexer(series.astype(object))
    code = np.where(series.notna().to_numpy(bool), code, -1)
    # The trees' target: the classes projected on a random direction (module docstring).
    weights = np.random.default_rng(
        [0 if p.random_state is None else int(p.random_state), len(found)]
    ).standard_normal(len(found))
    projected = np.where(code >= 0, weights[np.maximum(code, 0)], np.nan)
    renamed = sample.set_axis(labels, axis=1).copy(deep=False)
    renamed[target] = projected
    return renamed, target, found, shown, code
