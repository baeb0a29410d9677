"""The drivers (stratpd_xl.scale): a file read in chunks and a Dask DataFrame on a
LocalCluster of processes give what one pass over the table in memory gives."""

from __future__ import annotations

import json
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stratpd_xl._backend import set_backend
from stratpd_xl.errors import StratPDInputError
from stratpd_xl.input import stream
from stratpd_xl.scale import _run

from . import scale_stages
from .synthetic import three_class_truth, three_classes

FAKE = _run.Stages(scale_stages.fit_strata, scale_stages.pass_chunk, scale_stages.finish)


def table(n: int = 6000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, n)
    return pd.DataFrame({"y": np.sin(x) + rng.normal(0, 0.1, n), "x": x,
                         "z": rng.normal(size=n), "k": rng.choice(["a", "b", "c"], n)})


def in_memory(frame: pd.DataFrame, feature: str = "x") -> pd.DataFrame:
    strata = scale_stages.fit_strata(frame, "y", feature)
    return scale_stages.finish(strata, scale_stages.pass_chunk(strata, frame))


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as c, distributed.Client(c) as client:
        yield client


def test_a_file_in_chunks_gives_the_one_pass_numbers(tmp_path):
    data = table()
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pandas(data, preserve_index=False), path, row_group_size=1000)
    expected = in_memory(data)
    for chunk_rows in (700, 6000):
        rows = _run.FileRows(stream.open_table(path, chunk_rows=chunk_rows), quiet=True)
        done = _run.run(rows, "y", ["x", "z"], stages=FAKE)
        assert done.sketch.complete
        pd.testing.assert_frame_equal(done.tables[0], expected, rtol=1e-12)
        pd.testing.assert_frame_equal(done.tables[1], in_memory(data, "z"), rtol=1e-12)


def test_a_sampled_fit_still_adds_up_every_row(tmp_path):
    data = table(20_000)
    path = tmp_path / "t.csv"
    data.to_csv(path, index=False)
    rows = _run.FileRows(stream.open_table(path, chunk_rows=3000), quiet=True)
    done = _run.run(rows, "y", ["x"], stages=FAKE, strata_rows=2000)
    assert not done.sketch.complete and done.sketch.sample_size == 2000
    assert done.sketch.sample is None  # let go before the pass: it holds a chunk at a time
    got = done.tables[0]
    assert got["rows"].sum() == 20_000  # the pass saw every row, the fit only the sample
    assert got["first"].min() == 0


def test_dask_on_a_local_cluster_gives_the_in_memory_numbers(cluster):
    dd = pytest.importorskip("dask.dataframe")
    data = table()
    ddf = dd.from_pandas(data, npartitions=5)
    done = _run.run(_run.DaskRows(ddf), "y", ["x", "z"], stages=FAKE)
    assert done.sketch.complete and done.sketch.rows == len(data)
    # Dask keeps text as pyarrow strings (missing = NA), pandas as str (missing = NaN).
    sample = _run.DaskRows(ddf).sketch("y", 0, _run.STRATA_ROWS).sample
    pd.testing.assert_frame_equal(sample.reset_index(drop=True), data, check_dtype=False)
    pd.testing.assert_frame_equal(done.tables[0], in_memory(data), rtol=1e-9)
    pd.testing.assert_frame_equal(done.tables[1], in_memory(data, "z"), rtol=1e-9)
    # The same sample however the table is partitioned.
    small = _run.DaskRows(dd.from_pandas(data, npartitions=3)).sketch("y", 0, 500)
    streamed = stream.sketch_frame(data, "y", sample_rows=500)
    assert small.sample.index.tolist() == streamed.sample.index.tolist()


def test_names_that_are_not_columns_are_one_sentence(tmp_path):
    table(50).to_csv(tmp_path / "t.csv", index=False)
    rows = _run.FileRows(stream.open_table(tmp_path / "t.csv"), quiet=True)
    with pytest.raises(StratPDInputError, match='column "w" not found; the columns are: y, x'):
        _run.run(rows, "y", ["w"], stages=FAKE)


