"""The ranking's evidence, as the engine's ranking carries it in its ``evidence`` column.

The engine sets apart the features whose impact the data do not back (thin: under 20 % of
the rows; tied: their own note says other columns nearly determine them) and says why in
``evidence`` (:func:`stratpd_xl.engine._finish.by_evidence`, the one place that rule lives).
The conclusion's sentences follow the ranking and never lead with a tied feature
(:func:`stratpd_xl.workflow.findings`); the note on each group of tied columns says where
the first of them would rank on impact alone.  No I/O.
"""

from __future__ import annotations

import pandas as pd

from ..schema import EVIDENCE, TIED

__all__ = ["EVIDENCE", "TIED", "tied"]


def tied(ranking: pd.DataFrame) -> set[str]:
    """The features a ranking sets apart as tied (its ``evidence`` column)."""
    if EVIDENCE not in ranking.columns:
        return set()
    marked = ranking[EVIDENCE].astype(str).str.startswith(TIED)
    return set(ranking.loc[marked, "feature"].astype(str))
