"""The conclusion in words: one sentence per top feature, numbers rounded as a person says them.

    "price rises most with carat: from the 10th to the 90th percentile of carat (0.31 to
    1.51), price goes up by about 6,800 (95 % band 6,200 to 7,400), other columns held alike."

The numbers come from :class:`stratpd_xl.workflow.Finding` (computed by the engine and the
workflow); this module only words and rounds them, so the report's summary sheet, the chart
pictures' captions and the command line say the same thing.  No matplotlib, no xlsxwriter.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import re
from collections.abc import Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np
import pandas as pd

from ..schema import Finding

__all__ = ["class_sentences", "conclusion", "pair_sentences", "sentence", "spoken",
           "spoken_value", "summary", "unit_of"]

# A unit at the end of a column name: "price ($)", "mass [kg]", "body_mass_g", "length mm".
_BRACKETED_UNIT = re.compile(r"[(\[]\s*([^()\[\]]{1,12}?)\s*[)\]]\s*$")
_SUFFIX_UNIT = re.compile(
    r"[_\s](mm|cm|km|m|g|kg|lb|lbs|oz|usd|eur|gbp|chf|jpy|pct|s|sec|min|h|hrs|days|kwh)$",
    re.IGNORECASE,
)
# A curve that swings this many times its start-to-end change does not "go up" or "down".
_UNSTEADY = 1.5


def unit_of(name: str) -> str:
    """The unit a column name states, or ``""``: ``"price ($)"`` -> ``"$"``,
    ``"body_mass_g"`` -> ``"g"``, ``"price"`` -> ``""``."""
    text = str(name).strip()
    m = _BRACKETED_UNIT.search(text) or _SUFFIX_UNIT.search(text)
    return m.group(1) if m else ""


def _place(value: float, digits: int = 2) -> int:
    """The decimal place to round ``value`` to so it keeps ``digits`` significant digits."""
    if value == 0 or not math.isfinite(value):
        return 0
    return int(math.floor(math.log10(abs(value)))) - digits + 1


def _at(value: float, place: int) -> str:
    """``value`` rounded to 10**place (halves away from zero, as people round), with
    thousands separators and no "-0"."""
    step = Decimal(1).scaleb(place)
    rounded = (Decimal(repr(float(value))) / step).quantize(Decimal(1), ROUND_HALF_UP) * step
    decimals = max(0, -place)
    text = f"{rounded:,.{decimals}f}"
    return text[1:] if rounded == 0 and text.startswith("-") else text


def spoken(value: float, digits: int = 2) -> str:
    """A number as a person says it: two significant digits, thousands separated.

    >>> spoken(48213.7), spoken(-5.591), spoken(0.07342), spoken(1234567)
    ('48,000', '-5.6', '0.073', '1,200,000')
    """
    if not math.isfinite(value):
        return "unknown"
    return _at(value, max(_place(value, digits), -6))


def spoken_value(value: Any) -> str:
    """A feature value (a percentile, a category) as it reads in a sentence."""
    if isinstance(value, pd.Timestamp | dt.datetime | np.datetime64):
        stamp = pd.Timestamp(value)
        return stamp.strftime("%Y-%m-%d" if stamp == stamp.normalize() else "%Y-%m-%d %H:%M")
    if isinstance(value, bool | np.bool_):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | np.integer):
        # Years and codes read without separators; counts above 9,999 with them.
        return f"{int(value):,}" if abs(int(value)) >= 10_000 else str(int(value))
    if isinstance(value, float | np.floating):
        v = float(value)
        if v.is_integer() and abs(v) < 10_000:
            return str(int(v))
        if abs(v) >= 1e15:
            return f"{v:.3g}"
        # Four significant digits, never in e-notation: 0.3123, 180.2, 15,790; 8.9996 is 9.
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        short = float(f"{v:.4g}")
        return str(int(short)) if short.is_integer() else f"{short:,}"
    return str(value)


def _band(finding: Finding, place: int) -> str:
    if finding.low is None or finding.high is None:
        return ""
    low, high = _at(finding.low, place), _at(finding.high, place)
    if finding.low <= 0 <= finding.high:
        return f" (95 % band {low} to {high}, which includes no change)"
    if finding.change < 0:  # said as a fall: the band as falls too, smaller first
        low, high = _at(-finding.high, place), _at(-finding.low, place)
    return f" (95 % band {low} to {high})"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _subject(target: str, finding: Finding) -> str:
    label = finding.target_label
    return f"the chance of {label[2:-1]}" if label and label.startswith("P(") else target


def _lead(f: Finding, subject: str, first: str, alone: str) -> str:
    """How a sentence opens: by the feature's place in the ranking (0: not ranked)."""
    if f.rank == 1:
        return f"{subject} {first} {f.feature}"
    if f.rank == 0:
        return f"{subject} {alone} {f.feature}"
    return f"{'Next' if f.rank == 2 else 'Then'}, {f.feature}"


