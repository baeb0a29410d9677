"""The effect of being missing: where a feature is blank, how far the target sits from the
curve's typical level, all else equal.

A numeric feature's rows without a value never enter its slopes (there is no x to take a
slope along).  They do have the other columns, so the strata place them: inside a stratum
the rows without x are compared with the stratum's rows with x, each of those moved to the
curve's typical level first (its ``y - pd(x)``: the curve is centred on the rows, so its
typical level is 0).  The stratum's difference of means says how far a blank sits from a
typical value of x with the other columns held as the stratum holds them; the strata's
differences are averaged with the blank rows' counts as weights, the way the ranking
weights a curve's points.  In the partial sums of docs/engine.md (strata fitted on a
sample) the blank rows are grouped by their pair of strata (their rows, sum and squares of
y), and the rows with x add each stratum's squares of y; with the cells' sums that gives
each stratum's sum and squares of ``y - pd(x)`` once the curve is known
(:func:`missing_effect_of_sums`).

The honest strata come from two trees, each grown on half the rows with x; a blank row took
no part in growing either, so it is placed by both and compared with the rows each tree
placed (the other half).  The two comparisons are averaged.

Its band is the normal 95 % range of that weighted difference: per stratum the variance of
a difference of two means, from the variances pooled over the strata (one for the blank
rows, one for the rows with x), and the two trees' standard errors averaged (the bound for
two fully correlated estimates: the blank rows are the same in both).  It leaves out the
curve's own uncertainty at the rows' x values, which the comparison subtracts.

A categorical feature needs none of this: its blanks are one more category, "(missing)",
compared with the others inside the strata as every category is (stages._catstratpd_table).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd

from ..schema import MISSING, MISSING_LABEL
from ._band import BAND_LEVEL
from ._table import as_float

#: Fewer blank rows that met rows with a value in a stratum make no row: a stray blank cell
#: in a large table is a typing slip to count (``n_dropped_missing``), not an effect to show.
MIN_BLANK_ROWS = 5


@dataclass(frozen=True)
class MissingEffect:
    """The blank rows' offset from the curve's typical level (engine units, see Table.y_scale).

    ``pd`` is NaN when no blank row shares a stratum with rows having a value (``compared``
    is then 0).
    """

    pd: float
    se: float
    rows: int  # rows with a target and no value of the feature
    compared: int  # of them, the rows placed in a stratum with rows having a value
    strata: int  # strata (per tree) in which the two met

    def band(self, limits: tuple[float, float] | None = None) -> tuple[float, float]:
        """The 95 % band ``pd -/+ z se``, within ``limits`` (a chance's, see
        ``_finish._probability_limits``) when given."""
        z = NormalDist().inv_cdf(0.5 + BAND_LEVEL / 2)
        low, high = self.pd - z * self.se, self.pd + z * self.se
        if limits is not None:
            low, high = (float(np.clip(v, *limits)) for v in (low, high))
        return low, high


def missing_effect(leaf: np.ndarray, resid: np.ndarray, placed: np.ndarray,
                   y_blank: np.ndarray) -> MissingEffect:
    """Compare the blank rows with the rows having a value, inside the strata.

    Parameters
    ----------
    leaf : int array (n,)
        Stratum of each row with a value (labels 0..k-1).
    resid : float array (n,)
        Those rows' target minus the curve at their x (``y - pd(x)``).
    placed : int array (m, t)
        Each blank row's stratum in each of the ``t`` trees (-1: a leaf none of the rows
        with a value is in), from ``stratify(..., also=...)``.
    y_blank : float array (m,)
        The blank rows' target.
    """
    m = int(y_blank.size)
    if m == 0 or leaf.size == 0:
        return MissingEffect(np.nan, np.nan, m, 0, 0)
    k = int(leaf.max()) + 1
    n_p = np.bincount(leaf, minlength=k).astype(np.float64)
    mean_p = np.bincount(leaf, weights=resid, minlength=k) / np.maximum(n_p, 1)
    # The rows with a value: their spread about their stratum's mean, pooled.
    dof_p = resid.size - np.count_nonzero(n_p)
    var_p = (float(np.sum((resid - mean_p[leaf]) ** 2)) / dof_p if dof_p > 0
             else float(np.var(resid)))
    # The same tree twice (no honest split) is one comparison, not two.
    columns = [placed[:, 0]] if np.array_equal(placed[:, 0], placed[:, -1]) else list(placed.T)
    estimates, errors, weights = [], [], []
    compared = np.zeros(m, bool)
    strata = 0
    for lab in columns:
        ok = lab >= 0
        ok[ok] = n_p[lab[ok]] > 0
        if not ok.any():
            continue
        compared |= ok
        where, y = lab[ok], y_blank[ok]
        n_m = np.bincount(where, minlength=k).astype(np.float64)
        mean_m = np.bincount(where, weights=y, minlength=k) / np.maximum(n_m, 1)
        cells = np.flatnonzero(n_m > 0)
        dof_m = y.size - cells.size
        var_m = (float(np.sum((y - mean_m[where]) ** 2)) / dof_m if dof_m > 0 else var_p)
        found = _in_strata(n_m[cells], mean_m[cells] - mean_p[cells], var_m, var_p,
                           n_p[cells])
        for into, value in zip((estimates, errors, weights), found, strict=True):
            into.append(value)
        strata += cells.size
    return _averaged(estimates, errors, weights, m, int(compared.sum()), strata)


def _in_strata(w: np.ndarray, d: np.ndarray, var_m: float, var_p: float, n_p: np.ndarray
               ) -> tuple[float, float, float]:
    """One tree's comparison: the strata's differences ``d`` of means (blank rows less rows
    with a value) weighted by their blank rows ``w``, its standard error from the pooled
    variances and the strata's rows with a value ``n_p``, and its weight."""
    return (float(w @ d / w.sum()),
            float(np.sqrt(np.sum(w**2 * (var_m / w + var_p / n_p))) / w.sum()),
            float(w.sum()))


