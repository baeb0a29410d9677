"""Tables read chunk by chunk (stratpd_xl.input.stream): the same typed table as a whole
read, one typing for every chunk, pass 0's sketch mergeable in any order, memory bounded
by the chunk, and one sentence for each hostile Parquet file."""

from __future__ import annotations

import io
import shutil
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stratpd_xl.errors import StratPDInputError
from stratpd_xl.input import files, stream
from stratpd_xl.input.files import read_table

from .parquet_craft import claim


def table(n: int = 5000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, n)
    city = rng.choice(["Paris", "Lyon", "Nice"], n)
    return pd.DataFrame({
        "y": 2 * x + (city == "Lyon") * 3 + rng.normal(0, 0.5, n),
        "x": x,
        "rooms": rng.integers(1, 6, n).astype(float),
        "city": city,
        "sold": pd.date_range("2021-03-01", periods=n, freq="h").as_unit("us"),
    })


def _sketch(path: Path, chunk_rows: int, **kw) -> tuple[stream.StreamedTable, stream.Sketch]:
    t = stream.open_table(path, chunk_rows=chunk_rows)
    return t, stream.sketch(t, "y", **kw)


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_a_table_that_fits_is_its_whole_read_in_every_chunking(tmp_path, suffix):
    data = table()
    data.loc[1000:2999, "rooms"] = np.nan  # chunks 2 and 3 (of 1,000 rows) hold no room
    path = tmp_path / f"t{suffix}"
    if suffix == ".csv":
        data.to_csv(path, index=False)
    else:
        pq.write_table(pa.Table.from_pandas(data, preserve_index=False), path,
                       row_group_size=1000)
    whole = read_table(path)
    for chunk_rows in (1000, 1700, 10_000):
        t, sk = _sketch(path, chunk_rows)
        assert sk.complete and sk.rows == len(data)
        # The sample is the table, in row order, typed as the whole read types it.
        assert sk.sample.index.tolist() == list(range(len(data)))
        pd.testing.assert_frame_equal(sk.sample.reset_index(drop=True), whole)
        chunks = list(t.chunks())
        assert all(c["rooms"].dtype == np.float64 for c in chunks)  # blank chunks too
        assert sum(map(len, chunks)) == len(data)
    assert sk.missing["rooms"] == 2000 and sk.low["rooms"] == 1 and sk.high["rooms"] == 5
    levels = sk.levels["city"]
    assert sorted(levels) == ["Lyon", "Nice", "Paris"]
    for city, (rows, with_y, total) in levels.items():
        part = data[data["city"] == city]
        assert rows == with_y == len(part)
        assert total == pytest.approx(part["y"].sum(), rel=1e-12)
    assert sk.y_abs_max == pytest.approx(data["y"].abs().max(), rel=0)


def test_one_typing_for_every_chunk(tmp_path):
    # A column blank in its first chunk takes the kind of its first values; a word later in
    # a column of numbers is a blank with one note, not a column turned into text.
    n = 3000
    rooms = np.arange(n) % 5 + 1.0
    rooms[:1000] = np.nan
    words = rooms.astype(object)
    words[:1000] = ""
    words[1500] = "n/a"
    words[1600] = "lots"  # a word among numbers: the typing step's own note
    words[2000:2900] = "many"  # a chunk of words: still numbers, its words blank
    pd.DataFrame({"y": np.arange(n) * 1.0, "rooms": words}).to_csv(tmp_path / "t.csv",
                                                                  index=False)
    t, sk = _sketch(tmp_path / "t.csv", 1000)
    chunks = list(t.chunks())
    assert [str(c["rooms"].dtype) for c in chunks] == ["float64"] * 3
    got = sk.sample["rooms"].to_numpy()
    assert np.isnan(got[[1500, 1600]]).all() and np.isnan(got[:1000]).all()
    assert np.isnan(got).sum() == 1902 and got[2950] == rooms[2950]
    assert 'column "rooms" of "t.csv": 900 cells that are not a number ("many") treated as ' \
        "missing (the column's kind was fixed by its first rows)" in t.notes
    assert 'column "rooms": 1 cell that is not a number ("lots") treated as missing' in t.notes


def test_the_sample_is_the_same_rows_however_the_table_is_cut(tmp_path):
    data = table(20_000, seed=1)
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pandas(data, preserve_index=False), path,
                   row_group_size=3000)
    samples = [_sketch(path, rows, sample_rows=500, seed=7)[1] for rows in (1000, 4096)]
    frame = data.set_index(pd.RangeIndex(len(data)))
    whole = stream.sketch_frame(frame, "y", seed=7, sample_rows=500)
    keys = stream.row_keys(np.arange(len(data)), 7)
    expected = np.sort(np.argsort(keys)[:500])
    for sk in [*samples, whole]:
        assert sk.sample.index.tolist() == expected.tolist()
    # Merging is associative and commutative: halves in either order, thirds in a tree.
    parts = [stream.sketch_frame(frame.iloc[a:b], "y", seed=7, sample_rows=500)
             for a, b in ((0, 7000), (7000, 12000), (12000, 20000))]
    for merged in (parts[0] + (parts[1] + parts[2]), (parts[2] + parts[0]) + parts[1],
                   sum(parts)):
        assert merged.sample.index.tolist() == expected.tolist()
        assert merged.rows == 20_000 and merged.missing == whole.missing
        for city, stats in whole.levels["city"].items():
            assert merged.levels["city"][city][:2] == stats[:2]
            assert merged.levels["city"][city][2] == pytest.approx(stats[2], rel=1e-12)
    assert not samples[0].complete