def _place_for(change: float, low: float | None, high: float | None) -> int:
    """The decimal place to say a size at: two significant digits of it, and enough for its
    band to show its width (one digit of the half-width): 6,800 (6,200 to 7,400); 30,000
    (29,900 to 30,100)."""
    places = [_place(change, 2)] if change else []
    if low is not None and high is not None and high > low:
        places.append(_place((high - low) / 2, 1))
    return max(min(places), -6) if places else 0


def _place_band(low: float | None, high: float | None, place: int, *, fall: bool = False,
                inner: bool = False) -> str:
    """``" (95 % band L to H)"`` of a size said as a positive number (``fall``: a fall's
    band, negated, smaller first); ``""`` without a band.  ``inner``: without the
    parentheses, to close a parenthesis already open (``"; 95 % band L to H"``)."""
    if low is None or high is None:
        return ""
    if low <= 0 <= high:
        text = f"95 % band {_at(low, place)} to {_at(high, place)}, which includes no change"
    else:
        if fall:
            low, high = -high, -low
        text = f"95 % band {_at(low, place)} to {_at(high, place)}"
    return f"; {text}" if inner else f" ({text})"


def _where(value: Any, f: Finding) -> str:
    """A place on the feature's axis, as precisely as the range between the ends shows:
    two significant digits of that range (30, not 30.08; 4.8, not 4.845)."""
    if isinstance(value, float | np.floating) and not isinstance(f.start, pd.Timestamp):
        try:
            width = abs(float(f.end) - float(f.start))
        except (TypeError, ValueError):
            width = 0.0
        if width > 0 and math.isfinite(value):
            return _at(float(value), min(_place(width, 2), 0) if abs(value) < 10_000
                       else _place(width, 2))
    return spoken_value(value)


