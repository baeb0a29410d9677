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
    ``curve_low``, ``curve_high``   a simultaneous 95 % band (``n_trials`` > 1): the
                  whole true curve lies inside it in about 95 % of datasets (sup-t: the
                  same standard deviations times one critical value for all points)
    ``pd_low``, ``pd_high``   a 95 % band per point: pd -/+ t quantile x the standard
                  deviation of the trials on random halves of the rows (``n_trials`` > 1)
    ``missing``   only when the feature is blank in at least 5 rows that have a target
                  (and meet rows with a value in the strata): True on one more row, last,
                  for those rows ("(missing)" in workbooks and charts): ``x`` missing
                  (NaN, NaT for dates; a whole-number feature's ``x`` becomes float),
                  ``pd`` how far they sit from the curve's typical level (its 0), all
                  else equal, compared inside the strata; its bands (when the curve has
                  them) are its own normal 95 % range, ``slope`` NaN, ``n_slopes`` the
                  strata it was compared in.  False on the curve's points, which a line is
                  drawn through: ``result[~result["missing"]]``, or :func:`curve_points`.
                  Blank rows never enter the slopes.

Categorical effects (``catstratpd``), one row per category
    ``category``  the category
    ``pd``        effect relative to the first row's category (0 there)
    ``count``     rows that informed the effect
    ``few_rows``  True when fewer than 5 rows informed it (named in ``attrs["warnings"]``)
    ``missing``   only when the feature is blank in some rows that have a target: True on
                  its last category, "(missing)", the blank rows compared with the others
                  inside the strata like any category
    ``pd_low``, ``pd_high``, ``curve_low``, ``curve_high``   as above (the simultaneous
                  band holds every category's effect at once)

Impact ranking (``impact``), largest first among the features whose effect the data show
on enough rows, then the set-apart ones (thin or tied), largest first among them
    ``feature``, ``kind`` (``"numeric"`` / ``"categorical"``), ``impact`` (target units),
    ``share`` (impact / sum of impacts), ``rows`` (rows that informed its curve, its
    ``n_used``), ``thin`` (True when ``rows`` is under 20 % of the rows with a target
    value: ranked after the others, whatever its impact), ``evidence`` (why a feature is
    set apart, "" when nothing does: ``"tied to a, b"`` when its own near-duplicate note
    says other columns determine it, :func:`tied_features`; ``"thin: under 20 % of the
    rows"``)

Curves by group (``stratpd(..., by=column)``), the groups' curves one under the other
    ``group``     the group: a level of the ``by`` column, or a band of its values ("2.5 to
                  7.1"), as an ordered category; then the curve's own columns
    ``attrs`` add ``by``, ``groups``, ``group_rows``, ``group_slopes``, ``skipped_groups``
    and ``findings`` (sentences when the groups' curves differ beyond their bands)

Interaction ranking (``interactions``), strongest first
    ``feature_1``, ``feature_2``, ``strength`` (0 = the effects add up; scaled like
    Friedman's H^2), ``size`` (root mean square of the interaction part, target units)

Two-way surface (``stratpd2``, experimental), one row per cell
    ``x1``, ``x2`` (the features' values at the cell; ``x2`` a band's median or a category),
    ``band`` (the second feature's band or category as text), ``pd`` (averaging 0 over the
    rows), ``interaction`` (its interaction part), ``n_rows`` (rows nearest the cell),
    ``thin`` (fewer than min_samples_leaf rows, or no estimate)

``attrs`` of a curve: ``kind``, ``method``, ``target``, ``feature``, ``n_rows``, ``n_used``,
``n_dropped_missing``, ``n_ignored``, ``n_leaves``, ``params``, ``warnings``; numeric curves add
``n_unique_x``, ``n_points_full`` (points at full resolution), ``within_strata_share``,
``adjusted`` (whether the adjustment for the other columns was applied), ``adjust_gain``
(share of the out-of-fold error inside the strata it removes), ``adjust_note`` (why it was
not applied, "" when it was) and ``others_r2`` (share of the feature's variance inside the
strata that the other columns explain linearly, out of fold; NaN when not computed; the
same four for categorical effects);
``rise`` (a dict: ``percentiles`` (10, 90), ``x_from``/``x_to`` the feature's values there,
``change`` the curve's rise between them, ``swing`` its largest minus smallest value between
them, and with trials ``low``/``high``, the 95 % band of the rise); ``shape`` (a dict: ``kind``
``"rise"``, ``"fall"``, ``"u"``, ``"hump"``, ``"step"``, ``"wave"`` or ``"flat"`` by the rule of
``engine/_shape.py`` and docs/method.md, and the places and sizes it is told with, each size
with its 95 % band ``low``/``high`` when there are trials);
a yes/no target adds ``positive``, ``target_label`` and ``units``;
categorical ones ``baseline``, ``categories_without_estimate`` and ``contrast`` (a dict:
``category`` and ``versus`` the highest and lowest of the named categories informed by at
least 20 rows (of the two with the most rows when fewer have 20), ``change`` the first's
effect less the second's, ``rows``/``versus_rows`` their rows, ``well_backed`` whether both
have 20, ``baseline``, with trials ``low``/``high``; the feature's blanks are no named
category: ``blank`` (``pd``, ``low``, ``high``, ``rows``, ``versus``, ``versus_rows``) their
effect against the best-backed named category when 20 rows inform them, or, when only one
named category has 20 rows, ``blank_end`` True and the blanks as ``category``);
a numeric curve whose feature is blank in some rows with a target adds ``missing`` (a dict:
``pd``, ``low``, ``high`` the blank rows' offset and its 95 % band, always, whatever
``n_trials``; ``rows`` the blank rows, ``compared`` those placed in a stratum with rows
having a value, ``strata`` the strata they met in; see ``engine/_missing.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CATEGORICAL",
    "EVIDENCE",
    "Finding",
    "FEW_ROWS",
    "MISSING",
    "MISSING_LABEL",
    "NOTE_KINDS",
    "NUMERIC",
    "Note",
    "TIED",
    "UNSHOWN",
    "counted",
    "curve_points",
    "missing_row",
    "result_kind",
    "tie_of",
    "tied_features",
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
CURVE_LOW = "curve_low"
CURVE_HIGH = "curve_high"
# Categorical columns
CATEGORY = "category"
COUNT = "count"
FEW_ROWS = "few_rows"
# The row of a feature's blanks (a numeric curve's last row, a categorical "(missing)")
MISSING = "missing"
#: How a blank is shown: the category of a categorical feature's blanks, and the x of a
#: numeric curve's blank row in workbooks, printed tables and charts.
MISSING_LABEL = "(missing)"
# Ranking columns
FEATURE = "feature"
KIND = "kind"
IMPACT = "impact"
SHARE = "share"
ROWS = "rows"
THIN = "thin"
#: Why the ranking sets a feature apart ("" when nothing does).
EVIDENCE = "evidence"
#: How the ``evidence`` cell of a tied feature starts.
TIED = "tied"

NUMERIC_COLUMNS = (X, PD, SLOPE, N_SLOPES, N_X, PD_LOW, PD_HIGH, CURVE_LOW, CURVE_HIGH,
                   MISSING)
CATEGORICAL_COLUMNS = (CATEGORY, PD, COUNT, PD_LOW, PD_HIGH, CURVE_LOW, CURVE_HIGH, FEW_ROWS,
                       MISSING)
RANKING_COLUMNS = (FEATURE, KIND, IMPACT, SHARE, ROWS, THIN, EVIDENCE)


def counted(n: int, noun: str = "row") -> str:
    """``n`` with its noun, singular for one: "1 row", "2,930 rows"."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def curve_points(result: Any) -> Any:
    """A numeric curve without its blanks' row (the points a line is drawn through), with
    the same ``attrs``; the result itself when it has no such row."""
    if MISSING not in getattr(result, "columns", ()) or not result[MISSING].any():
        return result
    out = result.loc[~result[MISSING].to_numpy(dtype=bool)]
    out.attrs = result.attrs
    return out


def missing_row(result: Any) -> Any:
    """The blanks' row of a numeric curve (a one-row frame), or None when it has none."""
    if MISSING not in getattr(result, "columns", ()) or not result[MISSING].any():
        return None
    return result.loc[result[MISSING].to_numpy(dtype=bool)]


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


@dataclass(frozen=True)
class Finding:
    """The numbers behind one sentence of the conclusion ("price rises most with area...").

    Attributes
    ----------
    feature, kind : str
        The feature and ``"numeric"`` or ``"categorical"``.
    change : float
        Numeric: the curve's rise from ``start`` to ``end`` (the feature's 10th and 90th
        percentiles over the rows used).  Categorical: the effect of category ``end``
        relative to category ``start`` (the baseline), ``end`` being the category farthest
        from it.  In target units (percentage points for a yes/no target).
    low, high : float or None
        The 95 % band of ``change`` (None without trials).
    start, end : Any
        Feature values (numeric) or categories (categorical), as the data have them.
    percentiles : tuple of int
        The percentiles ``start`` and ``end`` are (numeric), else ``()``.
    swing : float or None
        Numeric: the curve's largest minus smallest value between ``start`` and ``end``;
        well above ``|change|`` for a curve that rises and falls back.
    share : float or None
        The feature's share of the total impact, when ranked.
    rank : int
        1 for the feature that moves the target most; 0 for a curve asked for alone.
    notes : list of str
        The warnings about this feature's curve, to be read with the sentence.
    target_label : str or None
        ``"P(default = Yes)"`` for a yes/no target (then ``change`` is in points).
    shape : dict or None
        Numeric: the curve's shape (the engine's ``attrs["shape"]``: ``kind`` ``"rise"``,
        ``"fall"``, ``"u"``, ``"hump"``, ``"step"``, ``"wave"`` or ``"flat"``, and the sizes
        and places that kind is told with).
    rows : tuple of int or None
        Categorical: the rows informing ``start`` and ``end``.
    well_backed : bool
        False when ``start`` or ``end`` rests on fewer rows than a headline needs (there
        were not two categories with enough rows).
    blank : dict or None
        The feature's blank rows, said after the curve or the contrast.  Numeric: against
        the curve's typical level (the engine's ``attrs["missing"]``: ``pd``, ``low``,
        ``high``, ``rows``).  Categorical, when at least 20 rows inform them and the
        contrast is between named categories: against the best-backed category
        (``contrast["blank"]``: ``pd``, ``low``, ``high``, ``rows``, ``versus``,
        ``versus_rows``).
    blank_end : bool
        Categorical: ``end`` is the feature's blanks (the one named category well backed
        is ``start``), said as the rows where the feature is blank, never as a category.
    lead_group : dict or None
        On the conclusion's first finding, when the feature of the largest impact of all is
        set apart as tied: ``features`` (it and the columns tied to it, itself first),
        ``first`` and ``impact`` (its impact, target units).  The sentence then says first
        that the tied group together would lead, with no number per column.
    target_class : Any or None
        For a target read as classes (``classes=``): the class whose chance this finding
        states (``target_label`` is then ``"P(species = virginica)"``, ``change`` in
        points); for a feature's finding, the class it moves most.
    """

    feature: str
    kind: str
    change: float
    low: float | None
    high: float | None
    start: Any
    end: Any
    percentiles: tuple[int, ...] = ()
    swing: float | None = None
    share: float | None = None
    rank: int = 0
    notes: list[str] = field(default_factory=list)
    target_label: str | None = None
    shape: dict[str, Any] | None = None
    rows: tuple[int, int] | None = None
    well_backed: bool = True
    blank: dict[str, Any] | None = None
    target_class: Any = None
    blank_end: bool = False
    lead_group: dict[str, Any] | None = None

    @classmethod
    def from_result(cls, result: Any, *, rank: int = 0, share: float | None = None
                    ) -> Finding | None:
        """The finding the engine recorded in a curve's ``attrs`` (``rise`` for a numeric
        curve, ``contrast`` for categories), or None when it recorded none.  A result with
        a curve per class gives the finding of the class the feature moves most (its
        largest ``class_impact``, the class the ranking names; :meth:`per_class` gives
        every class's)."""
        attrs: Mapping[str, Any] = getattr(result, "attrs", {}) or {}
        if isinstance(attrs.get("class_findings"), Mapping):
            said = cls.per_class(result, rank=rank, share=share)
            impact = attrs.get("class_impact") or {}
            if not said:
                return None
            return max(said, key=lambda f: float(impact.get(f.target_class, 0.0)))
        return cls._of(attrs, result_kind(result), rank=rank, share=share)

    @classmethod
    def per_class(cls, result: Any, *, rank: int = 0, share: float | None = None
                  ) -> list[Finding]:
        """One finding per class shown of a result with a curve per class
        (``attrs["class_findings"]``), in the classes' order; ``[]`` for any other result."""
        attrs: Mapping[str, Any] = getattr(result, "attrs", {}) or {}
        by_class = attrs.get("class_findings")
        if not isinstance(by_class, Mapping):
            return []
        target = attrs.get("target", "target")
        out = []
        for name, facts in by_class.items():
            one = {**{k: v for k, v in attrs.items() if k != "class_findings"}, **facts,
                   "target_label": f"P({target} = {name})"}
            found = cls._of(one, result_kind(result), rank=rank, share=share)
            if found is not None:
                out.append(dataclasses.replace(found, target_class=name))
        return out

    @classmethod
    def _of(cls, attrs: Mapping[str, Any], kind: str, *, rank: int, share: float | None
            ) -> Finding | None:
        common = {"feature": str(attrs.get("feature", "")), "rank": rank, "share": share,
                  # Notes stay notes (sentences that carry their facts).
                  "notes": [w if isinstance(w, str) else str(w)
                            for w in attrs.get("warnings") or []],
                  "target_label": attrs.get("target_label")}
        if kind == CATEGORICAL:
            c = attrs.get("contrast")
            if not isinstance(c, Mapping):
                return None
            rows = ((int(c["versus_rows"]), int(c["rows"]))
                    if "rows" in c and "versus_rows" in c else None)
            return cls(kind=CATEGORICAL, change=float(c["change"]), low=_finite(c.get("low")),
                       high=_finite(c.get("high")), start=c["versus"], end=c["category"],
                       rows=rows, well_backed=bool(c.get("well_backed", True)),
                       blank=_blank(c.get("blank")), blank_end=bool(c.get("blank_end")),
                       **common)
        rise = attrs.get("rise")
        if not isinstance(rise, Mapping):
            return None
        low_high = {"low": _finite(rise.get("low")), "high": _finite(rise.get("high"))}
        return cls(kind=NUMERIC, change=float(rise["change"]), start=rise["x_from"],
                   end=rise["x_to"], percentiles=tuple(rise.get("percentiles", ())),
                   swing=rise.get("swing"), shape=_shape(attrs.get("shape")), **low_high,
                   blank=_blank(attrs.get("missing")), **common)


def _blank(value: Any) -> dict[str, Any] | None:
    return (dict(value) if isinstance(value, Mapping) and _finite(value.get("pd")) is not None
            else None)


def _shape(value: Any) -> dict[str, Any] | None:
    return dict(value) if isinstance(value, Mapping) and "kind" in value else None


def _finite(value: Any) -> float | None:
    """A band end, or None when there is none (no trials, or too few to spread)."""
    if value is None:
        return None
    value = float(value)
    return value if value == value and abs(value) != float("inf") else None


#: What a note is about (:class:`Note`'s ``kind``), one word each.
NOTE_KINDS = {
    "target": "how the target's numbers read (a yes/no target in percentage points)",
    "identifier": "a column left out as a row number or an id",
    "excluded": "columns left out as asked",
    "left out": "a column left out for having no values, one value, or no use",
    "leak": "other columns restate the target, so effects come out near 0",
    "duplicate": "other columns (nearly) determine the feature, so its effect rests on "
                 "small differences",
    "gap": "another column missing in many rows and moving with the feature",
    "reversal": "the adjustment for the other columns disagreed with the plain comparison",
    "size": "the adjustment for the other columns moved a curve's size (or the differences "
            "between categories) by no more than its own noise, so the plain comparison is "
            "shown",
    "code": "whole numbers that may be codes better read as categories",
    "few rows": "categories resting on a handful of rows",
    "thin": "a feature backed by few rows",
    "limits": "a chance curve cut at 0 % or 100 %",
    "skipped": "a feature that gave no curve",
    "reading": "how the table was read",
    "other": "anything else",
}


class Note(str):
    """A sentence for the analyst that also carries what it is about: notes are data.

    A ``str`` (the sentence as worded where it was found), so every front end can print,
    compare and serialise it unchanged; :mod:`stratpd_xl.presentation.notes` merges the
    notes of an analysis by ``kind`` and ``columns`` (one note per column, not one per
    feature it touches), words the merged ones and ranks them.

    Attributes
    ----------
    kind : str
        One of :data:`NOTE_KINDS`.
    columns : tuple of str
        The columns the note is about (the column with gaps, the columns that duplicate a
        feature, the feature with rare categories).
    features : tuple of str
        The analysed features whose numbers it touches.
    moves : float
        How much it can move a number, 0 (nothing shown changes) to 1 (an effect can be
        wholly wrong): the rule of each kind is in docs/method.md, "Notes".
    facts : dict
        Numbers the wording of a merged note uses (e.g. ``share``: the share of rows
        missing the column).
    """

    kind: str
    columns: tuple[str, ...]
    features: tuple[str, ...]
    moves: float
    facts: dict[str, Any]

    def __new__(cls, text: str = "", kind: str = "other", *, columns: Any = (),
                features: Any = (), moves: float = 0.0, **facts: Any) -> Note:
        note = super().__new__(cls, text)
        note.kind = kind if kind in NOTE_KINDS else "other"
        note.columns = tuple(str(c) for c in columns)
        note.features = tuple(str(f) for f in features)
        note.moves = float(min(max(moves, 0.0), 1.0)) if moves == moves else 0.0
        note.facts = dict(facts)
        return note

    @classmethod
    def of(cls, text: Any, kind: str = "other", **fields: Any) -> Note:
        """``text`` as a Note: a Note stays itself, a plain sentence gets ``kind``."""
        return text if isinstance(text, Note) else cls(str(text), kind, **fields)


#: How a near-duplicate note's feature is tied to other columns (the engine's ``tie`` fact)
#: when the data cannot show its effect with them held fixed: almost exactly a linear
#: function of them, or barely varying inside the strata.  The ranking sets such features
#: apart (its ``evidence`` column) and their notes merge into one per group of tied columns.
#: ("one category": most rows sit in strata holding one of its categories, so its effects
#: rest on the others: said, not set apart.)
UNSHOWN = ("linear", "barely")


def tie_of(note: Any) -> str:
    """How a near-duplicate note's feature is tied (``"linear"``, ``"barely"``, ``"one
    category"``, or ``""``): the engine's ``tie`` fact, or read from its words (a note
    written before notes carried it)."""
    facts = getattr(note, "facts", None) or {}
    if facts.get("tie"):
        return str(facts["tie"])
    text = str(note)
    return ("linear" if "almost exactly a linear function" in text else
            "barely" if "barely varies inside the strata" in text else
            "one category" if "holding one category" in text else "")


def tied_features(notes: Any) -> dict[str, tuple[str, ...]]:
    """Feature -> the columns tied to it, for every feature whose own near-duplicate note
    (kind ``duplicate``, tied as :data:`UNSHOWN` says) says the data cannot show its effect
    with the others held fixed.  Accepts the engine's notes, or merged ones (a group's
    ``group`` fact ties each feature to the others)."""
    out: dict[str, tuple[str, ...]] = {}
    for text in notes:
        note = Note.of(text)
        if note.kind != "duplicate":
            continue
        if note.facts.get("group"):
            for f, others in note.facts["group"].items():
                out.setdefault(str(f), tuple(others))
        elif tie_of(note) in UNSHOWN:
            for f in note.features:
                out.setdefault(f, tuple(c for c in note.columns if c != f))
    return out
