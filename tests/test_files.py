"""read_table: text dialects and encodings, .xlsx and .ods workbooks, and the bad-file sentences."""

from __future__ import annotations

import csv
import datetime as dt
import io
import sys
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from stratpd_xl.cli import main
from stratpd_xl.errors import StratPDInputError
from stratpd_xl.input import files
from stratpd_xl.input.files import read_table, sniff_text
from stratpd_xl.input.sheet import frame_from_cells


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


# --------------------------------------------------------------------------- text files


def test_plain_comma_csv(tmp_path):
    path = write(tmp_path / "a.csv", "price,rooms,city\n100.5,3,Paris\n200,4,Lyon\n")
    frame = read_table(path)
    assert list(frame.columns) == ["price", "rooms", "city"]
    assert frame["price"].tolist() == [100.5, 200.0]
    assert frame["rooms"].dtype == np.int64
    assert frame.attrs["source"]["delimiter"] == ","


def test_semicolon_csv_with_decimal_comma_is_detected(tmp_path):
    text = "Preis;Fläche;Stadt\n1,5;1.234,5;Köln\n2,25;80;Berlin\n-3,0;1.000;Bonn\n"
    frame = read_table(write(tmp_path / "de.csv", text))
    assert frame["Preis"].tolist() == [1.5, 2.25, -3.0]
    # Only a file-wide decision reads "1.000" as a thousand: alone it would be ambiguous.
    assert frame["Fläche"].tolist() == [1234.5, 80.0, 1000.0]
    assert frame.attrs["source"]["delimiter"] == ";"
    assert frame.attrs["source"]["decimal"] == ","


def test_decimal_option_overrides_detection(tmp_path):
    path = write(tmp_path / "amb.csv", "a;b\n1.234;x\n2.500;y\n")
    assert read_table(path)["a"].tolist() == [1.234, 2.5]
    assert read_table(path, decimal=",")["a"].tolist() == [1234, 2500]


def test_tab_separated_text(tmp_path):
    path = write(tmp_path / "t.txt", "x\ty\tlabel\n1.5\t2\ta, b\n3\t4\tc\n")
    frame = read_table(path)
    assert list(frame.columns) == ["x", "y", "label"]
    assert frame["label"].tolist() == ["a, b", "c"]
    assert frame.attrs["source"]["delimiter"] == "\t"


def test_quoted_fields_with_delimiters_and_line_breaks(tmp_path):
    text = 'name,value\n"Smith, J.",1.5\n"two\nlines",2\n"say ""hi""",3\n'
    frame = read_table(write(tmp_path / "q.csv", text))
    assert frame["name"].tolist() == ["Smith, J.", "two\nlines", 'say "hi"']
    assert frame["value"].tolist() == [1.5, 2.0, 3.0]


def test_cp1252_file_with_accents(tmp_path):
    path = write(tmp_path / "w.csv", "café;prix\nété;1,5\nhiver;2,5\n", encoding="cp1252")
    frame = read_table(path)
    assert list(frame.columns) == ["café", "prix"]
    assert frame["café"].tolist() == ["été", "hiver"]
    assert frame["prix"].tolist() == [1.5, 2.5]
    assert frame.attrs["source"]["encoding"] == "cp1252"


def test_german_excel_csv_export_with_euros_percents_and_dates(tmp_path):
    text = (
        "Datum;Umsatz;Filiale;Rabatt\r\n31.01.2024;1.234,50 €;Köln;10 %\r\n"
        "01.02.2024;980,00 €;Bonn;5 %\r\n02.02.2024;-12,5 €;Köln;0 %\r\n"
    )
    frame = read_table(write(tmp_path / "export.csv", text, encoding="cp1252"))
    assert frame["Datum"].tolist() == list(
        pd.to_datetime(["2024-01-31", "2024-02-01", "2024-02-02"])
    )
    assert frame["Umsatz"].tolist() == [1234.5, 980.0, -12.5]
    assert frame["Filiale"].tolist() == ["Köln", "Bonn", "Köln"]
    assert frame["Rabatt"].tolist() == pytest.approx([0.10, 0.05, 0.0])


def test_utf8_with_bom(tmp_path):
    path = write(tmp_path / "b.csv", "price,città\n1,Tórino\n2,Milano\n", encoding="utf-8-sig")
    frame = read_table(path)
    assert list(frame.columns) == ["price", "città"]  # no "\ufeffprice"
    assert frame.attrs["source"]["encoding"] == "utf-8"


