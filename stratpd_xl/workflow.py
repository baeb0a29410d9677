"""The one path from a typed table to results: every front end calls this module.

    names -> checks -> usable columns -> engine -> results with notes

The CLI, the Excel formulas, the ribbon button and any later front end (xlwings Lite, a web
page) read their input into a DataFrame (through :mod:`stratpd_xl.input.sheet` or
:mod:`stratpd_xl.input.files`), call :func:`curve` or :func:`analysis` with validated
:class:`~stratpd_xl.params.Settings`, and present the typed result they get back.  Checks and
their sentences live here once, so a table gives the same answer and the same error in a
cell, on a command line and in a message box.

No I/O, no drawing: results are plain DataFrames inside small dataclasses.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .errors import StratPDInputError
from .identifiers import key_to_test
from .input.sheet import check_rows, resolve_column, usable_table, whole_characters
from .input.tables import refuse_lazy_table
from .params import DEFAULT_SEED, Settings
from .schema import CATEGORICAL, Finding, Note, counted
from .yesno import yes_no_target

__all__ = [
    "AnalysisResult",
    "CompareResult",
    "CurveResult",
    "Finding",
    "InteractionsResult",
    "Problem",
    "SurfaceResult",
    "analysis",
    "compare",
    "curve",
    "finding",
    "findings",
    "ice",
    "interactions",
    "model_check",
    "prepare",
    "scaled_analysis",
    "scaled_curve",
    "surface",
    "warm_up",
]

Progress = Callable[[int, int, str], None]


def _model_left_out(left_out: Mapping[str, str]) -> list[Note]:
    """The note on the columns a fitted model left out
    (:func:`stratpd_xl.presentation.notes.model_left_out`)."""
    from .presentation.notes import model_left_out

    return model_left_out(left_out)


def note_list(notes: Sequence[str], ranking: pd.DataFrame | None = None) -> list[Note]:
    """The notes of one result, each fact once and ranked
    (:func:`stratpd_xl.presentation.notes.collect`)."""
    from .presentation.notes import collect

    return collect(notes, ranking)

#: How a user analyses a column left out as an identifier, by front end (the default suits
#: the Python API and the CLI).
KEEP_BY_NAMING = "pass keep=[its name] (or name it as a feature) to analyse it anyway"
#: How a user asks for every point of a summarised curve, by front end.
EVERY_POINT = "max_points=None"


@dataclass(frozen=True)
class Problem:
    """A table ready for the engine: exact column names and the columns left out.

    Attributes
    ----------
    frame : DataFrame
        The table without the left-out columns; ``categorical`` columns as pandas categories.
    target : str
        Exact name of the target column.
    features : list of str
        Features to analyse: the ones asked for, or every usable column.
    left_out : dict
        Column -> sentence saying why it is not used (no values, one value, an identifier).
    notes : list of str
        Sentences from reading the table (cells treated as missing, title rows skipped).
    excluded : list of str
        Exact names of the columns the user excluded (``settings.exclude``): still in
        ``frame``, for the engine to drop and record; never features, never in a model.
    kept : list of str
        Exact names of the columns to analyse even if they look like row numbers or ids
        (``settings.keep``), which the engine must not leave out of the strata either.
    """

    frame: pd.DataFrame
    target: str
    features: list[str]
    left_out: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)

    @property
    def model_columns(self) -> list[str]:
        """The columns a fitted model sees: every column but the target and the excluded."""
        return [c for c in self.frame.columns if c != self.target and c not in self.excluded]


@dataclass(frozen=True)
class CurveResult:
    """The partial dependence of the target on one feature.

    Attributes
    ----------
    curve : DataFrame
        The engine's result (columns and ``attrs`` as :mod:`stratpd_xl.schema` documents).
    target, feature : str
        Exact column names.
    notes : list of str
        Everything the user should read besides the numbers: reading notes, columns left out,
        the engine's warnings, and what each point of a summarised curve stands for.
    """

    curve: pd.DataFrame
    target: str
    feature: str
    notes: list[str] = field(default_factory=list)

    @property
    def kind(self) -> str:
        """``"numeric"`` or ``"categorical"``."""
        return str(self.curve.attrs.get("kind", "numeric"))

    @property
    def finding(self) -> Finding | None:
        """The numbers behind this curve's sentence (see :func:`finding`)."""
        return finding(self.curve)


@dataclass(frozen=True)
class AnalysisResult:
    """The impact ranking and a curve for every feature that could be estimated.

    Attributes
    ----------
    impact : DataFrame
        The ranking (``feature``, ``kind``, ``impact``, ``share``), largest first.
    curves : dict
        Feature -> curve DataFrame, for every ranked feature.
    target : str
        Exact name of the target.
    skipped : dict
        Feature -> why the engine gave it no curve.
    left_out : dict
        Column -> why it was not analysed at all.
    notes : list of Note
        Every note once, ranked, the ones that matter most first (docs/method.md, "Notes"):
        reading notes, left-out columns, skipped features and the curves' warnings, a
        column's gaps said once for all the features they touch.  Each is a sentence (a
        ``str``) with ``kind``, ``columns``, ``features`` and ``moves``
        (:class:`stratpd_xl.schema.Note`).
    n_rows : int
        Rows in the table.
    findings : list of Finding
        The numbers behind the conclusion in words, one per top feature (:func:`findings`).
    """

    impact: pd.DataFrame
    curves: dict[str, pd.DataFrame]
    target: str
    skipped: dict[str, str] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    n_rows: int = 0
    findings: list[Finding] = field(default_factory=list)


