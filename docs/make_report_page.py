"""Regenerate docs/report-page.png, the README's picture of a report's first page.

    python docs/make_report_page.py

Runs ``stratpd-xl demo`` in a temporary folder, prints its workbook to PDF with LibreOffice
(``soffice --headless``) and turns the summary sheet's page into a PNG with ``pdftoppm``
(poppler-utils), so the picture is what an analyst sees when printing the demo's report.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
PICTURE = DOCS / "report-page.png"


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        subprocess.run([sys.executable, "-m", "stratpd_xl.cli", "demo", "-o", str(out),
                        "--quiet"], check=True)
        report = out / "diamonds-report.xlsx"
        subprocess.run(["soffice", f"-env:UserInstallation=file://{out}/profile", "--headless",
                        "--convert-to", "pdf", "--outdir", str(out), str(report)],
                       check=True, capture_output=True)
        subprocess.run(["pdftoppm", "-png", "-r", "60", "-f", "1", "-l", "1",
                        "-singlefile", str(out / "diamonds-report.pdf"), str(out / "page")],
                       check=True)
        shutil.copyfile(out / "page.png", PICTURE)
    print(f"wrote {PICTURE}")


if __name__ == "__main__":
    main()
