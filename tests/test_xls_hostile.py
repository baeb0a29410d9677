"""read_table on hostile .xls files: each is measured before python-calamine opens it.

On main (before the scan) these made calamine abort the process asking for 44 TB or 137 GB,
loop until memory ran out, or build 9.5 GB of grid for a 52 kB file; now each is one
sentence (exit 2), and a real .xls written by LibreOffice reads as before.
"""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest
import python_calamine

from stratpd_xl.cli import main
from stratpd_xl.errors import StratPDInputError
from stratpd_xl.input._xls_scan import XlsDamaged, xls_sheets
from stratpd_xl.input.files import read_table
from tests import xls_craft as X
from tests.office import soffice

DAMAGED = "as an Excel workbook"


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def calamine_extents(path: Path) -> dict[str, tuple[int, int]]:
    book = python_calamine.CalamineWorkbook.from_path(str(path))
    try:
        out = {}
        for name in book.sheet_names:
            ws = book.get_sheet_by_name(name)
            rows = ws.to_python(skip_empty_area=False)
            out[name] = (len(rows), max((len(r) for r in rows), default=0))
        return out
    finally:
        book.close()


def test_scan_measures_the_grid_calamine_builds(tmp_path):
    # Cells of every kind the scan knows, a blank far away (calamine drops blanks), an embedded
    # substream whose cells calamine skips, a formula whose text value follows it.
    formula = X.record(0x0006, struct.pack("<HHH", 7, 4, 0) + b"\0" * 8 + b"\0" * 6 + b"\0\0")
    string = X.record(0x0207, struct.pack("<HB", 1, 0) + b"a")
    mulrk = X.record(0x00BD, struct.pack("<HH", 9, 1) + struct.pack("<HI", 0, 2 << 2) * 3
                     + struct.pack("<H", 3))
    chart = [X.bof(True), X.number(900, 90, 1.0), X.record(0x000A)]
    path = write(tmp_path / "kinds.xls", X.compound(X.workbook({
        "Data": X.table(5) + [X.blank(500, 200), formula, string, mulrk, *chart],
        "Small": X.table(2),
    })))
    built = calamine_extents(path)
    measured = {s.name: (s.height, s.width) for s in xls_sheets(path)}
    assert measured == built == {"Data": (10, 5), "Small": (3, 2)}
    assert read_table(path, sheet="Small").shape == (2, 2)


def test_xls_written_by_libreoffice_reads_like_its_csv(tmp_path):
    csv = tmp_path / "t.csv"
    csv.write_text("x,y,kind\n" + "".join(f"{i},{i * 0.5},k{i % 3}\n" for i in range(400)))
    subprocess.run(
        [soffice(), f"-env:UserInstallation=file://{tmp_path / 'profile'}", "--headless",
         "--convert-to", "xls", str(csv), "--outdir", str(tmp_path)],
        check=True, capture_output=True, timeout=120,
    )
    xls = tmp_path / "t.xls"
    (sheet,) = xls_sheets(xls)
    assert (sheet.height, sheet.width, sheet.cells) == (401, 3, 1203)
    read = read_table(xls)
    assert read.equals(read_table(csv))


def overlapping(count: int = 40) -> bytes:
    """Every sheet starts at a cell record of the first one: calamine reads the rest of the
    first sheet once per sheet (quadratic time in a large file)."""
    sheets = {f"S{i}": X.table(50) if i == 0 else [] for i in range(count)}
    first = struct.unpack_from("<I", X.workbook(sheets), len(X.bof(False)) + 4)[0]
    cells = first + len(X.bof(True))
    return X.workbook(sheets, positions=[cells + 18 * i for i in range(count)])


def test_sheets_pointing_into_each_other_are_refused(tmp_path):
    path = write(tmp_path / "overlap.xls", X.compound(overlapping()))
    with pytest.raises(XlsDamaged, match="sheets overlap"):
        xls_sheets(path)
    assert len(xls_sheets(write(tmp_path / "few.xls", X.compound(overlapping(2))))) == 2


def hostile(tmp_path: Path, case: str) -> Path:
    small = X.workbook({"Data": X.table(5)})
    builds = {
        # calamine reserves (last row - first row) x columns with wrapping u32 arithmetic:
        # 4 billion rows, then aborts asking for 44 TB.
        "dimensions": lambda: X.compound(
            X.workbook({"Data": [X.dimensions(10, 5, 0, 256), *X.table(5)]})),
        # One cell at row 65,536, column 256: 16.7 million cells for 13 (5.7 s, 1.3 GB).
        "corner": lambda: X.compound(X.workbook({"Data": [*X.table(5), X.number(65535, 255, 1)]})),
        # Column 65,536, past BIFF8's 256: calamine aborted asking for 137 GB.
        "column": lambda: X.compound(X.workbook({"Data": [*X.table(5), X.number(99, 65535, 1)]})),
        # 300 sheets of just under a million cells each: 9.5 GB from a 52 kB file.
        "sheets": lambda: X.compound(X.workbook(
            {f"S{i}": [*X.table(2), X.number(3899, 255, 1)] for i in range(300)})),
        # The directory's chain points to itself: calamine read it until memory ran out.
        "fat cycle": lambda: X.compound(small, fat_edit={1: 1}),
        # A 3 GB stream whose chain loops back: calamine copied it to 3 GB.
        "stream size": lambda: X.compound(small, size=3 * 2**30, fat_edit={9: 2}),
        # The DIFAT chain starts at the FAT sector, whose last entry names itself.
        "difat cycle": lambda: X.compound(
            small, header_edit={68: struct.pack("<I", 0)}, fat_edit={127: 0}),
        "fat count": lambda: X.compound(small, header_edit={44: struct.pack("<I", 2**32 - 1)}),
        "truncated": lambda: X.compound(X.workbook({"Data": X.table(400)}))[:3000],
        "overlap": lambda: X.compound(overlapping()),
    }
    return write(tmp_path / f"{case.replace(' ', '_')}.xls", builds[case]())


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("dimensions", r'declares 1,099,511,626,496 cells, more than an Excel 97-2003 sheet'),
        ("corner", r"spans 65,536 rows x 256 columns but holds only 13 cells"),
        ("column", r"spans 100 rows x 65,536 columns"),
        ("sheets", r"the 300 sheets of .* span 299,520,000 cells together but hold only 2,100"),
        ("fat cycle", DAMAGED),
        ("stream size", DAMAGED),
        ("difat cycle", DAMAGED),
        ("fat count", DAMAGED),
        ("truncated", DAMAGED),
        ("overlap", DAMAGED),
    ],
)
def test_hostile_xls_is_one_sentence(tmp_path, case, message):
    path = hostile(tmp_path, case)
    with pytest.raises(StratPDInputError, match=message) as exc:
        read_table(path)
    assert "\n" not in str(exc.value)


def test_hostile_xls_exits_2_on_the_command_line(tmp_path, capsys):
    path = hostile(tmp_path, "column")
    code = main(["curve", str(path), "--target", "y", "--feature", "x"])
    err = capsys.readouterr().err
    assert code == 2 and "65,536 columns" in err and "Traceback" not in err