# --------------------------------------------------------------------------- through sx


def _same(got: pd.DataFrame, expected: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected.reset_index(drop=True),
                                  rtol=1e-9, atol=1e-12, check_dtype=False)


def test_sx_takes_a_parquet_file_or_a_csv_and_gives_the_in_memory_answer(tmp_path):
    import stratpd_xl as sx
    from stratpd_xl.input.files import read_table

    data = table(3000, seed=2)
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pandas(data, preserve_index=False), path, row_group_size=700)
    data.to_csv(tmp_path / "t.csv", index=False)
    whole = read_table(path)
    expected = sx.stratpd(whole, "y", "x")
    _same(sx.stratpd(path, "y", "x", chunk_rows=1000, quiet=True), expected)
    _same(sx.stratpd(str(tmp_path / "t.csv"), "y", "x", quiet=True), expected)
    _same(sx.catstratpd(path, "y", "k", quiet=True), sx.catstratpd(whole, "y", "k"))
    _same(sx.impact(path, "y", quiet=True), sx.impact(whole, "y"))


def test_a_target_read_as_classes_in_chunks_and_on_dask(tmp_path, cluster):
    # One stratification, each class's indicator summed per cell: the in-memory curves,
    # effects and ranking to 1e-9 from a file in chunks and on a LocalCluster of processes.
    import stratpd_xl as sx

    dd = pytest.importorskip("dask.dataframe")
    data, _ = three_classes(3000, seed=2)
    data.loc[data.index % 13 == 0, "g"] = None  # the "(missing)" category of each class
    path = tmp_path / "c.parquet"
    pq.write_table(pa.Table.from_pandas(data, preserve_index=False), path, row_group_size=700)
    ddf = dd.from_pandas(data, npartitions=3)
    whole = sx.stratpd(data, "y", "x", classes=True, n_trials=3)
    assert whole.attrs["class_sum"] < 1e-9
    for got in (sx.stratpd(path, "y", "x", classes=True, n_trials=3, chunk_rows=500,
                           quiet=True),
                sx.stratpd(ddf, "y", "x", classes=True, n_trials=3)):
        _same(got, whole)
        assert got.attrs["class_rows"] == whole.attrs["class_rows"]
        assert got.attrs["class_impact"] == pytest.approx(whole.attrs["class_impact"],
                                                          rel=1e-9)
    effects = sx.catstratpd(data, "y", "g", classes=["c", "a"])
    assert "(missing)" in set(effects["category"])
    _same(sx.catstratpd(path, "y", "g", classes=["c", "a"], quiet=True), effects)
    _same(sx.catstratpd(ddf, "y", "g", classes=["c", "a"]), effects)
    ranking = sx.impact(data, "y", classes=True)
    _same(sx.impact(path, "y", classes=True, quiet=True), ranking)
    _same(sx.impact(ddf, "y", classes=True), ranking)


def test_classes_fitted_on_a_sample_stay_within_the_band_and_add_up_to_zero(tmp_path,
                                                                            cluster):
    import stratpd_xl as sx

    data, z = three_classes(12_000, seed=1)
    path = tmp_path / "c.parquet"
    pq.write_table(pa.Table.from_pandas(data, preserve_index=False), path,
                   row_group_size=2000)
    whole = sx.stratpd(data, "y", "x", classes=True, n_trials=5)
    sampled = sx.stratpd(path, "y", "x", classes=True, n_trials=5, strata_rows=3000,
                         quiet=True)
    assert not sampled.attrs["scale"]["sample_is_all_rows"]
    assert sampled.attrs["class_sum"] < 1e-9 and "groups of the strata" in sampled.attrs["band"]
    assert sum(sampled.attrs["class_rows"].values()) == 12_000
    # The same sample on Dask: the same class curves and band (whichever backend a worker
    # answers under: see the backend test below).
    dd = pytest.importorskip("dask.dataframe")
    _same(sx.stratpd(dd.from_pandas(data, npartitions=4), "y", "x", classes=True,
                     n_trials=5, strata_rows=3000), sampled)
    found: dict[bytes, np.ndarray] = {}

    def truths(x: np.ndarray) -> np.ndarray:  # the classes' curves share their x: once
        if x.tobytes() not in found:
            found[x.tobytes()] = three_class_truth(x, data["x"].to_numpy(), z)
        return found[x.tobytes()]

    for c in ("a", "b", "c"):
        w, s = whole[whole["class"] == c], sampled[sampled["class"] == c]
        x = s["x"].to_numpy()
        inner = (x > 0.1) & (x < 0.9)
        low, high = (np.interp(x, w["x"], w[name]) for name in ("curve_low", "curve_high"))
        inside = (s["pd"].to_numpy() >= low) & (s["pd"].to_numpy() <= high)
        assert inside[inner].mean() >= 0.95, c
        truth = truths(x)[:, "abc".index(c)]
        held = (s["curve_low"].to_numpy() <= truth) & (truth <= s["curve_high"].to_numpy())
        assert held[inner].mean() >= 0.9, c