def test_utf16_unicode_text_from_excel(tmp_path):
    path = write(tmp_path / "u.txt", "größe\tpreis\n1,5\t10\n2,5\t20\n", encoding="utf-16")
    frame = read_table(path)
    assert frame["größe"].tolist() == [1.5, 2.5]


def test_encoding_option(tmp_path):
    path = write(tmp_path / "l.csv", "name,n\nÅse,1\nØyvind,2\n", encoding="latin-1")
    assert read_table(path, encoding="latin-1")["name"].tolist() == ["Åse", "Øyvind"]


def test_excel_sep_line_names_the_delimiter(tmp_path):
    # Without the hint, "," would split these rows evenly too; the hint wins and is not a row.
    path = write(tmp_path / "s.csv", "sep=;\r\nname;pair\r\na;1,2\r\nb;3,4\r\n")
    frame = read_table(path)
    assert list(frame.columns) == ["name", "pair"]
    assert frame["pair"].tolist() == [1.2, 3.4]
    assert frame.attrs["source"]["delimiter"] == ";"


def test_single_column_file(tmp_path):
    frame = read_table(write(tmp_path / "one.csv", "price\n1.5\n2\n"))
    assert frame["price"].tolist() == [1.5, 2.0]


def test_excel_errors_in_a_csv_are_missing(tmp_path):
    frame = read_table(write(tmp_path / "e.csv", "x,y\n1,#N/A\n2,#DIV/0!\n3,4\n"))
    assert frame["y"].isna().tolist() == [True, True, False]


def test_a_csv_and_the_same_cells_give_the_same_table(tmp_path):
    rows = [["when", "price", "ok", "city"], ["2024-01-31", "1,234.5", "TRUE", "Köln"]]
    rows += [["2024-02-01", "7", "FALSE", ""], ["", "#N/A", "TRUE", "Paris"]]
    path = tmp_path / "same.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    from_file = read_table(path)
    from_cells = frame_from_cells(rows)
    pd.testing.assert_frame_equal(from_file, from_cells)


@pytest.mark.parametrize(
    ("text", "delimiter", "decimal"),
    [
        ("a,b\n1.5,2\n", ",", "."),
        ("a;b\n1,5;2\n", ";", ","),
        ("a;b\n1.5;2\n", ";", "."),
        ("a;b\n1;2\n", ";", None),  # nothing decides: the columns do
        ("a\tb\n1,5\t2\n", "\t", ","),
        ("a|b\n1|2\n", "|", None),
        ('a,b\n"1,5",2\n', ",", ","),  # quoted decimal comma in a comma file
        ('a,b\n"1,5",2.5\n', ",", None),  # and a decimal point beside it: each column
    ],
)
def test_sniff_text(text, delimiter, decimal):
    sniffed = sniff_text(text)
    assert {k: sniffed[k] for k in ("delimiter", "decimal")} == {
        "delimiter": delimiter, "decimal": decimal,
    }
    assert sniffed["comma_columns"] == (["a"] if decimal is None and delimiter == "," else [])


# --------------------------------------------------------------------------- workbooks


def make_xlsx(path: Path) -> Path:
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Data"
    ws.append(["price", "when", "flag", "city", None])
    ws.append([1.5, dt.datetime(2024, 1, 31), True, "Köln", None])
    ws.append(["#N/A", dt.datetime(2024, 2, 1), False, "Paris", None])
    ws.append([" 42 ", dt.datetime(2024, 2, 2), True, None, None])
    other = book.create_sheet("Prices 2025")
    other.append(["a", "b"])
    other.append([1, 2])
    book.save(path)
    return path


def test_xlsx_first_sheet_with_typed_cells(tmp_path):
    frame = read_table(make_xlsx(tmp_path / "book.xlsx"))
    assert list(frame.columns) == ["price", "when", "flag", "city"]
    assert frame["price"].tolist()[0] == 1.5 and frame["price"].tolist()[2] == 42.0
    assert pd.isna(frame["price"].iloc[1])
    assert pd.api.types.is_datetime64_any_dtype(frame["when"].dtype)
    assert frame["flag"].dtype == bool
    assert frame.attrs["source"] == {
        "path": str(tmp_path / "book.xlsx"),
        "format": "xlsx",
        "sheet": "Data",
    }


def test_xlsx_sheet_by_name_case_insensitive(tmp_path):
    path = make_xlsx(tmp_path / "book.xlsx")
    assert read_table(path, sheet="prices 2025")["b"].tolist() == [2]


def test_xlsx_missing_sheet_lists_the_sheets(tmp_path):
    path = make_xlsx(tmp_path / "book.xlsx")
    with pytest.raises(StratPDInputError) as info:
        read_table(path, sheet="Sheet1")
    assert (
        str(info.value) == 'sheet "Sheet1" not found in "book.xlsx"; sheets are: Data, Prices 2025'
    )


