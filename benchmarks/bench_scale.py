"""More than a spreadsheet: one curve from a generated Parquet file, in memory, streamed and on
Dask, side by side (issue 33's table).

Usage::

    python benchmarks/bench_scale.py                      # 1M, 10M and 20M rows
    python benchmarks/bench_scale.py --rows 1000000       # one size
    python benchmarks/bench_scale.py --rows 100000000     # on request: 100M rows (~4 GB file)
    python benchmarks/bench_scale.py --methods streamed,dask --data-dir /tmp/scale

The table: ``rows`` rows of 9 float32 columns (``x0`` ... ``x7`` and ``y``) written to
Parquet in row groups of 2^20 rows (generated once into ``--data-dir``, never committed; the
20M-row file is about 0.7 GB), with a known truth: ``y = 2 sin(x0) + 0.5 x1 + 0.3 x2 -
0.2 x3 + noise``, where ``x1`` moves with ``x0`` (correlation 0.7), so holding the others
alike matters.  The curve of ``x0`` is measured three ways, each in a fresh process after a
2,000-row call that compiles the kernels:

* ``pandas``: ``pd.read_parquet`` (the whole file held) and ``sx.stratpd(frame, ...)``;
* ``streamed``: ``sx.stratpd("file.parquet", ...)``: pass 0 and the pass read in chunks;
* ``dask``: ``sx.stratpd(dd.read_parquet(...), ...)`` on a ``LocalCluster`` of 2 worker
  processes (one thread each).

Beyond ``strata_rows`` (2^22) rows the strata are fitted on a sample, and the engine does not
adjust the rows outside it yet: those cases are refused with the default ``adjust=True`` and
run with ``--no-adjust`` (then every method runs with ``adjust=False``).

Printed per case: wall and CPU seconds (the process and its children), rows per wall second,
the peak resident memory (the process; for Dask the client plus the workers' peaks), nRMSE
(the curve against ``2 sin(x0)`` at its points, both centred, over the truth's range on
them) and the load average.  A case that is refused says why in its row.  The machine is
shared: give the load beside any number copied elsewhere.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHUNK = 1 << 20
TRUTH = "2 sin(x0)"


def make_file(rows: int, folder: Path) -> Path:
    """The generated table of ``rows`` rows (written once, chunk by chunk, seed 0)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = folder / f"scale-{rows}.parquet"
    if path.exists():
        return path
    tmp = path.with_suffix(".part")
    rng = np.random.default_rng(0)
    writer = None
    for start in range(0, rows, CHUNK):
        m = min(CHUNK, rows - start)
        x = rng.uniform(0, 10, (8, m))
        x[1] = 0.7 * x[0] + 0.3 * x[1]  # moves with x0
        y = 2 * np.sin(x[0]) + 0.5 * x[1] + 0.3 * x[2] - 0.2 * x[3] + rng.normal(0, 0.5, m)
        cols = {f"x{i}": x[i].astype(np.float32) for i in range(8)}
        cols["y"] = y.astype(np.float32)
        batch = pa.table(cols)
        if writer is None:
            writer = pq.ParquetWriter(tmp, batch.schema)
        writer.write_table(batch, row_group_size=CHUNK)
    writer.close()
    tmp.rename(path)
    return path


