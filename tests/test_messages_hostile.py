"""The sentences for inputs that worked but left the user guessing: a target without values,
a two-valued feature, long ids, huge numbers in pictures, --max-points 0, Ctrl+C while the
command starts, outputs that cannot be written, a full disk.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import stratpd_xl as sx
from stratpd_xl.cli import main
from stratpd_xl.errors import StratPDInputError, exit_process


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def table(tmp_path) -> Path:
    rng = np.random.default_rng(0)
    n = 120
    data = pd.DataFrame({"x": rng.uniform(0, 10, n).round(3), "z": rng.uniform(0, 10, n).round(3)})
    data["y"] = (2 * data["x"] + data["z"]).round(3)
    path = tmp_path / "t.csv"
    data.to_csv(path, index=False)
    return path


def _with_target(path: Path, value: str) -> Path:
    lines = path.read_text().splitlines()
    out = path.with_name(f"target_{len(value)}.csv")
    out.write_text("\n".join([lines[0]] + [",".join(r.split(",")[:2] + [value])
                                           for r in lines[1:]]) + "\n")
    return out


@pytest.mark.parametrize(
    ("value", "expected"),
    [("", "has no values"), ("inf", "holds only infinite numbers"),
     ("5", "has the same value (5) in every row")],
)
def test_a_target_without_anything_to_explain_says_what(table, capsys, value, expected):
    code, _, err = run(["impact", _with_target(table, value), "-t", "y"], capsys)
    assert code == 2 and expected in err, err
    assert "lower min_samples_leaf" not in err


def test_a_two_valued_feature_without_a_curve_suggests_categories():
    # The other column nearly decides the flag, so no stratum holds both values.
    rng = np.random.default_rng(0)
    flag = rng.integers(0, 2, 200)
    data = pd.DataFrame({"flag": flag, "z": 10 * flag + rng.uniform(0, 1, 200)})
    data["y"] = 3 * data["flag"] + data["z"]
    with pytest.raises(StratPDInputError, match=r'"flag" has only 2 values \(0 and 1\).*'
                                                r"--categorical flag"):
        sx.stratpd(data, "y", "flag")


def test_long_ids_are_neither_merged_nor_printed_in_exponent_form(tmp_path, capsys):
    # 17-digit codes beyond 2**53 were floats: 12345678901234500 and ...501 became one
    # category, printed 1.23457e+16.
    rng = np.random.default_rng(1)
    n = 200
    code = 12345678901234500 + np.arange(n) % 4
    x = rng.uniform(0, 10, n)
    path = tmp_path / "ids.csv"
    pd.DataFrame({"code": code, "x": x.round(3), "y": (2 * x + np.arange(n) % 4).round(3)}
                 ).to_csv(path, index=False)
    rc, out, err = run(["curve", path, "-t", "y", "-f", "code", "--categorical", "code"],
                       capsys)
    assert rc == 0, err
    assert "e+16" not in out
    assert all(str(12345678901234500 + k) in out for k in range(4))


def test_huge_numbers_in_pictures_carry_their_exponent_on_every_tick():
    from stratpd_xl.presentation.charts import curve_figure

    curve = pd.DataFrame({"x": np.linspace(1e300, 3e300, 50),
                          "pd": np.linspace(-2e300, 2e300, 50), "slope": 1.0, "n_slopes": 5})
    curve.attrs.update(target="y", feature="x", method="StratPD", n=100)
    figure = curve_figure(curve)
    figure.canvas.draw()
    for axis in (figure.axes[0].yaxis, figure.axes[1].xaxis):
        labels = [t.get_text() for t in axis.get_ticklabels() if t.get_text() not in ("", "0")]
        assert labels and all("e+29" in t or "e+30" in t for t in labels), labels
        assert not axis.get_offset_text().get_text()


def test_max_points_zero_keeps_every_point(table, capsys):
    every = run(["curve", table, "-t", "y", "-f", "x", "--all-points", "--seed", "1"], capsys)
    zero = run(["curve", table, "-t", "y", "-f", "x", "--max-points", "0", "--seed", "1"],
               capsys)
    assert zero[0] == 0, zero[2]
    assert zero[1] == every[1]


def test_ctrl_c_while_the_command_starts_exits_130_without_a_traceback():
    # A real SIGINT while the command imports pandas (the console script's entry point).
    script = (
        "import builtins, os, signal, sys\n"
        "from stratpd_xl.__main__ import command\n"
        "real = builtins.__import__\n"
        "def hook(name, *args, **kwargs):\n"
        "    if name == 'pandas':\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = hook\n"
        "sys.argv = ['stratpd-xl', '--help']\n"
        "sys.exit(command())\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 130, proc.stderr[-500:]
    assert "Traceback" not in proc.stderr and "cancelled" in proc.stderr


@pytest.mark.parametrize("module", ["stratpd_xl.cli", "stratpd_xl"])
def test_ctrl_c_inside_code_run_by_exec_still_exits_130(module, tmp_path):
    # A real SIGINT that lands in code run by exec() of a string (namedtuple, dataclasses and
    # scipy's lazy imports run such code all through a report): the command says cancelled
    # and returns 130, but CPython remembered the interrupt as uncaught and `python -m` ended
    # by SIGINT (-2), about one report in 40 under load.
    (tmp_path / "sitecustomize.py").write_text(
        "import contextlib\n"
        "import stratpd_xl._backend as backend\n"
        "@contextlib.contextmanager\n"
        "def one_shot():\n"
        "    exec('import os, signal\\nos.kill(os.getpid(), signal.SIGINT)\\n'\n"
        "         'for _ in range(10 ** 8): pass')\n"
        "    yield\n"
        "backend.one_shot = one_shot\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    proc = subprocess.run([sys.executable, "-m", module, "demo"], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path, env=env)
    assert "cancelled" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-500:]
    assert proc.returncode == 130
    with pytest.raises(SystemExit) as ended:  # what both `python -m` entry points end with
        exit_process(130)
    assert ended.value.code == 130


def test_outputs_that_cannot_be_written_are_refused_before_the_analysis(table, tmp_path,
                                                                        capsys):
    link = tmp_path / "answer.xlsx"
    link.symlink_to(tmp_path / "gone" / "answer.xlsx")
    code, _, err = run(["report", table, "-t", "y", "-o", link], capsys)
    assert code == 2 and "which does not exist" in err and "analysed" not in err
    if not Path("/proc/self").exists():
        pytest.skip("needs Linux /proc (unwritable even for root)")
    code, _, err = run(["report", table, "-t", "y", "-o", "/proc/answer.xlsx"], capsys)
    assert code == 2 and 'folder "/proc" takes no new file' in err
    assert "analysed" not in err  # refused before any feature was analysed


def test_a_full_disk_is_not_blamed_on_excel(table):
    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")
    from stratpd_xl.presentation.report import write_report
    from stratpd_xl.workflow import analysis

    result = analysis(pd.read_csv(table), "y")
    with pytest.raises(StratPDInputError, match="the disk is full") as exc:
        write_report(result, "/dev/full")
    assert "Excel" not in str(exc.value)


_RAW_CONTROL = ("\x1b", "\x07", "\x08", "\r", "\x9b")


@pytest.mark.parametrize("payload", ["\x1b]0;pwned\x07", "\x1b[2J", "a\rb", "x\x08y", "\x9b31m"])
def test_control_characters_from_a_file_never_reach_the_terminal(tmp_path, capsys, payload):
    # A cell or column name holding ESC sequences, BEL, NUL or a carriage return was
    # printed raw in notes, errors, printed tables and sentences: it set the window title,
    # cleared the screen or hid the text before it.
    rng = np.random.default_rng(0)
    n = 120
    z = rng.uniform(0, 10, n)
    code = [f"{payload}{i % 3}" for i in range(n)]
    data = pd.DataFrame({"c": code, "z": z.round(3), "y": (np.arange(n) % 3 + z).round(3)})
    path = tmp_path / "control.csv"
    data.to_csv(path, index=False, quoting=csv.QUOTE_NONNUMERIC)  # "a\rb" stays one cell
    out_csv = tmp_path / "answer.csv"
    said = []
    for args in (["curve", path, "-t", "y", "-f", "c", "-o", out_csv],
                 ["curve", path, "-t", "y", "-f", "c"],
                 ["impact", path, "-t", "y"],
                 ["curve", path, "-t", f"y{payload}", "-f", "c"]):
        code_, out, err = run(args, capsys)
        said.append(out + err)
        assert code_ in (0, 2), err
    text = "".join(said)
    assert not any(c in text for c in _RAW_CONTROL), repr(text[:300])
    if "\r" not in payload:  # a space in the error sentence, which joins its lines
        visible = payload.replace("\x08", "\\x08").replace("\x1b", "\\x1b")
        visible = visible.replace("\x07", "\\x07").replace("\x9b", "\\x9b")
        assert visible in text  # shown, not dropped: the user can see what the file holds
    # The answer file keeps the categories exactly as the data holds them.
    assert set(pd.read_csv(out_csv)["category"].astype(str)) == set(code)