def _curve_sentence(f: Finding, subject: str, amount: Any, place: int) -> str:
    """A numeric curve by its shape (:mod:`stratpd_xl.engine._shape`)."""
    shape = f.shape or {}
    kind = shape.get("kind")
    lo, hi = (f.percentiles + (10, 90))[:2] if f.percentiles else (10, 90)
    ends = f"{_where(f.start, f)} and {_where(f.end, f)}"
    percentiles = f"its {_ordinal(lo)} and {_ordinal(hi)} percentiles"
    if kind in ("u", "hump"):
        word, other = ("lowest", "higher") if kind == "u" else ("highest", "lower")
        left, right = float(shape["left"]), float(shape["right"])
        p = _place_for(float(shape["change"]), shape.get("low"), shape.get("high"))
        at = _where(shape["at"], f)
        if max(left, right) <= 1.5 * min(left, right):
            size = f"about {amount(shape['change'], p)} {other} at both ends"
            body = (f"{size} ({ends}, {percentiles}"
                    f"{_place_band(shape.get('low'), shape.get('high'), p, inner=True)})")
        else:
            pl = _place_for(left, shape.get("left_low"), shape.get("left_high"))
            pr = _place_for(right, shape.get("right_low"), shape.get("right_high"))
            body = (f"about {amount(left, pl)} {other} at {_where(f.start, f)}"
                    f"{_place_band(shape.get('left_low'), shape.get('left_high'), pl)} and "
                    f"{amount(right, pr)} {other} at {_where(f.end, f)}"
                    f"{_place_band(shape.get('right_low'), shape.get('right_high'), pr)}, "
                    f"{percentiles}")
        lead = _lead(f, subject, "depends most on", "depends on")
        return f"{lead}: {word} near {f.feature} = {at}, {body}, other columns held alike."
    if kind == "wave":
        p = _place_for(float(shape["change"]), shape.get("low"), shape.get("high"))
        lead = _lead(f, subject, "depends most on", "depends on")
        return (f"{lead}: it goes up and down between {ends} ({percentiles}): highest near "
                f"{f.feature} = {_where(shape['at_high'], f)} and lowest near "
                f"{_where(shape['at_low'], f)}, about {amount(shape['change'], p)} apart"
                f"{_place_band(shape.get('low'), shape.get('high'), p)}, other columns held "
                "alike.")
    if kind == "step":
        size = float(shape["change"])
        p = _place_for(size, shape.get("low"), shape.get("high"))
        verb = "rises" if size >= 0 else "falls"
        lead = _lead(f, subject, f"{verb} most with", f"{verb} with")
        # Level on either side when the jump is nearly all of the rise.
        level = (" and is about level on either side" if abs(f.change - size) <= 0.25 * abs(size)
                 else "")
        return (f"{lead}: it jumps {'up' if size >= 0 else 'down'} by about {amount(size, p)} "
                f"near {f.feature} = {_where(shape['at'], f)}"
                f"{_place_band(shape.get('low'), shape.get('high'), p, fall=size < 0)}"
                f"{level}, other columns held alike.")
    span = (f"from the {_ordinal(lo)} to the {_ordinal(hi)} percentile of {f.feature} "
            f"({spoken_value(f.start)} to {spoken_value(f.end)})")
    band = _band(f, place)
    if kind == "flat":
        # Not "depends most on": the curve's ends are within its band.
        lead = (f"{f.feature} comes first in the ranking" if f.rank == 1
                else _lead(f, subject, "", "shows no clear change with"))
        text = f"{lead}: {span}, {subject} shows no clear change"
        if _at(abs(f.change), place) != "0":
            text += (f" (it ends {amount(f.change, place)} "
                     f"{'higher' if f.change >= 0 else 'lower'}"
                     f"{_place_band(f.low, f.high, place, inner=True)})")
        else:
            text += band
        return text + ", other columns held alike."
    verb = "rises" if f.change >= 0 else "falls"
    lead = _lead(f, subject, f"{verb} most with", f"{verb} with")
    if _at(abs(f.change), place) == "0":
        move = f"{subject} ends about where it started"
    else:
        move = (f"{subject} goes {'up' if f.change >= 0 else 'down'} by about "
                f"{amount(f.change, place)}")
    text = f"{lead}: {span}, {move}{band}, other columns held alike"
    if f.swing is not None and f.swing > _UNSTEADY * abs(f.change) and f.swing > 0:
        text += (f"; not steadily: in between it moves up and down by up to "
                 f"{amount(f.swing, place)} (see its curve)")
    return text + "."


