"""End-to-end speed and memory of the front ends, each beside the floor it cannot beat.

Usage::

    python benchmarks/bench_end_to_end.py --quick          # 10,000 rows, a sanity run
    python benchmarks/bench_end_to_end.py                  # 10k, 100k and 1,048,575 rows
    python benchmarks/bench_end_to_end.py --sizes 200000 --formats csv,xlsx \\
        --commands curve,report,STRATPD --timeout 900 --out bench-e2e.md
    python benchmarks/bench_end_to_end.py --sizes 200000 --formats ods --commands curve \\
        --repeat 5                                     # medians of 5 command/floor pairs

What is measured (issue 7, item 7):

* data: N rows x 10 columns (8 numbers, 1 text column with 4 values, target ``y`` with a known
  structure), written once per size under ``--data-dir`` as a ``,`` CSV, a ``;`` CSV with
  decimal commas, an .xlsx and (when LibreOffice's ``soffice`` exists) an .ods;
* ``curve``/``impact``/``report``: the whole ``stratpd-xl`` command as a subprocess, with
  ``--seed 1``: wall seconds (Python start-up included, as a user waits for it), peak resident
  memory of the child and the size of the output file;
* ``STRATPD``/``STRATIMPACT``: the formula functions called in a worker process with the
  cells typed as xlwings hands them over (a tuple of row tuples, header first, floats and
  str); only the call is timed, after the add-in's numba/matplotlib warm-up;
* floor: measured in the same run, the least any front end could do: for files a subprocess
  that starts Python, reads the file bare (``pd.read_csv`` with the right ``sep``/``decimal``,
  or ``pd.read_excel(engine="calamine")``) and calls the engine; for formulas the engine call
  on the already-typed DataFrame.  ratio = seconds / floor.

Every measurement runs in its own process, so a crash, an out-of-memory kill or a timeout only
fails its row.  Progress goes to stderr, the markdown table to stdout (and ``--out``).
Timings are only meaningful on a quiet machine.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXCEL_ROWS = 1_048_575  # Excel's sheet limit (1,048,576) minus the header row
FORMATS = ("csv", "csv-dc", "xlsx", "ods")
COMMANDS = ("curve", "impact", "report", "STRATPD", "STRATIMPACT")
TARGET, FEATURE = "y", "x0"
SEED = 1
FORMULA_MAX_ROWS = 200_000  # Excel's formula path with 1M cells is out of scope
REPORT_MAX_ROWS = 200_000  # larger only from CSV (the 1M CSV report has a target)

# --------------------------------------------------------------------------- data


def make_frame(n: int, seed: int = 0) -> Any:
    """x0 quadratic, x1 linear and interacting with the text column, x2..x7 small effects."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, (n, 8))
    cat = rng.choice(np.array(["north", "south", "east", "west"]), n)
    effect = pd.Series({"north": 0.0, "south": 5.0, "east": -3.0, "west": 2.0})
    y = (
        x[:, 0] ** 2
        + 3 * x[:, 1]
        + effect[cat].to_numpy()
        + x[:, 2:].sum(axis=1) * 0.5
        + rng.normal(0, 1, n)
    )
    frame = pd.DataFrame(x.round(4), columns=[f"x{i}" for i in range(8)])
    frame["region"] = cat
    frame[TARGET] = y.round(4)  # 4 decimals: what a spreadsheet export typically holds
    return frame


def _write_xlsx(frame: Any, path: Path) -> None:
    import xlsxwriter

    # constant_memory streams row by row: a 1M-row sheet in bounded memory and about a minute.
    book = xlsxwriter.Workbook(str(path), {"constant_memory": True})
    sheet = book.add_worksheet("data")
    sheet.write_row(0, 0, list(frame.columns))
    for i, row in enumerate(frame.itertuples(index=False, name=None), start=1):
        sheet.write_row(i, 0, row)
    book.close()


