"""Pictures drawn with a helper process: the same bytes, in order, whatever the helper does."""

from __future__ import annotations

import time
import warnings

import pytest

from stratpd_xl.errors import StratPDNote
from stratpd_xl.presentation.drawing import Chart, PictureDrawer, draw_picture
from tests.test_charts import categorical_result, numeric_result, ranking_result

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def charts(feature_of_last: str = "depth") -> list[Chart]:
    return [
        Chart("impact", ranking_result()),
        Chart("curve", numeric_result()),
        Chart("curve", categorical_result()),
        Chart("curve", numeric_result(n=200, band=False, feature="table")),
        Chart("curve", numeric_result(n=30, feature=feature_of_last)),
    ]


def wait_for(condition, seconds: float = 60.0) -> None:
    """Poll until the helper (a fresh Python importing matplotlib) has got that far."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail("the picture helper did not get there within a minute")
        time.sleep(0.02)


def helper_claimed(drawer: PictureDrawer, n: int) -> bool:
    helper = drawer._helper
    return helper is not None and helper.back < n


def _can_start_helper() -> bool:
    with PictureDrawer(helper=True) as drawer:
        return drawer.has_helper


needs_helper = pytest.mark.skipif(not _can_start_helper(),
                                  reason="a picture helper needs two cores and processes")


@needs_helper
def test_helper_pictures_are_the_same_bytes_in_the_same_order():
    wanted = [draw_picture(c) for c in charts()]
    with PictureDrawer(helper=True) as drawer:
        # Hold this process back until the helper has taken a picture, so it surely shares.
        got = drawer.draw(charts(), meanwhile=lambda: wait_for(lambda: helper_claimed(drawer, 5)))
        assert drawer.helper_pictures >= 1
        # A second batch through the same helper.
        again = drawer.draw(charts()[:3])
    assert got == wanted
    assert again == wanted[:3]
    assert all(p.png.startswith(PNG_SIGNATURE) for p in got)
    assert got[0].height_in == pytest.approx(2.58)  # the ranking's 4 features set its height


@needs_helper
def test_notes_of_a_picture_drawn_by_the_helper_reach_the_caller():
    # The last chart is the helper's first; DejaVu Sans has no CJK characters.
    with PictureDrawer(helper=True) as drawer, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        drawer.draw(charts(feature_of_last="重量"),
                    meanwhile=lambda: wait_for(lambda: helper_claimed(drawer, 5)))
        claimed_last = 4 in drawer._helper.done if drawer._helper else False
    notes = [str(w.message) for w in caught if issubclass(w.category, StratPDNote)]
    assert claimed_last
    assert any("font lacks" in n and "重" in n for n in notes), notes


@needs_helper
def test_a_helper_that_dies_leaves_its_pictures_to_the_caller():
    wanted = [draw_picture(c) for c in charts()]

    def kill_after_first_claim(drawer: PictureDrawer) -> None:
        wait_for(lambda: helper_claimed(drawer, 5))
        drawer._helper.process.kill()

    with PictureDrawer(helper=True) as drawer:
        got = drawer.draw(charts(), meanwhile=lambda: kill_after_first_claim(drawer))
        assert not drawer.has_helper
        assert drawer.draw(charts()[:2]) == wanted[:2]  # and later batches are drawn here
    assert got == wanted


def test_without_a_helper_every_picture_is_drawn_here():
    order = []
    with PictureDrawer() as drawer:
        assert not drawer.has_helper
        got = drawer.draw(charts(), meanwhile=lambda: order.append("meanwhile"))
    assert order == ["meanwhile"]
    assert got == [draw_picture(c) for c in charts()]
    assert drawer.helper_pictures == 0


@needs_helper
def test_closing_ends_the_helper_at_once():
    drawer = PictureDrawer(helper=True)
    process = drawer._helper.process
    started = time.monotonic()
    drawer.close()
    assert process.poll() is not None  # reaped, not left running or a zombie
    assert time.monotonic() - started < 5
    assert not drawer.has_helper


def test_no_helper_where_the_executable_is_not_a_python(monkeypatch):
    # Inside Excel (xlwings' COM server) sys.executable can be EXCEL.EXE: never start that.
    monkeypatch.setattr("sys.executable", r"C:\Program Files\Microsoft Office\EXCEL.EXE")
    with PictureDrawer(helper=True) as drawer:
        assert not drawer.has_helper
        assert drawer.draw(charts()[:2]) == [draw_picture(c) for c in charts()[:2]]
