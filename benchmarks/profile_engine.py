"""Where the engine's time goes: wall and CPU seconds per stage of a curve and an impact ranking.

Usage::

    python benchmarks/profile_engine.py                       # 2,000 / 30,000 / 200,000 / 1,048,576
    python benchmarks/profile_engine.py --sizes 2000,30000 --cases curve,impact
    python benchmarks/profile_engine.py --quick               # 2,000 and 30,000 rows only

The table is issue 32's: 10 numeric columns (uniform on [0, 10], all values distinct) and two
text columns of 12 and 3 levels, with a curved truth ``y = x0^2 + 3 x1 + 5 sin(x2) +
0.5 (x3 + ... + x9) + month + segment + N(0, 1)``; the curve is of ``x0``.  Cases, all with
the defaults of the parameter table: ``curve`` (``sx.stratpd(df, "y", "x0")``), ``impact``
(``sx.impact(df, "y")``, 12 features), ``band`` (the curve with the report's 10 trials) and
``report`` (the ranking a report makes: the impact with the band's 10 trials).

Every (case, size) runs in a fresh process of this script (``--worker``), after a warm-up call
on 2,000 other rows (numba's kernels loaded, imports done).  It makes two calls of the case:

* a plain one: the wall and CPU seconds (``time.process_time``: every thread) the user pays;
* an instrumented one: every engine function listed in :data:`STAGES` is wrapped by a timer
  that adds its *exclusive* thread CPU (``time.thread_time``) and wall seconds (its own,
  less the wrapped functions it calls in the same thread) to its stage.  Work done in the
  engine's own threads (the honest trees, two features at a time) is counted in the thread
  that does it, so the stages' CPU adds up to the call's CPU; their wall seconds are
  thread-seconds and can add up to more than the call's wall when threads overlap.  CPU
  spent by BLAS's helper threads (numpy's matrix products) is read from
  ``/proc/self/task`` and shown on its own row; what no stage claims is "unattributed".

Where the adjustment used the other columns' hinges, a third call without them
(``MAX_BENDS_CELLS = 0``) gives their marginal CPU.  Thread start-up is measured apart (a
two-thread pool started, given two empty tasks and shut down) and multiplied by the pools
the call started.  The first call after install is timed in fresh processes: the import
alone, a 2,000-row curve with numba's cache warm, with an empty cache (every kernel
compiled), and with the numpy backend.

On a shared machine read the CPU seconds first: they move far less with the load than the
wall clock; the 1-minute load average is printed beside every number.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SIZES = (2_000, 30_000, 200_000, 1_048_576)
CASES = ("curve", "impact", "band", "report")
# The band's 10 trials at 1M rows take minutes on a busy machine: asked for explicitly.
BAND_MAX_ROWS = 200_000
MONTHS = np.array(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
                   "Nov", "Dec"], dtype=object)
SEGMENTS = np.array(["retail", "online", "wholesale"], dtype=object)

# --------------------------------------------------------------------------- data


def make_table(n: int, seed: int = 0) -> pd.DataFrame:
    """Issue 32's table: 10 numeric and 2 text columns (12 and 3 levels), a curved truth."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, (n, 10))
    month = rng.integers(0, 12, n)
    segment = rng.integers(0, 3, n)
    month_effect = np.linspace(-6, 6, 12) ** 2 / 6  # a seasonal U
    segment_effect = np.array([0.0, 4.0, -2.0])
    y = (x[:, 0] ** 2 + 3 * x[:, 1] + 5 * np.sin(x[:, 2]) + 0.5 * x[:, 3:].sum(axis=1)
         + month_effect[month] + segment_effect[segment] + rng.normal(0, 1, n))
    df = pd.DataFrame(x, columns=[f"x{i}" for i in range(10)])
    df["month"] = MONTHS[month]
    df["segment"] = SEGMENTS[segment]
    df["y"] = y
    return df


