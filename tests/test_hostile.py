"""Hostile and broken input: formulas in names, absurd options, races, huge numbers."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest

from stratpd_xl.cli import main
from tests.office import soffice

HOSTILE = [
    '=HYPERLINK("http://x","click")',
    "=cmd|' /C calc'!A0",
    "+1+1",
    "-2+3",
    "@SUM(1)",
]


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def hostile_data(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """A text feature whose categories are formulas, and a numeric feature named like one."""
    rng = np.random.default_rng(seed)
    cat = rng.choice(HOSTILE, n)
    x = rng.uniform(0, 10, n)
    effect = pd.Series(cat).map({h: i - 2.0 for i, h in enumerate(HOSTILE)}).to_numpy()
    # Effects both below and above zero so the answers hold real negative numbers.
    y = 3 * effect - 2 * x + rng.normal(0, 0.1, n)
    return pd.DataFrame({"=1+2": x, "cat": cat, "y": y})



def _libreoffice_cells(files: list[Path], tmp: Path) -> dict[str, list[openpyxl.cell.Cell]]:
    """Open CSV files in real LibreOffice (as a user would) and return each file's cells."""
    outdir = tmp / "lo"
    cmd = [soffice(), "--headless", "--norestore",
           f"-env:UserInstallation={(tmp / 'profile').as_uri()}",
           "--convert-to", "xlsx", "--outdir", str(outdir), *map(str, files)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=180)
    cells = {}
    for f in files:
        ws = openpyxl.load_workbook(outdir / (f.stem + ".xlsx")).active
        cells[f.name] = [c for row in ws.iter_rows() for c in row]
    return cells


def test_csv_answers_never_open_as_live_formulas(tmp_path, capsys):
    src = tmp_path / "in.csv"
    hostile_data().to_csv(src, index=False)
    curve, impact, numeric = tmp_path / "curve.csv", tmp_path / "impact.csv", tmp_path / "n.csv"
    assert run(["curve", src, "-t", "y", "-f", "cat", "-o", curve], capsys)[0] == 0
    assert run(["curve", src, "-t", "y", "-f", "=1+2", "-o", numeric], capsys)[0] == 0
    assert run(["impact", src, "-t", "y", "-o", impact], capsys)[0] == 0
    cells = _libreoffice_cells([curve, impact, numeric], tmp_path)
    for name, found in cells.items():
        formulas = [c.value for c in found if c.data_type == "f"]
        assert formulas == [], f"{name} opened with live formulas {formulas}"
    # The categories are still readable, and the numbers are still numbers (negative too).
    texts = {c.value for c in cells["curve.csv"] if isinstance(c.value, str)}
    assert {"'" + h for h in HOSTILE} <= texts
    pd_values = [c.value for c in cells["curve.csv"] if c.column == 2 and c.row > 1]
    assert all(isinstance(v, int | float) for v in pd_values)
    assert min(pd_values) < 0 < max(pd_values)
    xs = [c.value for c in cells["n.csv"] if c.column == 1 and c.row > 1]
    assert all(isinstance(v, int | float) for v in xs)


def test_printed_tables_hold_no_formula_to_paste(tmp_path, capsys):
    src = tmp_path / "in.csv"
    hostile_data().to_csv(src, index=False)
    code, out, err = run(["curve", src, "-t", "y", "-f", "cat"], capsys)
    assert code == 0, err
    words = [w for line in out.splitlines() for w in line.split()]
    assert not [w for w in words if w[0] in "=+@"]
    assert "'=HYPERLINK(\"http://x\",\"click\")" in out
    code, out, err = run(["impact", src, "-t", "y"], capsys)
    assert code == 0, err
    assert "'=1+2" in out


def test_xlsx_answers_keep_formula_text_inert(tmp_path, capsys):
    src = tmp_path / "in.csv"
    hostile_data().to_csv(src, index=False)
    book = tmp_path / "r.xlsx"
    curve = tmp_path / "c.xlsx"
    assert run(["report", src, "-t", "y", "-o", book], capsys)[0] == 0
    assert run(["curve", src, "-t", "y", "-f", "cat", "-o", curve], capsys)[0] == 0
    for path in (book, curve):
        wb = openpyxl.load_workbook(path)
        cells = [c for ws in wb.worksheets for row in ws.iter_rows() for c in row]
        assert [c.value for c in cells if c.data_type == "f"] == []
        assert set(HOSTILE) & {c.value for c in cells} or path == book


