"""Regenerate docs/chart-example.png, the README's picture, from the bundled demo data.

    python docs/make_chart_example.py
"""

from __future__ import annotations

from pathlib import Path

import stratpd_xl as sx
from stratpd_xl.demo import DEMO_LEFT_OUT, demo_data
from stratpd_xl.presentation.charts import curve_figure, figure_png


def main() -> None:
    data = demo_data().drop(columns=list(DEMO_LEFT_OUT))  # the demo's own table
    curve = sx.stratpd(data, "price", "carat", n_trials=20, random_state=0)
    out = Path(__file__).with_name("chart-example.png")
    out.write_bytes(figure_png(curve_figure(curve)))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
