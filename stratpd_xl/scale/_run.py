"""The drivers: pass 0, the fit on the sample, one pass adding up Partials, the finish.

Two sources of rows share one driver (:func:`run`): a file read in chunks
(:class:`FileRows`) and a Dask DataFrame (:class:`DaskRows`).  Either gives pass 0's
:class:`~stratpd_xl.input.stream.Sketch` (whose sample the strata are fitted on) and, for a
list of fitted strata, the sum of each one's Partials over all rows, so an impact ranking
reads the rows once for every feature.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pandas as pd

from ..errors import StratPDInputError
from ..input import stream
from ..params import DEFAULT_SEED

__all__ = [
    "CHUNK_ROWS",
    "STRATA_ROWS",
    "DaskRows",
    "FileRows",
    "Stages",
    "catstratpd",
    "columns",
    "impact",
    "is_dask_frame",
    "needs_streaming",
    "partial_dependence",
    "run",
    "stratpd",
]

CHUNK_ROWS = stream.CHUNK_ROWS
STRATA_ROWS = stream.SAMPLE_ROWS
#: Partials added per node of Dask's tree reduction (as Dask's own reductions do).
SPLIT_EVERY = 8
DASK_EXTRA = 'pip install "stratpd-xl[dask]"'


@dataclass(frozen=True)
class Stages:
    """The engine's stage functions (``engine.stages``), passed to workers by reference."""

    fit_strata: Callable[..., Any]
    pass_chunk: Callable[[Any, pd.DataFrame], Any]
    finish: Callable[[Any, Any], pd.DataFrame]

    @classmethod
    def engine(cls) -> Stages:
        from ..engine import stages

        return cls(stages.fit_strata, stages.pass_chunk, stages.finish)


def is_dask_frame(data: Any) -> bool:
    """True for a ``dask.dataframe.DataFrame`` (by its type's module: dask is not imported)."""
    module = getattr(type(data), "__module__", "") or ""
    return (module == "dask" or module.startswith("dask.")) and hasattr(data, "columns")


