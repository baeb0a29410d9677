"""The analysis parameters: one table of defaults and bounds, one validated settings object.

Every front end (Python API, CLI options, formula arguments, ribbon) takes its defaults, bounds
and help text from :data:`PARAMETERS`, and every value passes through :meth:`Settings.make`,
so "min_samples_leaf must be at least 1" reads the same everywhere and a default lives in one
place.  Like scikit-learn's parameter constraints, the table is data: the CLI builds its
options from it and the tests check each front end against it.

No I/O, no engine: this module only imports :mod:`stratpd_xl.errors`.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import StratPDInputError, argument

__all__ = [
    "DEFAULT_SEED",
    "INTERACTION_PARAMETERS",
    "PARAMETERS",
    "STRATA_ROWS",
    "Parameter",
    "Settings",
    "column_argument",
    "column_arguments",
]

#: The seed every front end uses unless told otherwise (documented in the README).
DEFAULT_SEED = 0

#: Rows of the sample a table read in chunks or on Dask has its strata fitted on
#: (``strata_rows``, ``--strata-rows``; docs/scale.md says what more or fewer cost).  2^20:
#: the 20M-row curve of benchmarks/bench_scale.py peaks at 1.7 GB with an nRMSE against the
#: truth of 0.0018 (in memory, every row fitted: 8 GB, 0.0174); a larger sample makes more
#: strata, whose cells the pass holds.
STRATA_ROWS = 2**20


@dataclass(frozen=True)
class Parameter:
    """One analysis parameter: its default, its bounds and the sentence that explains it.

    Attributes
    ----------
    name : str
        The Python keyword (``min_samples_leaf``); the CLI option is ``--min-samples-leaf``.
    default : int, bool or None
        Value used when the user gives none.
    minimum, maximum : int or None
        Inclusive bounds of a whole-number parameter; ``None`` for flags.
    help : str
        One sentence for ``--help``, Excel's function wizard and the docs.
    example : str
        A value to show in error messages ("such as 10").
    report_default : int, bool or None
        The default of a full report (``report``, ``demo``, the ribbon) where it differs
        from ``default``; ``None`` when it does not.
    column : bool
        The value is a column name (text), not a number or a flag.
    many : bool
        The value is any number of column names (a tuple; default none).
    """

    name: str
    default: int | bool | tuple[str, ...] | None
    minimum: int | None
    maximum: int | None
    help: str
    example: str = ""
    report_default: int | bool | None = None
    column: bool = False
    many: bool = False

    @property
    def is_flag(self) -> bool:
        return self.minimum is None and not self.column

    @property
    def is_column(self) -> bool:
        return self.column


#: The table.  Bounds are generous but finite, so no option can ask for unbounded work
#: (a billion trials) or memory.
PARAMETERS: dict[str, Parameter] = {
    p.name: p
    for p in (
        Parameter(
            "min_samples_leaf", 10, 1, 1_000_000,
            "smallest group of similar rows; larger is smoother but coarser", "10",
        ),
        Parameter(
            "min_slopes_per_x", 5, 1, 1_000_000,
            "drop curve points backed by fewer leaf slopes (numeric features)", "5",
        ),
        # A report is the answer an analyst quotes, so it carries a band: ten trials on
        # halves add about a quarter to a report's time (diamonds, 53,940 rows: 30 s -> 37 s
        # on a busy 2-core machine), one curve or ranking stays fast without.
        Parameter(
            "n_trials", 1, 1, 200,
            "trials, each on a random half of the rows; more than 1 adds a 95 % band "
            "(pd_low / pd_high)", "20", report_default=10,
        ),
        # One fixed seed everywhere: the same file and command give the same numbers (and
        # the same bytes) every time; another seed shows how much the answer moves.
        Parameter(
            "random_state", DEFAULT_SEED, 0, 2**32 - 1,
            "seed of the random halves; the same seed gives the same numbers, another seed "
            "shows how much they move", "1",
        ),
        Parameter(
            "max_points", 200, 2, 100_000_000,
            "most points of a numeric curve; more distinct values are summarised "
            "(None or 0: every distinct value)", "200",
        ),
        Parameter(
            "honest", True, None, None,
            "stratify each row with a tree grown on the other half of the rows (cross-fitting)",
        ),
        Parameter(
            "adjust", True, None, None,
            "compare rows after removing the other columns' linear part (guards against "
            "many correlated columns)",
        ),
        Parameter(
            "by", None, None, None,
            "one curve per level of this column (or per band of its values, if numeric)",
            "region", column=True,
        ),
        # A column that restates the target (its parts: bikers = casual + registered) puts
        # every row in a stratum of its own value, so every other effect comes out near 0;
        # naming features does not help, since the other columns still group the rows.
        Parameter(
            "exclude", (), None, None,
            "leave these columns out of the strata and the adjustment (and of the ranking): "
            "columns that restate the target, or that you do not want held fixed",
            '"casual"', column=True, many=True,
        ),
        # A row number or an id is left out of every analysis (stratpd_xl.identifiers); a
        # column named here is analysed all the same.
        Parameter(
            "keep", (), None, None,
            "analyse these columns even if they look like row numbers or ids",
            '"store_id"', column=True, many=True,
        ),
        Parameter(
            "bands", 4, 2, 12,
            "bands of a numeric by column (equal numbers of rows, labelled by their ranges)",
            "4",
        ),
        Parameter(
            "grid", 10, 3, 40,
            "points per feature of a two-way surface", "10",
        ),
        Parameter(
            "max_features", 10, 2, 100,
            "interactions: pair only this many features (those with the largest local "
            "effects)", "10",
        ),
    )
}

#: Parameters of the by-group curves, the interaction ranking and the two-way surface; the
#: other results leave them out of ``attrs["params"]``.
INTERACTION_PARAMETERS = ("by", "bands", "grid", "max_features")


def _whole(p: Parameter, value: Any) -> int:
    """``value`` as an int within ``p``'s bounds, or the sentence that names the fix."""
    number: float | None = None
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is None or not math.isfinite(number) or not number.is_integer():
        raise StratPDInputError(
            f"{argument(p.name)} must be a whole number such as {p.example}; got {value!r}")
    if not p.minimum <= number <= p.maximum:  # type: ignore[operator]
        # 1e+30 reads better than its 31 digits with the float's rounding noise.
        got = f"{number:,.0f}" if abs(number) < 1e15 else f"{number:.3g}"
        raise StratPDInputError(
            f"{argument(p.name)} must be a whole number between {p.minimum:,} and {p.maximum:,}; "
            f"got {got}")
    return int(number)


