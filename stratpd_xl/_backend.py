"""Choose between the numba kernels and the pure-numpy fallback.

The engine's kernels and the .ods pre-scan (:mod:`stratpd_xl.input._scan_kernels`) use it.  Both
backends implement the same algorithms and give the same numbers (the tests check it); numba
is only faster.

numba compiles a kernel on its first call (after installing: about 5 s of CPU for the
engine's), or loads it from its on-disk cache (about 0.5 s).  So that no call waits for that,
each set of kernels (:class:`Kernels`) is made ready in a background thread the first time
it is asked for, and the numpy fallback answers until it is; a call on at least
:data:`WAIT_ROWS` rows waits for it instead, as numpy's extra time there outweighs a load
from the cache.  ``STRATPD_XL_BACKEND=numpy`` forces the fallback, ``STRATPD_XL_BACKEND=numba``
(or :func:`set_backend`) numba from the first call, compiling in the caller's thread.
numba itself (0.3 s to import) is imported then too, not with this module: a command that
answers on numpy never loads it.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.util
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from typing import Any


def _numba_installed() -> bool:
    # numba is a dependency, but the engine must keep working where it cannot be installed.
    # Only looked up here: importing it costs 0.3 s, which a command that answers on numpy
    # (a 2,000-row curve from the command line) or never reaches the engine need not pay.
    try:
        return importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):  # pragma: no cover - a broken or blocked install
        return False


HAVE_NUMBA: bool = _numba_installed()
_numba: Any = None  # the module, once a kernel is first made ready (_load_numba)
_numba_lock = threading.RLock()
# "auto": numba once its kernels are ready, numpy until then (see Kernels); "numba": numba
# from the first call; "numpy": never numba.
_mode: str = "auto" if HAVE_NUMBA else "numpy"
if os.environ.get("STRATPD_XL_BACKEND", "").lower() in ("numba", "numpy") and HAVE_NUMBA:
    _mode = os.environ["STRATPD_XL_BACKEND"].lower()

#: Rows from which a call waits for the kernels rather than run on numpy meanwhile: numpy
#: takes about twice numba's time (a 200,000-row curve: 1.7 s of CPU against 0.8 s), far
#: more than loading the kernels from numba's cache (0.5 s).
WAIT_ROWS = 100_000


class _Stopped(BaseException):
    """Raised in the compiling thread when the process exits: it stops between kernels.

    A BaseException, so that no ``except Exception`` on the way swallows it."""


class Kernels:
    """A set of numba kernels made ready in a background thread, numpy answering meanwhile.

    Parameters
    ----------
    name : str
        What the kernels are for (the thread's name says it).
    compile : callable, optional
        Calls every kernel of the set once, with the argument types real calls give, so
        numba compiles each (or loads it from its cache); it runs in the thread, which sees
        the numba backend whatever the readiness.  Set later with :meth:`set_compile` when
        the function lives above this module.
    shared : bool, default False
        Whether processes that share numba's cache make the set ready one at a time (see
        :func:`_one_process_at_a_time`): the package's own sets, whose compile fills the cache
        the next process loads from.
    """

    def __init__(self, name: str, compile: Callable[[], object] | None = None, *,
                 shared: bool = False) -> None:
        self.name = name
        self._compile = compile
        self._shared = shared
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._failed: BaseException | None = None

    def set_compile(self, compile: Callable[[], object]) -> None:
        self._compile = compile

    @property
    def failed(self) -> BaseException | None:
        """The error that stopped the compile (the kernels then stay on numpy), or None."""
        return self._failed

    def ready(self) -> bool:
        """Whether the kernels are compiled (or loaded) in this process."""
        return self._ready.is_set()

    def use_numba(self, rows: int = 0) -> bool:
        """Whether a call on ``rows`` rows takes the numba kernels now.

        Starts the background compile the first time; a call on :data:`WAIT_ROWS` rows or
        more waits for it.
        """
        if getattr(_compiling, "active", False):
            return True  # the compiling thread itself, whatever the caller's choice
        if _mode != "auto":
            return _mode == "numba" and _load_numba() is not None
        if self._ready.is_set():
            return True
        if self._failed is not None or self._compile is None:
            return False
        if rows < WAIT_ROWS and not _background:
            return False  # a one-shot process: numpy, no compile it would not live to use
        if not can_start_threads():  # nothing to answer meanwhile with: compile here
            self._run()
            return self._ready.is_set()
        self.start()
        if rows >= WAIT_ROWS:
            return self.wait()
        return False

    def start(self) -> None:
        """Start the background compile (once; nothing when numba is not in use)."""
        with self._lock:
            if (self._thread is not None or self._ready.is_set() or self._compile is None
                    or _mode == "numpy"):
                return
            thread = threading.Thread(target=self._run, daemon=True,
                                      name=f"stratpd-compile-{self.name}")
            # Recorded once it runs: a thread that could not start (an interpreter shutting
            # down refuses new threads) is never joined, at exit or by wait().
            thread.start()
            self._thread = thread
            _started.append(self)

    def wait(self, timeout: float | None = None) -> bool:
        """Start the compile if need be and wait for it; True once the kernels are ready."""
        if self._ready.is_set():
            return True
        self.start()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        return self._ready.is_set()

    def _run(self) -> None:
        _compiling.active = True
        try:
            if self._compile is not None:
                with _one_process_at_a_time(self.name) if self._shared else _nothing():
                    self._compile()
            self._ready.set()
        except _Stopped:
            pass  # what was compiled is in numba's cache; the next process goes on from there
        except Exception as exc:  # noqa: BLE001 - numba failed: numpy answers, as without it
            self._failed = exc
        finally:
            _compiling.active = False


_compiling = threading.local()  # .active: this thread runs a Kernels compile
_nothing = contextlib.nullcontext


@contextlib.contextmanager
def _one_process_at_a_time(name: str) -> Iterator[None]:
    """Make a set of kernels ready while no other process that shares numba's cache does.

    Processes started together with an empty cache (the formulas' worker beside a command
    line, the processes of a parallel run) each compiled the whole engine, several seconds of
    CPU apiece; one compiles now and the others then load its kernels from the cache.  The
    lock is a file in the temporary folder named after the cache (``NUMBA_CACHE_DIR``, else
    the package's folder, where numba keeps it); a POSIX record lock, which the system lets
    go of when its process ends however it ends, and which a forked child does not inherit.
    Waits between short polls, so that an exiting process stops waiting (:func:`checkpoint`).
    Where there is no such lock (Windows, WebAssembly) or no such file, nothing is waited for.
    """
    try:
        import fcntl
    except ImportError:
        fcntl = None
    fd = -1
    if fcntl is not None:
        import hashlib

        place = os.environ.get("NUMBA_CACHE_DIR") or os.path.dirname(os.path.abspath(__file__))
        digest = hashlib.sha256(place.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        user = os.getuid() if hasattr(os, "getuid") else "user"
        path = os.path.join(tempfile.gettempdir(), f"stratpd-xl-compile-{user}-{name}-{digest}")
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        except OSError:
            fd = -1
    try:
        while fd >= 0:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:  # another process holds it
                checkpoint()
                _exiting.wait(0.05)
        yield
    finally:
        if fd >= 0:
            os.close(fd)  # and with it the lock


_background = True  # whether a small call starts the background compile (see one_shot)


@contextlib.contextmanager
def one_shot() -> Iterator[None]:
    """A context for a process that answers once and exits (the command line).

    Calls under :data:`WAIT_ROWS` rows then run on numpy without starting the background
    compile: the process would end before numba could take over, and would wait at exit for
    the kernel being compiled (up to 6 s for the tree's).  Larger calls still wait for the
    kernels; a warm cache loads them in 0.5 s, which they win back.
    """
    global _background
    previous, _background = _background, False
    try:
        yield
    finally:
        _background = previous
_started: list[Kernels] = []
_exiting = threading.Event()


@atexit.register
def _stop_compiling() -> None:
    # A process that exits while numba compiles in a daemon thread aborts ("terminate called
    # without an active exception"): stop the compiles at their next kernel and wait for that.
    _exiting.set()
    for kernels in _started:  # only threads that started are recorded (Kernels.start)
        if kernels._thread is not None:
            kernels._thread.join()


def _after_fork_in_child() -> None:
    # A forked child has no compiling thread, only its parent's record of one: a compile
    # that had not finished starts again when the child asks for the kernels.
    for kernels in _started:
        if not kernels._ready.is_set():
            kernels._thread = None
            kernels._lock = threading.Lock()
    _started.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

#: The engine's kernels (their compile is set by :mod:`stratpd_xl.engine`).
ENGINE = Kernels("engine", shared=True)


def checkpoint() -> None:
    """In a compiling thread of an exiting process, stop here (between two kernels)."""
    if _exiting.is_set() and getattr(_compiling, "active", False):
        raise _Stopped


def numba_in_use() -> bool:
    """Whether the kernels run on numba once ready (numba installed and not switched off)."""
    return _mode != "numpy"


def get_backend(rows: int = 0) -> str:
    """The backend the engine's kernels take now, ``"numba"`` or ``"numpy"``.

    ``rows``: the size of the call, from which it waits for the kernels (see :class:`Kernels`).
    """
    checkpoint()
    return "numba" if ENGINE.use_numba(rows) else "numpy"


def set_backend(name: str) -> str:
    """Select ``"numba"`` (from the next call on, compiling in the caller's thread when need
    be), ``"numpy"`` or ``"auto"`` (the default: see :class:`Kernels`); return the previous
    choice."""
    global _mode
    if name not in ("numba", "numpy", "auto"):
        raise ValueError(f'backend must be "numba", "numpy" or "auto", not {name!r}')
    if name != "numpy" and not HAVE_NUMBA:
        raise ValueError("numba is not installed; pip install numba or use the numpy backend")
    previous, _mode = _mode, name
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
            _blas_limit = _blas_controller().limit(limits=1, user_api="blas")
        _blas_calls += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_calls -= 1
            if _blas_calls == 0 and _blas_limit is not None:
                _blas_limit.restore_original_limits()
                _blas_limit = None


_controller: Any = None
_controller_modules = -1


def _blas_controller() -> Any:
    """threadpoolctl's controller of the BLAS libraries loaded in the process.

    Finding them reads every loaded library (1-13 ms), which ``threadpool_limits`` did on
    each engine call: a tenth of a 30,000-row curve.  They are looked up again only when
    Python has imported modules since (a new module may have loaded another BLAS).
    """
    global _controller, _controller_modules
    if _controller is None or len(sys.modules) != _controller_modules:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
        _controller_modules = len(sys.modules)
    return _controller


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
    """``numba.njit(cache=True)`` of ``func``, made when a kernel is first called.

    Returns a :class:`LazyKernel`: numba is imported, and every kernel made a numba
    dispatcher, only when one of them is first called on the numba backend, so importing
    the engine does not import numba.  Without numba the plain function is never called on
    the hot path: callers dispatch to the numpy implementation instead.

    numba refuses ``cache=True`` ("cannot cache function ...: no locator available") when
    neither the package directory nor the home directory's cache is writable (a read-only
    install, a locked-down home).  Then the cache goes to a per-user temporary directory,
    and where even that is impossible the function is compiled on every start, uncached.
    """
    kernel = LazyKernel(func)
    DISPATCHERS.append(kernel)
    if _numba is not None:  # numba already loaded: a kernel defined later is made at once
        return kernel.dispatcher()
    return kernel


class LazyKernel:
    """A numba kernel made (and bound in its callers' modules) on first use.

    Calling it calls the dispatcher.  Once numba is loaded, every module of the package
    that holds a kernel under a name gets its dispatcher there instead (see
    :func:`_bind_kernels`): a kernel calling another finds a dispatcher numba can type.
    """

    def __init__(self, func: Callable[..., Any]) -> None:
        self.py_func = func
        self._dispatcher: Any = None
        functools.update_wrapper(self, func)

    def dispatcher(self) -> Any:
        if self._dispatcher is None:
            with _numba_lock:
                if self._dispatcher is None:
                    if _load_numba() is None:
                        raise ImportError("numba is not installed; the numpy backend answers")
                    self._dispatcher = _cached_njit(self.py_func)
        return self._dispatcher

    @property
    def signatures(self) -> list:
        """The dispatcher's compiled signatures (none before numba is loaded)."""
        return [] if self._dispatcher is None else self._dispatcher.signatures

    def __call__(self, *args: Any) -> Any:
        return self.dispatcher()(*args)


#: Every kernel made by :func:`njit` (the tests check the compiles cover what analyses call).
DISPATCHERS: list[LazyKernel] = []


def _load_numba() -> Any:
    """numba, imported once (None when it cannot be), with every kernel made and bound."""
    global _numba, HAVE_NUMBA, _mode
    if _numba is not None or not HAVE_NUMBA:
        return _numba
    with _numba_lock:
        if _numba is None and HAVE_NUMBA:
            try:
                import numba
            except ImportError:  # installed but broken: numpy answers, as without it
                HAVE_NUMBA, _mode = False, "numpy"
                return None
            _numba = numba
            for kernel in DISPATCHERS:
                kernel.dispatcher()
            _bind_kernels()
    return _numba


def _bind_kernels() -> None:
    """Put each kernel's dispatcher where the package's modules hold the kernel by name.

    numba reads a kernel's globals when it compiles it; a :class:`LazyKernel` there is a
    Python object it cannot call from compiled code.
    """
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "stratpd_xl" or name.startswith("stratpd_xl.")):
            continue
        space = vars(module)
        for key, value in list(space.items()):
            if isinstance(value, LazyKernel) and value._dispatcher is not None:
                space[key] = value._dispatcher


def _cached_njit(func: Callable[..., Any]) -> Any:
    assert _numba is not None
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
