"""A gradient-boosted model of the target, fitted for the user and scored on rows it did not see.

scikit-learn's histogram gradient boosting: text and category columns as native categorical
features (no one-hot), missing values as they are (the trees learn where they go), early
stopping on a validation share of the training rows, one fixed seed.  A yes/no target gets the
classifier, and its predictions are probabilities in percentage points (0-100), the scale
StratPD reports yes/no targets on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..engine._table import CATEGORICAL, as_float, category_codes, column_kind
from ..params import DEFAULT_SEED
from ..yesno import yes_no_target

__all__ = [
    "MAX_CATEGORIES",
    "MAX_FIT_ROWS",
    "MIN_MODEL_ROWS",
    "Fitted",
    "fit_model",
    "model_target",
]

#: Fewer rows with a target value than this, and no model is fitted (20 % of them score it).
MIN_MODEL_ROWS = 50
#: The model learns from at most this many rows, drawn at random: beyond it a histogram
#: model gains little accuracy for the time (200,000 rows x 10 columns fit in a few seconds).
MAX_FIT_ROWS = 50_000
#: Share of the rows held out to score the model, and the most rows that takes.
TEST_SHARE = 0.2
MAX_TEST_ROWS = 20_000
#: A categorical column with more categories than this is more than the model's histograms
#: hold (scikit-learn's limit is max_bins = 255): it is left out of the model.
MAX_CATEGORIES = 255
# Boosting: a learning rate a little above scikit-learn's 0.1 reaches its early stop in fewer
# rounds; early stopping decides the number of trees.
LEARNING_RATE = 0.15
MAX_ITER = 300
N_ITER_NO_CHANGE = 10
#: A numeric target whose largest value is beyond 2**±100 is modelled in units of a power of
#: two near it (exact both ways): at 1e306 scikit-learn's squared errors, and the averages of
#: predictions that make partial dependence, overflowed to infinity.
UNIT_LIMIT = 2.0**100
def one_thread() -> Any:
    """A context in which scikit-learn's OpenMP loops run in one thread.

    OpenMP's threads spin while they wait for each other, which on a shared machine costs far
    more than they share: with other jobs on both cores, fitting the diamonds (43,000 rows)
    took 58 s with two threads and 11 s with one (two threads told to wait passively: 12 s);
    a 3,000-row fit 6 s against 0.25 s.  StratPD's own threads are unaffected.
    """
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1, user_api="openmp")


@dataclass
class Fitted:
    """A fitted model and the table as it sees it.

    Attributes
    ----------
    estimator : HistGradientBoostingRegressor or HistGradientBoostingClassifier
        Fitted on the training rows.
    target : str
        The target column.
    columns : list of str
        The model's columns, in the order of ``x``.
    categories : dict
        Categorical column -> its categories (``x`` holds their codes 0, 1, ...; NaN missing).
    x : ndarray
        Every row with a target value, as the model reads it (float; NaN missing).
    y : ndarray
        Their target values (0 or 100 for a yes/no target), in units of ``unit``.
    yes_no : bool
        True for a yes/no target (classifier; predictions in percentage points).
    score : dict
        Out-of-sample score on the held-out rows: ``r2`` (for yes/no the Brier skill score,
        1 - Brier / Brier of always predicting the base rate), ``auc`` and ``brier`` (yes/no
        only, Brier on the 0-1 scale), ``n_train``, ``n_test``, ``n_iter`` (boosting rounds).
    left_out : dict
        Column -> why the model does not use it.
    positions : ndarray
        Position in the given table of each row of ``x``.
    unit : float
        What one unit of :attr:`y` and of :meth:`predict` is in target units: 1.0, or a power
        of two for a target beyond ±2**100 (:func:`target_unit`); multiply by it to report.
    """

    estimator: Any
    target: str
    columns: list[str]
    categories: dict[str, pd.Index]
    x: np.ndarray
    y: np.ndarray
    yes_no: bool
    score: dict[str, Any]
    left_out: dict[str, str] = field(default_factory=dict)
    positions: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    unit: float = 1.0

    def index(self, column: str) -> int:
        """Position of ``column`` in ``x``."""
        return self.columns.index(column)

    def is_categorical(self, column: str) -> bool:
        return column in self.categories

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Predictions for rows ``x`` (as :attr:`x` holds them), in units of :attr:`unit`."""
        with one_thread():
            if self.yes_no:
                return self.estimator.predict_proba(x)[:, 1] * 100.0
            return self.estimator.predict(x)

    def values(self, column: str) -> np.ndarray:
        """Column ``column`` of :attr:`x` (codes for a categorical column)."""
        return self.x[:, self.index(column)]

    def encode(self, column: str, labels: Any) -> np.ndarray:
        """Category labels of ``column`` as the model's codes (NaN for an unknown label)."""
        cats = self.categories[column]
        codes = cats.get_indexer(pd.Index(list(labels), dtype=object)).astype(float)
        codes[codes < 0] = np.nan
        return codes