@dataclass(frozen=True)
class Settings:
    """Validated analysis parameters (see :data:`PARAMETERS` for meaning and bounds).

    Build it with :meth:`make`, which checks every value and explains what is wrong; the
    plain constructor does not check.

    Attributes
    ----------
    min_samples_leaf : int, default 10
    min_slopes_per_x : int, default 5
    n_trials : int, default 1 (a report: 10)
    random_state : int or None, default 0
        ``None`` draws fresh random halves each time (results then vary from run to run).
    max_points : int or None, default 200
        ``None`` keeps every distinct x value (full resolution).
    honest : bool, default True
    adjust : bool, default True
    by : str or None, default None
    exclude : tuple of str, default ()
        Column names as given (a text may list several, separated by commas); the engine and
        the workflow match them against the table's columns.
    keep : tuple of str, default ()
        Columns to analyse even when they look like row numbers or identifiers.
    bands : int, default 4
    grid : int, default 10
    max_features : int, default 10
    """

    min_samples_leaf: int = PARAMETERS["min_samples_leaf"].default  # type: ignore[assignment]
    min_slopes_per_x: int = PARAMETERS["min_slopes_per_x"].default  # type: ignore[assignment]
    n_trials: int = PARAMETERS["n_trials"].default  # type: ignore[assignment]
    random_state: int | None = PARAMETERS["random_state"].default  # type: ignore[assignment]
    max_points: int | None = PARAMETERS["max_points"].default  # type: ignore[assignment]
    honest: bool = PARAMETERS["honest"].default  # type: ignore[assignment]
    adjust: bool = PARAMETERS["adjust"].default  # type: ignore[assignment]
    by: str | None = PARAMETERS["by"].default  # type: ignore[assignment]
    exclude: tuple[str, ...] = PARAMETERS["exclude"].default  # type: ignore[assignment]
    keep: tuple[str, ...] = PARAMETERS["keep"].default  # type: ignore[assignment]
    bands: int = PARAMETERS["bands"].default  # type: ignore[assignment]
    grid: int = PARAMETERS["grid"].default  # type: ignore[assignment]
    max_features: int = PARAMETERS["max_features"].default  # type: ignore[assignment]

    @classmethod
    def make(cls, base: Settings | None = None, /, **values: Any) -> Settings:
        """Check ``values`` against the table and return the settings.

        Parameters
        ----------
        base : Settings, optional
            Values not given are taken from here (default: the table's defaults).
        **values
            Parameter values.  ``exclude`` takes a name, or a list of names (a list of rows,
            as a range of cells hands it, too).  ``None`` means "the default" except for
            ``random_state``
            (no seed: fresh random halves each run) and ``max_points`` (every point);
            ``max_points=0`` means every point.
            Whole numbers may be given as floats (10.0) or text ("10"), as cells hand them.

        Raises
        ------
        TypeError
            For an unknown keyword (a programming error, not bad input).
        StratPDInputError
            For a value out of bounds or of the wrong kind, with a sentence naming the fix.
        """
        unknown = set(values) - set(PARAMETERS)
        if unknown:
            raise TypeError(f"unexpected parameter(s): {', '.join(sorted(unknown))}")
        merged = dataclasses.asdict(base or cls()) | values
        checked: dict[str, Any] = {}
        for name, p in PARAMETERS.items():
            value = merged[name]
            if p.many:
                checked[name] = _column_names(p, value)
            elif p.is_column:
                checked[name] = _column_name(p, value)
            elif p.is_flag:
                if not isinstance(value, bool | int) or isinstance(value, float):
                    raise StratPDInputError(
                        f"{argument(name)} must be True or False; got {value!r}")
                checked[name] = bool(value)
            elif value is None:
                checked[name] = None if name in ("random_state", "max_points") else p.default
            elif name == "max_points" and not isinstance(value, bool) and (
                value == 0 or (isinstance(value, str) and value.strip() in ("0", "0.0"))
            ):  # 0 means every point, also typed ("--max-points 0", a cell holding "0")
                checked[name] = None
            else:
                if isinstance(value, bool):
                    raise StratPDInputError(
                        f"{argument(name)} must be a whole number such as {p.example}; "
                        f"got {value!r}")
                checked[name] = _whole(p, value)
        return cls(**checked)

    @classmethod
    def for_report(cls, **values: Any) -> Settings:
        """The defaults of a full report (a band: see ``report_default``), then ``values``.

        ``values`` set to ``None`` are ignored (not given), so an argparse namespace can be
        passed straight through.
        """
        base = {name: p.report_default for name, p in PARAMETERS.items()
                if p.report_default is not None}
        return cls.make(**(base | {k: v for k, v in values.items() if v is not None}))

    def replace(self, **values: Any) -> Settings:
        """A copy with some values changed, checked like :meth:`make`."""
        return Settings.make(self, **values)

    def as_dict(self, *, categorical: bool = False,
                interactions: bool = False) -> dict[str, Any]:
        """The values as a plain dict, as results record them in ``attrs["params"]``.

        Categorical results leave out the parameters that only shape numeric curves; only
        the by-group, interaction and surface results (``interactions=True``) keep
        :data:`INTERACTION_PARAMETERS`.
        """
        d = dataclasses.asdict(self)
        if not interactions:
            for name in INTERACTION_PARAMETERS:
                d.pop(name)
        d["exclude"] = list(d["exclude"])
        # Recorded when given: most tables have no identifier to keep.
        if d["keep"]:
            d["keep"] = list(d["keep"])
        else:
            d.pop("keep")
        if categorical:
            d.pop("min_slopes_per_x")
            d.pop("max_points")
        return d


