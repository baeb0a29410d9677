"""The ``stratpd-xl`` command: partial dependence from .csv/.xlsx/.ods files, without Excel.

Sub-commands: ``curve`` (one feature, ``--by`` a column for a curve per group), ``impact``
(ranking of all features), ``interactions`` (ranking of pairs), ``surface`` (a two-way
surface), ``report`` (a workbook with everything) and ``demo`` (a report for the bundled
diamonds data).

Exit codes: 0 success, 2 bad input (one sentence on stderr, no traceback), 1 internal error,
130 interrupted.  Outputs are never overwritten without ``--force``.
"""

from __future__ import annotations

import argparse
import datetime
import errno
import importlib
import json
import math
import os
import secrets
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, NoReturn, TextIO

import pandas as pd

from . import __version__, workflow
from .demo import DEMO_FILE, DEMO_LEFT_OUT, DEMO_TARGET, demo_csv_bytes, demo_data
from .errors import StratPDInputError, StratPDNote, error_text, is_interrupt
from .input.files import MAX_FILE_BYTES, read_table
from .params import PARAMETERS, STRATA_ROWS, Settings
from .presentation.drawing import PictureDrawer
from .presentation.labels import visible_text as _visible
from .presentation.tables import inert_table
from .schema import counted

__all__ = ["CommandProgress", "ProgressBar", "build_parser", "main"]


PROG = "stratpd-xl"
# How a CLI user analyses a column that looks like an identifier.
KEEP_HINT = "add --keep with its name (or name it with --feature) to analyse it anyway"
# CLI option -> parameter of the table (the option names users already know stay).
_OPTIONS = {
    "min_samples_leaf": "--min-samples-leaf",
    "min_slopes_per_x": "--min-slopes-per-x",
    "n_trials": "--trials",
    "random_state": "--seed",
    "max_points": "--max-points",
}

_CURVE_FORMATS = (".csv", ".xlsx", ".png", ".svg", ".pdf")
_COMPARE_FORMATS = (".csv", ".xlsx", ".png", ".svg", ".pdf")
_FIGURES = (".png", ".svg", ".pdf")
# What "-" as INPUT reads: standard input, saved under this name (so messages name it).
STDIN = "-"
_REPORT_FORMATS = (".xlsx",)


class _UserError(Exception):
    """A user mistake found by the CLI itself (bad option, output exists); exit code 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one sentence that says where help is, then exit 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{PROG}: {message}; see '{self.prog} --help'\n")
        raise SystemExit(2)


# --------------------------------------------------------------------------- progress bar


class ProgressBar:
    """A one-line progress bar on a terminal; on a pipe or file only the final line.

    Use as ``progress`` callback of :func:`stratpd_xl.analyse`: it is called with
    ``(done, total, feature)`` before each feature and once with ``done == total``.

    Parameters
    ----------
    stream
        Where to draw; default ``sys.stderr`` (so stdout stays clean for tables).
    width
        Number of cells of the bar.
    """

    def __init__(self, stream: TextIO | None = None, *, width: int = 28,
                 progress: CommandProgress | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.start = time.monotonic()
        self.progress = progress
        self.isatty = bool(getattr(self.stream, "isatty", lambda: False)()) and not (
            progress is not None and progress.quiet)
        self._drawn = False

    def __call__(self, done: int, total: int, feature: str) -> None:
        if done >= total:
            self.finish(total)
            return
        filled = int(self.width * done / total) if total else self.width
        bar = "#" * filled + "-" * (self.width - filled)
        label = _visible(feature if len(feature) <= 30 else feature[:27] + "...")
        elapsed = time.monotonic() - self.start
        # After a feature or two, the time left at the pace so far.
        left = f", about {elapsed / done * (total - done):.0f} s left" if done else ""
        if self.progress is not None:
            self.progress.detail(f"[{bar}] {done}/{total} {label}{left}")
            return
        if not self.isatty:
            return
        # \r and a clear-to-end-of-line redraw in place; no dependency on tqdm.
        self.stream.write(f"\r[{bar}] {done}/{total} {label}\x1b[K")
        self.stream.flush()
        self._drawn = True

    def finish(self, total: int) -> None:
        """Write the final line: how many features and how long it took."""
        if self.progress is not None:
            elapsed = time.monotonic() - self.start
            self.progress.note(
                f"analysed {total} feature{'s' if total != 1 else ''} in {elapsed:.1f} s")
            return
        elapsed = time.monotonic() - self.start
        prefix = "\r" if self._drawn else ""
        line = f"analysed {total} feature{'s' if total != 1 else ''} in {elapsed:.1f} s"
        self.stream.write(f"{prefix}{line}\x1b[K\n" if self._drawn else f"{line}\n")
        self.stream.flush()
        self._drawn = False


class CommandProgress:
    """Progress of a whole command on stderr: read, analyse, draw, write, with elapsed time.

    On a terminal the current step and its elapsed seconds are redrawn in place every second
    (so a long single curve with many trials is not silent), the analysis adds its bar and an
    estimate of the time left; at the end one line gives each step's time.  Off a terminal
    only the closing lines are written; with ``quiet`` nothing.

    Parameters
    ----------
    stream
        Where to draw; default ``sys.stderr``.
    quiet
        Write nothing.
    """

    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.isatty = bool(getattr(self.stream, "isatty", lambda: False)()) and not quiet
        self.start = time.monotonic()
        self.steps: list[tuple[str, float]] = []
        self._step = ""
        self._step_start = self.start
        self._detail = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if self.isatty:
            self._ticker = threading.Thread(target=self._tick, name="stratpd-progress",
                                            daemon=True)
            self._ticker.start()

    def step(self, name: str) -> None:
        """Start a step ("reading houses.csv"); the previous one is timed."""
        with self._lock:
            self._end_step()
            self._step, self._step_start, self._detail = name, time.monotonic(), ""
            self._draw()

    def analysis(self) -> ProgressBar:
        """The callback for the analysis: a bar inside this progress line."""
        return ProgressBar(self.stream, progress=self)

    def note(self, text: str) -> None:
        """Write a note line above the progress line."""
        if self.quiet:
            return
        with self._lock:
            self.stream.write(("\r\x1b[K" if self.isatty else "") + text + "\n")
            self._draw()

    def out(self, text: str) -> None:
        """Print a line of the answer on stdout, off the progress line (same terminal);
        nothing when quiet (``--quiet`` prints nothing on success, as ``cp`` does)."""
        if self.quiet:
            return
        with self._lock:
            if self.isatty:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
            print(text, flush=True)
            self._draw()

    def detail(self, text: str) -> None:
        """Show ``text`` after the current step (a bar, the sheet being written)."""
        with self._lock:
            self._detail = text
            self._draw()

    def _end_step(self) -> None:
        if self._step:
            self.steps.append((self._step.split(" ", 1)[0], time.monotonic() - self._step_start))
            self._step = ""

    def _draw(self) -> None:
        if not self.isatty or not self._step:
            return
        elapsed = time.monotonic() - self.start
        detail = f" {self._detail}" if self._detail else ""
        self.stream.write(f"\r{self._step}...{detail} ({elapsed:.0f} s)\x1b[K")
        self.stream.flush()

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            with self._lock:
                self._draw()

    def close(self, done: bool = True) -> None:
        """Stop drawing and, when the command ``done``, write the closing line with each
        step's time (after a failure the error is the last word)."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        with self._lock:
            self._end_step()
            if self.quiet or not done:
                if self.isatty:
                    self.stream.write("\r\x1b[K")
                return
            total = time.monotonic() - self.start
            parts = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in self.steps)
            clear = "\r\x1b[K" if self.isatty else ""
            self.stream.write(f"{clear}done in {total:.1f} s" + (f" ({parts})" if parts else "")
                              + "\n")
            self.stream.flush()


