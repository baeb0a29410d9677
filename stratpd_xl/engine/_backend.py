"""Choose between the numba kernels and the pure-numpy fallback.

Both backends implement the same algorithms and give the same numbers (the tests check it);
numba is only faster.  Set ``STRATPD_XL_BACKEND=numpy`` to force the fallback.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

try:  # numba is a dependency, but the engine must keep working where it cannot be installed.
    import numba as _numba
except ImportError:  # pragma: no cover - exercised by forcing the numpy backend in tests
    _numba = None

HAVE_NUMBA: bool = _numba is not None
_backend: str = "numba" if HAVE_NUMBA else "numpy"
if os.environ.get("STRATPD_XL_BACKEND", "").lower() == "numpy":
    _backend = "numpy"


def get_backend() -> str:
    """Return the active backend, ``"numba"`` or ``"numpy"``."""
    return _backend


def set_backend(name: str) -> str:
    """Select ``"numba"`` or ``"numpy"`` and return the previous backend."""
    global _backend
    if name not in ("numba", "numpy"):
        raise ValueError(f'backend must be "numba" or "numpy", not {name!r}')
    if name == "numba" and not HAVE_NUMBA:
        raise ValueError("numba is not installed; pip install numba or use the numpy backend")
    previous, _backend = _backend, name
    return previous


def njit(func: Callable[..., Any]) -> Callable[..., Any]:
    """``numba.njit(cache=True)`` when numba is present, else the plain function.

    The plain function is never called on the hot path: callers dispatch to the numpy
    implementation instead when numba is missing.
    """
    if _numba is None:
        return func
    return _numba.njit(cache=True, nogil=True)(func)
