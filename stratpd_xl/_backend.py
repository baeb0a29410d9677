"""Choose between the numba kernels and the pure-numpy fallback.

The engine's kernels and the .ods pre-scan (:mod:`stratpd_xl.input._scan_kernels`) use it.  Both
backends implement the same algorithms and give the same numbers (the tests check it); numba
is only faster.  Set ``STRATPD_XL_BACKEND=numpy`` to force the fallback.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
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


# Rows below which the engine's work is done serially: starting threads costs more than it
# saves (the honest trees of one feature, binning columns, features of an analysis).
PARALLEL_ROWS = 20_000


@functools.cache
def can_start_threads() -> bool:
    """Whether this interpreter can start threads.

    Pyodide (xlwings Lite in the browser) and other WebAssembly builds have no threads:
    ``Thread.start`` raises there.  Callers then do their work serially.
    """
    if sys.platform in ("emscripten", "wasi"):
        return False
    try:  # a trial thread, once per process, for builds the platform check misses
        probe = threading.Thread(target=lambda: None, daemon=True)
        probe.start()
        probe.join()
    except RuntimeError:
        return False
    return True


_blas_lock = threading.Lock()
_blas_calls = 0
_blas_limit: Any = None


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """A context (or decorator) in which numpy's BLAS uses one thread.

    The engine's products are blocks of at most 16,384 rows x a few dozen columns, which
    gain nothing from a second thread; OpenBLAS's helper threads spin while they wait for
    work, so on a busy machine they burn more CPU than the call itself (a 30,000-row curve
    at load 16-19: 0.79 s of CPU with them, 0.11 s without).  The limit is process-wide
    (OpenBLAS has no per-thread setting): calls that overlap share one limit, taken by the
    first and given back by the last, so the caller's own setting always returns.
    """
    global _blas_calls, _blas_limit
    with _blas_lock:
        if _blas_calls == 0 and sys.platform not in ("emscripten", "wasi"):  # no threads
            from threadpoolctl import threadpool_limits

            _blas_limit = threadpool_limits(1, user_api="blas")
        _blas_calls += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_calls -= 1
            if _blas_calls == 0 and _blas_limit is not None:
                _blas_limit.restore_original_limits()
                _blas_limit = None


def _fallback_cache_dir() -> str | None:
    """A writable per-user directory for numba's cache, or None when there is none."""
    user = str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    path = os.path.join(tempfile.gettempdir(), f"stratpd-xl-numba-{user}")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError:
        return None
    return path


def njit(func: Callable[..., Any]) -> Callable[..., Any]:
    """``numba.njit(cache=True)`` when numba is present, else the plain function.

    The plain function is never called on the hot path: callers dispatch to the numpy
    implementation instead when numba is missing.

    numba refuses ``cache=True`` ("cannot cache function ...: no locator available") when
    neither the package directory nor the home directory's cache is writable (a read-only
    install, a locked-down home).  Then the cache goes to a per-user temporary directory,
    and where even that is impossible the function is compiled on every start, uncached.
    """
    if _numba is None:
        return func
    try:
        return _numba.njit(cache=True, nogil=True)(func)
    except RuntimeError as exc:
        if "cannot cache" not in str(exc):
            raise
    config = _numba.core.config
    fallback = _fallback_cache_dir()
    if fallback is not None:
        # numba picks the cache directory when the function is decorated, so setting it
        # just for this call leaves other numba users in the process alone.
        previous, config.CACHE_DIR = config.CACHE_DIR, fallback
        try:
            return _numba.njit(cache=True, nogil=True)(func)
        except RuntimeError as exc:
            if "cannot cache" not in str(exc):
                raise
        finally:
            config.CACHE_DIR = previous
    return _numba.njit(nogil=True)(func)