# --------------------------------------------------------------------------- arguments


def _parameter(name: str) -> Callable[[str], int | None]:
    """An argparse type checking one parameter against the table, in the table's words."""

    def parse(text: str) -> int | None:
        if name == "max_points" and text.strip().lower() == "none":
            text = "0"  # the table's help says None, as Python takes it: every point
        try:
            value = Settings.make(**{name: text})
        except StratPDInputError as exc:
            # "min_samples_leaf must be between 1 and ...; got 0" -> "expected a whole number
            # between 1 and ..., got 0": argparse already names the option.
            reason = str(exc).split(" must be ", 1)[-1].replace("; got", ", got")
            raise argparse.ArgumentTypeError(f"expected {reason}") from None
        result = getattr(value, name)
        # "--max-points 0" (every point) is None in Settings; None here would mean "not given".
        return 0 if name == "max_points" and result is None else result

    return parse


def _order(text: str) -> tuple[str, list[str]]:
    column, sep, values = text.partition("=")
    items = [v.strip() for v in values.split(",") if v.strip()]
    if not sep or not column.strip() or not items:
        raise argparse.ArgumentTypeError(
            f"expected COLUMN=first,second,... such as \"cut=Fair,Good,Ideal\"; got '{text}'")
    return column.strip(), items


def _decimal(text: str) -> str:
    if text not in (".", ","):
        raise argparse.ArgumentTypeError(f"use '.' or ',', not '{text}'")
    return text


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``stratpd-xl`` (exposed so docs and tests can inspect it)."""
    engine = _Parser(add_help=False)
    g = engine.add_argument_group("StratPD parameters")
    for name, option in _OPTIONS.items():
        p = PARAMETERS[name]
        default = "none" if p.default is None else p.default
        extra = (f"; report and demo {p.report_default}" if p.report_default is not None
                 else "")
        # None: "not given", so the demo can tell its own defaults from the user's choice.
        g.add_argument(
            option, dest=name, type=_parameter(name), default=None, metavar="N",
            help=f"{p.help} (default {default}{extra})".replace("%", "%%"),
        )
    g.add_argument(
        "--all-points", action="store_true",
        help="every distinct value of a numeric feature on its curve (same as --max-points 0)",
    )
    g.add_argument(
        "--no-adjust", dest="adjust", action="store_const", const=False, default=None,
        help=f"do not {PARAMETERS['adjust'].help} (default: adjust); faster and lighter on a "
        "table read in chunks".replace("%", "%%"),
    )
    g.add_argument(
        "--exclude", dest="exclude", action="append", metavar="COL",
        help=f"{PARAMETERS['exclude'].help}; may repeat, or list several separated by commas "
        "(--exclude casual,registered)".replace("%", "%%"),
    )

    g.add_argument(
        "--keep", dest="keep", action="append", metavar="COL",
        help=f"{PARAMETERS['keep'].help} (R's rownames, a saved pandas index, a numeric ID "
        "are left out otherwise); may repeat".replace("%", "%%"),
    )

    reading = _Parser(add_help=False)
    r = reading.add_argument_group("reading the input")
    r.add_argument(
        "input", metavar="INPUT",
        help="a .csv, .txt, .tsv, .xlsx, .xlsm, .xlsb, .xls, .ods or .parquet file, a folder of "
        ".parquet files, or - for standard input",
    )
    r.add_argument(
        "--sheet", metavar="NAME", help="worksheet of a workbook file (default: first)"
    )
    r.add_argument(
        "--decimal",
        type=_decimal,
        metavar="SEP",
        help="decimal separator in a text file, '.' or ',' (default: detected)",
    )
    r.add_argument("--encoding", metavar="NAME", help="text file encoding (default: detected)")
    r.add_argument(
        "--positive",
        metavar="VALUE",
        help="for a yes/no target, the value that counts (default TRUE/yes/1, else the rarer "
        "value); results are changes in its probability, in percentage points",
    )
    r.add_argument(
        "--categorical",
        action="append",
        metavar="COL",
        help="treat this column of numbers as categories (codes such as store or month "
        "numbers); may repeat",
    )
    r.add_argument(
        "--order",
        action="append",
        type=_order,
        metavar="COL=A,B,...",
        help="show the categories of COL in this order, the first as the one the others are "
        "compared with (e.g. --order \"cut=Fair,Good,Very Good\"); may repeat",
    )

    writing = _Parser(add_help=False)
    writing.add_argument("--force", action="store_true", help="overwrite existing output files")
    writing.add_argument(
        "--quiet", "-q", action="store_true",
        help="print nothing on success: no progress, notes, conclusion or \"wrote FILE\" "
        "(errors still show; the table or --json still go to stdout when asked for)",
    )
    scripts = _Parser(add_help=False)
    scripts.add_argument(
        "--json", action="store_true",
        help="print the result as JSON on stdout (table rows, attributes, notes and the "
        "conclusion) instead of the table",
    )

    parser = _Parser(
        prog=PROG,
        description="Model-free partial dependence (StratPD, Parr & Wilson 2020) for tables "
        "in .csv, .xlsx, .xls, .ods and .parquet files.",
        epilog="example: stratpd-xl demo, then stratpd-xl curve stratpd-demo/diamonds.csv "
        "-t price -f carat --out carat.png",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser(
        "curve",
        parents=[reading, engine, writing, scripts],
        help="partial dependence of the target on one feature",
        description="How the target moves with one feature, all else equal. Numbers and dates "
        "give a curve (StratPD), text and TRUE/FALSE columns one effect per category "
        "(CatStratPD).",
    )
    p.add_argument("--target", "-t", required=True, help="column to explain (numbers, or yes/no)")
    p.add_argument("--feature", "-f", required=True, help="column whose effect you want")
    p.add_argument(
        "--out",
        "-o",
        action="append",
        type=Path,
        metavar="FILE",
        help="write .csv (table), .xlsx (table and chart), or .png, .svg or .pdf (chart); "
        "may repeat; default: print the table",
    )

    _table_option(p, "by", "--by")
    _table_option(p, "bands", "--bands")
    _classes_option(p, "draw a curve per class, from one stratification")
    _scale_option(p)

    p = sub.add_parser(
        "interactions",
        parents=[reading, engine, writing, scripts],
        help="rank pairs of features by how much one's effect changes with the other",
        description="Rank pairs of features by interaction strength, from the data alone: "
        "0 when their effects add up, towards 1 when the pair's effect is all interaction.",
    )
    p.add_argument("--target", "-t", required=True, help="column to explain (numbers, or yes/no)")
    _features_option(p)
    _table_option(p, "bands", "--bands")
    _table_option(p, "max_features", "--max-features")
    _outputs_option(p)

    p = sub.add_parser(
        "surface",
        parents=[reading, engine, writing, scripts],
        help="two-way partial dependence of the target on two features (experimental)",
        description="How the target moves with two features together, all else equal: a "
        "table over a grid of both and a heat map (experimental).",
    )
    p.add_argument("--target", "-t", required=True, help="column to explain (numbers, or yes/no)")
    p.add_argument("--feature", "-f", dest="features", action="append", required=True,
                   metavar="F", help="one of the two features; give it twice: -f A -f B")
    _table_option(p, "grid", "--grid")
    _outputs_option(p)

    p = sub.add_parser(
        "compare",
        parents=[reading, engine, writing, scripts],
        help="StratPD beside a fitted model's partial dependence, ALE and ICE",
        description="A second opinion: fit a gradient-boosting model (scikit-learn), score it "
        "on rows it did not see, and put its partial dependence (PDP) and accumulated local "
        "effects (ALE) beside StratPD's curve, with how well they agree and why they may not. "
        "Two features give the model's two-way partial dependence and Friedman's H².",
    )
    p.add_argument("--target", "-t", required=True, help="column to explain (numbers, or yes/no)")
    p.add_argument(
        "--feature", "-f", dest="features", action="append", required=True, metavar="F",
        help="column whose effect you want; give it twice (-f A -f B) for a pair",
    )
    p.add_argument(
        "--ice", action="store_true",
        help="add individual curves (ICE) of 50 random rows: faint lines in the picture, an "
        "ICE sheet in .xlsx; with a .csv, the ICE table goes to FILE-ice.csv",
    )
    p.add_argument(
        "--out", "-o", action="append", type=Path, metavar="FILE",
        help="write .csv (table), .xlsx (table, sentences and picture), .png, .svg or .pdf "
        "(picture); may repeat; default: print the table",
    )
    _classes_option(p, "put each class's curve beside the classifier's per-class partial "
                    "dependence, with an agreement per class")

    p = sub.add_parser(
        "impact",
        parents=[reading, engine, writing, scripts],
        help="rank the features by how much each alone moves the target",
        description="Rank features by impact: the average distance of each feature's partial "
        "dependence from its mean, in target units.",
    )
    p.add_argument("--target", "-t", required=True, help="column to explain (numbers, or yes/no)")
    _features_option(p)
    _outputs_option(p)
    _classes_option(p, "rank each feature by the class it moves most (the class is named)")
    _scale_option(p)

    p = sub.add_parser(
        "report",
        parents=[reading, engine, writing, scripts],
        help="a workbook with the impact ranking and one sheet per feature",
        description="Write an .xlsx workbook: a summary sheet with the impact ranking and a "
        "sheet with the curve, chart and picture for every feature.",
    )
    p.add_argument("--target", "-t", required=True, help="column to explain (numbers, or yes/no)")
    _features_option(p)
    p.add_argument(
        "--out", "-o", required=True, type=Path, metavar="FILE.xlsx", help="the workbook"
    )
    p.add_argument(
        "--interactions", action="store_true",
        help="add an Interactions sheet: the pairs ranked, with a by-group chart for the top "
        "three (takes about as long again)",
    )
    p.add_argument(
        "--compare", action="store_true",
        help="add a \"Model check\" sheet: a fitted model's agreement with every curve, and "
        "where and why they differ (scikit-learn gradient boosting, scored on held-out rows)",
    )
    _classes_option(p, "write a sheet per feature with a curve per class, ranked by the "
                    "class each feature moves most")

    p = sub.add_parser(
        "demo",
        parents=[engine, writing],
        help="write a report for the bundled diamonds data (no arguments needed)",
        description="Analyse the price of 53,940 diamonds (bundled data, MIT licence) and "
        "write a report workbook, an impact chart and the data itself (diamonds.csv, to try "
        "the other commands on) into a folder.",
    )
    p.add_argument(
        "--out",
        "-o",
        type=Path,
        default=Path("stratpd-demo"),
        metavar="DIR",
        help="folder for the demo outputs (default: ./stratpd-demo; its files are replaced)",
    )
    _libreoffice_parser(sub)
    sub.add_parser(
        "warm-up",
        help="compile the engine now, so the first analysis after installing answers at once",
        description="Compile the engine's kernels into numba's on-disk cache (10-30 s, once "
        "after installing or upgrading); every later command, formula and Python call loads "
        "them in about a second.",
    )
    return parser


def _libreoffice_parser(sub: Any) -> None:
    p = sub.add_parser(
        "libreoffice",
        help="the LibreOffice Calc extension: =STRATPD, =STRATIMPACT and Analyse selection",
        description="Build, install or remove the Calc extension. It runs its analyses with "
        "this Python, so run these commands from the environment where stratpd-xl is installed.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser)
    actions.required = True
    build = actions.add_parser("build", help="write the extension (.oxt) for this Python")
    build.add_argument("--out", "-o", required=True, type=Path, metavar="FILE.oxt")
    build.add_argument("--force", action="store_true", help="overwrite an existing file")
    for action, text in (("install", "build the extension and add it to LibreOffice"),
                         ("uninstall", "remove the extension from LibreOffice")):
        q = actions.add_parser(action, help=text, description=text + " (close LibreOffice first)")
        q.add_argument("--shared", action="store_true",
                       help="for every user of this computer (needs administrator rights)")
        q.add_argument("--profile", type=Path, metavar="DIR",
                       help="a LibreOffice user profile folder other than your own")


def _cmd_libreoffice(args: argparse.Namespace) -> int:
    from .libreoffice import extension

    if args.action == "build":
        out: Path = args.out
        if out.suffix.lower() != ".oxt":
            raise _UserError(f'cannot write "{out}": a LibreOffice extension ends in .oxt')
        if out.exists() and not args.force:
            raise _UserError(f'"{out}" exists; add --force to replace it')
        extension.build(out)
        print(f"wrote {out}; add it in LibreOffice with Tools > Extension Manager > Add, "
              "then restart LibreOffice")
    elif args.action == "install":
        hook = extension.install(shared=args.shared, profile=args.profile)
        if hook is not None:
            print(f"added {hook}: a LibreOffice started while this venv is active still finds "
                  "its Python's uno")
        print("compiling the engine's kernels once (up to a minute), so the first formula "
              "answers at once...", flush=True)
        try:
            print(f"compiled in {extension.warm_up():.0f} s")
        except StratPDInputError as exc:
            print(f"{exc}; the first formula will compile them (about 30 s)")
        print("installed the StratPD extension; restart LibreOffice, then type "
              '=STRATIMPACT(A1:D601;"y") in Calc or use Tools > Add-Ons > Analyse selection')
    else:
        extension.uninstall(shared=args.shared, profile=args.profile)
        print("removed the StratPD extension; restart LibreOffice")
    return 0


def _scale_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--dask-scheduler", metavar="ADDRESS",
        help="run on the Dask cluster whose scheduler is at ADDRESS (tcp://host:8786): the "
        ".parquet file or folder is read by the cluster's workers, which must see the same "
        'path (needs pip install "stratpd-xl[dask]"); without it a .parquet or text file too '
        "large to hold is read here in chunks",
    )
    p.add_argument(
        "--strata-rows", type=int, metavar="N", default=None,
        help="a table read in chunks or on Dask has its strata (the trees on the other "
        f"columns) fitted on a sample of at most N rows (default {STRATA_ROWS:,}); every row "
        "is still added up. More rows: strata closer to the data, more memory and time "
        "(docs/scale.md)",
    )


def _scaled_input(args: argparse.Namespace) -> Any:
    """What a command reads in chunks or on a Dask cluster instead of in memory: a Dask
    DataFrame (--dask-scheduler), a path (a file too large to hold), or None."""
    address = getattr(args, "dask_scheduler", None)
    if address is None:
        if args.input == STDIN or getattr(args, "by", None) is not None:
            return None
        from .scale import needs_streaming

        return Path(args.input) if needs_streaming(args.input) else None
    if args.input == STDIN or not (Path(args.input).is_dir()
                                   or Path(args.input).suffix.lower() == ".parquet"):
        raise _UserError("--dask-scheduler reads a .parquet file or a folder of them; write "
                         "the table as Parquet (the cluster's workers read it)")
    for option in ("by", "sheet", "encoding", "decimal", "order"):
        if getattr(args, option, None):
            raise _UserError(f"--{option} does not apply with --dask-scheduler; leave it out")
    try:
        import dask.dataframe as dd
        import distributed
    except ImportError:
        raise _UserError('--dask-scheduler needs the dask extra: pip install '
                         '"stratpd-xl[dask]"') from None
    try:
        client = distributed.Client(address, timeout="20s", set_as_default=True)
    except (OSError, TimeoutError, ValueError) as exc:
        raise _UserError(f"cannot reach the Dask scheduler at {address} ({exc}); check the "
                         "address (tcp://host:8786) and that the scheduler is running") from exc
    _clients.append(client)
    _step(f"reading {Path(args.input).name} on {address}")
    return dd.read_parquet(args.input)


class _ChunkLines:
    """Where the per-chunk progress lines go: after the step on a terminal's progress line,
    else one line each on stderr."""

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        for line in text.splitlines():
            if _progress is not None and _progress.isatty:
                _progress.detail(line.split(": ", 1)[-1])
            elif line:
                sys.stderr.write(line + "\n")
        return len(text)

    def flush(self) -> None:
        sys.stderr.flush()


#: Dask clients opened by --dask-scheduler, closed when the command ends.
_clients: list[Any] = []


def _table_option(p: argparse.ArgumentParser, name: str, option: str) -> None:
    """An option for one parameter of the table, with its help text and default."""
    param = PARAMETERS[name]
    if param.is_column:
        p.add_argument(option, dest=name, metavar="COL",
                       help=param.help.replace("%", "%%"))
        return
    p.add_argument(option, dest=name, type=_parameter(name), default=None, metavar="N",
                   help=f"{param.help} (default {param.default})".replace("%", "%%"))


def _outputs_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--out", "-o", action="append", type=Path, metavar="FILE",
        help="write .csv, .xlsx, .png, .svg or .pdf; may repeat; default: print the table",
    )


def _features_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--feature",
        "-f",
        dest="features",
        action="append",
        metavar="F",
        help="only these features (may repeat; default: every other column)",
    )


# --------------------------------------------------------------------------- commands


def _settings(args: argparse.Namespace) -> Settings:
    """The parameters given on the command line, over the defaults (the demo has its own)."""
    base = Settings.for_report() if args.command in ("report", "demo") else Settings()
    names = [*_OPTIONS, "adjust", "by", "bands", "grid", "max_features", "exclude", "keep"]
    given = {name: getattr(args, name) for name in names
             if getattr(args, name, None) is not None}
    if getattr(args, "all_points", False):
        given["max_points"] = 0
    return Settings.make(base, **given)


def _check_outputs(
    outs: Sequence[Path] | None, formats: Sequence[str], force: bool, input_path: Path | None
) -> list[Path]:
    """Fail before any work when an output cannot or must not be written."""
    checked: list[Path] = []
    resolved: list[Path] = []
    for out in outs or []:
        suffix = out.suffix.lower()
        if suffix not in formats:
            allowed = ", ".join(formats)
            raise _UserError(f'cannot write "{out}": unknown output type "{suffix}"; use {allowed}')
        if input_path is not None and out.resolve() == input_path.resolve():
            raise _UserError(f'output "{out}" is the input file; choose another name')
        parent = out.parent if str(out.parent) else Path(".")
        if not parent.is_dir():
            raise _UserError(f'cannot write "{out}": folder "{parent}" does not exist')
        if out.is_dir():
            raise _UserError(f'cannot write "{out}": it is a folder; give a file name')
        if out.is_symlink() and not out.exists():
            raise _UserError(
                f'cannot write "{out}": it is a link to "{os.readlink(out)}", which does not '
                "exist; remove the link or give another file name"
            )
        _check_writable(out, parent)
        if out.exists() and not force:
            raise _UserError(f'"{out}" already exists; add --force to overwrite it')
        # "dup.csv" and "sub/../dup.csv" are one file: the second write would fail or
        # replace the first.
        if out.resolve() in resolved:
            raise _UserError(f'"{out}" is given twice as --out')
        checked.append(out)
        resolved.append(out.resolve())
    return checked


def _check_writable(out: Path, parent: Path) -> None:
    """Refuse, before the analysis, a folder that takes no new file (read-only, a system
    folder, a full disk): found out only after the whole analysis before.  The test is a real
    file created and removed (permission bits say nothing of a read-only disk, nor to root)."""
    try:
        with tempfile.TemporaryFile(dir=parent, prefix=".~stratpd-check"):
            pass
    except OSError as exc:
        raise _UserError(
            f'cannot write "{out}": folder "{parent}" takes no new file '
            f"({exc.strerror or exc}); choose another folder"
        ) from exc


def _write_atomic(path: Path, write: Callable[[Path], None], force: bool) -> None:
    """Write via a temporary file in the same folder, so a failure never leaves half a file.

    Without ``force`` the final name is created atomically (a hard link, which fails if the
    name exists), so of two runs writing the same file at once one reports "already
    exists" instead of silently replacing the other's answer.  Errors name ``path``, the
    user's file, never the hidden temporary.
    """
    if path.exists() and not force:  # created while we were computing
        raise _UserError(f'"{path}" already exists; add --force to overwrite it')
    # Not tempfile.mkstemp: its 0600 mode would survive the rename and hide the report from
    # colleagues; the writers create the file with the usual permissions instead.  A short
    # name, so an output named near the file-name length limit still has a writable temporary.
    tmp = path.with_name(f".~{secrets.token_hex(6)}.tmp{path.suffix[:8]}")
    try:
        try:
            write(tmp)
            if force:
                os.replace(tmp, path)
            else:
                _publish_new(tmp, path)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        except StratPDInputError as exc:
            raise StratPDInputError(str(exc).replace(str(tmp), str(path))) from exc
    finally:
        tmp.unlink(missing_ok=True)


def _publish_new(tmp: Path, path: Path) -> None:
    """Give ``tmp`` the name ``path`` only if nothing has that name (atomic check and create)."""
    try:
        os.link(tmp, path)
        return
    except FileExistsError:
        raise _UserError(f'"{path}" already exists; add --force to overwrite it') from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EOPNOTSUPP):
            raise
    # No hard links here (FAT, some network shares): reserve the name exclusively instead.
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
    except FileExistsError:
        raise _UserError(f'"{path}" already exists; add --force to overwrite it') from None
    os.replace(tmp, path)


def _csv_writer(table: pd.DataFrame, source: dict[str, Any] | None) -> Callable[[Path], None]:
    # Answer in the dialect of the input, so a ";"/decimal-comma export from a German
    # LibreOffice opens back in the same LibreOffice without an import dialog fight.
    sep = source.get("delimiter", ",") if source else ","
    dec = source.get("decimal", ".") if source else "."
    if sep == "," and dec == ",":
        sep = ";"

    def write(path: Path) -> None:
        # BOM: Excel on Windows needs it to read UTF-8 (accents in names); LibreOffice accepts it.
        # 15 significant digits, as a spreadsheet keeps them: 0.3, not 0.30000000000000004.
        # CRLF rows (RFC 4180): with "\n" alone the csv module leaves a cell holding a bare
        # "\r" unquoted, and that "a\rb" opens as two rows.
        inert_table(table).to_csv(path, index=False, sep=sep, decimal=dec, encoding="utf-8-sig",
                                  float_format="%.15g", lineterminator="\r\n")

    return write


def _figure_writer(make_figure: Callable[[], Any], suffix: str = ".png"
                   ) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        from .presentation.charts import figure_bytes

        path.write_bytes(figure_bytes(make_figure(), suffix))

    return write


def _named(args: argparse.Namespace) -> list[str]:
    """The columns the command names (target, features, --by), as typed."""
    named: list[str] = []
    for option in ("target", "feature", "features", "by"):
        value = getattr(args, option, None)
        values = [value] if isinstance(value, str) else value or []
        named += [v for v in values if isinstance(v, str)]
    return named


def _read(args: argparse.Namespace) -> pd.DataFrame:
    name = "standard input" if args.input == STDIN else Path(args.input).name
    _step(f"reading {name}")
    if args.input != STDIN:
        return read_table(args.input, sheet=args.sheet, decimal=args.decimal,
                          encoding=args.encoding, named=_named(args))
    if sys.stdin is None:  # started with standard input closed (0<&-)
        raise _UserError("standard input is closed; give the table's file name instead of -, "
                         "or pipe the table in (... | stratpd-xl ... -)")
    with tempfile.TemporaryDirectory(prefix="stratpd-") as folder:
        # Copied to a file in pieces, at most one byte past the files' size limit (a pipe
        # that never ends must not fill the disk), named after what it holds so the
        # readers' checks and messages apply as to any file.
        stream = sys.stdin.buffer
        head = stream.read(8)
        suffix = (".xlsx" if head.startswith(b"PK\x03\x04")
                  else ".xls" if head.startswith(b"\xd0\xcf\x11\xe0")
                  else ".parquet" if head.startswith(b"PAR1") else ".csv")
        path = Path(folder) / f"stdin{suffix}"
        size = len(head)
        try:
            with open(path, "wb") as fh:
                fh.write(head)
                while size <= MAX_FILE_BYTES and (
                        piece := stream.read(min(1 << 20, MAX_FILE_BYTES + 1 - size))):
                    fh.write(piece)
                    size += len(piece)
        except OSError as exc:
            raise _UserError("cannot keep standard input in the temporary folder "
                             f"{Path(folder).parent} "
                             f"({exc.strerror or exc}); save the table as a file and give "
                             "its name instead of -") from exc
        if size > MAX_FILE_BYTES:
            raise _UserError(f"standard input is over the {MAX_FILE_BYTES // 1024**2} MB limit "
                             "for input files; keep only the rows and columns to analyse")
        frame = read_table(path, sheet=args.sheet, decimal=args.decimal, encoding=args.encoding,
                           named=_named(args))
    if frame.attrs.get("source"):
        frame.attrs["source"] = {**frame.attrs["source"], "path": STDIN}
    return frame


#: The progress of the command being run (None outside a command, e.g. in tests of helpers).
_progress: CommandProgress | None = None


def _step(name: str) -> None:
    if _progress is not None:
        _progress.step(name)


def _say(text: str) -> None:
    """A line on stderr for the user (quiet-aware, above the progress line)."""
    text = _visible(text)
    if _progress is not None:
        _progress.note(text)
    else:
        sys.stderr.write(text + "\n")


def _out(text: str) -> None:
    """A line of the answer on stdout ("wrote x.xlsx"), not glued to the progress line.

    One line: a file name holding a line break (``-o $'a\\nb.csv'``) or a control
    character shows it as ``\\x0a``, not as two lines or a terminal command."""
    text = _visible(text).replace("\n", "\\x0a")
    if _progress is not None:
        _progress.out(text)
    else:
        print(text)


def _note(text: str) -> None:
    _say(f"note: {text}")


def _notes(notes: Sequence[str], where: str) -> None:
    """The notes that matter most (they come ranked), and one line saying where the rest are:
    a wide table's dozens of notes would bury the answer."""
    from .presentation.notes import shown

    for note in shown(notes, where):
        _note(note)


