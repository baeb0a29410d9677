"""Speed and memory of the engine, side by side with the reference stratx where it can run.

Usage::

    python benchmarks/bench_engine.py                 # ours only
    python benchmarks/bench_engine.py --stratx "$(bash benchmarks/stratx_venv.sh)"
    # (benchmarks/stratx_venv.sh makes a throw-away venv with stratx 0.5 and prints its python)

Every measurement runs in a fresh subprocess of this script (``--worker``), so one case's
memory cannot leak into the next.  Time is wall-clock seconds of the call alone, best of
``--repeat`` calls after one warm-up call on small data (numba compilation and cache loading
are measured separately in the "first call" rows).  Memory is the peak resident set during
the call above the resident set just before it (Linux ``VmHWM`` after resetting it through
``/proc/self/clear_refs``).  The load average is printed under the table: on a shared
machine the seconds mean little without it.  Accuracy is the RMSE of the curve against the
known truth, both mean-centred, divided by the truth's range (numeric), or the RMSE of the
category effects (categorical).  The worker uses only numpy and pandas besides the library under
test, so the same code drives stratx in its own venv.
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

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]

# --------------------------------------------------------------------------- data sets


def numeric_data(n: int, seed: int = 0) -> tuple[pd.DataFrame, str, str]:
    """10 columns: all-unique feature x, 8 noise-free covariates and one that interacts."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, n)
    others = rng.uniform(0, 10, (n, 8))
    y = x**2 + others[:, 0] * x + others[:, 1:].sum(axis=1) + rng.normal(0, 1, n)
    df = pd.DataFrame(others, columns=[f"c{i}" for i in range(8)])
    df["x"] = x
    df["y"] = y
    return df, "y", "x"


def numeric_truth(x: np.ndarray) -> np.ndarray:
    return x**2 + 5.0 * x  # E[c0] = 5


