"""Notes that a curve's size is uncertain: a yes/no target with few rows of its rarer value,
and a small table whose curve's change the strata cannot pin down.

The slopes of a yes/no target count each stratum by its rows (``_numeric.slope_field``), which
removed the bias of rare outcomes (2 % positives beside a covariate correlated 0.55 with x:
10th-90th percentile rise 1.9 times the truth before, 0.98-1.08 after).  What is left is
noise: each stratum's changes rest on its few positive rows, so with a few hundred of them a
rise is off by 15-30 % from one sample to the next (docs/method.md, "Yes/no targets").  The
band shows it; without one, or when it is wide, the curve says so.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..schema import Note

#: Below this many rows of the rarer value a curve's size gets a note (unless its band is
#: narrow).  Measured at 2 % positives: the rise's spread over samples was 0.27 of the truth
#: with 200 positive rows and 0.16 with 400.
RARE_ROWS = 300
#: A band whose half-width is at most this share of the change says the size well enough.
NARROW_BAND = 0.5


def rare_outcome_note(yes_no: dict[str, Any], target: str, feature: str,
                      y: np.ndarray | tuple[int, int], rise: dict[str, Any]) -> Note | None:
    """The note for ``feature``'s curve of a yes/no target ``y`` (positive where > 0; or
    the counts of positive rows and of all rows), or None when the rarer value has enough
    rows or the rise's band is narrow.

    ``rise``: the curve's ``attrs["rise"]`` in percentage points (``low``/``high`` with a band).
    """
    positives, n = ((int(np.count_nonzero(y > 0)), y.size) if isinstance(y, np.ndarray)
                    else y)
    if not yes_no or n == 0:
        return None
    rarer = min(positives, n - positives)
    if rarer >= RARE_ROWS:
        return None
    value = yes_no["positive"]
    which = f'"{value}"' if positives <= n - positives else f'other than "{value}"'
    head = (f'only {rarer:,} of the {n:,} rows are {which} ({rarer / n:.1%}): '
            f'the size of the curve of "{feature}" rests on them')
    change = float(rise["change"])
    if "low" in rise:
        half = (float(rise["high"]) - float(rise["low"])) / 2
        if half <= NARROW_BAND * abs(change):
            return None
        text = (f"{head}, and the 95 % band of its change from the "
                f"{rise['percentiles'][0]}th to the {rise['percentiles'][1]}th percentile runs "
                f"from {rise['low']:+.2g} to {rise['high']:+.2g} points: read that range, not "
                "one number, or add rows")
        moves = min(1.0, half / abs(change)) if change else 1.0
    else:
        text = (f"{head} and can be off by a third or more; draw its band (n_trials=10 in "
                "Python, --trials 10 on the command line, the trials argument in a "
                "spreadsheet) to see how far, or add rows")
        moves = 0.5
    return Note(text, "thin", columns=[target], features=[feature], moves=moves,
                rows=rarer, share=rarer / n)


#: Tables with fewer rows than this get a note when their curve's change is uncertain.
SMALL_ROWS = 1000
#: ... when its band's half-width exceeds this share of the change: the 0.8-1.25 of the
#: truth that an estimate must keep to be read as a size.
SMALL_TABLE_BAND = 0.25


def small_table_note(feature: str, n_rows: int, rise: dict[str, Any], se: float
                     ) -> Note | None:
    """The note for a curve of a table of under :data:`SMALL_ROWS` rows whose 95 % band of
    the 10th-90th percentile change (``rise``'s trials' band, else +- 1.96 ``se`` from the
    strata, see ``_numeric.rise_se``) is wider than a quarter of the change either way, or
    None.

    On a 534-row wage table with a known truth the experience rise came out 0.57-1.45 of it
    over six samples (docs/method.md, "Small tables"): one such curve is a guess at its size.
    """
    if n_rows >= SMALL_ROWS:
        return None
    change = float(rise["change"])
    if "low" in rise:
        low, high = float(rise["low"]), float(rise["high"])
    elif np.isfinite(se) and se > 0:
        low, high = change - 1.96 * se, change + 1.96 * se
    else:
        return None
    half = (high - low) / 2
    if half <= SMALL_TABLE_BAND * abs(change):
        return None
    how = ("its 95 % band runs" if "low" in rise else
           "from the spread of its groups of similar rows, its 95 % band runs about")
    return Note(
        f'with {n_rows:,} rows the change of "{feature}" from the {rise["percentiles"][0]}th to '
        f'the {rise["percentiles"][1]}th percentile ({change:+.3g}) is uncertain: {how} from '
        f"{low:+.2g} to {high:+.2g}; read it as that range, or add rows",
        "thin", columns=[feature], features=[feature],
        moves=min(1.0, half / abs(change)) if change else 1.0, rows=n_rows,
    )
