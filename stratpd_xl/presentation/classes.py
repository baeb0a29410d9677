"""The picture of a target read as classes (``stratpd(..., classes=True)``): one line per
class (or a bar per class in each category), in colours told apart with any colour vision."""

from __future__ import annotations

from typing import Any

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .labels import CLASS_COLORS, plain_axes
from .pairs import draw_per_group

__all__ = ["CLASS_COLORS", "class_figure", "class_title", "is_by_class"]

# Past the eight colours (labels.CLASS_COLORS) the lines repeat them with another dash.
_DASHES = ("-", "--", ":")
_PLAIN = {"parse_math": False}


def is_by_class(result: Any) -> bool:
    """True for a result with a curve (or effects) per class of the target."""
    from .tables import is_by_class as by_class

    return by_class(result)


def class_title(result: pd.DataFrame) -> str:
    """``"change in the chance of each species with petal, by class (StratPD)"``."""
    a = result.attrs
    method = str(a.get("method", "StratPD by class")).replace(" by class", "")
    return (f"change in the chance of each {a.get('target', 'class')} with "
            f"{a.get('feature', 'x')}, by class ({method})")


def class_figure(result: pd.DataFrame, *, width_in: float = 6.4,
                 height_in: float = 4.0) -> Figure:
    """One line per class over the feature (its 95 % band shaded when there is one), or for
    a categorical feature one bar per class in each category; the value axis in percentage
    points of each class's probability."""
    fig = Figure(figsize=(width_in, height_in), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    classes = list(result["class"].cat.categories) if isinstance(
        result["class"].dtype, pd.CategoricalDtype) else list(dict.fromkeys(result["class"]))
    draw_per_group(ax, result, "class", classes, str, CLASS_COLORS, _DASHES, band_alpha=0.15)
    ax.axhline(0.0, color="#bbbbbb", linewidth=0.8, zorder=0)
    ax.set_ylabel("change in each class's chance vs its average, points", **_PLAIN)
    ax.legend(title=str(result.attrs.get("target", "class")), fontsize=8, title_fontsize=8,
              frameon=False, loc="best", ncol=1 if len(classes) <= 8 else 2)
    plain_axes(ax)
    fig.suptitle(class_title(result), fontsize=11, **_PLAIN)
    return fig
