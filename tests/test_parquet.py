"""Parquet files and folders: the same table and numbers as the CSV, what is held in memory
bounded from the footers, and one sentence (exit 2) for each hostile file."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import stratpd_xl as sx
from stratpd_xl.cli import main
from stratpd_xl.errors import StratPDInputError
from stratpd_xl.input import _parquet, files
from stratpd_xl.input.files import PARQUET_SUFFIXES, read_table
from stratpd_xl.input.tables import refuse_lazy_table

from .parquet_craft import claim


def table(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """Numbers, whole numbers, dates, categories, codes with leading zeros, ids beyond 2**53,
    TRUE/FALSE, an infinite number and characters beyond the Basic Multilingual Plane."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, n)
    city = rng.choice(["Paris", "Lyon", "Nice 🏖"], n)
    y = 2 * x + (city == "Lyon") * 3 + rng.normal(0, 0.5, n)
    x[7] = np.inf
    return pd.DataFrame({
        "y": y,
        "x": x,
        "rooms": rng.integers(1, 6, n),
        "sold": pd.date_range("2021-03-01", periods=n, freq="D").as_unit("us"),
        "city": city,
        "store": rng.choice(["007", "012", "100"], n),
        "id": 12345678901234567 + np.arange(n),
        "new": rng.integers(0, 2, n).astype(bool),
    })


def test_parquet_gives_the_same_table_and_numbers_as_csv(tmp_path):
    data = table()
    data.to_csv(tmp_path / "t.csv", index=False)
    data.to_parquet(tmp_path / "t.parquet")
    from_csv, from_parquet = read_table(tmp_path / "t.csv"), read_table(tmp_path / "t.parquet")
    pd.testing.assert_frame_equal(from_parquet, from_csv)
    assert from_parquet["id"].dtype == np.int64  # ids beyond 2**53 stay exact
    assert from_parquet.attrs.get("texts") == from_csv.attrs.get("texts")  # "007" kept
    # The infinite number is a missing value with a note, from either file.
    assert [n.replace("t.parquet", "t.csv") for n in from_parquet.attrs["notes"]] == \
        from_csv.attrs["notes"]
    assert from_parquet.attrs["source"] == {
        "path": str(tmp_path / "t.parquet"), "format": "parquet", "files": 1}
    pd.testing.assert_frame_equal(sx.stratpd(from_parquet, "y", "x"),
                                  sx.stratpd(from_csv, "y", "x"))
    pd.testing.assert_frame_equal(sx.catstratpd(from_parquet, "y", "city"),
                                  sx.catstratpd(from_csv, "y", "city"))


def test_cli_reads_a_parquet_file_and_a_folder_as_the_csv(tmp_path, capsys):
    data = table(600, seed=1).drop(columns=["id"])
    data.to_csv(tmp_path / "t.csv", index=False)
    data.to_parquet(tmp_path / "t.parquet")
    folder = tmp_path / "parts"
    folder.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(data)), 3)):
        data.iloc[part].to_parquet(folder / f"part-{i}.parquet")
    (folder / "_SUCCESS").write_text("")  # what Spark writes beside its parts
    outs = []
    for source in ("t.csv", "t.parquet", "parts"):
        out = tmp_path / f"{source}-curve.csv"
        assert main(["curve", str(tmp_path / source), "-t", "y", "-f", "x", "-o", str(out)]) == 0
        outs.append(pd.read_csv(out))
    pd.testing.assert_frame_equal(outs[1], outs[0])
    pd.testing.assert_frame_equal(outs[2], outs[0])
    assert main(["impact", str(folder), "-t", "y"]) == 0
    assert "city" in capsys.readouterr().out


class _Stdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = io.BytesIO(data)