def test_xlsx_formula_is_read_as_its_value_never_as_formula_text(tmp_path):
    path = make_xlsx(tmp_path / "f.xlsx")
    book = openpyxl.load_workbook(path)
    book["Data"]["F1"] = "total"
    book["Data"]["F2"] = "=A2*2"
    book.save(path)
    frame = read_table(path)
    # openpyxl never calculates, so this formula has no stored value and reads as blank;
    # a workbook saved by Excel or LibreOffice stores the value and we read that instead.
    assert frame["total"].isna().all()


def test_xlsx_with_a_wrong_declared_used_range_is_read_in_full(tmp_path):
    import zipfile

    path = make_xlsx(tmp_path / "book.xlsx")
    bad = tmp_path / "bad.xlsx"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(bad, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                assert b'<dimension ref="A1:E4" />' in data
                data = data.replace(b'<dimension ref="A1:E4" />', b'<dimension ref="A1" />')
            dst.writestr(item, data)
    frame = read_table(bad)
    assert list(frame.columns) == ["price", "when", "flag", "city"]
    assert len(frame) == 3


def test_title_rows_above_the_table_are_skipped_with_a_note(tmp_path):
    book = openpyxl.Workbook()
    ws = book.active
    ws.append(["House prices 2024"])
    ws.append(["Source: land registry, all regions"])
    ws.append([])
    ws.append(["price", "area", "city"])
    ws.append([100_000, 50.5, "Leeds"])
    ws.append([250_000, 80, "York"])
    path = tmp_path / "titled.xlsx"
    book.save(path)
    frame = read_table(path)
    assert list(frame.columns) == ["price", "area", "city"]
    assert frame["price"].tolist() == [100_000, 250_000]
    assert frame.attrs["notes"][0] == (
        "skipped 2 title rows above the table (House prices 2024; Source: land registry, "
        "all regions)"
    )


def test_a_narrow_table_keeps_its_first_row_as_header(tmp_path):
    # Two columns: a one-cell first row is a header with a blank name, not a title.
    frame = read_table(write(tmp_path / "n.csv", "price,\n1,2\n3,4\n"))
    assert list(frame.columns) == ["price", "column 2"]
    assert frame.attrs["notes"] == []


def test_ods_with_sheets_and_types(tmp_path):
    path = tmp_path / "book.ods"
    first = pd.DataFrame(
        {
            "Preis": [1.5, 2.25, None, 4.0],
            "Datum": pd.to_datetime(["2024-01-31", "2024-02-01", "2024-02-02", "2024-02-03"]),
            "ok": [True, False, True, True],
            "Stadt": ["Köln", "Berlin", "Bonn", None],
        }
    )
    with pd.ExcelWriter(path, engine="odf") as writer:
        first.to_excel(writer, sheet_name="Daten", index=False)
        pd.DataFrame({"a": [1, 2]}).to_excel(writer, sheet_name="Zwei", index=False)
    frame = read_table(path)
    assert list(frame.columns) == ["Preis", "Datum", "ok", "Stadt"]
    assert frame["Preis"].tolist()[:2] == [1.5, 2.25] and pd.isna(frame["Preis"].iloc[2])
    assert pd.api.types.is_datetime64_any_dtype(frame["Datum"].dtype)
    assert frame["ok"].tolist() == [True, False, True, True]
    assert frame.attrs["source"]["sheet"] == "Daten"
    assert read_table(path, sheet="zwei")["a"].tolist() == [1, 2]
    with pytest.raises(
        StratPDInputError, match='sheet "Drei" not found in "book.ods"; sheets are: Daten, Zwei'
    ):
        read_table(path, sheet="Drei")


# --------------------------------------------------------------------------- bad files


def test_missing_file(tmp_path):
    with pytest.raises(StratPDInputError, match='file ".*nope.csv" not found; check the name'):
        read_table(tmp_path / "nope.csv")


def test_folder_instead_of_file(tmp_path):
    with pytest.raises(StratPDInputError, match="is a folder"):
        read_table(tmp_path)


@pytest.mark.parametrize(
    ("name", "phrase"),
    [
        ("data.json", 'unknown file type ".json"; use a .csv, .txt, .xlsx, .xls, .ods '
         "or .parquet file"),
        ("data", 'unknown file type "data"'),
        ("text.xls", 'cannot read "text.xls" as an Excel workbook'),
    ],
)
def test_unsupported_formats(tmp_path, name, phrase):
    path = write(tmp_path / name, "a,b\n1,2\n")
    with pytest.raises(StratPDInputError, match=phrase.replace(".", r"\.").replace("(", r"\(")):
        read_table(path)


def test_unreadable_file(tmp_path, monkeypatch):
    path = make_xlsx(tmp_path / "locked.xlsx")

    def denied(self, *args, **kwargs):
        # what a chmod 000 file or one locked by Excel on Windows gives (root ignores chmod)
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "open", denied)
    with pytest.raises(StratPDInputError, match='cannot open ".*locked.xlsx": Permission denied'):
        read_table(path)


