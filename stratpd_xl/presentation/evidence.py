"""The ranking's evidence: which features it sets apart, and why, in one column.

A feature's impact is a number the data back only when its curve rests on enough rows and
the data can show its effect with the other columns held fixed.  Two kinds of feature fail
that, and the ranking puts them after every feature that passes (among themselves by
impact), with the reason in its ``evidence`` column:

- **thin** (the engine's ``thin`` mark): its curve rests on under 20 % of the rows with a
  target value (Ames' ``Alley``);
- **tied**: its own note says other columns nearly determine it (almost exactly a linear
  function of them, or barely varying inside the strata:
  :data:`~stratpd_xl.presentation.notes.UNSHOWN`), so no data show its effect with them
  held fixed and its impact measures whatever moves with it (Ames' ``area`` =
  ``X1st.Flr.SF`` + ``X2nd.Flr.SF`` + ``Low.Qual.Fin.SF``, whose impact led the ranking).

The conclusion's sentences follow the ranking and never lead with a tied feature
(:func:`stratpd_xl.workflow.findings`); the note on each group of tied columns says where
the first of them would rank on impact alone.  No I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from .notes import tied_features

__all__ = ["EVIDENCE", "TIED", "ranked_by_evidence", "tied"]

#: The ranking's column saying why a feature is set apart ("" when nothing does).
EVIDENCE = "evidence"
#: How the evidence column starts for a tied feature.
TIED = "tied"
#: Columns named in a tied feature's evidence cell (its note names every one).
NAMED = 3


def _tied_text(others: tuple[str, ...]) -> str:
    if not others:
        return f"{TIED}: other columns determine it"
    listed = ", ".join(others[:NAMED])
    more = f" and {len(others) - NAMED:,} more" if len(others) > NAMED else ""
    return f"{TIED} to {listed}{more}"


def ranked_by_evidence(ranking: pd.DataFrame, notes: Iterable[str]) -> pd.DataFrame:
    """``ranking`` with an ``evidence`` column, its set-apart features after the others.

    Parameters
    ----------
    ranking : DataFrame
        An impact ranking (``feature``, ``impact``, and the engine's ``thin`` when it has
        one), largest first among the well-backed features.
    notes : iterable of str
        The analysis's notes (the engine's or :func:`~stratpd_xl.presentation.notes.collect`'s):
        a feature's near-duplicate note makes it tied.

    Returns
    -------
    DataFrame
        The same rows and ``attrs`` plus ``evidence``: ``""`` for a feature whose effect
        the data show on enough rows, ``"tied to a, b"`` for one the others determine,
        ``"thin: under 20 % of the rows"`` for a thin one (a tied feature says tied); the
        features with evidence first by impact, then the others by impact.
    """
    if ranking.empty or "feature" not in ranking.columns:
        out = ranking.copy()
        out[EVIDENCE] = pd.Series(dtype=object)
        return out
    ties = tied_features(notes)
    features = ranking["feature"].astype(str)
    thin = (ranking["thin"].astype(bool).to_numpy() if "thin" in ranking.columns
            else [False] * len(ranking))
    evidence = [_tied_text(ties[f]) if f in ties else
                "thin: under 20 % of the rows" if t else ""
                for f, t in zip(features, thin, strict=True)]
    out = ranking.copy()
    out[EVIDENCE] = evidence
    apart = out[EVIDENCE] != ""
    impact = pd.to_numeric(out["impact"], errors="coerce").fillna(0.0)
    order = pd.DataFrame({"apart": apart, "impact": -impact}).sort_values(
        ["apart", "impact"], kind="stable").index
    out = out.loc[order].reset_index(drop=True)
    out.attrs = dict(ranking.attrs)
    return out


def tied(ranking: pd.DataFrame) -> set[str]:
    """The features a ranking sets apart as tied (its ``evidence`` column)."""
    if EVIDENCE not in ranking.columns:
        return set()
    marked = ranking[EVIDENCE].astype(str).str.startswith(TIED)
    return set(ranking.loc[marked, "feature"].astype(str))
