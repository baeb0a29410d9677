"""Issue 32's table, one line per row: what the user waits for, beside a bare read and stratx.

Usage::

    python benchmarks/bench_issue32.py                       # every row (10-20 minutes at rest)
    python benchmarks/bench_issue32.py --rows curve-30000,interactions
    python benchmarks/bench_issue32.py --stratx "$(bash benchmarks/stratx_venv.sh)"

The data is issue 32's table (``profile_engine.make_table``: 10 numeric and 2 text columns
of 12 and 3 levels, a curved truth), written once per size as a CSV under ``--data-dir``.
Each row runs in a fresh process: whole commands as the user types them (wall and CPU
seconds of the child, from ``wait4``), Python calls and formulas timed around the call after
a warm-up call on 2,000 rows.  Beside each row, measured in the same run:

* bare read: a fresh Python that imports pandas and reads the same CSV (``pd.read_csv``), the
  least any front end could do before computing anything; ratio = seconds / bare read;
* stratx 0.5 (``--stratx PYTHON``, a venv from ``benchmarks/stratx_venv.sh``): its curve of
  the same 30,000 rows in a fresh process; ratio = stratx / stratpd-xl.

CPU seconds count every thread; on a shared machine read them first (the wall clock grows
with the load, printed beside every row).  The line each row must meet is issue 32's.
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

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from profile_engine import make_table  # noqa: E402

#: name -> (what the user waits for, rows, the line in seconds or None)
ROWS = {
    "first-call": ("first command after install (empty compile cache), 2,000-row curve",
                   2_000, 4.0),
    "cli-2000": ("2,000-row `curve` from the command line, cache warm", 2_000, 1.0),
    "curve-30000": ("30,000-row curve, in Python", 30_000, 0.08),
    "curve-1m": ("1,048,576-row curve, in Python", 1_048_576, 2.0),
    "STRATPD": ("`=STRATPD`, 200,000 rows", 200_000, 1.0),
    "STRATIMPACT": ("`=STRATIMPACT`, 200,000 rows", 200_000, 2.0),
    "report": ("`report`, 200,000 CSV rows, default band", 200_000, 12.0),
    "report-1": ("the same `report --trials 1`", 200_000, None),
    "interactions": ("`sx.interactions`, 200,000 x 12", 200_000, 15.0),
}

CALL = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import pandas as pd
import stratpd_xl as sx
from profile_engine import make_table
kind, path = sys.argv[2], sys.argv[3]
calls = {
    "curve": lambda d: sx.stratpd(d, "y", "x0"),
    "interactions": lambda d: sx.interactions(d, "y"),
}
call = calls[kind]
call(make_table(2000, seed=1))
from stratpd_xl import _backend
_backend.ENGINE.wait()  # a session open a few seconds: numba has taken over from numpy
frame = pd.read_csv(path)
load = float(open("/proc/loadavg").read().split()[0])
c, t = time.process_time(), time.perf_counter()
call(frame)
print(json.dumps({"wall": time.perf_counter() - t, "cpu": time.process_time() - c,
                  "load": (load + float(open("/proc/loadavg").read().split()[0])) / 2}))
"""

FORMULA = r"""
import json, sys, time
import pandas as pd
frame = pd.read_csv(sys.argv[2])
columns = [frame[c].astype(float).tolist() if pd.api.types.is_numeric_dtype(frame[c])
           else frame[c].astype(object).tolist() for c in frame.columns]
cells = (tuple(frame.columns), *zip(*columns, strict=True))  # as xlwings hands them over
del columns
from stratpd_xl.excel import udfs
udfs.wait_for_warm_up(600)  # Excel warms the add-in up while the workbook opens
udfs.clear_cache()
load = float(open("/proc/loadavg").read().split()[0])
c, t = time.process_time(), time.perf_counter()
out = udfs.STRATPD(cells, "y", "x0") if sys.argv[1] == "STRATPD" else udfs.STRATIMPACT(cells, "y")
wall, cpu = time.perf_counter() - t, time.process_time() - c
assert len(out) > 1 and len(out[0]) > 1, out[0][0]  # an error is one cell with a sentence
print(json.dumps({"wall": wall, "cpu": cpu,
                  "load": (load + float(open("/proc/loadavg").read().split()[0])) / 2}))
"""

STRATX = r"""
import json, sys, time
import pandas as pd
from stratx.partdep import partial_dependence
frame = pd.read_csv(sys.argv[1]).drop(columns=["month", "segment"])  # stratx: numbers only
X, y = frame.drop(columns=["y"]), frame["y"]
partial_dependence(X.iloc[:2000], y.iloc[:2000], "x0", min_samples_leaf=10)  # compile
c, t = time.process_time(), time.perf_counter()
partial_dependence(X, y, "x0", min_samples_leaf=10, min_slopes_per_x=5)
print(json.dumps({"wall": time.perf_counter() - t, "cpu": time.process_time() - c}))
"""