def _blank_sentence(f: Finding, subject: str, amount: Any) -> str:
    """Where the feature is blank, how far the target sits from the curve's typical level:
    "Where Lot.Frontage is blank (490 rows), SalePrice is about 8,000 lower than typical
    (95 % band 4,000 to 12,000 lower), other columns held alike."."""
    b = f.blank or {}
    value = float(b["pd"])
    low, high = _finite_or_none(b.get("low")), _finite_or_none(b.get("high"))
    place = _place_for(value, low, high)
    rows = int(b.get("rows", 0))
    where = f"Where {f.feature} is blank ({rows:,} row{'' if rows == 1 else 's'})"
    if _at(abs(value), place) == "0" or (low is not None and high is not None
                                         and low <= 0 <= high):
        band = _place_band(low, high, place)
        return (f"{where}, {subject} is about at its typical level{band}, other columns "
                "held alike.")
    side = "higher" if value > 0 else "lower"
    band = _place_band(low, high, place, fall=value < 0)
    if band:
        band = f"{band[:-1]} {side})"
    return (f"{where}, {subject} is about {amount(value, place)} {side} than typical{band}, "
            "other columns held alike.")


def _blank_clause(f: Finding, subject: str, amount: Any) -> str:
    """Where a categorical feature is blank, against its best-backed category: "where Sex
    is blank (59 rows), Weight is about 160 higher than where it is F (124 rows; 95 % band
    ...)"."""
    b = f.blank or {}
    value = float(b["pd"])
    low, high = _finite_or_none(b.get("low")), _finite_or_none(b.get("high"))
    place = _place_for(value, low, high)
    rows, versus_rows = int(b.get("rows", 0)), int(b.get("versus_rows", 0))
    where = f"where {f.feature} is blank ({rows:,} row{'' if rows == 1 else 's'})"
    versus = (f"where it is {spoken_value(b.get('versus'))} "
              f"({versus_rows:,} row{'' if versus_rows == 1 else 's'}")
    if _at(abs(value), place) == "0":
        return (f"{where}, {subject} is about level with {versus}"
                f"{_place_band(low, high, place, inner=True)})")
    side = "higher" if value > 0 else "lower"
    band = _place_band(low, high, place, fall=value < 0, inner=True)
    if band and not (low is not None and high is not None and low <= 0 <= high):
        band += f" {side}"
    return f"{where}, {subject} is about {amount(value, place)} {side} than {versus}{band})"


