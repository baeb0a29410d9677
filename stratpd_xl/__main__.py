"""``python -m stratpd_xl`` and the ``stratpd-xl`` command's entry point.

Only this light module is imported before the command's own start-up (pandas, numpy, the
engine), so Ctrl+C during that start-up ends in one word and exit code 130, as it does
later, instead of a traceback.
"""

from __future__ import annotations

import sys

from .errors import exit_process


def command() -> int:
    """Run ``stratpd_xl.cli.main`` on ``sys.argv[1:]``; 130 when interrupted while starting."""
    try:
        from .cli import main

        return main()
    except KeyboardInterrupt:
        sys.stderr.write("\nstratpd-xl: cancelled\n")
        return 130


if __name__ == "__main__":
    exit_process(command())