def categorical_data(n: int, levels: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    cat = rng.integers(0, levels, n)
    effect = rng.normal(0, 10, levels)
    others = rng.uniform(0, 10, (n, 8))
    y = effect[cat] + others.sum(axis=1) + rng.normal(0, 1, n)
    df = pd.DataFrame(others, columns=[f"c{i}" for i in range(8)])
    df["cat"] = cat
    df["y"] = y
    return df, effect


# --------------------------------------------------------------------------- measuring


def _rss_mb(field: str) -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")


def _measure(call, repeat: int) -> dict:
    best = float("inf")
    peak = 0.0
    out = None
    for _ in range(repeat):
        before = _rss_mb("VmRSS")
        _reset_peak()
        t0 = time.perf_counter()
        out = call()
        best = min(best, time.perf_counter() - t0)
        peak = max(peak, _rss_mb("VmHWM") - before)
    return {"seconds": best, "peak_mb": peak, "total_mb": _rss_mb("VmHWM"), "out": out}


def _ours_numeric(df, target, feature, msl, adjust=True):
    import stratpd_xl as sx

    r = sx.stratpd(df, target, feature, min_samples_leaf=msl, random_state=0, adjust=adjust)
    return r["x"].to_numpy(float), r["pd"].to_numpy()


def _stratx_numeric(df, target, feature, msl):
    from stratx.partdep import partial_dependence

    res = partial_dependence(df.drop(columns=[target]), df[target], feature,
                             min_samples_leaf=msl, min_slopes_per_x=5)
    return np.asarray(res[5], float), np.asarray(res[6], float)


def _ours_categorical(df, target, feature, msl):
    import stratpd_xl as sx

    r = sx.catstratpd(df.assign(**{feature: df[feature].astype("category")}), target, feature,
                      min_samples_leaf=msl, random_state=0)
    return r["category"].to_numpy(int), r["pd"].to_numpy()


def _stratx_categorical(df, target, feature, msl):
    from stratx.partdep import cat_partial_dependence

    res = cat_partial_dependence(df.drop(columns=[target]), df[target], feature,
                                 min_samples_leaf=msl)
    avg = np.asarray(res[2], float)
    cats = np.flatnonzero(~np.isnan(avg))
    return cats, avg[cats]


def _ours_impact(df, target, feature, msl, adjust=True):
    import stratpd_xl as sx

    r = sx.impact(df, target, min_samples_leaf=msl, random_state=0, adjust=adjust)
    return r["feature"].to_numpy(), r["impact"].to_numpy()


def worker(case: str, impl: str, n: int, repeat: int, msl: int) -> dict:
    """Run one case in this process and return its measurements.

    A case ending in ``:plain`` runs with ``adjust=False`` (no adjustment for the others).
    """
    adjust = not case.endswith(":plain")
    case = case.removesuffix(":plain")
    if case == "impact":
        # The impact ranking of all 9 features of the numeric table (x and 8 others).
        warm_df = numeric_data(2000, seed=1)[0]
        df, target, _ = numeric_data(n)
        _ours_impact(warm_df, target, None, msl, adjust)
        res = _measure(lambda: _ours_impact(df, target, None, msl, adjust), repeat)
        names, values = res.pop("out")
        res["accuracy"] = float(list(names).index("x"))
        res["accuracy_label"] = "rank of x (0 = first)"
        return res
    numeric = case == "numeric"
    if numeric:
        warm_df = numeric_data(2000, seed=1)[0]
        df, target, feature = numeric_data(n)
        fn = _ours_numeric if impl == "ours" else _stratx_numeric
    else:
        warm_df = categorical_data(3000, 20, seed=1)[0]
        levels = int(case.split(":")[1])
        df, effect = categorical_data(n, levels)
        target, feature = "y", "cat"
        fn = _ours_categorical if impl == "ours" else _stratx_categorical
    extra = (adjust,) if impl == "ours" and numeric else ()
    fn(warm_df, target, feature if numeric else "cat", msl, *extra)  # compile / load caches
    if impl == "ours":  # numba takes over from numpy once its kernels are ready
        from stratpd_xl import _backend

        _backend.ENGINE.wait()
    res = _measure(lambda: fn(df, target, feature, msl, *extra), repeat)
    x, pdv = res.pop("out")
    if numeric:
        truth = numeric_truth(x)
        err = np.sqrt(np.mean(((pdv - pdv.mean()) - (truth - truth.mean())) ** 2))
        res["accuracy"] = float(err / np.ptp(truth))
        res["accuracy_label"] = "nRMSE"
    else:
        t = effect[x] - effect[x].mean()
        e = pdv - pdv.mean()
        res["accuracy"] = float(np.sqrt(np.mean((e - t) ** 2)))
        res["accuracy_label"] = f"RMSE ({len(x)} of {len(effect)} levels)"
    return res


def first_call(python: str, impl: str, cold: bool) -> float:
    """Wall time of a fresh process that imports the library and computes one curve."""
    code = (
        "import numpy as np, pandas as pd\n"
        "rng = np.random.default_rng(0)\n"
        "df = pd.DataFrame(rng.uniform(0, 10, (2000, 4)), columns=list('abcd'))\n"
        "df['y'] = df.a ** 2 + df.b\n"
    )
    if impl == "ours":
        code += "import stratpd_xl as sx\nsx.stratpd(df, 'y', 'a')\n"
    else:
        code += (
            "from stratx.partdep import partial_dependence\n"
            "partial_dependence(df.drop(columns=['y']), df['y'], 'a')\n"
        )
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as cache:
        if cold:
            env["NUMBA_CACHE_DIR"] = cache  # an empty cache: compile everything
        t0 = time.perf_counter()
        subprocess.run([python, "-c", code], check=True, env=env, capture_output=True)
        return time.perf_counter() - t0


# --------------------------------------------------------------------------- driver


def run_case(python: str, case: str, impl: str, n: int, repeat: int, msl: int) -> dict | None:
    cmd = [python, str(Path(__file__).resolve()), "--worker", case, "--impl", impl,
           "--n", str(n), "--repeat", str(repeat), "--msl", str(msl)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["failed"])[-1]
        return {"error": tail[:80]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stratx", help="python of a venv with stratx 0.5 for the comparison")
    ap.add_argument("--worker")
    ap.add_argument("--impl", default="ours")
    ap.add_argument("--n", type=int)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--msl", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="small sizes only (smoke test)")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.impl, args.n, args.repeat, args.msl)))
        return

    me = sys.executable
    scale = 10 if args.quick else 1
    cases = [
        # label, case, n, run stratx?, target
        ("numeric, 10 columns", "numeric", 30_000 // scale, True, "> 100x faster, <= 300 MB"),
        ("numeric, 10 columns", "numeric", 100_000 // scale, False, "(stratx: MemoryError)"),
        ("numeric, 10 columns", "numeric", 1_048_576 // scale, False, "< 3 s, <= 1.5 GB peak"),
        ("numeric, 10 columns, adjust=False", "numeric:plain", 1_048_576 // scale, False, ""),
        ("categorical, 1,000 levels", "cat:1000", 300_000 // scale, True, "<= 1.5 s"),
        ("impact ranking, 9 features (10 columns)", "impact", 1_048_576 // scale, False,
         "< 8 s"),
        ("impact ranking, adjust=False", "impact:plain", 1_048_576 // scale, False, ""),
    ]
    rows = []
    for label, case, n, with_stratx, target in cases:
        ours = run_case(me, case, "ours", n, args.repeat, args.msl)
        ref = (run_case(args.stratx, case, "stratx", n, 1, args.msl)
               if with_stratx and args.stratx else None)
        rows.append((label, n, ours, ref, target))
    print("| case | rows | stratpd-xl s | peak MB above start | total peak MB | accuracy "
          "| stratx s | stratx MB | stratx accuracy | speed-up | target |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---|---:|---|")
    for label, n, ours, ref, target in rows:
        def acc(r):
            return f"{r['accuracy']:.4f} {r['accuracy_label']}" if r and "accuracy" in r else ""

        def sec(r):
            return f"{r['seconds']:.3f}" if r and "seconds" in r else (r or {}).get("error", "")

        speed = (f"{ref['seconds'] / ours['seconds']:.0f}x"
                 if ref and "seconds" in ref and "seconds" in ours else "")
        print(f"| {label} | {n:,} | {sec(ours)} | {ours.get('peak_mb', 0):.0f} | "
              f"{ours.get('total_mb', 0):.0f} | {acc(ours)} | {sec(ref)} | "
              f"{(ref or {}).get('peak_mb', float('nan')):.0f} | {acc(ref)} | {speed} | {target} |")
    print(f"\nload average (1, 5, 15 min): {' '.join(open('/proc/loadavg').read().split()[:3])}")
    print()
    print("| first call in a fresh process (2,000 rows, import included) | seconds |")
    print("|---|---:|")
    print(f"| stratpd-xl, numba cache warm | {first_call(me, 'ours', cold=False):.2f} |")
    print(f"| stratpd-xl, very first call after install (empty numba cache) | "
          f"{first_call(me, 'ours', cold=True):.2f} |")
    if args.stratx:
        print(f"| stratx 0.5 (compiles in every new process) | "
              f"{first_call(args.stratx, 'stratx', cold=False):.2f} |")


if __name__ == "__main__":
    main()