def prepare(
    frame: pd.DataFrame,
    target: Any,
    features: Sequence[Any] | None = None,
    *,
    settings: Settings | None = None,
    categorical: Sequence[Any] = (),
    orders: Mapping[Any, Sequence[Any]] | None = None,
    how_to_keep: str = KEEP_BY_NAMING,
    positive: Any = None,
    classes: Any = None,
    keep: Sequence[str] = (),
) -> Problem:
    """Resolve names, check the rows and leave out columns that cannot inform the analysis.

    Parameters
    ----------
    frame : DataFrame
        A typed table (from :mod:`stratpd_xl.input.sheet` or :mod:`stratpd_xl.input.files`, or any
        DataFrame); ``frame.attrs["notes"]`` are carried into the result's notes.
    target : str
        The column to explain, as the user typed it (case, spaces, underscores ignored).
    features : sequence of str, optional
        Features as the user typed them; default every usable column.  Named features are
        never left out, even when they look like identifiers.
    settings : Settings, optional
        Analysis parameters (``min_samples_leaf`` and ``exclude`` matter here: the excluded
        columns are matched like the other names and never analysed).
    categorical : sequence of str
        Columns to treat as categories (number codes such as store or month).
    orders : mapping, optional
        Column -> its categories in the order tables and charts show them (the first is the
        baseline the others are compared with); values not listed follow in their own order.
    how_to_keep : str
        End of the "looks like an identifier" sentence: how, in the calling front end, to
        analyse such a column anyway.
    positive : optional
        For a yes/no target, the value that counts as 1 (default TRUE/yes/1, else the
        rarer value); results are then changes in its probability, in percentage points.
    classes : optional
        Read the target as classes (``True``, ``"all"`` or a list): no yes/no reading and
        no numeric check; the engine gives a curve per class.
    keep : sequence of str
        Exact names of other columns never to leave out (a ``by`` column).

    Raises
    ------
    StratPDInputError
        Unknown or repeated column, a target neither numeric nor yes/no, too few rows, no
        feature left.
    """
    from . import engine

    refuse_lazy_table(frame)
    settings = settings or Settings()
    # A frame of the Python API is not typed from cells: unique names, one value per cell
    # and whole characters are checked here, as the sheet layer ensures them for cells.
    attrs = dict(getattr(frame, "attrs", None) or {})
    frame = engine.checked_frame(frame)
    frame.attrs = attrs
    frame = whole_characters(frame)
    notes = [Note.of(n, "reading") for n in frame.attrs.get("notes") or []]
    target_name = resolve_column(frame, target, role="target")
    named: list[str] | None = None
    if features is not None:
        named = []
        given: list[str] = []
        for f in features:
            name = resolve_column(frame, f, role="feature")
            given.append(name)
            if name == target_name:
                raise StratPDInputError(
                    f'"{name}" is both the target and the feature; pick a different feature '
                    "column"
                )
            if name not in named:
                named.append(name)
        # Naming a feature twice analyses it once, and says so (a ranking listing it three
        # times would be wrong; silently dropping the repeats would look like a bug).
        notes += [Note(f'"{n}" is named {given.count(n)} times; it is analysed once',
                       "reading", columns=[n]) for n in named if given.count(n) > 1]
    frame = _with_categories(frame, target_name, categorical, notes)
    frame = _with_orders(frame, target_name, orders or {})
    check_rows(
        frame, target_name, named[0] if named is not None and len(named) == 1 else None,
        min_samples_leaf=settings.min_samples_leaf, positive=positive,
        classes=_as_classes(classes),
    )
    kept = _kept(frame, settings.keep)
    roles = {**dict.fromkeys(kept, "kept column"), **dict.fromkeys(named or [], "feature"),
             **dict.fromkeys(keep, "by column")}
    keep = [*keep, *kept]
    excluded = _excluded(frame, target_name, settings.exclude, roles)
    # Excluded columns stay in the frame (the engine drops them and records why), so the
    # checks for identifiers and empty columns do not speak of them.
    frame, usable, left_out = usable_table(
        frame, target_name, [*(named or []), *keep, *excluded], how_to_keep=how_to_keep
    )
    # A key by its shape and place that the target follows only through the other columns
    # (stratpd_xl.identifiers.key_shaped): the engine judges it inside the others' strata.
    found = key_to_test(frame, [c for c in frame.columns
                                if c != target_name and c not in {*left_out, *excluded}])
    if (found is not None and found[0] not in {*(named or []), *keep}
            and (why := engine.key_given_others(frame.drop(columns=excluded), target_name,
                                                *found))):
        left_out[found[0]] = f"{why}; {how_to_keep}"
        frame = frame.drop(columns=[found[0]])
    # Columns kept on request are analysed even where the identifier rule would leave them out.
    usable = [c for c in frame.columns if c in usable or (c in kept and c != target_name)]
    chosen = named if named is not None else [c for c in usable if c not in excluded]
    if not chosen:
        ids = [name for name, why in left_out.items() if "identifier" in why]
        if ids:  # every column looks like a row number or a key: say how to keep one
            raise StratPDInputError(
                f'no column to analyse besides the target "{target_name}": '
                f"{_listed(ids)} {'looks' if len(ids) == 1 else 'look'} like "
                f"{'an identifier' if len(ids) == 1 else 'identifiers'}; {how_to_keep}"
            )
        raise StratPDInputError(
            f'no column to analyse besides the target "{target_name}"; '
            "the table needs at least one other column with varying values"
        )
    notes += [Note(f'left out "{name}": {why}',
                   "identifier" if "identifier" in why else "left out", columns=[name])
              for name, why in left_out.items()]
    if excluded:
        listed = " and ".join(f'"{c}"' for c in excluded)
        notes.append(Note(f"left out {listed} as asked (exclude): not used to group the rows, "
                          "nor in the adjustment or a model", "excluded", columns=excluded))
        from . import engine

        left_out = {**left_out, **dict.fromkeys(excluded, engine.EXCLUDED)}
    yes_no = (None if _as_classes(classes)
              else yes_no_target(frame[target_name], target_name, positive))
    if yes_no is not None:
        notes.insert(0, Note(f'"{target_name}" is a yes/no target: results are changes in '
                             f"{yes_no.label}, in percentage points", "target",
                             columns=[target_name]))
    elif _as_classes(classes):
        notes.insert(0, _classes_note(target_name))
    return Problem(frame, target_name, chosen, left_out, notes, excluded, kept)


def _classes_note(target_name: str) -> Note:
    """What a target read as classes gives, said once."""
    return Note(
        f'"{target_name}" is read as classes: results are changes in each class\'s chance, '
        "in percentage points, from one grouping of the rows, so at every value they add "
        "up to 0; they are not adjusted for the other columns' straight-line part as a "
        "number's or a yes/no target's curves are (one adjustment per class would break "
        "that sum)", "target", columns=[target_name])


def _as_classes(classes: Any) -> bool:
    """Whether ``classes`` asks for the target read as classes (None and False do not)."""
    return classes is not None and classes is not False


def _listed(names: Sequence[str], most: int = 5) -> str:
    """Column names quoted and joined for a sentence, at most ``most`` of them named."""
    quoted = [f'"{n}"' for n in names]
    if len(quoted) > most:
        return f"{', '.join(quoted[:most - 1])} and {len(quoted) - most + 1:,} more"
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} and {quoted[-1]}"


def _kept(frame: pd.DataFrame, given: Sequence[str]) -> list[str]:
    """The exact names of the columns to analyse even if they look like identifiers
    (``settings.keep``), matched as typed; a text that names no column may list several
    separated by commas ("rownames,ID")."""
    names: list[str] = []
    for text in given:
        try:
            parts = [resolve_column(frame, text, role="kept")]
        except StratPDInputError:
            if "," not in text:
                raise
            parts = [resolve_column(frame, t.strip(), role="kept")
                     for t in text.split(",") if t.strip()]
        names += [n for n in parts if n not in names]
    return names


def _excluded(frame: pd.DataFrame, target: str, given: Sequence[str],
              roles: Mapping[str, str]) -> list[str]:
    """The exact names of the columns to exclude, matched as typed (case, spaces and
    underscores ignored, like every other name); see
    :func:`stratpd_xl.engine.excluded_columns` for the rules and the sentences."""
    if not given:
        return []
    from . import engine

    return engine.excluded_columns(
        [str(c) for c in frame.columns], target, given, roles,
        resolve=lambda text: resolve_column(frame, text, role="excluded"),
    )


