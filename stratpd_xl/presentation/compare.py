"""Words and pictures for the model's second opinion: its score, where it disagrees with StratPD
and why, the side-by-side chart, the ICE lines and the two-way heat map.

The sentences are plain functions of a comparison's ``attrs`` (no matplotlib); the figures
import matplotlib when drawn.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..schema import CATEGORY, X, counted
from .words import spoken

__all__ = [
    "AGREE",
    "HEADERS",
    "compare_cells",
    "result_figure",
    "sentences",
    "write_compare_workbook",
    "write_model_check_sheet",
    "EXTRAPOLATING",
    "agreement_sentence",
    "compare_figure",
    "model_check_figure",
    "verdict",
    "model_sentence",
    "pair_figure",
    "pair_sentence",
]

#: From this agreement up, StratPD and the model are said to agree.
AGREE = 0.8
#: From this agreement up (below AGREE), curves that move the same way are said to agree on the
#: direction and differ in size.
SAME_DIRECTION = 0.5
#: From this share of partial dependence's rows outside the data up, the model is said to
#: extrapolate (see :func:`stratpd_xl.model.extrapolation_share`).
EXTRAPOLATING = 0.1
#: Below this out-of-sample score the model is said to explain too little to be trusted.
WEAK_MODEL = 0.5
#: A region of disagreement holding fewer rows than this many strata's worth is "few rows".
FEW_STRATA = 3

PDP_COLOR = "#C0392B"
ALE_COLOR = "#2E8B57"
ICE_COLOR = "#999999"


def _number(value: Any) -> str:
    if isinstance(value, pd.Timestamp):
        return value.strftime("%Y-%m-%d")
    if isinstance(value, float | np.floating):
        v = float(value)
        if v == 0 or 0.01 <= abs(v) < 1e6:
            return f"{v:,.3g}" if abs(v) < 1000 else f"{v:,.0f}"
        return f"{v:.3g}"
    return str(value)


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(float(value))


def model_sentence(attrs: Mapping[str, Any]) -> str:
    """How well the model predicts rows it did not see, in words.

    ``the model explains 83 % of "price"'s variation on rows it did not see (R² 0.83)``, or
    for a yes/no target its AUC and Brier score.
    """
    target = attrs.get("target", "the target")
    r2 = attrs.get("model_r2")
    auc = attrs.get("model_auc")
    rows = (attrs.get("model_rows") or {}).get("test")
    seen = f" ({counted(rows)})" if isinstance(rows, int) else ""
    if attrs.get("target_label") or attrs.get("model_brier") is not None:
        label = attrs.get("target_label") or f'"{target}"'
        parts = []
        if _finite(auc):
            parts.append(f"AUC {auc:.2f}")
        if _finite(attrs.get("model_brier")):
            parts.append(f"Brier score {attrs['model_brier']:.3f}")
        return (f"the model predicts {label} on rows it did not see{seen} with "
                + (" and ".join(parts) if parts else "no measurable skill"))
    if not _finite(r2):
        return "the model could not be scored on rows it did not see"
    share = max(0.0, float(r2))
    return (f'the model explains {share:.0%} of "{target}"\'s variation on rows it did not '
            f"see{seen} (R² {float(r2):.2f})")


def _where(attrs: Mapping[str, Any]) -> str:
    feature = attrs.get("feature", "x")
    rows = attrs.get("disagree_rows")
    count = f" ({counted(rows)})" if isinstance(rows, int) else ""
    if "disagree_category" in attrs:
        return f'most at "{feature}" = {_number(attrs["disagree_category"])}{count}'
    lo, hi = attrs.get("disagree_from"), attrs.get("disagree_to")
    if lo is None:
        return ""
    if lo == hi:
        return f'most at "{feature}" = {_number(lo)}{count}'
    return f'most between "{feature}" = {_number(lo)} and {_number(hi)}{count}'


def _own_warnings(attrs: Mapping[str, Any]) -> list[str]:
    """What StratPD's curve says against itself: the other columns nearly determine the
    feature (thin strata, a near-duplicate), in short words."""
    feature = attrs.get("feature", "x")
    out = []
    for w in attrs.get("warnings") or []:
        kind = getattr(w, "kind", None)
        text = str(w)
        if kind == "duplicate" or (kind is None and ("barely varies" in text
                                                      or "linear function of the other" in text
                                                      or "holding one category" in text)):
            twins = [c for c in getattr(w, "columns", ()) if c != feature]
            named = (" (" + ", ".join(f'"{c}"' for c in twins[:3]) + ")") if twins else ""
            out.append(f'the other columns{named} nearly determine "{feature}", so its strata '
                       "are thin")
    return list(dict.fromkeys(out))


def _sizes(attrs: Mapping[str, Any]) -> str:
    """The curves' sizes in words: "about 5.0 in the data, 5.9 in the model"."""
    data, model = attrs.get("effect_size"), attrs.get("pdp_size")
    if not (_finite(data) and _finite(model)):
        return ""
    return f"typical effect {spoken(float(data))} in the data, {spoken(float(model))} in the model"


