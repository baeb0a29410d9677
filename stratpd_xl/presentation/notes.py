"""An analysis's notes as one ranked list: each fact said once, the ones that matter first.

The engine says what it sees per feature ("Alley" is missing in 93 % of the rows and moves
with "Neighborhood"); on a wide table the same column's gaps then come back for every feature
they touch.  :func:`collect` merges notes about the same thing (a :class:`~stratpd_xl.schema.Note`'s
``kind`` and ``columns``) into one, worded here and naming every feature it touches, and ranks
them by :func:`rank_key` (the rule docs/method.md states under "Notes").  Front ends show the
first :data:`SHOWN` and say where the rest are (:func:`more_line`); the report's Notes sheet
lists every one (:func:`notes_table`).  No I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

from ..schema import EVIDENCE, UNSHOWN, Note, tie_of
from .evidence import tied
from .words import _ordinal, spoken

__all__ = ["SHOWN", "TOP", "collect", "model_left_out", "more_line", "notes_table", "rank_key",
           "shown"]

#: Notes a front end prints or puts on a summary; the rest are on the Notes sheet / in JSON.
SHOWN = 5
#: A note touching one of the ranking's first TOP features comes before the others.
TOP = 5
#: Notes below this ``moves`` do not count as changing a top feature's number.
MATTERS = 0.1
#: Kinds that change what every number means or which columns were analysed at all: first.
FIRST_KINDS = ("target", "leak", "identifier")
#: Kinds merged into one note per kind (the columns listed), not one per column.
BY_KIND = ("identifier", "few rows", "thin")
#: Features named in a merged note's sentence (all of them on the Notes sheet).
NAMED = 3


def _quoted(names: Sequence[str], limit: int = NAMED) -> str:
    shown = ", ".join(f'"{n}"' for n in names[:limit])
    return shown + (f" and {len(names) - limit:,} more" if len(names) > limit else "")


_SMALL_TABLE = re.compile(r'^with ([\d,]+) rows the change of ".*" from the (\d+)th to the '
                          r"(\d+)th percentile \(([^()]*)\) is uncertain: .* from (\S+) to "
                          r"(\S+); read it as that range, or add rows$", re.DOTALL)
_IDENTIFIER = re.compile(r'^left out "(.*)": it looks like an identifier \((.*)\); (.*)$',
                         re.DOTALL)


#: Features a merged note gives numbers for (the Notes sheet's features column has all).
LISTED = 6


def _signed(text: str) -> str:
    """A number of an engine note ("+1.34e+03") as a sentence says it ("+1,300")."""
    try:
        value = float(text)
    except ValueError:
        return text
    return ("+" if value > 0 else "") + spoken(value)


def _merge_gaps(group: list[Note], order: dict[str, int]) -> Note:
    column = group[0].columns[0]
    features = sorted({f for n in group for f in n.features}, key=lambda f: order.get(f, 1e9))
    share = max(float(n.facts.get("share", 0.0)) for n in group)
    example = group[0]
    # The exclude hint is the same for every member: keep the engine's words for it.
    hint = example[example.index("fill its gaps"):] if "fill its gaps" in example else ""
    text = (f'"{column}" is missing in {share:.0%} of the rows and moves with '
            f"{len(features):,} of the features ({_quoted(features)}): where it is missing "
            "its effect is not held fixed, which can tilt their results"
            + (f"; {hint}" if hint else ""))
    return Note(text, "gap", columns=[column], features=features,
                moves=max(n.moves for n in group), share=share)


def _merge_kind(group: list[Note], order: dict[str, int]) -> Note:
    kind = group[0].kind
    columns = list(dict.fromkeys(c for n in group for c in n.columns))
    features = sorted({f for n in group for f in n.features}, key=lambda f: order.get(f, 1e9))
    moves = max(n.moves for n in group)
    if kind == "identifier":
        found = [_IDENTIFIER.match(str(n)) for n in group]
        if all(found):
            listed = "; ".join(f'"{m.group(1)}" ({m.group(2)})' for m in found[:LISTED] if m)
            if len(found) > LISTED:  # the Notes sheet's columns name every one
                listed += (f"; and {len(found) - LISTED:,} more: "
                           f"{_quoted([m.group(1) for m in found[LISTED:] if m], NAMED)}")
            how = found[-1].group(3) if found[-1] else ""
            text = (f"left out {len(group):,} columns that look like identifiers: {listed}"
                    + (f"; {how}" if how else ""))
            return Note(text, kind, columns=columns, features=features, moves=moves)
    small = [_SMALL_TABLE.match(str(n)) for n in group]
    if kind == "thin" and all(small) and len({m.group(1) for m in small if m}) == 1:
        first = small[0]
        assert first is not None
        by_feature = {n.features[0]: m for n, m in zip(group, small, strict=True)
                      if m and n.features}
        ranked = sorted(by_feature.items(), key=lambda fm: order.get(fm[0], 1e9))
        # Numbers as the sentences say them ("+1,300 (+590 to +2,100)", not the engine's
        # "+1.34e+03"), the best-ranked features first; the Notes sheet lists every one.
        listed = ", ".join(f'"{f}" {_signed(m.group(4))} ({_signed(m.group(5))} to '
                           f"{_signed(m.group(6))})" for f, m in ranked[:LISTED])
        if len(ranked) > LISTED:
            listed += f" and {len(ranked) - LISTED:,} more"
        text = (f"with {first.group(1)} rows the changes of {len(group):,} features from the "
                f"{first.group(2)}th to the {first.group(3)}th percentile are uncertain, "
                f"their 95 % bands wider than a quarter of the change either way: {listed}; "
                "read them as those ranges, or add rows")
        return Note(text, kind, columns=columns, features=features, moves=moves)
    if kind == "thin" and all(n.facts.get("ranked") and "rows" in n.facts for n in group):
        backed = [n for n in group if n.columns]
        listed = ", ".join(f'"{n.columns[0]}" ({int(n.facts["rows"]):,} rows)'
                           for n in backed[:LISTED])
        if len(backed) > LISTED:
            listed += f" and {len(backed) - LISTED:,} more"
        text = (f"{len(group):,} features are ranked after those backed by more rows, their "
                f"curves resting on under 20 % of the rows (thin in the ranking): {listed}; "
                "their impacts are measured on far less evidence")
        return Note(text, kind, columns=columns, features=features, moves=moves)
    if kind == "few rows":
        text = (f"categories of {len(columns):,} features rest on fewer than 5 rows "
                f"({_quoted(columns, 8)}; few_rows in their tables): their effects are little "
                "more than those rows' noise; merge rare categories or add rows")
    else:  # identifiers, thinly backed features: their own sentences, joined
        text = "; ".join(group)
    return Note(text, kind, columns=columns, features=features, moves=moves)


def _tie_groups(notes: list[Note]) -> list[list[Note]]:
    """The near-duplicate notes whose data cannot show an effect, grouped by the columns
    they tie together (a note joins a group when its feature or a column it names is
    already in it: Ames' area = X1st.Flr.SF + X2nd.Flr.SF + Low.Qual.Fin.SF is one group of
    four notes, its basement areas another)."""
    parent: dict[str, str] = {}

    def root(c: str) -> str:
        while parent.setdefault(c, c) != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    for note in notes:
        members = [*note.features, *note.columns]
        for other in members[1:]:
            parent[root(other)] = root(members[0])
    groups: dict[str, list[Note]] = {}
    for note in notes:
        groups.setdefault(root([*note.features, *note.columns][0]), []).append(note)
    return list(groups.values())


def _merge_ties(group: list[Note], order: dict[str, int], ranking: pd.DataFrame | None
                ) -> Note:
    """One note for a group of tied columns: which of them the data cannot show, why
    (the share a linear fit explains, or how little they vary inside the strata), where the
    ranking puts them and what to do."""
    if len(group) == 1 and group[0].facts.get("group"):
        return group[0]  # merged already
    # Best-ranked first; else in the order found (a set's order changes from run to run).
    noted = sorted(dict.fromkeys(f for n in group for f in n.features),
                   key=lambda f: order.get(f, 1e9))
    members = noted + sorted((c for c in dict.fromkeys(c for n in group for c in n.columns)
                              if c not in noted), key=lambda c: order.get(c, 1e9))
    linear = [n for n in group if tie_of(n) == "linear"]
    barely = [n for n in group if tie_of(n) == "barely"]
    other = "other" if len(members) == 2 else "others"

    def who(ns: list[Note]) -> tuple[str, bool]:
        """The features of ``ns`` as a subject, and whether it is one feature."""
        names = [f for f in noted if any(f in n.features for n in ns)]
        if len(names) == len(members) > 1:
            return "each", True
        if len(names) > NAMED:  # the group's list above names them; the features column too
            return f"{len(names):,} of them", False
        return _and(names), len(names) == 1

    said = []
    if linear:
        subject, one = who(linear)
        r2 = min(float(n.facts.get("r2", n.moves)) for n in linear)
        said.append(f"{subject} {'is' if one else 'are'} almost exactly a linear function of "
                    f"the {other} (inside the strata a least-squares fit explains {r2:.1%} "
                    f"of {'it' if subject != 'each' and one else 'each'})")
    if barely:
        subject, one = who(barely)
        within = max(float(n.facts.get("within", 1 - n.moves)) for n in barely)
        said.append(f"{subject} barely {'varies' if one else 'vary'} inside the strata "
                    f"({within:.1%} of {'its' if one else 'their'} variation or less)")
    one = len(noted) == 1
    text = (f"{_and(members)} are tied: {'; '.join(said)}, so no data show "
            f"{'its' if one else 'their'} effect{'' if one else 's'} with the {other} held "
            "fixed")
    where, head = _set_apart(noted, ranking)
    if len(group) == 1 and not where:
        return group[0]  # one feature's note, nothing set apart: the engine's own words
    if where:
        text += f"; {where}"
    text += f"; keep one and leave out the {other} (exclude), or analyse them together"
    group_of = {f: tuple(c for c in members if c != f) for f in noted}
    return Note(text, "duplicate", columns=members, features=noted,
                moves=max(n.moves for n in group), group=group_of, head=head)


def _merge_alone(group: list[Note], order: dict[str, int]) -> Note:
    """One note for the features whose categories sit alone in most of their strata (the
    engine's "one category" near-duplicate notes: Ames had 15, one per feature), naming
    them best-ranked first with the share of rows that sit alone; the columns that
    duplicate each are in the note's ``columns`` (the Notes sheet) and its ``twins`` fact."""
    alone: dict[str, float] = {}
    twins: dict[str, tuple[str, ...]] = {}
    for note in group:
        if note.facts.get("alone_group"):  # merged already: its parts
            alone.update(note.facts["alone_group"])
            twins.update(note.facts.get("twins") or {})
            continue
        for f in note.features:
            alone[f] = max(alone.get(f, 0.0), float(note.facts.get("alone", note.moves)))
            twins[f] = tuple(c for c in note.columns if c != f)
    features = sorted(alone, key=lambda f: order.get(f, 1e9))
    listed = ", ".join(f'"{f}" {alone[f]:.0%}' for f in features[:LISTED])
    if len(features) > LISTED:
        listed += f" and {len(features) - LISTED:,} more"
    text = (f"the categories of {len(features):,} features sit alone in most of their strata "
            f"(the share of rows in strata holding one of their categories only: {listed}): "
            "the other columns nearly determine them, so their effects rest on the few rows "
            "of the other strata; leave out the columns that duplicate them (exclude), which "
            "a report names on each feature's sheet")
    columns = list(dict.fromkeys([*features, *(c for f in features for c in twins[f])]))
    return Note(text, "duplicate", columns=columns, features=features,
                moves=max(alone.values()), tie="one category", alone=max(alone.values()),
                alone_group={f: alone[f] for f in features},
                twins={f: twins[f] for f in features})


def _and(names: Sequence[str], limit: int = 8) -> str:
    """'"a", "b" and "c"' ("and N more" past ``limit``)."""
    quoted = [f'"{n}"' for n in names[:limit]]
    if len(names) > limit:
        return ", ".join(quoted) + f" and {len(names) - limit:,} more"
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _set_apart(noted: list[str], ranking: pd.DataFrame | None) -> tuple[str, bool]:
    """Where the ranking puts tied features (after the others, and the place the first
    would have had on impact alone), and whether that place was the ranking's head."""
    if ranking is None or "impact" not in ranking:
        return "", False
    features = ranking["feature"].astype(str)
    set_apart = tied(ranking)
    apart = [f for f in noted if f in set_apart]
    if not apart:
        return "", False
    impact = pd.to_numeric(ranking["impact"], errors="coerce").fillna(-1.0)
    by_impact = list(features.iloc[(-impact).to_numpy().argsort(kind="stable")])
    first = min(apart, key=by_impact.index)
    place = by_impact.index(first) + 1
    value = float(impact[features == first].iloc[0])
    return (f"ranked after the features whose effects the data show (\"{first}\" would rank "
            f"{_ordinal(place)} on its impact alone, {spoken(value)})", place == 1)


def collect(notes: Iterable[str], ranking: pd.DataFrame | None = None) -> list[Note]:
    """Every note once, merged by what it is about, ranked (most important first).

    Parameters
    ----------
    notes : iterable of str
        The notes in the order they were found: :class:`~stratpd_xl.schema.Note` objects
        (kind, columns, features, moves) or plain sentences (``kind="other"``).
    ranking : DataFrame, optional
        The impact ranking (``feature``, largest first): a note touching one of its first
        :data:`TOP` features comes before the others.

    Returns
    -------
    list of Note
        Repeated sentences once; a gap column's notes as one note naming every feature it
        touches; rare categories and identifiers one note per kind; ranked by
        :func:`rank_key`.
    """
    order: dict[str, int] = {}
    if ranking is not None and "feature" in ranking.columns:
        order = {str(f): i for i, f in enumerate(ranking["feature"])}
        if EVIDENCE in ranking.columns and "impact" in ranking.columns:
            # A feature set apart as tied counts at its place on impact: the note saying
            # why "area" is not first matters as much as a note on the first feature.
            set_apart = tied(ranking)
            by_impact = ranking.sort_values("impact", ascending=False, kind="stable")
            for i, f in enumerate(by_impact["feature"].astype(str)):
                if f in set_apart:
                    order[f] = i
    groups: dict[tuple, list[Note]] = {}
    for text in dict.fromkeys(notes):  # the same sentence twice is one note
        note = Note.of(text)
        if note.kind == "gap" and note.columns:
            key: tuple = ("gap", note.columns[0])
        elif note.kind == "thin":
            # The ranking's thin features, a small table's uncertain changes and each rare
            # yes/no outcome are different facts: merged only with their own kind.  A small
            # table's changes merge by their rows and percentiles, which the merged sentence
            # says once (a feature with gaps has fewer rows: voucher's mnce90, 328 of 990).
            small = _SMALL_TABLE.match(str(note))
            key = (("thin", "ranked") if note.facts.get("ranked") else
                   ("thin", "small", *small.group(1, 2, 3)) if small else ("one", len(groups)))
        elif note.kind == "duplicate" and (tie_of(note) in UNSHOWN or note.facts.get("group")):
            key = ("tie",)  # split into groups of tied columns below
        elif note.kind == "duplicate" and tie_of(note) == "one category":
            key = ("one category",)
        elif note.kind in BY_KIND:
            key = (note.kind,)
        else:
            key = ("one", len(groups))
        groups.setdefault(key, []).append(note)
    merged = []
    for key, group in groups.items():
        if key[0] == "tie":
            merged += [_merge_ties(g, order, ranking) for g in _tie_groups(group)]
        elif len(group) == 1:
            merged.append(group[0])
        elif key[0] == "gap":
            merged.append(_merge_gaps(group, order))
        elif key[0] == "one category":
            merged.append(_merge_alone(group, order))
        else:
            merged.append(_merge_kind(group, order))
    places = {id(n): i for i, n in enumerate(merged)}
    return sorted(merged, key=lambda n: rank_key(n, order, places[id(n)]))


def rank_key(note: Note, order: dict[str, int], place: int = 0) -> tuple:
    """Where ``note`` stands among an analysis's notes (smaller first).

    1. notes that change what every number means or what was analysed (a yes/no target's
       units, columns restating the target, columns left out as identifiers);
    2. notes that can move the number of a top-:data:`TOP` feature of the ranking by a
       visible amount (``moves`` at least :data:`MATTERS`);
    3. the rest.
    Within each: larger ``moves`` first, then the best-ranked feature touched, then the
    order found.
    """
    best = min((order.get(f, len(order) + 1) for f in note.features), default=len(order) + 1)
    if note.kind in FIRST_KINDS:
        tier = 0
    elif best < TOP and note.moves >= MATTERS:
        tier = 1
    else:
        tier = 2
    return (tier, -round(note.moves, 2), best, place)


def model_left_out(left_out: Mapping[str, str]) -> list[Note]:
    """The columns a fitted model left out (column -> why), as one note (none when none):
    its curves are drawn without them, StratPD's are not."""
    if not left_out:
        return []
    items = [(str(c), str(why)) for c, why in left_out.items()]
    if len(items) == 1:
        text = f'the model leaves out "{items[0][0]}": {items[0][1]}'
    else:
        text = (f"the model leaves out {len(items):,} columns: "
                + "; ".join(f'"{c}" ({why})' for c, why in items))
    return [Note(text, "left out", columns=[c for c, _ in items])]


def more_line(n_more: int, where: str) -> str | None:
    """'12 more notes: <where>' or None when every note was shown."""
    if n_more <= 0:
        return None
    return f"{n_more:,} more note{'s' if n_more != 1 else ''}: {where}"


def shown(notes: Sequence[str], where: str) -> list[str]:
    """What a summary shows of ranked ``notes``: the first :data:`SHOWN`, then one line
    saying how many more there are and ``where`` (:func:`more_line`)."""
    more = more_line(len(notes) - SHOWN, where)
    return list(notes[:SHOWN]) + ([more] if more else [])


def notes_table(notes: Sequence[str]) -> pd.DataFrame:
    """The Notes sheet: one row per note, in rank order.

    Columns: ``rank`` (1 = matters most), ``kind`` (:data:`stratpd_xl.schema.NOTE_KINDS`),
    ``columns`` (the columns it names), ``features`` (the features whose numbers it
    touches), ``moves`` (how much it can move a number, 0 to 1) and ``note`` (the sentence).
    """
    rows = []
    for i, text in enumerate(notes, start=1):
        note = Note.of(text)
        rows.append({"rank": i, "kind": note.kind, "columns": ", ".join(note.columns),
                     "features": ", ".join(note.features), "moves": round(note.moves, 2),
                     "note": str(note)})
    return pd.DataFrame(rows, columns=["rank", "kind", "columns", "features", "moves", "note"])
