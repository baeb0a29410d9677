"""Regenerate docs/chart-example.png, the README's picture, by running the snippet beside it.

    python docs/make_chart_example.py

The snippet is the first ``python`` block of the README's intro section, run as written in a
temporary folder; the picture it writes (``carat.png``) becomes ``docs/chart-example.png``.
So the picture is, by construction, what a reader gets from the snippet, and
``tests/test_readme.py`` checks that it still is.
"""

from __future__ import annotations

import os
import re
import runpy
import shutil
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
README = DOCS.parent / "README.md"
PICTURE = DOCS / "chart-example.png"
# The file the snippet writes.
SNIPPET_OUTPUT = "carat.png"


def intro_snippet(readme: str) -> str:
    """The first python block between ``<!-- section:intro -->`` and its end marker."""
    intro = readme.split("<!-- section:intro -->", 1)[1].split("<!-- /section:intro -->", 1)[0]
    found = re.search(r"^```python\n(.*?)^```", intro, flags=re.S | re.M)
    if found is None:
        raise SystemExit("README.md: no python block in the intro section")
    return found.group(1)


def main() -> None:
    code = intro_snippet(README.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "intro.py"
        script.write_text(code, encoding="utf-8")
        cwd = Path.cwd()
        try:
            os.chdir(tmp)
            runpy.run_path(str(script), run_name="__main__")
        finally:
            os.chdir(cwd)
        shutil.copyfile(Path(tmp) / SNIPPET_OUTPUT, PICTURE)
    print(f"wrote {PICTURE}")


if __name__ == "__main__":
    main()