def _print_table(table: pd.DataFrame) -> None:
    """The table for a person (:func:`stratpd_xl.presentation.tables.text_table`) on stdout;
    ``--json`` and ``.csv`` keep every digit for scripts."""
    from .presentation.tables import text_table

    sys.stdout.write(_visible(text_table(table)) + "\n")


def _conclude(found: Sequence[Any], target: str) -> None:
    """The conclusion in words, one sentence per finding, as the command's last lines.

    On stderr like the notes, so a printed table on stdout stays readable by scripts.
    """
    from .presentation.words import sentence

    sys.stdout.flush()
    for f in found:
        _say(f if isinstance(f, str) else sentence(f, target))


def _json_value(value: Any) -> Any:
    """``value`` as JSON can hold it: numpy scalars as numbers, NaN as null, dates as text."""
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, pd.Timestamp | datetime.datetime | datetime.date):
        return value.isoformat()
    return str(value)


def _print_json(table: pd.DataFrame, notes: Sequence[str], found: Sequence[Any],
                target: str) -> None:
    """The result for scripts: its rows (documented column names) and the headers people
    read for them, attributes, notes and the conclusion's sentences, as one JSON object on
    stdout."""
    from .presentation.notes import notes_table
    from .presentation.words import sentence

    # 15 decimals, pandas' most: small effects (2e-11) keep their digits, float noise goes.
    rows = json.loads(table.to_json(orient="records", date_format="iso", date_unit="s",
                                    double_precision=15))
    from .presentation.tables import curve_headers

    columns = [str(c) for c in table.columns]
    # What each column is called in the workbooks and formulas, e.g. "pd_low" ->
    # "low (95% band per point)", so a script can label its own output the same way.
    people = ({c: c for c in columns} if "impact" in columns else
              {c: curve_headers(table).get(c, c) for c in columns})
    payload = {
        "columns": columns,
        "headers": people,
        "rows": rows,
        "attrs": _json_value(dict(table.attrs)),
        "notes": list(notes),
        # The same notes as data: what each is about, for a script to sort or filter.
        "note_details": notes_table(notes).to_dict(orient="records"),
        "conclusion": [f if isinstance(f, str) else sentence(f, target) for f in found],
    }
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=1) + "\n")


