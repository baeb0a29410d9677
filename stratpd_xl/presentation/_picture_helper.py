"""The helper process of :class:`.drawing.PictureDrawer` (``python -m`` this module).

It imports the chart code at once, then, for each batch of charts it is sent, asks for the
next picture to draw until told to stop.  It ends when its stdin closes.  Its stdout carries
only the protocol's pickles: anything else written to stdout goes to stderr.
"""

from __future__ import annotations

import os
import pickle
import sys
import warnings
from collections import deque
from typing import Any


def main() -> None:
    """Serve picture requests on stdin/stdout until stdin closes."""
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
