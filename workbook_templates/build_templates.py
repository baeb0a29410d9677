"""Build ``workbook_templates/stratpd_diamonds.xlsx``: real data, ready formulas, instructions.

The workbook holds a fixed random sample of 5,000 rows of the bundled diamonds data (MIT; see
``workbook_templates/README.md``) with ``price`` as the last column, so both ways of using the
add-in work at once:

* sheets "Carat", "Cut" and "Impact" hold ``=STRATPD(...)`` / ``=STRATIMPACT(...)`` written as
  Excel 365 dynamic-array formulas (they spill; no ``@`` is added when Excel opens the file);
* on sheet "Data", click any cell of the table and press StratPD > Analyse selection: the last
  column, ``price``, is the target.

The output is reproducible: a fixed sample seed and fixed document dates (xlsxwriter then writes
identical bytes), so the committed file can be checked against a fresh build.

Usage::

    python workbook_templates/build_templates.py          # writes the .xlsx next to this file
    python workbook_templates/build_templates.py --check  # exit 1 if the committed file is stale
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import sys
from pathlib import Path

import pandas as pd
import xlsxwriter

from stratpd_xl.demo import DEMO_LEFT_OUT

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = ROOT / "stratpd_xl" / "data" / "diamonds.csv"
OUTPUT = HERE / "stratpd_diamonds.xlsx"

N_ROWS = 5000
SEED = 2020
TARGET = "price"
# The document's creation date; fixed so that two builds give the same bytes.
CREATED = dt.datetime(2026, 11, 22)



def sample(path: Path = DATA, n: int = N_ROWS, seed: int = SEED) -> pd.DataFrame:
    """A fixed random sample of the diamonds data with the target as the last column.

    The stone's dimensions x, y, z are left out, as in ``stratpd-xl demo``: together they
    nearly determine carat, so none of them can vary with carat held fixed.
    """
    data = pd.read_csv(path).drop(columns=list(DEMO_LEFT_OUT))
    rows = data.sample(n=n, random_state=seed).sort_index()
    return rows[[c for c in rows.columns if c != TARGET] + [TARGET]].reset_index(drop=True)


def _data_range(frame: pd.DataFrame) -> str:
    last_col = xlsxwriter.utility.xl_col_to_name(frame.shape[1] - 1)
    return f"Data!$A$1:${last_col}${frame.shape[0] + 1}"


def formulas(frame: pd.DataFrame) -> list[tuple[str, str, str]]:
    """The ready formulas: (sheet name, formula, one-line explanation)."""
    rng = _data_range(frame)
    return [
        ("Impact", f'=STRATIMPACT({rng},"price")',
         "Which columns move the price most, each on its own, all else equal."),
        ("Carat", f'=STRATPD({rng},"price","carat")',
         "How the price changes with weight (carat), all else equal."),
        ("Cut", f'=STRATPD({rng},"price","cut",10,20)',
         "The price effect of each cut quality, with a 95% band from 20 trials."),
    ]


INSTRUCTIONS = [
    ("StratPD for Excel: what moves a diamond's price, all else equal", "title"),
    ("", None),
    ("1. Install once: run installer\\install-windows.ps1 (Windows) or "
     "installer/install-macos.sh (Mac) from the stratpd-xl folder, then restart Excel. "
     "A StratPD tab appears in the ribbon.", None),
    ("2. Formulas (Excel 365 on Windows): open the sheets Impact, Carat and Cut. Each holds one "
     "formula in A3; its table spills below it and a chart appears to the right. If you see the "
     "placeholder text instead, press Ctrl+Alt+F9 to recalculate.", None),
    ("3. Ribbon (Windows and Mac): on the Data sheet click any cell of the table, then "
     "StratPD > Analyse selection. The last column (price) is the target; a new sheet "
     '"StratPD price" gets the ranking, one table and one chart per column.', None),
    ("4. Your own data: =STRATPD(table, \"target\", \"column\", [min_samples_leaf], [trials], "
     "[chart]) and =STRATIMPACT(table, \"target\"). The table range includes the header row. "
     "To pick the ribbon's target yourself, define the name StratPD_target "
     '(Formulas > Define Name) as ="your column".', None),
    ("", None),
    ("Reading the results", "heading"),
    ("partial dependence: how much the target changes, on average, when only this column "
     "changes and the other columns stay as they are (StratPD, Parr & Wilson 2020). "
     "No model is fitted; the curve averages 0 over the rows, so it reads as how far each "
     "value moves the target from its usual level.", None),
    ("impact: how far, on average, this column alone moves the target (in target units); "
     "share: its part of the total.", None),
    ("min_samples_leaf (default 10): the smallest group of similar rows compared; larger is "
     "smoother but can blur the effect. trials (default 1): with more, the table gets a "
     "low/high band.", None),
    ("", None),
    ("Data", "heading"),
    (f"{N_ROWS:,} diamonds drawn at random (seed {SEED}) from the 53,940 of the diamonds data "
     "set of ggplot2 (MIT licence), as shipped by plotnine 0.15.9. See "
     "workbook_templates/README.md for source and licence.", None),
    ("The stone's length, width and depth in mm (x, y, z in the original data) are left out: "
     "together they nearly determine carat, so no group of similar diamonds lets one of them "
     "change while carat stays fixed, and their curves would be noise.", None),
]


def build_bytes(frame: pd.DataFrame | None = None) -> bytes:
    """The workbook as bytes (same data -> same bytes)."""
    frame = sample() if frame is None else frame
    buffer = io.BytesIO()
    book = xlsxwriter.Workbook(buffer, {"in_memory": True})
    book.set_properties({
        "title": "StratPD template: diamonds",
        "subject": "Model-free partial dependence in Excel",
        "author": "stratpd-xl",
        "created": CREATED,
        "comments": "Built by workbook_templates/build_templates.py",
    })
    title = book.add_format({"bold": True, "font_size": 14})
    heading = book.add_format({"bold": True})
    wrap = book.add_format({"text_wrap": True, "valign": "top"})
    header = book.add_format({"bold": True, "bottom": 1})
    note = book.add_format({"italic": True, "font_color": "#555555"})

    start = book.add_worksheet("Start here")
    start.set_column(0, 0, 110)
    for row, (text, style) in enumerate(INSTRUCTIONS):
        fmt = {"title": title, "heading": heading}.get(style, wrap)
        start.write_string(row, 0, text, fmt)

    data = book.add_worksheet("Data")
    data.freeze_panes(1, 0)
    for col, name in enumerate(frame.columns):
        data.write_string(0, col, str(name), header)
        values = frame[name]
        data.set_column(col, col, 10)
        for row, value in enumerate(values.tolist(), start=1):
            if isinstance(value, str):
                data.write_string(row, col, value)
            else:
                data.write_number(row, col, float(value))

    for sheet_name, formula, what in formulas(frame):
        ws = book.add_worksheet(sheet_name)
        ws.write_string(0, 0, what, heading)
        ws.write_string(1, 0, f"Formula in A3: {formula}", note)
        ws.set_column(0, 4, 16)
        # A dynamic-array formula: Excel 365 spills it instead of adding an implicit "@".
        # The cached value is what a reader without the add-in sees.
        ws.write_dynamic_array_formula(
            2, 0, 2, 0, formula, None,
            "install the StratPD add-in, then press Ctrl+Alt+F9",
        )
    start.activate()
    book.close()
    return buffer.getvalue()


def main(argv: list[str] | None = None) -> int:
    """Build the template, or with ``--check`` compare the committed one with a fresh build."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    fresh = build_bytes()
    if args.check:
        if not args.output.is_file() or args.output.read_bytes() != fresh:
            print(f"{args.output} is out of date: run {Path(__file__).name}", file=sys.stderr)
            return 1
        print(f"{args.output} is up to date")
        return 0
    args.output.write_bytes(fresh)
    print(f"wrote {args.output} ({len(fresh):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