def _with_categories(
    frame: pd.DataFrame, target: str, categorical: Sequence[Any], notes: list[str]
) -> pd.DataFrame:
    if not categorical:
        return frame
    frame = frame.copy(deep=False)
    for name in categorical:
        column = resolve_column(frame, name, role="categorical")
        if column == target:
            raise StratPDInputError(
                f'the target "{target}" must stay numeric; leave it out of the categorical columns'
            )
        # A pandas category column is categorical for the engine, both as the feature and
        # when it stratifies the others; numbers keep their numeric order as categories.
        texts = (frame.attrs.get("texts") or {}).get(column)
        if texts is not None and len(texts) == len(frame):
            # Codes as typed: "007" and "7" are two categories, not one number 7.
            codes = pd.Series(texts, index=frame.index, dtype="category")
            merged = codes.groupby(frame[column], observed=True).nunique()
            number = merged.index[merged.to_numpy() > 1][0]
            same = sorted(codes[frame[column] == number].unique())[:3]
            notes.append(Note(
                f'"{column}": ' + " and ".join(f'"{c}"' for c in same)
                + " are kept apart as different categories, as typed", "reading",
                columns=[column],
            ))
            frame[column] = codes
        else:
            frame[column] = frame[column].astype("category")
    return frame


def _with_orders(frame: pd.DataFrame, target: str,
                 orders: Mapping[Any, Sequence[Any]]) -> pd.DataFrame:
    """The ``orders`` columns as ordered categories (values matched as typed: case and
    surrounding spaces ignored)."""
    if not orders:
        return frame
    frame = frame.copy(deep=False)
    for name, wanted in orders.items():
        column = resolve_column(frame, name, role="ordered")
        if column == target:
            raise StratPDInputError(
                f'the target "{target}" has no categories to order; give the order of a feature'
            )
        series = frame[column]
        present = (list(series.cat.categories) if isinstance(series.dtype, pd.CategoricalDtype)
                   else list(pd.unique(series.dropna())))
        by_text = {str(v).strip().casefold(): v for v in present}
        chosen: list[Any] = []
        for value in wanted:
            found = by_text.get(str(value).strip().casefold())
            if found is None:
                shown = ", ".join(f'"{v}"' for v in present[:8])
                raise StratPDInputError(
                    f'"{column}" has no value "{value}" to order; its values are {shown}'
                    + (" ..." if len(present) > 8 else "")
                )
            if found not in chosen:
                chosen.append(found)
        rest = [v for v in present if v not in chosen]
        frame[column] = pd.Categorical(series, categories=chosen + rest, ordered=True)
    return frame


def curve(
    frame: pd.DataFrame,
    target: Any,
    feature: Any,
    *,
    settings: Settings | None = None,
    categorical: Sequence[Any] = (),
    orders: Mapping[Any, Sequence[Any]] | None = None,
    how_to_keep: str = KEEP_BY_NAMING,
    how_to_expand: str = EVERY_POINT,
    positive: Any = None,
    classes: Any = None,
) -> CurveResult:
    """Partial dependence of ``target`` on one ``feature``: StratPD or CatStratPD by column type.

    Parameters are as for :func:`prepare` (``positive`` included; ``classes``: a curve per
    class of the target, as :func:`stratpd_xl.stratpd` makes them); ``settings`` carries every
    engine parameter and ``how_to_expand`` ends the note on a summarised curve (how to get
    every point).

    Raises
    ------
    StratPDInputError
        As :func:`prepare`, or when the engine cannot estimate the curve (with its reason).
    """
    from . import engine

    settings = settings or Settings()
    by = None if settings.by is None else resolve_column(frame, settings.by, role="by")
    problem = prepare(
        frame, target, [feature], settings=settings, categorical=categorical, orders=orders,
        how_to_keep=how_to_keep, positive=positive, keep=[by] if by else [], classes=classes,
    )
    name = problem.features[0]
    grouping = {} if by is None else {"by": by, "bands": settings.bands}
    if _as_classes(classes):
        grouping = {**grouping, "classes": classes}
    result = engine.partial_dependence(
        problem.frame, problem.target, name, positive=positive,
        **_engine_kwargs(settings, problem), **grouping,
    )
    notes = note_list(_with_evidence(problem.notes + _curve_notes(name, result, how_to_expand),
                                     problem))
    return CurveResult(result, problem.target, name, notes)


#: A column with fewer values than this beside the target cannot show that it moves with a
#: feature (the well-backed contrast's 20 rows): its gap notes are not said.
GAP_MIN_VALUES = 20


def _with_evidence(notes: list[str], problem: Problem) -> list[str]:
    """``notes`` without the gap notes of columns that have under :data:`GAP_MIN_VALUES`
    values beside the target.

    On Ames, "Pool.QC" (13 values in 2,930 rows) "moved with" 10 features, each
    association measured on its 13 rows, and ranked among the notes that matter most.
    """
    frame = problem.frame
    target = frame[problem.target].notna().to_numpy()

    def few(note: str) -> bool:
        columns = getattr(note, "columns", ())
        if getattr(note, "kind", "") != "gap" or not columns or columns[0] not in frame:
            return False
        return int((frame[columns[0]].notna().to_numpy() & target).sum()) < GAP_MIN_VALUES

    return [n for n in notes if not few(n)]


def analysis(
    frame: pd.DataFrame,
    target: Any,
    features: Sequence[Any] | None = None,
    *,
    settings: Settings | None = None,
    categorical: Sequence[Any] = (),
    orders: Mapping[Any, Sequence[Any]] | None = None,
    how_to_keep: str = KEEP_BY_NAMING,
    progress: Progress | None = None,
    positive: Any = None,
    classes: Any = None,
) -> AnalysisResult:
    """Curves of many features and the impact ranking.

    Parameters are as for :func:`prepare`; ``progress(done, total, feature)`` is called
    before each feature and once more at the end.

    Raises
    ------
    StratPDInputError
        As :func:`prepare`, or when no feature gave a curve (naming each one's reason).
    """
    from . import engine

    settings = settings or Settings()
    problem = prepare(
        frame, target, features, settings=settings, categorical=categorical, orders=orders,
        how_to_keep=how_to_keep, positive=positive, classes=classes,
    )
    result = engine.analyse(
        problem.frame, problem.target, problem.features, progress=progress,
        positive=positive, **_engine_kwargs(settings, problem),
        **({} if classes is None or classes is False else {"classes": classes}),
    )
    if result.impact.empty:
        reasons = "; ".join(f'"{f}": {why}' for f, why in result.skipped.items())
        raise StratPDInputError(
            f'no column gave a curve for "{problem.target}" ({reasons}); '
            "try a smaller min_samples_leaf or add rows"
        )
    # The engine's ranking knows its evidence: features the data cannot show (tied to other
    # columns) or back with few rows (thin) come after the others, its evidence column
    # saying why.
    ranking = result.impact
    notes = list(problem.notes)
    notes += [Note(f'skipped "{f}": {why}', "skipped", columns=[f], features=[f])
              for f, why in result.skipped.items()]
    # Columns restating the target: the ranking's one note per finding, naming every feature
    # it moves, instead of each curve's own.
    notes += list(result.impact.attrs.get("warnings") or [])
    for name, table in result.curves.items():
        notes += [n for n in _curve_notes(name, table, None)
                  if not (getattr(n, "kind", "") == "leak" and "leak" in n.facts)]
    notes += _thin_notes(ranking, len(frame))
    notes = _with_evidence(notes, problem)
    answer = AnalysisResult(
        ranking, result.curves, problem.target, dict(result.skipped),
        problem.left_out, notes, len(frame),
    )
    notes += unbacked_notes(answer)
    # Each fact once (a column's gaps once, not once per feature), the ones that matter first.
    notes = note_list(notes, ranking)
    return dataclasses.replace(answer, notes=notes, findings=findings(answer))


