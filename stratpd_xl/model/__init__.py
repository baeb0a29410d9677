"""A second opinion from a fitted model: scikit-learn's gradient boosting, its partial dependence,
ICE, ALE, two-way partial dependence and Friedman's H², beside StratPD's curve.

Numbers only, like :mod:`stratpd_xl.engine` (which it builds on); the checks are
:mod:`stratpd_xl.workflow`'s and the sentences and pictures :mod:`stratpd_xl.presentation`'s.
scikit-learn is imported on first use.
"""

from ._classes import class_view, fit_classes
from ._effects import (
    ICE_ROWS,
    accumulated_local_effects,
    agreement,
    centre,
    h_squared,
    individual_curves,
    partial_dependence,
    row_weights,
    two_way_partial_dependence,
)
from ._fit import MAX_CATEGORIES, MIN_MODEL_ROWS, Fitted, fit_model, model_target
from .api import (
    compare_classes,
    compare_curves,
    curve_grid,
    extrapolation_share,
    feature_grid,
    ice_table,
    pair_table,
)

__all__ = [
    "ICE_ROWS",
    "MAX_CATEGORIES",
    "MIN_MODEL_ROWS",
    "Fitted",
    "accumulated_local_effects",
    "agreement",
    "centre",
    "class_view",
    "compare_classes",
    "compare_curves",
    "curve_grid",
    "feature_grid",
    "extrapolation_share",
    "fit_classes",
    "fit_model",
    "h_squared",
    "ice_table",
    "individual_curves",
    "model_target",
    "pair_table",
    "partial_dependence",
    "row_weights",
    "two_way_partial_dependence",
]
