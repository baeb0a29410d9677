"""read_table on hostile input: bombs, padding, endless files, damaged XML, huge sheet lists.

Each case once made the reader eat gigabytes, block, or exit 1 with "internal error"; now it is
one sentence (exit 2 on the command line).  Bombs are built small with the limits lowered.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import openpyxl
import pytest

from stratpd_xl.cli import main
from stratpd_xl.errors import StratPDInputError
from stratpd_xl.input import _workbook_scan, files
from stratpd_xl.input.files import read_table


def make_xlsx(path: Path, rows: int = 5) -> Path:
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Data"
    ws.append(["x", "y"])
    for i in range(rows):
        ws.append([i, 2 * i])
    book.save(path)
    return path


def rewrite_member(src: Path, dst: Path, member: str, data: bytes | None) -> Path:
    """Copy a zip, replacing (or with ``data=None`` dropping) one member."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            if info.filename != member:
                zout.writestr(info, zin.read(info.filename))
        if data is not None:
            zout.writestr(member, data)
    return dst


def one_sentence(exc: pytest.ExceptionInfo[StratPDInputError]) -> str:
    text = str(exc.value)
    assert text and "\n" not in text
    return text


def cli_code(path: Path, capsys) -> tuple[int, str]:
    code = main(["curve", str(path), "--target", "y", "--feature", "x"])
    return code, capsys.readouterr().err


# --------------------------------------------------------------------------- endless input


def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with pytest.raises(StratPDInputError, match="not a regular file") as exc:
        read_table(fifo)
    one_sentence(exc)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_device_named_csv_is_refused(tmp_path, device, capsys):
    if not os.path.exists(device):
        pytest.skip(f"{device} missing")
    link = tmp_path / "data.csv"
    link.symlink_to(device)
    with pytest.raises(StratPDInputError, match="not a regular file"):
        read_table(link)
    code, err = cli_code(link, capsys)
    assert code == 2 and "not a regular file" in err


def test_file_over_the_size_limit_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "big.csv"
    path.write_text("x,y\n" + "1,2\n" * 100)
    assert read_table(path).shape == (100, 2)
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 200)
    with pytest.raises(StratPDInputError, match="over the 200 bytes limit") as exc:
        read_table(path)
    one_sentence(exc)


# --------------------------------------------------------------------------- bombs and padding


def test_highly_compressed_member_is_refused_before_parsing(tmp_path, capsys):
    good = make_xlsx(tmp_path / "good.xlsx")
    # 8 MB of one repeated row packs ~1000x: the shape of a decompression bomb.
    sheet = zipfile.ZipFile(good).read("xl/worksheets/sheet1.xml")
    filler = b"<row><c><v>1</v></c></row>" * 300_000
    bomb = rewrite_member(
        good,
        tmp_path / "bomb.xlsx",
        "xl/worksheets/sheet1.xml",
        sheet.replace(b"</sheetData>", filler + b"</sheetData>"),
    )
    assert bomb.stat().st_size < 200_000
    with pytest.raises(StratPDInputError, match=r"unpacks to 7 MB \(packed over 200x") as exc:
        read_table(bomb)
    one_sentence(exc)
    code, err = cli_code(bomb, capsys)
    assert code == 2 and "unpacks to" in err


def test_total_unpacked_size_is_capped(tmp_path, monkeypatch):
    path = make_xlsx(tmp_path / "book.xlsx")
    monkeypatch.setattr(files, "MAX_UNZIPPED_BYTES", 1000)
    with pytest.raises(StratPDInputError, match="over the 1000 bytes limit"):
        read_table(path)


def test_xlsx_padded_to_column_xfd_is_refused(tmp_path, capsys):
    book = openpyxl.Workbook()
    ws = book.active
    ws.append(["x", "y"])
    for r in range(2, 102):
        ws.cell(row=r, column=1, value=r)
        ws.cell(row=r, column=2, value=2 * r)
        ws.cell(row=r, column=16384, value=1)  # XFD: 100 rows now span 1.6 million cells
    path = tmp_path / "padded.xlsx"
    book.save(path)
    with pytest.raises(StratPDInputError, match="16,384 columns") as exc:
        read_table(path)
    one_sentence(exc)
    code, err = cli_code(path, capsys)
    assert code == 2 and "stray cells" in err