def _input_path(args: argparse.Namespace) -> Path | None:
    return None if args.input == STDIN else Path(args.input)


def _classes_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--classes",
        metavar="A,B",
        help=f"read the target as classes (text, or whole-number codes; 2 to 20) and {what}: "
        "'all', or the classes to show, separated by commas",
    )


def _classes_of(text: str | None) -> Any:
    """``--classes``: None, True for "all", else the classes named, separated by commas."""
    if text is None:
        return None
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names or [n.lower() for n in names] == ["all"]:
        return True
    return names


def _cmd_curve(args: argparse.Namespace) -> int:
    outs = _check_outputs(args.out, _CURVE_FORMATS, args.force, _input_path(args))
    classes = _classes_of(getattr(args, "classes", None))
    if classes is not None and getattr(args, "by", None) is not None:
        raise StratPDInputError(
            "--classes and --by both draw several curves; give one of them")
    scaled = _scaled_input(args)
    if scaled is not None:
        _step("analysing")
        result = workflow.scaled_curve(
            scaled, args.target, args.feature, settings=_settings(args),
            categorical=args.categorical or (), how_to_expand="--all-points",
            positive=args.positive, quiet=args.quiet, out=_ChunkLines(),
            strata_rows=args.strata_rows, classes=classes,
        )
        source = {"path": str(args.input), "format": "parquet or text, read in chunks"}
    else:
        frame = _read(args)
        source = frame.attrs.get("source")
        _step("analysing")
        result = workflow.curve(
            frame, args.target, args.feature, settings=_settings(args),
            categorical=args.categorical or (), orders=dict(args.order or ()),
            how_to_keep=KEEP_HINT, how_to_expand="--all-points", positive=args.positive,
            classes=classes,
        )
    a = result.curve.attrs
    used, given = a.get("n_used"), a.get("n_rows", 0 if scaled is not None else len(frame))
    used_text = (f"{used:,} of {counted(given)}" if isinstance(used, int)
                 else counted(given))
    _notes(result.notes, "every one is in the output of --json")
    _say(f"{a.get('method', 'StratPD')}: {result.target} on {result.feature}, "
         f"{used_text} used")
    found = [result.finding] if result.finding is not None else []
    grouped = getattr(args, "by", None) is not None
    _deliver(
        result.curve, outs, source, args.force,
        _lazy(".presentation.charts", "curve_figure"),
        partial(_lazy(".presentation.report", "write_pairs_workbook"), "curve") if grouped
        else _lazy(".presentation.report", "write_curve_workbook"),
        json_of=(result.notes, found, result.target) if args.json else None,
    )
    _conclude(found, result.target)
    return 0