def needs_streaming(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a Parquet file or folder, or a text file, larger than a table
    held in memory may be (``input.files.MAX_HELD_BYTES``, ``MAX_FILE_BYTES``)."""
    from ..input import files

    path = Path(path)
    suffix = path.suffix.lower()
    try:
        if suffix in files.PARQUET_SUFFIXES or path.is_dir():
            table = stream.open_table(path)
            return (table.rows or 0) * table.row_bytes > files.MAX_HELD_BYTES
        if suffix in files.TEXT_SUFFIXES:
            return path.stat().st_size > files.MAX_FILE_BYTES
    except (OSError, StratPDInputError):
        return False  # the whole read says what is wrong, in its own words
    return False


# --------------------------------------------------------------------------- sources


class FileRows:
    """The rows of a file read in chunks, with progress per chunk on ``stream`` (stderr)."""

    def __init__(self, table: stream.StreamedTable, *, quiet: bool = False,
                 out: TextIO | None = None) -> None:
        self.table = table
        self.quiet = quiet
        self.out = out

    @property
    def columns(self) -> list[str]:
        return list(self.table.names)

    def _progress(self, what: str) -> stream.ChunkProgress:
        return stream.ChunkProgress(f"{what} {self.table.path.name}", total_rows=self.table.rows,
                                    stream=self.out, quiet=self.quiet)

    def sketch(self, target: str, seed: int, sample_rows: int) -> stream.Sketch:
        return stream.sketch(self.table, target, seed=seed, sample_rows=sample_rows,
                             progress=self._progress("pass 0 (sample and counts) of"))

    def partials(self, strata: Sequence[Any], pass_chunk: Callable[[Any, pd.DataFrame], Any]
                 ) -> list[Any]:
        progress = self._progress("pass 1 (sums per stratum) of")
        total: list[Any] | None = None
        for chunk in self.table.chunks(progress=progress):
            chunk = self.table.typing.final(chunk)
            parts = [pass_chunk(s, chunk) for s in strata]
            if total is None:
                total = parts
                continue
            for i, part in enumerate(parts):
                total[i] += part  # in place: the total is held once (Partial.__iadd__)
        progress.close()
        assert total is not None  # pass 0 found rows
        return total

    @property
    def notes(self) -> list[str]:
        return list(self.table.notes)


class DaskRows:
    """The rows of a Dask DataFrame: each partition is a chunk whose row ids continue the
    previous partition's, and Partials are added by Dask's tree reduction
    (``Bag.reduction(..., split_every=8)``) on whatever scheduler is active."""

    def __init__(self, frame: Any, chunk_rows: int = CHUNK_ROWS) -> None:
        _dask()
        self.frame = frame
        # A partition is read whole but stratified a chunk at a time: dask.dataframe makes
        # a 20M-row file 4 partitions, and the pass's temporaries (the placement, the
        # design's columns) of 5M rows at once, twice per machine of 2 workers, were most
        # of its 10.5 GB.
        self.chunk_rows = max(1, int(chunk_rows))
        self._offsets: list[int] | None = None
        self._rows = 0

    @property
    def columns(self) -> list[str]:
        return [str(c) for c in self.frame.columns]

    @property
    def notes(self) -> list[str]:
        return []

    def offsets(self) -> list[int]:
        """Each partition's first row id (one small task per partition: its length)."""
        if self._offsets is None:
            lengths = np.asarray(self.frame.map_partitions(len).compute(), dtype=np.int64)
            starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
            self._offsets = [int(s) for s in starts]
            self._rows = int(lengths.sum())
        return self._offsets

    def _reduce(self, tasks: list[Any], combine: Callable[[Any, Any], Any],
                into: Callable[[Any, Any], Any] | None = None) -> Any:
        import dask
        import dask.bag as db

        bag = db.from_delayed([dask.delayed(_as_list)(t) for t in tasks])
        fold = _folder(combine, into)
        return bag.reduction(fold, fold, split_every=SPLIT_EVERY).compute()

    def sketch(self, target: str, seed: int, sample_rows: int) -> stream.Sketch:
        import dask

        parts = self.frame.to_delayed()
        offsets = self.offsets()
        rows = self._rows
        # Known from the row count: each partition keeps only the rows of the sample.
        threshold = stream.sample_threshold(rows, seed, sample_rows)
        tasks = [dask.delayed(_sketch_partition)(p, start, target, seed, sample_rows, threshold,
                                                 self.chunk_rows)
                 for p, start in zip(parts, offsets, strict=True)]
        found = self._reduce(tasks, _add)
        if found is None or found.rows == 0:
            raise StratPDInputError("the Dask DataFrame holds no rows; check how it was made")
        return found

    def partials(self, strata: Sequence[Any], pass_chunk: Callable[[Any, pd.DataFrame], Any]
                 ) -> list[Any]:
        import dask

        fitted = _shared(list(strata))
        parts = self.frame.to_delayed()
        tasks = [dask.delayed(_pass_partition)(fitted, p, start, pass_chunk, self.chunk_rows)
                 for p, start in zip(parts, self.offsets(), strict=True)]
        return list(self._reduce(tasks, _add_each, _add_each_into))


def _shared(strata: list[Any]) -> Any:
    """The fitted strata as the pass's tasks take them, sent to each worker once: scattered
    by the active distributed client (in the graph they were a 36 MB graph for 1M sample
    rows, which distributed warns of on every call), else one delayed value."""
    import dask

    try:
        from distributed import default_client

        client = default_client()
    except (ImportError, ValueError):  # no distributed, or no client: a local scheduler
        return dask.delayed(strata, pure=True)
    return client.scatter(strata, broadcast=True, hash=False)


def _as_list(item: Any) -> list[Any]:
    return [item]


def _add(a: Any, b: Any) -> Any:
    return a + b


def _add_each(a: Sequence[Any], b: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(x + y for x, y in zip(a, b, strict=True))


class _folder:
    """``functools.reduce(combine, items)`` as a picklable callable (a bag's per-partition
    and aggregate step); an empty partition gives None, which the next step skips."""

    def __init__(self, combine: Callable[[Any, Any], Any],
                 into: Callable[[Any, Any], Any] | None = None) -> None:
        self.combine = combine
        self.into = into  # adds into a total the fold made itself (never into an item)

    def __call__(self, items: Iterable[Any]) -> Any:
        total, own = None, False
        for item in items:
            if item is None:
                continue
            if total is None:
                total = item
            elif own and self.into is not None:
                total = self.into(total, item)
            else:
                total, own = self.combine(total, item), True
        return total


def _add_each_into(a: Sequence[Any], b: Sequence[Any]) -> tuple[Any, ...]:
    """:func:`_add_each` into ``a``'s Partials (a total the fold made itself)."""
    total = list(a)
    for i, part in enumerate(b):
        total[i] += part
    return tuple(total)


def _with_ids(part: pd.DataFrame, start: int) -> pd.DataFrame:
    part = part.copy(deep=False)
    part.index = pd.RangeIndex(start, start + len(part))
    part.columns = [str(c) for c in part.columns]
    return part


def _sketch_partition(part: pd.DataFrame, start: int, target: str, seed: int,
                      sample_rows: int, threshold: int | None,
                      chunk_rows: int = CHUNK_ROWS) -> stream.Sketch | None:
    total = None
    for at in range(0, len(part), chunk_rows):
        found = stream.sketch_frame(_with_ids(part.iloc[at:at + chunk_rows], start + at),
                                    target, seed=seed, sample_rows=sample_rows,
                                    threshold=threshold)
        total = found if total is None else total + found
    return total


def _pass_partition(strata: list[Any], part: pd.DataFrame, start: int,
                    pass_chunk: Callable[[Any, pd.DataFrame], Any],
                    chunk_rows: int = CHUNK_ROWS) -> tuple[Any, ...] | None:
    total: list[Any] | None = None
    for at in range(0, len(part), chunk_rows):
        chunk = _with_ids(part.iloc[at:at + chunk_rows], start + at)
        parts = [pass_chunk(s, chunk) for s in strata]
        if total is None:
            total = parts
            continue
        for i, found in enumerate(parts):
            total[i] += found  # in place, as FileRows.partials
    return None if total is None else tuple(total)


def _dask() -> Any:
    try:
        import dask.bag  # noqa: F401
        import dask.dataframe  # noqa: F401
    except ImportError as exc:
        raise StratPDInputError(
            f"analysing a Dask DataFrame needs the dask extra: {DASK_EXTRA}"
        ) from exc


# --------------------------------------------------------------------------- the driver


@dataclass
class Run:
    """What a driven analysis gives: each feature's finished table, pass 0's sketch and the
    reading's notes."""

    tables: list[pd.DataFrame]
    sketch: stream.Sketch
    notes: list[str]


def run(rows: FileRows | DaskRows, target: str, features: Sequence[str], *,
        kinds: Sequence[str | None] | None = None, strata_rows: int = STRATA_ROWS,
        seed: int = DEFAULT_SEED, stages: Stages | None = None, **params: Any) -> Run:
    """Pass 0, each feature's strata fitted on the sample, one pass for all of them, finish.

    ``kinds`` gives each feature's ``kind`` (``"numeric"``, ``"categorical"`` or None:
    decided by its column) for ``fit_strata``; ``params`` are :func:`stratpd_xl.stratpd`'s
    keywords, passed to ``fit_strata`` as they are.
    """
    stages = stages or Stages.engine()
    sketch = _sketch(rows, target, features, seed, strata_rows)
    kinds = list(kinds) if kinds is not None else [None] * len(features)
    params = _band(params, sketch)
    strata = [stages.fit_strata(sketch.sample, target, f, n_rows=sketch.rows,
                                **({"kind": k} if k is not None else {}), **params)
              for f, k in zip(features, kinds, strict=True)]
    _drop_sample(sketch, strata)
    sums = rows.partials(strata, stages.pass_chunk)
    tables = [stages.finish(s, p) for s, p in zip(strata, sums, strict=True)]
    return Run(tables, sketch, rows.notes)


def _band(params: dict[str, Any], sketch: stream.Sketch) -> dict[str, Any]:
    """A band (``n_trials`` above 1) from strata fitted on a sample comes from the sums
    (``band="strata"``: groups of strata left out in turn, no pass per trial): the default
    band re-grows the trees on halves of every row, which a sample does not hold."""
    if (params.get("n_trials") or 1) > 1 and not sketch.complete and "band" not in params:
        return {**params, "band": "strata"}
    return params


def _drop_sample(sketch: stream.Sketch, strata: Sequence[Any]) -> None:
    """Let go of the sample before the pass: the strata hold what the pass needs (its ids,
    leaf keys and adjustment), and the sample's typed rows are only for the in-memory
    path's own pass (160 MB less held through the pass of a 20M-row file, 2^22 rows
    sampled)."""
    sketch.drop_sample()
    for s in strata:
        if hasattr(s, "_rows") and getattr(s, "blanks", None) is None:
            s._rows = None  # kept with blanks: their row compares the sample's rows with x


def _sketch(rows: FileRows | DaskRows, target: str, features: Sequence[str], seed: int,
            strata_rows: int) -> stream.Sketch:
    if strata_rows < 2:
        raise StratPDInputError(f"strata_rows must be at least 2; got {strata_rows}")
    for name in (target, *features):
        if name not in rows.columns:
            raise StratPDInputError(
                f'column "{name}" not found; the columns are: ' + ", ".join(rows.columns[:50])
            )
    return rows.sketch(target, seed, strata_rows)


def _rows(data: Any, *, chunk_rows: int, quiet: bool, out: TextIO | None
          ) -> FileRows | DaskRows:
    if is_dask_frame(data):
        return DaskRows(data, chunk_rows)
    if isinstance(data, str | os.PathLike):
        return FileRows(stream.open_table(data, chunk_rows=chunk_rows), quiet=quiet, out=out)
    raise StratPDInputError(
        f"expected a file path or a Dask DataFrame; got {type(data).__name__}"
    )


def _seed(params: dict[str, Any]) -> int:
    seed = params.get("random_state", DEFAULT_SEED)
    return DEFAULT_SEED if seed is None else int(seed)


def stratpd(data: Any, target: str, feature: str, **kw: Any) -> pd.DataFrame:
    """:func:`stratpd_xl.stratpd` of a file read in chunks or of a Dask DataFrame; keywords as
    :func:`partial_dependence`."""
    return partial_dependence(data, target, feature, kind="numeric", **kw)


def partial_dependence(data: Any, target: str, feature: str, *, kind: str | None = None,
                       strata_rows: int = STRATA_ROWS, chunk_rows: int = CHUNK_ROWS,
                       quiet: bool = False, out: TextIO | None = None,
                       **params: Any) -> pd.DataFrame:
    """:func:`stratpd_xl.partial_dependence` of a file read in chunks or of a Dask
    DataFrame: StratPD or CatStratPD by the column's kind, or by ``kind``.

    ``strata_rows`` rows at most are the sample the strata are fitted on, ``chunk_rows`` a
    chunk of a file; ``quiet`` prints no progress (else one line per chunk on ``out``,
    stderr); the other keywords are :func:`stratpd_xl.stratpd`'s.
    """
    rows = _rows(data, chunk_rows=chunk_rows, quiet=quiet, out=out or sys.stderr)
    done = run(rows, target, [feature], kinds=[kind], strata_rows=strata_rows,
               seed=_seed(params), **params)
    return _noted(done.tables[0], done)


def columns(data: Any) -> list[str]:
    """The column names of a file to be read in chunks, or of a Dask DataFrame."""
    if is_dask_frame(data):
        return [str(c) for c in data.columns]
    return list(stream.open_table(data).names)


def catstratpd(data: Any, target: str, feature: str, **kw: Any) -> pd.DataFrame:
    """:func:`stratpd_xl.catstratpd` of a file read in chunks or of a Dask DataFrame."""
    return partial_dependence(data, target, feature, kind="categorical", **kw)


def impact(data: Any, target: str, features: Iterable[str] | None = None, *,
           strata_rows: int = STRATA_ROWS, chunk_rows: int = CHUNK_ROWS, quiet: bool = False,
           out: TextIO | None = None, **params: Any) -> pd.DataFrame:
    """:func:`stratpd_xl.impact` of a file read in chunks or of a Dask DataFrame: every
    feature's strata fitted on one sample, their sums added up in one pass, ranked by the
    engine (``engine.stages.analyse``)."""
    from ..engine import stages as engine_stages

    rows = _rows(data, chunk_rows=chunk_rows, quiet=quiet, out=out or sys.stderr)
    names = list(dict.fromkeys(features)) if features is not None else None
    sketch = _sketch(rows, target, names or [], _seed(params), strata_rows)
    if names is None:  # as sx.impact: every column but the target, identifiers left out
        names = engine_stages.ranked_features(
            sketch.sample, target, positive=params.get("positive"),
            keep=_names(params.get("keep")), exclude=_names(params.get("exclude")),
            classes=params.get("classes"))
    strata, skipped = [], {}
    params = _band(params, sketch)
    for feature in names:
        try:
            strata.append(engine_stages.fit_strata(sketch.sample, target, feature,
                                                   n_rows=sketch.rows, **params))
        except StratPDInputError as exc:
            skipped[feature] = str(exc)
    if not strata:
        reasons = "; ".join(f'"{f}": {why}' for f, why in skipped.items())
        raise StratPDInputError(f'no feature could be ranked for "{target}" ({reasons})')
    _drop_sample(sketch, strata)
    sums = rows.partials(strata, engine_stages.pass_chunk)
    ranking, _, _ = engine_stages.analyse(strata, sums, skipped, target=target)
    return _noted(ranking, Run([], sketch, rows.notes))


def _names(value: Any) -> list[str]:
    """A column name or a list of them (``exclude="price"``: one name, not its letters)."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _noted(table: pd.DataFrame, done: Run) -> pd.DataFrame:
    table.attrs["scale"] = {
        "rows_read": done.sketch.rows,
        "strata_rows": done.sketch.sample_size,
        "sample_is_all_rows": done.sketch.complete,
    }
    if done.notes:
        table.attrs["reading_notes"] = list(done.notes)
    return table