def test_damaged_xlsx(tmp_path):
    path = tmp_path / "broken.xlsx"
    path.write_bytes(b"this is not a zip file")
    with pytest.raises(StratPDInputError, match='cannot read "broken.xlsx" as an Excel workbook'):
        read_table(path)


def test_damaged_ods(tmp_path):
    path = tmp_path / "broken.ods"
    path.write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(StratPDInputError, match='cannot read "broken.ods" as an OpenDocument'):
        read_table(path)


def test_binary_file_named_csv(tmp_path):
    path = tmp_path / "pic.csv"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(StratPDInputError, match="does not look like a text file"):
        read_table(path)


def test_csv_with_a_field_too_large_for_the_csv_module(tmp_path):
    path = write(tmp_path / "big.csv", 'a,b\n1,"' + "x" * 200_000 + '"\n')
    with pytest.raises(StratPDInputError, match='"big.csv" is not a readable CSV file'):
        read_table(path)


def test_unknown_encoding_name(tmp_path):
    path = write(tmp_path / "a.csv", "a,b\n1,2\n")
    with pytest.raises(StratPDInputError, match='unknown encoding "klingon"'):
        read_table(path, encoding="klingon")


def test_wrong_encoding(tmp_path):
    path = write(tmp_path / "a.csv", "name,n\nété,1\n", encoding="cp1252")
    with pytest.raises(StratPDInputError, match='"a.csv" is not valid utf-8 text'):
        read_table(path, encoding="utf-8")


def test_sheet_option_on_a_text_file(tmp_path):
    path = write(tmp_path / "a.csv", "a,b\n1,2\n")
    with pytest.raises(StratPDInputError, match="text file with no sheets; leave out --sheet"):
        read_table(path, sheet="Data")


def test_bad_decimal_option(tmp_path):
    path = write(tmp_path / "a.csv", "a,b\n1,2\n")
    with pytest.raises(StratPDInputError, match='decimal separator must be "." or ","'):
        read_table(path, decimal=";")


def test_empty_file(tmp_path):
    with pytest.raises(StratPDInputError, match='"empty.csv" is empty; it needs a header row'):
        read_table(write(tmp_path / "empty.csv", "\n\n"))


def test_header_only_file(tmp_path):
    with pytest.raises(StratPDInputError, match='"h.csv" has a header row but no data rows'):
        read_table(write(tmp_path / "h.csv", "price,rooms\n"))


def test_empty_sheet_names_the_sheet(tmp_path):
    path = make_xlsx(tmp_path / "book.xlsx")
    book = openpyxl.load_workbook(path)
    book.create_sheet("Blank")
    book.save(path)
    with pytest.raises(StratPDInputError, match='sheet "Blank" of "book.xlsx" is empty'):
        read_table(path, sheet="Blank")


# --------------------------------------------------------------------------- LibreOffice-made files


def test_workbooks_recalculated_by_libreoffice_give_formula_values_and_errors(tmp_path):
    from .test_cli import _lo_convert

    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Data"
    ws.append(["x", "double", "ratio", "label"])
    for i in range(1, 7):
        r = i + 1
        ws.append(
            [i, f"=A{r}*2", f"=A{r}/0" if i % 2 else f"=A{r}/2", f'=IF(A{r}>3,"big","small")']
        )
    src = tmp_path / "formulas.xlsx"
    book.save(src)
    # LibreOffice opens, calculates and saves: values next to formulas, as a user's file has.
    ods = _lo_convert(src, "ods", tmp_path / "ods", tmp_path / "profile")
    xlsx = _lo_convert(ods, "xlsx", tmp_path / "xlsx", tmp_path / "profile")
    for path in (ods, xlsx):
        frame = read_table(path)
        assert frame["double"].tolist() == [2, 4, 6, 8, 10, 12], path
        assert frame["ratio"].isna().tolist() == [True, False] * 3, path
        assert frame["ratio"].dropna().tolist() == [1.0, 2.0, 3.0], path
        assert frame["label"].tolist() == ["small"] * 3 + ["big"] * 3, path
        assert 'column "ratio": 3 error values (#DIV/0!) treated as missing' in frame.attrs["notes"]