def _cmd_interactions(args: argparse.Namespace) -> int:
    outs = _check_outputs(args.out, _CURVE_FORMATS, args.force, _input_path(args))
    frame = _read(args)
    # Pairs grow as the square of --max-features: say so up front, on a terminal or not
    # (100 features are 4,950 pairs, unfinished after 400 s on 300 columns).
    paired = min(len(args.features or frame.columns) - (0 if args.features else 1),
                 _settings(args).max_features)
    pairs = paired * (paired - 1) // 2
    default = PARAMETERS["max_features"].default
    if pairs > default * (default - 1) // 2:
        ratio = pairs / (default * (default - 1) / 2)
        _note(f"pairing up to {paired} features: up to {pairs:,} pairs, "
              f"{ratio:.{1 if ratio < 10 else 0}f} times the "
              f"{default * (default - 1) // 2} of --max-features {default}, and about as many "
              "times as long")
    _step("analysing")
    result = workflow.interactions(
        frame, args.target, args.features or None, settings=_settings(args),
        categorical=args.categorical or (), how_to_keep=KEEP_HINT,
        progress=_analysis_progress(), positive=args.positive, top=1,
    )
    _notes(result.notes, "every one is in the output of --json")
    _deliver(
        result.ranking, outs, frame.attrs.get("source"), args.force,
        _lazy(".presentation.pairs", "interactions_figure"),
        partial(_lazy(".presentation.report", "write_pairs_workbook"), "interactions"),
        json_of=((result.notes, result.findings, result.target)
                 if getattr(args, "json", False) else None),
    )
    _conclude(result.findings, result.target)
    return 0