def test_xlsx_with_a_far_away_row_is_refused_but_a_real_table_is_not(tmp_path, monkeypatch):
    path = make_xlsx(tmp_path / "book.xlsx", rows=50)
    assert len(read_table(path)) == 50
    monkeypatch.setattr(files, "MAX_GRID_CELLS", 100)
    with pytest.raises(StratPDInputError, match="51 rows x 2 columns"):
        read_table(path)


def test_ods_padded_with_repeated_empty_cells_is_refused(tmp_path):
    from .test_cli import _lo_convert

    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Data"
    ws.append(["x", "y"])
    for r in range(2, 102):
        ws.cell(row=r, column=1, value=r)
        ws.cell(row=r, column=2, value=2 * r)
        ws.cell(row=r, column=16384, value=1)
    src = tmp_path / "padded.xlsx"
    book.save(src)
    ods = _lo_convert(src, "ods", tmp_path / "ods", tmp_path / "profile")
    assert ods.stat().st_size < 100_000
    with pytest.raises(StratPDInputError, match="stray cells") as exc:
        read_table(ods)
    one_sentence(exc)


def test_ods_trailing_repeats_written_by_libreoffice_are_not_padding(tmp_path):
    from .test_cli import _lo_convert

    ods = _lo_convert(make_xlsx(tmp_path / "t.xlsx", rows=3), "ods", tmp_path, tmp_path / "p")
    # 4 rows x 2 columns used; LibreOffice packs the two zeros of row 2 into one repeated
    # cell, which counts as the two cells it stands for.
    assert _workbook_scan.ods_extents(zipfile.ZipFile(ods))["Data"][:3] == (4, 2, 8)
    assert len(read_table(ods)) == 3


# --------------------------------------------------------------------------- damaged files