def agreement_sentence(attrs: Mapping[str, Any]) -> str:
    """Whether StratPD and the model tell the same story on the feature and, if not, where,
    and which curve to believe on the evidence each side carries.

    The evidence: StratPD's own warnings (the other columns nearly determine the feature:
    thin strata), the model's score on rows it did not see (below :data:`WEAK_MODEL`: its
    curves are not to be trusted) and its extrapolation (from :data:`EXTRAPOLATING` of the
    rows partial dependence asks about outside the data).  A curve that carries its own
    warning is never the one to trust.
    """
    feature = attrs.get("feature", "x")
    value = attrs.get("agreement")
    if not _finite(value):
        return f'StratPD and the model could not be compared on "{feature}"'
    own = _own_warnings(attrs)
    band = attrs.get("band_size")
    effect = max((float(v) for v in (attrs.get("effect_size"), attrs.get("pdp_size"))
                  if _finite(v)), default=float("nan"))
    sizes = _sizes(attrs)
    if value >= AGREE:
        head = f'StratPD and the model agree on "{feature}" (agreement {value:.2f} of 1)'
        if _finite(band) and _finite(effect) and effect > 0 and band >= 0.5 * effect:
            text = (f"{head}, within bands that are wide next to the effect (±{spoken(band)}; "
                    f"{sizes}): the data cannot tell the two curves apart; more rows would")
        else:
            text = f"{head}: the data and the model tell the same story" + (
                f" ({sizes})" if sizes else "")
        r2 = attrs.get("model_r2")
        if _finite(r2) and r2 < WEAK_MODEL:
            text += (f"; but the model explains little of the target on new rows (score "
                     f"{r2:.2f}), so its agreement says little")
        elif own:
            text += (f"; StratPD's curve carries a warning ({own[0]}), so the model's curve, "
                     "which agrees, is the better support")
        return text
    where = _where(attrs)
    direction = attrs.get("direction")
    if _finite(direction) and direction >= 0.5:
        story = "the same direction, a different size"
    elif _finite(direction) and direction <= -0.3:
        story = "opposite directions"
    else:
        story = "different shapes"
    if value >= SAME_DIRECTION and _finite(direction) and direction >= 0.5:
        head = (f'StratPD and the model agree on the direction of "{feature}" but not on its '
                f"size (agreement {value:.2f} of 1{'; ' + sizes if sizes else ''}), they differ "
                f"{where.removeprefix('most ') if where else 'somewhere'}")
    else:
        head = (f'StratPD and the model\'s partial dependence disagree on "{feature}" beyond '
                f"both curves' bands (agreement {value:.2f} of 1; {story}"
                f"{'; ' + sizes if sizes else ''}){', ' + where if where else ''}")
    return f"{head}: {_reason(attrs, own)}"


