"""The engine's numba kernels, compiled by running a tiny analysis once.

:data:`stratpd_xl._backend.ENGINE` runs :func:`compile_kernels` in a background thread the
first time the engine asks for numba; the numpy fallback answers until it is done.  Going
through the analyses themselves gives numba the argument types of real calls, so no call
compiles again afterwards (``tests/test_engine_kernels.py`` checks it).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def compile_kernels() -> None:
    """A numeric curve with its adjustment and band, and a categorical one, on 120 rows."""
    from .api import catstratpd, stratpd

    rng = np.random.default_rng(0)
    n = 120
    frame = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n),
                          "c": rng.choice(["a", "b", "c"], size=n)})
    frame["y"] = (2 * frame["x"] + frame["z"] + (frame["c"] == "b")
                  + rng.normal(scale=0.1, size=n))
    stratpd(frame, "y", "x", min_samples_leaf=5, n_trials=2)
    catstratpd(frame, "y", "c", min_samples_leaf=5)