def run_case(case: str, df: pd.DataFrame) -> Any:
    # Through the engine module (sx.stratpd is the same function), so the profile's wrappers
    # of the public functions are the ones called.
    from stratpd_xl.engine import api

    if case == "curve":
        return api.stratpd(df, "y", "x0")
    if case == "band":
        return api.stratpd(df, "y", "x0", n_trials=10)
    if case == "report":  # the report's ranking: every feature with the band's 10 trials
        return api.impact(df, "y", n_trials=10)
    return api.impact(df, "y")


# --------------------------------------------------------------------------- stages

# (module, attribute, stage): attribute may be "Class.method".  A stage's seconds are the
# exclusive time of its functions (what they do less the other wrapped functions they call).
# Stages are grouped by the first word before ":" in the summary.
STAGES: list[tuple[str, str, str]] = [
    # per-call set-up: the public function, parameter checks, dispatch, result attrs
    # (the public call's wall includes waiting for the features' threads of an impact ranking)
    ("stratpd_xl.engine.api", "stratpd", "set-up: public call, dispatch, waiting"),
    ("stratpd_xl.engine.api", "analyse", "set-up: public call, dispatch, waiting"),
    ("stratpd_xl.engine.api", "_run", "set-up: public call, dispatch, waiting"),
    ("stratpd_xl.params", "Settings.make", "set-up: parameter checks"),
    ("stratpd_xl.engine.stages", "_rows_for", "set-up: rows, attrs"),
    ("stratpd_xl.engine.stages", "_attrs", "set-up: rows, attrs"),
    ("stratpd_xl.engine.stages", "_stratpd_table",
     "set-up: feature glue (x scaling, result frame)"),
    ("stratpd_xl.engine.stages", "_catstratpd_table",
     "set-up: feature glue (x scaling, result frame)"),
    # the table: typing, identifiers, text to codes
    ("stratpd_xl.engine.api", "_table", "table: build (checks, yes/no, identifiers)"),
    ("stratpd_xl.engine.stages", "as_float", "table: column to float"),
    ("stratpd_xl.engine._warnings", "as_float", "table: column to float"),
    ("stratpd_xl.engine._design", "as_float", "table: column to float"),
    ("stratpd_xl.engine._table", "as_float", "table: column to float"),
    ("stratpd_xl.engine._warnings", "category_codes", "table: text to category codes"),
    ("stratpd_xl.engine._table", "category_codes", "table: text to category codes"),
    # binning the other columns and gathering the strata matrix
    ("stratpd_xl.engine._table", "Table._compute_bins", "binning: other columns' bins"),
    ("stratpd_xl.engine._table", "Table.strata_matrix", "binning: strata matrix (gather)"),
    # the tree
    ("stratpd_xl.engine.stages", "stratify", "tree: split, threads, y standardised"),
    ("stratpd_xl.engine._band", "stratify", "tree: split, threads, y standardised"),
    ("stratpd_xl.engine._stratify", "_fit_and_place", "tree: split, threads, y standardised"),
    ("stratpd_xl.engine._stratify", "fit_tree", "tree: grow"),
    ("stratpd_xl.engine._stratify", "fit_forest", "tree: grow"),
    ("stratpd_xl.engine._stratify", "apply_tree", "tree: place the other half"),
    ("stratpd_xl.engine._stratify", "canonical_labels", "tree: leaf labels"),
    # the adjustment
    ("stratpd_xl.engine.stages", "_adjustment", "adjustment: design of the others"),
    ("stratpd_xl.engine._fit", "_others_design", "adjustment: design of the others"),
    ("stratpd_xl.engine._design", "_compact", "adjustment: columns read for the design"),
    ("stratpd_xl.engine._design", "_design_of", "adjustment: design of the others"),
    ("stratpd_xl.engine._design", "_shared_design", "adjustment: design of the others"),
    ("stratpd_xl.engine.api", "_shared_design", "adjustment: design of the others"),
    ("stratpd_xl.engine._design", "_fill_column", "adjustment: gaps filled along x"),
    ("stratpd_xl.engine._design", "_hinges", "adjustment: hinges of the others (columns)"),
    ("stratpd_xl.engine._design", "_assembled", "adjustment: hinges of the others (columns)"),
    ("stratpd_xl.engine.stages", "standardised_basis", "adjustment: feature basis"),
    ("stratpd_xl.engine._fit", "fit_adjustment", "adjustment: folds, ridges, solves, part"),
    ("stratpd_xl.engine._adjust", "_within_grams",
     "adjustment: within-strata cross-products"),
    ("stratpd_xl.engine._adjust", "Adjustment.refit", "adjustment: refit on a trial's half"),
    # slopes / category effects
    ("stratpd_xl.engine.stages", "unique_x", "slopes: distinct x (sort)"),
    ("stratpd_xl.engine.stages", "slope_field", "slopes: slope field"),
    ("stratpd_xl.engine._numeric", "SlopeField.for_target", "slopes: plain field beside adjusted"),
    ("stratpd_xl.engine.stages", "category_effects", "slopes: category effects solve"),
    # integration and the curve's numbers
    ("stratpd_xl.engine.stages", "integrate", "integration: integrate, centre, summarise"),
    ("stratpd_xl.engine.stages", "curve_on_grid", "integration: integrate, centre, summarise"),
    ("stratpd_xl.engine.stages", "_row_weights", "integration: integrate, centre, summarise"),
    ("stratpd_xl.engine.stages", "_centred", "integration: integrate, centre, summarise"),
    ("stratpd_xl.engine.stages", "summarise", "integration: integrate, centre, summarise"),
    ("stratpd_xl.engine.stages", "_rise", "integration: rise, shape and strip"),
    ("stratpd_xl.engine.stages", "curve_shape", "integration: rise, shape and strip"),
    ("stratpd_xl.engine.stages", "_data_strip", "integration: rise, shape and strip"),
    # the band
    ("stratpd_xl.engine.stages", "_band", "band: pointwise and simultaneous"),
    ("stratpd_xl.engine._band", "_band", "band: pointwise and simultaneous"),
    ("stratpd_xl.engine._finish", "_band", "band: pointwise and simultaneous"),
    ("stratpd_xl.engine.stages", "_simultaneous_band", "band: pointwise and simultaneous"),
    # warnings
    ("stratpd_xl.engine.stages", "_table_warnings", "warnings: leaks and copies"),
    ("stratpd_xl.engine.stages", "_leaks_of", "warnings: leaks and copies"),
    ("stratpd_xl.engine._warnings", "_copies", "warnings: leaks and copies"),
    ("stratpd_xl.engine.stages", "_duplicating", "warnings: columns duplicating the feature"),
    ("stratpd_xl.engine._warnings", "_gap_warnings", "warnings: other columns' gaps"),
    ("stratpd_xl.engine.stages", "within_strata_share", "warnings: within-strata share"),
    ("stratpd_xl.engine._warnings", "within_strata_share", "warnings: within-strata share"),
    ("stratpd_xl.engine.stages", "_code_like", "warnings: codes, reversal checks"),
    ("stratpd_xl.engine.stages", "_rise_check", "warnings: codes, reversal checks"),
    ("stratpd_xl.engine.stages", "_order_check", "warnings: codes, reversal checks"),
]
# Functions whose body is a generator: their time is that of the loop consuming them; the
# trial loop's stages are named "trials: ..." while its generator is open.
TRIAL_GENERATOR = ("stratpd_xl.engine.stages", "_half_samples")
POOL_MODULES = ("stratpd_xl.engine.api", "stratpd_xl.engine._stratify",
                "stratpd_xl.engine._table")


