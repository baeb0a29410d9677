"""More than a spreadsheet: one curve from a generated Parquet file, in memory, streamed and on
Dask, side by side (issue 33's table).

Usage::

    python benchmarks/bench_scale.py                      # 1M, 10M and 20M rows
    python benchmarks/bench_scale.py --rows 1000000       # one size
    python benchmarks/bench_scale.py --rows 100000000     # on request: 100M rows (~4 GB file)
    python benchmarks/bench_scale.py --methods cli,dask --data-dir /tmp/scale
    python benchmarks/bench_scale.py --rows 20000000 --methods streamed --strata-rows 4194304
    python benchmarks/bench_scale.py --noise               # and a feature without effect

The table: ``rows`` rows of 9 float32 columns (``x0`` ... ``x7`` and ``y``) written to
Parquet in row groups of 2^20 rows (generated once into ``--data-dir``, never committed; the
20M-row file is about 0.8 GB), with a known truth: ``y = 2 sin(x0) + 0.5 x1 + 0.3 x2 -
0.2 x3 + noise``, where ``x1`` moves with ``x0`` (correlation 0.7), so holding the others
alike matters.  The curve of ``x0`` is measured four ways, each in a fresh process after a
2,000-row call that compiles the kernels:

* ``pandas``: ``pd.read_parquet`` (the whole file held) and ``sx.stratpd(frame, ...)``;
* ``streamed``: ``sx.stratpd("file.parquet", ...)``: pass 0 and the pass read in chunks;
* ``cli``: ``stratpd-xl curve file.parquet -t y -f x0 -q -o curve.csv`` (what an analyst
  types; read in chunks as the file is too large to hold), the command's own peak;
* ``dask``: ``sx.stratpd(dd.read_parquet(...), ...)`` on a ``LocalCluster`` of 2 worker
  processes (one thread each).

``--methods impact`` (not in the default set) ranks all 8 features from the command line,
``stratpd-xl impact file.parquet -t y -q -o impact.csv``: one stratification and pass per
feature.  Its row gives the ranking's head instead of an nRMSE: the truth's order is x0
(swing 4), x1 (0.5 a unit, over 7 units of its own), x2, x3, then x4-x7 without effect.

Beyond ``--strata-rows`` (default the engine's, ``params.STRATA_ROWS``) rows the streamed,
command-line and Dask strata are fitted on a sample and every row is added up; ``--no-adjust``
runs every method with ``adjust=False``.  ``--noise`` also draws the curve of ``x4``, which
has no effect (its truth is flat), after the timed one, and prints its range: how much a
curve moves by noise alone at that size and sample.

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


def worker(method: str, path: str, adjust: str = "on", strata_rows: str = "0",
           noise: str = "off") -> dict:
    """One case, in this (fresh) process; prints a JSON line."""
    import numpy as np
    import pandas as pd

    import stratpd_xl as sx

    rng = np.random.default_rng(1)
    warm = pd.DataFrame(rng.uniform(0, 10, (2000, 9)), columns=[*(f"x{i}" for i in range(8)),
                                                                   "y"])
    kw = {"adjust": adjust == "on"}
    sx.stratpd(warm, "y", "x0", **kw)  # compiles or loads the kernels
    scaled = dict(kw, **({"strata_rows": int(strata_rows)} if int(strata_rows) else {}))
    extra_mb = 0.0
    own_peak = True
    frame = noise_curve = None
    cpu0, t0 = time.process_time(), time.perf_counter()
    if method == "pandas":
        frame = pd.read_parquet(path)
        rows = len(frame)
        curve = sx.stratpd(frame, "y", "x0", **kw)
    elif method == "streamed":
        curve = sx.stratpd(path, "y", "x0", quiet=True, **scaled)
        rows = curve.attrs["scale"]["rows_read"]
    elif method == "impact":
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "impact.csv"
            command = [str(Path(sys.executable).with_name("stratpd-xl")), "impact", path,
                       "-t", "y", "-q", "-o", str(out)]
            command += [] if adjust == "on" else ["--no-adjust"]
            command += ["--strata-rows", strata_rows] if int(strata_rows) else []
            subprocess.run(command, check=True)
            ranking = pd.read_csv(out, encoding="utf-8-sig")
        import pyarrow.parquet as pq

        rows = pq.ParquetFile(path).metadata.num_rows
        extra_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        own_peak = False
        curve = None
    elif method == "cli":
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "curve.csv"
            command = [str(Path(sys.executable).with_name("stratpd-xl")), "curve", path,
                       "-t", "y", "-f", "x0", "-q", "-o", str(out)]
            command += [] if adjust == "on" else ["--no-adjust"]
            command += ["--strata-rows", strata_rows] if int(strata_rows) else []
            subprocess.run(command, check=True)
            curve = pd.read_csv(out, encoding="utf-8-sig")
        import pyarrow.parquet as pq

        rows = pq.ParquetFile(path).metadata.num_rows  # the command read every row
        extra_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        own_peak = False
    else:
        import dask.dataframe as dd
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            client.run(lambda: sx.stratpd(warm, "y", "x0", **kw))  # the workers' kernels too
            t0 = time.perf_counter()
            curve = sx.stratpd(dd.read_parquet(path), "y", "x0", **scaled)
            rows = curve.attrs["scale"]["rows_read"]
            peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
            extra_mb = sum(peaks.values()) / 1024
    wall = time.perf_counter() - t0
    found = {"wall": wall, "cpu_self": time.process_time() - cpu0, "rows": rows,
             "nrmse": _nrmse(curve) if curve is not None else None,
             "ranking": None if curve is not None else " > ".join(ranking.iloc[:, 0].astype(str)),
             "peak_mb": (_peak_mb() if own_peak else 0.0) + extra_mb}
    if noise == "on":  # not timed: the same call for a feature without effect
        noise_curve = (sx.stratpd(frame, "y", "x4", **kw) if frame is not None
                       else sx.stratpd(path, "y", "x4", quiet=True, **scaled))
        values = noise_curve["pd"].to_numpy(dtype=float)
        found["noise_range"] = float(np.nanmax(values) - np.nanmin(values))
    return found


def _load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def run_case(method: str, path: Path, timeout: float, adjust: bool = True,
             strata_rows: int = 0, noise: bool = False) -> dict:
    load = _load()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, __file__, "--worker", method, str(path),
                                 "on" if adjust else "off", str(strata_rows),
                                 "on" if noise else "off"], stdout=out, stderr=err)
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
    parser.add_argument("--methods", default="pandas,streamed,cli,dask")
    parser.add_argument("--data-dir", type=Path,
                        default=Path(tempfile.gettempdir()) / "stratpd-scale")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per case")
    parser.add_argument("--no-adjust", action="store_true", help="adjust=False")
    parser.add_argument("--strata-rows", type=int, default=0,
                        help="the sample the strata are fitted on (default: the engine's)")
    parser.add_argument("--noise", action="store_true",
                        help="also the range of x4's curve (no effect: truth flat)")
    parser.add_argument("--worker", nargs="+", metavar="ARG", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return 0
    args.data_dir.mkdir(parents=True, exist_ok=True)
    from stratpd_xl.params import STRATA_ROWS

    print(f"curve of x0 (truth {TRUTH}), 9 float32 columns, adjust={not args.no_adjust}, "
          f"strata fitted on at most {args.strata_rows or STRATA_ROWS:,} rows; "
          f"{os.cpu_count()} cores; load {_load():.1f} at the start")
    noise = " x4 range |" if args.noise else ""
    print(f"| rows | file MB | method | wall s | CPU s | rows/s | peak MB | nRMSE |{noise} load |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|" + ("---:|" if noise else "") + "---:|")
    for rows in (int(float(r)) for r in args.rows.split(",")):
        path = make_file(rows, args.data_dir)
        size = path.stat().st_size / 1024**2
        for method in args.methods.split(","):
            r = run_case(method, path, args.timeout, adjust=not args.no_adjust,
                         strata_rows=args.strata_rows, noise=args.noise)
            if "error" in r:
                print(f"| {rows:,} | {size:,.0f} | {method} | - | - | - | - | - | "
                      + ("- | " if noise else "") + f"{r['load']:.1f} | {r['error']}",
                      flush=True)
                continue
            extra = f" {r['noise_range']:.3f} |" if noise else ""
            # an impact row ranks the features instead: its head is its check
            accuracy = f"{r['nrmse']:.4f}" if r["nrmse"] is not None else r["ranking"]
            print(f"| {rows:,} | {size:,.0f} | {method} | {r['wall']:.1f} | {r['cpu']:.1f} | "
                  f"{r['rows'] / r['wall']:,.0f} | {r['peak_mb']:,.0f} | {accuracy} |"
                  f"{extra} {r['load']:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