def class_agreement_sentence(attrs: Mapping[str, Any]) -> str:
    """The agreement of StratPD's class curves with the classifier's per-class partial
    dependence, class by class, then the weakest class's own sentence:
    'Per class, StratPD and the model agree on "x" for "a" (0.93), "b" (0.88) and "c"
    (0.95 of 1); least for "b": ...'."""
    checks: Mapping[str, Mapping[str, Any]] = attrs.get("class_checks") or {}
    feature = attrs.get("feature", "x")
    if not checks:
        return f'StratPD and the model could not be compared on "{feature}"'
    listed = [f'"{name}" ({c["agreement"]:.2f})' if _finite(c.get("agreement"))
              else f'"{name}" (not compared)' for name, c in checks.items()]
    joined = ", ".join(listed[:-1]) + " and " + listed[-1] if len(listed) > 1 else listed[0]
    text = (f'Per class, StratPD\'s curve and the classifier\'s partial dependence of its '
            f'chance agree on "{feature}" for {joined[:-1]} of 1)')
    scored = {n: c for n, c in checks.items() if _finite(c.get("agreement"))}
    if scored:
        weakest = min(scored, key=lambda n: float(scored[n]["agreement"]))
        own = str(scored[weakest].get("sentence") or agreement_sentence(scored[weakest]))
        text += f'; least for "{weakest}": {own}'
    return text


def class_model_sentence(attrs: Mapping[str, Any]) -> str:
    """How well the classifier predicts each class on rows it did not see."""
    checks: Mapping[str, Mapping[str, Any]] = attrs.get("class_checks") or {}
    rows = (attrs.get("model_rows") or {}).get("test")
    seen = f" ({counted(rows)})" if isinstance(rows, int) else ""
    parts = [f'"{name}" AUC {float(c["model_auc"]):.2f}' for name, c in checks.items()
             if _finite(c.get("model_auc"))]
    if not parts:
        return f"the classifier could not be scored on rows it did not see{seen}"
    return (f"the classifier of {attrs.get('target', 'the target')} tells each class from the "
            f"others on rows it did not see{seen} with " + ", ".join(parts))


def verdict(attrs: Mapping[str, Any]) -> str:
    """The model check's answer in a few words (the table's column; the sentence says why):
    "agree", "agree, wide bands", "same direction, sizes differ", "trust StratPD", "trust the
    model", "trust neither", "few rows there" or "read both"."""
    value = attrs.get("agreement")
    if not _finite(value):
        return "not compared"
    if value >= AGREE:
        band = attrs.get("band_size")
        effect = max((float(v) for v in (attrs.get("effect_size"), attrs.get("pdp_size"))
                      if _finite(v)), default=float("nan"))
        wide = _finite(band) and _finite(effect) and effect > 0 and band >= 0.5 * effect
        return "agree, wide bands" if wide else "agree"
    reason = _reason(attrs, _own_warnings(attrs))
    direction = attrs.get("direction")
    same_way = value >= SAME_DIRECTION and _finite(direction) and direction >= 0.5
    if same_way and (reason.startswith("few rows") or reason.startswith("neither curve carries")):
        return "same direction, sizes differ"
    if reason.startswith("neither curve can"):
        return "trust neither"
    if reason.startswith("StratPD's curve carries"):
        return "trust the model"
    if "trust StratPD's curve" in reason:
        return "trust StratPD"
    if reason.startswith("few rows"):
        return "few rows there"
    return "read both"


