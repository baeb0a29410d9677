"""Wall-clock time of the numba and the pure-numpy backends on the same tasks.

Usage::

    python benchmarks/bench_backends.py            # 10k and 100k rows
    python benchmarks/bench_backends.py --rows 10000 --repeat 3

Prints one table: rows, task (the curve of one numeric column; the impact of 10 columns),
wall-clock seconds with numba and with numpy and their ratio, then the ratio of CPU seconds
(all threads), which varies less when other processes share the machine.  Each time is the best of
``--repeat`` calls after a warm-up call on small data, so numba's compilation (or cache
loading) is not counted.  Both backends run in this one process and take turns call by call,
so on a shared machine the ratio is measured under much the same load.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_engine import numeric_data  # noqa: E402  (same folder: the script's own path)

from stratpd_xl.engine import impact, set_backend, stratpd  # noqa: E402


def make_data(n: int, seed: int = 0) -> pd.DataFrame:
    """bench_engine's numeric table (feature x, 8 covariates, target y) plus a tenth column
    with heavy ties, so the trees also meet a few-valued column."""
    df, _, _ = numeric_data(n, seed)
    rng = np.random.default_rng(seed + 1)
    df.insert(len(df.columns) - 1, "z", rng.integers(0, 5, n).astype(float))
    return df


def best_times(call: Callable[[], object], repeat: int) -> dict[str, tuple[float, float]]:
    """Best (wall-clock, CPU) seconds of ``call`` per backend, the backends taking turns."""
    best = {"numba": (float("inf"),) * 2, "numpy": (float("inf"),) * 2}
    for _ in range(repeat):
        for backend, (wall, cpu) in best.items():
            set_backend(backend)
            w0, c0 = time.perf_counter(), time.process_time()
            call()
            w1, c1 = time.perf_counter(), time.process_time()
            best[backend] = (min(wall, w1 - w0), min(cpu, c1 - c0))
    return best


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    warm = make_data(2_000)
    for backend in ("numba", "numpy"):  # compile / load the numba cache outside the timing
        set_backend(backend)
        stratpd(warm, "y", "x")
        impact(warm, "y")

    print(f"{'rows':>8}  {'task':<22} {'numba s':>8} {'numpy s':>8} {'ratio':>6} {'cpu ratio':>9}")
    for n in args.rows:
        df = make_data(n)
        tasks: dict[str, Callable[[], object]] = {
            "curve of 1 column": lambda df=df: stratpd(df, "y", "x"),
            "impact of 10 columns": lambda df=df: impact(df, "y"),
        }
        for name, call in tasks.items():
            times = best_times(call, args.repeat)
            (nb, nb_cpu), (npy, npy_cpu) = times["numba"], times["numpy"]
            print(f"{n:>8}  {name:<22} {nb:>8.2f} {npy:>8.2f} {npy / nb:>6.1f} "
                  f"{npy_cpu / nb_cpu:>9.1f}", flush=True)
    set_backend("numba")


if __name__ == "__main__":
    main()