def scaled_curve(
    data: Any,
    target: Any,
    feature: Any,
    *,
    settings: Settings | None = None,
    categorical: Sequence[Any] = (),
    how_to_expand: str = EVERY_POINT,
    positive: Any = None,
    quiet: bool = False,
    out: Any = None,
    strata_rows: int | None = None,
    classes: Any = None,
) -> CurveResult:
    """:func:`curve` of a file read in chunks or of a Dask DataFrame (:mod:`stratpd_xl.scale`).

    Names resolve as typed (case, spaces and underscores ignored) against the file's or
    frame's columns; the reading's notes and the curve's warnings are the notes.  Progress
    per chunk goes to ``out`` (default stderr) unless ``quiet``; ``strata_rows`` is the
    most rows the strata are fitted on (default ``params.STRATA_ROWS``); ``classes`` as
    for :func:`curve`.
    """
    from . import scale

    settings = settings or Settings()
    target_name, (name,), excluded, kept, wanted = _scaled_names(data, target, [feature],
                                                                settings, categorical)
    kind = "categorical" if name in wanted else None
    result = scale.partial_dependence(
        data, target_name, name, kind=kind, positive=positive, quiet=quiet, out=out,
        **_strata_rows(strata_rows), **_parameters(settings, excluded, kept),
        **({"classes": classes} if _as_classes(classes) else {}),
    )
    notes = [_classes_note(target_name)] if _as_classes(classes) else []
    notes += [Note.of(n, "reading") for n in result.attrs.get("reading_notes") or []]
    notes = note_list(notes + _curve_notes(name, result, how_to_expand))
    return CurveResult(result, target_name, name, notes)


def scaled_analysis(
    data: Any,
    target: Any,
    features: Sequence[Any] | None = None,
    *,
    settings: Settings | None = None,
    positive: Any = None,
    quiet: bool = False,
    out: Any = None,
    strata_rows: int | None = None,
    classes: Any = None,
) -> AnalysisResult:
    """The impact ranking of a file read in chunks or of a Dask DataFrame (no curves);
    ``strata_rows`` and ``classes`` as for :func:`scaled_curve`."""
    from . import scale

    settings = settings or Settings()
    target_name, names, excluded, kept, _ = _scaled_names(data, target, features or [],
                                                          settings, ())
    ranking = scale.impact(data, target_name, names or None, positive=positive, quiet=quiet,
                           out=out, **_strata_rows(strata_rows),
                           **_parameters(settings, excluded, kept),
                           **({"classes": classes} if _as_classes(classes) else {}))
    notes = [_classes_note(target_name)] if _as_classes(classes) else []
    notes += [Note.of(n, "reading") for n in ranking.attrs.get("reading_notes") or []]
    notes += list(ranking.attrs.get("warnings") or [])
    rows = (ranking.attrs.get("scale") or {}).get("rows_read", 0)
    return AnalysisResult(ranking, {}, target_name, notes=note_list(notes), n_rows=rows)


def _strata_rows(rows: int | None) -> dict[str, int]:
    return {} if rows is None else {"strata_rows": rows}


def _scaled_names(data: Any, target: Any, features: Sequence[Any], settings: Settings,
                  categorical: Sequence[Any]
                  ) -> tuple[str, list[str], list[str], list[str], set[str]]:
    from . import scale

    header = pd.DataFrame(columns=scale.columns(data))
    target_name = resolve_column(header, target, role="target")
    names = [resolve_column(header, f, role="feature") for f in features]
    excluded = [resolve_column(header, c, role="exclude") for c in settings.exclude or ()]
    kept = [resolve_column(header, c, role="keep") for c in settings.keep or ()]
    wanted = {resolve_column(header, c, role="categorical") for c in categorical}
    return target_name, names, excluded, kept, wanted


def _thin_notes(ranking: pd.DataFrame, n_rows: int) -> list[Note]:
    """One note per feature the ranking marks thin: why it comes after the others."""
    if "thin" not in ranking.columns:
        return []
    out = []
    for row in ranking[ranking["thin"].astype(bool)].itertuples(index=False):
        rows = int(row.rows)
        out.append(Note(
            f'"{row.feature}" is ranked after the features backed by more rows: its curve '
            f"rests on {counted(rows)} of {n_rows:,} ({rows / max(n_rows, 1):.0%}; thin in "
            "the ranking), so its impact is measured on far less evidence than theirs",
            "thin", columns=[row.feature], features=[row.feature], moves=0.3, rows=rows,
            ranked=True,  # the ranking's own mark, merged apart from the engine's "thin"
        ))
    return out


def warm_up() -> pd.DataFrame:
    """Make numba's kernels ready, then run a numeric and a categorical curve once on a tiny
    table, through :func:`curve`.

    numba compiles the kernels on first use (or loads them from its on-disk cache, which
    still takes a moment; the numpy fallback answers meanwhile); a front end whose user
    waits on the first call (an Excel formula) runs this in the background beforehand, and
    the installers and ``stratpd-xl warm-up`` run it once to fill the cache.

    Returns
    -------
    DataFrame
        The numeric curve, for a front end to warm its chart code with.
    """
    import numpy as np

    from . import (
        _backend,
        engine,  # noqa: F401 - importing it gives ENGINE its compile
    )
    from .input._scan_kernels import SCAN

    _backend.ENGINE.wait()  # the compiles themselves, in their threads (see _backend)
    SCAN.wait()
    rng = np.random.default_rng(0)
    n = 80
    frame = pd.DataFrame({"x": rng.normal(size=n), "c": rng.choice(["a", "b", "c"], size=n)})
    frame["y"] = 2 * frame["x"] + (frame["c"] == "b") + rng.normal(scale=0.1, size=n)
    settings = Settings.make(min_samples_leaf=5)
    numeric = curve(frame, "y", "x", settings=settings).curve
    curve(frame, "y", "c", settings=settings)
    return numeric


@dataclass(frozen=True)
class InteractionsResult:
    """The interaction ranking and, for its strongest pairs, a by-group curve each.

    Attributes
    ----------
    ranking : DataFrame
        ``feature_1``, ``feature_2``, ``strength``, ``size``, strongest first (see
        :func:`stratpd_xl.interactions`).
    curves : dict
        (feature, by) -> the curve of ``feature`` by groups of ``by``, for the top pairs
        whose strength is above 0 (the numeric feature of a pair as the curve's, when
        there is one).
    target : str
        Exact name of the target.
    notes : list of str
        Reading notes, left-out columns and the ranking's warnings.
    findings : list of str
        The strongest pairs in words, each with what its by-group curve shows
        (:func:`stratpd_xl.presentation.words.pair_sentences`); also the ranking's
        ``attrs["findings"]``.
    """

    ranking: pd.DataFrame
    curves: dict[tuple[str, str], pd.DataFrame]
    target: str
    notes: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)


