"""More rows than memory: the engine's four stages driven over a file read in chunks, or over
the partitions of a Dask DataFrame on whatever cluster its client points at (docs/engine.md).

Pass 0 (:func:`stratpd_xl.input.stream.sketch`, or the same sketch per partition reduced by
Dask) draws the sample ``S`` the strata are fitted on (``engine.stages.fit_strata``); one
pass adds up each chunk's ``Partial`` (``engine.stages.pass_chunk``, combined by ``+``) and
``engine.stages.finish`` turns the sum into the table :func:`stratpd_xl.stratpd` returns.
A table of at most ``strata_rows`` rows is fitted on all its rows, so it gives the same
numbers in memory, streamed and on Dask.  This package holds no maths: it reads, samples,
maps and reduces.
"""

from ._run import (
    CHUNK_ROWS,
    STRATA_ROWS,
    catstratpd,
    columns,
    impact,
    is_dask_frame,
    needs_streaming,
    partial_dependence,
    stratpd,
)

__all__ = [
    "CHUNK_ROWS",
    "STRATA_ROWS",
    "catstratpd",
    "columns",
    "impact",
    "is_dask_frame",
    "needs_streaming",
    "partial_dependence",
    "stratpd",
]