class Profile:
    """Exclusive thread CPU and wall seconds per stage, across threads."""

    def __init__(self) -> None:
        self.local = threading.local()
        self.lock = threading.Lock()
        self.seconds: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
        self.undo: list[Callable[[], None]] = []
        self.pools = 0
        self.in_trials = 0
        self.missing: list[str] = []

    def _stack(self) -> list[list[float]]:
        if not hasattr(self.local, "stack"):
            self.local.stack = []
        return self.local.stack

    def timed(self, fn: Callable[..., Any], stage: str) -> Callable[..., Any]:
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            stack = self._stack()
            c0, w0 = time.thread_time(), time.perf_counter()
            stack.append([0.0, 0.0])
            try:
                return fn(*args, **kwargs)
            finally:
                cpu, wall = time.thread_time() - c0, time.perf_counter() - w0
                child_cpu, child_wall = stack.pop()
                if stack:
                    stack[-1][0] += cpu
                    stack[-1][1] += wall
                name = ("trials: " if self.in_trials else "") + stage
                with self.lock:
                    entry = self.seconds[name]
                    entry[0] += cpu - child_cpu
                    entry[1] += wall - child_wall
                    entry[2] += 1

        return inner

    def trials(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        # Process-wide, not per thread: a trial's trees grow in the tree threads.  Only a
        # single curve has trials, so no other work runs meanwhile.
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            with self.lock:
                self.in_trials += 1
            try:
                yield from fn(*args, **kwargs)
            finally:
                with self.lock:
                    self.in_trials -= 1

        return inner

    def _patch(self, owner: Any, name: str, new: Any) -> None:
        old = owner.__dict__[name]
        setattr(owner, name, new)
        self.undo.append(lambda: setattr(owner, name, old))

    def install(self) -> None:
        import importlib
        from concurrent.futures import ThreadPoolExecutor

        for module, attr, stage in STAGES:
            owner: Any = importlib.import_module(module)
            *path, name = attr.split(".")
            for part in path:
                owner = getattr(owner, part)
            found = owner.__dict__.get(name)
            if found is None:  # the engine has moved on: its time goes to the caller
                self.missing.append(f"{module}.{attr}")
                continue
            if isinstance(found, classmethod):
                self._patch(owner, name, classmethod(self.timed(found.__func__, stage)))
            else:
                self._patch(owner, name, self.timed(found, stage))
        module, name = TRIAL_GENERATOR
        owner = importlib.import_module(module)
        self._patch(owner, name, self.trials(owner.__dict__[name]))
        profile = self

        class CountedPool(ThreadPoolExecutor):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                with profile.lock:
                    profile.pools += 1
                super().__init__(*args, **kwargs)

        for module in POOL_MODULES:
            self._patch(importlib.import_module(module), "ThreadPoolExecutor", CountedPool)

    def remove(self) -> None:
        while self.undo:
            self.undo.pop()()


# --------------------------------------------------------------------------- measuring


def _load() -> float:
    with open("/proc/loadavg") as fh:
        return float(fh.read().split()[0])


def _task_cpu() -> dict[int, float]:
    """CPU seconds of every thread of this process (utime + stime), by thread id."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(tid)] = (int(fields[11]) + int(fields[12])) / tick
    return out


def _helper_cpu(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU of threads that live through the call and are not Python's (BLAS's pool)."""
    python = {t.native_id for t in threading.enumerate()}
    return sum(after[t] - before[t] for t in after
               if t in before and t not in python and t != os.getpid())


def _timed_call(call: Callable[[], Any], repeat: int = 1) -> dict[str, float]:
    """Wall and CPU seconds of ``call``: the least of ``repeat`` calls (each its own least),
    with the mean 1-minute load average during them."""
    runs = []
    for _ in range(repeat):
        load0 = _load()
        c0, w0 = time.process_time(), time.perf_counter()
        call()
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        runs.append((wall, cpu, (load0 + _load()) / 2))
    return {"wall": min(r[0] for r in runs), "cpu": min(r[1] for r in runs),
            "load": float(np.mean([r[2] for r in runs]))}


def _pool_start_seconds(repeat: int = 30) -> float:
    """Median wall seconds to start a two-thread pool, run two empty tasks and shut it down."""
    from concurrent.futures import ThreadPoolExecutor

    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(lambda _: None, range(2)))
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def worker(case: str, n: int, repeat: int) -> dict[str, Any]:
    """Profile one case at one size in this process."""
    from stratpd_xl import _backend
    from stratpd_xl.engine import _design

    run_case(case, make_table(2_000, seed=1))  # imports done
    _backend.ENGINE.wait()  # kernels loaded: numba has taken over from numpy
    df = make_table(n)
    plain = _timed_call(lambda: run_case(case, df), repeat)
    profile = Profile()
    profile.install()
    try:
        before = _task_cpu()
        instrumented = _timed_call(lambda: run_case(case, df))
        helper = _helper_cpu(before, _task_cpu())
    finally:
        profile.remove()
    out: dict[str, Any] = {
        "case": case, "n": n, "plain": plain, "instrumented": instrumented,
        "stages": dict(profile.seconds), "helper_cpu": helper, "pools": profile.pools,
        "missing": profile.missing,
        "pool_start": _pool_start_seconds(),
    }
    hinged = profile.seconds.get("adjustment: hinges of the others (columns)", [0, 0, 0])[2]
    if hinged:
        old, _design.MAX_BENDS_CELLS = _design.MAX_BENDS_CELLS, 0
        try:
            out["without_hinges"] = _timed_call(lambda: run_case(case, df), repeat)
        finally:
            _design.MAX_BENDS_CELLS = old
    return out


