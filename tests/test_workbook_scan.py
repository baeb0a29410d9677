"""The pre-scans of .xlsx (and .xlsb) sheets: what calamine will allocate, measured first.

calamine builds a sheet as one dense grid from its first to its last cell, so a few cells far
apart cost gigabytes; a 5 kB file once made it abort the whole process ("memory allocation of
262144000000 bytes failed").  Each case below was missed by an earlier scan.
"""

from __future__ import annotations

import random
import struct
import zipfile
from pathlib import Path

import numpy as np
import openpyxl
import pytest
import python_calamine
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stratpd_xl import _backend
from stratpd_xl.cli import main
from stratpd_xl.errors import StratPDInputError
from stratpd_xl.input import _scan_kernels, _workbook_scan, files
from stratpd_xl.input.files import read_table

from . import xlsb
from .test_files_hostile import make_xlsx


def with_rows(tmp_path: Path, name: str, extra: bytes) -> Path:
    """A small workbook whose sheet gets ``extra`` rows at the end of its data."""
    good = make_xlsx(tmp_path / "good.xlsx", rows=3)
    member = "xl/worksheets/sheet1.xml"
    path = tmp_path / name
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == member:
                data = data.replace(b"</sheetData>", extra + b"</sheetData>")
            zout.writestr(info, data)
    return path


@pytest.fixture
def sheet_must_not_be_built(monkeypatch):
    """Fails the test if calamine builds the sheet's grid (the reader reports any error it
    raises as a damaged file, so the call is recorded and checked afterwards)."""
    built: list[str] = []

    def refuse(self, name):
        built.append(name)
        raise RuntimeError("calamine must not build this sheet")

    monkeypatch.setattr(python_calamine.CalamineWorkbook, "get_sheet_by_name", refuse)
    yield
    assert not built, f"calamine built {built} before the scan refused it"


@pytest.mark.parametrize(
    ("name", "extra", "shape"),
    [
        # A row of 16,384 cells without r="...", then a row 500,000 down: calamine places the
        # cells one after another, so the grid is 500,000 x 16,384.
        (
            "refless.xlsx",
            b'<row r="5">' + b"<c><v>1</v></c>" * 16_384 + b"</row>"
            b'<row r="500000"><c r="A500000"><v>1</v></c></row>',
            "500,000 rows x 16,386 columns",
        ),
        # calamine reads column letters of either case.
        (
            "lowercase.xlsx",
            b"".join(b'<row r="%d"><c r="xfd%d"/></row>' % (r, r) for r in range(5, 400)),
            "399 rows x 16,384 columns",
        ),
        # Nine digits: a row far past Excel's last.
        ("digits.xlsx", b'<row r="5"><c r="B123456789"><v>1</v></c></row>', "123,456,789 rows"),
        # Namespaced tags without r, placed one after another.
        (
            "prefixed.xlsx",
            b'<x:row r="5">' + b"<x:c><x:v>1</x:v></x:c>" * 16_384 + b"</x:row>"
            b'<row r="500000"><c r="A500000"><v>1</v></c></row>',
            "x 16,386 columns",
        ),
        # White space around "=" is valid XML.
        (
            "spaced.xlsx",
            b"".join(b'<row r="%d"><c r = "XFD%d"/></row>' % (r, r) for r in range(5, 400)),
            "399 rows x 16,384 columns",
        ),
        # So are single quotes.
        (
            "quoted.xlsx",
            b"".join(b"<row r='%d'><c r='XFD%d'/></row>" % (r, r) for r in range(5, 400)),
            "399 rows x 16,384 columns",
        ),
    ],
)
def test_far_cells_are_measured_before_calamine_builds_the_sheet(
    tmp_path, name, extra, shape, sheet_must_not_be_built
):
    path = with_rows(tmp_path, name, extra)
    assert path.stat().st_size < 20_000
    with pytest.raises(StratPDInputError, match=shape):
        read_table(path)


