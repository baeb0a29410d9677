"""Options no other test changed: each one here must change the answer it names.

``max_features`` (no other test table has more features than the cut), ``bands`` on the
command line and in =STRATPDBY with a numeric ``by``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import stratpd_xl as sx
from stratpd_xl.cli import main
from stratpd_xl.input.sheet import cells_from_frame


@pytest.fixture(scope="module")
def wide() -> pd.DataFrame:
    """12 features: x0 and x1 act only through their product, x2 alone, x3-x11 barely."""
    rng = np.random.default_rng(0)
    n = 800
    data = pd.DataFrame(rng.uniform(-1, 1, (n, 12)), columns=[f"x{i}" for i in range(12)])
    data["y"] = (3 * data["x0"] * data["x1"] + 2 * data["x2"]
                 + 0.05 * data[[f"x{i}" for i in range(3, 12)]].sum(axis=1)
                 + rng.normal(0, 0.1, n))
    return data


@pytest.fixture(scope="module")
def wide_csv(wide, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("wide") / "wide.csv"
    wide.to_csv(path, index=False)
    return path


def test_max_features_pairs_only_the_features_with_the_largest_local_effects(wide):
    pairs = sx.interactions(wide, "y", max_features=3, random_state=0)
    assert sorted(pairs.attrs["paired"]) == ["x0", "x1", "x2"]
    assert len(pairs) == 3
    assert {frozenset(p) for p in pairs[["feature_1", "feature_2"]].itertuples(index=False)} \
        == {frozenset(p) for p in (("x0", "x1"), ("x0", "x2"), ("x1", "x2"))}
    assert any(w.startswith("9 feature(s) with the smallest local effects were not paired")
               for w in pairs.attrs["warnings"])


def _pairs_csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, comment="#")


def test_cli_max_features_and_bands_reach_the_ranking(wide_csv, tmp_path):
    # The default pairs 10 of the 12 features (45 pairs); --max-features 3 pairs 3.
    cut, two_bands = tmp_path / "cut.csv", tmp_path / "two.csv"
    assert main(["interactions", str(wide_csv), "-t", "y", "--max-features", "3", "-o",
                 str(cut)]) == 0
    ranking = _pairs_csv(cut)
    assert len(ranking) == 3
    assert set(ranking["feature_1"]) | set(ranking["feature_2"]) == {"x0", "x1", "x2"}
    # Two bands of x1 see less of x0's slope changing with x1 than the default four.
    assert main(["interactions", str(wide_csv), "-t", "y", "--max-features", "3",
                 "--bands", "2", "-o", str(two_bands)]) == 0
    product = {frozenset(("x0", "x1"))}

    def size(table: pd.DataFrame) -> float:
        (value,) = [r.size for r in table.itertuples()
                    if {frozenset((r.feature_1, r.feature_2))} == product]
        return value

    assert size(_pairs_csv(two_bands)) < 0.95 * size(ranking)


@pytest.fixture(scope="module")
def regions() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    n = 2000
    data = pd.DataFrame({"price": rng.uniform(0, 10, n), "ads": rng.normal(size=n)})
    data["sales"] = (1 + data["ads"]) * data["price"] + rng.normal(0, 0.5, n)
    return data


@pytest.mark.parametrize("bands", [3, 5])
def test_cli_curve_by_a_numeric_column_takes_bands(regions, tmp_path, bands):
    path, out = tmp_path / "regions.csv", tmp_path / "by.csv"
    regions.to_csv(path, index=False)
    assert main(["curve", str(path), "-t", "sales", "-f", "price", "--by", "ads", "--bands",
                 str(bands), "-o", str(out)]) == 0
    groups = pd.read_csv(out, comment="#")["group"].unique()
    assert len(groups) == bands and all(" to " in g for g in groups)


@pytest.mark.parametrize("bands", [None, 3, 5])
def test_stratpdby_cuts_a_numeric_by_into_its_bands(regions, bands):
    from stratpd_xl.excel import udfs

    out = udfs.STRATPDBY(cells_from_frame(regions), "sales", "price", "ads", bands, 10, 1,
                         False)
    assert out[0][:3] == ["ads", "price", "partial dependence"]
    groups = list(dict.fromkeys(r[0] for r in out[1:]))
    assert len(groups) == (bands or 4) and all(" to " in g for g in groups)
    # The slope grows with ads: each band's curve is steeper than the one below it.
    slopes = [np.polyfit([r[1] for r in out[1:] if r[0] == g],
                         [r[2] for r in out[1:] if r[0] == g], 1)[0] for g in groups]
    assert slopes == sorted(slopes)


def test_stratpd2_puts_col1_down_the_rows_and_col2_across_its_grid(regions):
    # Named as Excel's wizard names them: swapping col1 and col2 swaps the table's columns.
    from stratpd_xl.excel import udfs

    cells = cells_from_frame(regions)
    a = udfs.STRATPD2(data=cells, target="sales", col1="price", col2="ads", grid=3, chart=False)
    b = udfs.STRATPD2(data=cells, target="sales", col1="ads", col2="price", grid=5, chart=False)
    assert a[0][:2] == ["price", "ads"] and b[0][:2] == ["ads", "price"]
    assert len(a) == 1 + 3 * 3 and len(b) == 1 + 5 * 5


def test_analyse_returns_an_analysis_of_every_feature(regions):
    result = sx.analyse(regions, "sales", random_state=0)
    assert isinstance(result, sx.Analysis)
    assert set(result.curves) == {"price", "ads"}