def _averaged(estimates: list[float], errors: list[float], weights: list[float], m: int,
              compared: int, strata: int) -> MissingEffect:
    """The trees' comparisons averaged by their blank rows (the errors: their mean, the
    bound for two fully correlated estimates)."""
    if not estimates:
        return MissingEffect(np.nan, np.nan, m, 0, 0)
    share = np.asarray(weights) / np.sum(weights)
    return MissingEffect(float(share @ np.asarray(estimates)), float(np.mean(errors)), m,
                         compared, strata)


def missing_effect_of_sums(leaf: np.ndarray, n_p: np.ndarray, sum_p: np.ndarray,
                           ss_p: np.ndarray, placed: np.ndarray, blank: np.ndarray
                           ) -> MissingEffect:
    """:func:`missing_effect` from sums, as a pass over chunks adds them up
    (engine/stages.py): the same comparison, inside the same strata.

    Parameters
    ----------
    leaf : int array (k,)
        The strata's keys, ascending.
    n_p, sum_p, ss_p : arrays (k,)
        Each stratum's rows with a value, the sum of their ``y - pd(x)`` and its squares
        about their mean.
    placed : int array (g, t)
        Groups of blank rows by their stratum key in each of the ``t`` trees.
    blank : float array (3, g)
        Each group's rows, sum of y and sum of squares of y about its mean.
    """
    m = int(blank[0].sum()) if blank.size else 0
    if m == 0 or not np.any(n_p > 0):
        return MissingEffect(np.nan, np.nan, m, 0, 0)
    mean_p = sum_p / np.maximum(n_p, 1)
    dof_p = int(n_p.sum()) - int(np.count_nonzero(n_p))
    var_p = float(ss_p.sum()) / dof_p if dof_p > 0 else np.nan
    columns = [placed[:, 0]] if np.array_equal(placed[:, 0], placed[:, -1]) else list(placed.T)
    estimates, errors, weights = [], [], []
    compared = np.zeros(placed.shape[0], bool)
    strata = 0
    for keys in columns:
        at = np.minimum(np.searchsorted(leaf, keys), leaf.size - 1)
        ok = (leaf[at] == keys) & (n_p[at] > 0)
        if not ok.any():
            continue
        compared |= ok
        cells, where = np.unique(at[ok], return_inverse=True)
        n_m = np.bincount(where, weights=blank[0][ok])
        total = np.bincount(where, weights=blank[1][ok])
        mean_m = total / n_m
        # Each group's squares about the stratum's mean of blank rows (Chan et al.).
        shift = blank[1][ok] / blank[0][ok] - mean_m[where]
        ss_m = float(np.sum(blank[2][ok] + blank[0][ok] * shift * shift))
        dof_m = int(n_m.sum()) - cells.size
        var_m = ss_m / dof_m if dof_m > 0 else var_p
        found = _in_strata(n_m, mean_m - mean_p[cells], var_m, var_p, n_p[cells])
        for into, value in zip((estimates, errors, weights), found, strict=True):
            into.append(value)
        strata += cells.size
    return _averaged(estimates, errors, weights, m, int(blank[0][compared].sum()), strata)


