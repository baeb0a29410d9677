"""Two versions of the engine timed alternately in the same run: the 1M-row curve and impact.

Usage::

    mkdir -p /tmp/before && git archive 5540aec stratpd_xl | tar -x -C /tmp/before
    python benchmarks/bench_versions.py /tmp/before . --repeat 2
    python benchmarks/bench_versions.py /tmp/before . --rows 30000 --repeat 3   # another size

Each directory holds a ``stratpd_xl`` package; every call runs in a fresh process of this
interpreter started in that directory (so it imports that copy) on bench_engine's numeric
table of 1,048,576 rows x 10 columns (``--rows``), after a warm-up call on 2,000 rows.  A
version without the ``adjust`` parameter (before the adjustment) runs every case without
it.  The versions alternate call by call, so a change in the machine's load hits both
alike.  Printed per case: the best wall-clock seconds and the best CPU seconds (all
threads) of each version, and the 1-minute load average during the calls.  On a shared
machine read the CPU seconds first: they move far less with the load than the wall clock.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent

WORKER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[3])
from bench_engine import numeric_data
import stratpd_xl as sx
assert sx.__file__.startswith(sys.argv[2]), sx.__file__  # the copy asked for
case = sys.argv[1]
df, target, feature = numeric_data(int(sys.argv[4]))
warm = numeric_data(2000, seed=1)[0]
import inspect
kw = {"adjust": not case.endswith("adjust=False")}
if "adjust" not in inspect.signature(sx.stratpd).parameters:
    kw = {}  # a version from before the adjustment
if case.startswith("curve"):
    call = lambda d: sx.stratpd(d, target, feature, random_state=0, **kw)
else:
    call = lambda d: sx.impact(d, target, random_state=0, **kw)
call(warm)
from stratpd_xl import _backend
if hasattr(_backend, "ENGINE"):  # numba takes over from numpy once its kernels are ready
    _backend.ENGINE.wait()
load = float(open("/proc/loadavg").read().split()[0])
c0, t0 = time.process_time(), time.perf_counter()
call(df)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
load = (load + float(open("/proc/loadavg").read().split()[0])) / 2
print(json.dumps({"wall": wall, "cpu": cpu, "load": load}))
"""

CASES = ["curve", "curve, adjust=False", "impact", "impact, adjust=False"]


def run(directory: Path, case: str, rows: int) -> dict:
    proc = subprocess.run([sys.executable, "-c", WORKER, case, str(directory), str(BENCH),
                           str(rows)],
                          capture_output=True, text=True, cwd=directory)
    if proc.returncode != 0:
        raise SystemExit(f"{directory}: {proc.stderr.strip().splitlines()[-1]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path, help="directory holding the first stratpd_xl")
    ap.add_argument("after", type=Path, help="directory holding the second stratpd_xl")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--rows", type=int, default=1_048_576)
    args = ap.parse_args()
    versions = {"before": args.before.resolve(), "after": args.after.resolve()}
    results: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.repeat):
        for case in CASES:
            for name, directory in versions.items():
                results.setdefault((case, name), []).append(run(directory, case, args.rows))
    print(f"| {args.rows:,} rows x 10 columns | before: wall s | after: wall s | before: CPU s "
          "| after: CPU s | load average (1 min) |")
    print("|---|---:|---:|---:|---:|---|")
    for case in CASES:
        a, b = results[(case, "before")], results[(case, "after")]
        loads = [r["load"] for r in a + b]
        print(f"| {case} | {min(r['wall'] for r in a):.2f} | {min(r['wall'] for r in b):.2f} "
              f"| {min(r['cpu'] for r in a):.2f} | {min(r['cpu'] for r in b):.2f} "
              f"| {min(loads):.1f}-{max(loads):.1f} |")


if __name__ == "__main__":
    main()