def _convert_ods(xlsx: Path, ods: Path, timeout: float) -> str | None:
    """xlsx -> ods with LibreOffice; the reason on failure (None when done)."""
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if soffice is None:
        return "soffice not found"
    with tempfile.TemporaryDirectory() as tmp:
        # A private profile: a user's running LibreOffice would otherwise swallow the request.
        cmd = [
            soffice, f"-env:UserInstallation=file://{tmp}/profile", "--headless",
            "--convert-to", "ods", "--outdir", tmp, str(xlsx),
        ]
        try:
            subprocess.run(cmd, capture_output=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return f"soffice took over {timeout:.0f} s"
        made = Path(tmp) / (xlsx.stem + ".ods")
        if not made.exists() or made.stat().st_size == 0:
            return "soffice wrote no .ods"
        shutil.move(str(made), ods)
    return None


def data_files(n: int, data_dir: Path, formats: list[str], timeout: float) -> dict[str, Any]:
    """The files of one size, written on first use; {format: Path or reason it is missing}."""
    data_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "csv": data_dir / f"data-{n}.csv",
        "csv-dc": data_dir / f"data-{n}-semicolon.csv",
        "xlsx": data_dir / f"data-{n}.xlsx",
        "ods": data_dir / f"data-{n}.ods",
    }
    # The formulas type their cells from the CSV, and ods is converted from xlsx.
    wanted = set(formats) | {"csv"}
    if "ods" in wanted:
        wanted.add("xlsx")
    frame = None
    out: dict[str, Any] = {}
    for fmt in FORMATS:
        path = paths[fmt]
        if fmt not in wanted:
            continue
        if path.exists() and path.stat().st_size > 0:
            out[fmt] = path
            continue
        if fmt == "ods":
            _progress(f"converting {paths['xlsx'].name} to .ods with soffice")
            reason = _convert_ods(paths["xlsx"], path, timeout)
            out[fmt] = reason or path
            continue
        if frame is None:
            frame = make_frame(n)
        _progress(f"writing {path.name}")
        tmp = path.with_suffix(".part" + path.suffix)
        if fmt == "csv":
            frame.to_csv(tmp, index=False)
        elif fmt == "csv-dc":
            frame.to_csv(tmp, index=False, sep=";", decimal=",")
        else:
            _write_xlsx(frame, tmp)
        os.replace(tmp, path)  # a half-written file from an interrupted run is never reused
        out[fmt] = path
    return out


# --------------------------------------------------------------------------- measuring


@dataclass
class Run:
    ok: bool
    seconds: float
    peak_mb: float
    note: str = ""
    stdout: str = ""