def interactions(
    frame: pd.DataFrame,
    target: Any,
    features: Sequence[Any] | None = None,
    *,
    settings: Settings | None = None,
    categorical: Sequence[Any] = (),
    how_to_keep: str = KEEP_BY_NAMING,
    progress: Progress | None = None,
    positive: Any = None,
    top: int = 3,
) -> InteractionsResult:
    """The interaction ranking, and a by-group curve for each of its ``top`` pairs.

    Parameters are as for :func:`analysis`; ``settings.bands`` and ``settings.max_features``
    shape the ranking, ``top`` says how many pairs get a by-group curve (0: none).
    """
    from . import engine

    settings = settings or Settings()
    problem = prepare(
        frame, target, features, settings=settings, categorical=categorical,
        how_to_keep=how_to_keep, positive=positive,
    )
    ranking = engine.interactions(
        problem.frame, problem.target, problem.features, positive=positive,
        progress=progress, min_samples_leaf=settings.min_samples_leaf,
        min_slopes_per_x=settings.min_slopes_per_x, random_state=settings.random_state,
        honest=settings.honest, bands=settings.bands, max_features=settings.max_features,
        exclude=problem.excluded,
    )
    notes = list(problem.notes) + [str(w) for w in ranking.attrs.get("warnings") or []]
    notes += [f'skipped "{f}": {why}' for f, why in (ranking.attrs.get("skipped") or {}).items()]
    curves: dict[tuple[str, str], pd.DataFrame] = {}
    for _, row in ranking.head(top).iterrows():
        if not row["strength"] > 0:
            break
        a, b = str(row["feature_1"]), str(row["feature_2"])
        numeric_b = pd.api.types.is_numeric_dtype(problem.frame[b].dtype)
        numeric_a = pd.api.types.is_numeric_dtype(problem.frame[a].dtype)
        feature, by = (b, a) if numeric_b and not numeric_a else (a, b)
        try:
            curve = engine.partial_dependence(
                problem.frame, problem.target, feature, positive=positive,
                **_engine_kwargs(settings, problem), by=by, bands=settings.bands,
            )
        except StratPDInputError as exc:
            notes.append(f'no curve of "{feature}" by "{by}": {exc}')
            continue
        curves[(feature, by)] = curve
    from .presentation.words import pair_sentences

    # The pairs in words (each with what its by-group curve shows) travel with the ranking,
    # so every writer of it says them: the printout, --json and the workbook.
    said = pair_sentences(ranking, curves, top=max(top, 1))
    ranking.attrs["findings"] = said
    return InteractionsResult(ranking, curves, problem.target, note_list(notes), said)


@dataclass(frozen=True)
class SurfaceResult:
    """The two-way partial dependence of the target on two features (experimental).

    Attributes
    ----------
    surface : DataFrame
        See :func:`stratpd_xl.stratpd2`.
    target, feature_1, feature_2 : str
        Exact column names.
    notes : list of str
        Reading notes, left-out columns and where the data are thin.
    """

    surface: pd.DataFrame
    target: str
    feature_1: str
    feature_2: str
    notes: list[str] = field(default_factory=list)


def surface(
    frame: pd.DataFrame,
    target: Any,
    feature_1: Any,
    feature_2: Any,
    *,
    settings: Settings | None = None,
    categorical: Sequence[Any] = (),
    how_to_keep: str = KEEP_BY_NAMING,
    positive: Any = None,
) -> SurfaceResult:
    """The two-way surface of ``target`` over ``feature_1`` and ``feature_2``.

    ``settings.grid`` sets its points per feature.  The same column twice, or too few rows
    for the grid, is one sentence naming the fix.
    """
    from . import engine

    settings = settings or Settings()
    problem = prepare(
        frame, target, [feature_1, feature_2], settings=settings, categorical=categorical,
        how_to_keep=how_to_keep, positive=positive,
    )
    if len(problem.features) < 2:
        raise StratPDInputError(
            f'a two-way surface needs two different columns; "{problem.features[0]}" is given '
            "twice: choose another column for the second feature"
        )
    f1, f2 = problem.features[:2]
    result = engine.stratpd2(
        problem.frame, problem.target, f1, f2, positive=positive,
        min_samples_leaf=settings.min_samples_leaf, min_slopes_per_x=settings.min_slopes_per_x,
        random_state=settings.random_state, honest=settings.honest, grid=settings.grid,
        exclude=problem.excluded, keep=problem.kept,
    )
    # "named twice" notes from prepare are replaced by the sentence above
    notes = [n for n in problem.notes if "is named" not in n]
    notes += [str(w) for w in result.attrs.get("warnings") or []]
    return SurfaceResult(result, problem.target, f1, f2, note_list(notes))


def _engine_kwargs(settings: Settings, problem: Problem) -> dict[str, Any]:
    """The engine's keywords: the settings, and the excluded and kept columns by their exact
    names (a kept column not named as a feature would otherwise leave the engine's strata)."""
    return _parameters(settings, problem.excluded, problem.kept)


def _parameters(settings: Settings, excluded: Any, kept: Any = ()) -> dict[str, Any]:
    return {
        "exclude": excluded,
        "keep": kept,
        "min_samples_leaf": settings.min_samples_leaf,
        "min_slopes_per_x": settings.min_slopes_per_x,
        "n_trials": settings.n_trials,
        "random_state": settings.random_state,
        "max_points": settings.max_points,
        "honest": settings.honest,
        "adjust": settings.adjust,
    }


def summary_note(result: pd.DataFrame, how_to_expand: str = EVERY_POINT) -> str | None:
    """The sentence saying what each point of a summarised curve stands for, or None."""
    full = result.attrs.get("n_points_full")
    if not isinstance(full, int) or full <= len(result):
        return None
    return (
        f"the curve of \"{result.attrs.get('feature', 'x')}\" shows {len(result):,} of its "
        f"{full:,} points; each point summarises the values up to the next one (slope: their "
        f"average; n_x: how many); for every point use {how_to_expand}"
    )


def _curve_notes(name: str, result: pd.DataFrame, how_to_expand: str | None) -> list[str]:
    notes = [str(f) for f in result.attrs.get("findings") or []]
    notes += [Note.of(w) for w in result.attrs.get("warnings") or []]
    if how_to_expand is not None:
        note = summary_note(result, how_to_expand)
        if note:
            notes.append(note)
    return notes


# --------------------------------------------------------------------------- findings

#: Features stated in words by default (the top of the ranking).
TOP_FINDINGS = 3


