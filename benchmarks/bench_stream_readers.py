"""Streamed readers for Parquet and CSV, side by side: the choice behind docs/engine.md.

Usage (the readers are not dependencies: a throw-away venv, as for stratx)::

    python3 -m venv /tmp/readers && /tmp/readers/bin/pip install pyarrow duckdb polars pandas
    /tmp/readers/bin/python benchmarks/bench_stream_readers.py            # 4M Parquet, 1M CSV
    /tmp/readers/bin/python benchmarks/bench_stream_readers.py --rows 20000000

What is measured: a generated table (``--rows`` rows of 9 float32 columns and one text column
of 12 levels; the CSV has a quarter of the rows) read chunk by chunk, each chunk turned into
the numpy arrays the engine's pass needs (the floats as float64, the text as integer codes)
and summed, so nothing is left lazy.  Each reader runs in a fresh process: wall and CPU
seconds, and the peak resident memory above what the process held before reading (Linux
``VmHWM``).  A reader that is not installed is skipped with a sentence.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_engine import _rss_mb  # this folder is on the path when the script runs

CHUNK = 1 << 20  # rows per chunk: the engine's pass would take about this many at a time
LEVELS = [f"level {i:02d}" for i in range(12)]


def make_files(rows: int, folder: Path) -> tuple[Path, Path]:
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    parquet, csv = folder / "table.parquet", folder / "table.csv"
    writer = None
    for start in range(0, rows, CHUNK):
        m = min(CHUNK, rows - start)
        cols = {f"x{i}": rng.uniform(0, 10, m).astype(np.float32) for i in range(9)}
        cols["month"] = pa.array(np.array(LEVELS, dtype=object)[rng.integers(0, 12, m)])
        batch = pa.table(cols)
        if writer is None:
            writer = pq.ParquetWriter(parquet, batch.schema)
        writer.write_table(batch, row_group_size=CHUNK)
        if start < rows // 4:
            with open(csv, "ab") as fh:
                pacsv.write_csv(batch.slice(0, min(m, rows // 4 - start)), fh,
                                pacsv.WriteOptions(include_header=start == 0))
    writer.close()
    return parquet, csv


def _consume(batches) -> int:
    """Each chunk as numpy: floats as float64, the text column as codes; summed."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    n = 0
    total = 0.0
    for batch in batches:
        if not isinstance(batch, pa.RecordBatch | pa.Table):
            batch = batch.to_arrow()  # polars
        for name in batch.schema.names:
            col = batch.column(name)
            if pa.types.is_floating(col.type):
                total += float(np.asarray(col.to_numpy(zero_copy_only=False),
                                          np.float64).sum())
            else:
                codes = pc.index_in(col, value_set=pa.array(LEVELS))
                total += float(np.asarray(codes.to_numpy(zero_copy_only=False)).sum())
        n += batch.num_rows
    return n


def read(reader: str, path: str) -> int:
    if reader.startswith("pyarrow.dataset"):
        import pyarrow.dataset as ds

        # Its default reads ahead 16 batches and 4 files; one of each bounds the memory.
        ahead = {"batch_readahead": 1, "fragment_readahead": 1} if "readahead" in reader else {}
        return _consume(ds.dataset(path, format="parquet").to_batches(batch_size=CHUNK,
                                                                      **ahead))
    if reader == "pyarrow.csv":
        import pyarrow.csv as pacsv

        return _consume(pacsv.open_csv(path, read_options=pacsv.ReadOptions(
            block_size=64 << 20)))
    if reader.startswith("duckdb"):
        import duckdb

        con = duckdb.connect()
        con.execute("SET threads TO 2")
        rel = con.read_parquet(path) if path.endswith(".parquet") else con.read_csv(path)
        return _consume(rel.to_arrow_reader(CHUNK))
    if reader.startswith("polars"):
        import polars as pl

        scan = pl.scan_parquet(path) if path.endswith(".parquet") else pl.scan_csv(path)
        return _consume(scan.collect_batches(chunk_size=CHUNK))
    if reader == "pandas.read_csv":
        import pandas as pd
        import pyarrow as pa

        return _consume(pa.Table.from_pandas(chunk, preserve_index=False)
                        for chunk in pd.read_csv(path, chunksize=CHUNK))
    raise ValueError(reader)


READERS = {
    "parquet": ["pyarrow.dataset", "pyarrow.dataset, readahead 1", "duckdb", "polars"],
    "csv": ["pyarrow.csv", "duckdb", "polars", "pandas.read_csv"],
}


def worker(reader: str, path: str) -> dict:
    before = _rss_mb("VmRSS")
    t0, c0 = time.perf_counter(), time.process_time()
    n = read(reader, path)
    return {"rows": n, "wall": time.perf_counter() - t0, "cpu": time.process_time() - c0,
            "peak_mb": _rss_mb("VmHWM") - before}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=4_000_000)
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        # Imports before the clock: the library's own start-up is not the read.
        module = args.worker[0].split(".")[0]
        __import__(module)
        import numpy  # noqa: F401
        import pyarrow.compute  # noqa: F401
        import pyarrow.csv  # noqa: F401
        import pyarrow.dataset  # noqa: F401

        print(json.dumps(worker(*args.worker)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        parquet, csv = make_files(args.rows, Path(tmp))
        print(f"bench_stream_readers.py, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
              f"load average {os.getloadavg()[0]:.1f}; Parquet {args.rows:,} rows "
              f"({parquet.stat().st_size / 2**20:.0f} MB), CSV {args.rows // 4:,} rows "
              f"({csv.stat().st_size / 2**20:.0f} MB), chunks of {CHUNK:,} rows\n")
        print("| file | reader | version | wall s | CPU s | rows/s (CPU) | peak MB above start |")
        print("|---|---|---|---:|---:|---:|---:|")
        for kind, path in (("parquet", parquet), ("csv", csv)):
            for reader in READERS[kind]:
                module = reader.split(".")[0]
                try:
                    version = __import__(module).__version__
                except ImportError:
                    print(f"| {kind} | {reader} | not installed: pip install {module} | | | | |")
                    continue
                proc = subprocess.run([sys.executable, __file__, "--worker", reader, str(path)],
                                      capture_output=True, text=True)
                if proc.returncode:
                    last = (proc.stderr.strip().splitlines() or ["?"])[-1][:80]
                    print(f"| {kind} | {reader} | {version} | failed: {last} | | | |")
                    continue
                r = json.loads(proc.stdout.strip().splitlines()[-1])
                print(f"| {kind} | {reader} | {version} | {r['wall']:.2f} | {r['cpu']:.2f} "
                      f"| {r['rows'] / max(r['cpu'], 1e-9):,.0f} | {r['peak_mb']:.0f} |")
        print(f"\nload average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