def _finite_or_none(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


#: A yes/no sentence says its curve was cut at 0 % or 100 % when at least this share of
#: its points were (Default's balance: 5,889 of 9,498; its income's 58 of 9,940 are left to
#: the note).
CUT_SHARE = 0.1
_CUT = re.compile(r"went past that at ([\d,]+) of its ([\d,]+) points")


def _cut_points(notes: Sequence[str]) -> tuple[int, int, dict[str, Any]] | None:
    """How many of a yes/no curve's points its "limits" note says were cut at 0 % or
    100 %, of how many, and where it was held at each limit (the note's ``below`` and
    ``above`` facts: the feature's values it spans; empty for a note read from its words).
    None without such a note."""
    for note in notes:  # Notes, or their sentences (a Finding keeps the sentences)
        if getattr(note, "kind", "limits") != "limits":
            continue
        facts = getattr(note, "facts", {})
        if "cut" in facts and "points" in facts:
            held = {side: tuple(facts[side]) for side in ("below", "above") if side in facts}
            return int(facts["cut"]), int(facts["points"]), held
        found = _CUT.search(str(note))
        if found:
            cut, points = (int(g.replace(",", "")) for g in found.groups())
            return cut, points, {}
    return None


def _held_words(f: Finding, cut: int, points: int, held: Mapping[str, Any]) -> str:
    """What a yes/no curve held at 0 % or 100 % over a large share of its points means for
    its sentence (ISLR's Default: balance, 5,889 of 9,498 points below 0 % up to 1,002):
    where it was held, that the curve says there only that the chance is near the limit,
    and whether the size quoted starts or ends on that held stretch."""
    if not held:
        return (f"; its curve went past 0 % or 100 % at {cut:,} of its {points:,} points and "
                "is cut there, so read this size with care.")
    spans = []
    ends_on = []
    for side, (a, b) in held.items():
        limit = "0 %" if side == "below" else "100 %"
        where = (f"at {f.feature} = {_where(a, f)}" if _where(a, f) == _where(b, f) else
                 f"between {f.feature} = {_where(a, f)} and {_where(b, f)}")
        spans.append(f"{'below' if side == 'below' else 'above'} {limit} {where}")
        for which, end in (("from", f.start), ("to", f.end)):
            try:
                inside = bool(a <= end <= b)
            except TypeError:
                inside = False
            if inside:
                ends_on.append((which, limit, end))
    limits = " or ".join(dict.fromkeys("0 %" if s == "below" else "100 %" for s in held))
    stretch = "those stretches" if len(held) > 1 else "that stretch"
    text = (f"; its curve went {' and '.join(spans)} ({cut:,} of its {points:,} points) and "
            f"is held at {limits} there: across {stretch} it says only that the chance "
            f"is near {limits}, not how it changes")
    if ends_on:
        which, limit, end = ends_on[0]
        text += (f", and the size {'starts' if which == 'from' else 'ends'} on it "
                 f"({limit} at {_where(end, f)}), so read it as the change {which} a chance "
                 f"near {limit}")
    return text + "."


def sentence(finding: Finding, target: str) -> str:
    """One finding in words, by the shape of its curve.

    A numeric curve is said as it looks between the feature's 10th and 90th percentiles
    (``finding.shape``): a rise or fall by its size ("goes up by about 6,800"), a U or a
    hump by where it turns and how much higher or lower both ends are, a step by its
    height and place, a flat curve as level.  Categories: the largest contrast between
    two categories backed by at least 20 rows each, with those rows.  Every size comes with
    its 95 % band when there are trials.  A curve whose feature is blank in some rows adds
    where the blanks sit against the curve's typical level ("Where Lot.Frontage is blank
    (490 rows), SalePrice is about 8,000 lower than typical ..."), always with its band.

    Parameters
    ----------
    finding : Finding
        From :func:`stratpd_xl.workflow.findings` or :func:`~stratpd_xl.workflow.finding`.
    target : str
        The target's name, as the data have it; its unit (``"price ($)"``) is used.
    """
    if finding.target_class is not None:
        return _class_sentence(finding, target)
    unit = unit_of(target)
    f = finding
    place = _place_for(f.change, f.low, f.high)
    subject = _subject(target, f)

    def amount(value: float, at_place: int) -> str:
        number = _at(abs(value), at_place)
        if f.target_label:
            return f"{number} percentage point{'' if number == '1' else 's'}"
        if not unit:
            return number
        return f"{unit}{number}" if unit in ("$", "€", "£", "¥") else f"{number} {unit}"

    if f.kind == "categorical":
        band = _band(f, place)
        where = "above" if f.change >= 0 else "below"
        lead = _lead(f, subject, "depends most on", "depends on")
        end, start = spoken_value(f.end), spoken_value(f.start)
        if f.blank_end:
            # The blanks are no category to name: "rows where Sex is blank".
            level = ("about level with" if _at(abs(f.change), place) == "0" else
                     f"about {amount(f.change, place)} {where}")
            body = f"rows where {f.feature} is blank sit {level} those where it is {start}"
        elif _at(abs(f.change), place) == "0":
            body = f"{f.feature} {end} is about level with {start}"
        else:
            body = f"{f.feature} {end} is about {amount(f.change, place)} {where} {start}"
        if f.rows is not None:
            backing = f"{f.rows[1]:,} and {f.rows[0]:,} rows"
            band = (f"{band[:-1]}; {backing})" if band else f" ({backing})")
        blank = _blank_clause(f, subject, amount) if f.blank is not None else ""
        blank_size = abs(float(f.blank["pd"])) if f.blank is not None else 0.0
        if f.well_backed and blank and blank_size > abs(f.change):
            # The blanks move the target more than any two named categories differ: said
            # first, as rows where the feature is blank (Hawks' Sex: +160 against F; M
            # +9.4).
            text = f"{lead}: {blank}; {body}{band}, other columns held alike."
        elif f.well_backed:
            text = f"{lead}: {body}{band}, other columns held alike."
            if blank:
                text = f"{text[:-1]}; {blank}."
        else:
            # No contrast is well backed: said first, then the best-backed pair.
            text = (f"{lead}, but no two of its categories have 20 rows, so none of its "
                    f"contrasts is well backed; of the two with the most rows, {body}{band}, "
                    "other columns held alike.")
            if blank:
                text = f"{text[:-1]}; {blank}."
    else:
        text = _curve_sentence(f, subject, amount, place)
        cut = _cut_points(f.notes)
        if cut is not None and cut[0] >= CUT_SHARE * cut[1]:
            # Said where the size is quoted: a size read off points held at 0 % or 100 %
            # is only as sure as they are (ISLR's Default: 5,889 of 9,498 points).
            text = text[:-1] + _held_words(f, *cut)
        if f.blank is not None:
            text += " " + _blank_sentence(f, subject, amount)
    if f.lead_group and f.rank == 1:
        text = _group_lead(f.lead_group, subject, amount, f.feature) + text
    # A sentence that starts with our own words starts with a capital; a column name stays
    # as the data spell it ("price rises most with ...").
    return text[0].upper() + text[1:] if text.startswith(("the chance", "next", "then")) else text


def _group_lead(group: Mapping[str, Any], subject: str, amount: Any, shown: str) -> str:
    """How the first sentence opens when a tied group would lead the ranking: the group
    named (or a feature tied alone, with the columns that determine it), its first member's
    impact beside that of ``shown`` (the first feature the data show), why no column of it
    has a number of its own, and "Of the other features, " before ``shown``'s sentence."""

    def listed(names: Sequence[str]) -> str:
        quoted = [f'"{n}"' for n in names]
        if len(quoted) > 6:
            return ", ".join(quoted[:5]) + f" and {len(quoted) - 5:,} more"
        return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]

    impact = float(group["impact"])
    said = amount(impact, _place(impact, 2))
    versus = group.get("versus")
    against = ""
    if versus is not None:
        versus = float(versus)
        digits = 2 if amount(versus, _place(versus, 2)) != said else 3
        said = amount(impact, _place(impact, digits))
        against = f", against {amount(versus, _place(versus, digits))} for {shown}"
    first = group["first"]
    members = list(group["features"])
    if len(members) == 1:
        by = list(group.get("determined_by") or [])
        one = len(by) == 1
        others = (f"{listed(by)} nearly determine{'s' if one else ''} it" if by else
                  "the other columns nearly determine it")
        return (f'"{first}" would lead: it has the largest impact of all ({said}{against}), '
                f"but {others}, so no data show how it moves {subject} with "
                f"{'it' if one else 'them'} held fixed. Of the other features, ")
    return (f"{listed(members)} together would lead: \"{first}\" has the largest impact of all "
            f"({said}{against}), but they are tied, each nearly determined by the others, so no "
            f"data show how one of them moves {subject} with the others held fixed. Of the "
            "other features, ")