def _cmd_surface(args: argparse.Namespace) -> int:
    if len(args.features) != 2:
        raise _UserError(
            f"surface needs exactly two features, got {len(args.features)}; give -f A -f B"
        )
    outs = _check_outputs(args.out, _CURVE_FORMATS, args.force, _input_path(args))
    frame = _read(args)
    _step("analysing")
    result = workflow.surface(
        frame, args.target, *args.features, settings=_settings(args),
        categorical=args.categorical or (), how_to_keep=KEEP_HINT, positive=args.positive,
    )
    _notes(result.notes, "every one is in the output of --json")
    _deliver(
        result.surface, outs, frame.attrs.get("source"), args.force,
        _lazy(".presentation.pairs", "surface_figure"),
        partial(_lazy(".presentation.report", "write_pairs_workbook"), "surface"),
        json_of=(result.notes, [], result.target) if args.json else None,
    )
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    outs = _check_outputs(args.out, _COMPARE_FORMATS, args.force, _input_path(args))
    if args.ice and len(args.features) > 1:
        raise _UserError("--ice draws curves of one feature; give one --feature with --ice")
    ice_outs = [o.with_name(o.stem + "-ice.csv") for o in outs
                if o.suffix.lower() == ".csv"] if args.ice else []
    _check_outputs(ice_outs, (".csv",), args.force, _input_path(args))
    # -o x.csv -o x-ice.csv: the ICE table of x.csv goes to x-ice.csv; said before the fit,
    # not found when writing it.
    given = {o.resolve(): o for o in outs}
    tables = [o for o in outs if o.suffix.lower() == ".csv"] if args.ice else []
    for ice_out, out in zip(ice_outs, tables, strict=True):
        if ice_out.resolve() in given:
            raise _UserError(f'"{given[ice_out.resolve()]}" is where --ice writes the ICE '
                             f'table of "{out}"; give one of them another name')
    frame = _read(args)
    _step("fitting a model")
    feature: Any = args.features if len(args.features) > 1 else args.features[0]
    result = workflow.compare(
        frame, args.target, feature, settings=_settings(args),
        categorical=args.categorical or (), orders=dict(args.order or ()),
        how_to_keep=KEEP_HINT, positive=args.positive, ice=args.ice,
        classes=_classes_of(args.classes),
    )
    from .presentation import compare as words

    _notes(result.notes, "every one is in the output of --json")
    for line in words.sentences(result.table)[:2]:
        _say(line)
    source = frame.attrs.get("source")
    if args.json:
        _print_json(result.table, result.notes, [], result.target)
    elif not outs:
        _print_table(result.table)
    for out in outs:
        suffix = out.suffix.lower()
        if suffix == ".csv":
            writer = _csv_writer(result.table, source)
        elif suffix in _FIGURES:
            writer = _figure_writer(lambda: words.result_figure(result.table, result.ice),
                                    suffix)
        else:
            writer = partial(words.write_compare_workbook, result.table, ice=result.ice)
        _write_atomic(out, writer, args.force)
        if not args.json:
            _out(f"wrote {out}")
    for out in ice_outs:
        _write_atomic(out, _csv_writer(result.ice, source), args.force)
        _out(f"wrote {out}")
    return 0