def run_measured(cmd: list[str], timeout: float, cwd: Path | None = None) -> Run:
    """Run ``cmd``; wall time, and peak RSS of this child alone (``wait4``'s rusage)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        # Own process group, so a timeout also kills anything the child started.
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd, start_new_session=True)
        timed_out = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                timed_out = True
                _, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.01)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    peak_mb = usage.ru_maxrss / 1024  # kilobytes on Linux
    if timed_out:
        return Run(False, seconds, peak_mb, f"timeout after {timeout:g} s")
    if proc.returncode != 0:
        last = (stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        if proc.returncode == -signal.SIGKILL:
            last = "killed (out of memory?)"
        return Run(False, seconds, peak_mb, f"failed: {last[:120]}")
    return Run(True, seconds, peak_mb, stdout=stdout)


def cli_prefix() -> list[str]:
    """How a user runs the command: the console script beside this Python, else its code."""
    script = Path(sys.executable).parent / "stratpd-xl"
    if script.exists():
        return [sys.executable, str(script)]  # same interpreter even if the shebang differs
    # No ``python -m stratpd_xl`` (the package has no __main__); the console script's body.
    return [sys.executable, "-c", "import sys; from stratpd_xl.cli import main; sys.exit(main())"]


def worker_cmd(*args: str) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--worker", *args]


# --------------------------------------------------------------------------- workers


def _read_bare(path: str, fmt: str) -> Any:
    import pandas as pd

    if fmt == "csv":
        return pd.read_csv(path)
    if fmt == "csv-dc":
        return pd.read_csv(path, sep=";", decimal=",")
    return pd.read_excel(path, engine="calamine")


def _engine_call(frame: Any, command: str, random_state: int) -> Any:
    import stratpd_xl as sx

    if command in ("curve", "STRATPD"):
        return sx.partial_dependence(frame, TARGET, FEATURE, random_state=random_state)
    if command in ("impact", "STRATIMPACT"):
        return sx.impact(frame, TARGET, random_state=random_state)
    return sx.analyse(frame, TARGET, random_state=random_state)  # report: every curve + ranking


def worker_floor(path: str, fmt: str, command: str) -> None:
    """Bare read + engine call: what the CLI does minus checks, typing and writing."""
    frame = _read_bare(path, fmt)
    result = _engine_call(frame, command, SEED)
    print(json.dumps({"rows": len(frame), "result_len": len(getattr(result, "impact", result))}))


def worker_formula(path: str, command: str) -> None:
    """A formula called as xlwings calls it, and the engine call on the typed frame."""
    import pandas as pd

    frame = pd.read_csv(path)
    # Cells as Excel passes them over COM: a tuple of row tuples, floats for numbers, str.
    columns = [frame[c].astype(float).tolist() if pd.api.types.is_numeric_dtype(frame[c])
               else frame[c].astype(object).tolist() for c in frame.columns]
    cells = (tuple(frame.columns), *zip(*columns, strict=True))
    del columns

    from stratpd_xl.excel import udfs

    udfs.wait_for_warm_up(300)  # in Excel the add-in warms up while the workbook opens
    udfs.clear_cache()
    start = time.perf_counter()
    if command == "STRATPD":
        out = udfs.STRATPD(cells, TARGET, FEATURE)
    else:
        out = udfs.STRATIMPACT(cells, TARGET)
    seconds = time.perf_counter() - start
    ok = len(out) > 1 and len(out[0]) > 1  # an error is one cell with a sentence
    # The floor: the same engine work on the DataFrame the cells came from; the formulas
    # fix random_state 0 so a recalculation shows the same numbers.
    start = time.perf_counter()
    _engine_call(frame, command, 0)
    floor = time.perf_counter() - start
    print(json.dumps({
        "seconds": seconds, "floor": floor, "ok": ok, "spilled": len(out) - 1,
        "first": str(out[0][0])[:120],
    }))


# --------------------------------------------------------------------------- rows


@dataclass
class Row:
    rows: int
    fmt: str
    command: str
    seconds: float | None = None
    floor: float | None = None
    peak_mb: float | None = None
    output: str = ""
    target: str = ""
    verdict: str = "-"
    notes: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float | None:
        if self.seconds is None or not self.floor:
            return None
        return self.seconds / self.floor


def target_for(row: Row, out_bytes: int | None, spilled: int | None) -> tuple[str, bool | None]:
    """The issue's target for this row, and whether it is met (None: no target here)."""
    n, fmt, cmd = row.rows, row.fmt, row.command
    s, ratio, mb = row.seconds or 0.0, row.ratio or 0.0, row.peak_mb or 0.0
    if cmd == "curve" and fmt.startswith("csv") and n >= EXCEL_ROWS:
        return "<= 2x floor, <= 1500 MB", ratio <= 2 and mb <= 1500
    if cmd in ("curve", "impact") and fmt in ("xlsx", "ods"):
        return "<= 1.3x floor", ratio <= 1.3
    if cmd == "report" and n <= REPORT_MAX_ROWS:
        size_mb = (out_bytes or 0) / 1e6
        return "<= 10 s, < 5 MB (200k)", s <= 10 and size_mb < 5
    if cmd == "report" and fmt.startswith("csv") and n >= EXCEL_ROWS:
        return "<= 30 s", s <= 30
    if cmd == "STRATPD":
        return "<= 1 s, <= 500 rows spilled (200k)", s <= 1 and (spilled or 0) <= 500
    if cmd == "STRATIMPACT":
        return "<= 3 s (200k)", s <= 3
    return "", None


def _size(num: int) -> str:
    if num < 1024:
        return f"{num} B"
    if num < 1024**2:
        return f"{num / 1024:.0f} KB"
    return f"{num / 1024**2:.1f} MB"


