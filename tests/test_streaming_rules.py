"""When a table is streamed, and how its chunks are typed alike: the rules the drivers
(stratpd_xl.scale) and the workflow's scaled entry points follow, one by one."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stratpd_xl import scale, workflow
from stratpd_xl.input import files
from stratpd_xl.input.stream import Typing
from stratpd_xl.params import Settings


def _raw(*cells) -> np.ndarray:
    return np.array(cells, dtype=object)


def test_typing_fixes_each_columns_kind_by_its_first_chunk_and_counts_the_rest():
    typing = Typing()
    first = typing.frame(["price", "kind"], [_raw("10", "12"), _raw("a", "b")], 0)
    later = typing.frame(["price", "kind"], [_raw("14", "n/a", "oops"), _raw("3", "c", "d")], 2)
    assert list(first.index) == [0, 1] and list(later.index) == [2, 3, 4]
    assert later["price"].tolist()[0] == 14.0 and later["price"].isna().tolist() == [
        False, True, True]
    assert later["kind"].tolist() == ["3", "c", "d"]  # text stays text, a number included
    assert typing.kinds == {"price": "number", "kind": "text"}
    notes = typing.notes("sales.csv")
    said = [n for n in notes if n.startswith('column "price" of sales.csv')]
    assert len(said) == 1 and "not a number" in said[0] and '"oops"' in said[0]
    # whole numbers become int64 only when every value read was whole and none is missing
    assert typing.final(first)["price"].dtype == np.int64
    assert typing.final(later)["price"].dtype == np.float64


def test_a_chunk_without_values_gets_blanks_of_the_columns_kind():
    typing = Typing()
    typing.frame(["when"], [_raw("2024-01-05", "2024-02-01")], 0)
    empty = typing.frame(["when"], [_raw(None, "")], 2)
    assert pd.api.types.is_datetime64_any_dtype(empty["when"].dtype)
    assert empty["when"].isna().all()


def test_needs_streaming_only_past_what_a_table_in_memory_may_hold(tmp_path, monkeypatch):
    csv = tmp_path / "t.csv"
    pd.DataFrame({"y": np.arange(2000.0), "x": np.arange(2000.0)}).to_csv(csv, index=False)
    assert not scale.needs_streaming(csv)
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 1000)
    assert scale.needs_streaming(csv)
    assert not scale.needs_streaming(tmp_path / "missing.csv")  # the read says what is wrong
    assert not scale.needs_streaming(tmp_path / "book.xlsx")


def test_is_dask_frame_knows_a_dask_table_without_importing_dask():
    frame = pd.DataFrame({"y": [1.0, 2.0]})
    assert not scale.is_dask_frame(frame)
    assert not scale.is_dask_frame("table.parquet")
    dd = pytest.importorskip("dask.dataframe")
    assert scale.is_dask_frame(dd.from_pandas(frame, npartitions=1))


@pytest.fixture(scope="module")
def chunked(tmp_path_factory):
    rng = np.random.default_rng(4)
    n = 3000
    x, z = rng.uniform(0, 10, (2, n))
    path = tmp_path_factory.mktemp("scaled") / "sales.csv"
    pd.DataFrame({"Sales": 2 * x + z + rng.normal(0, 0.1, n), "x": x, "z": z,
                  "region": rng.choice(["n", "s"], n)}).to_csv(path, index=False)
    return path


def test_scaled_curve_resolves_names_as_typed_and_reads_the_file(chunked):
    result = workflow.scaled_curve(chunked, "sales", "X", quiet=True,
                                   settings=Settings.make(max_points=20))
    assert isinstance(result, workflow.CurveResult)
    assert (result.target, result.feature) == ("Sales", "x")
    slope = np.polyfit(result.curve["x"], result.curve["pd"], 1)[0]
    assert slope == pytest.approx(2.0, abs=0.1)


def test_scaled_analysis_ranks_the_files_columns(chunked):
    result = workflow.scaled_analysis(chunked, "Sales", quiet=True,
                                      settings=Settings.make(exclude=("region",)))
    assert isinstance(result, workflow.AnalysisResult)
    assert list(result.impact["feature"]) == ["x", "z"]  # 2x over 0-10 before z over 0-10
    assert result.n_rows == 3000 and result.curves == {}