def _reason(attrs: Mapping[str, Any], own: list[str]) -> str:
    """Which curve to believe, from the evidence both sides carry."""
    feature = attrs.get("feature", "x")
    outside = attrs.get("extrapolation")
    r2 = attrs.get("model_r2")
    rows = attrs.get("disagree_rows")
    leaf = (attrs.get("params") or {}).get("min_samples_leaf", 10)
    against_model = []
    if _finite(outside) and outside >= EXTRAPOLATING:
        against_model.append(
            f"{outside:.0%} of the combinations the model's partial dependence averages over "
            "never occur in the data, so the model extrapolates there")
    if _finite(r2) and r2 < WEAK_MODEL:
        against_model.append(f"the model explains little of the target on new rows (score "
                             f"{r2:.2f}), so its curves are unreliable")
    if own and against_model:
        return (f"neither curve can be trusted here: {own[0]}, and {'; '.join(against_model)}; "
                f'leave out the columns that duplicate "{feature}" (exclude) and compare again')
    if own:
        ale = attrs.get("agreement_ale")
        which = ("the model's curves (its PDP and ALE)" if not _finite(ale) or ale < AGREE
                 else "the model's curves")
        return (f"StratPD's curve carries its own warning ({own[0]}), while the model scores "
                f"well on new rows and stays where the data are: trust {which} here, or "
                f'leave out the columns that duplicate "{feature}" (exclude) and compare again')
    if against_model:
        ale = attrs.get("agreement_ale")
        ale_note = (" (the ALE curve, which stays where the data are, is closer to StratPD)"
                    if _finite(ale) and ale > float(attrs["agreement"]) + 0.1 else "")
        return f"{'; '.join(against_model)}: trust StratPD's curve{ale_note}"
    if isinstance(rows, int) and rows < FEW_STRATA * 2 * int(leaf):
        return (f"few rows lie there ({rows:,}), too few for StratPD's strata of "
                f"{leaf} or more rows; read both curves there with caution")
    return ("neither curve carries a warning (the model scores well and stays where the data "
            "are; StratPD's strata are not thin), so read both: where StratPD's curve is "
            "smoother than the model's at a jump, larger strata sharpen it (min_samples_leaf "
            "20-40, docs/method.md on steps); elsewhere more trials give StratPD's band")


def pair_sentence(attrs: Mapping[str, Any]) -> str:
    """Friedman's H² of a pair, in words."""
    a, b = (attrs.get("features") or ["x1", "x2"])[:2]
    h2 = attrs.get("h2")
    if not _finite(h2):
        return f'the interaction of "{a}" and "{b}" could not be measured'
    if h2 < 0.05:
        kind = "the model adds their effects (hardly any interaction)"
    elif h2 < 0.25:
        kind = "the effect of one depends a little on the other"
    else:
        kind = "the effect of one depends strongly on the other"
    return (f'"{a}" and "{b}": {h2:.0%} of their joint effect in the model is interaction '
            f"(Friedman's H² {h2:.2f}): {kind}")


# --------------------------------------------------------------------------- pictures


def _x_label(attrs: Mapping[str, Any]) -> str:
    return str(attrs.get("feature", "x"))


def _y_label(attrs: Mapping[str, Any]) -> str:
    label = attrs.get("target_label")
    if label:
        return f"change in {label}, points"
    return f"change in {attrs.get('target', 'target')}"