def finding(result: pd.DataFrame, *, rank: int = 0, share: float | None = None
            ) -> Finding | None:
    """The numbers to state one curve in words, or None when it has none to state.

    Parameters
    ----------
    result : DataFrame
        A numeric curve (the engine's ``attrs["rise"]``) or categorical effects (its
        ``attrs["contrast"]``).
    rank, share
        The feature's place (0: asked for alone) and share in the impact ranking.
    """
    return Finding.from_result(result, rank=rank, share=share)


def findings(result: AnalysisResult, top: int = TOP_FINDINGS) -> list[Finding]:
    """The findings of the ``top`` best-ranked features that have a well-backed answer,
    largest impact first (``rank`` 1, 2, 3 in that order).

    A categorical feature none of whose contrasts is well backed (no two categories of 20
    rows: a county, a country, a code column read as text) leads no sentence, whatever its
    place in the ranking: its impact rests on categories of a few rows each
    (:func:`unbacked_notes` says so); nor does a feature the ranking sets apart as tied
    (:mod:`stratpd_xl.presentation.evidence`), whose effect the data cannot show with the
    other columns held fixed.
    """
    out: list[Finding] = []
    for f in _ranked_findings(result):
        if len(out) >= top:
            break
        if f.well_backed:
            out.append(dataclasses.replace(f, rank=len(out) + 1))
    group = _leading_group(result)
    if out and group is not None:
        # Its impact beside the first feature's: the sizes a sentence quotes are changes, the
        # ranking's impacts another measure.
        features = result.impact["feature"].astype(str)
        versus = float(result.impact.loc[features == out[0].feature, "impact"].iloc[0])
        out[0] = dataclasses.replace(out[0], lead_group={**group, "versus": versus})
    return out


def _leading_group(result: AnalysisResult) -> dict[str, Any] | None:
    """The tied group whose first member has the largest impact of all, or None.

    Ames' floor areas (``area`` = ``X1st.Flr.SF`` + ``X2nd.Flr.SF`` + ``Low.Qual.Fin.SF``) are
    set apart as tied, so the sentences begin with ``Overall.Qual``; the first says that the
    group would lead, naming it and its first member's impact, without a number per column
    (:class:`~stratpd_xl.schema.Finding`'s ``lead_group``)."""
    from .schema import tied_features

    ranking = result.impact
    if ranking.empty or "impact" not in ranking.columns:
        return None
    impact = pd.to_numeric(ranking["impact"], errors="coerce").fillna(-np.inf)
    head = int(np.argmax(impact.to_numpy()))
    first = str(ranking["feature"].iloc[head])
    if first not in _tied(result):
        return None
    # The group: every column tied to it, directly or through another member (area's note
    # names the two floors, the low-quality area's names area).
    ties = tied_features(result.notes)
    group = {first, *ties.get(first, ())}
    grown = True
    while grown:
        grown = False
        for f, others in ties.items():
            linked = {f, *others}
            if group & linked and not linked <= group:
                group |= linked
                grown = True
    by_impact = list(ranking["feature"].astype(str).iloc[np.argsort(-impact.to_numpy(),
                                                                     kind="stable")])
    # A column the data do show (ranked, not tied) is no member, whatever a note names.
    shown = set(by_impact) - _tied(result)
    members = sorted(group - shown, key=lambda c: (by_impact.index(c) if c in by_impact
                                                   else len(by_impact), c))
    # A feature tied alone (to columns whose effects the data do show: Hitters' CHits to
    # CAtBat, CRBI and CRuns) is said with the columns that determine it.
    return {"features": members, "first": first, "impact": float(impact.iloc[head]),
            "determined_by": [c for c in ties.get(first, ()) if c not in members]}


def _tied(result: AnalysisResult) -> set[str]:
    from .presentation.evidence import tied

    return tied(result.impact)


def _ranked_findings(result: AnalysisResult) -> Iterator[Finding]:
    """The findings in the ranking's order, without the features it sets apart as tied:
    the data cannot show their effects with the other columns held fixed, which is what
    a sentence says ("other columns held alike")."""
    ranking = result.impact
    tied = _tied(result)
    for rank, (name, share) in enumerate(
        zip(ranking["feature"].astype(str), ranking["share"], strict=True), start=1
    ):
        curve_ = result.curves.get(name)
        if curve_ is None or name in tied:
            continue
        f = finding(curve_, rank=rank, share=float(share) if np.isfinite(share) else None)
        if f is not None:
            yield f


def unbacked_notes(result: AnalysisResult, top: int = TOP_FINDINGS) -> list[Note]:
    """One note per feature ranked above the conclusion's last sentence that leads no
    sentence because none of its contrasts is well backed (:func:`findings`)."""
    out: list[Note] = []
    said = 0
    for f in _ranked_findings(result):
        if said >= top:
            break
        if f.well_backed:
            said += 1
            continue
        rows = (f" (its two largest have {max(f.rows):,} and {min(f.rows):,} rows)"
                if f.rows else "")
        out.append(Note(
            f'"{f.feature}" ranks {_ordinal(f.rank)} but leads no sentence: no two of its '
            f"categories have 20 rows{rows}, so its impact rests on categories of a few rows "
            "each and can be their noise; merge rare categories, or leave it out (exclude) "
            "if it names the rows (a county, a country, a code)",
            "thin", columns=[f.feature], features=[f.feature], moves=0.5, unbacked=True,
        ))
    return out


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# --------------------------------------------------------------------------- model check


@dataclass(frozen=True)
class CompareResult:
    """StratPD beside a fitted model's curves for one feature, or a pair's two-way PD.

    Attributes
    ----------
    table : DataFrame
        One feature: :func:`stratpd_xl.model.compare_curves`'s table, its ``attrs`` plus
        ``sentence`` (where and likely why the curves disagree), ``model_sentence`` (the
        model's held-out score in words) and ``notes``.  A pair:
        :func:`stratpd_xl.model.pair_table`'s long table, with ``sentence`` (H² in words).
    target : str
    features : list of str
        One feature, or the pair.
    ice : DataFrame or None
        Individual curves (:func:`stratpd_xl.model.ice_table`) when asked for.
    notes : list of str
        Reading notes, columns left out, the engine's warnings, the model's columns left out.
    """

    table: pd.DataFrame
    target: str
    features: list[str]
    ice: pd.DataFrame | None = None
    notes: list[str] = field(default_factory=list)


def _model_seed(settings: Settings) -> int:
    # random_state=None means "no seed" for StratPD; the model still needs one to be
    # repeatable, so it takes the table's default.
    return DEFAULT_SEED if settings.random_state is None else int(settings.random_state)


def _check_model_input(problem: Problem, positive: Any) -> None:
    """The one-sentence errors for a table no model can be fitted to or a feature it cannot use."""
    from . import model

    y, _ = model.model_target(problem.frame, problem.target, positive)
    present = y[~pd.isna(y)]
    if present.size < model.MIN_MODEL_ROWS:
        raise StratPDInputError(
            f'only {counted(present.size)} {"has" if present.size == 1 else "have"} a value in '
            f'"{problem.target}"; fitting a model '
            f"to compare with needs at least {model.MIN_MODEL_ROWS}: add rows, or use StratPD "
            "alone"
        )
    distinct = pd.unique(present)
    if distinct.size < 2:
        raise StratPDInputError(
            f'target "{problem.target}" has the same value ({distinct[0]:g}) in every row; a '
            "model has nothing to learn: pick a target whose values vary"
        )
    _check_model_features(problem)


