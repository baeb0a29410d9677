"""A report's chart pictures drawn two at a time: in this process and in one helper process.

matplotlib holds the interpreter lock while it draws, so threads cannot share the work, and a
report's ten pictures take 2-3 s one after another.  A :class:`PictureDrawer` made with
``helper=True`` starts one helper process at once
(``python -m stratpd_xl.presentation._picture_helper``),
so that the helper's imports (pandas and matplotlib, about a second) overlap what the caller
does next: reading the file and running the analysis.  :meth:`PictureDrawer.draw` then lets
the helper take pictures from the back of the list while this process takes them from the
front.  This process decides every claim (a reader thread answers the helper's "next?"), so no
picture is drawn twice and neither side waits for more than the picture the other one is
finishing.

The helper can only save time.  Whatever goes wrong with it (it cannot start, it dies, a
picture raises there) leaves its pictures to this process, which draws them as it would have
without a helper; the PNG bytes are the same either way (same code, same fonts).  A plain
subprocess rather than :mod:`multiprocessing`: nothing re-imports the caller's main script, no
named semaphore can outlive its owner, and :meth:`PictureDrawer.close` ends the helper at
once, so an early failure (a file that does not exist) exits as fast as before.

Importing this module loads neither matplotlib nor pandas.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Chart", "Picture", "PictureDrawer", "draw_picture"]

#: A helper that sends nothing for this long while it owes pictures is taken for stuck.
HELPER_SILENCE_S = 120.0


@dataclass(frozen=True)
class Chart:
    """What to draw: a curve (``stratpd``/``catstratpd`` result, by group too), the impact
    ranking, the interaction ranking or a two-way surface."""

    kind: Literal["curve", "impact", "interactions", "surface"]
    data: pd.DataFrame


@dataclass(frozen=True)
class Picture:
    """A drawn chart: the PNG file's bytes and the figure's height in inches."""

    png: bytes
    height_in: float


def draw_picture(chart: Chart) -> Picture:
    """Draw one chart in this process, with :mod:`.charts` (matplotlib, Agg)."""
    from .charts import curve_figure, figure_png, impact_figure

    if chart.kind == "impact":
        figure = impact_figure(chart.data)
    elif chart.kind == "curve":
        figure = curve_figure(chart.data)
    elif chart.kind in ("interactions", "surface"):
        from .pairs import interactions_figure, surface_figure

        make = interactions_figure if chart.kind == "interactions" else surface_figure
        figure = make(chart.data)
    else:
        raise ValueError(f"unknown chart kind {chart.kind!r}; expected 'curve', 'impact', "
                         "'interactions' or 'surface'")
    return Picture(figure_png(figure), float(figure.get_figheight()))


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))  # what this process may use (containers, taskset)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _can_start_helper() -> bool:
    # Inside a host program (Excel's xlwings server, a frozen app) sys.executable may not be
    # a Python at all: starting it with "-m" must never happen there.
    executable = os.path.basename(sys.executable or "").lower()
    return (
        _usable_cores() >= 2 and sys.platform != "emscripten" and executable.startswith("python")
    )


class _Helper:
    """The helper process and the thread that reads its messages.

    Messages are pickles over the helper's stdin and stdout (ours alone: the helper sends
    its own stdout to stderr).  From the helper: ``("next", batch)`` and ``("done", batch,
    index, picture, warnings)``; to it: ``("batch", batch, charts)``, ``("draw", index)`` and
    ``("stop",)``.
    """

    def __init__(self) -> None:
        package_root = str(Path(__file__).resolve().parents[1])
        env = dict(os.environ)
        # The helper imports this very package, wherever the caller found it.
        env["PYTHONPATH"] = os.pathsep.join(
            [package_root] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
        )
        flags = getattr(subprocess, "CREATE_NO_WINDOW", 0)  # no console flashing on Windows
        self.process = subprocess.Popen(
            [sys.executable, "-m", "stratpd_xl.presentation._picture_helper", str(os.getpid())],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=env, creationflags=flags,
        )
        self.state = threading.Condition()
        self.batch = 0
        self.front = self.back = 0  # pictures front..back-1 of `batch` are unclaimed
        self.owed: set[int] = set()  # claimed by the helper, not delivered yet
        self.done: dict[int, tuple[Picture, list[tuple[type[Warning], str]]]] = {}
        self.alive = True
        self._send_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, name="stratpd-xl pictures",
                                        daemon=True)
        self._reader.start()

    def send(self, message: tuple[Any, ...]) -> None:
        stdin: IO[bytes] | None = self.process.stdin
        try:
            with self._send_lock:
                assert stdin is not None
                pickle.dump(message, stdin, protocol=pickle.HIGHEST_PROTOCOL)
                stdin.flush()
        except (OSError, ValueError, AssertionError):  # gone: its pictures are drawn here
            self._lost()

    def _read(self) -> None:
        stdout = self.process.stdout
        try:
            while True:
                message = pickle.load(stdout)  # type: ignore[arg-type]
                if message[0] == "next":
                    self.send(self._claim_for_helper(message[1]))
                elif message[0] == "done":
                    _, batch, index, picture, caught = message
                    with self.state:
                        if batch == self.batch and index in self.owed:
                            self.owed.discard(index)
                            self.done[index] = (picture, caught)
                            self.state.notify_all()
        except Exception:  # EOF, a broken pipe or a garbled message: the helper is done
            self._lost()

    def _claim_for_helper(self, batch: int) -> tuple[Any, ...]:
        with self.state:
            if batch != self.batch or self.front >= self.back:
                return ("stop",)
            self.back -= 1
            self.owed.add(self.back)
            return ("draw", self.back)

    def claim_here(self) -> int | None:
        with self.state:
            if self.front >= self.back:
                return None
            self.front += 1
            return self.front - 1

    def _lost(self) -> None:
        with self.state:
            self.alive = False
            self.state.notify_all()

    def close(self) -> None:
        self._lost()
        try:
            self.process.kill()
            self.process.wait()
        except OSError:
            pass
        for stream in (self.process.stdin, self.process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass


class PictureDrawer:
    """Draws lists of charts, with one helper process when that can save time.

    Parameters
    ----------
    helper : bool
        Start a helper process now; only where there are at least two cores and processes
        can be started.  Otherwise (and by default) every picture is drawn in this process.

    Notes
    -----
    Use it as a context manager, or call :meth:`close`.  One drawer serves any number of
    :meth:`draw` calls, one at a time.
    """

    def __init__(self, helper: bool = False) -> None:
        self._helper: _Helper | None = None
        #: How many pictures of the last :meth:`draw` the helper drew.
        self.helper_pictures = 0
        if helper and _can_start_helper():
            try:
                self._helper = _Helper()
            except Exception:  # noqa: BLE001 - no helper is only slower: draw alone
                self._helper = None

    @property
    def has_helper(self) -> bool:
        """Whether the helper process is (as far as is known) alive."""
        return self._helper is not None and self._helper.alive

    def draw(self, charts: Sequence[Chart],
             meanwhile: Callable[[], None] | None = None) -> list[Picture]:
        """Draw every chart; the pictures come back in the charts' order.

        Parameters
        ----------
        charts : sequence of Chart
            What to draw.
        meanwhile : callable, optional
            Work for this process while the helper starts on the pictures (e.g. writing a
            workbook's tables); called once, before this process draws.

        Returns
        -------
        list of Picture
        """
        charts = list(charts)
        helper = self._helper if self.has_helper and len(charts) > 1 else None
        self.helper_pictures = 0
        if helper is None:
            if meanwhile is not None:
                meanwhile()
            return [draw_picture(chart) for chart in charts]

        with helper.state:
            helper.batch += 1
            helper.front, helper.back = 0, len(charts)
            helper.owed.clear()
            helper.done.clear()
            batch = helper.batch
        # From a thread: a helper still importing does not read yet, and a batch larger than
        # the pipe's buffer would block this process until it does.
        threading.Thread(target=helper.send, args=(("batch", batch, charts),),
                         name="stratpd-xl pictures (send)", daemon=True).start()
        if meanwhile is not None:
            meanwhile()
        pictures: dict[int, Picture] = {}
        while (index := helper.claim_here()) is not None:
            pictures[index] = draw_picture(charts[index])
        with helper.state:
            # Wait for the pictures the helper is finishing; not for one still starting up.
            while helper.owed and helper.alive:
                if not helper.state.wait(timeout=HELPER_SILENCE_S):
                    break
            done = dict(helper.done)
            stuck = bool(helper.owed)
            helper.batch += 1  # late answers of this batch are ignored from now on
        if stuck:
            self.close()
        for index, (picture, caught) in sorted(done.items()):
            pictures[index] = picture
            for category, message in caught:  # notes, as if the picture was drawn here
                warnings.warn(message, category, stacklevel=2)
        self.helper_pictures = len(done)
        return [pictures[i] if i in pictures else draw_picture(chart)
                for i, chart in enumerate(charts)]

    def close(self) -> None:
        """End the helper at once; later draws happen in this process."""
        helper, self._helper = self._helper, None
        if helper is not None:
            helper.close()

    def __enter__(self) -> PictureDrawer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
