"""Every hostile input of SECURITY.md run as a user would: exit code, seconds, peak memory
and the first line the command prints.

Usage::

    python benchmarks/bench_hostile.py [--only NAME,NAME] [--timeout 120]

Each case builds its input in a temporary folder and runs one command in a fresh process:
``stratpd-xl`` (``python -m stratpd_xl.cli``) or, for the Python API cases, a few lines of
Python that print the ``StratPDInputError`` sentence and exit 2.  Peak memory is the largest
resident set of the command or of a process it waited for (its picture helper), from
``getrusage`` of the waited-for children, and so is the CPU time (user + system), which says
more than the wall clock on a shared machine.  The bound SECURITY.md states: an input under 50 MB
never needs more than 2 GB, and nothing on a few megabytes runs past 60 s.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

_MEASURE = (
    "import resource, subprocess, sys\n"
    "try:\n"
    "    proc = subprocess.run(sys.argv[2:], capture_output=True, text=True,\n"
    "                          timeout=float(sys.argv[1]))\n"
    "    code, err = proc.returncode, (proc.stderr or proc.stdout).strip()\n"
    "except subprocess.TimeoutExpired:\n"
    "    code, err = 'timeout', ''\n"
    "lines = [s for s in err.splitlines() if not s.startswith('done in')]\n"
    "use = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(code, use.ru_maxrss, use.ru_utime + use.ru_stime)\n"
    "print(' | '.join(lines[:2]))\n"
)
CLI = [sys.executable, "-m", "stratpd_xl.cli"]
Case = Callable[[Path], list[str]]


def _api(code: str) -> list[str]:
    body = textwrap.dedent(code)
    wrapped = (
        "import sys\nimport numpy as np\nimport pandas as pd\nimport stratpd_xl as sx\n"
        "from stratpd_xl.errors import StratPDInputError\ntry:\n"
        + textwrap.indent(body, "    ")
        + "\nexcept StratPDInputError as exc:\n    print(exc, file=sys.stderr)\n    sys.exit(2)\n"
    )
    return [sys.executable, "-c", wrapped]


def _table(path: Path, n: int = 2_000, seed: int = 0, **extra: object) -> Path:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, n)
    z = rng.uniform(0, 10, n)
    frame = pd.DataFrame({"x": x.round(3), "z": z.round(3),
                          "y": (2 * x + z + rng.normal(0, 0.1, n)).round(3), **extra})
    frame.to_csv(path, index=False)
    return path


def _xlsx(path: Path, cells: list[list[object]]) -> Path:
    import openpyxl

    book = openpyxl.Workbook()
    for row in cells:
        book.active.append(row)
    book.active.title = "Data"
    book.save(path)
    return path


# --------------------------------------------------------------------------- BAD cases


def shared_strings(folder: Path) -> list[str]:
    import re

    import xlsxwriter

    good = folder / "strings.xlsx"
    with xlsxwriter.Workbook(good) as book:  # text cells go to the shared-string table
        sheet = book.add_worksheet("Data")
        for j, (name, values) in enumerate({"x": range(5), "y": range(0, 10, 2),
                                            "name": [f"n{i}" for i in range(5)]}.items()):
            sheet.write_column(0, j, [name, *values])
    with zipfile.ZipFile(good) as old:
        items = {i.filename: old.read(i.filename) for i in old.infolist()}
    ns = b'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    items["xl/sharedStrings.xml"] = re.sub(rb"<sst [^>]*>", b"<sst " + ns +
                                           b' count="5" uniqueCount="4294967295">',
                                           items["xl/sharedStrings.xml"])
    path = folder / "sst.xlsx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as new:
        for name, data in items.items():
            new.writestr(name, data)
    return [*CLI, "curve", str(path), "-t", "y", "-f", "x"]


def long_line(folder: Path) -> list[str]:
    path = folder / "line.csv"
    with path.open("wb") as out:
        out.write(b"x,y\n")
        for _ in range(50):
            out.write(b"1," * 1_000_000)
    return [*CLI, "curve", str(path), "-t", "y", "-f", "x"]


def empty_header(folder: Path) -> list[str]:
    path = folder / "wide_header.csv"
    path.write_bytes(b'"",' * 5_000_000 + b"\n1,2\n")
    return [*CLI, "impact", str(path), "-t", "y"]


def many_columns(folder: Path, k: int = 12_000, n: int = 150) -> list[str]:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.integers(0, 10, (n, k)), columns=[f"c{i}" for i in range(k)])
    frame["y"] = frame["c0"] * 2 + rng.normal(0, 0.1, n).round(2)
    path = folder / f"cols{k}.csv"
    frame.to_csv(path, index=False)
    return [*CLI, "curve", str(path), "-t", "y", "-f", "c0"]


def columns_100k(folder: Path) -> list[str]:
    return many_columns(folder, 100_000, 20)


def xlsx_16384_columns(folder: Path) -> list[str]:
    rng = np.random.default_rng(0)
    n, k = 60, 16_383
    values = rng.integers(0, 10, (n, k))
    cells = [[f"c{i}" for i in range(k)] + ["y"]]
    cells += [list(map(int, row)) + [int(row[0]) * 2] for row in values]
    path = _xlsx(folder / "wide.xlsx", cells)
    return [*CLI, "curve", str(path), "-t", "y", "-f", "c0"]


def leading_zeros_late(folder: Path) -> list[str]:
    rng = np.random.default_rng(0)
    n = 5_000
    code = rng.choice(["7", "8", "9"], n).astype(object)
    code[[3_000, 4_000]] = "007"
    x = rng.uniform(0, 10, n)
    y = x + np.where(code == "007", 10.0, 0.0)
    pd.DataFrame({"code": code, "x": x.round(3), "y": y.round(3)}).to_csv(
        folder / "codes.csv", index=False)
    return [*CLI, "curve", str(folder / "codes.csv"), "-t", "y", "-f", "code",
            "--categorical", "code"]


def list_in_cell(folder: Path) -> list[str]:
    return _api("""
        d = pd.DataFrame({"x": np.arange(100.0), "y": np.arange(100.0) * 2})
        d["tags"] = [[1, 2]] * 100
        sx.impact(d, "y")
    """)


def categories(k: int, n: int, command: str) -> Case:
    def build(folder: Path) -> list[str]:
        rng = np.random.default_rng(k)
        c = rng.integers(0, k, n)
        z = rng.uniform(0, 10, n)
        names = np.array([f"L{i:06d}" for i in range(k)])
        y = rng.normal(0, 1, k)[c] + z
        path = folder / f"levels{k}.csv"
        pd.DataFrame({"c": names[c], "z": z.round(3), "y": y.round(3)}).to_csv(path, index=False)
        if command == "report":
            return [*CLI, "report", str(path), "-t", "y", "-o", str(folder / f"r{k}.xlsx")]
        return [*CLI, "curve", str(path), "-t", "y", "-f", "c", "-o", str(folder / f"c{k}.png"),
                "-o", str(folder / f"c{k}.xlsx")]

    return build


# --------------------------------------------------------------------------- WEAK cases


def unsaved_formulas(folder: Path) -> list[str]:
    cells: list[list[object]] = [["x", "z", "y"]]
    rng = np.random.default_rng(0)
    for i in range(2, 402):
        x, z = float(rng.uniform(0, 10)), float(rng.uniform(0, 10))
        cells.append([x, z, f"=2*A{i}+B{i}" if i % 2 else 2 * x + z])
    return [*CLI, "curve", str(_xlsx(folder / "formulas.xlsx", cells)), "-t", "y", "-f", "x"]


def hidden_first_sheet(folder: Path) -> list[str]:
    import openpyxl

    book = openpyxl.Workbook()
    old = book.active
    old.title, old.sheet_state = "Old", "hidden"
    old.append(["x", "y"])
    new = book.create_sheet("New")
    new.append(["x", "z", "y"])
    rng = np.random.default_rng(0)
    for _ in range(300):
        x, z = float(rng.uniform(0, 10)), float(rng.uniform(0, 10))
        new.append([x, z, 2 * x + z])
    book.save(folder / "hidden.xlsx")
    return [*CLI, "curve", str(folder / "hidden.xlsx"), "-t", "y", "-f", "x"]


def ods_repeated_row(folder: Path) -> list[str]:
    cell = ('<table:table-cell office:value-type="float" office:value="{0}">'
            "<text:p>{0}</text:p></table:table-cell>")
    text = ('<table:table-cell office:value-type="string"><text:p>{0}</text:p>'
            "</table:table-cell>")
    content = (
        '<?xml version="1.0" encoding="UTF-8"?><office:document-content '
        'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.3">'
        '<office:body><office:spreadsheet><table:table table:name="Data">'
        f"<table:table-row>{text.format('x')}{text.format('z')}{text.format('y')}"
        "</table:table-row>"
        f'<table:table-row table:number-rows-repeated="3000000">{cell.format(1)}'
        f"{cell.format(2)}{cell.format(3)}</table:table-row>"
        "</table:table></office:spreadsheet></office:body></office:document-content>"
    )
    path = folder / "repeated.ods"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as book:
        book.writestr(zipfile.ZipInfo("mimetype"),
                      "application/vnd.oasis.opendocument.spreadsheet")
        book.writestr("content.xml", content)
    return [*CLI, "curve", str(path), "-t", "y", "-f", "x"]


def nul_bytes(folder: Path) -> list[str]:
    path = _table(folder / "nul.csv")
    data = bytearray(path.read_bytes())
    data[5_000] = 0
    path.write_bytes(bytes(data))
    return [*CLI, "curve", str(path), "-t", "y", "-f", "x"]


def unclosed_quote(folder: Path) -> list[str]:
    path = _table(folder / "quote.csv")
    lines = path.read_text().splitlines()
    lines[40] = '"' + lines[40]
    path.write_text("\n".join(lines) + "\n")
    return [*CLI, "curve", str(path), "-t", "y", "-f", "x"]


def utf16_without_mark(folder: Path) -> list[str]:
    path = _table(folder / "u16.csv")
    path.write_bytes(path.read_text().encode("utf-16-le"))
    return [*CLI, "curve", str(path), "-t", "y", "-f", "x"]


def utf16_asked_on_utf8(folder: Path) -> list[str]:
    return [*CLI, "curve", str(_table(folder / "u8.csv")), "-t", "y", "-f", "x",
            "--encoding", "utf-16"]


def quoted_decimal_comma(folder: Path) -> list[str]:
    rng = np.random.default_rng(0)
    x = rng.uniform(1_000, 50_000, 500)
    z = rng.uniform(0, 10, 500)
    german = str.maketrans(",.", ".,")  # 30,100.00 -> 30.100,00
    lines = ["x,z,y"] + [f'"{f"{a:,.2f}".translate(german)}",{b:.3f},{a / 500 + b:.3f}'
                         for a, b in zip(x, z, strict=True)]
    (folder / "decimal.csv").write_text("\n".join(lines) + "\n")
    return [*CLI, "curve", str(folder / "decimal.csv"), "-t", "y", "-f", "x"]


def duplicate_target(folder: Path) -> list[str]:
    rng = np.random.default_rng(0)
    a, z = rng.uniform(0, 10, 300), rng.uniform(0, 10, 300)
    lines = ["a,z,y,y"] + [f"{p:.3f},{q:.3f},{-5 * p + q:.3f},{10 * p + q:.3f}"
                           for p, q in zip(a, z, strict=True)]
    (folder / "dup.csv").write_text("\n".join(lines) + "\n")
    return [*CLI, "curve", str(folder / "dup.csv"), "-t", "y", "-f", "a"]


def target_values(kind: str) -> Case:
    def build(folder: Path) -> list[str]:
        n = 300
        y = {"empty": [""] * n, "infinite": ["inf"] * n, "constant": ["5"] * n}[kind]
        rng = np.random.default_rng(0)
        lines = ["x,z,y"] + [f"{rng.uniform(0, 10):.3f},{rng.uniform(0, 10):.3f},{v}"
                             for v in y]
        path = folder / f"{kind}.csv"
        path.write_text("\n".join(lines) + "\n")
        return [*CLI, "impact", str(path), "-t", "y"]

    return build


def zero_one_feature(folder: Path) -> list[str]:
    rng = np.random.default_rng(0)
    n = 400
    flag = rng.integers(0, 2, n)
    z = flag * 10 + rng.uniform(0, 1, n)  # z fixes the flag: no stratum holds both values
    pd.DataFrame({"flag": flag, "z": z.round(3), "y": (3 * flag + z).round(3)}).to_csv(
        folder / "flag.csv", index=False)
    return [*CLI, "curve", str(folder / "flag.csv"), "-t", "y", "-f", "flag"]


def code_spellings(folder: Path) -> list[str]:
    texts = ["001", "1", "01", "1.0"]
    rng = np.random.default_rng(0)
    n = 400
    x = rng.uniform(0, 1, n)
    lines = ["code,x,y"] + [f"{texts[i % 4]},{x[i]:.3f},{x[i] + i % 4:.3f}" for i in range(n)]
    (folder / "spell.csv").write_text("\n".join(lines) + "\n")
    return [*CLI, "curve", str(folder / "spell.csv"), "-t", "y", "-f", "code",
            "--categorical", "code"]


def long_ids(folder: Path) -> list[str]:
    n = 300
    ids = 12345678901234500 + np.arange(n) % 3
    rng = np.random.default_rng(0)
    z = rng.uniform(0, 10, n).round(3)
    pd.DataFrame({"id": ids, "z": z, "y": (ids % 3 * 4 + z).round(3)}).to_csv(
        folder / "ids.csv", index=False)
    return [*CLI, "curve", str(folder / "ids.csv"), "-t", "y", "-f", "id", "--categorical", "id"]


def huge_numbers(folder: Path) -> list[str]:
    rng = np.random.default_rng(0)
    n = 500
    x = rng.uniform(1, 9, n) * 1e300
    z = rng.uniform(0, 10, n)
    pd.DataFrame({"x": x, "z": z, "y": x / 1e300 + z}).to_csv(folder / "huge.csv", index=False)
    return [*CLI, "curve", str(folder / "huge.csv"), "-t", "y", "-f", "x", "-o",
            str(folder / "huge.png")]


def max_points_zero(folder: Path) -> list[str]:
    return [*CLI, "curve", str(_table(folder / "t.csv")), "-t", "y", "-f", "x",
            "--max-points", "0"]


def dangling_output(folder: Path) -> list[str]:
    (folder / "gone.png").symlink_to(folder / "missing" / "gone.png")
    return [*CLI, "curve", str(_table(folder / "t.csv", n=200_000)), "-t", "y", "-f", "x",
            "-o", str(folder / "gone.png")]


def read_only_output(folder: Path) -> list[str]:
    closed = folder / "closed"
    closed.mkdir()
    closed.chmod(0o500)
    # root ignores permission bits: a folder on a read-only mount is what stops it then.
    target = Path("/proc/stratpd.xlsx") if os.geteuid() == 0 else closed / "r.xlsx"
    return [*CLI, "report", str(_table(folder / "t.csv", n=200_000)), "-t", "y", "-o",
            str(target)]


# --------------------------------------------------------------------------- newer surfaces


def _shell(command: str) -> list[str]:
    return ["sh", "-c", command]


def _cli_text() -> str:
    return " ".join(f"'{part}'" for part in CLI)


def stdin_endless(folder: Path) -> list[str]:
    # Without a limit while streaming, this copied until the disk was full.
    return _shell(f"yes | {_cli_text()} curve - -t y -f x")


def stdin_closed(folder: Path) -> list[str]:
    return _shell(f"{_cli_text()} curve - -t y -f x 0<&-")


def stdout_closed(folder: Path) -> list[str]:
    return _shell(f"{_cli_text()} curve '{_table(folder / 't.csv')}' -t y -f x 1>&-")


def stdout_full(folder: Path) -> list[str]:
    return _shell(f"{_cli_text()} impact '{_table(folder / 't.csv')}' -t y > /dev/full")


def svg_control_characters(folder: Path) -> list[str]:
    rng = np.random.default_rng(0)
    n = 2_000
    kind = rng.choice(["a\x01", "b\x02", "c\x1b[2J"], n)
    x = rng.uniform(0, 10, n)
    frame = pd.DataFrame({"x\x01": x.round(3), "kind": kind,
                          "y": (x + (kind == "a\x01") * 5 + rng.normal(0, .1, n)).round(3)})
    path = folder / "ctl.csv"
    frame.to_csv(path, index=False)
    runs = [["curve", "-f", "kind"], ["compare", "-f", "kind"],
            ["curve", "-f", "x\x01", "--by", "kind"], ["interactions"]]
    return _api(f"""
        import xml.etree.ElementTree as ET
        from stratpd_xl.cli import main
        for i, args in enumerate({runs!r}):
            out = "{folder}/o%d.svg" % i
            assert main([args[0], "{path}", "-t", "y", "-q", "--trials", "2", *args[1:],
                         "-o", out]) == 0
            ET.parse(out)  # raises when the SVG is not XML
        print("4 SVGs (curve, compare, --by, interactions), each XML", file=sys.stderr)
    """)


def compare_huge_target(folder: Path) -> list[str]:
    rng = np.random.default_rng(0)
    n = 2_000
    x, z = rng.uniform(0, 10, n), rng.uniform(0, 10, n)
    pd.DataFrame({"x": x, "z": z, "y": (2 * x + z + 10) * 1e305}).to_csv(
        folder / "huge_y.csv", index=False)
    return [*CLI, "compare", str(folder / "huge_y.csv"), "-t", "y", "-f", "x", "-o",
            str(folder / "c.csv")]


def worker_requests(folder: Path) -> list[str]:
    # The 1 GB line is written 1 MB at a time: the peak is the worker's, not this script's.
    return _api("""
        import json, subprocess
        worker = subprocess.Popen([sys.executable, "-m", "stratpd_xl.libreoffice.worker"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        worker.stdout.readline()  # hello
        def ask(*parts):
            for part in parts:
                worker.stdin.write(part)
            worker.stdin.write(b"\\n")
            worker.stdin.flush()
            return json.loads(worker.stdout.readline())
        said = [ask(b"[" * 200_000 + b"]" * 200_000)["error"][:40]]
        chunk = b"a" * 2**20
        said.append(ask(b'{"id": 2, "op": "PING", "args": {}, "x": "', *[chunk] * 1024, b'"}')
                    ["error"][:40])
        answer = ask(b'{"id": 3, "op": "STRATIMPACT", "args": {"data": [["y"], [1.0]], '
                     b'"target": "\\ud800"}}')
        said.append(str(answer.get("error") or answer["result"][0][0])[:40])
        said.append(str(ask(b'{"id": NaN, "op": "PING", "args": {}}')))
        worker.stdin.close()
        worker.wait()
        print(" / ".join(said), file=sys.stderr)
        sys.exit(2)
    """)


def half_emoji(folder: Path) -> list[str]:
    return _api("""
        from stratpd_xl import spreadsheet
        r = np.random.default_rng(0)
        kind = r.choice(["\\ud83d", "b", "c"], 2_000)
        x = r.uniform(0, 10, 2_000)
        cells = [["x", "kind", "y"], *zip(x, kind, x + (kind == "b") * 3)]
        print(spreadsheet.stratimpact(cells, "y")[1:], file=sys.stderr)
    """)


def inf_third(folder: Path) -> list[str]:
    rng = np.random.default_rng(0)
    n = 1_000
    x, z = rng.uniform(0, 10, n).round(3), rng.uniform(0, 10, n).round(3)
    shown = x.astype(object)
    shown[::3] = "inf"
    pd.DataFrame({"x": shown, "z": z, "y": (2 * x + z).round(3)}).to_csv(
        folder / "inf.csv", index=False)
    return [*CLI, "curve", str(folder / "inf.csv"), "-t", "y", "-f", "x"]


def ice_name_clash(folder: Path) -> list[str]:
    return [*CLI, "compare", str(_table(folder / "t.csv")), "-t", "y", "-f", "x", "--ice",
            "-o", str(folder / "x.csv"), "-o", str(folder / "x-ice.csv")]


def line_break_name(folder: Path) -> list[str]:
    return [*CLI, "curve", str(_table(folder / "t.csv")), "-t", "y", "-f", "x", "-q",
            "-o", str(folder / "a\nb.csv")]


def wide_interactions(folder: Path) -> list[str]:
    rng = np.random.default_rng(0)
    n, k = 2_000, 300
    frame = pd.DataFrame(rng.uniform(0, 10, (n, k)).round(3),
                         columns=[f"c{i}" for i in range(k)])
    frame["y"] = (frame["c0"] * frame["c1"] + frame["c2"]).round(3)
    frame.to_csv(folder / "wide300.csv", index=False)
    return [*CLI, "interactions", str(folder / "wide300.csv"), "-t", "y"]


# --------------------------------------------------------------------------- Parquet


def _parquet(path: Path, n: int = 2_000) -> Path:
    _table(path.with_suffix(".csv"), n)
    pd.read_csv(path.with_suffix(".csv")).to_parquet(path)
    return path


def parquet_claims(what: str) -> Case:
    """A row group whose footer claims 1.4 billion rows, or 10 GB a column once decompressed
    (the pages are a 2,000-row file's)."""

    def build(folder: Path) -> list[str]:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from tests.parquet_craft import claim

        path = _parquet(folder / "claims.parquet")
        if what == "rows":
            claim(path, rows=1_400_000_000)
        else:
            claim(path, uncompressed=10 * 1024**3)
        return [*CLI, "curve", str(path), "-t", "y", "-f", "x"]

    return build


def parquet_damaged(folder: Path) -> list[str]:
    good = _parquet(folder / "good.parquet").read_bytes()
    path = folder / "damaged.parquet"
    path.write_bytes(good[:-60] + b"\xff" * 52 + good[-8:])  # the footer overwritten
    return [*CLI, "curve", str(path), "-t", "y", "-f", "x"]


def parquet_not_parquet(folder: Path) -> list[str]:
    path = folder / "export.parquet"
    _table(path)  # a CSV given a .parquet name
    return [*CLI, "curve", str(path), "-t", "y", "-f", "x"]


def parquet_drift(kind: str) -> Case:
    def build(folder: Path) -> list[str]:
        parts = folder / "parts"
        parts.mkdir()
        frame = pd.read_csv(_table(folder / "t.csv"))
        frame.to_parquet(parts / "a.parquet")
        other = frame.drop(columns=["z"]) if kind == "missing" else frame.astype({"z": str})
        other.to_parquet(parts / "b.parquet")
        return [*CLI, "curve", str(parts), "-t", "y", "-f", "x"]

    return build


def parquet_types(kind: str) -> Case:
    """One column of a kind a CSV has not: nested, dictionary-encoded text, zoned times,
    decimals; with zero rows; or named by a number (pandas writes 0 as "0")."""

    def build(folder: Path) -> list[str]:
        import decimal

        import pyarrow as pa
        import pyarrow.parquet as pq

        frame = pd.read_csv(_table(folder / "t.csv", 200_000))
        n = len(frame)
        table = pa.Table.from_pandas(frame, preserve_index=False)
        target, feature = "y", "x"
        if kind == "nested":
            table = table.append_column("tags", pa.array([[1, 2, 3]] * n))
            feature = "tags"
        elif kind == "nested left out":
            table = table.append_column("tags", pa.array([{"a": 1, "b": [1.5]}] * n))
        elif kind == "dictionary":
            words = np.array([f"store {i}" for i in range(50)])[np.arange(n) % 50]
            table = table.append_column("store", pa.array(words).dictionary_encode())
            feature = "store"
        elif kind == "zoned":
            times = pd.date_range("2024-01-01", periods=n, freq="min", tz="America/New_York")
            table = table.append_column("when", pa.array(times))
            feature = "when"
        elif kind == "decimal":
            prices = [decimal.Decimal(f"{v:.2f}") for v in frame["x"]]
            table = table.append_column("price", pa.array(prices, pa.decimal128(12, 2)))
            feature = "price"
        elif kind == "zero rows":
            table = table.slice(0, 0)
        elif kind == "number names":
            table = table.rename_columns(["0", "1", "2"])
            target, feature = "2", "0"
        path = folder / "typed.parquet"
        pq.write_table(table, path)
        return [*CLI, "curve", str(path), "-t", target, "-f", feature]

    return build


def api(code: str) -> Case:
    return lambda folder: _api(code)


CASES: dict[str, Case] = {
    "B1 .xlsx claiming 4,294,967,295 shared strings": shared_strings,
    "B2 100 MB line without a line break": long_line,
    "B3 5,000,000 empty header cells (15 MB)": empty_header,
    "B4 12,000 columns (4 MB), one curve": many_columns,
    "B4 16,384-column .xlsx, one curve": xlsx_16384_columns,
    "B4 100,000-column CSV": columns_100k,
    "B5 007 beside 7 after row 3,000": leading_zeros_late,
    "B7 a list in a cell (API)": list_in_cell,
    "B8 report, 6,000 categories / 30,000 rows": categories(6_000, 30_000, "report"),
    "B8 report, 10,000 categories / 50,000 rows": categories(10_000, 50_000, "report"),
    "B8 curve -o png -o xlsx, 10,000 categories": categories(10_000, 50_000, "curve"),
    "B8 report, 100,000 categories / 200,000 rows": categories(100_000, 200_000, "report"),
    "W formulas without a saved value": unsaved_formulas,
    "W hidden first sheet": hidden_first_sheet,
    "W .ods row repeated 3,000,000 times": ods_repeated_row,
    "W NUL byte": nul_bytes,
    "W unclosed quote": unclosed_quote,
    "W UTF-16 without its mark": utf16_without_mark,
    "W --encoding utf-16 on UTF-8": utf16_asked_on_utf8,
    'W quoted "30.100,00" in a point file': quoted_decimal_comma,
    "W duplicated target header": duplicate_target,
    "W empty target": target_values("empty"),
    "W all-infinite target": target_values("infinite"),
    "W constant target": target_values("constant"),
    "W 0/1 feature without a curve": zero_one_feature,
    "W 001/1/01/1.0 with --categorical": code_spellings,
    "W 17-digit ids": long_ids,
    "W numbers near 1e300 in a PNG": huge_numbers,
    "W --max-points 0": max_points_zero,
    "W output a dangling symlink (200,000 rows)": dangling_output,
    "W output in a read-only folder (200,000 rows)": read_only_output,
    "W API numbers stored as text": api("""
        d = pd.DataFrame({"x": np.arange(100.0).astype(str), "y": np.arange(100.0)})
        sx.stratpd(d, "y", "x")
    """),
    "W API tuple column labels": api("""
        d = pd.DataFrame({("a", "x"): np.arange(100.0), ("a", "y"): np.arange(100.0) % 7})
        print(sx.stratpd(d, ("a", "y"), ("a", "x")).shape, file=sys.stderr)
    """),
    "W API a NaN column label": api("""
        r = np.random.default_rng(0)
        d = pd.DataFrame({"x": r.uniform(0, 1, 200), np.nan: r.uniform(0, 1, 200)})
        d["y"] = d["x"] + r.normal(0, .1, 200)
        print(list(sx.impact(d, "y")["feature"]), file=sys.stderr)
    """),
    "W API time-zone-aware dates": api("""
        r = np.random.default_rng(0)
        d = pd.DataFrame({"t": pd.date_range("2024-01-01", periods=300, freq="D",
                                             tz="Europe/Paris")})
        d["y"] = np.arange(300.0) + r.normal(0, 1, 300)
        print(sx.stratpd(d, "y", "t").iloc[:2, 0].tolist(), file=sys.stderr)
    """),
    "W API a duration column": api("""
        d = pd.DataFrame({"t": pd.to_timedelta(np.arange(300), unit="h")})
        d["y"] = np.arange(300.0) % 17
        print(sx.stratpd(d, "y", "t").iloc[:2, 0].tolist(), file=sys.stderr)
    """),
    "W API impact on 0 rows": api("""
        sx.impact(pd.DataFrame({"x": [], "y": []}, dtype=float), "y")
    """),
    'W API impact(d, "price", "area")': api("""
        r = np.random.default_rng(0)
        d = pd.DataFrame({"area": r.uniform(50, 200, 300), "rooms": r.integers(1, 6, 300)})
        d["price"] = 3 * d["area"] + 10 * d["rooms"]
        print(list(sx.impact(d, "price", "area")["feature"]), file=sys.stderr)
    """),
    "W API constant target": api("""
        sx.impact(pd.DataFrame({"x": np.arange(100.0), "y": 5.0}), "y")
    """),
    "R1 yes | curve - (endless standard input)": stdin_endless,
    "R2 control characters -> 4 SVGs": svg_control_characters,
    "R3 compare on a target of 1e306": compare_huge_target,
    "R4 Calc worker: 200,000 brackets, 1 GB line, ...": worker_requests,
    "R5 half an emoji in a formula's range": half_emoji,
    "R6 standard input closed (0<&-)": stdin_closed,
    "R6 standard output closed (1>&-)": stdout_closed,
    "R7 API compare, repeated labels": api("""
        d = pd.DataFrame(np.arange(300.0).reshape(100, 3), columns=["x", "x", "y"])
        sx.compare(d, "y", "x")
    """),
    "R7 API a list in a target cell": api("""
        d = pd.DataFrame({"x": np.arange(100.0), "y": [[1.0]] * 100})
        sx.compare(d, "y", "x")
    """),
    "R7 API ice(rows=-5)": api("""
        r = np.random.default_rng(0)
        d = pd.DataFrame({"x": r.uniform(0, 1, 300), "z": r.uniform(0, 1, 300)})
        d["y"] = d["x"] + d["z"]
        sx.ice(d, "y", "x", rows=-5)
    """),
    "R7 API a 2-D array as data": api("""
        sx.compare(np.zeros((100, 3)), "y", "x")
    """),
    "R7 API a range as target": api("""
        sx.impact(pd.DataFrame({"x": np.arange(100.0), "y": np.arange(100.0) % 7}), range(3))
    """),
    "W a third of a column inf": inf_third,
    "W compare --ice -o x.csv -o x-ice.csv": ice_name_clash,
    "W -o with a line break in the name": line_break_name,
    "W standard output on /dev/full": stdout_full,
    "W interactions on 300 columns": wide_interactions,
    "P row group claiming 1.4 billion rows": parquet_claims("rows"),
    "P column chunks claiming 10 GB decompressed": parquet_claims("bytes"),
    "P corrupt footer": parquet_damaged,
    "P a CSV named .parquet": parquet_not_parquet,
    "P folder: a column missing from one file": parquet_drift("missing"),
    "P folder: int -> string between files": parquet_drift("string"),
    "P a list column as the feature": parquet_types("nested"),
    "P a struct column, left out (200,000 rows)": parquet_types("nested left out"),
    "P dictionary-encoded text (200,000 rows)": parquet_types("dictionary"),
    "P times with a time zone (200,000 rows)": parquet_types("zoned"),
    "P decimal(12,2) column (200,000 rows)": parquet_types("decimal"),
    "P zero rows": parquet_types("zero rows"),
    "P column names 0, 1, 2 (200,000 rows)": parquet_types("number names"),
    "P API a Dask DataFrame": api("""
        import dask.dataframe as dd
        d = pd.DataFrame({"x": np.arange(100.0), "y": np.arange(100.0) % 7})
        sx.stratpd(dd.from_pandas(d, npartitions=2), "y", "x")
    """),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated prefixes of case names")
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args()
    wanted = [w.strip() for w in args.only.split(",") if w.strip()]
    print(f"{'case':<52}{'exit':>8}{'seconds':>9}{'CPU s':>7}{'peak MB':>9}  first line")
    for name, build in CASES.items():
        if wanted and not any(name.startswith(w) for w in wanted):
            continue
        with tempfile.TemporaryDirectory() as folder:
            command = build(Path(folder))
            start = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", _MEASURE, str(args.timeout), *command],
                                 capture_output=True, text=True, check=True).stdout
            seconds = time.perf_counter() - start
            Path(folder).chmod(0o700)
            for child in Path(folder).iterdir():
                if child.is_dir():
                    child.chmod(0o700)
        status, said = out.split("\n", 1)
        code, peak, cpu = status.split()
        said = said.strip().replace(folder, "...")
        print(f"{name:<52}{code:>8}{seconds:>9.1f}{float(cpu):>7.1f}{int(peak) / 1024:>9.0f}  "
              f"{said[:160]}")


if __name__ == "__main__":
    main()