def test_levels_beyond_the_limit_mark_a_column_identifier_like(monkeypatch):
    monkeypatch.setattr(stream, "MAX_LEVELS", 50)
    frame = pd.DataFrame({"y": np.arange(80.0), "id": [f"c{i}" for i in range(80)],
                          "k": ["a", "b"] * 40})
    a = stream.sketch_frame(frame.iloc[:40], "y")
    b = stream.sketch_frame(frame.iloc[40:], "y")
    assert a.levels["id"] is not None and (a + b).levels["id"] is None
    assert (a + b).levels["k"] == {"a": [40, 40, float(np.arange(0, 80, 2).sum())],
                                   "b": [40, 40, float(np.arange(1, 80, 2).sum())]}


def test_memory_is_bounded_by_the_chunk_not_the_file(tmp_path, monkeypatch):
    # 400,000 rows x 4 numbers (12.8 MB typed), read in chunks of 20,000 with a sample of
    # 2,000 rows; and a file over the limit of a table held in memory is still streamed.
    n = 400_000
    rng = np.random.default_rng(0)
    arrow = pa.table({f"x{i}": rng.uniform(size=n) for i in range(3)} | {"y": rng.normal(size=n)})
    path = tmp_path / "big.parquet"
    pq.write_table(arrow, path, row_group_size=20_000)
    del arrow
    monkeypatch.setattr(files, "MAX_HELD_BYTES", 4 * 1024**2)
    with pytest.raises(StratPDInputError, match="over the 4 MB limit"):
        read_table(path)
    # Arrow's buffers are not traced by tracemalloc: read through a pool of their own, whose
    # peak counts only this read (writing the file used the default pool).
    before = pa.default_memory_pool()
    pool = pa.system_memory_pool() if before.backend_name != "system" else pa.mimalloc_memory_pool()
    pa.set_memory_pool(pool)
    tracemalloc.start()
    try:
        t, sk = _sketch(path, 20_000, sample_rows=2_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        pa.set_memory_pool(before)
    assert sk.rows == n and len(sk.sample) == 2_000
    typed = n * 4 * 8
    assert peak < typed / 4, f"numpy and pandas held {peak:,} bytes at the peak"
    assert pool.max_memory() < typed / 2, f"Arrow held {pool.max_memory():,} bytes"


def test_progress_per_chunk_with_an_eta_and_quiet(tmp_path):
    data = table(4000)
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pandas(data, preserve_index=False), path, row_group_size=1000)
    out = io.StringIO()
    _sketch(path, 1000, progress=stream.ChunkProgress("pass 0", stream=out))
    lines = out.getvalue().splitlines()
    assert len(lines) == 4 and lines[0].startswith("pass 0: 1,000 rows (25%) in ")
    assert "left" in lines[0] and lines[-1].startswith("pass 0: 4,000 rows (100%) in ")
    quiet = io.StringIO()
    _sketch(path, 1000, progress=stream.ChunkProgress("pass 0", stream=quiet, quiet=True))
    assert quiet.getvalue() == ""


# --------------------------------------------------------------------------- hostile files


def test_a_row_group_too_large_for_a_chunk_is_refused_from_the_footer(tmp_path):
    # A row group is decoded whole, so one claiming 10 GB is refused before it is read.
    path = tmp_path / "t.parquet"
    table(200).to_parquet(path)
    claim(path, uncompressed=10 * 1024**3)
    with pytest.raises(StratPDInputError, match=r'row group 1 of "t.parquet" holds [\d,]+ MB '
                       r"of the columns read once decompressed \(200 rows\), over the 512 MB "
                       r"a chunk may hold; write the file again in row groups"):
        stream.open_table(path)


