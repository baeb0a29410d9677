"""Inputs that gave a wrong answer without a word: codes with leading zeros merged, a
repeated target header, quoted decimal-comma numbers in a decimal-point file, formulas
without a saved value, a hidden first sheet.  Each now reads right with a note, or is refused
in one sentence naming the fix.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest

from stratpd_xl.cli import main
from stratpd_xl.errors import StratPDInputError
from stratpd_xl.input.files import read_table
from stratpd_xl.input.sheet import frame_from_cells
from stratpd_xl.workflow import prepare


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def coded(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """Four codes, two pairs of which are the same number: 007/7 and 008/8."""
    rng = np.random.default_rng(seed)
    code = rng.choice(["007", "7", "008", "8"], n)
    effect = {"007": 1.0, "7": 5.0, "008": -3.0, "8": 0.0}
    x = rng.uniform(0, 10, n)
    y = np.array([effect[c] for c in code]) + x + rng.normal(0, 0.1, n)
    return pd.DataFrame({"code": code, "x": x.round(4), "y": y.round(4)})


# --------------------------------------------------------------------------- codes


def test_codes_with_leading_zeros_stay_apart_as_categories(tmp_path, capsys):
    path = tmp_path / "codes.csv"
    coded().to_csv(path, index=False)
    code, out, err = run(["curve", path, "-t", "y", "-f", "code", "--categorical", "code"],
                         capsys)
    assert code == 0, err
    assert '"007" and "7" are kept apart' in err
    table = {line.split()[0]: float(line.split()[1]) for line in out.splitlines()[1:]}
    assert set(table) == {"007", "7", "008", "8"}
    # Effects relative to 007 (1): 7 -> +4, 008 -> -4, 8 -> -1.
    assert table["7"] - table["007"] == pytest.approx(4, abs=0.3)
    assert table["008"] - table["007"] == pytest.approx(-4, abs=0.3)
    assert table["8"] - table["007"] == pytest.approx(-1, abs=0.3)


def _late_codes(path: Path, at: int, *, n: int = 6_000, spelling: str = "007",
                sep: str = ",") -> Path:
    """A code column of 7s, 8s and 9s whose only leading-zero code is on data row ``at``."""
    rng = np.random.default_rng(at)
    code = rng.choice(["7", "8", "9"], n).astype(object)
    code[at - 1] = spelling
    x = rng.uniform(0, 10, n)
    lines = [sep.join(["code", "x", "y"])]
    lines += [sep.join([c, f"{a:.3f}", f"{a + (c == '7'):.3f}"])
              for c, a in zip(code, x, strict=True)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("at", [1, 199, 201, 5_000, 6_000])
def test_a_leading_zero_code_anywhere_in_a_text_file_stays_apart(tmp_path, at):
    # The head's first 200 rows decided: a "007" on row 201 or later merged with "7".
    frame = read_table(_late_codes(tmp_path / "late.csv", at))
    problem = prepare(frame, "y", ["code"], categorical=["code"])
    assert set(problem.frame["code"].cat.categories) == {"007", "7", "8", "9"}
    assert (problem.frame["code"] == "007").sum() == 1
    assert any("kept apart" in n for n in problem.notes)


@pytest.mark.parametrize(("spelling", "sep", "found"), [
    ('"007"', ",", "007"), (" 007", ",", "007"), ('" +07"', ",", "+07"), ("007", ";", "007"),
    ("007", "\t", "007"), ("07.0", ",", "07.0"),
])
def test_late_leading_zero_spellings_stay_apart(tmp_path, spelling, sep, found):
    frame = read_table(_late_codes(tmp_path / "late.csv", 4_321, spelling=spelling, sep=sep))
    problem = prepare(frame, "y", ["code"], categorical=["code"])
    assert found in set(problem.frame["code"].cat.categories)


def test_late_zeros_inside_other_fields_change_nothing(tmp_path):
    # Zeros inside a number (100.07), a date (2024-01-07) or a word are no codes.
    path = tmp_path / "plain.csv"
    rows = ["code,x,when,y"] + [f"{7 + i % 3},{100.07 + i},2024-01-0{1 + i % 9},{i % 5}.0"
                                for i in range(3_000)]
    path.write_text("\n".join(rows) + "\n")
    frame = read_table(path)
    assert frame["code"].dtype.kind == "i" and "texts" not in frame["code"].attrs
    assert frame["x"].dtype.kind == "f"


def test_the_leading_zero_scan_sees_codes_across_its_slices(monkeypatch):
    from stratpd_xl.input import files

    monkeypatch.setattr(files, "_SCAN_BYTES", 7)
    text = "a,b\n" + "12,34\n" * 20
    assert not files._may_hold_leading_zero(text, ",")
    for i in range(len(text) - 1):  # "07" written over every place in turn
        spliced = text[:i] + "\n07" + text[i + 1:]
        assert files._may_hold_leading_zero(spliced.encode(), ","), i
    assert files._may_hold_leading_zero('x;  "+05"', ";")
    assert not files._may_hold_leading_zero("x;a05;1.07;-1.05", ";")


def test_codes_from_cells_and_workbooks_stay_apart_too(tmp_path):
    data = coded(60)
    cells = [list(data.columns)] + data.astype(object).to_numpy().tolist()
    for frame in (
        frame_from_cells(cells),
        read_table(_xlsx(tmp_path / "codes.xlsx", cells)),
    ):
        assert frame["code"].dtype.kind == "i"  # still numbers unless declared categories
        problem = prepare(frame, "y", ["code"], categorical=["code"])
        assert set(problem.frame["code"].cat.categories) == {"007", "7", "008", "8"}
        assert any('kept apart' in n for n in problem.notes)


@pytest.mark.parametrize("texts", [["001", "1", "01", "1.0"], ["-05", "-5"], ["00", "0"]])
def test_number_spellings_of_one_code_are_different_categories(texts):
    # "001"/"1"/"01"/"1.0" were refused as "the same value in every row".
    rng = np.random.default_rng(1)
    n = 200
    code = [texts[i % len(texts)] for i in range(n)]
    x = rng.uniform(0, 1, n)
    frame = frame_from_cells([["code", "x", "y"]] + [[c, a, a + i % 3] for i, (c, a) in
                                                      enumerate(zip(code, x, strict=True))])
    problem = prepare(frame, "y", ["code"], categorical=["code"])
    assert sorted(problem.frame["code"].cat.categories) == sorted(texts)


def test_codes_without_leading_zeros_are_numbers_as_before():
    frame = frame_from_cells([["code", "y"]] + [[str(i % 5), float(i)] for i in range(50)])
    assert "texts" not in frame.attrs
    problem = prepare(frame, "y", ["code"], categorical=["code"])
    assert list(problem.frame["code"].cat.categories) == [0, 1, 2, 3, 4]


def _xlsx(path: Path, cells: list[list]) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Data"
    for row in cells:
        sheet.append(row)
    book.save(path)
    return path


# --------------------------------------------------------------------------- repeated header


def test_a_repeated_target_header_is_refused_naming_both(tmp_path, capsys):
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 10, 300)
    path = tmp_path / "dup.csv"
    # The first "y" falls with a, the second rises: the first used to be taken silently.
    z = rng.uniform(0, 10, 300)
    pd.DataFrame({"a": a, "z": z, "y": -5 * a + z, "y ": 10 * a + z}).rename(
        columns={"y ": "y"}).to_csv(path, index=False)
    code, _, err = run(["curve", path, "-t", "y", "-f", "a"], capsys)
    assert code == 2
    assert '2 columns are named "y"' in err and '"y (2)"' in err
    code, out, err = run(["curve", path, "-t", "y (2)", "-f", "a"], capsys)
    assert code == 0, err
    values = [float(line.split()[1]) for line in out.splitlines()[2:]]
    assert values[-1] > values[0]  # the rising one, as asked


def test_a_repeated_feature_header_is_refused_too():
    frame = frame_from_cells([["x", "X", "y"]] + [[i, -i, i * 2.0] for i in range(50)])
    with pytest.raises(StratPDInputError, match='2 columns are named "x".*"X \\(2\\)"'):
        prepare(frame, "y", ["x"])


# --------------------------------------------------------------------------- decimal commas


def _quoted(path: Path, prices: list[str]) -> Path:
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 10, len(prices))
    lines = ["x,price,y"] + [
        f'{a:.3f},"{p}",{2 * a:.3f}' for a, p in zip(x, prices, strict=True)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_quoted_decimal_comma_column_does_not_change_the_other_columns(tmp_path):
    # "0,50" in quotes made the whole file decimal-comma: x = 3.197 became 3197, silently.
    prices = ["0,50", "1.000,50", "30.100,00", "2,25"] * 50
    frame = read_table(_quoted(tmp_path / "q.csv", prices))
    assert frame["x"].max() < 10 and frame["y"].max() < 20
    assert list(frame["price"][:4]) == [0.5, 1000.5, 30100.0, 2.25]
    assert any('"price" holds numbers with a decimal comma' in n for n in frame.attrs["notes"])


def test_a_quoted_thousands_column_in_a_point_file_is_numbers(tmp_path):
    # Beside "1.5" elsewhere, "30.100,00" became text (categories), silently.
    prices = [f"{30 + i % 7}.{100 + i},00" for i in range(200)]
    frame = read_table(_quoted(tmp_path / "t.csv", prices))
    assert frame["price"].dtype.kind in "fi"
    assert frame["price"][0] == 30100


def test_the_decimal_option_still_decides_everything(tmp_path):
    path = _quoted(tmp_path / "q.csv", ["0,50", "1.000,50"] * 50)
    frame = read_table(path, decimal=",")
    assert frame["x"].max() > 10  # as asked: 3.197 is 3197 with a decimal comma
    assert not frame.attrs["notes"]


# --------------------------------------------------------------------------- workbooks


def test_formulas_without_a_saved_value_are_named(tmp_path, capsys):
    # openpyxl writes formulas without their values: 200 of 400 rows were dropped silently.
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Data"
    sheet.append(["x", "y"])
    for i in range(2, 402):
        sheet.append([i, f"=A{i}*2" if i % 2 else 2 * i])
    path = tmp_path / "formulas.xlsx"
    book.save(path)
    code, _, err = run(["curve", path, "-t", "y", "-f", "x"], capsys)
    assert code == 0
    assert "200 formula cells have no saved value" in err and "save it again" in err


def test_a_hidden_first_sheet_is_passed_over_with_a_note(tmp_path):
    book = openpyxl.Workbook()
    hidden = book.active
    hidden.title = "Old"
    hidden.append(["x", "y"])
    hidden.append([1, 2])
    hidden.sheet_state = "hidden"
    shown = book.create_sheet("Data")
    shown.append(["x", "y"])
    for i in range(20):
        shown.append([i, 3 * i])
    path = tmp_path / "hidden.xlsx"
    book.save(path)
    frame = read_table(path)
    assert len(frame) == 20 and frame.attrs["source"]["sheet"] == "Data"
    assert any('hidden sheet "Old"' in n and "--sheet Old" in n for n in frame.attrs["notes"])
    assert len(read_table(path, sheet="Old")) == 1  # named: read as asked, no note
    assert not read_table(path, sheet="Old").attrs["notes"]
