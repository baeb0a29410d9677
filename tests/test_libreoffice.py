"""Our xlsx and CSV outputs opened in real LibreOffice (headless), printed to PDF and read back.

All files are converted in one ``soffice`` call with a fresh profile (a session fixture), so
this module costs one LibreOffice start-up.  Without ``soffice`` the tests are skipped, except
under CI (``CI=true``), where a missing LibreOffice is a failure.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import stratpd_xl as sx
from stratpd_xl.presentation.charts import curve_title, impact_title
from stratpd_xl.presentation.report import (
    curve_table,
    write_curve_workbook,
    write_impact_workbook,
    write_report,
)
from stratpd_xl.presentation.tables import BAND_HIGH, BAND_LOW
from tests.test_charts import categorical_result, numeric_result, ranking_result, synthetic_data

SOFFICE_TIMEOUT = 120  # seconds for one conversion call (start-up is most of it)


def require_tools(*tools: str) -> None:
    """Skip when a tool is missing, but fail under CI where .ci/run installs them."""
    missing = [t for t in tools if shutil.which(t) is None]
    if not missing:
        return
    message = f"{', '.join(missing)} not installed (apt-get install libreoffice-calc-nogui " \
              "poppler-utils)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


def soffice_convert(files: Sequence[Path], outdir: Path, *, to: str = "pdf",
                    profile: Path, timeout: float = SOFFICE_TIMEOUT) -> list[Path]:
    """Convert files with headless LibreOffice in one call; return the converted paths.

    Parameters
    ----------
    files : sequence of Path
        Inputs (xlsx, ods, csv ...); all are converted by the same soffice process.
    outdir : Path
        Where the outputs go (same stem, new suffix).
    to : str
        soffice's ``--convert-to`` argument, e.g. ``"pdf"`` or
        ``'csv:Text - txt - csv (StarCalc):59,34,76'``.
    profile : Path
        A directory for a throw-away LibreOffice user profile, so a user's own settings
        or a running LibreOffice cannot interfere.
    timeout : float
        Seconds before the call is abandoned.
    """
    outdir.mkdir(parents=True, exist_ok=True)
    command = [
        "soffice", "--headless", "--norestore", "--nologo",
        f"-env:UserInstallation={profile.resolve().as_uri()}",
        "--convert-to", to, "--outdir", str(outdir), *[str(f) for f in files],
    ]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          check=False)
    suffix = "." + to.split(":", 1)[0]
    outputs = [outdir / (Path(f).stem + suffix) for f in files]
    missing = [o.name for o in outputs if not o.exists()]
    assert not missing, f"soffice did not write {missing}: {proc.stdout}\n{proc.stderr}"
    return outputs


def pdf_text(pdf: Path) -> str:
    """The PDF's text in reading order with all whitespace collapsed to single spaces."""
    out = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    return " ".join(out.split())


def pdf_pages(pdf: Path) -> list[str]:
    """The text of each page (pdftotext separates pages with form feeds)."""
    out = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    return out.split("\f")[:-1] if out.endswith("\f") else out.split("\f")


def pdf_lines(pdf: Path) -> list[str]:
    """The PDF's text laid out as printed, one printed line per item, spaces collapsed.

    A table row comes out as one line (perhaps followed by chart text printed beside it).
    """
    out = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                         text=True, check=True, timeout=60).stdout
    return [" ".join(line.split()) for line in out.splitlines() if line.strip()]


def has_row(lines: list[str], *cells: str) -> bool:
    """True when one printed line starts with the given cells, in order."""
    start = " ".join(cells)
    return any(line == start or line.startswith(start + " ") for line in lines)


