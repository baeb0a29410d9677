"""The shape of a curve, told by one deterministic rule on the curve and its band.

A sentence that says "y goes down by about 0.24" of a curve that falls 16 and rises 16
again tells an analyst "no effect".  The rule here names what a person sees in the picture,
between the 10th and the 90th percentile of x (where the data are):

* ``"u"`` / ``"hump"``: lowest (highest) inside, and higher (lower) at *both* ends by at
  least :data:`SIDE_SHARE` of the curve's swing each, both beyond the band;
* ``"wave"``: both at once (it goes up and down);
* ``"step"``: a rise or fall of which at least :data:`STEP_SHARE` happens within
  :data:`STEP_WIDTH` of the range, at least half that width away from either end (a level
  on both sides);
* ``"flat"``: neither the rise nor the swing reaches beyond the band (only with a band);
* ``"rise"`` / ``"fall"``: the rest.

The inside of the curve is read as groups of about :data:`GROUP_SHARE` of the rows (a value
held by many rows is one group), so a lone wiggle of the full-resolution curve cannot be a
minimum; the ends are the curve's values at the 10th and 90th percentiles, as the rise's.
Each size comes with its 95 % band from the same trials as the curve's band (the trials'
sizes at the same places); without trials the rule uses the shares alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

#: Share of the rows (between the 10th and 90th percentile) one group holds at least.
GROUP_SHARE = 0.05
#: Each side of a U or hump rises (falls) by at least this share of the swing.
SIDE_SHARE = 0.2
#: A step: this share of the rise happens within ...
STEP_SHARE = 0.6
#: ... this share of the x range between the 10th and 90th percentile.
STEP_WIDTH = 0.2

#: Most places the groups' heights are read at (runs of neighbouring values beyond that
#: are read as one).
MAX_VALUES = 4000

Band = Callable[[np.ndarray, float], tuple[float, float]]


def _groups(ux: np.ndarray, rows: np.ndarray, e0: float, e1: float
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The distinct values within the ends, their rows, each one's group and the groups'
    x (the median value of their rows, a value the data have)."""
    inside = (ux >= e0) & (ux <= e1)
    vx, vw = ux[inside], rows[inside].astype(float)
    if vx.size > MAX_VALUES:
        # Runs of neighbouring values as one (their rows' mean value, their rows): the
        # groups' heights stay the same to the curve's smoothness, and the trials are read
        # at 4,000 places instead of a million (1.9 s -> 0.1 s for 20 trials).
        block = np.arange(vx.size) * MAX_VALUES // vx.size
        starts = np.flatnonzero(np.r_[True, np.diff(block) > 0])
        weight = np.add.reduceat(vw, starts)
        vx, vw = np.add.reduceat(vx * vw, starts) / weight, weight
    if vx.size == 0:
        return vx, vw, np.zeros(0, dtype=np.int64), np.zeros(0)
    cum = np.cumsum(vw)
    # A value belongs to the group its middle row falls in; one with many rows spans groups
    # and so is one on its own.
    raw = np.floor((cum - vw / 2) / cum[-1] / GROUP_SHARE).astype(np.int64)
    _, gid = np.unique(raw, return_inverse=True)
    starts = np.flatnonzero(np.r_[True, np.diff(gid) > 0])
    where = []
    for s, e in zip(starts, np.r_[starts[1:], vx.size], strict=True):
        c = np.cumsum(vw[s:e])
        where.append(vx[s + int(np.searchsorted(c, c[-1] / 2))])
    return vx, vw, gid, np.asarray(where, dtype=float)


def _means(values: np.ndarray, weights: np.ndarray, gid: np.ndarray) -> np.ndarray:
    """Row-weighted means of ``values`` (last axis) by group."""
    starts = np.flatnonzero(np.r_[True, np.diff(gid) > 0])
    total = np.add.reduceat(weights, starts)
    return np.add.reduceat(values * weights, starts, axis=-1) / total