@pytest.mark.parametrize("suffix", [".xlsx", ".png"])
def test_parquet_from_standard_input_and_to_each_output(tmp_path, monkeypatch, suffix):
    data = table(300, seed=2).drop(columns=["id"])
    data.to_parquet(tmp_path / "t.parquet")
    monkeypatch.setattr(sys, "stdin", _Stdin((tmp_path / "t.parquet").read_bytes()))
    out = tmp_path / f"curve{suffix}"
    assert main(["curve", "-", "-t", "y", "-f", "city", "-o", str(out), "--quiet"]) == 0
    assert out.stat().st_size > 1000


def test_only_the_columns_asked_for_are_read_and_count(tmp_path, monkeypatch):
    data = table(1000)
    data.to_parquet(tmp_path / "t.parquet")
    frame = sx.read_table(tmp_path / "t.parquet", columns=["y", "x", "city"])
    assert list(frame.columns) == ["y", "x", "city"]
    assert sx.read_table(tmp_path / "t.parquet", columns="y").columns.tolist() == ["y"]
    # 1,000 rows x 8 columns is over a 40 kB limit; the two number columns are 16 kB.
    monkeypatch.setattr(files, "MAX_HELD_BYTES", 40_000)
    with pytest.raises(StratPDInputError, match=r"1,000 rows x 8 columns.*over the "
                       r"40,000 bytes limit.*fewer columns.*sample of the rows"):
        read_table(tmp_path / "t.parquet")
    assert read_table(tmp_path / "t.parquet", columns=["y", "x"]).shape == (1000, 2)
    with pytest.raises(StratPDInputError, match='column "price" not found in "t.parquet"'):
        read_table(tmp_path / "t.parquet", columns=["price"])


def test_without_pyarrow_one_sentence_names_the_extra(tmp_path, monkeypatch, capsys):
    table(50).to_parquet(tmp_path / "t.parquet")
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # import fails, as when absent
    assert main(["curve", str(tmp_path / "t.parquet"), "-t", "y", "-f", "x"]) == 2
    err = capsys.readouterr().err
    assert 'needs the parquet extra (pyarrow): run pip install "stratpd-xl[parquet]"' in err
    assert "Traceback" not in err