def test_every_workbook_format_gives_the_same_table(tmp_path):
    """.xlsx, .xlsm, .xls and .ods made by LibreOffice from one workbook read alike.

    .xlsb is read by the same calamine reader but LibreOffice cannot write it, so no file here.
    """
    from .test_cli import _lo_convert

    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Data"
    ws.append(["Survey 2024"])  # a title row above the header
    ws.append([])
    ws.append(["x", "double", "ratio", "when", "label"])
    for i in range(1, 7):
        r = i + 3
        ws.append(
            [
                i,
                f"=A{r}*2",
                f"=A{r}/0" if i % 2 else f"=A{r}/2",
                dt.datetime(2024, 1, i),
                "big" if i > 3 else "small",
            ]
        )
    src = tmp_path / "src.xlsx"
    book.save(src)
    profile = tmp_path / "profile"
    ods = _lo_convert(src, "ods", tmp_path / "ods", profile)
    made = [
        _lo_convert(ods, "xlsx", tmp_path / "xlsx", profile),
        _lo_convert(ods, "xls", tmp_path / "xls", profile),
        ods,
    ]
    xlsm = tmp_path / "macro.xlsm"
    xlsm.write_bytes(made[0].read_bytes())  # same package; .xlsm only allows macros in it
    made.append(xlsm)
    frames = [read_table(path) for path in made]
    for path, frame in zip(made, frames, strict=True):
        assert list(frame.columns) == ["x", "double", "ratio", "when", "label"], path
        assert frame["double"].tolist() == [2, 4, 6, 8, 10, 12], path
        assert frame["ratio"].isna().tolist() == [True, False] * 3, path
        assert frame["when"].dt.day.tolist() == [1, 2, 3, 4, 5, 6], path
        assert "skipped 1 title row above the table (Survey 2024)" in frame.attrs["notes"], path
        # calamine hands .xls error cells over as blanks: missing too, but without the note.
        if path.suffix != ".xls":
            assert (
                'column "ratio": 3 error values (#DIV/0!) treated as missing'
                in frame.attrs["notes"]
            ), path
        assert frame.attrs["source"]["format"] == path.suffix[1:]
        pd.testing.assert_frame_equal(frame, frames[0])


# --------------------------------------------------------------------------- anything goes

_csv_text = st.text(alphabet=st.sampled_from(list('ab1,.;\t"\r\n #%-é€ ')), max_size=120)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.one_of(_csv_text.map(lambda t: t.encode("utf-8")), st.binary(max_size=120)))
def test_any_file_gives_a_table_or_a_sentence(tmp_path, data):
    path = tmp_path / "fuzz.csv"
    path.write_bytes(data)
    try:
        frame = read_table(path)
    except StratPDInputError as exc:
        assert str(exc) and "\n" not in str(exc)
    else:
        assert len(frame.columns) >= 1 and len(frame) >= 1


# --------------------------------------------------------------------------- C reader = csv module

_awkward = st.lists(
    st.lists(
        st.one_of(
            st.sampled_from(
                [
                    "",
                    " ",
                    "NA",
                    "null",
                    "#N/A",
                    "n/a",
                    "00123",
                    "1,5",
                    "1.234,5",
                    "1,234.5",
                    "-3",
                    "1e3",
                    "TRUE",
                    "2024-01-02",
                    'a"b',
                    '"q"',
                    "x\ny",
                    "é€",
                    "  7 ",
                    "nan",
                ]
            ),
            st.text(alphabet=st.sampled_from(list('ab1,.;\t"\r\n #%-é ')), max_size=8),
        ),
        min_size=1,
        max_size=5,
    ),
    min_size=1,
    max_size=8,
)


def _reference(path: Path, monkeypatch, **options) -> pd.DataFrame | str:
    """read_table through the csv module only (the reader before the C reader came in)."""
    with monkeypatch.context() as m:
        m.setattr(files, "_typed_text", lambda *args: None)
        m.setattr(files, "_text_columns", lambda text, delimiter: None)
        return _outcome(path, **options)


def _raw_text(path: Path, monkeypatch, **options) -> pd.DataFrame | str:
    """read_table with every cell split as text by the C reader and typed by the sheet layer."""
    with monkeypatch.context() as m:
        m.setattr(files, "_typed_text", lambda *args: None)
        return _outcome(path, **options)


def _outcome(path: Path, **options) -> pd.DataFrame | str:
    try:
        return read_table(path, **options)
    except StratPDInputError as exc:
        return str(exc)


