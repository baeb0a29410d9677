"""CatStratPD on columns with thousands of categories: same numbers, bounded memory."""

from __future__ import annotations

import numpy as np
import pandas as pd

import stratpd_xl as sx
from stratpd_xl.engine import _categorical


def _levels(k: int, n: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    c = rng.integers(0, k, n)
    z = rng.uniform(0, 10, n)
    effect = rng.normal(0, 1, k)
    y = effect[c] + z + rng.normal(0, 0.1, n)
    names = np.array([f"L{i:06d}" for i in range(k)])
    return pd.DataFrame({"c": names[c], "z": z, "y": y}), effect


def test_the_iterative_solve_gives_the_direct_solve_numbers(monkeypatch):
    data, _ = _levels(2500, 20_000)
    iterative = sx.catstratpd(data, "y", "c", random_state=0)
    # The same problem solved densely (what smaller columns get).
    monkeypatch.setattr(_categorical, "_DENSE_MAX", 10_000)
    direct = sx.catstratpd(data, "y", "c", random_state=0)
    assert list(iterative["category"]) == list(direct["category"])
    np.testing.assert_allclose(iterative["pd"], direct["pd"], rtol=0, atol=1e-6)


def test_a_hundred_thousand_categories_give_an_answer():
    # Used to need 3.5 GB and crash inside SuperLU; the curve must now simply arrive.
    data, effect = _levels(100_000, 200_000)
    result = sx.catstratpd(data, "y", "c", random_state=0)
    assert len(result) > 10_000
    known = result.set_index("category")["pd"]
    truth = pd.Series(effect, index=[f"L{i:06d}" for i in range(effect.size)])[known.index]
    # Effects relative to the baseline: differences track the true differences.
    assert np.corrcoef(known.to_numpy(), truth.to_numpy())[0, 1] > 0.8
