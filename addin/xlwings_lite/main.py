"""stratpd-xl in xlwings Lite: =STRATPD, =STRATIMPACT, =STRATCOMPARE and "analyse_selection".

Paste this file into xlwings Lite's main.py, and add the line of requirements.txt (next to
it) to Lite's requirements.txt, keeping the xlwings line Lite put there.  The functions below
only declare themselves to Excel; the installed package does the work (stratpd_xl.excel.lite),
with the same code as the Windows add-in.
"""

import xlwings as xw
from xlwings import arg, func, script

from stratpd_xl.excel import lite


def _with_args(options):
    """Declare each argument's conversion and help text, as the Windows formulas do."""

    def wrap(f):
        for name, kwargs in options.items():
            f = arg(name, **kwargs)(f)
        return f

    return wrap


@func
@_with_args(lite.STRATPD_ARGS)
def STRATPD(
    data,
    target,
    col,
    min_samples_leaf=lite.DEFAULT_MIN_SAMPLES_LEAF,
    trials=1,
    chart=True,
    max_points=None,
    positive=None,
    exclude=None,
):
    """Partial dependence of target on col from the data alone (StratPD), all else equal."""
    return lite.stratpd(
        data, target, col, min_samples_leaf, trials, chart, max_points, positive, exclude
    )


@func
@_with_args(lite.STRATIMPACT_ARGS)
def STRATIMPACT(
    data, target, min_samples_leaf=lite.DEFAULT_MIN_SAMPLES_LEAF, positive=None, exclude=None
):
    """Model-free ranking of the columns by how much each alone moves the target (StratPD)."""
    return lite.stratimpact(data, target, min_samples_leaf, positive, exclude)


@func
@_with_args(lite.STRATCOMPARE_ARGS)
def STRATCOMPARE(
    data,
    target,
    col,
    min_samples_leaf=lite.DEFAULT_MIN_SAMPLES_LEAF,
    trials=1,
    chart=True,
    positive=None,
    exclude=None,
):
    """StratPD beside a fitted model's partial dependence and ALE, and how well they agree."""
    return lite.stratcompare(data, target, col, min_samples_leaf, trials, chart, positive, exclude)


@script
def analyse_selection(book: xw.Book):
    """Analyse the selected table (header row included) into a new sheet, as the ribbon does."""
    lite.analyse_selection(book)