def test_more_classes_than_a_chart_shows_read_in_chunks_is_one_sentence(tmp_path):
    import stratpd_xl as sx

    data = table(3000, seed=2).assign(y=lambda d: (np.arange(3000) % 25).astype(str))
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pandas(data, preserve_index=False), path)
    with pytest.raises(StratPDInputError, match=r'^target "y" has 25 different values, more '
                                                r"than the 20 classes .* positive="):
        sx.stratpd(path, "y", "x", classes=True, quiet=True)


def test_sx_takes_a_dask_dataframe_on_a_local_cluster(cluster):
    import stratpd_xl as sx

    dd = pytest.importorskip("dask.dataframe")
    data = table(3000, seed=3)
    ddf = dd.from_pandas(data, npartitions=4)
    _same(sx.stratpd(ddf, "y", "x"), sx.stratpd(data, "y", "x"))
    # A partition larger than a chunk is stratified a chunk at a time: the same numbers.
    _same(sx.stratpd(ddf, "y", "x", chunk_rows=200), sx.stratpd(data, "y", "x"))
    _same(sx.catstratpd(ddf, "y", "k"), sx.catstratpd(data, "y", "k"))
    _same(sx.impact(ddf, "y", ["x", "z", "k"]), sx.impact(data, "y", ["x", "z", "k"]))


def test_a_table_larger_than_its_sample_is_fitted_on_the_sample_and_adds_up_every_row(
        tmp_path):
    import stratpd_xl as sx

    data = table(6000, seed=2)
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pandas(data, preserve_index=False), path, row_group_size=1000)
    for result in (sx.stratpd(path, "y", "x", strata_rows=3000, quiet=True),
                   sx.catstratpd(path, "y", "k", strata_rows=3000, quiet=True),
                   sx.impact(path, "y", strata_rows=3000, quiet=True)):
        assert result.attrs["scale"] == {"rows_read": 6000, "strata_rows": 3000,
                                         "sample_is_all_rows": False}
        assert result.attrs["n_rows"] == 6000
    effects = sx.catstratpd(path, "y", "k", strata_rows=3000, quiet=True)
    assert effects["count"].sum() == 6000  # every row counted, not the sample's
    ranking = sx.impact(path, "y", strata_rows=3000, quiet=True)
    assert ranking["feature"].iloc[0] == "x"  # y = sin(x) + noise: x first, z and k near 0


def test_a_band_from_a_sample_comes_from_the_sums_of_the_strata(tmp_path):
    import stratpd_xl as sx

    data = table(6000, seed=2)
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pandas(data, preserve_index=False), path, row_group_size=1000)
    got = sx.stratpd(path, "y", "x", strata_rows=3000, n_trials=5, quiet=True)
    assert "groups of the strata" in got.attrs["band"]
    assert (got["pd_low"] <= got["pd"]).all() and (got["pd"] <= got["pd_high"]).all()
    assert (got["pd_high"] > got["pd_low"]).mean() > 0.9
    ranking = sx.impact(path, "y", strata_rows=3000, n_trials=5, quiet=True)
    assert ranking["feature"].iloc[0] == "x"
    # Every row in the sample: the band of re-grown halves, as in memory.
    _same(sx.stratpd(path, "y", "x", n_trials=5, quiet=True), sx.stratpd(data, "y", "x",
                                                                        n_trials=5))


