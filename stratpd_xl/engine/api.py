"""Public engine API: StratPD, CatStratPD, and a model-free impact ranking.

Results are plain DataFrames with documented columns and ``attrs`` describing how they were
made; plotting and spreadsheets live elsewhere (``stratpd_xl.presentation``,
``stratpd_xl.input.sheet``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import _backend
from .._backend import one_blas_thread
from ..errors import StratPDInputError
from ..params import PARAMETERS, Settings, column_arguments
from ._design import _shared_design
from ._finish import _evidence_rows, _impact, _ranking
from ._fit import KEEP_IN_API, _table
from ._groups import curves_by_group
from ._table import (
    CATEGORICAL,
    NUMERIC,
    Table,
    build_table,
    checked_frame,
    column_label,
    excluded_columns,
    require_column,
)
from .stages import _run, class_ranking, class_table

Progress = Callable[[int, int, str], None]
# Defaults of the keyword arguments below, from the one parameter table.
_DEFAULT: dict[str, Any] = {name: p.default for name, p in PARAMETERS.items()}


@one_blas_thread()
def stratpd(
    data: pd.DataFrame,
    target: str,
    feature: str,
    *,
    min_samples_leaf: int = _DEFAULT["min_samples_leaf"],
    min_slopes_per_x: int = _DEFAULT["min_slopes_per_x"],
    n_trials: int = _DEFAULT["n_trials"],
    random_state: int | None = _DEFAULT["random_state"],
    max_points: int | None = _DEFAULT["max_points"],
    honest: bool = _DEFAULT["honest"],
    adjust: bool = _DEFAULT["adjust"],
    positive: Any = None,
    by: str | None = None,
    bands: int = _DEFAULT["bands"],
    exclude: str | Iterable[str] | None = None,
    classes: Any = None,
) -> pd.DataFrame:
    """Partial dependence of ``target`` on a numeric ``feature``, from the data alone.

    Parameters
    ----------
    data : DataFrame
        The target and the other columns; text, bool and category columns are fine.
        Missing values (NaN, None, NaT) and infinite numbers count as missing.
    target, feature : str
        Column names.  ``feature`` must be numeric (int, float or datetime).
    min_samples_leaf : int, default 10
        Smallest stratum.  Smaller strata hold the other columns more constant but are
        noisier.
    min_slopes_per_x : int, default 5
        x values backed by fewer leaf slopes are dropped from the curve.  A leaf gives at
        most one slope at any x, so the threshold is capped at the number of leaves.
    n_trials : int, default 1
        With more than 1, re-estimate the curve on ``n_trials`` random halves of the rows
        and add ``pd_low`` and ``pd_high``: ``pd`` -/+ Student's t quantile (95 %, trials
        - 1 degrees of freedom) times the trials' standard deviation at each point (each
        trial centred like ``pd``, so the band measures the curve's shape).  The spread of
        half-sample estimates is that of the full-data estimate; the band does not allow
        for the estimator's bias (e.g. a smeared step).  ``pd`` itself stays the full-data
        curve.  That band is per point: each point is inside it 95 % of the time, the whole
        curve far less often.  ``curve_low`` and ``curve_high`` are a simultaneous band
        (sup-t: the same standard deviations times one critical value for every point) that
        holds the whole true curve about 95 % of the time (``benchmarks/accuracy.py
        --only coverage``).
    random_state : int, optional
        Seed for the honest split and the trials' halves; the same seed gives the same result.
    max_points : int or None, default 200
        Most points of the curve.  A feature with more distinct values (kept after
        ``min_slopes_per_x``) gets points of the full-resolution curve chosen half at
        quantiles of the rows and half evenly over the range, first and last included; each
        then summarises the full-resolution points up to the next one.  ``None`` (or 0)
        keeps every distinct value.
    honest : bool, default True
        Stratify every row with a tree grown on the other half of the rows (cross-fitting).
        ``False`` grows one tree on all rows, as the paper does; that shrinks effects.
    adjust : bool, default True
        Take the leaf slopes on the target minus the other columns' part where that
        measurably helps: inside a stratum the other columns still vary a little, and with
        many columns correlated with x that variation inflates x's slope.  The part is a
        least-squares fit of the target on x (as a piecewise-linear basis) and the other
        columns inside the strata, with a ridge chosen by out-of-fold error; it is applied
        only when it reduces the out-of-fold error inside the strata by at least 1 %, and
        never when the others explain over 95 % of x inside the strata, with fewer than 10
        rows per coefficient or over 40 million cells.  ``attrs["adjusted"]`` says whether
        it was applied and ``attrs["adjust_note"]`` why not.  ``False`` uses the target as
        it is, as the paper does.
    positive : optional
        For a yes/no target (bool, two texts, 0/1): the value that counts as 1.  Default a
        TRUE/yes/1-like value, else the rarer one; given for a target with more values, all
        others count as 0.  Results are then changes in the probability of that value, in
        percentage points, and ``attrs`` gain ``positive``, ``target_label``
        (``"P(churn = yes)"``) and ``units``.
    by : str, optional
        A column to group the rows by: one curve per level of a categorical ``by`` (at most
        12), or per band of a numeric one (``bands`` bands holding equal numbers of rows,
        labelled by their ranges).  See "Returns, by group".
    bands : int, default 4
        Bands of a numeric ``by``; a column with that many distinct values or fewer gets
        one group per value.
    exclude : str or list of str, optional
        Columns to leave out of the strata and the adjustment, as if the table did not
        have them: columns that restate the target (its parts, e.g. ``bikers = casual +
        registered``, or numbers computed from it), which otherwise put every row in a
        stratum of its own and every effect near 0.  A text with commas that is no column
        name lists several.  ``attrs["left_out"]`` and ``attrs["params"]["exclude"]`` name
        them; excluding the target, the feature or ``by`` is an error.
    classes : True, "all", a class or a list of classes, optional
        Read the target as classes (text, or whole-number codes; 2 to 20 of them) and give
        one curve per class, each the change in that class's probability in percentage
        points, all from one stratification, so the classes' curves add up to 0 at every x
        (``attrs["class_sum"]``, the largest sum, is 0 to rounding).  ``True`` or ``"all"``
        shows every class; a list shows those (the others are still in the strata).  The
        curves are not adjusted for the other columns (one adjustment per class would break
        the sum) and not cut at 0 or 100 %.  See "Returns, by class".

    Returns
    -------
    DataFrame
        One row per curve point, ``x`` ascending: ``x`` (feature value), ``pd`` (partial
        dependence, centred so that its average over the rows is 0, i.e. pd at x minus its
        mean over the data: differences between points are what it measures; the same
        with or without trials), ``slope`` (mean slope on [x, next x); NaN on the
        closing row), ``n_slopes`` (leaf slopes averaged at x; for a summarising point the
        fewest over the values it summarises), ``n_x`` (distinct x values the point
        summarises; only when the curve was summarised), plus ``pd_low``, ``pd_high``,
        ``curve_low`` and ``curve_high`` when ``n_trials > 1``; see
        :mod:`stratpd_xl.schema`.  When ``feature`` is blank in some rows that have a
        target, those rows (which never enter the slopes) get one more row, last, with
        ``missing`` True (False on the curve's points, ``stratpd_xl.schema.curve_points``
        drops it): ``x`` missing (NaN, or NaT for dates), ``pd`` how far those rows sit
        from the curve's typical level (its 0), all else equal, compared inside the strata
        with the rows that have a value, each moved to the curve's typical level first; its
        band columns hold its own 95 % band, and ``attrs["missing"]`` its ``pd``, ``low``,
        ``high``, ``rows``, ``compared`` and ``strata`` whatever ``n_trials``
        (docs/method.md, "The effect of being missing").  ``attrs`` holds ``method``,
        ``target``, ``feature``, ``kind``, ``n_rows`` (rows given), ``n_used`` (rows that gave
        a slope), ``n_dropped_missing`` (rows without target or feature value),
        ``n_ignored`` (rows in strata where the feature did not vary), ``n_leaves``, ``n_unique_x``,
        ``n_points_full`` (points before summarising), ``params``,
        ``within_strata_share`` (share of the feature's variance left inside the strata),
        ``adjusted``, ``adjust_gain``, ``adjust_note`` (see ``adjust``), ``others_r2``
        (share of x's variance inside the strata that a least-squares fit on the other
        columns explains, out of fold) and
        ``warnings`` (sentences for the analyst, :class:`stratpd_xl.schema.Note`, e.g. when
        the other columns nearly determine the feature so that "all else equal" leaves it
        almost no room to vary, or when columns restate the target: kind "leak", with
        ``facts["leak"]`` "restated" when the strata and a straight-line fit on the other
        columns leave under 0.5 % of its variation, naming the fewest columns that carry
        it, or "copy" for a column that looks like the target with noise added).

    Returns, by class
    -----------------
    DataFrame
        The classes' curves one under the other: a ``class`` column first (an ordered
        category), then ``x``, ``pd`` (points of probability), ``slope``, ``n_slopes``,
        ``n_x`` and the bands as above.  ``attrs`` hold ``method`` ("StratPD by class"),
        ``target``, ``feature``, ``kind``, ``classes`` (shown), ``all_classes``,
        ``class_rows``, ``class_impact`` (each shown class's impact, as
        :func:`analyse` measures it), ``class_sum``, ``units``, ``n_rows``, ``n_used``,
        ``n_dropped_missing``, ``n_leaves``, ``params``.  More than 20 classes is an error
        that suggests ``positive=`` or grouping the values.  Engine/_classes.py says how
        the one stratification is grown.

    Returns, by group
    -----------------
    DataFrame
        The groups' curves one under the other, each made exactly as without ``by`` on the
        group's rows (so each is centred on its own rows and has its own band): a
        ``group`` column first (an ordered category: the levels' order, or bands low to
        high), then the curve's columns.  ``attrs`` hold ``method`` ("StratPD by group"),
        ``target``, ``feature``, ``kind``, ``by``, ``groups`` (labels), ``group_rows``,
        ``group_slopes`` (each curve's average slope: least squares of pd on x, weighted by
        the data), ``n_rows``, ``n_used``, ``params``, ``warnings`` (the groups' own, named),
        ``skipped_groups`` (group -> why it has no curve) and ``findings``: a sentence when
        the groups' slopes differ beyond their bands ("the effect of price on sales is
        twice as steep for region = south ...").

    Raises
    ------
    StratPDInputError
        Unknown column, text feature, too few rows, or no x value with enough slopes; with
        ``by``: a categorical ``by`` of more than 12 levels, or fewer than two groups with
        a curve.
    """
    p = Settings.make(
        min_samples_leaf=min_samples_leaf, min_slopes_per_x=min_slopes_per_x,
        n_trials=n_trials, random_state=random_state, max_points=max_points, honest=honest,
        adjust=adjust, by=by, bands=bands, exclude=exclude,
    )
    if _wants_classes(classes, p, positive):
        return class_table(data, target, feature, NUMERIC, p, classes)
    if p.by is not None:
        return _by_group(data, target, feature, p, lambda sub, names: stratpd(
            sub, target, feature, min_samples_leaf=p.min_samples_leaf,
            min_slopes_per_x=p.min_slopes_per_x, n_trials=p.n_trials,
            random_state=p.random_state, max_points=p.max_points, honest=p.honest,
            adjust=p.adjust, positive=positive, exclude=names,
        ))
    table = _table(data, target, positive, keep=[feature, *p.keep], exclude=p.exclude,
                   roles=_roles(feature))
    return _run(table, feature, NUMERIC, p)[0]


def _wants_classes(classes: Any, p: Settings, positive: Any) -> bool:
    """Whether the target is read as classes (``classes=``), checked against ``by`` and
    ``positive``, which it excludes."""
    if classes is None or classes is False:
        return False
    if p.by is not None:
        raise StratPDInputError(
            "classes= and by= both make several curves; give one of them")
    if positive is not None:
        raise StratPDInputError(
            "classes= gives a curve per class and positive= one class against the others; "
            "give one of them")
    return True


def _roles(*features: Any, by: Any = None) -> dict[str, str]:
    """The columns an analysis needs, which cannot be excluded (name -> role)."""
    roles = {column_label(f, role="feature"): "feature" for f in features}
    if by is not None:
        roles[column_label(by, role="by")] = "by column"
    return roles


def _by_group(data: Any, target: str, feature: str, p: Settings,
              run: Callable[[pd.DataFrame, list[str]], pd.DataFrame]) -> pd.DataFrame:
    """``run(rows, excluded)`` on the rows of each group of ``p.by`` (see
    :func:`curves_by_group`), with the exact names of the excluded columns."""
    if not isinstance(data, pd.DataFrame):
        data = build_table(data, target).frame  # the same checks and sentences
    data = checked_frame(data)  # unique names, one value per cell (a list in a "by" cell)
    columns = [column_label(c, j) for j, c in enumerate(data.columns)]
    require_column(columns, target, "target")
    names = excluded_columns(columns, column_label(target, role="target"), p.exclude,
                             _roles(feature, by=p.by)) if p.exclude else []
    return curves_by_group(data, str(target), str(feature), str(p.by), p.bands,
                           lambda sub: run(sub, names),
                           p.as_dict(interactions=True) | {"exclude": names})


@one_blas_thread()
def catstratpd(
    data: pd.DataFrame,
    target: str,
    feature: str,
    *,
    min_samples_leaf: int = _DEFAULT["min_samples_leaf"],
    n_trials: int = _DEFAULT["n_trials"],
    random_state: int | None = _DEFAULT["random_state"],
    honest: bool = _DEFAULT["honest"],
    adjust: bool = _DEFAULT["adjust"],
    positive: Any = None,
    by: str | None = None,
    bands: int = _DEFAULT["bands"],
    exclude: str | Iterable[str] | None = None,
    classes: Any = None,
) -> pd.DataFrame:
    """Effect of each category of ``feature`` on ``target``, all else equal.

    Parameters are as for :func:`stratpd` (``by`` too: one table per group, one under the
    other, with a ``group`` column first); any column can be treated as categorical.
    ``adjust`` fits the feature's categories as indicator columns (at most 50 categories).

    Returns
    -------
    DataFrame
        One row per category that could be estimated, in the column's order (pandas
        category order, False/True, or sorted): ``category``, ``pd`` (effect relative to the
        first category, whose ``pd`` is 0; the difference between two rows estimates the
        effect of switching between them), ``count`` (rows that informed it), plus
        ``pd_low``/``pd_high`` when ``n_trials > 1``.  Rows where ``feature`` is blank are
        one more category, last, "(missing)", with ``missing`` True on its row (the
        column is there only then).  ``attrs`` as for :func:`stratpd`,
        plus ``baseline``, ``categories_without_estimate`` (categories that never share
        a stratum with the others) and ``warnings``.
    """
    p = Settings.make(
        min_samples_leaf=min_samples_leaf, n_trials=n_trials,
        random_state=random_state, honest=honest, adjust=adjust, by=by, bands=bands,
        exclude=exclude,
    )
    if _wants_classes(classes, p, positive):
        # class, then category, pd, count and the bands, per class (see stratpd).
        return class_table(data, target, feature, CATEGORICAL, p, classes)
    if p.by is not None:
        return _by_group(data, target, feature, p, lambda sub, names: catstratpd(
            sub, target, feature, min_samples_leaf=p.min_samples_leaf, n_trials=p.n_trials,
            random_state=p.random_state, honest=p.honest, adjust=p.adjust, positive=positive,
            exclude=names,
        ))
    table = _table(data, target, positive, keep=[feature, *p.keep], exclude=p.exclude,
                   roles=_roles(feature))
    return _run(table, feature, CATEGORICAL, p)[0]


def partial_dependence(
    data: pd.DataFrame, target: str, feature: str, *, kind: str | None = None,
    positive: Any = None, classes: Any = None, **kw: Any,
) -> pd.DataFrame:
    """:func:`stratpd` or :func:`catstratpd`, chosen from the feature column's type.

    Numbers and dates are numeric; bool, text and pandas category columns are categorical.
    ``kind="categorical"`` forces CatStratPD on a numeric code column; ``by=column`` gives
    one curve per group (see :func:`stratpd`).
    """
    p = Settings.make(**kw)
    if _wants_classes(classes, p, positive):
        return class_table(data, target, feature, kind, p, classes)
    if p.by is not None:
        curve_kw = {k: v for k, v in kw.items() if k not in ("by", "bands", "exclude")}
        return _by_group(data, target, feature, p, lambda sub, names: partial_dependence(
            sub, target, feature, kind=kind, positive=positive, exclude=names, **curve_kw))
    table = _table(data, target, positive, keep=[feature, *p.keep], exclude=p.exclude,
                   roles=_roles(feature))
    return _run(table, feature, kind, p)[0]


@dataclass
class Analysis:
    """The impact ranking and the curve of every feature that could be estimated."""

    impact: pd.DataFrame
    curves: dict[str, pd.DataFrame] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # feature -> reason


@one_blas_thread()
def analyse(
    data: pd.DataFrame,
    target: str,
    features: Iterable[str] | None = None,
    *,
    progress: Progress | None = None,
    positive: Any = None,
    classes: Any = None,
    **kw: Any,
) -> Analysis:
    """Curves for many features and the model-free impact ranking, in one pass.

    ``impact`` of a feature is the mean absolute deviation of its partial dependence from
    its average over the rows, ``mean_i |pd(x_i) - mean_k pd(x_k)|``, in target units: how far,
    on average, this feature alone moves the target.  Every row counts once, so x values
    where many rows sit weigh more; centring makes it independent of where the curve
    starts (and of which category is the baseline).  Rows where a numeric feature is blank
    count at the height of its blank row (``attrs["missing"]``, see :func:`stratpd`) when
    they shared a stratum with rows having a value, so a feature whose blanks move the
    target ranks by that too; a categorical feature's blanks are its "(missing)" category.
    Features that cannot be estimated are listed in ``skipped`` with the reason instead of
    stopping the analysis.

    Parameters
    ----------
    progress : callable(done, total, feature), optional
        Called before each feature, and once more at the end with ``done == total``.
    positive : optional
        The value of a yes/no target that counts as 1 (see :func:`stratpd`).
    classes : optional
        Read the target as classes (see :func:`stratpd`): each feature's curves are the
        long table of its classes, its impact that of its largest class, named in a
        ``class`` column after ``kind``.
    **kw
        Passed on to :func:`stratpd` / :func:`catstratpd`.
    """
    p = Settings.make(**kw)
    if _wants_classes(classes, p, positive):
        listed = column_arguments(features)
        ranking, curves, skipped = class_ranking(
            data, target, None if listed is None else [column_label(f, role="feature")
                                                         for f in listed],
            p, classes, progress)
        return Analysis(ranking, curves, skipped)
    if p.by is not None:
        raise StratPDInputError(
            "by= makes one curve per group, which a ranking of every feature does not; call "
            "stratpd or catstratpd with by= for the feature, or rank each group's rows apart"
        )
    # impact(d, "price", "area"): one feature, not the letters.
    listed = column_arguments(features)
    named = None if listed is None else [column_label(f, role="feature") for f in listed]
    table = _table(data, target, positive, keep=[*(named or ()), *p.keep], exclude=p.exclude,
                   roles=_roles(*(named or ())))
    if table.y.size == 0:
        raise StratPDInputError(
            f'no row has a value of "{table.target}"; pass the rows to analyse'
        )
    names = list(table.columns) if named is None else named
    for f in names:
        require_column(table.all_columns, f, "feature")
    # A feature named twice is analysed (and ranked) once.
    names = list(dict.fromkeys(f for f in names if f != target))
    ids = [c for c, why in table.left_out.items() if "identifier" in why]
    if not names and ids:
        quoted = [f'"{c}"' for c in ids[:4]] + ([f"{len(ids) - 4:,} more"] if len(ids) > 5
                                                 else [f'"{c}"' for c in ids[4:]])
        listed = " and ".join([", ".join(quoted[:-1]), quoted[-1]] if len(quoted) > 1
                              else quoted)
        raise StratPDInputError(
            f'no column to analyse besides the target "{table.target}": {listed} '
            f"{'looks like an identifier' if len(ids) == 1 else 'look like identifiers'}; "
            f"{KEEP_IN_API}"
        )
    rows: list[dict[str, Any]] = []
    curves: dict[str, pd.DataFrame] = {}
    skipped: dict[str, str] = {}
    outcomes = _each_feature(table, names, p)
    try:
        for i, (f, outcome) in enumerate(zip(names, outcomes, strict=True)):
            if progress is not None:
                progress(i, len(names), f)
            try:
                curve, row_pd = outcome()
            except StratPDInputError as exc:
                skipped[f] = str(exc)
                continue
            curves[f] = curve
            # row_pd is in the engine's scaled units (see Table.y_scale): sums stay finite.
            rows.append({"feature": f, "kind": table.kinds[f], "impact": _impact(row_pd),
                         "rows": _evidence_rows(curve)})
    finally:
        outcomes.close()  # a progress callback that raised: features not started are dropped
    if progress is not None:
        progress(len(names), len(names), "")
    ranking = _ranking(target, table, p, table.y.size, rows, skipped, curves)
    return Analysis(ranking, curves, skipped)


def _each_feature(
    table: Table, names: list[str], p: Settings
) -> Iterator[Callable[[], tuple[pd.DataFrame, np.ndarray | None]]]:
    """For each feature in turn, a call that returns its curve and per-row pd (or raises).

    On large tables two features are worked on at a time: one feature's serial steps
    (sorting x, slopes, the linear fit) then overlap the other's trees, which fill both
    cores only part of the time.  Each feature draws from its own ``random_state``
    generator and the shared caches are filled first, so the numbers do not depend on
    which runs first.  Features not yet started are cancelled when the caller stops
    early (a progress callback that raises).
    """
    if p.adjust and len(names) > 1:
        # The adjustment's design of every column, shared by the features (each takes all
        # columns but its own), made before any thread reads it.
        _shared_design(table, np.arange(len(table.frame)))
    if (len(names) < 2 or table.y.size < _backend.PARALLEL_ROWS
            or not _backend.can_start_threads()):
        for f in names:
            yield lambda f=f: _run(table, f, None, p, row_pd=True)
        return
    # numba's kernels run without the GIL, so each feature's two trees take a thread each
    # as well.  numpy's level-wise grower takes the GIL between its many short calls: four
    # threads would mostly wait for each other, so each feature grows its two trees in one
    # pass (measured at 100,000 rows x 10 columns: 10 % faster than features one at a time
    # with threaded trees; four threads were slower than either).
    tree_threads = _backend.get_backend(table.y.size) == "numba"
    # Every column's bins before the threads share them.
    table.bin_columns(table.columns)
    pool = ThreadPoolExecutor(max_workers=2)
    try:
        futures = [pool.submit(_run, table, f, None, p, True, tree_threads) for f in names]
        for future in futures:
            yield future.result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def impact(
    data: pd.DataFrame, target: str, features: Iterable[str] | None = None, **kw: Any
) -> pd.DataFrame:
    """Model-free ranking of features by how much each alone moves the target.

    Returns
    -------
    DataFrame
        One row per feature, largest impact first: ``feature``, ``kind`` (``"numeric"`` or
        ``"categorical"``), ``impact`` (see :func:`analyse`; target units), ``share``
        (impact / sum of impacts), ``rows`` (the rows with a value that informed its
        curve: ``n_used``, without a categorical feature's "(missing)" rows) and ``thin``
        (True when those are under 20 % of the rows with a target value) and ``evidence``
        (why the ranking sets a feature apart, "" when nothing does: ``"thin: under 20 %
        of the rows"``, or ``"tied to X2nd.Flr.SF, X1st.Flr.SF"`` when its own note says
        other columns determine it, almost exactly a linear function of them or barely
        varying inside the strata, so no data show its effect with them held fixed).  The
        features set apart come after the others, largest impact first among them.
        ``attrs`` holds ``target``, ``n_rows``, ``params``,
        ``skipped`` (features without a curve, with the reason), ``left_out`` (columns
        neither ranked nor used to group the rows: identifiers, and those named in
        ``exclude=``) and ``warnings`` (columns that restate the target, each said once
        with the features it moves: see :func:`stratpd`).  Keywords are those of
        :func:`stratpd`.
    """
    return analyse(data, target, features, **kw).impact