def model_target(frame: pd.DataFrame, target: str, positive: Any = None) -> tuple[np.ndarray, bool]:
    """The target as the model learns it: numbers, or 0/100 for a yes/no target (NaN missing)."""
    yes_no = yes_no_target(frame[target], target, positive)
    if yes_no is not None:
        return yes_no.y, True
    return as_float(frame[target]), False


def target_unit(y: np.ndarray) -> float:
    """1.0, or for values whose largest magnitude is beyond 2**±100 the power of two just
    above it (so the values divided by it lie within ±1 and nothing they are summed or
    squared into overflows)."""
    finite = np.abs(y[np.isfinite(y)])
    top = float(finite.max()) if finite.size else 0.0
    if top == 0.0 or 1.0 / UNIT_LIMIT <= top <= UNIT_LIMIT:
        return 1.0
    return math.ldexp(1.0, math.frexp(top)[1])


def _design(frame: pd.DataFrame, columns: list[str]) -> tuple[
    np.ndarray, list[str], dict[str, pd.Index], dict[str, str]
]:
    used: list[str] = []
    blocks: list[np.ndarray] = []
    categories: dict[str, pd.Index] = {}
    left_out: dict[str, str] = {}
    for c in columns:
        s = frame[c]
        if column_kind(s) == CATEGORICAL:
            codes, cats = category_codes(s)
            if len(cats) > MAX_CATEGORIES:
                left_out[c] = (
                    f"{len(cats):,} categories, more than the model's {MAX_CATEGORIES}"
                )
                continue
            values = codes.astype(float)
            values[codes < 0] = np.nan
            categories[c] = cats
        else:
            values = as_float(s)
        if np.all(np.isnan(values)):
            left_out[c] = "no values"
            continue
        used.append(c)
        blocks.append(values)
    x = np.column_stack(blocks) if blocks else np.zeros((len(frame), 0))
    return x, used, categories, left_out


def split_rows(y: np.ndarray, random_state: int, *, yes_no: bool = False
               ) -> tuple[np.ndarray, np.ndarray]:
    """The training rows (at most :data:`MAX_FIT_ROWS`) and the held-out rows that score the
    model (:data:`TEST_SHARE` of them, at most :data:`MAX_TEST_ROWS`), at random."""
    rng = np.random.default_rng(random_state)
    n = y.size
    order = rng.permutation(n)
    n_test = min(MAX_TEST_ROWS, max(1, int(round(TEST_SHARE * n))))
    if yes_no:
        # Both values in the scored rows (and so in the training rows) whenever both have 2+.
        pos, neg = order[y[order] > 50], order[y[order] <= 50]
        k = min(max(1, int(round(n_test * pos.size / n))), max(pos.size - 1, 0))
        test = np.r_[pos[:k], neg[: n_test - k]]
    else:
        test = order[:n_test]
    train_mask = np.ones(n, bool)
    train_mask[test] = False
    return rng.permutation(np.flatnonzero(train_mask))[:MAX_FIT_ROWS], test


