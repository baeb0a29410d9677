"""The helper process of :class:`.drawing.PictureDrawer` (``python -m`` this module).

It imports the chart code at once, then, for each batch of charts it is sent, asks for the
next picture to draw until told to stop.  It ends when its stdin closes, and at once when its
parent process ends, even killed in the middle of a picture (the pipe only tells it once that
picture is done).  Its stdout carries only the protocol's pickles: anything else written to
stdout goes to stderr.
"""

from __future__ import annotations

import os
import pickle
import sys
import threading
import time
import warnings
from collections import deque
from typing import Any

#: How often the helper looks whether its parent is still there, in seconds.
PARENT_CHECK_S = 0.2


def _end_with_parent(parent: int | None = None) -> None:
    """Exit as soon as the process that started this one is gone (``kill -9`` included).

    ``parent`` is that process's id as it gave it: one killed while this process was still
    starting has already handed it to another parent, so ``os.getppid()`` would name that one.
    """
    parent = os.getppid() if parent is None else parent
    if sys.platform.startswith("linux"):
        try:  # the kernel's own signal on the parent's death: no polling needed
            import ctypes
            import signal

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if sys.platform == "win32":
        watch = _windows_watch(parent)
    else:
        def watch() -> None:  # re-parented (to init or a sub-reaper) when the parent dies
            while os.getppid() == parent:
                time.sleep(PARENT_CHECK_S)
            os._exit(0)
    if os.getppid() != parent:  # it died before the watch began
        os._exit(0)
    threading.Thread(target=watch, name="stratpd-xl parent watch", daemon=True).start()


def _windows_watch(parent: int) -> Any:
    import ctypes

    kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
    handle = kernel32.OpenProcess(0x00100000, False, parent)  # SYNCHRONIZE

    def watch() -> None:
        if not handle:  # cannot watch it: the closed pipe still ends this process later
            return
        kernel32.WaitForSingleObject(handle, 0xFFFFFFFF)  # INFINITE
        os._exit(0)

    return watch


def main() -> None:
    """Serve picture requests on stdin/stdout until stdin closes or the parent ends."""
    _end_with_parent(int(sys.argv[1]) if len(sys.argv) > 1 else None)
    inbox = sys.stdin.buffer
    outbox = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints must not garble replies

    # The slow imports (pandas, matplotlib) now, while the caller reads its file.
    from . import charts  # noqa: F401
    from .drawing import draw_picture

    def send(message: tuple[Any, ...]) -> None:
        pickle.dump(message, outbox, protocol=pickle.HIGHEST_PROTOCOL)
        outbox.flush()

    batches: deque[tuple[int, list[Any]]] = deque()
    try:
        while True:
            while not batches:
                message = pickle.load(inbox)
                if message[0] == "batch":
                    batches.append((message[1], message[2]))
            batch, charts = batches.popleft()
            while True:
                send(("next", batch))
                reply = pickle.load(inbox)
                while reply[0] == "batch":  # a later batch, sent before this answer
                    batches.append((reply[1], reply[2]))
                    reply = pickle.load(inbox)
                if reply[0] != "draw":
                    break
                index = reply[1]
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    picture = draw_picture(charts[index])
                send(("done", batch, index, picture,
                      [(w.category, str(w.message)) for w in caught]))
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        return  # the caller closed the pipe, or is gone


if __name__ == "__main__":
    main()