def measure_cli(row: Row, path: Path, out_dir: Path, timeout: float, repeat: int = 1) -> None:
    """The command and its floor, run in turn ``repeat`` times; medians of each.

    Run in pairs, so that a slow spell of a shared machine weighs on both sides alike; the
    spread of the per-pair ratios goes into the row's notes.
    """
    suffix = ".xlsx" if row.command == "report" else ".csv"
    out = out_dir / f"{row.command}-{row.fmt}-{row.rows}{suffix}"
    cmd = [*cli_prefix(), row.command, str(path), "-t", TARGET, "--seed", str(SEED)]
    if row.command == "curve":
        cmd += ["-f", FEATURE]
    fmt = "xlsx" if row.fmt == "ods" else row.fmt  # calamine reads .ods through read_excel
    seconds, floors, peaks = [], [], []
    out_bytes = 0
    for _ in range(repeat):
        out.unlink(missing_ok=True)
        run = run_measured([*cmd, "-o", str(out)], timeout)
        out_bytes = out.stat().st_size if out.exists() else 0
        if run.ok and out_bytes == 0:
            run.ok, run.note = False, "no output written"
        if not run.ok:
            row.seconds, row.peak_mb = run.seconds, run.peak_mb
            row.notes.append(run.note)
            row.verdict = "error" if not run.note.startswith("timeout") else "timeout"
            return
        seconds.append(run.seconds)
        peaks.append(run.peak_mb)
        floor = run_measured(worker_cmd("floor", str(path), fmt, row.command), timeout)
        if not floor.ok:
            row.notes.append(f"floor {floor.note}")
            break
        floors.append(floor.seconds)
    row.seconds, row.peak_mb = statistics.median(seconds), max(peaks)
    row.output = _size(out_bytes)
    if floors:
        row.floor = statistics.median(floors)
    if len(floors) > 1:
        ratios = sorted(s / f for s, f in zip(seconds, floors, strict=False))
        row.notes.append(f"{len(floors)} pairs, ratios {ratios[0]:.2f}-{ratios[-1]:.2f}")
    _judge(row, out_bytes, None)


def measure_formula(row: Row, csv_path: Path, timeout: float) -> None:
    run = run_measured(worker_cmd("formula", str(csv_path), row.command), timeout)
    row.peak_mb = run.peak_mb
    if not run.ok:
        row.notes.append(run.note)
        row.verdict = "error" if not run.note.startswith("timeout") else "timeout"
        return
    result = json.loads(run.stdout.strip().splitlines()[-1])
    row.seconds, row.floor = result["seconds"], result["floor"]
    row.output = f"{result['spilled']} rows spilled"
    if not result["ok"]:
        row.notes.append(f"formula answered: {result['first']}")
        row.verdict = "error"
        return
    _judge(row, None, result["spilled"])


def _judge(row: Row, out_bytes: int | None, spilled: int | None) -> None:
    row.target, met = target_for(row, out_bytes, spilled)
    if met is not None:
        row.verdict = "met" if met else "missed"
    if row.floor is None and "x floor" in row.target:
        row.verdict = "?"  # no floor, no ratio to judge


def planned(sizes: list[int], formats: list[str], commands: list[str]) -> list[Row]:
    rows = []
    for n in sizes:
        for fmt in formats:
            for cmd in commands:
                if cmd in ("STRATPD", "STRATIMPACT"):
                    continue
                if cmd == "report" and n > REPORT_MAX_ROWS and fmt != "csv":
                    continue  # one 1M report (from the plain CSV) answers the target
                rows.append(Row(n, fmt, cmd))
        for cmd in commands:
            if cmd in ("STRATPD", "STRATIMPACT") and n <= FORMULA_MAX_ROWS:
                rows.append(Row(n, "cells", f"{cmd}"))
    return rows


# --------------------------------------------------------------------------- table