def test_malformed_sheet_xml_is_bad_input_not_a_bug(tmp_path, capsys):
    good = make_xlsx(tmp_path / "good.xlsx")
    xml = zipfile.ZipFile(good).read("xl/worksheets/sheet1.xml")
    bad = rewrite_member(
        good, tmp_path / "bad.xlsx", "xl/worksheets/sheet1.xml", xml[: len(xml) // 2]
    )
    with pytest.raises(StratPDInputError, match='cannot read "bad.xlsx"') as exc:
        read_table(bad)
    one_sentence(exc)
    code, err = cli_code(bad, capsys)
    assert code == 2 and "internal error" not in err


def test_malformed_ods_content_is_bad_input(tmp_path, capsys):
    from .test_cli import _lo_convert

    ods = _lo_convert(make_xlsx(tmp_path / "t.xlsx"), "ods", tmp_path, tmp_path / "p")
    xml = zipfile.ZipFile(ods).read("content.xml")
    bad = rewrite_member(ods, tmp_path / "bad.ods", "content.xml", xml[: len(xml) // 2])
    with pytest.raises(StratPDInputError, match='cannot read "bad.ods"'):
        read_table(bad)
    code, err = cli_code(bad, capsys)
    assert code == 2 and "internal error" not in err


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("text.xlsx", b"x,y\n1,2\n"),
        ("text.ods", b"x,y\n1,2\n"),
        ("truncated.xlsx", b"PK\x03\x04\x14\x00\x00\x00"),
    ],
)
def test_wrong_extension_or_corrupt_zip_is_one_sentence(tmp_path, name, data, capsys):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(StratPDInputError, match="cannot read") as exc:
        read_table(path)
    one_sentence(exc)
    assert cli_code(path, capsys)[0] == 2


def test_xlsx_content_named_ods_is_one_sentence(tmp_path):
    path = tmp_path / "book.ods"
    path.write_bytes(make_xlsx(tmp_path / "book.xlsx").read_bytes())
    with pytest.raises(StratPDInputError, match='cannot read "book.ods"'):
        read_table(path)


# --------------------------------------------------------------------------- many sheets


def test_sheet_not_found_lists_at_most_ten_names(tmp_path):
    book = openpyxl.Workbook()
    book.active.title = "S0"
    for i in range(1, 40):
        book.create_sheet(f"S{i}")
    path = tmp_path / "many.xlsx"
    book.save(path)
    with pytest.raises(StratPDInputError, match=r"S0, S1, .*S9 \.\.\. and 30 more") as exc:
        read_table(path, sheet="nope")
    assert "S10" not in one_sentence(exc)


# --------------------------------------------------------------------------- claimed sizes


def _shared_strings_book(tmp_path: Path, sst_tag: bytes, name: str = "sst.xlsx") -> Path:
    """A workbook (text cells in its shared-string table) whose <sst> tag is ``sst_tag``."""
    import re

    import xlsxwriter

    good = tmp_path / "strings.xlsx"
    book = xlsxwriter.Workbook(good)
    sheet = book.add_worksheet("Data")
    sheet.write_row(0, 0, ["x", "y", "name"])
    for i in range(5):
        sheet.write_row(i + 1, 0, [i, 2 * i, f"n{i}"])
    book.close()
    xml = zipfile.ZipFile(good).read("xl/sharedStrings.xml")
    xml = re.sub(rb"<sst [^>]*>", sst_tag, xml)
    return rewrite_member(good, tmp_path / name, "xl/sharedStrings.xml", xml)


def _cli_in_child(path: Path) -> subprocess.CompletedProcess:
    """The command in a process of its own: calamine aborted the whole process on these."""
    return subprocess.run(
        [sys.executable, "-m", "stratpd_xl.cli", "curve", str(path), "-t", "y", "-f", "x"],
        capture_output=True, text=True, timeout=120,
    )


NS = b'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'


def test_a_shared_string_count_claimed_is_checked_before_calamine_reserves_it(tmp_path):
    # calamine reserved 24 bytes a claimed string: "memory allocation of 103079215080 bytes
    # failed" and a Rust backtrace (signal 6), which inside Excel takes the formulas with it.
    path = _shared_strings_book(tmp_path, b"<sst " + NS + b' count="8" uniqueCount="4294967295">')
    proc = _cli_in_child(path)  # first: a regression aborts this child, not the tests
    assert proc.returncode == 2, proc.stderr[-500:]
    assert "open it and save it again" in proc.stderr and "\n" not in proc.stderr.strip()
    with pytest.raises(StratPDInputError, match="claims 4,294,967,295 shared strings but holds 8"):
        read_table(path)


@pytest.mark.parametrize(
    "tag",
    [
        # A prefix, single quotes, spaces around "=", a character reference inside the number.
        b"<x:sst xmlns:x='http://schemas.openxmlformats.org/spreadsheetml/2006/main' "
        b"uniqueCount = '4294967295'>",
        b"<sst " + NS + b' uniqueCount="&#52;294967295">',
    ],
)
def test_the_shared_string_claim_is_found_however_it_is_spelt(tmp_path, tag):
    with pytest.raises(StratPDInputError, match="claims 4,294,967,295 shared strings"):
        read_table(_shared_strings_book(tmp_path, tag))


def test_a_shared_string_claim_near_the_truth_is_read(tmp_path):
    # A writer off by a little costs calamine at most 24 MB: read, not refused.
    claim = b'uniqueCount="%d"' % (_workbook_scan.SHARED_STRINGS_TRUSTED + 5)
    frame = read_table(_shared_strings_book(tmp_path, b"<sst " + NS + b" " + claim + b">"))
    assert list(frame["name"]) == [f"n{i}" for i in range(5)]


def test_a_shared_string_tag_hidden_after_a_megabyte_is_a_damaged_file(tmp_path):
    # Behind a comment (random, so that it does not pack like a bomb), calamine still finds it.
    tag = b"<!--" + os.urandom(2**19).hex().encode() + b"-->" + b"<sst " + NS
    tag += b' uniqueCount="4294967295">'
    with pytest.raises(StratPDInputError, match="damaged"):
        read_table(_shared_strings_book(tmp_path, tag))


def test_a_sheet_too_big_but_not_padded_is_not_called_stray_cells(tmp_path):
    # 60 million real cells (a row repeated 3 million times) are no stray cells.
    big = r"3,000,001 rows x 20 columns \(60,000,020 cells\), over the limit"
    with pytest.raises(StratPDInputError, match=big) as exc:
        files._check_grid(tmp_path / "big.ods", "Data", 3_000_001, 20, 60_000_020)
    assert "stray" not in str(exc.value)
    with pytest.raises(StratPDInputError, match="stray cells"):
        files._check_grid(tmp_path / "big.ods", "Data", 3_000_001, 20, 40)
