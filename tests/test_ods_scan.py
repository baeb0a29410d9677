"""The .ods pre-scan: fast on plain rows, the same answer as tag by tag, and run before calamine.

python-calamine reads every table of an .ods when it opens the file, so the scan must measure
all of them first; and calamine loops forever on a content.xml cut between two rows.  The
files here are written by hand from the OpenDocument layout LibreOffice uses, so each case is
exact and needs no LibreOffice.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
import threading
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest
import python_calamine
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stratpd_xl import _backend
from stratpd_xl.errors import StratPDInputError
from stratpd_xl.input import _scan_kernels, _workbook_scan, files
from stratpd_xl.input.files import read_table

HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:calcext="urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0" '
    'office:version="1.3"><office:body><office:spreadsheet>'
)
TAIL = "</office:spreadsheet></office:body></office:document-content>"
MIMETYPE = "application/vnd.oasis.opendocument.spreadsheet"
MANIFEST = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
    f'<manifest:file-entry manifest:full-path="/" manifest:media-type="{MIMETYPE}"/>'
    '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
    "</manifest:manifest>"
)


def num(value: float, repeat: int = 1) -> str:
    rep = f' table:number-columns-repeated="{repeat}"' if repeat > 1 else ""
    return (
        f'<table:table-cell{rep} office:value-type="float" office:value="{value}" '
        f'calcext:value-type="float"><text:p>{value}</text:p></table:table-cell>'
    )


def txt(value: str) -> str:
    return (
        '<table:table-cell office:value-type="string" calcext:value-type="string">'
        f"<text:p>{value}</text:p></table:table-cell>"
    )


def gap(repeat: int = 1) -> str:
    rep = f' table:number-columns-repeated="{repeat}"' if repeat > 1 else ""
    return f"<table:table-cell{rep}/>"


def row(*cells: str, repeat: int = 1, rest: int = 16_000) -> str:
    """A row as LibreOffice writes it: its cells, then the rest of the columns as one empty cell."""
    rep = f' table:number-rows-repeated="{repeat}"' if repeat > 1 else ""
    trailing = f'<table:table-cell table:number-columns-repeated="{rest}"/>' if rest else ""
    body = "".join(cells) + trailing
    return f'<table:table-row table:style-name="ro1"{rep}>{body}</table:table-row>'


def table(name: str, rows: list[str]) -> str:
    return (
        f'<table:table table:name="{name}" table:style-name="ta1">'
        '<table:table-column table:number-columns-repeated="16384"/>'
        f'{"".join(rows)}'
        # LibreOffice ends a sheet with the empty rest of its million rows.
        '<table:table-row table:number-rows-repeated="1000000">'
        '<table:table-cell table:number-columns-repeated="16384"/></table:table-row>'
        "</table:table>"
    )


def make_ods(path: Path, content: str | bytes) -> Path:
    data = content.encode() if isinstance(content, str) else content
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as book:
        book.writestr(zipfile.ZipInfo("mimetype"), MIMETYPE)  # stored, first, as ODF asks
        book.writestr("content.xml", data)
        book.writestr("META-INF/manifest.xml", MANIFEST)
    return path


def data_rows(n: int) -> list[str]:
    return [row(txt("x"), txt("y"))] + [row(num(i), num(2 * i)) for i in range(1, n + 1)]


def slow_extents(content: bytes) -> dict:
    """The tag-by-tag scan alone: the reference the fast path must agree with."""
    scan = _workbook_scan._OdsScan()
    scan._tags(content)
    scan.finish()
    return scan.extents


@pytest.fixture(params=["numba", "numpy"])
def backend(request, monkeypatch):
    """Each scan test on both array scans: the compiled one and the numpy one it stands in for
    (the compiled one on every size of file, not only on large ones as in use)."""
    if request.param == "numba" and not _backend.HAVE_NUMBA:
        pytest.skip("numba not installed")
    monkeypatch.setattr(_workbook_scan, "COMPILED_SCAN_FROM", 0)
    previous = _backend.set_backend(request.param)
    yield request.param
    _backend.set_backend(previous)


@pytest.fixture
def calamine_must_not_open(monkeypatch):
    """Fails the test if calamine opens the file (the reader turns any error it raises into
    "cannot read", so the call is recorded and checked afterwards)."""
    opened: list[str] = []

    def refuse(path, *args, **kwargs):
        opened.append(str(path))
        raise RuntimeError("calamine must not open this file")

    monkeypatch.setattr(python_calamine.CalamineWorkbook, "from_path", refuse)
    yield
    assert not opened, f"calamine opened {opened} before the scan refused it"


def test_hand_written_ods_reads(tmp_path):
    path = make_ods(tmp_path / "t.ods", HEAD + table("Data", data_rows(5)) + TAIL)
    frame = read_table(path)
    assert list(frame.columns) == ["x", "y"] and frame["y"].tolist() == [2, 4, 6, 8, 10]


def test_plain_rows_take_the_fast_path_and_agree_with_the_tag_scan(backend):
    rows = "".join(row(num(i), num(i), txt("a"), gap(3), num(1)) for i in range(3000))
    chunk = rows.encode()
    tags = _workbook_scan._xml_tags(chunk)
    assert tags is not None
    spans, used, cells = _workbook_scan._ods_rows(*tags)
    assert spans.sum() == 3000 and used.max() == 7 and cells == 3000 * 4
    scan = _workbook_scan._OdsScan(compiled=_scan_kernels.ods_rows)
    scan.name = "T"
    scan.feed(chunk)
    scan.finish()
    reference = _workbook_scan._OdsScan()
    reference.name = "T"
    reference._tags(chunk)
    reference.finish()
    assert scan.extents == reference.extents == {"T": (3000, 7, 12000, {})}
    compiled = _scan_kernels.ods_rows(chunk)
    if backend == "numpy":
        assert compiled is None  # numba off: the numpy scan answers
    else:  # the shape LibreOffice writes is the compiled scan's to answer
        assert compiled is not None
        assert [compiled[0].tolist(), compiled[1].tolist(), compiled[2]] == [
            spans.tolist(), used.tolist(), cells
        ]


def random_row(rng: random.Random) -> str:
    cells = []
    for _ in range(rng.randint(0, 12)):
        kind = rng.random()
        if kind < 0.3:
            cells.append(num(rng.randint(0, 9), repeat=rng.choice([1, 1, 1, 2, 40])))
        elif kind < 0.5:
            cells.append(txt(rng.choice(["a", 'say "hi"', "it's", "a > b", "x/>y", "&amp;"])))
        elif kind < 0.7:
            cells.append(gap(rng.choice([1, 2, 500])))
        elif kind < 0.75:
            cells.append('<table:table-cell office:value-type="float" office:value="3"/>')
        elif kind < 0.8:
            cells.append('<table:table-cell table:formula="of:=1+1"/>')
        elif kind < 0.85:
            cells.append(
                '<table:table-cell table:number-columns-spanned="2" office:value-type="float" '
                'office:value="1"><text:p>1</text:p></table:table-cell>'
                "<table:covered-table-cell/>"
            )
        else:
            cells.append("<table:table-cell></table:table-cell>")
    last = rng.random()
    if last < 0.1:  # a filled, repeated, self-closed last cell
        cells.append(
            '<table:table-cell office:value-type="float" office:value="1" '
            'table:number-columns-repeated="300"/>'
        )
    return row(*cells, repeat=rng.choice([1] * 8 + [3]), rest=rng.choice([0, 16_000]))


@pytest.mark.parametrize("seed", range(40))
def test_fast_and_tag_scans_agree_on_random_tables(tmp_path, seed, backend):
    rng = random.Random(seed)
    tables = "".join(
        table(f"T{t}", [random_row(rng) for _ in range(rng.randint(0, 400))])
        for t in range(rng.randint(1, 3))
    )
    content = (HEAD + tables + TAIL).encode()
    book = zipfile.ZipFile(make_ods(tmp_path / "r.ods", content))
    assert _workbook_scan.ods_extents(book) == slow_extents(content)


# Rows as spreadsheet programs write them, and stray bytes that must make the compiled scan
# either decline or give the numpy scan's answer.
ROW_OPENS = [
    '<table:table-row table:style-name="ro1">',
    '<table:table-row table:number-rows-repeated="3">',
    '<table:table-row table:number-rows-repeated="0012">',
]
CELLS = [
    num(1), num(2, repeat=40), txt("a"), gap(), gap(500), txt('say "hi"'), txt("it's"),
    txt("a > b"), "<table:covered-table-cell/>",
    '<table:table-cell table:number-columns-spanned="2"><text:p>1</text:p></table:table-cell>',
]
ROW_ENDS = [
    "</table:table-row>",
    '<table:table-cell table:number-columns-repeated="300"/></table:table-row>',
]
STRAYS = [
    "<", ">", "'", '"', "=", "d=", "d =", "repeated", 'number-rows-repeated="',
    'number-columns-repeated="7"', ' table:number-columns-repeated = "2"',
    ' table:number-columns-repeated="+2"', ' table:number-columns-repeated="1234567890123"',
    ' table:number-rows-repeated="2"', "<!-- c -->", "<?pi?>", "<office:x/>",
    'calcext:value-type="error"', "/>", "</", "\0", '<text:p a="number-rows-repeated=">',
    "<table:table-row>", "</table:table-row>", gap(2), num(5), "<table:covered-table-cell/>",
]
rows_xml = st.lists(
    st.tuples(
        st.sampled_from(ROW_OPENS),
        st.lists(st.sampled_from(CELLS), max_size=6),
        st.sampled_from(ROW_ENDS),
    ).map(lambda parts: parts[0] + "".join(parts[1]) + parts[2]),
    min_size=1,
    max_size=6,
)


SLOTS = {  # where a stray goes: as an attribute, into text, or anywhere at all
    "attribute": lambda text: [m.start() for m in re.finditer("/?>", text)],
    "text": lambda text: [m.end() for m in re.finditer(">", text)],
    "anywhere": lambda text: range(len(text) + 1),
}


@pytest.mark.skipif(not _backend.HAVE_NUMBA, reason="numba not installed")
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=rows_xml,
    strays=st.lists(
        st.tuples(st.sampled_from(sorted(SLOTS)), st.integers(0, 10**6), st.sampled_from(STRAYS)),
        max_size=3,
    ),
)
def test_the_compiled_scan_declines_or_agrees_with_the_numpy_scan(rows, strays):
    text = "".join(rows)
    for slot, where, stray in strays:
        spots = SLOTS[slot](text)
        at = spots[where % len(spots)]
        text = text[:at] + stray + text[at:]
    assert_compiled_declines_or_agrees(text.encode())


@pytest.mark.skipif(not _backend.HAVE_NUMBA, reason="numba not installed")
@pytest.mark.parametrize("stray", STRAYS)
def test_one_stray_anywhere_in_plain_rows_is_declined_or_read_alike(stray):
    plain = (
        row(num(1), gap(500), txt("a > b"), rest=300)
        + row(num(2, repeat=40), "<table:covered-table-cell/>", repeat=3, rest=0)
        + row(txt('it\'s "x"'), gap(), num(3), rest=300)
    )
    for at in range(len(plain) + 1):
        assert_compiled_declines_or_agrees((plain[:at] + stray + plain[at:]).encode())


@pytest.mark.skipif(not _backend.HAVE_NUMBA, reason="numba not installed")
@pytest.mark.parametrize(
    "cell",
    [
        txt('number-rows-repeated="'),
        '<table:table-cell><text:p a="number-rows-repeated=">x</text:p></table:table-cell>',
        '<table:table-cell><text:span text:c="number-rows-repeated="/></table:table-cell>',
    ],
)
def test_a_repeat_pattern_outside_a_row_or_cell_is_left_to_the_numpy_scan(cell):
    # The numpy scan's pattern, once started there, runs on to the next quote: into the next
    # cell's repeat, which it then does not count.  The compiled scan must not count it either.
    assert_compiled_declines_or_agrees(row(cell, gap(500), num(1), rest=0).encode())


def assert_compiled_declines_or_agrees(chunk: bytes) -> None:
    previous = _backend.set_backend("numba")
    try:
        compiled = _scan_kernels.ods_rows(chunk)
    finally:
        _backend.set_backend(previous)
    if compiled is None:
        return  # the numpy scan (or the tag-by-tag one) answers, as before
    tags = _workbook_scan._xml_tags(chunk)
    assert tags is not None
    expected = _workbook_scan._ods_rows(*tags)
    assert expected is not None
    assert compiled[0].dtype == expected[0].dtype == np.int64
    assert (compiled[0].tolist(), compiled[1].tolist(), compiled[2]) == (
        expected[0].tolist(), expected[1].tolist(), expected[2]
    )


# ------------------------------------------------------------------ refused before calamine


def test_padding_is_refused_before_calamine_opens_the_file(tmp_path, calamine_must_not_open):
    padded = [row(num(i), gap(16_380), num(1), rest=0) for i in range(100)]
    path = make_ods(tmp_path / "p.ods", HEAD + table("Data", padded) + TAIL)
    with pytest.raises(StratPDInputError, match="100 rows x 16,382 columns"):
        read_table(path)


def test_a_padded_second_sheet_is_refused_even_when_reading_the_first(tmp_path):
    # calamine builds every table on opening: the padded one would cost memory all the same.
    padded = [row(gap(16_380), num(1), rest=0) for _ in range(100)]
    content = HEAD + table("Data", data_rows(5)) + table("Junk", padded) + TAIL
    path = make_ods(tmp_path / "two.ods", content)
    with pytest.raises(StratPDInputError, match='sheet "Junk"'):
        read_table(path, sheet="Data")


def test_repeated_padded_row_is_refused(tmp_path, calamine_must_not_open):
    # One row element standing for 100,000 rows, each padded to 16,381 columns.
    rows = data_rows(3) + [row(gap(16_380), num(1), repeat=100_000, rest=0)]
    path = make_ods(tmp_path / "rep.ods", HEAD + table("Data", rows) + TAIL)
    with pytest.raises(StratPDInputError, match="stray cells"):
        read_table(path)


def test_content_cut_between_rows_is_refused_not_read_forever(tmp_path, calamine_must_not_open):
    # calamine loops forever when content.xml ends inside a table (checked: python-calamine
    # 0.9 with calamine 0.37); the scan says the file is damaged instead.
    content = HEAD + table("Data", data_rows(50)) + TAIL
    cut = content[: content.index("</table:table-row>", len(content) // 2) + 18]
    path = make_ods(tmp_path / "cut.ods", cut)
    with pytest.raises(StratPDInputError, match='cannot read "cut.ods"'):
        read_table(path)


@pytest.mark.parametrize(
    "markup",
    [
        "<!-- </table:table-row><table:table-row> -->",
        "<![CDATA[ x ]]>",
        "<?pi </table:table> ?>",
    ],
)
def test_markup_that_could_hide_tags_is_refused(tmp_path, markup, calamine_must_not_open):
    rows = data_rows(5)
    rows[2] = rows[2].replace("<text:p>", "<text:p>" + markup, 1)
    path = make_ods(tmp_path / "m.ods", HEAD + table("Data", rows) + TAIL)
    with pytest.raises(StratPDInputError, match='cannot read "m.ods"'):
        read_table(path)


def test_doctype_is_refused(tmp_path, calamine_must_not_open):
    content = HEAD.replace("?>", '?><!DOCTYPE x [<!ENTITY a "aaaa">]>', 1)
    path = make_ods(tmp_path / "d.ods", content + table("Data", data_rows(5)) + TAIL)
    with pytest.raises(StratPDInputError, match='cannot read "d.ods"'):
        read_table(path)


def test_a_row_end_hidden_in_an_attribute_cannot_split_a_padded_row(tmp_path):
    # Not well-formed ("<" in a value), but calamine would take it as one row of 16,381 columns;
    # a scan trusting byte positions would see rows of 2 columns.  Refused either way.
    hidden = '<table:table-cell office:string-value="x&gt;</table:table-row><table:table-row>"/>'
    padded = [
        row(num(1), *([gap(1000), hidden] * 16), num(1), rest=0) for _ in range(300)
    ]
    path = make_ods(tmp_path / "h.ods", HEAD + table("Data", padded) + TAIL)
    with pytest.raises(StratPDInputError):
        read_table(path)


def test_single_quoted_repeat_is_counted(tmp_path, calamine_must_not_open):
    # Valid XML; a scan that only knew double quotes missed these 16,380 columns.
    padded = [
        row(num(i), "<table:table-cell table:number-columns-repeated='16380'/>", num(1), rest=0)
        for i in range(100)
    ]
    path = make_ods(tmp_path / "q.ods", HEAD + table("Data", padded) + TAIL)
    with pytest.raises(StratPDInputError, match="16,382 columns"):
        read_table(path)


def test_a_byte_order_mark_before_the_declaration_is_fine(tmp_path):
    content = "\ufeff" + HEAD + table("Data", data_rows(5)) + TAIL
    assert read_table(make_ods(tmp_path / "bom.ods", content)).shape == (5, 2)


def sparse_table(name: str, side: int = 1000) -> str:
    """A table spanning side x side cells with three filled cells: at 1,000 it is at the
    per-sheet limit (grids up to a million cells are never called padding)."""
    rows = [
        row(num(1), gap(side - 2), num(2), rest=0),
        f'<table:table-row table:number-rows-repeated="{side - 2}"><table:table-cell/>'
        "</table:table-row>",
        row(num(3), rest=0),
    ]
    return table(name, rows)


def test_many_sheets_each_under_the_limit_are_refused_together(tmp_path, calamine_must_not_open):
    # calamine builds all 300 on opening: this 3 kB file took 22 s and 9.4 GB before.
    junk = "".join(sparse_table(f"S{i}") for i in range(300))
    path = make_ods(tmp_path / "many.ods", HEAD + table("Data", data_rows(5)) + junk + TAIL)
    with pytest.raises(StratPDInputError) as info:
        read_table(path, sheet="Data")
    assert str(info.value) == (
        'the 301 sheets of "many.ods" span 300,000,012 cells together but hold only 912; '
        "delete the sheets and stray cells you do not need (limit 50,000,000 cells) and save again"
    )


def test_a_few_sheets_under_the_limit_and_a_normal_workbook_still_read(tmp_path):
    # A notes sheet with a few cells far apart, beside the data: 250,000 cells, 3 filled.
    content = HEAD + table("Data", data_rows(5)) + sparse_table("Notes", 500) + TAIL
    frame = read_table(make_ods(tmp_path / "two.ods", content), sheet="Data")
    assert frame["y"].tolist() == [2, 4, 6, 8, 10]
    tables = "".join(table(f"T{i}", data_rows(50)) for i in range(20))
    frame = read_table(make_ods(tmp_path / "twenty.ods", HEAD + tables + TAIL), sheet="T19")
    assert len(frame) == 50 and frame["y"].iloc[-1] == 100


def test_two_tables_with_one_name_are_refused(tmp_path):
    # calamine keeps the last under that name, so the first would be built but never measured.
    padded = [row(gap(16_380), num(1), rest=0) for _ in range(100)]
    content = HEAD + table("Data", padded) + table("Data", data_rows(5)) + TAIL
    with pytest.raises(StratPDInputError, match="damaged"):
        read_table(make_ods(tmp_path / "dup.ods", content))


@pytest.mark.parametrize(("limit", "refused"), [(7, True), (8, False)])
def test_a_sheet_measured_as_built_counts_every_row_and_column(
    tmp_path, monkeypatch, limit, refused
):
    # calamine's total_height/total_width are the last row and column indexes, not counts:
    # a 4 x 2 table is 8 cells.  The scan is made to miss the sheet to reach that check.
    monkeypatch.setattr(files, "ods_extents", lambda book, repeats=None: {})
    monkeypatch.setattr(files, "MAX_GRID_CELLS", limit)
    path = make_ods(tmp_path / "t.ods", HEAD + table("Data", data_rows(3)) + TAIL)
    if refused:
        with pytest.raises(StratPDInputError, match="spans 4 rows x 2 columns"):
            read_table(path)
    else:
        assert read_table(path)["y"].tolist() == [2, 4, 6]


def test_rows_longer_than_a_buffer_stay_whole_and_take_the_fast_path(
    tmp_path, monkeypatch, backend
):
    # 3,000 filled cells a row is ~390 kB, more than one 256 kB read: cut mid-row, most of
    # the XML would be scanned tag by tag in Python, many times slower.
    rows = [row(*[num(i + j) for j in range(3000)]) for i in range(4)]
    content = (HEAD + table("Wide", rows) + TAIL).encode()
    slow: list[int] = []
    tags = _workbook_scan._OdsScan._tags
    monkeypatch.setattr(_workbook_scan._OdsScan, "_tags", lambda self, chunk: (
        slow.append(len(chunk)), tags(self, chunk))[1])
    path = make_ods(tmp_path / "wide.ods", content)
    with zipfile.ZipFile(path) as book:
        assert _workbook_scan.ods_extents(book)["Wide"][:3] == (4, 3000, 12000)
    assert sum(slow) < len(content) / 3  # the chunk with the table's head, and the end


# ------------------------------------------------------------------ reading ahead in a thread


def read_ahead_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name == "stratpd-xl-read-ahead"]


def test_a_refusal_mid_file_stops_the_reading_thread(tmp_path):
    rows = data_rows(20_000)  # several buffers, so the thread is still reading at the refusal
    rows.insert(2_000, "<!-- hidden -->")
    path = make_ods(tmp_path / "m.ods", HEAD + table("Data", rows) + TAIL)
    with zipfile.ZipFile(path) as book, pytest.raises(ValueError, match="markup"):
        _workbook_scan.ods_extents(book)
    assert read_ahead_threads() == []


@pytest.mark.parametrize("threads", [True, False])
def test_a_damaged_stream_fails_the_same_with_or_without_the_thread(tmp_path, monkeypatch, threads):
    path = make_ods(tmp_path / "d.ods", HEAD + table("Data", data_rows(20_000)) + TAIL)
    with zipfile.ZipFile(path) as book:
        info = book.getinfo("content.xml")
    data = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    data[start + info.compress_size // 2] ^= 0xFF  # one flipped byte mid-stream
    path.write_bytes(bytes(data))
    monkeypatch.setattr(_backend, "can_start_threads", lambda: threads)
    with zipfile.ZipFile(path) as book, pytest.raises((zipfile.BadZipFile, zlib.error)):
        _workbook_scan.ods_extents(book)
    assert read_ahead_threads() == []


def test_a_small_file_is_scanned_without_the_compiled_scan(tmp_path, monkeypatch):
    # Loading numba (and, the first time ever, compiling the scan) costs more than the numpy
    # scan of a small content.xml.
    def must_not_run(chunk):
        raise AssertionError("the compiled scan ran on a small file")

    monkeypatch.setattr(_scan_kernels, "ods_rows", must_not_run)
    path = make_ods(tmp_path / "s.ods", HEAD + table("Data", data_rows(50)) + TAIL)
    with zipfile.ZipFile(path) as book:
        assert _workbook_scan.ods_extents(book)["Data"][:3] == (51, 2, 102)


def test_an_empty_content_xml_is_refused_in_one_sentence(tmp_path):
    path = make_ods(tmp_path / "empty.ods", b"")
    with pytest.raises(StratPDInputError, match='cannot read "empty.ods"'):
        read_table(path)


def test_a_small_file_is_scanned_without_loading_numba(tmp_path):
    path = make_ods(tmp_path / "s.ods", HEAD + table("Data", data_rows(50)) + TAIL)
    code = (
        "import sys, zipfile; from stratpd_xl.input import _workbook_scan\n"
        f"with zipfile.ZipFile({str(path)!r}) as book: _workbook_scan.ods_extents(book)\n"
        "print('numba' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------- repeated rows


def _repeated_row(tmp_path: Path, times: int, *, width: int = 3) -> Path:
    """A header, one row written once with number-rows-repeated=``times``, a last row."""
    rows = [row(*[txt(f"c{j}") for j in range(width)])]
    rows += [row(*[num(j + 1) for j in range(width)], repeat=times)]
    rows += [row(*[num(-1)] * width)]
    return make_ods(tmp_path / f"rep{times}.ods", HEAD + table("Data", rows) + TAIL)


def test_a_row_repeated_past_the_sheet_s_rows_is_named_not_called_stray(
    tmp_path, backend, capsys, monkeypatch
):
    # Called "stray cells" (the row's 3 cells counted once); read, calamine keeps 1,048,576
    # rows and silently drops the rest, the last row included.
    path = _repeated_row(tmp_path, 3_000_000)
    with monkeypatch.context() as patch:
        # Refused before calamine opens the file (it builds every table then).
        opened = []
        patch.setattr(python_calamine.CalamineWorkbook, "from_path",
                      lambda *a, **k: opened.append(a) or 1 / 0)
        with pytest.raises(StratPDInputError) as exc:
            read_table(path)
        assert not opened
    said = str(exc.value)
    assert "stray" not in said
    assert "3,000,002 rows long (row 2 is written once and repeated 3,000,000 times" in said
    assert "1,048,576 rows a sheet holds" in said and "keep only the rows" in said
    from stratpd_xl.cli import main

    assert main(["curve", str(path), "-t", "c2", "-f", "c0"]) == 2
    err = capsys.readouterr().err
    assert "repeated 3,000,000 times" in err and "Traceback" not in err


def test_a_row_repeated_within_the_bounds_is_read_whole(tmp_path, backend):
    # 400,000 x 3 cells over a million: once refused as "stray cells" (3 cells counted).
    frame = read_table(_repeated_row(tmp_path, 400_000))
    assert len(frame) == 400_001
    assert (frame.iloc[:-1] == [1, 2, 3]).all().all() and list(frame.iloc[-1]) == [-1] * 3


def test_a_wide_row_repeated_past_the_cell_limit_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "MAX_GRID_CELLS", 1_000_000)
    with pytest.raises(StratPDInputError) as exc:
        read_table(_repeated_row(tmp_path, 300_000, width=4))
    assert "over the limit of 1,000,000 cells" in str(exc.value)
    assert "row 2 is written once and repeated 300,000 times" in str(exc.value)


@pytest.mark.parametrize("times", [1, 7, 5_000])
def test_repeated_filled_cells_count_as_the_cells_they_stand_for(tmp_path, times, backend):
    content = HEAD + table("Data", [
        row(txt("a"), txt("b")), row(num(1, repeat=times), num(2), repeat=3), row(num(5)),
    ]) + TAIL
    extents = _workbook_scan.ods_extents(zipfile.ZipFile(make_ods(tmp_path / "r.ods", content)))
    assert extents["Data"][:3] == (5, times + 1, 2 + 3 * (times + 1) + 1)
    assert slow_extents(content.encode())["Data"][:3] == extents["Data"][:3]