def _refused(path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The one sentence the command line gives for ``path`` (exit 2, no traceback)."""
    assert main(["curve", str(path), "-t", "y", "-f", "x", *args]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err
    return err


def test_a_row_group_claiming_10_gb_is_refused_from_the_footer(tmp_path, capsys):
    table(200).to_parquet(tmp_path / "t.parquet")
    rows = shutil.copy(tmp_path / "t.parquet", tmp_path / "rows.parquet")
    claim(Path(rows), rows=1_400_000_000)
    err = _refused(Path(rows), capsys)
    assert '"rows.parquet" holds about' in err and "1,400,000,000 rows x 8 columns" in err
    assert "over the 512 MB limit" in err
    size = shutil.copy(tmp_path / "t.parquet", tmp_path / "size.parquet")
    claim(Path(size), uncompressed=10 * 1024**3)
    err = _refused(Path(size), capsys)
    assert "81,920 MB of data once decompressed" in err and "its footer declares" in err


def test_a_footer_over_its_limit_is_refused_before_it_is_parsed(tmp_path, monkeypatch, capsys):
    table(100).to_parquet(tmp_path / "wide.parquet")
    footer = int.from_bytes((tmp_path / "wide.parquet").read_bytes()[-8:-4], "little")
    monkeypatch.setattr(_parquet, "MAX_FOOTER_BYTES", footer - 1)
    err = _refused(tmp_path / "wide.parquet", capsys)
    assert f'the footer of "wide.parquet" (its list of columns and row groups) is {footer:,} ' \
        f"bytes, over the {footer - 1:,} bytes limit" in err


@pytest.mark.parametrize("damage", ["csv", "cut", "footer", "empty"])
def test_a_damaged_file_or_not_parquet_is_one_sentence(tmp_path, capsys, damage):
    table(100).to_parquet(tmp_path / "ok.parquet")
    good = (tmp_path / "ok.parquet").read_bytes()
    body = {
        "csv": b"y,x\n1,2\n3,4\n",
        "cut": good[: len(good) // 2],
        "footer": good[:-60] + b"\xff" * 52 + good[-8:],
        "empty": b"",
    }[damage]
    (tmp_path / "bad.parquet").write_bytes(body)
    err = _refused(tmp_path / "bad.parquet", capsys)
    assert 'cannot read "bad.parquet" as a Parquet file (damaged, cut short or not Parquet); ' \
        "write it again from its source, or save the table as .csv" in err


def test_text_that_is_not_utf8_names_its_column(tmp_path, capsys):
    n = 60
    latin = pa.array([b"caf\xe9", b"ok", b"\xed\xa0\x80"] * (n // 3)).view(pa.string())
    pq.write_table(pa.table({"y": np.arange(n * 1.0), "x": np.arange(n) % 7 * 1.0,
                             "name": latin}), tmp_path / "latin.parquet")
    err = _refused(tmp_path / "latin.parquet", capsys)
    assert 'column "name" of "latin.parquet" holds text that is not UTF-8' in err


def test_files_of_a_folder_that_disagree_are_refused(tmp_path, capsys):
    data = table(100)
    drift, missing = tmp_path / "drift", tmp_path / "missing"
    drift.mkdir()
    missing.mkdir()
    data.to_parquet(drift / "a.parquet")
    data.assign(rooms=data["rooms"].astype(str) + " rooms").to_parquet(drift / "b.parquet")
    err = _refused(drift, capsys)
    assert 'column "rooms" holds numbers in "a.parquet" but text in "b.parquet"' in err
    assert "one type for each column" in err
    data.to_parquet(missing / "a.parquet")
    data.drop(columns=["city"]).to_parquet(missing / "b.parquet")
    err = _refused(missing, capsys)
    assert 'column "city" is missing from "b.parquet" of "missing/"' in err
    # int64 in one file and float64 (with blanks) in another are both numbers: one column.
    ints = tmp_path / "ints"
    ints.mkdir()
    data.to_parquet(ints / "a.parquet")
    data.assign(rooms=data["rooms"].where(data.index % 7 > 0)).to_parquet(ints / "b.parquet")
    frame = read_table(ints)
    assert len(frame) == 200 and frame["rooms"].isna().sum() == (data.index % 7 == 0).sum()


def test_nested_columns_are_left_out_with_a_note_or_refused_when_named(tmp_path, capsys):
    data = table(200)
    arrow = pa.Table.from_pandas(data, preserve_index=False)
    arrow = arrow.append_column("tags", pa.array([[1, 2]] * len(data)))
    arrow = arrow.append_column("address", pa.array([{"street": "a", "no": 1}] * len(data)))
    pq.write_table(arrow, tmp_path / "n.parquet")
    frame = read_table(tmp_path / "n.parquet")
    assert "tags" not in frame.columns and "address" not in frame.columns
    assert frame.attrs["notes"][0].startswith(
        'left out 2 columns of "n.parquet" that cannot be analysed (nested values): '
        '"tags", "address"')
    assert main(["curve", str(tmp_path / "n.parquet"), "-t", "y", "-f", "x"]) == 0
    capsys.readouterr()
    with pytest.raises(StratPDInputError, match='column "tags" of "n.parquet" holds nested '
                       r"values \(list<.*\), which cannot be analysed; choose a column"):
        sx.read_table(tmp_path / "n.parquet", columns=["y", "tags"])
    # Named on the command line (as typed: case and spaces ignored), it is refused the same.
    err = _refused(tmp_path / "n.parquet", capsys, "-f", "Tags")
    assert 'column "tags" of "n.parquet" holds nested values (list<' in err
    assert "not found" not in err


def test_parquet_types_read_as_their_values(tmp_path):
    n = 120
    rng = np.random.default_rng(3)
    y = rng.normal(size=n)
    zone = pd.date_range("2024-03-30 22:00", periods=n, freq="h", tz="Europe/Paris")
    arrow = pa.table({
        "y": y,
        "city": pa.array(rng.choice(["a", "b", None], n)).dictionary_encode(),
        "when": pa.array(zone),
        "price": pa.array([decimal.Decimal(f"{i}.25") for i in range(n)], pa.decimal128(9, 2)),
        "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in range(n)]),
        "nothing": pa.nulls(n),
        "raw": pa.array([b"\x00\x01"] * n),
    })
    pq.write_table(arrow, tmp_path / "types.parquet")
    frame = read_table(tmp_path / "types.parquet")
    assert frame["city"].tolist()[:20] == [v if v else np.nan for v in
                                           arrow["city"].to_pylist()[:20]]
    # Local times in the file's zone (the clocks went forward on 2024-03-31 in Paris).
    assert frame["when"].tolist()[:6] == list(zone.tz_localize(None)[:6])
    assert frame["price"].tolist()[:3] == [0.25, 1.25, 2.25]
    assert frame["day"].iloc[1] == pd.Timestamp("2024-01-02")
    assert frame["nothing"].isna().all()  # a named empty column, as in a CSV
    assert "raw" not in frame.columns
    notes = " | ".join(frame.attrs["notes"])
    assert "(raw bytes)" in notes and '"raw"' in notes
    assert 'column "when" of "types.parquet" holds times in time zone Europe/Paris' in notes


def test_zero_rows_and_names_that_are_not_text(tmp_path, capsys):
    table(10).iloc[:0].to_parquet(tmp_path / "zero.parquet")
    err = _refused(tmp_path / "zero.parquet", capsys)
    assert '"zero.parquet" holds no rows (only the columns "y", "x"' in err
    # pandas writes the column names 0 and 1 as the texts "0" and "1": named by their text.
    numbered = pd.DataFrame({0: np.arange(50.0), 1: np.arange(50.0) ** 2})
    numbered.to_parquet(tmp_path / "numbered.parquet")
    assert read_table(tmp_path / "numbered.parquet").columns.tolist() == ["0", "1"]
    assert main(["curve", str(tmp_path / "numbered.parquet"), "-t", "1", "-f", "0"]) == 0


def test_a_folder_without_parquet_files_and_wrong_options(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(StratPDInputError, match="is a folder without .parquet files"):
        read_table(tmp_path)
    table(20).to_parquet(tmp_path / "t.parquet")
    with pytest.raises(StratPDInputError, match="no sheets; leave out --sheet"):
        read_table(tmp_path / "t.parquet", sheet="Data")
    with pytest.raises(StratPDInputError, match="always UTF-8; leave out --encoding"):
        read_table(tmp_path / "t.parquet", encoding="cp1252")
    assert PARQUET_SUFFIXES == (".parquet",)
    assert _parquet.MAX_PARQUET_FILES >= 1000


def test_a_dask_dataframe_gets_one_sentence_not_a_wrong_table():
    dd = pytest.importorskip("dask.dataframe")
    data = dd.from_pandas(table(100).drop(columns=["sold"]), npartitions=2)
    # sx.stratpd, sx.catstratpd and sx.impact take it (tests/test_scale.py); the others say so.
    for call in (lambda: sx.analyse(data, "y"), lambda: sx.interactions(data, "y"),
                 lambda: sx.compare(data, "y", "x"), lambda: refuse_lazy_table(data)):
        with pytest.raises(StratPDInputError) as caught:
            call()
        assert str(caught.value).startswith(
            "a Dask DataFrame is analysed in parallel by sx.stratpd, sx.catstratpd and "
            "sx.impact only: here pass data.compute() if it fits in memory")
        assert "columns are" not in str(caught.value)
    refuse_lazy_table(table(20))  # a pandas DataFrame passes