def _chart_xml(path: Path) -> str:
    import zipfile

    with zipfile.ZipFile(path) as z:
        return "".join(z.read(n).decode() for n in z.namelist() if n.startswith("xl/charts/"))


def test_chart_titles_and_axis_names_shaped_like_references_stay_text(tmp_path, capsys):
    src = tmp_path / "in.csv"
    data = hostile_data().rename(columns={"=1+2": "Q1!B2", "y": "Sales!$C$3"})
    data.to_csv(src, index=False)
    out = tmp_path / "c.xlsx"
    code, _, err = run(["curve", src, "-t", "Sales!$C$3", "-f", "Q1!B2", "-o", out], capsys)
    assert code == 0, err
    book = tmp_path / "r.xlsx"
    assert run(["report", src, "-t", "Sales!$C$3", "-o", book], capsys)[0] == 0
    for path in (out, book):
        xml = _chart_xml(path)
        # A reference title is <c:strRef><c:f>Q1!B2</c:f>; the data ranges of the sheet
        # named 'Q1!B2' are quoted and fine.
        refs = [f for f in re.findall(r"<c:f>([^<]*)</c:f>", xml)
                if ("Q1" in f or "Sales" in f) and not f.startswith("'Q1!B2'!")]
        assert refs == []
        plain = xml.replace("\u2060", "")
        assert "Q1!B2" in plain and "Sales!$C$3" in plain


# --------------------------------------------------------------------------- writing outputs


@pytest.fixture
def small_csv(tmp_path: Path) -> Path:
    src = tmp_path / "in.csv"
    hostile_data(200).to_csv(src, index=False)
    return src


def test_a_writer_racing_past_the_check_does_not_replace_the_other_answer(tmp_path):
    from stratpd_xl import cli

    out = tmp_path / "same.xlsx"

    def slow_write(path: Path) -> None:
        # The other run finishes while this one is still writing its temporary file.
        out.write_bytes(b"the other run's report")
        path.write_bytes(b"ours")

    with pytest.raises(cli._UserError, match="already exists"):
        cli._write_atomic(out, slow_write, force=False)
    assert out.read_bytes() == b"the other run's report"
    assert [p.name for p in tmp_path.iterdir()] == ["same.xlsx"]


