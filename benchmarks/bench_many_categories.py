"""Time and peak memory of the commands on columns with thousands of categories.

Usage::

    python benchmarks/bench_many_categories.py [--sizes 2000:10000,6000:30000,10000:50000]

Each row runs one command in a fresh process on a generated CSV (one text column ``c`` with
k categories over n rows, one numeric column ``z``, target ``y``): ``report`` to an .xlsx
and ``curve`` to a PNG and an .xlsx.  Peak memory is the command's resident set (its helper
process included when it is the larger), from ``getrusage`` of the waited-for children.
The target this checks: a report of 6,000 categories in 30,000 rows within two minutes on
two cores, and time growing in proportion to the table.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

_MEASURE = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:], capture_output=True).returncode\n"
    "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def levels(k: int, n: int, path: Path) -> None:
    rng = np.random.default_rng(k)
    c = rng.integers(0, k, n)
    z = rng.uniform(0, 10, n)
    y = rng.normal(0, 1, k)[c] + z + rng.normal(0, 0.1, n)
    names = np.array([f"L{i:06d}" for i in range(k)])
    pd.DataFrame({"c": names[c], "z": z.round(3), "y": y.round(3)}).to_csv(path, index=False)


def run(args: list[str]) -> tuple[int, float, float]:
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _MEASURE, *args], capture_output=True,
                         text=True, check=True).stdout.split()
    return int(out[0]), time.perf_counter() - start, int(out[1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000:10000,6000:30000,10000:50000")
    args = parser.parse_args()
    cli = [sys.executable, "-m", "stratpd_xl.cli"]
    print(f"{'command':<28}{'categories':>11}{'rows':>9}{'exit':>6}{'seconds':>9}{'peak MB':>9}")
    with tempfile.TemporaryDirectory() as folder:
        for size in args.sizes.split(","):
            k, n = map(int, size.split(":"))
            data = Path(folder) / f"levels_{k}.csv"
            levels(k, n, data)
            cases = {
                "report -o .xlsx": ["report", str(data), "-t", "y", "-o",
                                    f"{folder}/r{k}.xlsx"],
                "curve -o .png -o .xlsx": ["curve", str(data), "-t", "y", "-f", "c",
                                           "-o", f"{folder}/c{k}.png", "-o",
                                           f"{folder}/c{k}.xlsx"],
            }
            for name, command in cases.items():
                code, seconds, peak = run(cli + command)
                print(f"{name:<28}{k:>11,}{n:>9,}{code:>6}{seconds:>9.1f}{peak:>9.0f}")


if __name__ == "__main__":
    main()