def _load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def _child(cmd: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Wall and CPU seconds of a whole child process (its threads and children included).

    Python's byte-code cache is on whatever the caller's environment says: an installed
    package has its ``.pyc`` files (pip writes them), and compiling the package's sources
    again in every process (``PYTHONDONTWRITEBYTECODE``) costs each command 0.15 s.
    """
    env = dict(os.environ if env is None else env)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    load = _load()
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=BENCH)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError((stderr.strip().splitlines() or ["failed"])[-1][:160])
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "load": (load + _load()) / 2, "stdout": stdout}


def _timed(cmd: list[str]) -> dict[str, float]:
    """A worker that prints its own timing of the call as its last line."""
    return json.loads(_child(cmd)["stdout"].strip().splitlines()[-1])


def data_file(n: int, data_dir: Path) -> Path:
    path = data_dir / f"issue32-{n}.csv"
    if not path.exists():
        make_table(n).to_csv(path, index=False)
    return path


def cli() -> list[str]:
    script = Path(sys.executable).parent / "stratpd-xl"
    return [sys.executable, str(script)]


def measure(name: str, path: Path, out_dir: Path) -> dict[str, float]:
    py = sys.executable
    if name in ("first-call", "cli-2000"):
        env = dict(os.environ)
        with tempfile.TemporaryDirectory() as cache:
            if name == "first-call":
                env["NUMBA_CACHE_DIR"] = cache  # as right after installing: compile everything
            return _child([*cli(), "curve", str(path), "-t", "y", "-f", "x0"], env)
    if name in ("curve-30000", "curve-1m"):
        return _timed([py, "-c", CALL, str(BENCH), "curve", str(path)])
    if name == "interactions":
        return _timed([py, "-c", CALL, str(BENCH), "interactions", str(path)])
    if name in ("STRATPD", "STRATIMPACT"):
        return _timed([py, "-c", FORMULA, name, str(path)])
    trials = ["--trials", "1"] if name == "report-1" else []
    return _child([*cli(), "report", str(path), "-t", "y", *trials,
                   "-o", str(out_dir / f"{name}.xlsx"), "--force", "--quiet"])


def bare_read(path: Path) -> dict[str, float]:
    return _child([sys.executable, "-c", f"import pandas as pd; pd.read_csv({str(path)!r})"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default=",".join(ROWS),
                    help=f"rows to run, comma-separated (default all: {','.join(ROWS)})")
    ap.add_argument("--stratx", help="python of a venv with stratx 0.5 (stratx_venv.sh)")
    ap.add_argument("--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "bench32")
    args = ap.parse_args(argv)
    names = [r.strip() for r in args.rows.split(",") if r.strip()]
    unknown = [r for r in names if r not in ROWS]
    if unknown:
        ap.error(f"unknown rows {unknown}; choose from {', '.join(ROWS)}")
    args.data_dir.mkdir(parents=True, exist_ok=True)
    import compileall

    import stratpd_xl  # the .pyc files an installed package has (see _child)

    compileall.compile_dir(Path(stratpd_xl.__file__).parent, quiet=2)
    print("| what the user waits for | CPU s | wall s | line s | bare read: wall s "
          "| x bare read (wall) | load |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    reads: dict[int, dict[str, float]] = {}
    ours_30k = None
    for name in names:
        label, n, line = ROWS[name]
        path = data_file(n, args.data_dir)
        if n not in reads:
            reads[n] = bare_read(path)
        try:
            r = measure(name, path, args.data_dir)
        except RuntimeError as exc:
            print(f"| {label} | failed: {exc} | | | | | |", flush=True)
            continue
        if name == "curve-30000":
            ours_30k = r
        read = reads[n]["wall"]
        print(f"| {label} | {r['cpu']:.2f} | {r['wall']:.2f} | "
              f"{'' if line is None else f'{line:g}'} | {read:.2f} | {r['wall'] / read:.1f} "
              f"| {r['load']:.1f} |", flush=True)
    if args.stratx:
        path = data_file(30_000, args.data_dir)
        if ours_30k is None:
            ours_30k = measure("curve-30000", path, args.data_dir)
        sx = _timed([args.stratx, "-c", STRATX, str(path)])
        print(f"| 30,000 rows vs stratx 0.5, same run (line >= 300x) | stratx {sx['cpu']:.2f} "
              f"| stratx {sx['wall']:.2f} | | | {sx['wall'] / ours_30k['wall']:.0f}x wall, "
              f"{sx['cpu'] / ours_30k['cpu']:.0f}x CPU | {_load():.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