def _column_name(p: Parameter, value: Any) -> str | None:
    """A column name given as text (or a number, as a header cell may hold); blank is None."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool) or not isinstance(value, str | numbers.Integral):
        raise StratPDInputError(
            f"{argument(p.name)} must be a column name such as {p.example}; got {value!r}")
    return str(value).strip()


def _column_names(p: Parameter, value: Any) -> tuple[str, ...]:
    """Column names as a tuple: one text, or a list (of rows: a range of cells) of texts.

    Blank cells are skipped and a name given twice counts once.  A text is kept whole here
    (a column may be called "Sales, EUR"); splitting a comma list needs the table's columns
    (see :func:`stratpd_xl.engine.excluded_columns`).
    """
    if value is None or isinstance(value, str | numbers.Number):
        items: list[Any] = [value]
    elif isinstance(value, Iterable) and not isinstance(value, bytes | Mapping):
        items = [v for item in value for v in (
            item if isinstance(item, list | tuple) else [item])]
    else:
        items = [value]
    names: list[str] = []
    for item in items:
        if item is None or (isinstance(item, float) and math.isnan(item)):
            continue
        if isinstance(item, bool) or not isinstance(item, str | numbers.Real):
            raise StratPDInputError(
                f"{argument(p.name)} must be column names such as {p.example}; got {item!r}")
        if isinstance(item, numbers.Real) and not isinstance(item, numbers.Integral):
            if not float(item).is_integer():
                raise StratPDInputError(
                    f"{argument(p.name)} must be column names such as {p.example}; got {item!r}")
            item = int(item)  # a header cell holding 2024 arrives as 2024.0
        text = str(item).strip()
        if text and text not in names:
            names.append(text)
    return tuple(names)


def settings_from(values: Mapping[str, Any]) -> Settings:
    """:meth:`Settings.make` from a mapping that may hold other keys (e.g. argparse's)."""
    return Settings.make(**{k: v for k, v in values.items() if k in PARAMETERS})


def column_argument(value: Any, role: str) -> Any:
    """``value`` when it can name one column (text, a number, a date, a tuple label of a
    MultiIndex), else one sentence.

    The Python API's target, feature and ``by`` arguments: a list, a range, a set, a dict or
    an array is no column name (a range showed as "range(0, 3)" not found), and neither is an
    object whose text cannot be read (its ``str()`` raising gave "internal error").
    """
    if isinstance(value, str | bytes | tuple | numbers.Number) or value is None:
        return value
    kind = type(value).__name__
    if isinstance(value, Iterable | Mapping):
        raise StratPDInputError(f"{role} must be one column name; got a {kind}")
    try:
        str(value)
    except Exception:  # noqa: BLE001 - an object of the caller's making
        raise StratPDInputError(
            f"{role} must be a column name; got a {kind} whose text cannot be read"
        ) from None
    return value


def column_arguments(values: Any, role: str = "feature") -> list[Any] | None:
    """None (every column), or the column labels ``values`` gives: one name is one column,
    not its letters (``interactions(d, "price", "area")``), and so is a tuple label."""
    if values is None:
        return None
    if isinstance(values, str | bytes | tuple | numbers.Number):
        return [values]
    if not isinstance(values, Iterable) or isinstance(values, Mapping):
        return [column_argument(values, role)]
    return [column_argument(v, role) for v in values]