def _check_model_features(problem: Problem) -> None:
    """The one-sentence error for a feature with more categories than the model can use."""
    from . import model

    for name in problem.features:
        column = problem.frame[name]
        if _is_text_like(column):
            n = int(column.nunique(dropna=True))
            if n > model.MAX_CATEGORIES:
                raise StratPDInputError(
                    f'feature "{name}" has {n:,} categories, more than the model can use '
                    f"({model.MAX_CATEGORIES}): merge rare categories into one (e.g. \"other\") "
                    "or compare another column"
                )


def _is_text_like(column: pd.Series) -> bool:
    from . import engine

    return engine.column_kind(column) == CATEGORICAL


#: Most individual curves drawn: each is a line of the picture and ``ICE_POINTS`` rows of the
#: table (the default is 50).
MAX_ICE_ROWS = 10_000


def _ice_rows(value: Any, name: str) -> int:
    """How many rows' individual curves: None for the default, else a whole number from 1 to
    ``MAX_ICE_ROWS`` (given as 10, 10.0 or "10", as cells hand numbers)."""
    from .model import ICE_ROWS

    if value is None:
        return ICE_ROWS
    number: Any = value
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if (isinstance(number, bool) or not isinstance(number, int | float | np.number)
            or not np.isfinite(number) or not float(number).is_integer()
            or not 1 <= number <= MAX_ICE_ROWS):
        raise StratPDInputError(
            f"{name} must be a whole number of rows from 1 to {MAX_ICE_ROWS:,} (how many "
            f"rows' curves to draw; default {ICE_ROWS}); got {value!r}"
        )
    return int(number)


def compare(
    frame: pd.DataFrame,
    target: Any,
    feature: Any,
    *,
    settings: Settings | None = None,
    categorical: Sequence[Any] = (),
    orders: Mapping[Any, Sequence[Any]] | None = None,
    how_to_keep: str = KEEP_BY_NAMING,
    positive: Any = None,
    ice: bool = False,
    ice_rows: int | None = None,
    classes: Any = None,
) -> CompareResult:
    """StratPD's curve of ``feature`` beside a fitted model's PDP and ALE, or a pair's PD.

    ``feature`` is one column, or a list of two for the model's two-way partial dependence
    and Friedman's H².  Other parameters are as for :func:`curve`; ``ice`` adds individual
    curves of ``ice_rows`` random rows (default 50) for one feature.  ``classes`` (as for
    :func:`curve`): StratPD's curve of each class beside one classifier's per-class partial
    dependence (:func:`stratpd_xl.model.compare_classes`: ``class`` first, an agreement per
    class).

    Raises
    ------
    StratPDInputError
        As :func:`curve`; too few rows to fit a model; a target with one value; a feature
        with more categories than the model can use; a pair that is not two columns.
    """
    from . import engine, model
    from .presentation import compare as words

    settings = settings or Settings()
    n_ice = _ice_rows(ice_rows, "ice_rows")
    pair = isinstance(feature, list | tuple)
    named = list(feature) if pair else [feature]
    if pair and len(named) != 2:
        raise StratPDInputError(
            f"a two-way comparison takes two features; got {len(named)}: name exactly two"
        )
    by_class = _as_classes(classes)
    if by_class and (pair or ice):
        raise StratPDInputError(
            "classes compares one feature's class curves with the model's; a pair or ICE "
            "curves are for a number or yes/no target: leave out classes, or the second "
            "feature and ICE")
    problem = prepare(
        frame, target, named, settings=settings, categorical=categorical, orders=orders,
        how_to_keep=how_to_keep, positive=positive, classes=classes,
    )
    if pair and len(problem.features) != 2:
        raise StratPDInputError(
            f'a two-way comparison takes two different features; "{problem.features[0]}" '
            "is named twice: name another column"
        )
    if by_class:
        return _compare_classes(problem, settings, positive, classes)
    _check_model_input(problem, positive)
    seed = _model_seed(settings)
    fitted = model.fit_model(problem.frame, problem.target, columns=problem.model_columns,
                             positive=positive, random_state=seed)
    notes = list(problem.notes) + _model_left_out(fitted.left_out)
    if pair:
        table = model.pair_table(fitted, (problem.features[0], problem.features[1]), seed=seed)
        table.attrs["sentence"] = words.pair_sentence(table.attrs)
        table.attrs["model_sentence"] = words.model_sentence(
            {**table.attrs, "target": problem.target})
        table.attrs["notes"] = notes = note_list(notes)
        return CompareResult(table, problem.target, problem.features, None, notes)
    name = problem.features[0]
    curve_ = engine.partial_dependence(
        problem.frame, problem.target, name, positive=positive,
        **_engine_kwargs(settings, problem),
    )
    # One collected set, as an analysis's: the reading notes, the model's columns left out
    # and the curve's warnings, each fact once and ranked.
    notes = note_list(notes + _curve_notes(name, curve_, None))
    table = model.compare_curves(fitted, curve_, seed=seed)
    table.attrs["sentence"] = words.agreement_sentence(table.attrs)
    table.attrs["model_sentence"] = words.model_sentence(table.attrs)
    table.attrs["notes"] = notes
    individual = None
    if ice:
        individual = model.ice_table(
            fitted, name, model.curve_grid(fitted, curve_, name),
            labels=curve_[curve_.columns[0]].to_numpy(),
            n_rows=n_ice, seed=seed,
        )
    return CompareResult(table, problem.target, problem.features, individual, notes)


def _compare_classes(problem: Problem, settings: Settings, positive: Any,
                     classes: Any) -> CompareResult:
    """:func:`compare` of a target read as classes: one classifier, compared per class."""
    from . import engine, model
    from .presentation import compare as words

    name = problem.features[0]
    curves = engine.partial_dependence(
        problem.frame, problem.target, name, positive=positive, classes=classes,
        **_engine_kwargs(settings, problem),
    )
    rows = int(problem.frame[problem.target].notna().sum())
    if rows < model.MIN_MODEL_ROWS:
        raise StratPDInputError(
            f'only {counted(rows)} have a value in "{problem.target}"; fitting a model to '
            f"compare with needs at least {model.MIN_MODEL_ROWS}: add rows, or use StratPD "
            "alone")
    _check_model_features(problem)
    seed = _model_seed(settings)
    fitted = model.fit_classes(problem.frame, problem.target, curves.attrs["all_classes"],
                               columns=problem.model_columns, random_state=seed)
    notes = note_list(list(problem.notes) + _model_left_out(fitted.left_out)
                      + _curve_notes(name, curves, None))
    table = model.compare_classes(fitted, curves, seed=seed)
    checks = table.attrs["class_checks"]
    for attrs in checks.values():
        attrs["sentence"] = words.agreement_sentence(attrs)
        attrs["model_sentence"] = words.model_sentence(attrs)
    table.attrs["sentence"] = words.class_agreement_sentence(table.attrs)
    table.attrs["model_sentence"] = words.class_model_sentence(table.attrs)
    table.attrs["notes"] = notes
    return CompareResult(table, problem.target, problem.features, None, notes)