def _assert_same(new: pd.DataFrame | str, old: pd.DataFrame | str) -> None:
    if isinstance(old, str):
        assert new == old
    else:
        assert not isinstance(new, str), new
        pd.testing.assert_frame_equal(new, old)
        assert new.attrs == old.attrs


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=_awkward,
    delimiter=st.sampled_from([",", ";", "\t"]),
    encoding=st.sampled_from(["utf-8", "utf-8-sig", "cp1252"]),
    newline=st.sampled_from(["\n", "\r\n"]),
    title=st.booleans(),
)
def test_c_reader_gives_exactly_the_csv_module_table(
    tmp_path, monkeypatch, rows, delimiter, encoding, newline, title
):
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, lineterminator=newline).writerows(rows)
    text = ("Sales report" + newline if title else "") + buffer.getvalue()
    path = tmp_path / "awkward.csv"
    path.write_bytes(text.encode(encoding, errors="replace"))
    new, old = _outcome(path), _reference(path, monkeypatch)
    _assert_same(new, old)


def test_c_reader_equivalence_on_a_typical_european_file(tmp_path, monkeypatch):
    text = (
        "sep=;\r\nUmsatz 2024\r\n\r\nNr;Preis;Menge;Stadt;Notiz\r\n"
        '00123;1.234,50;3;Köln;"mit ""Zitat"""\r\n'
        '00124;2,25;NA;Düsseldorf;"zwei\r\nZeilen"\r\n'
        "00125;#N/A;4;;null\r\n"
    )
    path = write(tmp_path / "de.csv", text, encoding="cp1252")
    new, old = read_table(path), _reference(path, monkeypatch)
    pd.testing.assert_frame_equal(new, old)
    assert new.attrs == old.attrs
    assert new["Nr"].tolist() == old["Nr"].tolist()


@pytest.mark.parametrize(
    "text",
    [
        "x;y\n" + "1;2\n" * 300 + "1;2;3\n",  # a longer row far below the sniffed lines
        "Title\n\nx;y\n1;2\n3\n",  # title row, then a short row
        "x,y\n" + "1,2\n" * 5 + "\n\n",  # trailing blank lines
    ],
)
def test_ragged_files_read_as_the_csv_module_reads_them(tmp_path, monkeypatch, text):
    path = write(tmp_path / "ragged.csv", text)
    new, old = _outcome(path), _reference(path, monkeypatch)
    assert not isinstance(old, str), old
    pd.testing.assert_frame_equal(new, old)
    assert new.attrs == old.attrs


@settings(max_examples=300, deadline=None)
@given(
    text=st.lists(st.sampled_from(["a", ";", "\n", "\r", "\r\n", "\x0c", "\u2028"]),
                  max_size=400).map("".join),
    count=st.integers(1, 210),
)
def test_the_sniffed_head_is_the_files_first_lines(text, count):
    # The sniffer reads only the first lines; they must be exactly those of the whole file.
    from stratpd_xl.input.files import _head_lines

    assert _head_lines(text, count) == text.splitlines()[:count]


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=60).map(lambda b: b.replace(b"\x0b", b"\n")),
       chunk=st.integers(1, 70))
def test_the_longest_line_is_measured_across_chunks(data, chunk):
    # Without quotes the longest line decides whether the csv module's field limit applies.
    # Its start names the line in the sentence refusing a line over MAX_LINE_BYTES.
    from stratpd_xl.input.files import _longest_line_at

    lines = data.split(b"\n")
    longest, start = _longest_line_at(data, chunk)
    assert longest == max(map(len, lines))
    first = [len(line) for line in lines].index(longest)
    assert start == sum(len(line) + 1 for line in lines[:first])


@pytest.mark.parametrize("quote", ["", '"'])
def test_a_field_over_the_csv_limit_gets_the_same_sentence_quoted_or_not(tmp_path, quote):
    # Both readers must refuse it alike; without quotes only the longest line is measured.
    path = tmp_path / "long.csv"
    path.write_text(f"a,b\n1,{quote}{'x' * (csv.field_size_limit() + 10)}{quote}\n2,y\n")
    with pytest.raises(StratPDInputError, match="field larger than field limit"):
        read_table(path)