def markdown(rows: list[Row], header_notes: list[str]) -> str:
    head = ["rows", "format", "command", "seconds", "floor s", "ratio", "peak MB",
            "output size", "target", "met?"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def num(v: float | None, spec: str) -> str:
        return "-" if v is None else format(v, spec)

    for r in rows:
        command = f"={r.command}" if r.fmt == "cells" else r.command
        verdict = r.verdict + (f" ({'; '.join(r.notes)})" if r.notes else "")
        cells = [f"{r.rows:,}", r.fmt, command, num(r.seconds, ".2f"), num(r.floor, ".2f"),
                 num(r.ratio, ".2f"), num(r.peak_mb, ".0f"), r.output or "-", r.target or "-",
                 verdict.replace("|", "/")]
        lines.append("| " + " | ".join(cells) + " |")
    notes = [
        "seconds: wall time of the whole command (Python start-up included); for formulas the "
        "call alone. floor: bare read (pandas / python-calamine) + engine call in a fresh "
        "Python; for formulas the engine call on the typed DataFrame. peak MB: max RSS of the "
        "child process (for formulas, the worker holding the cells).",
        *header_notes,
    ]
    return "\n".join(lines) + "\n\n" + "\n".join(f"* {n}" for n in notes) + "\n"


def _progress(text: str) -> None:
    sys.stderr.write(f"[bench-e2e {time.strftime('%H:%M:%S')}] {text}\n")
    sys.stderr.flush()


# --------------------------------------------------------------------------- main


def _list(text: str, allowed: tuple[str, ...]) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    lowered = {a.lower(): a for a in allowed}
    bad = [t for t in items if t.lower() not in lowered]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown {bad}; choose from {', '.join(allowed)}")
    return [lowered[t.lower()] for t in items]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=f"10000,100000,{EXCEL_ROWS}",
                        help="comma-separated row counts (default %(default)s)")
    parser.add_argument("--quick", action="store_true", help="10,000 rows only")
    parser.add_argument("--formats", type=lambda t: _list(t, FORMATS), default=list(FORMATS),
                        help=f"comma-separated, from {','.join(FORMATS)} (default all)")
    parser.add_argument("--commands", type=lambda t: _list(t, COMMANDS), default=list(COMMANDS),
                        help=f"comma-separated, from {','.join(COMMANDS)} (default all)")
    parser.add_argument("--timeout", type=float, default=1800,
                        help="seconds per measurement and for the .ods conversion (default "
                        "%(default)s)")
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/stratpd-xl-bench-e2e"))
    parser.add_argument("--repeat", type=int, default=1,
                        help="run each command and its floor in turn this many times and "
                        "report medians (default %(default)s)")
    parser.add_argument("--out", type=Path, help="also write the markdown table here")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        kind, *rest = args.worker
        (worker_floor if kind == "floor" else worker_formula)(*rest)
        return 0

    sizes = [10_000] if args.quick else [int(s.replace("_", "")) for s in args.sizes.split(",")]
    rows = planned(sizes, args.formats, args.commands)
    header_notes: list[str] = []
    if {"xlsx", "ods"} & set(args.formats) and importlib.util.find_spec("python_calamine") is None:
        # Not a dependency of the package; without it those rows show "floor failed".
        header_notes.append("python-calamine missing: pip install python-calamine for the "
                            ".xlsx/.ods floors")
    _progress(f"{len(rows)} measurements; CLI as: {' '.join(cli_prefix()[1:])[:80]}")

    with tempfile.TemporaryDirectory(prefix="bench-e2e-out-") as tmp:
        out_dir = Path(tmp)
        warmed = False
        for n in sizes:
            files = data_files(n, args.data_dir, args.formats, args.timeout)
            for fmt, value in files.items():
                if not isinstance(value, Path) and fmt in args.formats:
                    header_notes.append(f"{n:,} rows .{fmt} skipped: {value}")
            if not warmed:
                # numba compiles on the first run and caches on disk; a real user pays that
                # once per install, not per command, so it stays out of the table.  One run
                # per file format: the .ods scan has compiled code of its own.
                _progress("warm-up runs (numba cache)")
                warm = out_dir / "warm.csv"
                run_measured([*cli_prefix(), "impact", str(files["csv"]), "-t", TARGET,
                              "--seed", str(SEED), "-o", str(warm)], args.timeout)
                for fmt in ("xlsx", "ods"):
                    if fmt in args.formats and isinstance(files.get(fmt), Path):
                        run_measured([*cli_prefix(), "curve", str(files[fmt]), "-t", TARGET,
                                      "-f", FEATURE, "-o", str(warm)], args.timeout)
                warmed = True
            for row in (r for r in rows if r.rows == n):
                label = f"{n:,} rows {row.fmt} {row.command}"
                if row.fmt == "cells":
                    _progress(f"{label} ...")
                    measure_formula(row, files["csv"], args.timeout)
                elif not isinstance(files.get(row.fmt), Path):
                    row.verdict = "skipped"
                    row.notes.append(str(files.get(row.fmt)))
                    continue
                else:
                    _progress(f"{label} ...")
                    measure_cli(row, files[row.fmt], out_dir, args.timeout, args.repeat)
                _progress(f"{label}: {row.seconds or 0:.2f} s, floor {row.floor or 0:.2f} s, "
                          f"{row.verdict}")

    table = markdown(rows, header_notes)
    sys.stdout.write(table)
    if args.out:
        args.out.write_text(table, encoding="utf-8")
    return 0 if all(r.verdict not in ("error", "timeout") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