def test_a_corrupt_footer_and_a_file_cut_short_are_one_sentence(tmp_path):
    table(300).to_parquet(tmp_path / "ok.parquet")
    good = (tmp_path / "ok.parquet").read_bytes()
    for name, body in (("footer", good[:-60] + b"\xff" * 52 + good[-8:]),
                       ("cut", good[: len(good) // 2])):
        (tmp_path / f"{name}.parquet").write_bytes(body)
        with pytest.raises(StratPDInputError, match=f'cannot read "{name}.parquet" as a Parquet '
                           r"file \(damaged, cut short or not Parquet\)"):
            stream.open_table(tmp_path / f"{name}.parquet")


def test_a_schema_that_changes_between_files_is_one_sentence(tmp_path):
    data = table(300)
    folder = tmp_path / "drift"
    folder.mkdir()
    data.to_parquet(folder / "a.parquet")
    data.assign(rooms=data["rooms"].astype(str) + " rooms").to_parquet(folder / "b.parquet")
    with pytest.raises(StratPDInputError, match='column "rooms" holds numbers in "a.parquet" '
                       'but text in "b.parquet"; write the files with one type for each column'):
        stream.open_table(folder)
    # Whole numbers in one file and decimals in the next are one column of numbers.
    ints = tmp_path / "ints"
    ints.mkdir()
    data.assign(rooms=data["rooms"].astype(int)).to_parquet(ints / "a.parquet")
    data.assign(rooms=data["rooms"] + 0.5).to_parquet(ints / "b.parquet")
    t, sk = _sketch(ints, 100)
    assert sk.rows == 600 and sk.sample["rooms"].dtype == np.float64
    assert sk.sample["rooms"].iloc[0] == data["rooms"].iloc[0]


def test_a_nested_column_is_left_out_with_a_note_or_refused_when_named(tmp_path):
    arrow = pa.Table.from_pandas(table(300), preserve_index=False)
    arrow = arrow.append_column("tags", pa.array([[1, 2]] * 300))
    pq.write_table(arrow, tmp_path / "n.parquet")
    t, sk = _sketch(tmp_path / "n.parquet", 100)
    assert "tags" not in sk.sample.columns
    assert t.notes[0].startswith('left out 1 column of "n.parquet" that cannot be analysed '
                                 '(nested values): "tags"')
    with pytest.raises(StratPDInputError, match='column "tags" of "n.parquet" holds nested '
                       r"values \(list<"):
        stream.open_table(tmp_path / "n.parquet", columns=["y", "tags"])


def test_what_cannot_be_streamed_is_one_sentence(tmp_path):
    (tmp_path / "t.xlsx").write_bytes(b"PK")
    with pytest.raises(StratPDInputError, match=r'"t.xlsx" cannot be read in chunks; give a '
                       r"\.parquet file or folder, or a \.csv file"):
        stream.open_table(tmp_path / "t.xlsx")
    table(10).to_csv(tmp_path / "t.csv", index=False)
    with pytest.raises(StratPDInputError, match='column "z" not found in "t.csv"'):
        stream.open_table(tmp_path / "t.csv", columns=["y", "z"])
    shutil.copy(tmp_path / "t.csv", tmp_path / "u.csv")
    with pytest.raises(StratPDInputError, match="chunk_rows must be at least 1"):
        stream.open_table(tmp_path / "u.csv", chunk_rows=0)


def test_the_sample_threshold_is_known_from_the_row_count():
    keys = stream.row_keys(np.arange(10_000), 3)
    assert stream.sample_threshold(10_000, 3, 700) == int(np.sort(keys)[699])
    assert stream.sample_threshold(10_000, 3, 10_000) is None
    # Partitions cut by it keep exactly the sample's rows, and merge to the same sample.
    frame = table(10_000).set_index(pd.RangeIndex(10_000))
    t = stream.sample_threshold(10_000, 3, 700)
    parts = [stream.sketch_frame(frame.iloc[a:a + 2500], "y", seed=3, sample_rows=700,
                                 threshold=t) for a in range(0, 10_000, 2500)]
    assert sum(len(p.sample) for p in parts) == 700
    assert sum(parts).sample.index.tolist() == \
        stream.sketch_frame(frame, "y", seed=3, sample_rows=700).sample.index.tolist()


def test_a_line_without_end_in_a_large_csv_is_refused_as_it_is_read(tmp_path, monkeypatch):
    # The head is a table; further on one "line" runs for megabytes: refused when reached,
    # before the C reader holds it whole.
    monkeypatch.setattr(files, "MAX_LINE_BYTES", 1 << 20)
    monkeypatch.setattr(files, "_SNIFF_CHARS", 1 << 16)
    path = tmp_path / "t.csv"
    table(3000).to_csv(path, index=False)
    with path.open("ab") as fh:
        fh.write(b"1," * (1 << 20))
    t = stream.open_table(path, chunk_rows=1000)
    with pytest.raises(StratPDInputError, match=r'^line 3,002 of "t.csv" is over 1 MB long '
                       "without a line break"):
        list(t.chunks())


def test_a_footer_claiming_more_rows_than_the_file_can_hold_is_one_sentence(tmp_path):
    # Streamed, pass 0 would hash 1.4 billion row ids before reading the file's 200 rows.
    path = tmp_path / "rows.parquet"
    table(200).to_parquet(path)
    claim(path, rows=1_400_000_000)
    with pytest.raises(StratPDInputError, match=r'the footer of "rows.parquet" claims '
                       r"1,400,000,000 rows in a file of [\d,]+ bytes \(damaged or forged\)"):
        stream.open_table(path)