def _class_sentence(f: Finding, target: str) -> str:
    """A feature's finding for the class it moves most, led by that class: "x moves the
    chance of y = b most: from the 10th to the 90th percentile of x (0.1 to 0.9), the chance
    of y = b goes up by about 40 percentage points ..."."""
    plain = sentence(dataclasses.replace(f, target_class=None, rank=0), target)
    # A sentence of rank 0 opens "<the chance of y = b> <rises with> <feature>"; the class's
    # lead takes that opening's place.
    subject = _subject(target, f)
    rest = plain[plain.index(f.feature, len(subject)) + len(f.feature):]
    moves = f"moves {subject} most"
    if f.rank <= 1:
        lead = f"{f.feature} {moves}"
    else:
        lead = f"{'Next' if f.rank == 2 else 'Then'}, {f.feature} {moves}"
    return lead + rest


def class_sentences(result: pd.DataFrame, target: str) -> list[str]:
    """Each class's curve of a result with a curve per class in words, in the classes'
    order: "The chance of y = a falls with x: ..., the chance of y = a goes down by about
    30 percentage points ...".  ``[]`` for any other result."""
    return [sentence(dataclasses.replace(f, target_class=None), target)
            for f in Finding.per_class(result)]


def pair_sentences(ranking: pd.DataFrame, curves: Mapping[tuple[str, str], pd.DataFrame],
                   top: int = 3) -> list[str]:
    """The interaction ranking's top pairs in words, each with what its by-group curve shows.

    ``"x1 and x3 interact most (strength 0.62 of 1; size 2.3: the part of y the pair adds
    beyond their separate effects is typically that large): the effect of x1 on y goes up
    for x3 = ... but down for ..."``.  A pair whose strength is 0 is not said; a pair whose
    groups' curves do not differ beyond their bands says so.
    """
    target = ranking.attrs.get("target_label") or ranking.attrs.get("target", "the target")
    by_pair = {frozenset(k): c for k, c in curves.items()}
    out = []
    for i, row in enumerate(ranking.head(top).itertuples(index=False)):
        strength = float(row.strength)
        if not strength > 0:
            break
        a, b = str(row.feature_1), str(row.feature_2)
        size = float(row.size)
        lead = (f"{a} and {b} interact most" if i == 0 else f"then {a} and {b}")
        what = (f" (strength {strength:.2f} of 1, 0 when their effects add up; size "
                f"{spoken(size)}: the part of {target} the pair adds beyond their "
                "separate effects is typically that large)" if i == 0 else
                f" (strength {strength:.2f}; size {spoken(size)})")
        curve = by_pair.get(frozenset((a, b)))
        found = [str(f) for f in (curve.attrs.get("findings") or [])] if curve is not None else []
        if found:
            text = f"{lead}{what}: {found[0]}"
        elif curve is not None:
            feature, by = str(curve.attrs.get("feature", a)), str(curve.attrs.get("by", b))
            text = (f"{lead}{what}; the curves of {feature} by groups of {by} do not differ "
                    "beyond their bands")
        else:
            text = f"{lead}{what}"
        # A column name keeps its spelling; our own first word gets a capital.
        out.append((text[0].upper() + text[1:] if i else text) + ".")
    return out