# --------------------------------------------------------------------------- first call

FIRST_CALL = """
import time
c0 = time.process_time()
import numpy as np, pandas as pd
import stratpd_xl as sx
c1 = time.process_time()
rng = np.random.default_rng(0)
df = pd.DataFrame(rng.uniform(0, 10, (2000, 4)), columns=list("abcd"))
df["g"] = rng.choice(["p", "q", "r"], 2000)
df["y"] = df.a ** 2 + df.b
c2 = time.process_time()
sx.stratpd(df, "y", "a")
print(c1 - c0, time.process_time() - c2)
"""


def first_calls() -> list[dict[str, Any]]:
    """Fresh processes: import and a 2,000-row curve, with numba's cache warm, empty, or
    the numpy backend."""
    rows = []
    base = dict(os.environ)
    base.pop("STRATPD_XL_BACKEND", None)
    with tempfile.TemporaryDirectory() as empty:
        numba = {"STRATPD_XL_BACKEND": "numba"}  # the call itself on numba
        for label, extra in (("numba, cache warm", numba),
                             ("numba, empty cache (every kernel compiled)",
                              {**numba, "NUMBA_CACHE_DIR": empty}),
                             ("numpy backend", {"STRATPD_XL_BACKEND": "numpy"})):
            if "NUMBA_CACHE_DIR" not in extra and extra is numba:  # so "warm" is warm
                subprocess.run([sys.executable, "-c", FIRST_CALL], env=base | numba,
                               check=True, capture_output=True, cwd=ROOT)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            load0 = _load()
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, "-c", FIRST_CALL], env=base | extra,
                                  check=True, capture_output=True, text=True, cwd=ROOT)
            wall = time.perf_counter() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            imp, call = (float(v) for v in proc.stdout.split())
            rows.append({"label": label, "wall": wall, "cpu": cpu, "import": imp,
                         "call": call, "load": (load0 + _load()) / 2})
    return rows


