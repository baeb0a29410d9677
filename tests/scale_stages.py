"""Stand-in stages for the drivers' own tests (tests/test_scale.py): binned means of the
target, additive like the engine's Partials, so that how the drivers read, sample, map and
reduce is tested apart from the engine's maths.  Importable by Dask's worker processes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

BINS = 16


@dataclass
class Strata:
    target: str
    feature: str
    edges: np.ndarray
    sample_rows: int


@dataclass
class Partial:
    rows: np.ndarray
    sum_y: np.ndarray
    first: np.ndarray  # smallest row id in each bin

    def __add__(self, other: Partial) -> Partial:
        return Partial(self.rows + other.rows, self.sum_y + other.sum_y,
                       np.minimum(self.first, other.first))


def fit_strata(sample: pd.DataFrame, target: str, feature: str, kind: str | None = None,
               **params) -> Strata:
    x = sample[feature].to_numpy(dtype=float)
    edges = np.quantile(x[~np.isnan(x)], np.linspace(0, 1, BINS + 1)[1:-1])
    return Strata(target, feature, edges, len(sample))


def pass_chunk(strata: Strata, chunk: pd.DataFrame) -> Partial:
    x = chunk[strata.feature].to_numpy(dtype=float)
    y = chunk[strata.target].to_numpy(dtype=float)
    ok = ~np.isnan(x) & ~np.isnan(y)
    b = np.searchsorted(strata.edges, x[ok])
    first = np.full(BINS, np.iinfo(np.int64).max)
    np.minimum.at(first, b, chunk.index.to_numpy()[ok])
    return Partial(np.bincount(b, minlength=BINS), np.bincount(b, y[ok], minlength=BINS), first)


def finish(strata: Strata, partial: Partial) -> pd.DataFrame:
    return pd.DataFrame({"bin": np.arange(BINS), "rows": partial.rows,
                         "mean": partial.sum_y / np.maximum(partial.rows, 1),
                         "first": partial.first})