def conclusion(found: Sequence[Finding], target: str) -> list[tuple[str, list[str]]]:
    """Each finding's sentence with the caveats (warnings) to read right under it."""
    return [(sentence(f, target), list(f.notes)) for f in found]


#: Notes said right under a top feature's sentence (the ones that matter most for it).
CAVEATS = 2


def summary(found: Sequence[Finding], notes: Sequence[str], target: str
            ) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """What every front end's summary says: the conclusion (:func:`conclusion`) and every
    other note, once.

    Under a top feature's sentence stand the (at most :data:`CAVEATS`) first of ``notes``
    that touch it (:class:`~stratpd_xl.schema.Note`'s ``features``; ``notes`` come ranked,
    :func:`stratpd_xl.presentation.notes.collect`), and under the first the note on tied
    columns set apart from the ranking's head; the rest of ``notes`` follow, in their
    order, without the ones already said.  Plain sentences (no ``features``) fall back to
    each finding's own warnings.
    """
    said: list[tuple[str, list[str]]] = []
    used: set[str] = set()
    as_data = any(hasattr(n, "features") for n in notes)
    for i, f in enumerate(found):
        if as_data:
            # Under the first sentence also the note on tied columns whose first would
            # have headed the ranking on impact alone (its ``head`` fact): "price rises
            # most with Overall.Qual" is read with why "area" is not first.
            caveats = [n for n in notes
                       if (f.feature in getattr(n, "features", ())
                           or (i == 0 and getattr(n, "facts", {}).get("head")))
                       and n not in used][:CAVEATS]
        else:
            caveats = list(f.notes)
        used.update(caveats)
        said.append((sentence(f, target), caveats))
    return said, [n for n in dict.fromkeys(notes) if n not in used]