# --------------------------------------------------------------------------- report


def _group(stage: str) -> str:
    return stage.removeprefix("trials: ").split(":")[0]


def _cell(cpu: float, wall: float, total: float) -> str:
    share = 100 * cpu / total if total > 0 else 0.0
    return f"{cpu:.3f} / {wall:.3f} ({share:.0f} %)"


def table(results: list[dict[str, Any]]) -> str:
    """One markdown table of a case: stages down, sizes across."""
    names = sorted({s for r in results for s in r["stages"]},
                   key=lambda s: ([g for _, _, g in STAGES].index(s.removeprefix("trials: "))
                                  + (1000 if s.startswith("trials: ") else 0)))
    head = "| stage: CPU s / wall s (share of the call's CPU) | " + " | ".join(
        f"{r['n']:,} rows" for r in results) + " |"
    lines = [head, "|---|" + "---:|" * len(results)]

    def row(label: str, values: list[str]) -> None:
        lines.append(f"| {label} | " + " | ".join(values) + " |")

    for s in names:
        row(s, [_cell(*r["stages"].get(s, [0.0, 0.0])[:2], r["instrumented"]["cpu"])
                for r in results])
    row("BLAS helper threads (CPU only)",
        [_cell(r["helper_cpu"], 0.0, r["instrumented"]["cpu"]) for r in results])
    row("unattributed (CPU only)", [_cell(
        r["instrumented"]["cpu"] - r["helper_cpu"] - sum(v[0] for v in r["stages"].values()),
        0.0, r["instrumented"]["cpu"]) for r in results])
    groups = list(dict.fromkeys(_group(s) for s in names))
    for g in groups:
        row(f"**{g} (all)**", [_cell(
            sum(v[0] for s, v in r["stages"].items() if _group(s) == g),
            sum(v[1] for s, v in r["stages"].items() if _group(s) == g),
            r["instrumented"]["cpu"]) for r in results])
    row("thread pools started x start-up s (within the stages)",
        [f"{r['pools']} x {r['pool_start'] * 1e3:.2f} ms" for r in results])
    row("hinges' marginal CPU s (call without them)", [
        f"{r['plain']['cpu'] - r['without_hinges']['cpu']:.3f}" if "without_hinges" in r
        else "not used" for r in results])
    row("**call, instrumented: CPU s / wall s**",
        [f"{r['instrumented']['cpu']:.3f} / {r['instrumented']['wall']:.3f}" for r in results])
    row("**call, plain (least of --repeat): CPU s / wall s**",
        [f"{r['plain']['cpu']:.3f} / {r['plain']['wall']:.3f}" for r in results])
    row("load average (1 min) during the plain call",
        [f"{r['plain']['load']:.1f}" for r in results])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)),
                    help="rows, comma-separated (default: %(default)s)")
    ap.add_argument("--cases", default=",".join(CASES),
                    help=f"of {', '.join(CASES)} (default: all; band up to "
                         f"{BAND_MAX_ROWS:,} rows unless --band-all)")
    ap.add_argument("--repeat", type=int, default=2,
                    help="plain calls per case and size; the least CPU and wall are shown")
    ap.add_argument("--band-all", action="store_true", help="the band at every size")
    ap.add_argument("--quick", action="store_true", help="2,000 and 30,000 rows only")
    ap.add_argument("--no-first-call", action="store_true",
                    help="skip the fresh-process first calls")
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.n, args.repeat)))
        return 0
    sizes = [2_000, 30_000] if args.quick else [int(s) for s in args.sizes.split(",")]
    cases = [c.strip() for c in args.cases.split(",")]
    unknown = set(cases) - set(CASES)
    if unknown:
        ap.error(f"unknown case(s) {', '.join(sorted(unknown))}; choose from {', '.join(CASES)}")
    print(f"profile_engine.py, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{os.cpu_count()} cores, load average at start {_load():.1f}", flush=True)
    for case in cases:
        results = []
        for n in sizes:
            if case in ("band", "report") and n > BAND_MAX_ROWS and not args.band_all:
                continue
            print(f"  {case}, {n:,} rows ...", file=sys.stderr, flush=True)
            proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker",
                                   case, "--n", str(n), "--repeat", str(args.repeat)],
                                  capture_output=True, text=True,
                                  cwd=ROOT)
            if proc.returncode != 0:
                print(f"{case} at {n:,} rows failed: "
                      f"{(proc.stderr.strip().splitlines() or ['?'])[-1]}", file=sys.stderr)
                continue
            results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        if results:
            print(f"\n### {case}\n\n{table(results)}")
            missing = sorted({m for r in results for m in r["missing"]})
            if missing:
                print(f"\nNot in this version of the engine (their time is their callers'): "
                      f"{', '.join(missing)}")
    if not args.no_first_call:
        print("\n### first call in a fresh process (2,000-row curve)\n")
        print("| process | wall s | CPU s | import: CPU s | the call: CPU s | load |")
        print("|---|---:|---:|---:|---:|---:|")
        for r in first_calls():
            print(f"| {r['label']} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['import']:.2f} "
                  f"| {r['call']:.2f} | {r['load']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