def test_workbook_without_a_workbook_reader_says_what_to_install(tmp_path, monkeypatch, capsys):
    # xlwings Lite's Pyodide has no python-calamine wheel: a workbook file there must get a
    # sentence with the fix, not an "internal error" from a failed import.
    path = tmp_path / "sales.xlsx"
    book = openpyxl.Workbook()
    book.active.append(["x", "y"])
    book.active.append([1, 2])
    book.save(path)
    monkeypatch.setitem(sys.modules, "python_calamine", None)  # import raises ImportError
    assert main(["curve", str(path), "-t", "y", "-f", "x"]) == 2
    err = capsys.readouterr().err
    assert '"sales.xlsx"' in err and "pip install python-calamine" in err
    assert "Traceback" not in err and "internal error" not in err


# --------------------------------------------------------------------------- C reader's numbers

# Texts where what pandas' C reader calls a number and what the sheet layer reads may differ.
_NUMBER_EDGES = [
    "1e5", " 3 ", "+4", "\u22125", "inf", "-Infinity", "nan", "NaN", "NA", "1,5", "1.234,5",
    "1,234.5", "1 234", "007", "00123", "99999999999999999999", "18446744073709551615",
    "-9223372036854775809", "9007199254740993", "1.7000000000000001776356839", "-0", "-0.0",
    ".5", "5.", ",5", "5,", "1e309", "1e-400", "TRUE", "false", "#N/A", "", "  ", "12%", "$5",
    "2024-01-02", "x", "1e", "0x10", "1_000", "a\nb", "a\r\nb", '"q"',
]
_plain_number = st.one_of(
    st.integers(-(10**22), 10**22).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(-1e6, 1e6).map(lambda f: f"{f:.3f}"),
    st.integers(0, 999).map(lambda i: f"{i:05d}"),
)


@st.composite
def _numberish_table(draw):
    width = draw(st.integers(1, 4))
    comma = draw(st.booleans())  # numbers written with a decimal comma
    columns = []
    for _ in range(width):
        number = _plain_number.map(lambda t: t.replace(".", ",") if comma else t)
        # Mostly numbers: a few columns all numbers (the reader types them), the rest mixed.
        edges = st.sampled_from(_NUMBER_EDGES)
        cell = draw(
            st.sampled_from([number, st.one_of(number, st.just("")), st.one_of(number, edges)])
        )
        columns.append(draw(st.lists(cell, min_size=1, max_size=8)))
    height = max(map(len, columns))
    rows = [[col[i] if i < len(col) else "" for col in columns] for i in range(height)]
    return [[f"c{j}" for j in range(width)], *rows]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=_numberish_table(),
    delimiter=st.sampled_from([",", ";", "\t"]),
    decimal=st.sampled_from([None, ".", ","]),
    encoding=st.sampled_from(["utf-8", "utf-8-sig", "cp1252"]),
    newline=st.sampled_from(["\n", "\r\n", "\r"]),
    head=st.sampled_from(["", "Sales report\n", "sep=;\n", "\n\n", '"Sales\r\nreport"\r\n\r\n']),
)
# Beyond int64 pandas parses with Python's int, which takes "1_000" (found by CI's run).
@example(rows=[["c0"], ["99999999999999999999"], ["1_000"]], delimiter=",", decimal=None,
         encoding="utf-8", newline="\n", head="")
@example(rows=[["c0"], ["-99999999999999999999"], [" 1_0 "], [""]], delimiter=";",
         decimal=",", encoding="utf-8", newline="\r\n", head="")
# Whole numbers beyond 2**53: the raw-text path read them as floats (found by CI's run).
@example(rows=[["c0"], ["9007199254740993"], ["5"]], delimiter=",", decimal=None,
         encoding="utf-8", newline="\n", head="")
@example(rows=[["c0"], ["9007199254740992"], ["-3"]], delimiter=";", decimal=",",
         encoding="utf-8", newline="\n", head="")
def test_numbers_typed_by_the_c_reader_give_the_raw_text_table(
    tmp_path, monkeypatch, rows, delimiter, decimal, encoding, newline, head
):
    # The fast reader lets pandas parse numbers; every cell must still read as the text rules
    # read it (values, dtypes, names, notes), whatever the file's dialect.
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, lineterminator=newline).writerows(rows)
    path = tmp_path / "numbers.csv"
    path.write_bytes((head + buffer.getvalue()).encode(encoding, errors="replace"))
    new = _outcome(path, decimal=decimal)
    _assert_same(new, _raw_text(path, monkeypatch, decimal=decimal))