def compare_figure(table: pd.DataFrame, ice: pd.DataFrame | None = None) -> Any:
    """StratPD (with its band), the model's PDP and ALE overlaid; faint centred ICE lines.

    Categorical features get grouped bars (StratPD with its band as error bars, PDP, ALE).
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    attrs = table.attrs
    fig = Figure(figsize=(7.5, 4.6), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    if "class" in table.columns and "class_checks" in attrs:
        _draw_classes(ax, table)
    elif CATEGORY in table.columns:
        labels = [str(c) for c in table[CATEGORY]]
        pos = np.arange(len(labels))
        width = 0.27
        err = None
        if "stratpd_low" in table.columns:
            err = np.vstack([table["stratpd"] - table["stratpd_low"],
                             table["stratpd_high"] - table["stratpd"]])
        ax.bar(pos - width, table["stratpd"], width, yerr=err, label="StratPD (data)",
               color="#1F5F9F", capsize=3)
        ax.bar(pos, table["pdp"], width, label="model PDP", color=PDP_COLOR)
        ax.bar(pos + width, table["ale"], width, label="model ALE", color=ALE_COLOR)
        ax.set_xticks(pos, labels, rotation=30 if len(labels) > 6 else 0, ha="right"
                      if len(labels) > 6 else "center")
        ax.axhline(0, color="#555555", lw=0.8)
    else:
        x = table[X]
        if ice is not None and len(ice):
            for _, one in ice.groupby("row", sort=False):
                centred = one["prediction"].to_numpy(float)
                ax.plot(one["x"], centred - centred.mean() + np.nanmean(table["pdp"]),
                        color=ICE_COLOR, lw=0.6, alpha=0.35, zorder=1)
        if "stratpd_low" in table.columns:
            ax.fill_between(x, table["stratpd_low"], table["stratpd_high"], color="#8FB4D9",
                            alpha=0.5, lw=0, label="StratPD 95 % band", zorder=2)
        ax.plot(x, table["stratpd"], color="#1F5F9F", lw=2.2, label="StratPD (data)",
                zorder=4)
        ax.plot(x, table["pdp"], color=PDP_COLOR, lw=1.6, ls="--", label="model PDP",
                zorder=3)
        ax.plot(x, table["ale"], color=ALE_COLOR, lw=1.4, ls=":", label="model ALE", zorder=3)
    ax.set_xlabel(_x_label(attrs))
    ax.set_ylabel(_y_label(attrs) if "class_checks" not in attrs else
                  f"change in each {attrs.get('target', 'class')}'s chance, points")
    value = attrs.get("agreement")
    score = attrs.get("model_r2")
    title = f"{attrs.get('feature', 'x')}: data vs model"
    if "class_checks" in attrs:
        title += " per class" + (f" (lowest agreement {value:.2f})" if _finite(value) else "")
    elif _finite(value):
        title += f" (agreement {value:.2f}"
        title += f", model R² {score:.2f})" if _finite(score) else ")"
    ax.set_title(title, fontsize=11)
    ax.legend(fontsize=8, frameon=False)
    ax.grid(alpha=0.25)
    fig.tight_layout()
    return fig


def _draw_classes(ax: Any, table: pd.DataFrame) -> None:
    """Each class in its colour: StratPD's curve (solid, its band shaded) and the
    classifier's partial dependence (dashed); a categorical feature's bars side by side,
    StratPD's solid and the model's hatched."""
    from .labels import CLASS_COLORS

    checks = table.attrs["class_checks"]
    names = list(checks)
    if CATEGORY in table.columns:
        labels = [str(c) for c in pd.unique(table[CATEGORY])]
        pos = np.arange(len(labels))
        width = 0.8 / (2 * len(names))
        for k, name in enumerate(names):
            one = table[table["class"] == name]
            color = CLASS_COLORS[k % len(CLASS_COLORS)]
            at = pos - 0.4 + width * (2 * k + 0.5)
            ax.bar(at, one["stratpd"], width, color=color,
                   label=f'{name}: StratPD (agreement {checks[name]["agreement"]:.2f})')
            ax.bar(at + width, one["pdp"], width, color="white", edgecolor=color, hatch="//",
                   label=f"{name}: model PDP")
        ax.set_xticks(pos, labels)
        ax.axhline(0, color="#555555", lw=0.8)
        return
    for k, name in enumerate(names):
        one = table[table["class"] == name]
        color = CLASS_COLORS[k % len(CLASS_COLORS)]
        if "stratpd_low" in one.columns:
            ax.fill_between(one[X], one["stratpd_low"], one["stratpd_high"], color=color,
                            alpha=0.15, lw=0)
        agree = checks[name].get("agreement")
        tail = f" (agreement {agree:.2f})" if _finite(agree) else ""
        ax.plot(one[X], one["stratpd"], color=color, lw=2.0, label=f"{name}: StratPD{tail}")
        ax.plot(one[X], one["pdp"], color=color, lw=1.4, ls="--", label=f"{name}: model PDP")
    ax.axhline(0, color="#bbbbbb", lw=0.8)


def pair_figure(table: pd.DataFrame) -> Any:
    """Heat map of the model's two-way partial dependence, H² in the title."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    attrs = table.attrs
    a, b = attrs["features"][:2]
    grid = table.pivot(index=b, columns=a, values="pdp")
    first = pd.unique(table[a])
    second = pd.unique(table[b])
    grid = grid.reindex(index=second, columns=first)
    fig = Figure(figsize=(6.4, 5.0), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    image = ax.imshow(grid.to_numpy(float), origin="lower", aspect="auto", cmap="RdBu_r")
    limit = float(np.nanmax(np.abs(grid.to_numpy(float)))) or 1.0
    image.set_clim(-limit, limit)

    def ticks(values: np.ndarray) -> tuple[np.ndarray, list[str]]:
        step = max(1, len(values) // 8)
        at = np.arange(0, len(values), step)
        return at, [_number(values[i]) if not isinstance(values[i], str) else values[i]
                    for i in at]

    at, names = ticks(first)
    ax.set_xticks(at, names, rotation=30, ha="right")
    at, names = ticks(second)
    ax.set_yticks(at, names)
    ax.set_xlabel(str(a))
    ax.set_ylabel(str(b))
    colorbar = fig.colorbar(image, ax=ax)
    colorbar.set_label(_y_label(attrs))
    h2 = attrs.get("h2")
    ax.set_title(f"model's two-way partial dependence (H² {h2:.2f})" if _finite(h2)
                 else "model's two-way partial dependence", fontsize=11)
    fig.tight_layout()
    return fig


#: Column -> header for people (spreadsheet cells); the feature's own name heads its column.
HEADERS = {
    "stratpd": "StratPD (data)",
    "stratpd_low": "StratPD low",
    "stratpd_high": "StratPD high",
    "pdp": "model PDP",
    "ale": "model ALE",
}


def compare_cells(table: pd.DataFrame) -> pd.DataFrame:
    """The comparison as a formula spills it: people's headers, then a blank row and the
    sentences (model score, agreement) in the first column."""
    key = CATEGORY if CATEGORY in table.columns else X
    shown = table.rename(columns={key: str(table.attrs.get("feature", key)), **HEADERS})
    shown = shown.astype(object)
    extra = [[None] * shown.shape[1]]
    for text in sentences(table)[:2]:
        extra.append([text] + [None] * (shown.shape[1] - 1))
    return pd.concat([shown, pd.DataFrame(extra, columns=shown.columns)], ignore_index=True)


def result_figure(table: pd.DataFrame, ice: pd.DataFrame | None = None) -> Any:
    """The picture of a comparison: the overlay for one feature, the heat map for a pair."""
    if "features" in table.attrs:
        return pair_figure(table)
    return compare_figure(table, ice)


def sentences(table: pd.DataFrame) -> list[str]:
    """What to read besides the numbers: the model's score, agreement or H², the notes."""
    a = table.attrs
    out = [str(a[k]) for k in ("model_sentence", "sentence") if a.get(k)]
    return out + [str(n) for n in a.get("notes") or []]


def write_compare_workbook(table: pd.DataFrame, path: Any,
                           ice: pd.DataFrame | None = None) -> None:
    """An .xlsx with the sentences, the side-by-side table and its picture (ICE on a sheet).

    Every text goes in as a string cell (never a formula, whatever it starts with).
    """
    import xlsxwriter

    book = xlsxwriter.Workbook(path, {"nan_inf_to_errors": True,
                                      "strings_to_formulas": False, "strings_to_urls": False})
    try:
        bold = book.add_format({"bold": True})
        sheet = book.add_worksheet("compare")
        row = 0
        for text in sentences(table):
            sheet.write_string(row, 0, str(text))
            row += 1
        row += 1
        _write_frame(sheet, table, row, bold)
        from .charts import figure_png

        png = figure_png(result_figure(table, ice))
        import io

        sheet.insert_image(row, len(table.columns) + 1, "compare.png",
                           {"image_data": io.BytesIO(png)})
        if ice is not None:
            _write_frame(book.add_worksheet("ICE"), ice, 0, bold)
    finally:
        book.close()


def _write_frame(sheet: Any, frame: pd.DataFrame, top: int, bold: Any) -> None:
    for col, name in enumerate(frame.columns):
        sheet.write_string(top, col, str(name), bold)
        sheet.set_column(col, col, max(10, min(30, len(str(name)) + 2)))
        for i, value in enumerate(frame[name].tolist(), start=top + 1):
            if isinstance(value, bool | np.bool_):
                sheet.write_boolean(i, col, bool(value))
            elif isinstance(value, int | float | np.integer | np.floating):
                if not math.isfinite(float(value)):
                    continue
                sheet.write_number(i, col, float(value))
            elif isinstance(value, pd.Timestamp):
                sheet.write_string(i, col, value.isoformat())
            elif value is None or (isinstance(value, float) and math.isnan(value)):
                continue
            else:
                sheet.write_string(i, col, str(value))


#: Header of each model check column, for people.
CHECK_HEADERS = {
    "feature": "feature",
    "kind": "kind",
    "agreement": "agreement (0-1)",
    "agreement_ale": "agreement with ALE",
    "verdict": "verdict",
    "extrapolation": "PD rows outside the data",
    "largest_gap": "largest gap",
    "sentence": "where and why they differ",
}
# Column widths of the Model check sheet, in characters (landscape, one page wide).
_CHECK_WIDTHS = {"feature": 16, "kind": 11, "agreement": 10, "agreement_ale": 10,
                 "verdict": 19, "extrapolation": 11, "largest_gap": 11, "sentence": 60}
# Characters of proportional text per unit of column width, for the rows' heights (wrapped
# rows are not measured by Excel on opening, nor by LibreOffice when printing).
_CHARS_PER_WIDTH = 0.85
#: Most features the Model check picture draws (the top of the ranking).
CHECK_PANELS = 12
AGREEMENT_NOTE = (
    "agreement: 1 = StratPD's curve and the model's partial dependence are the same within "
    "both curves' 95 % bands, 0.8 = apart by a tenth of the effect beyond the bands, 0 = by "
    "half or more (docs/method.md); verdict: which curve to believe, on the warnings each "
    "side carries")


def model_check_figure(check: pd.DataFrame) -> Any:
    """Each feature's three curves (StratPD with its band, the model's PDP and ALE) in one
    picture, a small panel per feature in the ranking's order (at most
    :data:`CHECK_PANELS`), three across, the width of a printed page."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    tables = check.attrs.get("tables") or {}
    names = [str(f) for f in check["feature"] if str(f) in tables][:CHECK_PANELS]
    across = 3
    down = max(1, math.ceil(len(names) / across))
    fig = Figure(figsize=(9.0, 0.4 + 2.1 * down), dpi=100)
    for i, name in enumerate(names):
        table = tables[name]
        ax = fig.add_subplot(down, across, i + 1)
        if "class_checks" in table.attrs:  # a line per class: StratPD solid, PDP dashed
            _draw_classes(ax, table)
            ax.tick_params(labelsize=6)
        elif CATEGORY in table.columns:
            pos = np.arange(len(table))
            width = 0.27
            ax.bar(pos - width, table["stratpd"], width, color="#1F5F9F")
            ax.bar(pos, table["pdp"], width, color=PDP_COLOR)
            ax.bar(pos + width, table["ale"], width, color=ALE_COLOR)
            labels = [str(c)[:8] for c in table[CATEGORY]]
            step = max(1, len(labels) // 6)
            ax.set_xticks(pos[::step], labels[::step], fontsize=6)
            ax.axhline(0, color="#555555", lw=0.6)
        else:
            x = table[X]
            if "stratpd_low" in table.columns:
                ax.fill_between(x, table["stratpd_low"], table["stratpd_high"],
                                color="#8FB4D9", alpha=0.5, lw=0)
            ax.plot(x, table["stratpd"], color="#1F5F9F", lw=1.6)
            ax.plot(x, table["pdp"], color=PDP_COLOR, lw=1.1, ls="--")
            ax.plot(x, table["ale"], color=ALE_COLOR, lw=1.0, ls=":")
            ax.tick_params(labelsize=6)
        value = table.attrs.get("agreement")
        ax.set_title(f"{name[:28]}" + (f" (agreement {value:.2f})" if _finite(value) else ""),
                     fontsize=8)
        ax.tick_params(axis="y", labelsize=6)
        ax.grid(alpha=0.25)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color="#1F5F9F", lw=1.6, label="StratPD (data), 95 % band"),
               Line2D([], [], color=PDP_COLOR, lw=1.1, ls="--", label="model PDP"),
               Line2D([], [], color=ALE_COLOR, lw=1.0, ls=":", label="model ALE")]
    fig.legend(handles=handles, loc="upper center", ncol=3, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / fig.get_figheight()))
    return fig


def write_model_check_sheet(ws: Any, check: pd.DataFrame, fmt: Any) -> None:
    """The report's "Model check" sheet: the model's score, one row per feature (its
    agreement, verdict and sentence) and every feature's three curves in one picture.

    ``fmt(**props)`` gives the workbook's cell format for those properties.  Numbers are
    formatted as on the other sheets (agreement 0.00, shares as percentages, gaps with the
    digits the largest needs); the sheet prints one page wide, landscape.  Every text goes
    in as a string cell (never a formula).
    """
    from .labels import decimals

    columns = [c for c in CHECK_HEADERS if c in check.columns]
    last = len(columns) - 1
    width = sum(_CHECK_WIDTHS.get(c, 12) for c in columns)

    def wrapped(row: int, text: str, props: dict[str, Any]) -> None:
        if last > 0:
            ws.merge_range(row, 0, row, last, text, fmt(text_wrap=True, valign="top", **props))
        else:
            ws.write_string(row, 0, text, fmt(text_wrap=True, valign="top", **props))
        lines = max(1, math.ceil(len(text) * _CHARS_PER_WIDTH / width))
        ws.set_row(row, 15.75 * lines if lines > 1 else 18.0 if props.get("font_size") else None)

    wrapped(0, f"Model check: does a fitted model say the same about "
               f"{check.attrs.get('target', 'the target')}?", {"bold": True, "font_size": 14})
    wrapped(1, str(check.attrs.get("model_sentence", "")), {})
    wrapped(2, AGREEMENT_NOTE, {"font_color": "#555555"})
    row = 3
    for note in check.attrs.get("notes") or []:
        wrapped(row, f"note: {note}", {"font_color": "#666666", "italic": True})
        row += 1
    top = row + 1
    header = fmt(bold=True, text_wrap=True, valign="top", bottom=1)
    gap_places = decimals(check["largest_gap"]) if "largest_gap" in check.columns else 0
    number = {"agreement": fmt(num_format="0.00", valign="top"),
              "agreement_ale": fmt(num_format="0.00", valign="top"),
              "extrapolation": fmt(num_format="0%", valign="top"),
              "largest_gap": fmt(num_format="#,##0" + ("." + "0" * gap_places
                                                        if gap_places else ""),
                                 valign="top")}
    text = fmt(valign="top", align="left", indent=1, text_wrap=True)
    long_text = fmt(text_wrap=True, valign="top")
    for col, name in enumerate(columns):
        ws.write_string(top, col, CHECK_HEADERS[name], header)
        ws.set_column(col, col, _CHECK_WIDTHS.get(name, 12))
    ws.set_row(top, 47.25)  # up to three lines of header
    for i, record in enumerate(check[columns].itertuples(index=False), start=top + 1):
        for col, (name, value) in enumerate(zip(columns, record, strict=True)):
            if isinstance(value, str):
                ws.write_string(i, col, value, long_text if name == "sentence" else text)
            elif isinstance(value, int | float | np.floating) and math.isfinite(float(value)):
                ws.write_number(i, col, float(value), number.get(name, text))
        sentence_text = str(getattr(record, "sentence", "") or "")
        lines = max(1, math.ceil(len(sentence_text) * _CHARS_PER_WIDTH
                                 / _CHECK_WIDTHS["sentence"]))
        ws.set_row(i, 15.75 * lines)
    below = top + len(check) + 2
    if check.attrs.get("tables"):
        import io

        from .charts import figure_png

        figure = model_check_figure(check)
        # Scaled to the columns' width on the page (about 7 px a character).
        scale = min(1.0, width * 7.0 / (figure.get_figwidth() * figure.dpi))
        ws.set_h_pagebreaks([below])  # the picture starts a page of its own
        ws.insert_image(below, 0, "model-check.png", {
            "image_data": io.BytesIO(figure_png(figure)), "x_scale": scale, "y_scale": scale,
            "object_position": 3, "description": "StratPD, model PDP and ALE per feature"})
    ws.set_landscape()
    ws.fit_to_pages(1, 0)
    ws.repeat_rows(top)