#: Points of an ICE curve of a numeric feature (quantiles of its rows, 2.5 % .. 97.5 %).
ICE_POINTS = 50


def ice(
    frame: pd.DataFrame,
    target: Any,
    feature: Any,
    *,
    settings: Settings | None = None,
    categorical: Sequence[Any] = (),
    orders: Mapping[Any, Sequence[Any]] | None = None,
    how_to_keep: str = KEEP_BY_NAMING,
    positive: Any = None,
    rows: int | None = None,
) -> CompareResult:
    """Individual conditional expectation curves of a fitted model for ``rows`` random rows.

    The curves run over ``ICE_POINTS`` quantiles of the feature (every category of a
    categorical one); ``table`` is :func:`stratpd_xl.model.ice_table`'s, with the model's
    score in ``attrs["model_sentence"]``.  Raises as :func:`compare`.
    """
    from . import model
    from .presentation import compare as words

    settings = settings or Settings()
    n_rows = _ice_rows(rows, "rows")  # before the model is fitted
    problem = prepare(
        frame, target, [feature], settings=settings, categorical=categorical, orders=orders,
        how_to_keep=how_to_keep, positive=positive,
    )
    _check_model_input(problem, positive)
    seed = _model_seed(settings)
    fitted = model.fit_model(problem.frame, problem.target, columns=problem.model_columns,
                             positive=positive, random_state=seed)
    name = problem.features[0]
    grid = model.feature_grid(fitted, name, ICE_POINTS)
    table = model.ice_table(fitted, name, grid, n_rows=n_rows, seed=seed)
    yes_no = yes_no_target(problem.frame[problem.target], problem.target, positive)
    table.attrs.update(
        model_r2=fitted.score.get("r2"), model_auc=fitted.score.get("auc"),
        model_brier=fitted.score.get("brier"),
        model_rows={"train": fitted.score.get("n_train"), "test": fitted.score.get("n_test")},
        target_label=yes_no.label if yes_no is not None else None,
    )
    table.attrs["model_sentence"] = words.model_sentence(table.attrs)
    notes = note_list(list(problem.notes) + _model_left_out(fitted.left_out))
    table.attrs["notes"] = notes
    return CompareResult(table, problem.target, [name], table, notes)


def model_check(
    frame: pd.DataFrame,
    target: Any,
    result: AnalysisResult,
    *,
    settings: Settings | None = None,
    categorical: Sequence[Any] = (),
    orders: Mapping[Any, Sequence[Any]] | None = None,
    how_to_keep: str = KEEP_BY_NAMING,
    positive: Any = None,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """One fitted model's agreement with every curve of an analysis (a report's model check).

    The model is fitted once on the analysed table and compared with each curve of
    ``result`` (:func:`stratpd_xl.model.compare_curves`); ``progress(done, total, label)``
    is called before the fit ("fitting a model"), before each feature's comparison and
    once at the end with ``done == total``.

    Returns
    -------
    DataFrame
        One row per feature in the ranking's order: ``feature``, ``kind``, ``agreement``,
        ``agreement_ale``, ``verdict`` (which curve to believe, in a few words:
        :func:`stratpd_xl.presentation.compare.verdict`), ``extrapolation``, ``largest_gap``,
        ``sentence``.  ``attrs``: ``target``, ``model_r2``, ``model_auc``, ``model_brier``,
        ``model_rows``, ``model_sentence``, ``notes`` (columns the model left out) and
        ``tables`` (feature -> :func:`stratpd_xl.model.compare_curves`'s table, for the
        picture).

    Raises
    ------
    StratPDInputError
        As :func:`compare` (too few rows to fit a model, a target with one value).
    """
    from . import model
    from .presentation import compare as words

    settings = settings or Settings()
    names = list(result.curves)
    # A target read as classes: one classifier, each curve compared class by class.
    by_class = next((c.attrs["all_classes"] for c in result.curves.values()
                     if "all_classes" in c.attrs), None)
    problem = prepare(
        frame, target, names, settings=settings, categorical=categorical, orders=orders,
        how_to_keep=how_to_keep, positive=positive, classes=by_class is not None or None,
    )
    if by_class is None:
        _check_model_input(dataclasses.replace(problem, features=[]), positive)
    seed = _model_seed(settings)
    order = [str(f) for f in result.impact["feature"] if str(f) in result.curves]
    if progress is not None:
        progress(0, len(order) + 1, "fitting a model")
    if by_class is None:
        fitted = model.fit_model(problem.frame, problem.target,
                                 columns=problem.model_columns, positive=positive,
                                 random_state=seed)
    else:
        fitted = model.fit_classes(problem.frame, problem.target, by_class,
                                   columns=problem.model_columns, random_state=seed)
    rows = []
    attrs: dict[str, Any] = {}
    tables: dict[str, pd.DataFrame] = {}
    for i, name in enumerate(order, start=1):
        if name not in fitted.columns:
            continue  # left out of the model (too many categories): said in the notes
        if progress is not None:
            progress(i, len(order) + 1, name)
        if by_class is None:
            table = model.compare_curves(fitted, result.curves[name], seed=seed)
            said, weakest = words.agreement_sentence(table.attrs), table.attrs
        else:
            table = model.compare_classes(fitted, result.curves[name], seed=seed)
            for one in table.attrs["class_checks"].values():
                one["sentence"] = words.agreement_sentence(one)
            said = words.class_agreement_sentence(table.attrs)
            checks = table.attrs["class_checks"]
            weakest = min(checks.values(), key=lambda c: float(c["agreement"])
                          if np.isfinite(c["agreement"]) else 2.0)
        attrs = table.attrs
        tables[name] = table
        rows.append({
            "feature": name,
            "kind": str(table.attrs.get("kind", "numeric")),
            "agreement": table.attrs["agreement"],
            "agreement_ale": table.attrs["agreement_ale"],
            "verdict": words.verdict(weakest),
            "extrapolation": table.attrs["extrapolation"],
            "largest_gap": weakest.get("largest_gap", float("nan")),
            "sentence": said,
        })
    check = pd.DataFrame(rows, columns=["feature", "kind", "agreement", "agreement_ale",
                                        "verdict", "extrapolation", "largest_gap", "sentence"])
    check.attrs = {
        "tables": tables,
        "target": problem.target,
        "model_r2": fitted.score.get("r2"),
        "model_auc": fitted.score.get("auc"),
        "model_brier": fitted.score.get("brier"),
        "model_rows": {"train": fitted.score.get("n_train"), "test": fitted.score.get("n_test")},
        "notes": _model_left_out(fitted.left_out),
    }
    check.attrs["model_sentence"] = (
        words.model_sentence({**check.attrs, "target_label": attrs.get("target_label")})
        if by_class is None else words.class_model_sentence(attrs))
    if progress is not None:
        progress(len(order) + 1, len(order) + 1, "")
    return check