def test_blanks_read_in_chunks_and_on_dask_give_the_in_memory_missing_rows(tmp_path, cluster):
    import stratpd_xl as sx

    dd = pytest.importorskip("dask.dataframe")
    data = table(3000, seed=5)
    data.loc[data.index % 10 == 0, "x"] = np.nan  # 300 rows with a target and no x
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pandas(data, preserve_index=False), path, row_group_size=1000)
    # A table that fits: the "(missing)" row and the ranking of a table read whole.
    whole = sx.stratpd(data, "y", "x")
    assert whole["missing"].any()
    _same(sx.stratpd(path, "y", "x", chunk_rows=700, quiet=True), whole)
    _same(sx.stratpd(dd.from_pandas(data, npartitions=3), "y", "x"), whole)
    _same(sx.impact(path, "y", quiet=True), sx.impact(data, "y"))
    # A categorical feature's "(missing)" category likewise.
    data.loc[data.index % 7 == 0, "k"] = None
    pq.write_table(pa.Table.from_pandas(data, preserve_index=False), path, row_group_size=1000)
    effects = sx.catstratpd(data, "y", "k", n_trials=3)
    assert effects["missing"].any()
    _same(sx.catstratpd(path, "y", "k", n_trials=3, chunk_rows=700, quiet=True), effects)
    _same(sx.catstratpd(dd.from_pandas(data, npartitions=3), "y", "k", n_trials=3), effects)


@pytest.mark.parametrize("depends", [False, True], ids=["at random", "depends on x2"])
def test_blanks_of_a_feature_fitted_on_a_sample_get_their_row_within_the_band(tmp_path,
                                                                                depends,
                                                                                cluster):
    # The pass adds up the blank rows per pair of strata (both trees place them) and each
    # stratum's squares of y; the finish compares them with y - pd(x) inside the strata.
    import stratpd_xl as sx
    from tests.test_missing import _table

    data, blank = _table(12_000, seed=3, depends=depends)  # blanks carry +5 on y
    path = tmp_path / "m.parquet"
    pq.write_table(pa.Table.from_pandas(data, preserve_index=False), path,
                   row_group_size=2000)
    whole = sx.stratpd(data, "y", "x1").attrs["missing"]
    for rows in (3000, 6000):
        curve = sx.stratpd(path, "y", "x1", strata_rows=rows, chunk_rows=1500, quiet=True)
        assert not curve.attrs["scale"]["sample_is_all_rows"]
        assert "reading_notes" not in curve.attrs and curve["missing"].iloc[-1]
        found = curve.attrs["missing"]
        assert 3.5 <= found["pd"] <= 6.5 and found["low"] < 5 < found["high"]
        assert whole["low"] <= found["pd"] <= whole["high"]
        assert found["rows"] == found["compared"] == int(blank.sum())
    ranking = sx.impact(path, "y", strata_rows=3000, quiet=True)
    assert ranking["feature"].iloc[0] == "x1"
    # The same sample on Dask (its rows are picked by a hash of their number): the same row.
    dd = pytest.importorskip("dask.dataframe")
    on_dask = sx.stratpd(dd.from_pandas(data, npartitions=4), "y", "x1", strata_rows=6000)
    assert on_dask.attrs["missing"] == pytest.approx(found, rel=1e-9)  # the 6,000-row sample
    _same(on_dask, curve)


# --------------------------------------------------------------------------- command line


def _parquet(tmp_path, n: int = 4000):
    path = tmp_path / "big.parquet"
    pq.write_table(pa.Table.from_pandas(table(n, seed=4), preserve_index=False), path,
                   row_group_size=1000)
    return path