def test_two_reports_started_together_never_both_succeed(small_csv, tmp_path):
    out = tmp_path / "same.xlsx"
    cmd = [os.sys.executable, "-m", "stratpd_xl.cli", "report", str(small_csv), "-t", "y",
           "-o", str(out)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    assert "already exists" in [err for code, err in results if code == 2][0]


def test_an_unwritable_folder_is_named_not_the_temporary(small_csv, capsys):
    if not Path("/proc/self").exists():
        pytest.skip("needs Linux /proc (unwritable even for root)")
    out = Path("/proc/stratpd-answer.csv")
    code, _, err = run(["curve", small_csv, "-t", "y", "-f", "cat", "-o", out], capsys)
    assert code == 2
    assert '"/proc/stratpd-answer.csv"' in err
    assert ".tmp" not in err and "Traceback" not in err


def test_a_name_at_the_length_limit_is_still_written(small_csv, tmp_path, capsys):
    limit = os.pathconf(tmp_path, "PC_NAME_MAX")
    out = tmp_path / ("a" * (limit - 4) + ".csv")
    code, _, err = run(["curve", small_csv, "-t", "y", "-f", "cat", "-o", out], capsys)
    assert code == 0, err
    assert out.exists()


def test_the_same_output_named_twice_is_refused(small_csv, tmp_path, capsys):
    (tmp_path / "sub").mkdir()
    first, second = tmp_path / "dup.csv", tmp_path / "sub" / ".." / "dup.csv"
    code, _, err = run(["curve", small_csv, "-t", "y", "-f", "cat", "-o", first, "-o", second],
                       capsys)
    assert code == 2
    assert "given twice" in err
    assert not first.exists()


# --------------------------------------------------------------------------- Ctrl+C


def _interrupted_in_compiled_code(*args, **kwargs):
    # What CPython raises when Ctrl+C lands inside a compiled (numba) kernel.
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        raise SystemError("<numba kernel> returned a result with an exception set") from None


def test_ctrl_c_inside_the_compiled_kernel_exits_130(small_csv, capsys, monkeypatch):
    monkeypatch.setattr("stratpd_xl.workflow.curve", _interrupted_in_compiled_code)
    code, _, err = run(["curve", small_csv, "-t", "y", "-f", "cat"], capsys)
    assert code == 130
    assert "cancelled" in err and "internal error" not in err


def test_ctrl_c_inside_the_compiled_kernel_reads_cancelled_in_a_cell():
    from stratpd_xl.errors import error_text

    try:
        _interrupted_in_compiled_code()
    except SystemError as exc:
        assert error_text(exc) == "STRATPD: cancelled"


# --------------------------------------------------------------------------- absurd options

ABSURD = [
    ("--trials", "1000000000"),
    ("--min-samples-leaf", "1e12"),
    ("--min-slopes-per-x", "99999999999"),
    ("--max-points", "1e30"),
    ("--seed", "-1"),
]


@pytest.mark.parametrize(("option", "value"), ABSURD)
def test_absurd_options_are_refused_in_one_sentence_before_any_work(
    small_csv, capsys, option, value
):
    code, out, err = run(["impact", small_csv, "-t", "y", option, value], capsys)
    assert code == 2
    assert out == "" and len(err.strip().splitlines()) == 1
    assert "between" in err and "memory" not in err
    assert "000,000,000,000,000,000" not in err  # 1e30 is not spelled out with float noise


def test_absurd_options_are_refused_by_the_api_and_the_formula():
    import stratpd_xl as sx
    from stratpd_xl.errors import StratPDInputError
    from stratpd_xl.excel import udfs

    data = hostile_data(200)
    with pytest.raises(StratPDInputError, match="n_trials must be a whole number between"):
        sx.impact(data, "y", n_trials=10**9)
    cell = udfs.STRATPD(data, "y", "=1+2", 10, 10**9, False)
    assert len(cell) == 1 and cell[0][0].startswith("STRATPD:") and "between" in cell[0][0]


# --------------------------------------------------------------------------- weak spots


def test_a_feature_named_three_times_is_ranked_once_with_a_note(small_csv, capsys):
    code, out, err = run(["impact", small_csv, "-t", "y", "-f", "cat", "-f", "cat",
                          "-f", " CAT "], capsys)
    assert code == 0, err
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["cat"]
    assert 'note: "cat" is named 3 times; it is analysed once' in err


def test_the_api_ranks_a_repeated_feature_once():
    import stratpd_xl as sx

    ranking = sx.impact(hostile_data(200), "y", ["cat", "cat", "=1+2"], random_state=0)
    assert sorted(ranking["feature"]) == ["=1+2", "cat"]


def test_missing_data_gets_a_sentence_not_an_empty_list():
    import stratpd_xl as sx
    from stratpd_xl.errors import StratPDInputError
    from stratpd_xl.excel import udfs

    with pytest.raises(StratPDInputError, match="data is missing; pass a table"):
        sx.stratpd(None, "y", "x")
    with pytest.raises(StratPDInputError, match="the table has no columns") as info:
        sx.impact(pd.DataFrame(), "y")
    assert not str(info.value).rstrip().endswith(":")
    for formula in (udfs.STRATPD, udfs.STRATIMPACT):
        args = ("y", "x") if formula is udfs.STRATPD else ("y",)
        cell = formula(None, *args)[0][0]
        assert "data is missing" in cell and "header row" in cell


def test_library_warnings_become_one_note_not_python_warnings(tmp_path):
    rng = np.random.default_rng(0)
    n = 300
    src = tmp_path / "g.csv"
    pd.DataFrame({"温度": rng.uniform(0, 1, n), "c": rng.choice(["กa", "b", "c"], n),
                  "y": rng.normal(0, 1, n)}).to_csv(src, index=False)
    # A fresh process: matplotlib warns about a missing glyph only the first time a font
    # meets it, and Python warnings would really reach this stderr.
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
           "PYTHONIOENCODING": "utf-8"}
    env.pop("STRATPD_XL_DEBUG", None)
    proc = subprocess.run(
        [os.sys.executable, "-m", "stratpd_xl.cli", "curve", str(src), "-t", "y", "-f", "温度",
         "-o", str(tmp_path / "c.png")],
        env=env, capture_output=True, text=True, encoding="utf-8", timeout=300, check=False,
    )
    code, err = proc.returncode, proc.stderr
    assert code == 0, err
    assert "Warning" not in err and "savefig" not in err
    assert err.count("note: the chart pictures show boxes") == 1
    assert "温" in err
