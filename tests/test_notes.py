"""Notes are data: what each is about, merged once per analysis, ranked, and shown in part.

A wide table gives dozens of warnings that are the same fact seen from many features (one
column with gaps moves with 24 of them).  These tests hold the rules of issue 28: each
engine warning carries its kind and the columns it names, a note about a column is said
once per analysis, the command line prints the few that matter most, and the report keeps
all of them on a Notes sheet.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import stratpd_xl as sx
from stratpd_xl.schema import Note


def _twins(n: int = 1_500, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a, b, c = rng.normal(size=(3, n))
    return pd.DataFrame({"a": a, "b": b, "c": c, "total": a + b + 1e-3 * rng.normal(size=n),
                         "y": a + 2 * b + c + rng.normal(size=n)})


def test_a_duplicate_warning_names_the_columns_that_duplicate_the_feature():
    w = [n for n in sx.stratpd(_twins(), "y", "total").attrs["warnings"]
         if getattr(n, "kind", "") == "duplicate"]
    assert len(w) == 1 and isinstance(w[0], Note)
    assert set(w[0].columns) == {"a", "b"} and w[0].features == ("total",)
    assert '("a", "b")' in w[0] or '("b", "a")' in w[0]
    assert w[0].moves > 0.9


def _gappy(n: int = 1_200, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1, x2 = rng.normal(size=(2, n))
    side = np.where(x1 + x2 + 0.3 * rng.normal(size=n) > 0, "up", "down").astype(object)
    side[rng.random(n) < 0.8] = None  # missing in 80 % of the rows, moving with x1 and x2
    return pd.DataFrame({"x1": x1, "x2": x2, "side": side,
                         "y": x1 + x2 + rng.normal(size=n)})


def test_a_gap_warning_says_which_column_and_feature_and_how_much():
    gaps = [w for w in sx.stratpd(_gappy(), "y", "x1").attrs["warnings"]
            if getattr(w, "kind", "") == "gap"]
    assert [(w.columns, w.features) for w in gaps] == [(("side",), ("x1",))]
    assert 0.7 < gaps[0].facts["share"] < 0.9 and 0 < gaps[0].moves < 1