def test_rows_without_r_are_counted(tmp_path, monkeypatch):
    # 300 rows without r after a row 10,000 down: calamine numbers them 10,001 to 10,300.
    far = b'<row r="10000"><c r="A10000"><v>1</v></c></row>'
    extra = far + b"<row><c><v>1</v></c></row>" * 300
    path = with_rows(tmp_path, "rows.xlsx", extra)
    monkeypatch.setattr(files, "MAX_GRID_CELLS", 20_300)
    with pytest.raises(StratPDInputError, match=r"10,3\d\d rows"):
        read_table(path)


def random_sheet(rng: random.Random) -> bytes:
    parts = []
    for r in range(1, rng.randint(2, 300)):
        row_ref = rng.choice([b' r="%d"' % r, b""]) if rng.random() < 0.2 else b' r="%d"' % r
        cells = []
        for c in range(rng.randint(0, 12)):
            number = rng.randint(1, 20_000) if rng.random() < 0.05 else c + 1
            letters = openpyxl.utils.get_column_letter(min(number, 18_278))
            if rng.random() < 0.1:
                letters = letters.lower()
            ref = b"" if rng.random() < 0.1 else b' r="%s%d"' % (letters.encode(), r)
            value = rng.choice([b"<v>1.5</v>", b'<is><t>a = b, "q"</t></is>', b""])
            cells.append(b"<c%s%s>%s</c>" % (ref, rng.choice([b"", b' t="inlineStr"']), value))
        parts.append(b"<row%s>%s</row>" % (row_ref, b"".join(cells)))
    return b"<sheetData>" + b"".join(parts) + b"</sheetData>"


@pytest.mark.parametrize("seed", range(30))
def test_array_and_regex_scans_agree(seed):
    xml = random_sheet(random.Random(seed))
    fast, slow = _workbook_scan._xlsx_refs(xml), _workbook_scan._xlsx_refs_slow(xml)
    assert fast is not None
    assert fast[:4] == slow[:4]
    assert (len(fast.cells), len(fast.rows)) == (len(slow.cells), len(slow.rows))


def random_plain_sheet(rng: random.Random) -> bytes:
    """random_sheet without inline texts holding " = ": the shape Excel writes."""
    return random_sheet(rng).replace(b"a = b", b"a-b")


needs_numba = pytest.mark.skipif(not _backend.HAVE_NUMBA, reason="numba not installed")


def compiled_refs(xml: bytes) -> tuple | None:
    previous = _backend.set_backend("numba")
    try:
        return _scan_kernels.xlsx_refs(xml)
    finally:
        _backend.set_backend(previous)


def assert_compiled_declines_or_agrees(xml: bytes) -> tuple | None:
    compiled, expected = compiled_refs(xml), _workbook_scan._xlsx_refs(xml)
    if expected is None:  # what the numpy scan leaves to the regular expressions
        assert compiled is None
    if compiled is not None:
        assert compiled[:4] == tuple(expected[:4])
        assert compiled[4].dtype == expected.cells.dtype == np.int64
        assert compiled[4].tolist() == expected.cells.tolist()
        assert compiled[5].tolist() == expected.rows.tolist()
    return compiled


@needs_numba
@pytest.mark.parametrize("seed", range(30))
def test_the_compiled_scan_reads_plain_sheets_as_the_array_scan_does(seed):
    assert assert_compiled_declines_or_agrees(random_plain_sheet(random.Random(seed))) is not None


def test_the_compiled_scan_stands_aside_for_the_numpy_backend():
    previous = _backend.set_backend("numpy")
    try:
        assert _scan_kernels.xlsx_refs(random_plain_sheet(random.Random(0))) is None
    finally:
        _backend.set_backend(previous)


XLSX_STRAYS = [
    "<", ">", "=", " r=", ' r="', ' r="A', ' r="AAAA1"', ' r="zz123456789012"', " r = ",
    ' r ="B2"', " r= ", "<c", "<c ", "<c/>", "<x:c ", "<x:row>", "<row", "<row ", "<rows ",
    "<cell", ":c ", "\0", "\t", "\n", '"', "'", " r='C3'", "<row r=\"99999999\">",
]


