"""The model check of a target read as classes: one classifier of every class, and its
per-class partial dependence beside StratPD's class curves (engine/_classes.py).

One ``HistGradientBoostingClassifier`` is fitted on the classes; each class is then read as
a yes/no model of its own chance (:func:`class_view`: the classifier's ``predict_proba`` for
that class, in percentage points), so the comparison of one curve
(:func:`~stratpd_xl.model.api.compare_curves`) runs unchanged per class: the model's partial
dependence is the brute-force average of ``predict_proba`` over the rows with the feature set
to each value, what scikit-learn's ``partial_dependence(..., response_method="predict_proba")``
computes (tested against it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..params import DEFAULT_SEED
from ._fit import Fitted, _design, boosting_options, one_thread, split_rows

__all__ = ["class_key", "class_view", "fit_classes"]


def class_key(value: Any) -> Any:
    """A class as text, the same for 2, 2.0 and "2" (codes read from cells are floats)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value)


@dataclasses.dataclass(frozen=True)
class _OneClass:
    """A fitted classifier of several classes, answering for one: ``predict_proba`` gives
    (not the class, the class), as a yes/no classifier's does."""

    estimator: Any
    k: int

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        p = self.estimator.predict_proba(x)[:, self.k]
        return np.column_stack([1.0 - p, p])

    @property
    def n_iter_(self) -> int:
        return int(self.estimator.n_iter_)


def fit_classes(frame: pd.DataFrame, target: str, classes: Sequence[Any], *,
                columns: list[str] | None = None, random_state: int = DEFAULT_SEED) -> Fitted:
    """A gradient-boosting classifier of ``target``'s ``classes`` (the engine's order) on
    the other columns, scored per class on held-out rows.

    Returns
    -------
    Fitted
        ``y`` holds each row's class position (0, 1, ...); ``score`` has ``classes``: per
        class its Brier skill score (``r2``), ``auc`` and ``brier`` on the held-out rows,
        as a yes/no model's (:func:`stratpd_xl.model.fit_model`), plus ``n_train``,
        ``n_test``, ``n_iter``.  Read one class with :func:`class_view`.
    """
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.metrics import roc_auc_score

    labels = pd.Index([class_key(c) for c in classes], dtype=object)
    code_all = labels.get_indexer(frame[target].astype(object).map(class_key))
    has_y = code_all >= 0
    rows = frame.loc[has_y] if not has_y.all() else frame
    y = code_all[has_y].astype(float)
    names = [str(c) for c in frame.columns if str(c) != target] if columns is None else columns
    x, used, categories, left_out = _design(rows, names)
    train, test = split_rows(y, random_state)
    estimator = HistGradientBoostingClassifier(
        **boosting_options(used, categories, train.size, random_state))
    with one_thread():
        estimator.fit(x[train], y[train].astype(int))
        held = estimator.predict_proba(x[test])
    # A class missing from the training rows has no column: its chance is 0 there.
    proba = np.zeros((test.size, len(labels)))
    proba[:, estimator.classes_.astype(int)] = held
    per_class = {}
    for k in range(len(labels)):
        outcome = (y[test] == k).astype(float)
        p = proba[:, k]
        brier = float(np.mean((p - outcome) ** 2))
        base = float(np.mean(outcome))
        reference = float(np.mean((base - outcome) ** 2))
        per_class[k] = {
            "brier": brier, "r2": 1.0 - brier / reference if reference > 0 else float("nan"),
            "auc": float(roc_auc_score(outcome, p)) if 0 < base < 1 else float("nan"),
        }
    fitted = Fitted(estimator, target, used, categories, x, y, False, {}, left_out,
                    np.flatnonzero(has_y), 1.0)
    fitted.score = {"n_train": int(train.size), "n_test": int(test.size),
                    "n_iter": int(estimator.n_iter_), "classes": per_class,
                    "labels": list(classes)}
    return fitted


def class_view(fitted: Fitted, k: int) -> Fitted:
    """Class ``k`` of :func:`fit_classes`' model as a yes/no model of its chance: ``y`` 100
    for the rows of that class and 0 for the others, predictions its ``predict_proba`` in
    percentage points, the score its own."""
    trained = list(fitted.estimator.classes_.astype(int))
    estimator = (_OneClass(fitted.estimator, trained.index(k)) if k in trained
                 else _Never())
    score = {**{key: v for key, v in fitted.score.items() if key not in ("classes", "labels")},
             **fitted.score["classes"][k]}
    return dataclasses.replace(fitted, estimator=estimator,
                               y=np.where(fitted.y == k, 100.0, 0.0), yes_no=True, score=score)


class _Never:
    """A class the training rows did not hold: the model gives it no chance anywhere."""

    n_iter_ = 0

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        return np.column_stack([np.ones(len(x)), np.zeros(len(x))])
