"""The adjustment for the other columns: fitted inside the strata, cross-fitted, used only
where it measurably helps.

A stratum holds the other columns alike, not equal.  What they still vary inside it travels
with the feature when they are correlated with it and adds to its slope (x1 among 20
columns correlated 0.6: slope 1.7 for a true 1).  The adjustment removes an estimate of
that part, ``z @ beta``, from the target before the leaf slopes (or category contrasts) are
taken.  How ``beta`` is estimated decides whether the adjustment can do harm:

* **Inside the strata.**  ``beta`` comes from a least-squares fit of the target on the
  feature and the other columns after every column is centred within its stratum (leaf
  fixed effects), i.e. from the same within-stratum variation the slopes use.  A global fit
  is dominated by the between-strata variation, where the others act non-linearly (house
  prices are convex in quality); its coefficients then overshoot inside a stratum and can
  reverse an effect (Ames: an excellent exterior 146k cheaper than a good one).
* **The feature enters flexibly**: a numeric feature as a piecewise-linear basis (hinges
  at its quintiles), a categorical one as its indicators, so that a curved effect of the
  feature is not handed to the columns correlated with it.
* **Cross-fitted over the strata.**  The strata are split at random into two folds; each
  fold's rows are adjusted with the coefficients fitted on the other fold.
* **Used only where it helps out of fold.**  The error of the fold-out rows, within their
  strata, with the other columns (``y ~ feature + others``) is compared with the error
  without them (``y ~ feature``); the adjustment is applied only when the others reduce it
  by at least ``MIN_GAIN``.  Noise columns or a fit that does not carry over (too many
  coefficients for the rows) raise the out-of-fold error and switch it off.

Everything runs on the cross-products of the within-stratum columns, ``(m + k + 1)^2``
numbers per fold for m feature columns and k others, summed over blocks of rows (the
within-stratum matrix itself is never held whole); the fit is attempted only when there
are at least ``ROWS_PER_COEF`` rows per coefficient, so those products are never larger
than a tenth of the design itself: memory stays linear in the number of columns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._backend import get_backend, njit
from ..schema import Note

# Rows per coefficient needed before any fit is attempted.
ROWS_PER_COEF = 10
# Least share of the out-of-fold within-strata error the other columns must remove.
MIN_GAIN = 0.01
# Above this share of the feature's within-strata variance explained linearly by the other
# columns, no adjustment: a linear fit then splits the feature's effect with its proxies.
MAX_ADJUST_R2 = 0.95
# Ridges tried on the others' coefficients (a share of their mean within-strata sum of
# squares); the one with the least out-of-fold error is used.  On the semi-synthetic Ames
# table (260 columns) no ridge let a few rare categories ruin the other fold and switched the
# adjustment off; 0.1 kept every effect within 0.85-1.15 of the truth.
RIDGES = (0.0, 1e-3, 1e-2, 1e-1, 1.0)
# The ridge of the other fits: numerical stability only.
STABILITY = 1e-9
# Quantiles of a numeric feature where its piecewise-linear basis bends.
HINGES = (0.2, 0.4, 0.6, 0.8)
# A curve's change that the adjustment moves by at least SIZE_SHARE of it, but by less than
# SIZE_Z standard errors of the move (``Adjustment.size_move``), keeps the plain value, with
# a note: a move that large is no more than the fit's own noise.  Semi-synthetic Ames with
# Year.Built acting linearly: adjusted 0.61-1.16 of the truth, moves of up to 32 % under
# 1.8 standard errors; plain 0.79-1.07.  Smaller moves keep the adjustment even when within
# their noise: there it removes real bias as often as it adds noise (Overall.Qual, a
# hinge: 7 % at 1.7 standard errors, 1.05 of the truth adjusted, 1.11 plain).
SIZE_Z = 2.0
SIZE_SHARE = 0.1
# Most rows the move's standard error is measured on (every k-th row beyond): it only sets
# a threshold, and a slope field of a million rows costs a tenth of the curve.
SIZE_ROWS = 100_000


@dataclass(frozen=True)
class Adjustment:
    """The outcome of :func:`fit_adjustment`.

    Attributes
    ----------
    part : array or None
        Per row, the other columns' part to subtract from the target (None: no adjustment).
    r2 : float
        Share of the feature's within-strata variance that the other columns explain
        linearly (NaN when not computed).
    gain : float
        Share of the out-of-fold within-strata error that the other columns remove
        (negative when they add to it; NaN when not computed).
    reason : str
        Why the adjustment was not applied ("" when it was).
    y_left : float
        Share of the target's within-strata variation that a straight-line fit on the other
        columns alone (no feature) leaves, out of fold: near 0 when they restate the target
        (see ``_leaks``; NaN when not computed).
    """

    part: np.ndarray | None
    r2: float
    gain: float
    reason: str
    # What the fit used, for refits on the trials' halves (see ``refit``).
    inputs: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    y_left: float = np.nan

    def refit(self, pick: np.ndarray, leaf: np.ndarray) -> np.ndarray | None:
        """The part for the rows ``pick`` stratified by ``leaf`` (a trial's half), fitted
        on them with the same ridge; None when the full data were not adjusted.

        A trial's strata differ from the full data's, and the part only has to be right
        up to a constant inside the strata it was fitted in; refitted, every trial is
        adjusted as the full data are, and the band includes the fit's own uncertainty.
        """
        if self.part is None:
            return None
        i = self.inputs
        # Gathered column by column, so the half stays column-major as the full data are
        # (the kernels read a column at a time; a row-major copy read so took twice as long).
        own = np.take(i["own"].T, pick, axis=1).T
        z = np.take(i["z"].T[: i["n_others"]], pick, axis=1).T
        gram = _within_grams(own, z, i["y"][pick], leaf, [np.arange(pick.size)])[0]
        m, full = own.shape[1], slice(0, gram.shape[0] - 1)
        return z @ _solve(gram[full, full], gram[full, -1], free=m, ridge=i["ridge"])[m:]


    def size_move(self, weights: np.ndarray, rows: np.ndarray | None = None
                  ) -> tuple[float, float]:
        """How much the adjustment moves ``weights @ target`` (a curve's change from one x to
        another: ``_numeric.rise_weights``), and the standard error of that move from the
        noise of the fit's coefficients; ``(0, nan)`` when the data were not adjusted.

        The move is ``-weights @ part``: the others' columns' own changes along x inside the
        strata, ``r = z' weights``, times their coefficients.  Its variance is ``r' C r``
        with ``C`` the coefficients' covariance from the within-strata least squares
        (ridge included: ``s^2 A^-1 G A^-1``, ``A = G + ridge``).  A move within about two
        of these is what refitting on other rows would give by chance alone.  ``rows``:
        the rows ``weights`` are of (default all).
        """
        i = self.inputs
        if self.part is None or "gram" not in i:
            return 0.0, np.nan
        m, n_others = i["own"].shape[1], i["n_others"]
        gram = i["gram"]
        w = m + n_others
        r = np.zeros(w)
        z = i["z"] if rows is None else i["z"][rows]
        r[m:] = z[:, :n_others].T @ weights
        a = gram[:w, :w] + np.diag(_penalty(np.diag(gram)[:w], m, i["ridge"]))
        try:
            coef, v = np.linalg.solve(a, np.column_stack([gram[:w, -1], r])).T
        except np.linalg.LinAlgError:
            return float(-(r[m:] @ i["beta"])) if "beta" in i else 0.0, np.nan
        c = np.r_[coef, -1.0]
        s2 = _sse(gram, c) / i["dof"] if i["dof"] > 0 else np.nan
        return float(-(r[m:] @ coef[m:])), float(np.sqrt(s2 * max(v @ gram[:w, :w] @ v, 0.0)))


def numeric_basis(x: np.ndarray, x_sorted: np.ndarray | None = None) -> np.ndarray:
    """A numeric feature as columns of a piecewise-linear fit: x and hinges at quintiles.

    ``x_sorted``: the same values in ascending order, when known (quantiles of sorted
    values are found several times faster).
    """
    return hinge_basis(x, basis_knots(x if x_sorted is None else x_sorted))


def basis_knots(s: np.ndarray) -> np.ndarray:
    """Where :func:`numeric_basis` bends: x's quintiles strictly inside its range."""
    knots = np.unique(np.quantile(s, HINGES))
    return knots[(knots > s.min()) & (knots < s.max())]


def hinge_basis(x: np.ndarray, knots: np.ndarray) -> np.ndarray:
    """x and its hinges ``max(x - knot, 0)`` as columns (see :func:`numeric_basis`)."""
    out = np.empty((x.size, 1 + knots.size))
    out[:, 0] = x
    for j, k in enumerate(knots, start=1):  # written in place: no temporaries per hinge
        np.subtract(x, k, out=out[:, j])
        np.maximum(out[:, j], 0.0, out=out[:, j])
    return out


def _solve(gram: np.ndarray, rhs: np.ndarray, free: int = 0,
           ridge: float = STABILITY) -> np.ndarray:
    """Least squares from cross-products, with a ridge on all but the first ``free``
    columns (``ridge`` x their mean diagonal).

    Unshrunk, a rare category that barely varies inside one fold's strata gets an
    arbitrary, huge coefficient that ruins the other fold.  The feature's own columns are
    left free: shrunk, their effect would pass to the columns correlated with them.
    """
    d = np.diag(gram)
    if not d.size or not np.any(d > 0):
        return np.zeros(rhs.shape)
    try:  # positive definite with the ridge: a direct solve, far faster than an SVD
        return np.linalg.solve(gram + np.diag(_penalty(d, free, ridge)), rhs)
    except np.linalg.LinAlgError:
        pass
    return np.linalg.lstsq(gram, rhs, rcond=1e-10)[0]


def _penalty(d: np.ndarray, free: int, ridge: float) -> np.ndarray:
    """The ridge :func:`_solve` adds to the diagonal ``d`` of the cross-products."""
    # The free columns get a ridge for numerical stability only: a column that never varies
    # inside one fold's strata (a rare category) then gets 0, not a number from round-off.
    penalty = np.full(d.size, STABILITY * float(np.mean(d)))
    if d.size > free:
        penalty[free:] = max(ridge, STABILITY) * float(np.mean(d[free:]))
    return penalty


def fit_adjustment(
    own: np.ndarray, z: np.ndarray, y: np.ndarray, leaf: np.ndarray,
    rng: np.random.Generator, *, numeric: bool, ridges: tuple[float, ...] = RIDGES,
    force: bool = False, n_curved: int = 0,
) -> Adjustment:
    """Fit, check and (when it helps) return the other columns' part of ``y``.

    Parameters
    ----------
    own : float array (n, m)
        The feature: :func:`numeric_basis` of x, or a categorical feature's indicators.
    z : float array (n, k)
        The other columns, standardised, gaps filled (see the caller).
    y : float array (n,)
        Target.
    leaf : int array (n,)
        Stratum of every row (0..n_leaves-1).
    rng : numpy Generator
        Source of the folds of strata.
    numeric : bool
        ``own`` is a numeric basis (x first, then hinges), not indicators.
    ridges : tuple of float
        Ridges to choose from by out-of-fold error.
    force : bool
        Return the part whatever the gain (a trial of a curve that was adjusted).
    n_curved : int
        The last ``n_curved`` columns of ``z`` are optional (hinges of the others): they are
        used only when they lower the out-of-fold error, like a smaller ridge.
    """
    n, m = own.shape
    k = z.shape[1]
    if k == 0 or m == 0:
        return Adjustment(None, np.nan, np.nan, "no other columns to adjust for")
    if n < ROWS_PER_COEF * (m + k + 1):
        return Adjustment(None, np.nan, np.nan,
                          f"fewer than {ROWS_PER_COEF} rows per coefficient")
    width = m + k + 1
    fold = rng.integers(0, 2, int(leaf.max()) + 1)[leaf].astype(bool)
    grams = _within_grams(own, z, y, leaf, [np.flatnonzero(~fold), np.flatnonzero(fold)])
    o, others = slice(0, m), slice(m, m + k)
    # Whether the others restate the target, from the same cross-products (see _leaks).
    y_left = others_left(grams, m, k)
    # Share of the feature's within-strata variance the others explain out of fold (a
    # trace for several columns, as a multivariate R^2; only x itself for a numeric
    # basis).  In-sample, 260 columns explain 96 % of Ames' Exter.Qual by chance alone.
    # At the best of the ridges, as the adjustment itself: unshrunk, Ames' 241 columns
    # explained Year.Built inside the strata 0 % out of fold on some folds (a few rare
    # categories ruin the other fold) and 75 % on others; shrunk, 57-82 %.
    n_focus = 1 if numeric else m
    own_ss = sum(float(test[j, j]) for test in grams for j in range(n_focus))
    resid = np.inf
    for ridge in ridges:
        left = 0.0
        for fit, test in ((grams[0], grams[1]), (grams[1], grams[0])):
            beta = _solve(fit[others, others], fit[others, :n_focus], ridge=ridge)
            for j in range(n_focus):
                c = np.zeros(width)
                c[j] = 1.0
                c[others] = -beta[:, j]
                left += _sse(test, c)
        resid = min(resid, left)
    r2 = float(min(max(1.0 - resid / own_ss, 0.0), 1.0)) if own_ss > 0 else np.nan
    if r2 > MAX_ADJUST_R2 and not force:
        return Adjustment(None, r2, np.nan,
                          "the other columns nearly determine the feature inside the strata",
                          y_left=y_left)
    pairs = ((grams[0], grams[1]), (grams[1], grams[0]))
    sse_without = sum(_sse(test, np.r_[_solve(fit[o, o], fit[o, -1]), np.zeros(k), -1.0])
                      for fit, test in pairs)
    # The ridge on the others' coefficients, and whether their hinges enter, are chosen
    # by the same out-of-fold error.
    best = (np.inf, ridges[0], k)
    for n_others in sorted({k, k - n_curved}):
        used = np.r_[np.arange(m + n_others), width - 1]
        for ridge in ridges:
            sse_with = 0.0
            for fit, test in pairs:
                sub = fit[np.ix_(used, used)]
                c = np.r_[_solve(sub[:-1, :-1], sub[:-1, -1], free=m, ridge=ridge), -1.0]
                sse_with += _sse(test[np.ix_(used, used)], c)
            if sse_with < best[0]:
                best = (sse_with, ridge, n_others)
    sse_with, chosen, n_others = best
    gain = 1.0 - sse_with / sse_without if sse_without > 0 else 0.0
    if not gain >= MIN_GAIN and not force:
        return Adjustment(None, r2, gain,
                          "the other columns do not reduce the error inside the strata",
                          y_left=y_left)
    # The folds decided whether and how much to shrink; the part itself comes from all
    # rows' within-strata fit (the feature's basis in it, so it is not given x's effect).
    # Per-fold coefficients would leave a column that never varies inside one fold's
    # strata (pregnancy, where the trees split on it) at 0 for the other fold's rows.
    total = grams[0] + grams[1]
    full = slice(0, m + n_others)
    beta = _solve(total[full, full], total[full, -1], free=m, ridge=chosen)[m:]
    part = z[:, :n_others] @ beta
    # beta: the part of other rows, whose design is made as z's (_design.Design); gram and
    # dof: the noise of the fit (see Adjustment.size_move).
    used = np.r_[np.arange(m + n_others), width - 1]
    inputs = {"own": own, "z": z, "y": y, "ridge": chosen, "n_others": n_others,
              "beta": beta, "gram": total[np.ix_(used, used)],
              "dof": n - int(leaf.max()) - 1 - m - n_others}
    return Adjustment(part, r2, gain, "", inputs, y_left)


def others_left(grams: list[np.ndarray], m: int, k: int) -> float:
    """Out-of-fold share of the within-strata variation of y that a straight-line fit on
    the ``k`` other columns (no feature: columns ``m`` to ``m + k`` of the cross-products
    of ``[own | z | y]``) leaves, at the best of the adjustment's ridges."""
    ss = float(grams[0][-1, -1] + grams[1][-1, -1])
    if not ss > 0 or k == 0:
        return 1.0
    width = grams[0].shape[0]
    others = slice(m, m + k)
    best = np.inf
    for ridge in RIDGES:
        sse = 0.0
        for fit, test in ((grams[0], grams[1]), (grams[1], grams[0])):
            c = np.zeros(width)
            c[others] = _solve(fit[others, others], fit[others, -1], ridge=ridge)
            c[-1] = -1.0
            sse += _sse(test, c)
        best = min(best, sse)
    return float(min(best / ss, 1.0))


# Rows of the within-strata matrix made at a time: its cross-products are summed block by
# block, so the matrix (rows x columns) is never held whole, and each block is still in
# cache when it is multiplied.
BLOCK_ROWS = 1 << 14


def _within_grams(own: np.ndarray, z: np.ndarray, y: np.ndarray, leaf: np.ndarray,
                  parts: list[np.ndarray]) -> list[np.ndarray]:
    """Cross-products ``W'W`` of ``W = [own | z | y]`` centred within each leaf, over the
    rows of each of ``parts`` (ascending row indices), summed over blocks of
    ``BLOCK_ROWS`` rows.  Both backends make the same blocks, so the same numbers."""
    means = _leaf_means(own, z, y, leaf)
    width = means.shape[1]
    grams = []
    for rows in parts:
        gram = np.zeros((width, width))
        for start in range(0, rows.size, BLOCK_ROWS):
            block = _within_rows(own, z, y, leaf, means, rows[start:start + BLOCK_ROWS])
            gram += block @ block.T  # the block is W's rows transposed: W'W of them
        grams.append(gram)
    return grams


# The kernels read the columns one after another: the design is column-major (see
# _design._design_of), and a row-major basis of a few columns reads as well either way.

@njit
def _leaf_means_kernel(own, z, y, leaf, n_leaves):  # pragma: no cover - compiled
    # The numpy path's numbers to the bit: each leaf's sums in row order, as bincount adds.
    m = own.shape[1]
    k = z.shape[1]
    n = y.shape[0]
    width = m + k + 1
    sums = np.zeros((width, n_leaves))
    counts = np.zeros(n_leaves, np.int64)
    for i in range(n):
        counts[leaf[i]] += 1
    for j in range(m):
        s = sums[j]
        for i in range(n):
            s[leaf[i]] += own[i, j]
    for j in range(k):
        s = sums[m + j]
        for i in range(n):
            s[leaf[i]] += z[i, j]
    s = sums[width - 1]
    for i in range(n):
        s[leaf[i]] += y[i]
    # Column by column (transposed): _within_rows_kernel reads a column's means at a time.
    for g in range(n_leaves):
        c = np.float64(max(counts[g], 1))
        for j in range(width):
            sums[j, g] /= c
    return sums


@njit
def _within_rows_kernel(own, z, y, leaf, means, rows):  # pragma: no cover - compiled
    m = own.shape[1]
    k = z.shape[1]
    width = m + k + 1
    nr = rows.shape[0]
    out = np.empty((width, nr))
    # ``means`` is column by column (columns x leaves), as _leaf_means_kernel makes it.
    for j in range(m):
        o = out[j]
        mj = means[j]
        for r in range(nr):
            i = rows[r]
            o[r] = own[i, j] - mj[leaf[i]]
    for j in range(k):
        o = out[m + j]
        mj = means[m + j]
        for r in range(nr):
            i = rows[r]
            o[r] = z[i, j] - mj[leaf[i]]
    o = out[width - 1]
    mj = means[width - 1]
    for r in range(nr):
        i = rows[r]
        o[r] = y[i] - mj[leaf[i]]
    return out


def _leaf_means(own: np.ndarray, z: np.ndarray, y: np.ndarray, leaf: np.ndarray
                ) -> np.ndarray:
    """Each leaf's mean of every column of ``[own | z | y]`` (leaves x columns)."""
    leaf = np.ascontiguousarray(leaf, np.int64)
    n_leaves = int(leaf.max()) + 1 if leaf.size else 0
    if get_backend(y.shape[0]) == "numba":  # one pass over the rows instead of one per column
        return _leaf_means_kernel(own, z, y, leaf, n_leaves).T
    counts = np.maximum(np.bincount(leaf, minlength=n_leaves), 1)
    columns = [own[:, j] for j in range(own.shape[1])] + [z[:, j] for j in range(z.shape[1])]
    return np.column_stack([np.bincount(leaf, weights=a, minlength=n_leaves) / counts
                            for a in [*columns, y]])


def _within_rows(own: np.ndarray, z: np.ndarray, y: np.ndarray, leaf: np.ndarray,
                 means: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The rows ``rows`` of ``[own | z | y]`` minus their leaf's means, transposed (one
    row per column, C order), as both backends give them."""
    if get_backend(y.shape[0]) == "numba":
        # The means column by column (no copy when the kernel made them).
        return _within_rows_kernel(own, z, y, np.ascontiguousarray(leaf, np.int64),
                                   np.ascontiguousarray(means.T),
                                   np.ascontiguousarray(rows, np.int64))
    at = means[leaf[rows]]
    out = np.empty((means.shape[1], rows.size))
    np.subtract(np.column_stack([own[rows], z[rows], y[rows]]).T, at.T, out=out)
    return out


def _sse(gram: np.ndarray, c: np.ndarray) -> float:
    """Sum of squared residuals ``|W c|^2`` from the cross-products ``W'W``."""
    return float(max(c @ gram @ c, 0.0))



def size_check(feature: str, move: float, se: float, plain: float, r2: float,
               categories: bool = False) -> Note | None:
    """The note of a curve whose 10th-90th percentile change (``plain`` without the
    adjustment) the adjustment moves by ``move``, at least :data:`SIZE_SHARE` of it but under
    :data:`SIZE_Z` standard errors ``se``: the curve is then shown plain.  None otherwise.

    ``categories``: the size is that of a categorical feature's effects (``plain`` 1, the
    plain effects' own scale; ``move`` how much the adjustment scales them up or down along
    that pattern: :func:`effects_scale`)."""
    if not (plain and abs(move) >= SIZE_SHARE * abs(plain) and abs(move) < SIZE_Z * se):
        return None
    share = abs(move) / abs(plain)
    bigger = (move > 0) == (plain > 0)
    within = f" ({r2:.0%} of its variation there)" if np.isfinite(r2) else ""
    size = (f'the differences between the categories of "{feature}"' if categories else
            f'the change of "{feature}" from its 10th to its 90th percentile')
    return Note(
        f"the adjustment for the other columns would make {size} {share:.0%} "
        f"{'larger' if bigger else 'smaller'}, but a refit on other rows could move that size "
        f"by about {SIZE_Z * se / abs(plain):.0%} by chance "
        f'alone: the other columns move with "{feature}" inside the strata{within}, so the '
        "plain comparison inside the strata is shown, and its size is uncertain by about that "
        "much; leave out the columns that duplicate it (exclude) or add rows to narrow it",
        "size", columns=[feature], features=[feature], moves=min(share, 1.0),
        move=share, noise=SIZE_Z * se / abs(plain),
    )


def effects_scale(plain: np.ndarray, count: np.ndarray, min_rows: int) -> np.ndarray | None:
    """The direction along which a categorical feature's size is read: ``d`` with
    ``d @ effects`` the effects' least-squares scale on the ``plain`` pattern (1 for the plain
    effects themselves), over the categories with at least ``min_rows`` rows and weighted by
    their rows.  Two categories: their contrast over the plain one.  ``d`` sums to 0, so the
    pinned category does not matter.  None without two such categories that differ."""
    ok = np.isfinite(plain) & (count >= min_rows)
    if ok.sum() < 2:
        return None
    n = count[ok].astype(float)
    centred = plain[ok] - np.average(plain[ok], weights=n)
    ss = float(np.sum(n * centred**2))
    if not ss > 0:
        return None
    d = np.zeros(plain.size)
    d[ok] = n * centred / ss
    return d
