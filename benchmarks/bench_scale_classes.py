"""Classes and blanks past one machine's memory: a target of 3 classes and a feature whose
blanks carry +5 on y, from a generated Parquet file in memory and read in chunks, side by
side (issue 34's "the streamed / Dask paths").

Usage::

    python benchmarks/bench_scale_classes.py                  # 4M rows
    python benchmarks/bench_scale_classes.py --rows 1000000 --data-dir /tmp/scale

The table (generated once into ``--data-dir``, never committed): ``x`` uniform on [0, 1]
and blank in a tenth of the rows, ``z`` and ``w`` standard normal, ``cls`` one of a, b, c
with softmax chances of logits (0, 3 x + z / 2, z - 2 x) (tests/synthetic.three_classes),
``y = sin(6 x) + z + 5 (x blank) + noise(0.5)``, float32, row groups of 2^18 rows.  Four
cases, each in a fresh process after a 2,000-row call that compiles the kernels:

* ``classes``: the class curves of ``x`` (``classes=True``), in memory (``pd.read_parquet``
  then ``sx.stratpd``) and read in chunks (``sx.stratpd(path, ...)``; beyond 2^20 rows the
  strata are fitted on a 2^20-row sample);
* ``blanks``: the curve of ``x`` for ``y``, whose "(missing)" row should be near 5.

Printed per case: wall and CPU seconds, peak resident memory, the largest sum of the class
curves at any x (0 to rounding: one stratification), or the "(missing)" row with its band,
and the load average.  The machine is shared: give the load beside any number copied
elsewhere.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path


def make_file(rows: int, folder: Path) -> Path:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = folder / f"classes_{rows}.parquet"
    if path.exists():
        return path
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, rows)
    z = rng.normal(size=rows)
    chance = np.exp(np.column_stack([np.zeros(rows), 3 * x + 0.5 * z, -2 * x + z]))
    chance /= chance.sum(axis=1, keepdims=True)
    pick = (rng.random(rows)[:, None] > chance.cumsum(axis=1)).sum(axis=1)
    blank = rng.random(rows) < 0.1
    y = np.sin(6 * x) + z + 5 * blank + rng.normal(0, 0.5, rows)
    table = pa.table({"x": np.where(blank, np.nan, x).astype(np.float32),
                      "z": z.astype(np.float32),
                      "w": rng.normal(size=rows).astype(np.float32),
                      "cls": np.array(["a", "b", "c"])[pick], "y": y.astype(np.float32)})
    pq.write_table(table, path, row_group_size=1 << 18)
    return path


def worker(case: str, how: str, path: str) -> dict:
    """One case in this (fresh) process."""
    import numpy as np
    import pandas as pd

    import stratpd_xl as sx

    warm = pd.DataFrame({"x": np.linspace(0, 1, 2000),
                         "z": np.random.default_rng(1).normal(size=2000)})
    warm["cls"] = np.where(warm["x"] > 0.5, "a", np.where(warm["z"] > 0, "b", "c"))
    sx.stratpd(warm, "cls", "x", classes=True)  # compiles or loads the kernels
    cpu0, t0 = time.process_time(), time.perf_counter()
    data = pd.read_parquet(path) if how == "memory" else path
    chunks = {} if how == "memory" else {"quiet": True}
    if case == "classes":
        curve = sx.stratpd(data, "cls", "x", classes=True, exclude="y", **chunks)
        found = {"class_sum": curve.attrs["class_sum"]}
    else:
        curve = sx.stratpd(data, "y", "x", exclude="cls", **chunks)
        found = {"missing": curve.attrs.get("missing")}
    found.update(wall=time.perf_counter() - t0, cpu=time.process_time() - cpu0,
                 peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                 sampled=not (curve.attrs.get("scale") or {}).get("sample_is_all_rows", True))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp"))
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return 0
    path = make_file(args.rows, args.data_dir)
    print(f"{args.rows:,} rows, {path.stat().st_size / 2**20:.0f} MB: {path}")
    print("| case | read | wall s | CPU s | peak MB | result | load |")
    print("|---|---|---:|---:|---:|---|---:|")
    for case in ("classes", "blanks"):
        for how in ("memory", "chunks"):
            load = os.getloadavg()[0]
            done = subprocess.run([sys.executable, __file__, "--worker", case, how, str(path)],
                                  capture_output=True, text=True)
            if done.returncode:
                print(f"| {case} | {how} | failed: {done.stderr.strip().splitlines()[-1]} |")
                continue
            r = json.loads(done.stdout.strip().splitlines()[-1])
            if case == "classes":
                result = f"classes' largest sum {r['class_sum']:.1e}"
            else:
                m = r["missing"]
                result = (f"(missing) {m['pd']:.4f} ({m['low']:.4f}-{m['high']:.4f}), "
                          f"{m['compared']:,} rows" if m else "no (missing) row")
            read = how + (", strata on a sample" if r["sampled"] else "")
            print(f"| {case} | {read} | {r['wall']:.1f} | {r['cpu']:.1f} | "
                  f"{r['peak_mb']:,.0f} | {result} | {(load + os.getloadavg()[0]) / 2:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