def _nrmse(curve) -> float:
    import numpy as np

    x = curve["x"].to_numpy(dtype=float)
    pd_ = curve["pd"].to_numpy(dtype=float)
    ok = np.isfinite(pd_)
    truth = 2 * np.sin(x[ok])
    w = curve["n_x"].to_numpy(dtype=float)[ok] if "n_x" in curve else np.ones(ok.sum())
    diff = pd_[ok] - truth
    diff -= np.average(diff, weights=w)  # both centred alike
    return float(np.sqrt(np.average(diff**2, weights=w)) / (truth.max() - truth.min()))


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker(method: str, path: str, adjust: str = "on") -> dict:
    """One case, in this (fresh) process; prints a JSON line."""
    import numpy as np
    import pandas as pd

    import stratpd_xl as sx

    rng = np.random.default_rng(1)
    warm = pd.DataFrame(rng.uniform(0, 10, (2000, 9)), columns=[*(f"x{i}" for i in range(8)),
                                                                   "y"])
    kw = {"adjust": adjust == "on"}
    sx.stratpd(warm, "y", "x0", **kw)  # compiles or loads the kernels
    extra_mb = 0.0
    cpu0, t0 = time.process_time(), time.perf_counter()
    if method == "pandas":
        frame = pd.read_parquet(path)
        rows = len(frame)
        curve = sx.stratpd(frame, "y", "x0", **kw)
    elif method == "streamed":
        curve = sx.stratpd(path, "y", "x0", quiet=True, **kw)
        rows = curve.attrs["scale"]["rows_read"]
    else:
        import dask.dataframe as dd
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            client.run(lambda: sx.stratpd(warm, "y", "x0", **kw))  # the workers' kernels too
            t0 = time.perf_counter()
            curve = sx.stratpd(dd.read_parquet(path), "y", "x0", **kw)
            rows = curve.attrs["scale"]["rows_read"]
            peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
            extra_mb = sum(peaks.values()) / 1024
    wall = time.perf_counter() - t0
    return {"wall": wall, "cpu_self": time.process_time() - cpu0, "rows": int(rows),
            "nrmse": _nrmse(curve), "peak_mb": _peak_mb() + extra_mb}


def _load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def run_case(method: str, path: Path, timeout: float, adjust: bool = True) -> dict:
    load = _load()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, __file__, "--worker", method, str(path),
                                 "on" if adjust else "off"], stdout=out, stderr=err)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                return {"error": f"over {timeout:.0f} s", "load": (load + _load()) / 2}
            time.sleep(0.5)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    load = (load + _load()) / 2
    if os.waitstatus_to_exitcode(status) != 0:
        lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
        return {"error": (lines or ["failed"])[-1][:200], "load": load}
    found = json.loads(stdout.strip().splitlines()[-1])
    found["cpu"] = usage.ru_utime + usage.ru_stime  # the process and its children
    found["load"] = load
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default="1000000,10000000,20000000",
                        help="comma-separated table sizes (default 1M, 10M, 20M)")
    parser.add_argument("--methods", default="pandas,streamed,dask")
    parser.add_argument("--data-dir", type=Path,
                        default=Path(tempfile.gettempdir()) / "stratpd-scale")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per case")
    parser.add_argument("--no-adjust", action="store_true",
                        help="adjust=False (strata fitted on a sample cannot adjust the other "
                        "rows yet)")
    parser.add_argument("--worker", nargs="+", metavar="ARG", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return 0
    args.data_dir.mkdir(parents=True, exist_ok=True)
    print(f"curve of x0 (truth {TRUTH}), 9 float32 columns, adjust="
          f"{not args.no_adjust}; {os.cpu_count()} cores; load {_load():.1f} at the start")
    print("| rows | file MB | method | wall s | CPU s | rows/s | peak MB | nRMSE | load |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for rows in (int(float(r)) for r in args.rows.split(",")):
        path = make_file(rows, args.data_dir)
        size = path.stat().st_size / 1024**2
        for method in args.methods.split(","):
            r = run_case(method, path, args.timeout, adjust=not args.no_adjust)
            if "error" in r:
                print(f"| {rows:,} | {size:,.0f} | {method} | - | - | - | - | - | "
                      f"{r['load']:.1f} | {r['error']}", flush=True)
                continue
            print(f"| {rows:,} | {size:,.0f} | {method} | {r['wall']:.1f} | {r['cpu']:.1f} | "
                  f"{r['rows'] / r['wall']:,.0f} | {r['peak_mb']:,.0f} | {r['nrmse']:.4f} | "
                  f"{r['load']:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
