"""read_table on hostile text files: endless lines, millions of columns, NUL bytes, quotes
left open, encodings guessed wrong.

Each case once cost gigabytes, minutes or a sentence that pointed the wrong way; now it is
one sentence naming the line or the option to type (exit 2 on the command line).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stratpd_xl.cli import main
from stratpd_xl.errors import StratPDInputError
from stratpd_xl.input import files
from stratpd_xl.input.files import read_table


def one_sentence(exc: pytest.ExceptionInfo[StratPDInputError]) -> str:
    text = str(exc.value)
    assert text and "\n" not in text
    return text


def cli(path: Path, capsys, *extra: str) -> tuple[int, str]:
    code = main(["curve", str(path), "--target", "y", "--feature", "x", *extra])
    return code, capsys.readouterr().err


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> dict[str, Path]:
    """The real-size inputs, written once: a line just over the limit, 5,000,000 empty header
    cells (5 MB; took 5.8 GB and was killed at 152 s)."""
    folder = tmp_path_factory.mktemp("big")
    long_line = folder / "long_line.csv"
    long_line.write_bytes(b"x,y\n1,2\n3,4\n" + b"7" * (files.MAX_LINE_BYTES + 1))
    empty_header = folder / "empty_header.csv"
    empty_header.write_bytes(b"," * 5_000_000 + b"\n1,2\n")
    return {"long_line": long_line, "empty_header": empty_header}


# --------------------------------------------------------------------------- endless lines


def test_a_line_without_a_break_is_refused_naming_it(big, capsys):
    # 100 MB without a newline was split into 50 million fields: killed at 6 GB after 131 s.
    with pytest.raises(StratPDInputError, match='line 4 of "long_line.csv" is 16 MB long') as exc:
        read_table(big["long_line"])
    assert "one row a line" in one_sentence(exc)
    code, err = cli(big["long_line"], capsys)
    assert code == 2 and "line 4" in err


def test_the_line_limit_counts_lines_not_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "MAX_LINE_BYTES", 100)
    many = tmp_path / "many.csv"
    many.write_text("x,y\n" + "".join(f"{i},{2 * i}\n" for i in range(100)))
    assert len(read_table(many)) == 100  # 600 bytes, no line over 100
    wide = tmp_path / "wide.csv"
    wide.write_text("x,y\n1,2\n" + "1," * 60 + "\n")
    with pytest.raises(StratPDInputError, match=r"line 3 .* 120 bytes long"):
        read_table(wide)


def test_millions_of_empty_header_cells_are_refused_quickly(big, capsys):
    with pytest.raises(StratPDInputError, match="row 1 of .* more than 16,384 cells") as exc:
        read_table(big["empty_header"])
    assert "keep only the columns" in one_sentence(exc)
    assert cli(big["empty_header"], capsys)[0] == 2


@pytest.mark.parametrize("sep", [",", ";", "\t"])
def test_a_row_too_wide_below_the_sniffed_lines_is_refused(tmp_path, sep):
    # Past the rows the delimiter guess reads: the csv module meets it and stops there.
    path = tmp_path / "late.csv"
    body = "".join(f"{i}{sep}{2 * i}\n" for i in range(300))
    path.write_text(f"x{sep}y\n" + body + sep * 20_000 + "\n")
    with pytest.raises(StratPDInputError, match="row 302 of .* more than 16,384 cells"):
        read_table(path)


def test_a_table_as_wide_as_the_limit_is_still_read(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "MAX_COLUMNS", 50)
    for width, refused in ((50, False), (51, True)):
        path = tmp_path / f"w{width}.csv"
        names = [f"c{i}" for i in range(width)]
        path.write_text(",".join(names) + "\n" + ",".join("1" for _ in names) + "\n")
        if refused:
            with pytest.raises(StratPDInputError, match="more than 50 cells"):
                read_table(path)
        else:
            assert read_table(path).shape == (1, width)


# --------------------------------------------------------------------------- bytes and quotes


def test_a_nul_byte_is_named_by_byte_and_line(tmp_path, capsys):
    path = tmp_path / "nul.csv"
    path.write_bytes(b"x,y\n1,2\n3,\x004\n")
    with pytest.raises(StratPDInputError, match=r"NUL byte .*at byte 11, line 3") as exc:
        read_table(path)
    one_sentence(exc)
    assert cli(path, capsys)[0] == 2


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_its_mark_names_the_encoding_to_type(tmp_path, codec):
    option = codec
    path = tmp_path / "u16.csv"
    text = "x,y,z\n" + "".join(f"{i},{2 * i},{i % 3}\n" for i in range(40))
    path.write_bytes(text.encode(codec))
    with pytest.raises(StratPDInputError, match=f"--encoding {option}"):
        read_table(path)
    assert read_table(path, encoding=option).shape == (40, 3)  # the advice works


def test_utf16_asked_for_a_utf8_file_says_so(tmp_path, capsys):
    path = tmp_path / "plain.csv"
    path.write_text("x,y\n" + "".join(f"{i},{i}\n" for i in range(30)))
    with pytest.raises(StratPDInputError, match="is not utf-16 text.*--encoding utf-8"):
        read_table(path, encoding="utf-16")
    code, err = cli(path, capsys, "--encoding", "utf-16")
    assert code == 2 and "no data rows" not in err


def test_an_unclosed_quote_names_its_line(tmp_path, capsys):
    path = tmp_path / "quote.csv"
    path.write_text("x,y,z\n1,2,3\n" + '"4,5,6\n' + "".join(f"{i},{i},{i}\n" for i in range(30)))
    with pytest.raises(StratPDInputError, match=r'line 3 of "quote.csv" opens a quote'):
        read_table(path)
    code, err = cli(path, capsys)
    assert code == 2 and "only 0 rows" not in err


@pytest.mark.parametrize(("body", "last"), [('12" pipe,1,2\n', ['12" pipe', "1", "2"]),
                                            ('1,2,"3\n', ["1", "2", "3"])])
def test_quotes_inside_a_cell_or_on_the_last_line_are_not_refused(tmp_path, body, last):
    path = tmp_path / "inch.csv"
    path.write_text("x,y,z\n" + "".join(f"a{i},{i},{i}\n" for i in range(30)) + body)
    table = read_table(path)
    assert len(table) == 31  # every row, the one with the quote included
    assert [str(v) for v in table.iloc[-1]] == last
