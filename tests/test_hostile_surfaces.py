"""Hostile input on the newer surfaces: standard input and output, SVG/PDF text, huge targets,
text that UTF-8 cannot carry, and the Python entry points of compare, ICE and interactions.

Each test holds one class of bad input to one sentence naming the fix (exit code 2 on the
command line, ``StratPDInputError`` in Python) or to a right answer; none half-written.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stratpd_xl import cli

pytestmark = pytest.mark.filterwarnings("ignore")


def _table(n: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    d = pd.DataFrame({"area": rng.uniform(50, 200, n).round(2), "rooms": rng.integers(1, 6, n)})
    d["price"] = (3 * d["area"] + 10 * d["rooms"] + rng.normal(0, 5, n)).round(2)
    return d


@pytest.fixture
def small_csv(tmp_path: Path) -> Path:
    path = tmp_path / "h.csv"
    _table().to_csv(path, index=False)
    return path


# --------------------------------------------------------------------------- standard streams


class _Endless(io.RawIOBase):
    """A pipe that never ends (``yes |``), counting what was taken from it."""

    def __init__(self) -> None:
        self.taken = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        buffer[:] = b"y\n" * (len(buffer) // 2) + b"y" * (len(buffer) % 2)
        self.taken += len(buffer)
        return len(buffer)


def test_standard_input_stops_at_the_files_size_limit(monkeypatch, capsys):
    monkeypatch.setattr(cli, "MAX_FILE_BYTES", 5 * 1024**2)
    endless = _Endless()

    class Stdin:
        buffer = io.BufferedReader(endless)

    monkeypatch.setattr(sys, "stdin", Stdin)
    assert cli.main(["curve", "-", "-t", "price", "-f", "area"]) == 2
    err = capsys.readouterr().err
    assert "standard input is over the 5 MB limit for input files" in err
    assert endless.taken <= 5 * 1024**2 + 2 * 8192  # the limit and a buffer, not the stream


def _command(*args: str, **kwargs) -> subprocess.CompletedProcess:
    kwargs = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **kwargs}
    return subprocess.run([sys.executable, "-m", "stratpd_xl", *args], text=True, timeout=120,
                          **kwargs)


def test_closed_standard_streams_are_one_sentence(small_csv):
    closed_in = _command("curve", "-", "-t", "price", "-f", "area",
                         preexec_fn=lambda: os.close(0))
    assert closed_in.returncode == 2, closed_in.stderr
    assert "standard input is closed; give the table's file name" in closed_in.stderr
    closed_out = subprocess.run(
        f'"{sys.executable}" -m stratpd_xl curve "{small_csv}" -t price -f area 1>&-',
        shell=True, capture_output=False, stderr=subprocess.PIPE, text=True, timeout=120)
    assert closed_out.returncode == 2, closed_out.stderr
    assert "standard output is closed" in closed_out.stderr
    for text in (closed_in.stderr, closed_out.stderr):
        assert "internal error" not in text and "Traceback" not in text


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_standard_output_is_named(small_csv):
    with open("/dev/full", "w") as full:
        done = _command("impact", str(small_csv), "-t", "price", stdout=full)
    assert done.returncode == 2
    assert "cannot write the answer to standard output (No space left on device)" in done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


# --------------------------------------------------------------------------- SVG and PDF text


def test_control_characters_in_names_and_categories_give_svgs_that_are_xml(tmp_path, capsys):
    import xml.etree.ElementTree as ET

    rng = np.random.default_rng(0)
    n = 400
    kind = rng.choice(["a\x01", "b\x02", "c\x1b[2J"], n)
    d = pd.DataFrame({"ar\x01ea": rng.uniform(50, 200, n).round(2), "kind": kind,
                      "rooms": rng.integers(1, 6, n)})
    d["price"] = (3 * d["ar\x01ea"] + 10 * d["rooms"] + (kind == "a\x01") * 50
                  + rng.normal(0, 5, n)).round(2)
    data = tmp_path / "ctl.csv"
    d.to_csv(data, index=False)
    common = [str(data), "-t", "price", "--trials", "2", "-q"]
    runs = {
        "curve": ["curve", *common, "-f", "kind"],
        "numeric": ["curve", *common, "-f", "ar\x01ea"],
        "compare": ["compare", *common, "-f", "kind"],
        "by": ["curve", *common, "-f", "ar\x01ea", "--by", "kind"],
        "interactions": ["interactions", *common],
    }
    for name, args in runs.items():
        svg, pdf = tmp_path / f"{name}.svg", tmp_path / f"{name}.pdf"
        assert cli.main([*args, "-o", str(svg), "-o", str(pdf)]) == 0, capsys.readouterr().err
        text = "".join(ET.parse(svg).getroot().itertext())  # not XML: ParseError
        assert "\\x1b[2J" in text or "\\x01" in text, name
        assert pdf.read_bytes().startswith(b"%PDF")


# --------------------------------------------------------------------------- huge targets


def test_compare_on_a_target_near_1e306_gives_the_scaled_answer(tmp_path, capsys):
    import stratpd_xl as sx
    from stratpd_xl import spreadsheet

    small = _table(400)
    big = small.assign(price=small["price"] * 1e304)  # 1e305 .. 1e307
    plain = sx.compare(small, "price", "area", n_trials=1)
    huge = sx.compare(big, "price", "area", n_trials=1)
    for column in ("stratpd", "pdp", "ale"):
        assert np.isfinite(huge[column]).all(), column
        back = huge[column] / 1e304
        assert np.corrcoef(back, plain[column])[0, 1] > 0.99
        assert np.abs(back).sum() == pytest.approx(np.abs(plain[column]).sum(), rel=0.05)
    assert huge.attrs["target_sd"] == pytest.approx(plain.attrs["target_sd"] * 1e304, rel=1e-9)
    assert huge.attrs["agreement"] == pytest.approx(plain.attrs["agreement"], abs=0.05)
    pair = sx.compare(big, "price", ["area", "rooms"])
    assert np.isfinite(pair["pdp"]).all() and 0 <= pair.attrs["h2"] <= 1
    ice = sx.ice(big, "price", "area")
    assert np.isfinite(ice["prediction"]).all() and ice["prediction"].abs().max() > 1e306

    cells = spreadsheet.stratcompare([list(big.columns), *big.values.tolist()], "price",
                                     "area", trials=1).cells
    assert not str(cells[0][0]).startswith("STRATCOMPARE"), cells[0][0]
    path = tmp_path / "big.csv"
    big.to_csv(path, index=False)
    assert cli.main(["compare", str(path), "-t", "price", "-f", "area", "-q", "-o",
                     str(tmp_path / "c.csv"), "--ice"]) == 0, capsys.readouterr().err
    assert cli.main(["compare", str(path), "-t", "price", "-f", "area", "-q", "-o",
                     str(tmp_path / "plain.csv")]) == 0, capsys.readouterr().err
    # Printed for a person: four significant digits, not 300 of them.
    capsys.readouterr()
    assert cli.main(["compare", str(path), "-t", "price", "-f", "area", "-q"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert "e+30" in printed[1] and max(map(len, printed)) < 80, printed[:2]


# --------------------------------------------------------------------------- half characters


def test_half_an_emoji_in_a_cell_is_mended_once_and_counted():
    import stratpd_xl as sx
    from stratpd_xl import spreadsheet

    rng = np.random.default_rng(0)
    n = 300
    # =LEFT(A2,1) of a cell starting with an emoji: its first UTF-16 half, alone.
    kind = rng.choice(["\ud83d", "b", "c"], n)
    # As text a user's pandas holds it: object (pandas' pyarrow strings refuse the half).
    d = pd.DataFrame({"area": rng.uniform(50, 200, n), "kind": pd.Series(kind, dtype=object)})
    d["price"] = 3 * d["area"] + (kind == "b") * 20 + rng.normal(0, 5, n)
    cells = [["area", "kind\ud800", "price"], *d.values.tolist()]
    ranking = spreadsheet.stratimpact(cells, "price")
    assert [row[0] for row in ranking[1:]] == ["area", "kind\ufffd"], ranking
    curve = spreadsheet.stratpd(cells, "price", "kind\ufffd").cells
    assert "\ufffd" in [row[0] for row in curve[1:4]], curve
    assert "internal error" not in " ".join(str(c) for row in curve for c in row)
    from stratpd_xl.input.sheet import frame_from_cells

    notes = frame_from_cells(cells).attrs["notes"]
    count = int((kind == "\ud83d").sum())
    assert notes == [f'{count} text cells ({count} in "kind\ufffd") and 1 column name held half '
                     "of a character (a lone surrogate, as =LEFT of a cell starting with an "
                     "emoji leaves); it is shown as \ufffd"]
    # Two halves written apart are one character again, not a replacement.
    joined = spreadsheet.stratpd([["k", "y"], *[["\ud83d\ude00" if i % 2 else "a", float(i % 2)
                                                 + i / 1000] for i in range(200)]], "y", "k")
    assert "\U0001f600" in [row[0] for row in joined.cells[1:3]]
    # The Python API's frame goes through the same step.
    result = sx.compare(d, "price", "kind", n_trials=1)
    assert any("99 text cells" in note or "text cells" in note
               for note in result.attrs["notes"]), result.attrs["notes"]


# --------------------------------------------------------------------------- Python entry points


def sx_():
    import stratpd_xl

    return stratpd_xl


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text")

    __repr__ = __str__


@pytest.mark.parametrize("call, words", [
    (lambda d: sx_().compare(d.set_axis(["area", "area", "price"], axis=1), "price", "area"),
     "column names must be unique; rename the repeated column(s): area"),
    (lambda d: sx_().compare(d.assign(price=[[1.0]] * len(d)), "price", "area"),
     'column "price" holds a list in a cell (row 1'),
    (lambda d: sx_().stratpd(d.assign(g=[[1, 2]] * len(d)), "price", "area", by="g"),
     'column "g" holds a list in a cell'),
    (lambda d: sx_().ice(d, "price", "area", rows=-5), "rows must be a whole number of rows"),
    (lambda d: sx_().ice(d, "price", "area", rows=2.5), "rows must be a whole number of rows"),
    (lambda d: sx_().ice(d, "price", "area", rows=0), "rows must be a whole number of rows"),
    (lambda d: sx_().ice(d, "price", "area", rows="five"), "rows must be a whole number"),
    (lambda d: sx_().impact(d, "price", by="rooms"), "by= makes one curve per group"),
    (lambda d: sx_().interactions(d, "price", "area"), "need at least two columns"),
    (lambda d: sx_().compare(d, _Unprintable(), "area"),
     "target must be a column name; got a _Unprintable whose text cannot be read"),
    (lambda d: sx_().impact(d, _Unprintable()), "target must be a column name"),
    (lambda d: sx_().stratpd(d, "price", _Unprintable()), "feature must be a column name"),
    (lambda d: sx_().compare(d.to_numpy(), "price", "area"), "data is an array without "
     "column names; pass a DataFrame that names them"),
    (lambda d: sx_().impact(d.to_numpy(), "price"), "data is an array without column names"),
    (lambda d: sx_().compare(d, range(3), "area"), "target must be one column name; got a range"),
    (lambda d: sx_().impact(d, range(3)), "target must be one column name; got a range"),
])
def test_the_python_entry_points_answer_in_one_sentence(call, words):
    from stratpd_xl.errors import StratPDInputError

    with pytest.raises(StratPDInputError) as caught:
        call(_table())
    assert words in str(caught.value)



def test_the_python_entry_points_take_what_they_should():
    import stratpd_xl as sx

    d = _table()
    assert len(sx.ice(d, "price", "area", rows="5")["row"].unique()) == 5  # as cells hand it
    assert len(sx.ice(d, "price", "area", rows=3.0)["row"].unique()) == 3
    d = d.assign(z=np.random.default_rng(1).uniform(0, 1, len(d)))
    pairs = sx.interactions(d, "price", ["area", "z"])
    assert {pairs["feature_1"].iloc[0], pairs["feature_2"].iloc[0]} == {"area", "z"}
    assert list(sx.impact(d, "price", "area")["feature"]) == ["area"]


# --------------------------------------------------------------------------- infinite numbers


def test_a_column_a_third_inf_stays_numbers_with_a_note(tmp_path, capsys):
    d = _table(600)
    area = d["area"].astype(object)
    area[::3] = "inf"
    area[1::9] = "-Infinity"
    path = tmp_path / "inf.csv"
    d.assign(area=area).to_csv(path, index=False)
    assert cli.main(["curve", str(path), "-t", "price", "-f", "area", "--trials", "1"]) == 0
    out, err = capsys.readouterr()
    assert 'note: column "area": 267 infinite numbers treated as missing' in err
    assert "price rises with area" in err  # a curve, not 335 categories
    assert "categor" not in out.splitlines()[0]


# --------------------------------------------------------------------------- output names


def test_an_ice_file_named_as_another_output_is_refused_before_the_fit(small_csv, tmp_path,
                                                                        capsys, monkeypatch):
    from stratpd_xl import workflow

    monkeypatch.setattr(workflow, "compare", lambda *a, **k: pytest.fail("fitted first"))
    out = tmp_path / "x.csv"
    code = cli.main(["compare", str(small_csv), "-t", "price", "-f", "area", "--ice",
                     "-o", str(out), "-o", str(tmp_path / "x-ice.csv")])
    assert code == 2
    assert "is where --ice writes the ICE table of" in capsys.readouterr().err
    assert not out.exists()


def test_a_file_name_with_a_line_break_is_said_on_one_line(small_csv, tmp_path, capsys):
    out = tmp_path / "a\nb\x1b[2J.csv"
    assert cli.main(["curve", str(small_csv), "-t", "price", "-f", "area",
                     "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert said.count("\n") == 1 and "a\\x0ab\\x1b[2J.csv" in said
    assert out.exists()


def test_many_pairs_are_announced_off_a_terminal(tmp_path, capsys):
    rng = np.random.default_rng(0)
    d = pd.DataFrame(rng.uniform(0, 1, (200, 13)), columns=[f"c{i}" for i in range(13)])
    d["y"] = d["c0"] * d["c1"] + d["c2"]
    d.to_csv(tmp_path / "w.csv", index=False)
    assert cli.main(["interactions", str(tmp_path / "w.csv"), "-t", "y",
                     "--max-features", "12"]) == 0
    assert ("note: pairing up to 12 features: up to 66 pairs, 1.5 times the 45 of "
            "--max-features 10") in capsys.readouterr().err
