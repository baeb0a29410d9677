"""The columns and ``attrs`` of every result, in one place.

Results are plain DataFrames (as scikit-learn's ``inspection`` returns plain results).  Their
columns are named here, and consumers (tables, charts, workbooks, formulas) use these names
and :func:`result_kind` instead of guessing from what a frame happens to hold.

Numeric curve (``stratpd``), one row per curve point, ``x`` ascending
    ``x``         feature value (the feature's own type: numbers, whole numbers or dates)
    ``pd``        partial dependence, averaging 0 over the rows (the full-data curve)
    ``slope``     mean slope from this point to the next; NaN on the closing row
    ``n_slopes``  leaf slopes averaged at x (the fewest over the x values a point summarises)
    ``n_x``       distinct x values this point summarises (1 at full resolution)
    ``pd_low``, ``pd_high``   a 95 % band per point: pd -/+ t quantile x the standard
                  deviation of the trials on random halves of the rows (``n_trials`` > 1)

Categorical effects (``catstratpd``), one row per category
    ``category``  the category
    ``pd``        effect relative to the first row's category (0 there)
    ``count``     rows that informed the effect
    ``few_rows``  True when fewer than 5 rows informed it (named in ``attrs["warnings"]``)
    ``pd_low``, ``pd_high``   as above

Impact ranking (``impact``), largest first
    ``feature``, ``kind`` (``"numeric"`` / ``"categorical"``), ``impact`` (target units),
    ``share`` (impact / sum of impacts)

``attrs`` of a curve: ``kind``, ``method``, ``target``, ``feature``, ``n_rows``, ``n_used``,
``n_dropped_missing``, ``n_ignored``, ``n_leaves``, ``params``, ``warnings``; numeric curves add
``n_unique_x``, ``n_points_full`` (points at full resolution), ``within_strata_share``,
``adjusted`` and ``others_r2`` (the linear adjustment and the feature's R^2 on the others);
a yes/no target adds ``positive``, ``target_label`` and ``units``;
categorical ones ``baseline`` and ``categories_without_estimate``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "CATEGORICAL",
    "FEW_ROWS",
    "NUMERIC",
    "result_kind",
]

NUMERIC = "numeric"
CATEGORICAL = "categorical"

# Numeric curve columns
X = "x"
PD = "pd"
SLOPE = "slope"
N_SLOPES = "n_slopes"
N_X = "n_x"
PD_LOW = "pd_low"
PD_HIGH = "pd_high"
# Categorical columns
CATEGORY = "category"
COUNT = "count"
FEW_ROWS = "few_rows"
# Ranking columns
FEATURE = "feature"
KIND = "kind"
IMPACT = "impact"
SHARE = "share"

NUMERIC_COLUMNS = (X, PD, SLOPE, N_SLOPES, N_X, PD_LOW, PD_HIGH)
CATEGORICAL_COLUMNS = (CATEGORY, PD, COUNT, PD_LOW, PD_HIGH, FEW_ROWS)
RANKING_COLUMNS = (FEATURE, KIND, IMPACT, SHARE)


def result_kind(result: Any) -> str:
    """``"numeric"`` or ``"categorical"`` for a curve result.

    The engine records the kind in ``attrs["kind"]``; a frame without it (built by hand) is
    categorical when it has a ``category`` column and no ``x`` column.
    """
    attrs: Mapping[str, Any] = getattr(result, "attrs", {}) or {}
    kind = attrs.get("kind")
    if kind in (NUMERIC, CATEGORICAL):
        return str(kind)
    columns = set(getattr(result, "columns", ()))
    return CATEGORICAL if CATEGORY in columns and X not in columns else NUMERIC
