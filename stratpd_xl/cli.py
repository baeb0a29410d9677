"""The ``stratpd-xl`` command: partial dependence from .csv/.xlsx/.ods files, without Excel.

Sub-commands: ``curve`` (one feature), ``impact`` (ranking of all features), ``report`` (a
workbook with everything) and ``demo`` (a report for the bundled diamonds data).

Exit codes: 0 success, 2 bad input (one sentence on stderr, no traceback), 1 internal error,
130 interrupted.  Outputs are never overwritten without ``--force``.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any, NoReturn, TextIO

import pandas as pd

from . import __version__
from .errors import StratPDInputError
from .files import read_table
from .sheet import check_rows, error_text, resolve_column, usable_table

__all__ = ["ProgressBar", "build_parser", "main"]

PROG = "stratpd-xl"
DEMO_TARGET = "price"
# Quality grades of the diamonds data, worst to best, so charts show them in a sensible order.
DEMO_ORDERS = {
    "cut": ["Fair", "Good", "Very Good", "Premium", "Ideal"],
    "color": ["J", "I", "H", "G", "F", "E", "D"],
    "clarity": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"],
}
DEMO_TRIALS = 10
DEMO_SEED = 1
# The stone's length, width and depth in mm are, together, almost a function of carat: no
# stratum can hold carat fixed while one of them varies, so their "all else equal" curves are
# noise amplified (and they blur carat's own curve).  The demo asks the analyst's question:
# what do weight and the three grades do to the price?
DEMO_LEFT_OUT = {"x": "length in mm", "y": "width in mm", "z": "depth in mm"}

_CURVE_FORMATS = (".csv", ".xlsx", ".png")
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

    def __init__(self, stream: TextIO | None = None, *, width: int = 28) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.start = time.monotonic()
        self.isatty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._drawn = False

    def __call__(self, done: int, total: int, feature: str) -> None:
        if done >= total:
            self.finish(total)
            return
        if not self.isatty:
            return
        filled = int(self.width * done / total) if total else self.width
        bar = "#" * filled + "-" * (self.width - filled)
        label = feature if len(feature) <= 30 else feature[:27] + "..."
        # \r and a clear-to-end-of-line redraw in place; no dependency on tqdm.
        self.stream.write(f"\r[{bar}] {done}/{total} {label}\x1b[K")
        self.stream.flush()
        self._drawn = True

    def finish(self, total: int) -> None:
        """Write the final line: how many features and how long it took."""
        elapsed = time.monotonic() - self.start
        prefix = "\r" if self._drawn else ""
        line = f"analysed {total} feature{'s' if total != 1 else ''} in {elapsed:.1f} s"
        self.stream.write(f"{prefix}{line}\x1b[K\n" if self._drawn else f"{line}\n")
        self.stream.flush()
        self._drawn = False


# --------------------------------------------------------------------------- arguments


def _whole_number(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``minimum``, else one sentence."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got '{text}'") from None
        if value < minimum:
            least = "0 or a positive number" if minimum == 0 else f"a number of at least {minimum}"
            raise argparse.ArgumentTypeError(f"expected {least}, got {value}")
        return value

    return parse


_positive_int = _whole_number(1)
_seed = _whole_number(0)


def _decimal(text: str) -> str:
    if text not in (".", ","):
        raise argparse.ArgumentTypeError(f"use '.' or ',', not '{text}'")
    return text


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``stratpd-xl`` (exposed so docs and tests can inspect it)."""
    engine = _Parser(add_help=False)
    g = engine.add_argument_group("StratPD parameters")
    g.add_argument(
        "--min-samples-leaf",
        type=_positive_int,
        default=10,
        metavar="N",
        help="smallest group of similar rows (default 10); larger = smoother but coarser",
    )
    g.add_argument(
        "--min-slopes-per-x",
        type=_positive_int,
        default=5,
        metavar="N",
        help="drop curve points backed by fewer slopes (default 5; numeric features only)",
    )
    g.add_argument(
        "--trials",
        type=_positive_int,
        default=None,
        metavar="N",
        help="bootstrap trials (default 1; demo 10); more than 1 adds a 95%% band "
        "(pd_low, pd_high)",
    )
    g.add_argument(
        "--seed",
        type=_seed,
        default=None,
        metavar="N",
        help="seed, for repeatable results (demo: 1)",
    )

    reading = _Parser(add_help=False)
    r = reading.add_argument_group("reading the input")
    r.add_argument("input", metavar="INPUT", help="a .csv, .txt, .tsv, .xlsx or .ods file")
    r.add_argument(
        "--sheet", metavar="NAME", help="worksheet of an .xlsx/.ods file (default: first)"
    )
    r.add_argument(
        "--decimal",
        type=_decimal,
        metavar="SEP",
        help="decimal separator in a text file, '.' or ',' (default: detected)",
    )
    r.add_argument("--encoding", metavar="NAME", help="text file encoding (default: detected)")
    r.add_argument(
        "--categorical",
        action="append",
        metavar="COL",
        help="treat this column of numbers as categories (codes such as store or month "
        "numbers); may repeat",
    )

    writing = _Parser(add_help=False)
    writing.add_argument("--force", action="store_true", help="overwrite existing output files")

    parser = _Parser(
        prog=PROG,
        description="Model-free partial dependence (StratPD, Parr & Wilson 2020) for tables "
        "in .csv, .xlsx and .ods files.",
        epilog="example: stratpd-xl curve houses.csv -t price -f rooms --out rooms.png",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser(
        "curve",
        parents=[reading, engine, writing],
        help="partial dependence of the target on one feature",
        description="How the target moves with one feature, all else equal. Numbers and dates "
        "give a curve (StratPD), text and TRUE/FALSE columns one effect per category "
        "(CatStratPD).",
    )
    p.add_argument("--target", "-t", required=True, help="column to explain (numbers)")
    p.add_argument("--feature", "-f", required=True, help="column whose effect you want")
    p.add_argument(
        "--out",
        "-o",
        action="append",
        type=Path,
        metavar="FILE",
        help="write .csv (table), .xlsx (table and chart) or .png (chart); may repeat; "
        "default: print the table",
    )

    p = sub.add_parser(
        "impact",
        parents=[reading, engine, writing],
        help="rank the features by how much each alone moves the target",
        description="Rank features by impact: the average distance of each feature's partial "
        "dependence from its mean, in target units.",
    )
    p.add_argument("--target", "-t", required=True, help="column to explain (numbers)")
    _features_option(p)
    p.add_argument(
        "--out",
        "-o",
        action="append",
        type=Path,
        metavar="FILE",
        help="write .csv, .xlsx or .png; may repeat; default: print the table",
    )

    p = sub.add_parser(
        "report",
        parents=[reading, engine, writing],
        help="a workbook with the impact ranking and one sheet per feature",
        description="Write an .xlsx workbook: a summary sheet with the impact ranking and a "
        "sheet with the curve, chart and picture for every feature.",
    )
    p.add_argument("--target", "-t", required=True, help="column to explain (numbers)")
    _features_option(p)
    p.add_argument(
        "--out", "-o", required=True, type=Path, metavar="FILE.xlsx", help="the workbook"
    )

    p = sub.add_parser(
        "demo",
        parents=[engine],
        help="write a report for the bundled diamonds data (no arguments needed)",
        description="Analyse the price of 53,940 diamonds (bundled data, MIT licence) and "
        "write a report workbook and an impact chart into a folder.",
    )
    p.add_argument(
        "--out",
        "-o",
        type=Path,
        default=Path("stratpd-demo"),
        metavar="DIR",
        help="folder for the demo outputs (default: ./stratpd-demo; its files are replaced)",
    )
    return parser


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


def _engine_kw(args: argparse.Namespace) -> dict[str, Any]:
    # The demo shows a band and the same numbers every time unless asked otherwise.  (Not
    # set_defaults on the demo parser: parent-parser actions are shared, so that would
    # change the defaults of every command.)
    demo = args.command == "demo"
    return {
        "min_samples_leaf": args.min_samples_leaf,
        "min_slopes_per_x": args.min_slopes_per_x,
        "n_trials": args.trials or (DEMO_TRIALS if demo else 1),
        "random_state": args.seed if args.seed is not None or not demo else DEMO_SEED,
    }


def _check_outputs(
    outs: Sequence[Path] | None, formats: Sequence[str], force: bool, input_path: Path | None
) -> list[Path]:
    """Fail before any work when an output cannot or must not be written."""
    checked: list[Path] = []
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
        if out.exists() and not force:
            raise _UserError(f'"{out}" already exists; add --force to overwrite it')
        if out in checked:
            raise _UserError(f'"{out}" is given twice as --out')
        checked.append(out)
    return checked


def _write_atomic(path: Path, write: Callable[[Path], None], force: bool) -> None:
    """Write via a temporary file in the same folder, so a failure never leaves half a file."""
    if path.exists() and not force:  # created while we were computing
        raise _UserError(f'"{path}" already exists; add --force to overwrite it')
    # Not tempfile.mkstemp: its 0600 mode would survive the rename and hide the report from
    # colleagues; the writers create the file with the usual permissions instead.
    tmp = path.with_name(f".{path.stem}.{os.getpid()}-{secrets.token_hex(4)}.tmp{path.suffix}")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _csv_writer(table: pd.DataFrame, source: dict[str, Any] | None) -> Callable[[Path], None]:
    # Answer in the dialect of the input, so a ";"/decimal-comma export from a German
    # LibreOffice opens back in the same LibreOffice without an import dialog fight.
    sep = source.get("delimiter", ",") if source else ","
    dec = source.get("decimal", ".") if source else "."
    if sep == "," and dec == ",":
        sep = ";"

    def write(path: Path) -> None:
        # BOM: Excel on Windows needs it to read UTF-8 (accents in names); LibreOffice accepts it.
        table.to_csv(path, index=False, sep=sep, decimal=dec, encoding="utf-8-sig")

    return write


def _png_writer(make_figure: Callable[[], Any]) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        from .charts import figure_png

        path.write_bytes(figure_png(make_figure()))

    return write


def _read(args: argparse.Namespace) -> tuple[pd.DataFrame, str]:
    frame = read_table(args.input, sheet=args.sheet, decimal=args.decimal, encoding=args.encoding)
    for note in frame.attrs.get("notes", []):
        _note(note)
    target = resolve_column(frame, args.target, role="target")
    for name in args.categorical or []:
        column = resolve_column(frame, name, role="categorical")
        if column == target:
            raise StratPDInputError(
                f'the target "{target}" must stay numeric; leave it out of --categorical'
            )
        # A pandas category column is categorical for the engine, both as the feature and
        # when it stratifies the others; numbers keep their numeric order as categories.
        frame[column] = frame[column].astype("category")
    return frame, target


def _note(text: str) -> None:
    sys.stderr.write(f"note: {text}\n")


def _print_table(table: pd.DataFrame) -> None:
    with pd.option_context("display.max_rows", None, "display.width", 200):
        sys.stdout.write(table.to_string(index=False, float_format=lambda v: f"{v:.6g}") + "\n")


def _cmd_curve(args: argparse.Namespace) -> int:
    import stratpd_xl as sx

    outs = _check_outputs(args.out, _CURVE_FORMATS, args.force, Path(args.input))
    frame, target = _read(args)
    source = frame.attrs.get("source")
    feature = resolve_column(frame, args.feature, role="feature")
    check_rows(frame, target, feature, min_samples_leaf=args.min_samples_leaf)
    frame, _ = _without_unusable(frame, target, [feature])
    result = sx.partial_dependence(frame, target, feature, **_engine_kw(args))
    a = result.attrs
    used, given = a.get("n_used"), a.get("n_rows", len(frame))
    used_text = f"{used:,} of {given:,}" if isinstance(used, int) else f"{given:,}"
    sys.stderr.write(
        f"{a.get('method', 'StratPD')}: {target} on {feature}, {used_text} rows used\n"
    )
    for warning in a.get("warnings") or []:
        _note(warning)
    from .charts import curve_figure
    from .report import write_curve_workbook

    _deliver(result, outs, source, args.force, curve_figure, write_curve_workbook)
    return 0


def _deliver(
    table: pd.DataFrame,
    outs: Sequence[Path],
    source: dict[str, Any] | None,
    force: bool,
    figure: Callable[[pd.DataFrame], Any],
    workbook: Callable[[pd.DataFrame, Path], None],
) -> None:
    """Print ``table``, or write it to each output in the format its suffix names."""
    if not outs:
        _print_table(table)
    for out in outs:
        suffix = out.suffix.lower()
        if suffix == ".csv":
            writer = _csv_writer(table, source)
        elif suffix == ".png":
            writer = _png_writer(lambda: figure(table))
        else:
            writer = partial(workbook, table)
        _write_atomic(out, writer, force)
        print(f"wrote {out}")


def _features(frame: pd.DataFrame, names: Sequence[str] | None) -> list[str] | None:
    if not names:
        return None
    return [resolve_column(frame, n, role="feature") for n in names]


def _without_unusable(
    frame: pd.DataFrame, target: str, keep: Sequence[str]
) -> tuple[pd.DataFrame, list[str]]:
    """Drop identifier-like, empty and constant columns (unless named), with a note for each."""
    frame, usable, dropped = usable_table(frame, target, keep)
    for name, why in dropped.items():
        _note(f'left out "{name}": {why}')
    return frame, usable


def _analyse(
    frame: pd.DataFrame, target: str, features: list[str] | None, args: argparse.Namespace
) -> Any:
    import stratpd_xl as sx

    check_rows(frame, target, min_samples_leaf=args.min_samples_leaf)
    for f in features or []:
        if f == target:
            raise StratPDInputError(f'"{f}" is the target; leave it out of the features')
    frame, usable = _without_unusable(frame, target, features or [])
    if features is None:
        features = usable
        if not features:
            raise StratPDInputError(
                f'no column to analyse besides the target "{target}"; '
                "the table needs at least one other column with varying values"
            )
    analysis = sx.analyse(frame, target, features, progress=ProgressBar(), **_engine_kw(args))
    for feature, reason in analysis.skipped.items():
        _note(f'skipped "{feature}": {reason}')
    for curve in analysis.curves.values():
        for warning in curve.attrs.get("warnings") or []:
            _note(warning)
    if analysis.impact.empty:
        raise StratPDInputError(
            f'no feature gave a curve for "{target}"; see the notes above, '
            "or try a smaller --min-samples-leaf"
        )
    return analysis


def _cmd_impact(args: argparse.Namespace) -> int:
    outs = _check_outputs(args.out, _CURVE_FORMATS, args.force, Path(args.input))
    frame, target = _read(args)
    source = frame.attrs.get("source")
    analysis = _analyse(frame, target, _features(frame, args.features), args)
    from .charts import impact_figure
    from .report import write_impact_workbook

    _deliver(analysis.impact, outs, source, args.force, impact_figure, write_impact_workbook)
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from .report import write_report

    (out,) = _check_outputs([args.out], _REPORT_FORMATS, args.force, Path(args.input))
    frame, target = _read(args)
    analysis = _analyse(frame, target, _features(frame, args.features), args)
    _write_atomic(out, lambda p: write_report(analysis, p), args.force)
    print(f"wrote {out}")
    return 0


def demo_data() -> pd.DataFrame:
    """The bundled diamonds table (53,940 rows), read like any user file, grades ordered.

    Returns
    -------
    pandas.DataFrame
        Columns carat, cut, color, clarity, depth, table, price, x, y, z; ``cut``, ``color``
        and ``clarity`` are ordered categories from worst to best grade.
    """
    with resources.as_file(resources.files("stratpd_xl") / "data" / "diamonds.csv") as path:
        frame = read_table(path)
    for column, order in DEMO_ORDERS.items():
        frame[column] = pd.Categorical(frame[column], categories=order, ordered=True)
    return frame


def _cmd_demo(args: argparse.Namespace) -> int:
    from .charts import impact_figure
    from .report import write_report

    out_dir: Path = args.out
    if out_dir.exists() and not out_dir.is_dir():
        raise _UserError(f'"{out_dir}" is a file; give a folder for the demo outputs')
    out_dir.mkdir(parents=True, exist_ok=True)
    frame = demo_data()
    sys.stderr.write(
        f"demo: what drives the {DEMO_TARGET} of {len(frame):,} diamonds "
        f"({_engine_kw(args)['n_trials']} bootstrap trials)\n"
    )
    _note(
        "left out " + ", ".join(f'"{c}" ({m})' for c, m in DEMO_LEFT_OUT.items())
        + ": the dimensions nearly determine carat, so they cannot vary with carat held fixed"
    )
    frame = frame.drop(columns=list(DEMO_LEFT_OUT))
    analysis = _analyse(frame, DEMO_TARGET, None, args)
    report = out_dir / "diamonds-report.xlsx"
    picture = out_dir / "diamonds-impact.png"
    # The demo folder is our own output, so replacing earlier demo files is expected.
    _write_atomic(report, lambda p: write_report(analysis, p), force=True)
    _write_atomic(picture, _png_writer(lambda: impact_figure(analysis.impact)), force=True)
    top = analysis.impact.iloc[0]
    print(f"top driver of {DEMO_TARGET}: {top['feature']} ({top['share']:.0%} of total impact)")
    print(f"wrote {report.resolve()}")
    print(f"wrote {picture.resolve()}")
    return 0


_COMMANDS = {"curve": _cmd_curve, "impact": _cmd_impact, "report": _cmd_report, "demo": _cmd_demo}


# --------------------------------------------------------------------------- entry point


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
    for stream in (sys.stdout, sys.stderr):
        # A Windows console (cp1252, cp850) cannot show every column name; print "?" for
        # those characters rather than failing after the work is done.
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    try:
        return _COMMANDS[args.command](args)
    except (StratPDInputError, _UserError) as exc:
        sys.stderr.write(f"{PROG}: {' '.join(str(exc).split())}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(f"\n{PROG}: cancelled\n")
        return 130
    except OSError as exc:
        # Disk full, permission denied, file locked by Excel: the user can fix these.
        where = f' "{exc.filename}"' if exc.filename else ""
        sys.stderr.write(f"{PROG}: cannot access{where}: {exc.strerror or exc}\n")
        return 2
    except Exception as exc:  # noqa: BLE001 - a bug: one line, traceback only on request
        if os.environ.get("STRATPD_XL_DEBUG"):
            raise
        sys.stderr.write(error_text(exc, prefix=PROG) + "\n")
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
