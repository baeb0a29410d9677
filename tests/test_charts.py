"""Matplotlib pictures: labels, titles, bars/lines/bands, PNG output, dates, no pyplot.

The builders at the top make results by hand with the engine's documented columns and attrs,
so these tests pin what the charts do with a given result; ``test_real_engine_*`` checks the
same against what the engine actually returns.  ``test_report`` and ``test_libreoffice``
import the builders from here.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

import stratpd_xl as sx
from stratpd_xl.presentation.charts import curve_figure, curve_title, figure_png, impact_figure

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def numeric_result(n: int = 12, *, band: bool = True, dates: bool = False,
                   target: str = "price", feature: str = "carat") -> pd.DataFrame:
    """A StratPD-shaped result with round numbers (pd = 0, 1250, 2500, ...)."""
    if dates:
        x = pd.date_range("2024-01-01", periods=n, freq="7D").to_numpy()
    else:
        x = np.round(np.linspace(0.25, 3.0, n), 2)
    y = 1250.0 * np.arange(n)
    data = {"x": x, "pd": y, "slope": np.append(np.full(n - 1, 1250.0), np.nan),
            "n_slopes": np.arange(n) % 7 + 5}
    if band:
        data["pd_low"] = y - 100.0
        data["pd_high"] = y + 150.0
    result = pd.DataFrame(data)
    result.attrs = {
        "method": "StratPD", "target": target, "feature": feature, "kind": "numeric",
        "n_rows": 1200, "n_used": 1180, "n_dropped_missing": 15, "n_ignored": 5,
        "n_leaves": 60, "n_unique_x": n,
        "params": {"min_samples_leaf": 10, "min_slopes_per_x": 5,
                   "n_trials": 20 if band else 1, "random_state": None},
    }
    return result


def categorical_result(*, band: bool = True,
                       categories: tuple = ("Fair", "Good", "Very Good", "Premium", "Ideal"),
                       feature: str = "cut") -> pd.DataFrame:
    """A CatStratPD-shaped result: pd = 0, 300, 600, ... with the first as baseline."""
    n = len(categories)
    y = 300.0 * np.arange(n)
    data = {"category": list(categories), "pd": y, "count": 100 + 10 * np.arange(n)}
    if band:
        data["pd_low"] = y - 40.0
        data["pd_high"] = y + 60.0
    result = pd.DataFrame(data)
    result.attrs = {
        "method": "CatStratPD", "target": "price", "feature": feature, "kind": "categorical",
        "n_rows": 1200, "n_used": 1190, "n_dropped_missing": 0, "n_ignored": 10,
        "n_leaves": 55, "baseline": categories[0], "categories_without_estimate": [],
        "params": {"min_samples_leaf": 10, "n_trials": 20 if band else 1,
                   "random_state": 7},
    }
    return result


def ranking_result() -> pd.DataFrame:
    """An impact ranking with shares 50% / 30% / 15% / 5%."""
    ranking = pd.DataFrame({
        "feature": ["carat", "cut", "depth", "color"],
        "kind": ["numeric", "categorical", "numeric", "categorical"],
        "impact": [2000.0, 1200.0, 600.0, 200.0],
    })
    ranking["share"] = ranking["impact"] / ranking["impact"].sum()
    ranking.attrs = {"target": "price", "n_rows": 1200,
                     "params": {"min_samples_leaf": 10, "n_trials": 1}, "skipped": {}}
    return ranking


def synthetic_data(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """price = 2000 carat + 300 * cut code + 5 * days since start + noise."""
    rng = np.random.default_rng(seed)
    cuts = np.array(["Fair", "Good", "Ideal"])
    code = rng.integers(0, 3, n)
    carat = rng.uniform(0.2, 3.0, n)
    day = rng.integers(0, 365, n)
    return pd.DataFrame({
        "carat": carat,
        "cut": cuts[code],
        "sold": pd.Timestamp("2025-01-01") + pd.to_timedelta(day, unit="D"),
        "price": 2000 * carat + 300 * code + 5 * day + rng.normal(0, 50, n),
    })


def _main_axes(fig: Figure):
    return fig.axes[0]


def _bars(ax) -> BarContainer:
    (bars,) = [c for c in ax.containers if isinstance(c, BarContainer)]
    return bars


# ------------------------------------------------------------------ numeric curves


def test_numeric_curve_labels_title_and_band():
    result = numeric_result()
    fig = curve_figure(result)
    ax, density = fig.axes
    assert fig.get_suptitle() == "partial dependence of price on carat (StratPD, n=1,180)"
    assert ax.get_ylabel() == "change in price vs its average"
    assert density.get_xlabel() == "carat"
    (line,) = ax.get_lines()[1:]  # the first line is the zero reference
    np.testing.assert_allclose(line.get_ydata(), result["pd"])
    assert line.get_marker() == "o"  # few points: markers on
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 1
    band_y = bands[0].get_paths()[0].vertices[:, 1]
    assert band_y.min() == pytest.approx(result["pd_low"].min())
    assert band_y.max() == pytest.approx(result["pd_high"].max())
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "95% band per point", "partial dependence"]


@pytest.mark.parametrize(("spread", "drawn", "label"), [
    (1.7, "curve", "95% band, whole curve"), (2.5, "pd", "95% band per point")])
def test_the_whole_curve_band_is_drawn_unless_it_is_over_twice_as_wide(spread, drawn, label):
    result = numeric_result()
    result["curve_low"] = result["pd"] - 100.0 * spread
    result["curve_high"] = result["pd"] + 150.0 * spread
    ax = curve_figure(result).axes[0]
    (band,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    band_y = band.get_paths()[0].vertices[:, 1]
    assert band_y.min() == pytest.approx(result[f"{drawn}_low"].min())
    assert band_y.max() == pytest.approx(result[f"{drawn}_high"].max())
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [label, "partial dependence"]


def test_numeric_curve_without_band_has_no_band_and_no_legend():
    fig = curve_figure(numeric_result(band=False))
    ax = fig.axes[0]
    assert not [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert ax.get_legend() is None


def test_many_points_drop_markers_and_density_becomes_histogram():
    fig = curve_figure(numeric_result(n=200))
    ax, density = fig.axes
    assert ax.get_lines()[1].get_marker() in (None, "None", "")
    (steps,) = density.patches  # one filled step outline of the histogram
    heights, edges, _ = steps.get_data()
    assert len(heights) == 40 and len(edges) == 41
    assert edges[0] == numeric_result(n=200)["x"].min()
    assert edges[-1] == numeric_result(n=200)["x"].max()
    assert heights.sum() == pytest.approx(numeric_result(n=200)["n_slopes"].sum())


def test_density_strip_weights_by_slopes():
    result = numeric_result(n=8)
    density = curve_figure(result).axes[1]
    (sticks,) = density.collections
    tops = [seg[1][1] for seg in sticks.get_segments()]
    assert tops == list(result["n_slopes"])


def test_datetime_x_draws_dates():
    result = numeric_result(n=30, dates=True, feature="sold on")
    fig = curve_figure(result)
    png = figure_png(fig)
    assert png.startswith(PNG_SIGNATURE)
    density = fig.axes[1]
    assert density.get_xlabel() == "sold on"
    labels = [t.get_text() for t in density.get_xticklabels()]
    assert any("2024" in label for label in labels)


def test_many_dates_get_a_histogram_on_the_date_axis():
    from matplotlib.dates import date2num

    result = numeric_result(n=200, dates=True, feature="sold on")
    fig = curve_figure(result)
    assert figure_png(fig).startswith(PNG_SIGNATURE)
    (steps,) = fig.axes[1].patches
    heights, edges, _ = steps.get_data()
    assert (edges[0], edges[-1]) == (date2num(result["x"].min()), date2num(result["x"].max()))
    assert heights.sum() == pytest.approx(result["n_slopes"].sum())


def test_large_values_get_thousands_separators():
    fig = curve_figure(numeric_result(n=12))
    fig.canvas.draw()
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert any("," in label for label in labels), labels


def test_empty_curve_still_draws():
    result = numeric_result().iloc[:0]
    result.attrs = numeric_result().attrs
    assert figure_png(curve_figure(result)).startswith(PNG_SIGNATURE)


# ------------------------------------------------------------------ categorical


def test_categorical_bars_in_given_order_with_error_bars():
    result = categorical_result()
    fig = curve_figure(result)
    ax = _main_axes(fig)
    assert fig.get_suptitle() == "partial dependence of price on cut (CatStratPD, n=1,190)"
    assert ax.get_xlabel() == "cut"
    assert ax.get_ylabel().startswith("change in price vs ")  # vs the baseline category
    bars = _bars(ax)
    assert len(bars.patches) == 5
    assert [p.get_height() for p in bars.patches] == list(result["pd"])
    assert [t.get_text() for t in ax.get_xticklabels()] == list(result["category"])
    assert bars.errorbar is not None
    segments = bars.errorbar.lines[2][0].get_segments()
    assert [tuple(s[:, 1]) for s in segments] == list(zip(result["pd_low"], result["pd_high"],
                                                          strict=True))
    assert any(t.get_text() == "baseline" for t in ax.texts)


def test_categorical_without_band_has_no_error_bars():
    ax = _main_axes(curve_figure(categorical_result(band=False)))
    assert _bars(ax).errorbar is None


def test_many_categories_rotate_labels():
    result = categorical_result(categories=tuple(f"store {i}" for i in range(25)))
    ax = _main_axes(curve_figure(result))
    assert len(_bars(ax).patches) == 25
    assert ax.get_xticklabels()[0].get_rotation() == 90


# ------------------------------------------------------------------ impact


def test_impact_bars_largest_on_top_with_share_labels():
    ranking = ranking_result()
    fig = impact_figure(ranking)
    ax = _main_axes(fig)
    assert fig.get_suptitle() == "impact of each feature on price (n=1,200)"
    assert len(ax.patches) == 4
    # The y axis is inverted, so the label at the smallest position is drawn on top.
    assert ax.yaxis_inverted()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["carat", "cut", "depth", "color"]
    widths = [p.get_width() for p in sorted(ax.patches, key=lambda p: p.get_y())]
    assert widths == [2000.0, 1200.0, 600.0, 200.0]
    assert [t.get_text() for t in ax.texts] == ["50%", "30%", "15%", "5%"]
    assert ax.get_xlabel() == "impact on price"


def test_impact_sorts_an_unsorted_ranking_and_marks_tiny_shares():
    ranking = ranking_result().iloc[::-1].reset_index(drop=True)
    ranking.loc[0, "share"] = 0.001
    ranking.attrs = ranking_result().attrs
    ax = _main_axes(impact_figure(ranking))
    assert [t.get_text() for t in ax.get_yticklabels()][0] == "carat"
    assert "<1%" in [t.get_text() for t in ax.texts]


def test_impact_figure_grows_with_features():
    small = impact_figure(ranking_result())
    many = ranking_result().sample(n=40, replace=True, random_state=0)
    many["feature"] = [f"f{i}" for i in range(40)]
    many.attrs = ranking_result().attrs
    assert impact_figure(many).get_figheight() > small.get_figheight()


# ------------------------------------------------------------------ PNG and pyplot


def test_figure_png_is_png_with_requested_size():
    png = figure_png(curve_figure(numeric_result(), width_in=5.0, height_in=3.0), dpi=100)
    assert png.startswith(PNG_SIGNATURE)
    width = int.from_bytes(png[16:20], "big")
    height = int.from_bytes(png[20:24], "big")
    assert (width, height) == (500, 300)


def test_charts_do_not_import_pyplot():
    code = ("import sys, stratpd_xl.presentation.charts as c, stratpd_xl.presentation.report\n"
            "import pandas as pd\n"
            "assert 'matplotlib.pyplot' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_title_uses_rows_when_n_used_missing():
    result = numeric_result()
    del result.attrs["n_used"]
    assert curve_title(result).endswith("(StratPD, n=1,200)")


# ------------------------------------------------------------------ real engine


def test_real_engine_curves_draw():
    data = synthetic_data()
    numeric = sx.stratpd(data, "price", "carat", n_trials=5, random_state=0)
    fig = curve_figure(numeric)
    assert fig.get_suptitle().startswith("partial dependence of price on carat (StratPD, n=")
    assert [c for c in fig.axes[0].collections if isinstance(c, PolyCollection)]

    dates = sx.stratpd(data, "price", "sold", random_state=0)
    assert figure_png(curve_figure(dates)).startswith(PNG_SIGNATURE)

    categorical = sx.catstratpd(data, "price", "cut", n_trials=5, random_state=0)
    ax = curve_figure(categorical).axes[0]
    assert len(_bars(ax).patches) == len(categorical) == 3
    assert _bars(ax).errorbar is not None


def test_real_engine_ranking_draws():
    ranking = sx.impact(synthetic_data(), "price", random_state=0)
    ax = impact_figure(ranking).axes[0]
    assert len(ax.patches) == len(ranking) == 3
    assert [t.get_text() for t in ax.get_yticklabels()] == list(ranking["feature"])


def test_dollar_signs_are_text_not_math():
    result = numeric_result(feature="spend in $ per $1k", target="$$ revenue")
    fig = curve_figure(result)
    assert figure_png(fig).startswith(PNG_SIGNATURE)  # mathtext would fail on "$$"
    assert fig.axes[1].get_xlabel() == "spend in $ per $1k"
    assert "$$ revenue" in fig.get_suptitle()