def curve_shape(grid: np.ndarray, pd_values: np.ndarray, trials: np.ndarray | None,
                ux: np.ndarray, ux_rows: np.ndarray, ends: tuple[float, float],
                band: Band | None) -> dict[str, Any]:
    """The curve's shape between ``ends`` (the 10th and 90th percentiles of x).

    Parameters
    ----------
    grid, pd_values : float arrays (m,)
        The full-resolution curve (x ascending).
    trials : float array (t, m) or None
        The trials' curves on ``grid`` (NaN where a half had no point).
    ux, ux_rows : arrays (k,)
        The feature's distinct values and the rows holding each.
    ends : (float, float)
        Where the rise is measured.
    band : callable or None
        ``band(trial_values, centre) -> (low, high)``, the 95 % band of a size from its
        trials' values (the curve band's own rule).

    Returns
    -------
    dict
        ``kind`` (see the module docstring) and, by kind: ``"u"``/``"hump"``: ``at`` (x of
        the lowest/highest group), ``left``/``right`` (how much higher/lower each end is, as
        positive numbers) with ``left_low``... ``right_high`` bands, ``change`` (their mean)
        with ``low``/``high``; ``"step"``: ``at`` (x where
        half the jump is done), ``change`` (the jump, signed), ``x_from``/``x_to`` (the
        span), ``low``/``high``; ``"wave"``: ``at_high``, ``at_low``, ``change`` (highest
        minus lowest), ``low``/``high``.  ``"rise"``/``"fall"``/``"flat"`` carry nothing
        more (the rise says it).
    """
    e0, e1 = float(ends[0]), float(ends[1])
    a, b = np.interp([e0, e1], grid, pd_values)
    change = b - a
    # A trial without a point near a place gives no size there (NaN), which the band skips.
    ok_trials = trials if trials is not None and trials.shape[0] >= 2 else None

    def at(x: float | np.ndarray) -> Any:
        return np.interp(x, grid, pd_values)

    def trial_at(x: float | np.ndarray) -> np.ndarray:
        assert ok_trials is not None
        return np.array([np.interp(x, grid, t) for t in ok_trials])

    def banded(centre: float, values: np.ndarray | None) -> tuple[float, float] | None:
        if values is None or band is None:
            return None
        low, high = band(values, centre)
        low, high = float(np.ravel(low)[0]), float(np.ravel(high)[0])
        return (low, high) if np.isfinite(low) and np.isfinite(high) else None

    def beyond(b_: tuple[float, float] | None, positive: bool = True) -> bool:
        """Whether a size's band excludes 0 (True without a band: the shares decide)."""
        if b_ is None:
            return True
        return b_[0] > 0 if positive else b_[1] < 0

    vx, vw, gid, gx = _groups(ux, ux_rows, e0, e1)
    out: dict[str, Any] = {"kind": "rise" if change >= 0 else "fall"}
    k = gx.size
    if k >= 3:
        g = _means(at(vx), vw, gid)
        gt = None if ok_trials is None else _means(trial_at(vx), vw, gid)
        ends_t = None if ok_trials is None else trial_at(np.array([e0, e1]))
        swing = max(a, b, g.max()) - min(a, b, g.min())
        found = {}
        for name, i, sign in (("u", int(np.argmin(g)), 1.0), ("hump", int(np.argmax(g)), -1.0)):
            if not 0 < i < k - 1 or swing <= 0:
                continue
            left, right = sign * (a - g[i]), sign * (b - g[i])
            if min(left, right) < SIDE_SHARE * swing:
                continue
            left_b = banded(left, None if gt is None else sign * (ends_t[:, 0] - gt[:, i]))
            right_b = banded(right, None if gt is None else sign * (ends_t[:, 1] - gt[:, i]))
            if beyond(left_b) and beyond(right_b):
                both = (left + right) / 2
                found[name] = {"kind": name, "at": float(gx[i]), "left": float(left),
                               "right": float(right), "change": float(both)}
                if left_b and right_b:
                    assert gt is not None and ends_t is not None
                    both_b = banded(both, sign * (ends_t.mean(axis=1) - gt[:, i]))
                    found[name].update(left_low=left_b[0], left_high=left_b[1],
                                       right_low=right_b[0], right_high=right_b[1])
                    if both_b:
                        found[name].update(low=both_b[0], high=both_b[1])
        if len(found) == 2:
            hi, lo = int(np.argmax(g)), int(np.argmin(g))
            wb = banded(g[hi] - g[lo], None if gt is None else gt[:, hi] - gt[:, lo])
            out = {"kind": "wave", "at_high": float(gx[hi]), "at_low": float(gx[lo]),
                   "change": float(g[hi] - g[lo])}
            if wb:
                out.update(low=wb[0], high=wb[1])
            return out
        if found:
            return next(iter(found.values()))
    if change == 0 or e1 <= e0:
        return {"kind": "flat"} if np.ptp(pd_values) == 0 else out
    change_b = banded(change, None if ok_trials is None
                      else trial_at(np.array([e1]))[:, 0] - trial_at(np.array([e0]))[:, 0])
    if change_b is not None and change_b[0] <= 0 <= change_b[1]:
        return {"kind": "flat"}
    # A step: the largest move in the curve's direction over any span STEP_WIDTH wide.
    width = STEP_WIDTH * (e1 - e0)
    starts = np.unique(np.r_[e0, grid[(grid > e0) & (grid < e1 - width)], e1 - width])
    jumps = np.sign(change) * (at(starts + width) - at(starts))
    j = int(np.argmax(jumps))
    x0, x1 = float(starts[j]), float(starts[j] + width)
    # A step has a level on both sides: a jump against an end is a rise that starts (or
    # ends) there, not a step (a logistic curve cut at its 90th percentile).
    room = min(x0 - e0, e1 - x1) >= width / 2
    if room and jumps[j] >= STEP_SHARE * abs(change):
        # The jump is the level after the span less the level before it (each the curve's
        # mean over a span as wide, within the ends): a step smeared over the span by the
        # strata is still its full height.
        before = np.linspace(max(e0, x0 - width), x0, 11)
        after = np.linspace(x1, min(e1, x1 + width), 11)
        size = float(at(after).mean() - at(before).mean())
        sb = banded(size, None if ok_trials is None
                    else trial_at(after).mean(axis=1) - trial_at(before).mean(axis=1))
        if size * change > 0 and beyond(sb, size > 0):
            # Where half the jump is done: the first curve point past half way.
            inside = grid[(grid >= x0) & (grid <= x1)]
            half = (at(after).mean() + at(before).mean()) / 2
            past = inside[np.sign(change) * (at(inside) - half) >= 0]
            where = float(past[0]) if past.size else (x0 + x1) / 2
            out = {"kind": "step", "at": where, "change": size, "x_from": x0, "x_to": x1}
            if sb:
                out.update(low=sb[0], high=sb[1])
    return out
