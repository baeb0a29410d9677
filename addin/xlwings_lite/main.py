"""stratpd-xl in xlwings Lite: the five formulas and the analyse_selection script.

Paste this into xlwings Lite's main.py and add the line of requirements.txt (next to it) to
Lite's requirements.txt, keeping the xlwings line Lite put there.  The formulas and the script
are declared by the installed package (stratpd_xl.excel.lite_plugin), from the same signatures
as the Windows add-in's, so a newer package brings its formulas without editing this file.
"""

from stratpd_xl.excel.lite_plugin import *  # noqa: F403 - xlwings Lite registers what is here