@needs_numba
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10**6),
    strays=st.lists(st.tuples(st.integers(0, 10**9), st.sampled_from(XLSX_STRAYS)), max_size=3),
)
def test_the_compiled_scan_declines_or_agrees_with_the_array_scan(seed, strays):
    xml = random_plain_sheet(random.Random(seed)).decode()
    for where, stray in strays:
        at = where % (len(xml) + 1)
        xml = xml[:at] + stray + xml[at:]
    assert_compiled_declines_or_agrees(xml.encode())


@needs_numba
@pytest.mark.parametrize("name", ["rows.xlsx", "far.xlsx", "errors.xlsx"])
def test_extents_are_the_same_through_either_scan(tmp_path, monkeypatch, name):
    extra = {
        "rows.xlsx": b'<row r="10000"><c r="A10000"><v>1</v></c></row>'
        + b"<row><c><v>1</v></c><c><v>2</v></c></row>" * 300,
        "far.xlsx": b'<row r="70000"><c r="ZZ70000"><v>1</v></c></row>',
        "errors.xlsx": b'<row r="40"><c r="B40" t="e"><v>#DIV/0!</v></c></row>',
    }[name]
    path = with_rows(tmp_path, name, extra)
    book = zipfile.ZipFile(path)
    member = "xl/worksheets/sheet1.xml"
    measured = {}
    for scan, threshold in (("array", 10**12), ("compiled", 0)):
        monkeypatch.setattr(_workbook_scan, "COMPILED_SCAN_FROM", threshold)
        previous = _backend.set_backend("numba")
        try:
            measured[scan] = _workbook_scan.xlsx_extent(book, member)
        finally:
            _backend.set_backend(previous)
    assert measured["compiled"] == measured["array"]


def test_leading_numbers_are_read_eight_bytes_at_a_time():
    texts = [b"", b"0", b"7", b"12", b"007", b"1048576", b"99999999", b"123456789", b"200001"]
    for end in (b'"', b"'", b" ", b"x", b"\xff", b"\x00"):
        buffer = b"".join(b"<" + t + end for t in texts) + bytes(16)
        starts = np.cumsum([0] + [len(t) + 2 for t in texts[:-1]]) + 1
        expected = [int(t) if t else 0 for t in texts]
        assert _workbook_scan._leading_number(buffer, starts).tolist() == expected


# --------------------------------------------------------------------------- .xlsb


def data_rows(n: int) -> list[list[float | str | None]]:
    return [["x", "y"]] + [[float(i), 2.0 * i] for i in range(n)]


def test_xlsb_reads(tmp_path):
    path = xlsb.make_xlsb(tmp_path / "t.xlsb", xlsb.sheet_records(data_rows(5)))
    frame = read_table(path)
    assert list(frame.columns) == ["x", "y"] and frame["y"].tolist() == [0, 2, 4, 6, 8]


@pytest.mark.parametrize(
    ("col", "shape"),
    [(16_383, "301 rows x 16,384 columns"), (0xFFFF_FFF0, "4,294,967,281 columns")],
)
def test_xlsb_far_cells_are_refused_before_calamine_builds_the_sheet(
    tmp_path, col, shape, sheet_must_not_be_built
):
    # One cell in column XFD per row (calamine read it into a 301 x 16,384 grid), or one cell
    # in column 4 billion (calamine aborted the process asking for 687 GB).
    far = {r: xlsb.cell(col, 1.0) for r in range(1, 301)}
    path = xlsb.make_xlsb(tmp_path / "far.xlsb", xlsb.sheet_records(data_rows(300), extra=far))
    assert path.stat().st_size < 5_000
    with pytest.raises(StratPDInputError, match=shape):
        read_table(path)