def _lazy(module: str, name: str) -> Callable[..., Any]:
    """``module.name``, imported on the first call.

    matplotlib and xlsxwriter take about a second to import; a ``.csv`` answer needs neither.
    """

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module, __package__), name)(*args, **kwargs)

    return call


def _deliver(
    table: pd.DataFrame,
    outs: Sequence[Path],
    source: dict[str, Any] | None,
    force: bool,
    figure: Callable[[pd.DataFrame], Any],
    workbook: Callable[[pd.DataFrame, Path], None],
    json_of: tuple[Sequence[str], Sequence[Any], str] | None = None,
) -> None:
    """Print ``table`` (or its JSON), and write it to each output in the format its suffix
    names.

    The printout, the JSON and ``.csv`` keep the result's documented column names
    (:mod:`stratpd_xl.schema`), so scripts can read them; workbooks label them for people.
    """
    if json_of is not None:
        _print_json(table, *json_of)
    elif not outs:
        _print_table(table)
    if outs:
        _step("writing")
    for out in outs:
        suffix = out.suffix.lower()
        if suffix == ".csv":
            writer = _csv_writer(table, source)
        elif suffix in _FIGURES:
            writer = _figure_writer(lambda: figure(table), suffix)
        else:
            writer = partial(workbook, table)
        _write_atomic(out, writer, force)
        if json_of is None:
            _out(f"wrote {out}")


def _analysis_progress() -> Callable[[int, int, str], None]:
    """The per-feature progress of an analysis: the command's line, or a bar of its own."""
    return _progress.analysis() if _progress is not None else ProgressBar()


def _report_progress() -> Callable[[int, int, str], None]:
    """``write_report``'s callback: the sheet being written while the pictures are drawn,
    then the "writing" step once they are all drawn and the file is compressed and saved."""
    from .presentation.report import SAVING

    def call(done: int, total: int, name: str) -> None:
        if _progress is None or not name:
            return
        if name == SAVING:
            _step("writing")
        else:
            label = name if len(name) <= 30 else name[:27] + "..."
            _progress.detail(f"sheet {done + 1}/{total} {label}")

    return call


def _analyse(
    frame: pd.DataFrame, target: str, args: argparse.Namespace, where: str
) -> workflow.AnalysisResult:
    _step("analysing")
    result = workflow.analysis(
        frame, target, args.features if getattr(args, "features", None) else None,
        settings=_settings(args), categorical=getattr(args, "categorical", None) or (),
        orders=dict(getattr(args, "order", None) or ()), how_to_keep=KEEP_HINT,
        progress=_analysis_progress(),
        positive=getattr(args, "positive", None),
        classes=_classes_of(getattr(args, "classes", None)),
    )
    _notes(result.notes, where)
    return result


def _cmd_impact(args: argparse.Namespace) -> int:
    outs = _check_outputs(args.out, _CURVE_FORMATS, args.force, _input_path(args))
    scaled = _scaled_input(args)
    where = "every one is in the output of --json and on the Notes sheet of a report"
    if scaled is not None:
        _step("analysing")
        result = workflow.scaled_analysis(
            scaled, args.target, args.features or None, settings=_settings(args),
            positive=args.positive, quiet=args.quiet, out=_ChunkLines(),
            strata_rows=args.strata_rows, classes=_classes_of(args.classes),
        )
        _notes(result.notes, where)
        source = {"path": str(args.input), "format": "parquet or text, read in chunks"}
    else:
        frame = _read(args)
        result = _analyse(frame, args.target, args, where)
        source = frame.attrs.get("source")
    _deliver(
        result.impact, outs, source, args.force,
        _lazy(".presentation.charts", "impact_figure"),
        _lazy(".presentation.report", "write_impact_workbook"),
        json_of=(result.notes, result.findings, result.target) if args.json else None,
    )
    _conclude(result.findings, result.target)
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from .presentation.report import write_report

    (out,) = _check_outputs([args.out], _REPORT_FORMATS, args.force, _input_path(args))
    if args.classes is not None and args.interactions:
        raise StratPDInputError(
            "--interactions pairs the features of one target, not yet of its classes: leave "
            "out --interactions, or --classes")
    # Started before the read, so the helper's imports overlap it; see presentation.drawing.
    with PictureDrawer(helper=True) as drawer:
        frame = _read(args)
        result = _analyse(frame, args.target, args, f"every one is on the Notes sheet of {out}")
        pairs = None
        if args.interactions:
            _step("pairing")
            pairs = workflow.interactions(
                frame, args.target, args.features or None, settings=_settings(args),
                categorical=args.categorical or (), how_to_keep=KEEP_HINT,
                progress=_analysis_progress(), positive=args.positive,
            )
            _notes(pairs.notes, "every one is in the output of --json")
        check = None
        if args.compare:
            _step("fitting a model")
            bar = _analysis_progress()
            check = workflow.model_check(
                frame, args.target, result, settings=_settings(args),
                categorical=args.categorical or (), orders=dict(args.order or ()),
                how_to_keep=KEEP_HINT, positive=args.positive,
                # The bar while the model is fitted and each curve compared, without the
                # analysis's closing "analysed N features" line.
                progress=lambda done, total, label: bar(done, total, label) if done < total
                else None,
            )
            _notes(check.attrs.get("notes") or [], "every one is on the Model check sheet")
            _say(f"model check: {check.attrs['model_sentence']}")
            for row in check.itertuples(index=False):
                _say(f"  {row.feature}: agreement {row.agreement:.2f}, {row.verdict}")
        _step("drawing")
        _write_atomic(out, lambda p: write_report(result, p, drawer=drawer,
                                                  interactions=pairs, model_check=check,
                                                  progress=_report_progress()),
                      args.force)
    if args.json:  # the ranking, its notes and the conclusion, as impact --json prints them
        _print_json(result.impact, result.notes, result.findings, result.target)
    else:
        _out(f"wrote {out}")
    _conclude(result.findings, result.target)
    if pairs is not None:
        _conclude(pairs.findings, pairs.target)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from .presentation.charts import impact_figure
    from .presentation.report import write_report

    out_dir: Path = args.out
    if out_dir.exists() and not out_dir.is_dir():
        raise _UserError(f'"{out_dir}" is a file; give a folder for the demo outputs')
    out_dir.mkdir(parents=True, exist_ok=True)
    _step("reading the diamonds")
    frame = demo_data()
    _say(f"demo: what drives the {DEMO_TARGET} of {len(frame):,} diamonds "
         f"({_settings(args).n_trials} trials for the band)")
    frame = frame.drop(columns=list(DEMO_LEFT_OUT))
    # A note of the data, so the report's summary lists it with the others.
    frame.attrs["notes"] = [*frame.attrs.get("notes", []), (
        "left out " + ", ".join(f'"{c}" ({m})' for c, m in DEMO_LEFT_OUT.items())
        + ": the dimensions nearly determine carat, so they cannot vary with carat held fixed"
    )]
    with PictureDrawer(helper=True) as drawer:
        result = _analyse(frame, DEMO_TARGET, args,
                          "every one is on the Notes sheet of the report")
        _step("drawing")
        report = out_dir / "diamonds-report.xlsx"
        picture = out_dir / "diamonds-impact.png"
        # The demo folder is our own output, so replacing earlier demo files is expected.
        _write_atomic(report, lambda p: write_report(result, p, drawer=drawer,
                                                     progress=_report_progress()),
                      force=True)
    _write_atomic(picture, _figure_writer(lambda: impact_figure(result.impact)), force=True)
    data = out_dir / DEMO_FILE
    # The data as analysed, without the dimensions left out: the README's commands on it
    # then give the demo's numbers (with x, y and z, carat's effect is 9,300, not 10,740).
    _write_atomic(data, lambda p: p.write_bytes(demo_csv_bytes(without=DEMO_LEFT_OUT)),
                  force=True)
    top = result.impact.iloc[0]
    _out(f"top driver of {DEMO_TARGET}: {top['feature']} ({top['share']:.0%} of total impact)")
    _out(f"wrote {report.resolve()}")
    _out(f"wrote {picture.resolve()}")
    _out(f"wrote {data.resolve()} (the data as analysed, without "
         + ", ".join(DEMO_LEFT_OUT) + ": try the other commands on it)")
    _conclude(result.findings, result.target)
    return 0