def boosting_options(used: list[str], categories: dict[str, pd.Index], n_train: int,
                     random_state: int) -> dict[str, Any]:
    """The gradient boosting's settings for a model of the columns ``used``."""
    mask = np.array([c in categories for c in used], dtype=bool)
    return {
        "learning_rate": LEARNING_RATE,
        "max_iter": MAX_ITER,
        "early_stopping": True,
        "n_iter_no_change": N_ITER_NO_CHANGE,
        "validation_fraction": 0.1,
        # Small tables: leaves of scikit-learn's default 20 rows would leave few splits.
        "min_samples_leaf": int(min(20, max(3, n_train // 40))),
        "categorical_features": mask if mask.any() else None,
        "random_state": random_state,
    }


def fit_model(
    frame: pd.DataFrame,
    target: str,
    *,
    columns: list[str] | None = None,
    positive: Any = None,
    random_state: int = DEFAULT_SEED,
) -> Fitted:
    """Fit a histogram gradient-boosting model of ``target`` on the other columns and score it.

    Parameters
    ----------
    frame : DataFrame
        A typed table (numbers, dates, bools, text or pandas categories; NaN missing).
    target : str
        Exact name of the target column (numeric, or yes/no as :mod:`stratpd_xl.yesno` reads it).
    columns : list of str, optional
        The model's columns; default every column but the target.
    positive : optional
        For a yes/no target, the value that counts as 1.
    random_state : int, default :data:`~stratpd_xl.params.DEFAULT_SEED`
        Seed of the split into training and scoring rows, the row sample and the boosting.

    Returns
    -------
    Fitted
        The model, the rows as it reads them and its held-out score.

    Notes
    -----
    The checks with sentences for the user (enough rows, a target with two or more values, a
    feature the model can use) are :func:`stratpd_xl.workflow.compare`'s; called directly on
    unusable input this raises scikit-learn's own errors.
    """
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    from sklearn.metrics import r2_score, roc_auc_score

    y_all, yes_no = model_target(frame, target, positive)
    has_y = ~np.isnan(y_all)
    rows = frame.loc[has_y] if not has_y.all() else frame
    unit = 1.0 if yes_no else target_unit(y_all[has_y])
    y = y_all[has_y] / unit
    names = [str(c) for c in frame.columns if str(c) != target] if columns is None else columns
    x, used, categories, left_out = _design(rows, names)

    train, test = split_rows(y, random_state, yes_no=yes_no)
    common = boosting_options(used, categories, train.size, random_state)
    with one_thread():
        if yes_no:
            estimator = HistGradientBoostingClassifier(**common)
            estimator.fit(x[train], (y[train] > 50).astype(int))
        else:
            estimator = HistGradientBoostingRegressor(**common)
            estimator.fit(x[train], y[train])
    fitted = Fitted(estimator, target, used, categories, x, y, yes_no, {}, left_out,
                    np.flatnonzero(has_y), unit)

    held = fitted.predict(x[test])
    score: dict[str, Any] = {"n_train": int(train.size), "n_test": int(test.size),
                             "n_iter": int(estimator.n_iter_)}
    if yes_no:
        outcome = (y[test] > 50).astype(float)
        p = held / 100.0
        brier = float(np.mean((p - outcome) ** 2))
        base = float(np.mean(outcome))
        reference = float(np.mean((base - outcome) ** 2))
        score["brier"] = brier
        score["auc"] = (float(roc_auc_score(outcome, p)) if 0 < base < 1 else float("nan"))
        score["r2"] = 1.0 - brier / reference if reference > 0 else float("nan")
    else:
        score["r2"] = float(r2_score(y[test], held)) if test.size > 1 else float("nan")
    fitted.score = score
    return fitted