@dataclass(frozen=True)
class Blanks:
    """A numeric feature's blank rows (with a target) placed in its strata, for the finish."""

    placed: np.ndarray  # (m, t): each blank row's stratum label in each tree, -1 for none
    y: np.ndarray  # their target (engine units)
    leaf: np.ndarray  # the stratum label of each row with x, in the sample's row order

    @classmethod
    def of(cls, table: Any, feature: str, strata: Any) -> Blanks | None:
        """The blank rows of ``table`` (the strata's sample), placed by both of the
        strata's trees; None when the feature has no blank row with a target."""
        blank = np.flatnonzero(np.isnan(as_float(table.frame[feature])))
        rows = strata._rows
        if not blank.size or rows is None:
            return None
        xb = table.strata_matrix(feature, blank)
        placement = strata.placement
        trees = (0,) if placement.in_a is None else (0, 1)
        keys = [placement.keys(xb, np.full(blank.size, t)) for t in trees]
        # Leaf key -> the label the rows with x have in it (-1: a leaf none of them is in).
        fitted = strata.sample_keys
        labels = rows["keys"][np.argsort(rows["ids"], kind="stable")]
        size = int(max(fitted.max(initial=0), *(k.max(initial=0) for k in keys))) + 1
        lookup = np.full(size, -1, np.int64)
        lookup[fitted] = labels
        return cls(np.column_stack([lookup[k] for k in keys]), table.y[blank], rows["keys"])

    def effect(self, resid: np.ndarray, y_scale: float,
               limits: tuple[float, float] | None) -> dict[str, Any] | None:
        """``attrs["missing"]`` from the rows with x less the curve at their x, ``resid``;
        None when fewer than :data:`MIN_BLANK_ROWS` blank rows met rows with x in a
        stratum."""
        return missing_attrs(missing_effect(self.leaf, resid, self.placed, self.y), y_scale,
                             limits)


def missing_attrs(effect: MissingEffect, y_scale: float,
                  limits: tuple[float, float] | None) -> dict[str, Any] | None:
    """``attrs["missing"]`` of a curve: the blank row's numbers in the target's units; None
    when fewer than :data:`MIN_BLANK_ROWS` blank rows met rows with x in a stratum."""
    if effect.compared < MIN_BLANK_ROWS:
        return None
    low, high = effect.band(limits)
    value = effect.pd if limits is None else float(np.clip(effect.pd, *limits))
    return {"pd": value * y_scale, "low": low * y_scale, "high": high * y_scale,
            "rows": effect.rows, "compared": effect.compared, "strata": effect.strata}


def with_missing_row(result: pd.DataFrame, missing: dict[str, Any]) -> pd.DataFrame:
    """``result`` (a numeric curve) with the blank rows' point last: ``x`` missing (NaN, NaT
    for dates), ``missing`` True (False on every other row), ``pd`` its offset, the band
    columns the curve has set to its band, ``slope`` missing and ``n_slopes`` the strata it
    was compared in (``n_x`` 0)."""
    row: dict[str, Any] = {}
    for name in result.columns:
        if name == "pd":
            row[name] = missing["pd"]
        elif name in ("pd_low", "curve_low"):
            row[name] = missing["low"]
        elif name in ("pd_high", "curve_high"):
            row[name] = missing["high"]
        elif name == "n_slopes":
            row[name] = missing["strata"]
        elif name == "n_x":
            row[name] = 0
        else:
            row[name] = np.nan
    blank = pd.DataFrame([row])
    blank["x"] = blank["x"].astype(result["x"].dtype if not
                                   pd.api.types.is_integer_dtype(result["x"].dtype)
                                   else np.float64)
    out = pd.concat([result.assign(**{MISSING: False}), blank.assign(**{MISSING: True})],
                    ignore_index=True)
    out = out.astype({c: result[c].dtype for c in ("n_slopes", "n_x") if c in result})
    out.attrs = result.attrs
    return out



def with_missing_category(codes: np.ndarray, cats: pd.Index
                          ) -> tuple[np.ndarray, pd.Index, int | None]:
    """A categorical feature's codes and categories with its blanks (code -1) as one more
    category, last: :data:`~stratpd_xl.schema.MISSING_LABEL`, or that label with a number
    when the column already holds it as a value; and that category's code (None, and
    everything unchanged, when no row is blank)."""
    gap = codes < 0
    if not gap.any():
        return codes, cats, None
    label, n = MISSING_LABEL, 1
    shown = {str(c) for c in cats}
    while label in shown:
        n += 1
        label = f"{MISSING_LABEL[:-1]} {n})"
    code = len(cats)
    return (np.where(gap, code, codes),
            pd.Index([*cats, label], dtype=object), code)


def blank_as_code(codes: np.ndarray) -> np.ndarray:
    """Category codes with the blanks (-1) as one more code, after the others: a categorical
    feature's codes as its analysis reads them (:func:`with_missing_category`)."""
    return np.where(codes < 0, codes.max(initial=-1) + 1, codes) if (codes < 0).any() else codes