def test_xlsb_declared_dimension_is_not_trusted_either_way(tmp_path):
    huge = (0, 1_048_575, 0, 16_383)  # BrtWsDim claims the whole sheet: only cells count
    path = xlsb.make_xlsb(tmp_path / "dim.xlsb", xlsb.sheet_records(data_rows(5), dimension=huge))
    assert read_table(path).shape == (5, 2)
    small = (0, 0, 0, 0)  # and a small claim does not hide far cells
    far = {3: xlsb.cell(16_383, 1.0)}
    rows = data_rows(100)
    path = xlsb.make_xlsb(
        tmp_path / "small.xlsb", xlsb.sheet_records(rows, extra=far, dimension=small)
    )
    grid = _workbook_scan.xlsb_extent(zipfile.ZipFile(path), "xl/worksheets/sheet1.bin")[:2]
    assert grid == (101, 16_384)


def test_xlsb_short_cell_record_is_damaged_not_a_crash(tmp_path):
    # calamine reads a number cell's 16 bytes without checking the record holds them.
    short = {2: xlsb.record(xlsb.REAL, b"\x01\x00\x00\x00")}
    path = xlsb.make_xlsb(tmp_path / "short.xlsb", xlsb.sheet_records(data_rows(5), extra=short))
    with pytest.raises(StratPDInputError, match='cannot read "short.xlsb"'):
        read_table(path)


def test_xlsb_records_larger_than_a_read_are_skipped(tmp_path):
    # A 3 MB text cell spans several reads of the stream; the scan keeps its place.
    text = "".join(chr(0x4E00 + (i * 7919) % 20_000) for i in range(1_500_000))
    rows = data_rows(3) + [[1.0, text]] + data_rows(3)[1:]
    path = tmp_path / "long.xlsb"
    xlsb.make_xlsb(path, xlsb.sheet_records(rows))
    extent = _workbook_scan.xlsb_extent(zipfile.ZipFile(path), "xl/worksheets/sheet1.bin")
    assert extent[:3] == (8, 2, 16)


@pytest.mark.parametrize("seed", range(10))
def test_xlsb_scan_matches_the_grid_calamine_builds(tmp_path, seed):
    rng = random.Random(seed)
    rows: list[list[float | str | None]] = [
        [rng.choice([None, 1.5, "a", ""]) for _ in range(rng.randint(0, 30))]
        for _ in range(rng.randint(1, 200))
    ]
    path = xlsb.make_xlsb(tmp_path / "r.xlsb", xlsb.sheet_records(rows))
    member = "xl/worksheets/sheet1.bin"
    height, width, _, _ = _workbook_scan.xlsb_extent(zipfile.ZipFile(path), member)
    book = python_calamine.CalamineWorkbook.from_path(str(path))
    grid = book.get_sheet_by_name("Data").to_python(skip_empty_area=False)
    assert (height, width) == (len(grid), len(grid[0]) if grid else 0)


def test_xlsb_short_dimension_is_damaged_not_a_traceback(tmp_path, capsys):
    # calamine slices 16 bytes out of this record: a Rust panic, which pyo3 raises as a
    # BaseException; it once ended the command with a traceback and exit code 1.
    sheet = xlsb.sheet_records(data_rows(5))
    full = xlsb.record(xlsb.DIMENSION, struct.pack("<IIII", 0, 5, 0, 1))
    path = xlsb.make_xlsb(
        tmp_path / "dim.xlsb", sheet.replace(full, xlsb.record(xlsb.DIMENSION, bytes(4)))
    )
    with pytest.raises(StratPDInputError, match='cannot read "dim.xlsb"'):
        read_table(path)
    assert main(["curve", str(path), "-t", "y", "-f", "x"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_a_panic_inside_calamine_is_a_damaged_file(tmp_path, monkeypatch):
    # Without the scan's own check, calamine panics on the short record: still one sentence.
    sheet = xlsb.sheet_records(data_rows(5))
    full = xlsb.record(xlsb.DIMENSION, struct.pack("<IIII", 0, 5, 0, 1))
    path = xlsb.make_xlsb(
        tmp_path / "dim.xlsb", sheet.replace(full, xlsb.record(xlsb.DIMENSION, bytes(4)))
    )
    monkeypatch.setattr(files, "xlsb_extent", lambda book, member: (6, 2, 12, {}))
    with pytest.raises(StratPDInputError, match='cannot read "dim.xlsb"'):
        read_table(path)