def test_a_plain_numeric_file_is_typed_without_the_raw_text_reader(tmp_path, monkeypatch):
    # Otherwise the equivalence above could hold only because the fast path never ran.
    text = "Survey 2024\nx;y;z;city\n" + "".join(
        f"{i},5;{i};{'' if i % 7 else i};{'Köln' if i % 2 else 'Bonn'}\n" for i in range(300)
    ) + "inf;1;2;Bonn\n"  # pandas reads "inf" as a number: that column is read again as text
    path = write(tmp_path / "fast.csv", text)
    expected = _raw_text(path, monkeypatch)
    monkeypatch.setattr(files, "_text_columns", lambda *args: pytest.fail("raw-text reader"))
    frame = read_table(path)
    pd.testing.assert_frame_equal(frame, expected)
    assert frame.attrs == expected.attrs
    assert frame["x"].iloc[3] == 3.5 and frame["y"].dtype == np.int64
    assert frame.attrs["notes"] == [
        "skipped 1 title row above the table (Survey 2024)",
        'column "x": 1 infinite number treated as missing',
    ]


@pytest.mark.parametrize(
    "late",
    ["n/a", "inf", "1e999", "abc", "   ", "1,234", "TRUE", "99999999999999999999", "\u22125"],
)
def test_a_column_that_changes_below_the_first_rows_reads_as_the_text_rules_read_it(
    tmp_path, monkeypatch, late
):
    # Numbers for 300 rows (past the rows read as text for the header), then one other cell.
    body = "".join(f"{i},{i * 0.5},{'a' if i % 3 else 'b'}\n" for i in range(300))
    path = write(tmp_path / "late.csv", f"id,v,k\n{body}301,{late},a\n302,7,b\n")
    new, old = _outcome(path), _raw_text(path, monkeypatch)
    _assert_same(new, old)
    assert _reference(path, monkeypatch).equals(old)


def test_a_header_far_below_blank_lines_is_found(tmp_path, monkeypatch):
    path = write(tmp_path / "blank.csv", "\n" * 250 + "a,b\n1,2\n3,4\n")
    new, old = _outcome(path), _raw_text(path, monkeypatch)
    _assert_same(new, old)
    assert new["b"].tolist() == [2, 4]


def test_a_number_padded_over_the_csv_limit_gets_the_csv_modules_sentence(tmp_path):
    # A quoted number may be padded with white space and line breaks; the csv module refuses
    # the field, so must the reader that parsed it as a number.
    pad = " \n" * (csv.field_size_limit() // 2 + 10)
    path = tmp_path / "padded.csv"
    path.write_text(f'a,b\n1,"{pad}5"\n2,3\n')
    with pytest.raises(StratPDInputError, match="field larger than field limit"):
        read_table(path)


def test_columns_that_pandas_types_differently_in_two_chunks_read_as_text_rules_say(
    tmp_path, monkeypatch
):
    # pandas types a long file in chunks (about 65,000 rows of 16 columns each): a column of
    # numbers in one chunk and text in the next must still read cell by cell as text reads.
    rows = 140_000
    pad = ",".join("1" for _ in range(12))
    lines = [f"id,code,flag,huge,{','.join(f'p{i}' for i in range(12))}"]
    lines += [f"{i},007,TRUE,{i},{pad}" for i in range(rows // 2)]
    lines += ["abc,x,maybe,99999999999999999999," + pad]
    lines += [f"{i},1,true,,{pad}" for i in range(rows // 2)]
    path = write(tmp_path / "chunks.csv", "\n".join(lines) + "\n")
    expected = _raw_text(path, monkeypatch)
    monkeypatch.setattr(files, "_text_columns", lambda *args: pytest.fail("raw-text reader"))
    frame = read_table(path)
    pd.testing.assert_frame_equal(frame, expected)
    assert frame.attrs == expected.attrs
    assert frame["code"].iloc[0] == 7 and frame["huge"].iloc[rows // 2] == 1e20


@pytest.mark.parametrize("typed", [True, False], ids=["c reader", "raw text"])
def test_whole_numbers_beyond_int64_are_never_wrapped_round(tmp_path, monkeypatch, typed):
    # pandas hands 2**63 over as uint64; cast to int64 it read as -9223372036854775808.
    path = write(tmp_path / "ids.csv", "id,y\n9223372036854775808,1\n9007199254740993,2\n")
    frame = read_table(path) if typed else _raw_text(path, monkeypatch)
    assert frame["id"].dtype == np.float64
    assert frame["id"].tolist() == [2.0**63, 2.0**53]


@pytest.mark.parametrize("typed", [True, False], ids=["c reader", "raw text"])
def test_ids_beyond_2_to_the_53_stay_exact(tmp_path, monkeypatch, typed):
    path = write(tmp_path / "ids.csv", "id,y\n9007199254740993,1\n9007199254740992,2\n")
    frame = read_table(path) if typed else _raw_text(path, monkeypatch)
    assert frame["id"].tolist() == [9007199254740993, 9007199254740992]