def pdf_images(pdf: Path) -> list[tuple[int, int]]:
    """(width, height) of each distinct image in the PDF (soft masks excluded).

    LibreOffice also lists a picture on the page before the one it is printed on (clipped
    away) when a page break falls just above it, so images are counted by object id.
    """
    out = subprocess.run(["pdfimages", "-list", str(pdf)], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    images: dict[str, tuple[int, int]] = {}
    for line in out.splitlines()[2:]:
        parts = line.split()
        if len(parts) > 10 and parts[2] == "image":
            images[parts[10]] = (int(parts[3]), int(parts[4]))
    return list(images.values())


def _wide_band():
    """40 points not evenly spaced, with a band a fifth of the curve's range wide."""
    result = numeric_result(n=40)
    result["x"] = np.sort(np.random.default_rng(1).uniform(0.2, 5.01, 40))
    result["pd_low"], result["pd_high"] = result["pd"] - 5000, result["pd"] + 5000
    return result


def page_pixels(pdf: Path, dpi: int = 40) -> np.ndarray:
    """The first page as an (height, width, 3) array of RGB values (pdftoppm's PPM)."""
    data = subprocess.run(["pdftoppm", "-r", str(dpi), "-f", "1", "-l", "1", str(pdf)],
                          capture_output=True, check=True, timeout=60).stdout
    magic, size, _, pixels = data.split(b"\n", 3)
    width, height = map(int, size.split())
    return np.frombuffer(pixels, dtype=np.uint8).reshape(height, width, 3).astype(int)


def word_boxes(pdf: Path) -> list[tuple[str, float, float]]:
    """(word, x, y) of each word on the first page (pdftotext -bbox), y growing downwards."""
    out = subprocess.run(["pdftotext", "-bbox", "-f", "1", "-l", "1", str(pdf), "-"],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    return [(html.unescape(m[4]), float(m[0]), float(m[1])) for m in re.findall(
        r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>',
        out)]


@pytest.fixture(scope="session")
def converted(tmp_path_factory) -> dict[str, dict]:
    """Write every kind of output once and print them all to PDF in one soffice call."""
    require_tools("soffice", "pdftotext", "pdfimages")
    work = tmp_path_factory.mktemp("libreoffice")
    analysis = sx.analyse(synthetic_data(), "price", n_trials=3, random_state=0)
    cases: dict[str, dict] = {
        "numeric": {"result": numeric_result()},
        "dates": {"result": numeric_result(n=10, dates=True, band=False, feature="sold on")},
        "categorical": {"result": categorical_result()},
        "impact": {"result": ranking_result()},
        "report": {"result": analysis},
        "table": {"result": numeric_result()},
        "wide band": {"result": _wide_band()},
        "wide report": {"result": _wide_analysis()},
    }
    files = []
    for name, case in cases.items():
        if name == "impact":
            path = work / "impact.xlsx"
            write_impact_workbook(case["result"], path)
        elif name in ("report", "wide report"):
            path = work / f"{name.replace(' ', '-')}.xlsx"
            write_report(case["result"], path)
        elif name == "table":
            # What the CLI's .csv output is: the user-facing table, written by pandas.
            path = work / "table.csv"
            curve_table(case["result"]).to_csv(path, index=False)
        else:
            path = work / f"{name}.xlsx"
            write_curve_workbook(case["result"], path)
        case["input"] = path
        files.append(path)
    pdfs = soffice_convert(files, work / "pdf", profile=work / "profile")
    for case, pdf in zip(cases.values(), pdfs, strict=True):
        case["pdf"] = pdf
        case["text"] = pdf_text(pdf)
        case["lines"] = pdf_lines(pdf)
        case["pages"] = [" ".join(page.split()) for page in pdf_pages(pdf)]
        case["images"] = pdf_images(pdf)
    return cases


@pytest.mark.parametrize("name", ["numeric", "dates", "categorical"])
def test_curve_workbook_prints_title_chart_and_picture(converted, name):
    case = converted[name]
    title = curve_title(case["result"])
    # Once in the sheet's title cell and once as the native chart's title (the picture
    # is a bitmap, so its title is not text).
    assert case["text"].count(title) == 2, case["text"][:2000]
    assert "change in price vs " in case["text"].replace(title, "")  # the value axis
    assert case["images"] == [(704, 440)]
    # Header, chart and picture share the first printed page.
    first_page = subprocess.run(["pdfimages", "-list", "-f", "1", "-l", "1", str(case["pdf"])],
                                capture_output=True, text=True, check=True).stdout
    assert " image " in first_page
    assert case["pages"][0].count(title) == 2


def test_numeric_values_and_band_headers_printed(converted):
    lines = converted["numeric"]["lines"]
    # The long headers wrap over two printed lines, keeping the number columns narrow.
    assert BAND_LOW == "low (95% band per point)" and BAND_HIGH == "high (95% band per point)"
    assert has_row(lines, "partial", "low (95% band", "high (95% band"), lines
    assert has_row(lines, "carat", "dependence", "per point)", "per point)",
                   "slopes averaged"), lines
    # x with the decimals its values have, pd and band with thousands separators, NaN-free.
    result = converted["numeric"]["result"]
    assert has_row(lines, "0.25", "0", "-100", "150", "5"), lines
    assert has_row(lines, "0.50", "1,250", "1,150", "1,400", "6"), lines
    last = result.iloc[-1]
    assert has_row(lines, f"{last['x']:.2f}", f"{last['pd']:,.0f}", f"{last['pd_low']:,.0f}",
                   f"{last['pd_high']:,.0f}", str(int(last["n_slopes"]))), lines
    assert has_row(lines, "rows used", "1,180"), lines


def test_dates_printed_as_dates(converted):
    text = converted["dates"]["text"]
    for day in ["2024-01-01", "2024-01-08", "2024-03-04"]:
        assert day in text
    assert "45292" not in text  # the serial number of 2024-01-01 must not show


def test_categories_printed(converted):
    text = converted["categorical"]["text"]
    for category in ["Fair", "Good", "Very Good", "Premium", "Ideal"]:
        assert category in text
    lines = converted["categorical"]["lines"]
    assert has_row(lines, "baseline category", "Fair"), lines
    assert has_row(lines, "Very Good", "600", "120", "560", "660"), lines


def test_impact_workbook_prints_ranking(converted):
    case = converted["impact"]
    text = case["text"]
    assert text.count(impact_title(case["result"])) == 2
    lines = case["lines"]
    assert has_row(lines, "carat", "numeric", "2,000", "50.0%"), lines
    assert has_row(lines, "color", "categorical", "200", "5.0%"), lines
    assert len(case["images"]) == 1


def test_report_prints_every_sheet_with_its_picture(converted):
    case = converted["report"]
    analysis = case["result"]
    text = case["text"]
    assert "What drives price: StratPD report" in text
    for curve in analysis.curves.values():
        assert text.count(curve_title(curve)) == 2
    # One picture per curve; the ranking is a native chart on the summary sheet, not a picture.
    assert len(case["images"]) == len(analysis.curves)
    # Pictures keep their proportions in LibreOffice (one-cell anchors, see report.py).
    pages = subprocess.run(["pdfimages", "-list", str(case["pdf"])], capture_output=True,
                           text=True, check=True).stdout.splitlines()[2:]
    for line in pages:
        parts = line.split()
        if parts[2] == "image":
            x_ppi, y_ppi = int(parts[12]), int(parts[13])
            assert abs(x_ppi - y_ppi) <= 1, line


def _wide_analysis():
    """A wide export in small: gaps, a duplicated sum, thin columns, so notes under the
    sentences and more notes than the summary shows."""
    from stratpd_xl import workflow
    from tests.test_notes import _wide

    return workflow.analysis(_wide(), "y", settings=sx.Settings.make(min_samples_leaf=10,
                                                                      n_trials=1))


def test_the_report_prints_its_ranking_on_page_one_before_the_notes(converted):
    case = converted["wide report"]
    ranking = case["result"].impact
    assert len(case["result"].notes) > 5  # more than the summary shows
    first = subprocess.run(["pdftotext", "-layout", "-f", "1", "-l", "1", str(case["pdf"]),
                            "-"], capture_output=True, text=True, check=True).stdout
    lines = [line.strip() for line in first.splitlines()]
    top = ranking.iloc[0]
    at = [i for i, line in enumerate(lines) if line.startswith(f"{top.feature} ")
          and "numeric" in line]
    assert at, first  # the ranking's first row is on the first printed page
    # ... and comes before the other notes and the settings, whatever is printed on page 1.
    pages = subprocess.run(["pdftotext", "-layout", "-f", "1", "-l", "3", str(case["pdf"]),
                            "-"], capture_output=True, text=True, check=True).stdout
    lines = [" ".join(line.split()) for line in pages.splitlines()]
    header = lines.index("feature kind impact share rows thin evidence")
    assert header < lines.index("Notes") < lines.index("Settings"), lines


def test_pandas_csv_opens_in_libreoffice(converted):
    lines = converted["table"]["lines"]
    # The long band headers push "slopes averaged" onto the next printed page.
    assert has_row(lines, "carat", "partial dependence", BAND_LOW, BAND_HIGH), lines
    assert has_row(lines, "0.25", "0", "-100", "150"), lines
    assert has_row(lines, "3", "13750", "13650", "13900"), lines


def test_native_band_printed_as_a_filled_area_with_labels_at_the_bottom(converted):
    """LibreOffice draws the native chart's band filled (the stacked area's colour, which
    the picture's more transparent band does not have) and the x labels under the plot."""
    case = converted["wide band"]
    pixels = page_pixels(case["pdf"])
    # BAND_COLOR (#8FB4D9) at 35 % transparency on white.
    native = (np.abs(pixels - np.array([182, 206, 230])).max(axis=2) <= 8).sum()
    plain = page_pixels(converted["numeric"]["pdf"])
    assert native > 400 > (np.abs(plain - np.array([182, 206, 230])).max(axis=2) <= 8).sum()
    assert "95% band per point" in case["text"]
    words = word_boxes(case["pdf"])
    # The chart is right of the table: from its value axis's title ("change in price...").
    left = max(x for w, x, _ in words if w == "change") + 5
    # The value axis's labels (thousands) and the round x labels (1 to 4).
    values = [(w, y) for w, x, y in words if re.fullmatch(r"-?\d{1,2},000|0", w) and x > left]
    ticks = [(w, y) for w, x, y in words if w in {"1", "2", "3", "4"} and x > left]
    assert len(ticks) >= 4 and values
    lowest_value = max(y for _, y in values)
    assert all(y > lowest_value for _, y in ticks), (ticks, values)