def _cmd_warm_up(args: argparse.Namespace) -> int:
    from . import _backend

    if not _backend.numba_in_use():
        print("nothing to compile: the engine runs on numpy here (numba is not in use)")
        return 0
    started = time.perf_counter()
    workflow.warm_up()
    print(f"the engine is compiled and cached ({time.perf_counter() - started:.0f} s); the "
          "next analysis loads it")
    return 0


_COMMANDS = {
    "curve": _cmd_curve, "compare": _cmd_compare, "impact": _cmd_impact,
    "interactions": _cmd_interactions, "surface": _cmd_surface, "report": _cmd_report,
    "demo": _cmd_demo,
    "libreoffice": _cmd_libreoffice, "warm-up": _cmd_warm_up,
}


# --------------------------------------------------------------------------- entry point


class _Output:
    """``sys.stdout`` while a command runs: a write that fails (``> /dev/full``, a pipe closed
    early) is one sentence naming standard output, not a bare "No space left on device"."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    @staticmethod
    def _failed(exc: OSError) -> _UserError:
        return _UserError(f"cannot write the answer to standard output ({exc.strerror or exc}); "
                          "send it to a file (> answer.txt, or -o) on a disk with room")

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise self._failed(exc) from exc

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise self._failed(exc) from exc

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _run_command(args: argparse.Namespace) -> int:
    """Run the command; library warnings become notes (ours) or are dropped (the rest).

    A Python warning on stderr ("UserWarning: ... fig.savefig(...)") means nothing to a
    spreadsheet user: the places where useful ones arise re-issue them as
    :class:`StratPDNote` in plain words.  ``STRATPD_XL_DEBUG=1`` shows the others.
    """
    global _progress
    ok = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if args.command != "libreoffice":
            _progress = CommandProgress(quiet=getattr(args, "quiet", False))
        try:
            code = _COMMANDS[args.command](args)
            ok = True
            return code
        finally:
            shown: set[str] = set()
            for w in caught:
                text = str(w.message)
                if issubclass(w.category, StratPDNote) and text not in shown:
                    shown.add(text)
                    _note(text)
                elif os.environ.get("STRATPD_XL_DEBUG"):
                    sys.stderr.write(f"{w.category.__name__}: {text}\n")
            if _progress is not None:
                _progress.close(done=ok)
                _progress = None
            while _clients:  # --dask-scheduler's client: the cluster itself runs on
                _clients.pop().close()


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``stratpd-xl`` with ``argv`` (default ``sys.argv[1:]``) and return the exit code.

    Parameters
    ----------
    argv
        The arguments after the program name.

    Returns
    -------
    int
        0 on success, 2 on a user error (message on stderr), 1 on an internal error,
        130 when interrupted.  Set ``STRATPD_XL_DEBUG=1`` to see tracebacks of internal errors.
    """
    if sys.stdout is None:  # started with standard output closed (1>&-)
        if sys.stderr is not None:
            sys.stderr.write(f"{PROG}: standard output is closed; send it to a file or to "
                             f"{os.devnull} (> {os.devnull}) instead of closing it\n")
        return 2
    if sys.stderr is None:  # (2>&-): the messages have nowhere to go but nowhere
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - the process's own stderr
    for stream in (sys.stdout, sys.stderr):
        # A Windows console (cp1252, cp850) cannot show every column name; print "?" for
        # those characters rather than failing after the work is done.
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    from . import _backend  # numba itself is imported only when a kernel first runs on it

    stdout, sys.stdout = sys.stdout, _Output(sys.stdout)
    try:
        with _backend.one_shot():
            return _run_command(args)
    except (StratPDInputError, _UserError) as exc:
        sys.stderr.write(f"{PROG}: {_visible(' '.join(str(exc).split()))}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(f"\n{PROG}: cancelled\n")
        return 130
    except OSError as exc:
        # Disk full, permission denied, file locked by Excel: the user can fix these.
        where = f' "{exc.filename}"' if exc.filename else ""
        sys.stderr.write(_visible(f"{PROG}: cannot access{where}: {exc.strerror or exc}") + "\n")
        return 2
    except Exception as exc:  # noqa: BLE001 - a bug: one line, traceback only on request
        if is_interrupt(exc):  # Ctrl+C inside compiled code arrives as a SystemError
            sys.stderr.write(f"\n{PROG}: cancelled\n")
            return 130
        if os.environ.get("STRATPD_XL_DEBUG"):
            raise
        sys.stderr.write(_visible(error_text(exc, prefix=PROG)) + "\n")
        return 1
    finally:
        sys.stdout = stdout


if __name__ == "__main__":  # pragma: no cover
    from .errors import exit_process

    exit_process(main())