@pytest.mark.parametrize("suffix", [".csv", ".xlsx", ".png", ".svg"])
def test_cli_streams_a_parquet_file_too_large_to_hold_to_every_output(tmp_path, monkeypatch,
                                                                       capsys, suffix):
    from stratpd_xl.cli import main
    from stratpd_xl.input import files

    path = _parquet(tmp_path)
    assert main(["curve", str(path), "-t", "y", "-f", "x", "-q", "-o",
                 str(tmp_path / "whole.csv")]) == 0
    monkeypatch.setattr(files, "MAX_HELD_BYTES", 100_000)  # now too large to hold
    out = tmp_path / f"streamed{suffix}"
    assert main(["curve", str(path), "-t", "y", "-f", "x", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "pass 0 (sample and counts) of big.parquet: 1,000 rows (25%) in " in err
    assert "StratPD: y on x, 4,000 of 4,000 rows used" in err
    assert out.stat().st_size > 0
    if suffix == ".csv":
        _same(pd.read_csv(out), pd.read_csv(tmp_path / "whole.csv"))
    assert main(["impact", str(path), "-t", "y", "--json", "-q"]) == 0
    ranking = json.loads(capsys.readouterr().out)
    assert [row["feature"] for row in ranking["rows"]][:2] == ["x", "z"]


@pytest.mark.parametrize("suffix", [".csv", ".xlsx", ".png", ".svg", ".json"])
def test_cli_reads_classes_of_a_parquet_file_in_chunks_to_every_output(tmp_path, monkeypatch,
                                                                        capsys, suffix):
    from stratpd_xl.cli import main
    from stratpd_xl.input import files

    path = tmp_path / "c.parquet"
    pq.write_table(pa.Table.from_pandas(three_classes(3000, seed=4)[0], preserve_index=False),
                   path, row_group_size=1000)
    curve = ["curve", str(path), "-t", "y", "-f", "x", "--classes", "all"]
    assert main([*curve, "-q", "-o", str(tmp_path / "whole.csv")]) == 0
    monkeypatch.setattr(files, "MAX_HELD_BYTES", 10_000)  # now too large to hold
    if suffix == ".json":
        assert main([*curve, "-q", "--json"]) == 0
        got = json.loads(capsys.readouterr().out)
        assert {row["class"] for row in got["rows"]} == {"a", "b", "c"}
        assert got["attrs"]["scale"]["rows_read"] == 3000
        assert main(["impact", str(path), "-t", "y", "--classes", "all", "-q", "--json"]) == 0
        ranking = json.loads(capsys.readouterr().out)
        assert ranking["rows"][0]["feature"] == "x" and ranking["rows"][0]["class"] in "bc"
        return
    out = tmp_path / f"streamed{suffix}"
    assert main([*curve, "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "pass 1 (sums per stratum) of c.parquet" in err and "is read as classes" in err
    assert out.stat().st_size > 0
    if suffix == ".csv":
        _same(pd.read_csv(out), pd.read_csv(tmp_path / "whole.csv"))
    assert main(["impact", str(path), "-t", "y", "--classes", "b,c", "-q", "-o",
                 str(tmp_path / f"impact{suffix}")]) == 0


def test_cli_trades_memory_for_the_fit_with_strata_rows_and_no_adjust(tmp_path, monkeypatch,
                                                                      capsys):
    import stratpd_xl as sx
    from stratpd_xl.cli import main
    from stratpd_xl.input import files

    path = _parquet(tmp_path)
    monkeypatch.setattr(files, "MAX_HELD_BYTES", 100_000)  # read in chunks
    assert main(["curve", str(path), "-t", "y", "-f", "x", "-q", "--json",
                 "--strata-rows", "1500", "--no-adjust"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["attrs"]["scale"] == {"rows_read": 4000, "strata_rows": 1500,
                                     "sample_is_all_rows": False}
    assert got["attrs"]["adjusted"] is False
    want = sx.stratpd(path, "y", "x", strata_rows=1500, adjust=False, quiet=True)
    assert [row["pd"] for row in got["rows"]] == pytest.approx(want["pd"].tolist(), rel=1e-9)
    assert main(["impact", str(path), "-t", "y", "-q", "--json", "--strata-rows", "1500"]) == 0
    assert json.loads(capsys.readouterr().out)["attrs"]["scale"]["strata_rows"] == 1500
    assert main(["curve", str(path), "-t", "y", "-f", "x", "-q", "--strata-rows", "1"]) == 2
    assert "strata_rows must be at least 2; got 1" in capsys.readouterr().err


def test_cli_runs_on_a_dask_scheduler_and_names_the_extra_without_it(tmp_path, capsys,
                                                                     cluster, monkeypatch):
    from stratpd_xl.cli import main

    path = _parquet(tmp_path)
    address = cluster.scheduler.address
    assert main(["curve", str(path), "-t", "y", "-f", "x", "-q", "-o",
                 str(tmp_path / "whole.csv")]) == 0
    assert main(["curve", str(path), "-t", "y", "-f", "x", "-q", "--dask-scheduler", address,
                 "-o", str(tmp_path / "dask.csv")]) == 0
    _same(pd.read_csv(tmp_path / "dask.csv"), pd.read_csv(tmp_path / "whole.csv"))
    capsys.readouterr()
    assert main(["curve", str(tmp_path / "t.csv"), "-t", "y", "-f", "x",
                 "--dask-scheduler", address]) == 2
    assert "--dask-scheduler reads a .parquet file or a folder of them" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "distributed", None)
    assert main(["curve", str(path), "-t", "y", "-f", "x", "--dask-scheduler", address]) == 2
    assert '--dask-scheduler needs the dask extra: pip install "stratpd-xl[dask]"' in \
        capsys.readouterr().err


def test_the_scoring_table_example_explains_a_model_from_its_predictions(tmp_path, capsys):
    # docs/explain_a_model.py: the model's carat effect from its predictions, beside the
    # data's; the columns the model never saw move its predictions least.
    import importlib.util
    from pathlib import Path

    from threadpoolctl import threadpool_limits

    path = Path(__file__).resolve().parents[1] / "docs" / "explain_a_model.py"
    spec = importlib.util.spec_from_file_location("explain_a_model", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    # The example's model fitted in one OpenMP thread, as the package fits its own
    # (model._fit.one_thread): with another test process on the other core, two threads spun
    # 41 s of CPU (224 s wall at load 14) on a fit that takes 0.2 s in one.
    with threadpool_limits(1, user_api="openmp"):
        example.main(tmp_path, rows=3000)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "carat   model's effect   the data's effect"
    model_2ct, data_2ct = (float(v.replace(",", "")) for v in out[4].split()[1:])
    assert 0 < model_2ct and 0 < data_2ct  # both rise with carat
    share = {line.split()[0]: float(line.split()[2]) for line in out[6:]}
    assert max(share, key=share.get) == "carat" and share["carat"] > 0.5
    assert all(share[c] < share["carat"] / 10 for c in ("cut", "color", "clarity"))


def test_a_sampled_fits_strata_band_does_not_depend_on_the_backend(tmp_path):
    # The strata band deals strata into groups by a hash of their leaves' numbers: the numpy
    # fallback must number the trees as the kernels do (15.8 points apart at a point when it
    # numbered them level by level), or a Dask worker without numba answers another band.
    import stratpd_xl as sx
    from stratpd_xl._backend import HAVE_NUMBA

    if not HAVE_NUMBA:
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(3)
    data = pd.DataFrame(rng.uniform(0, 1, (12_000, 3)), columns=["x", "a", "b"])
    data["y"] = (rng.uniform(0, 1, 12_000) < 0.3 + 0.3 * data.x * data.a).astype(int)
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pandas(data, preserve_index=False), path,
                   row_group_size=2000)
    got = {}
    for backend in ("numba", "numpy"):
        previous = set_backend(backend)
        try:
            got[backend] = sx.stratpd(path, "y", "x", n_trials=5, strata_rows=3000, quiet=True)
        finally:
            set_backend(previous)
    assert "groups of the strata" in got["numba"].attrs["band"]
    _same(got["numpy"], got["numba"])
