"""The Lite plugin as a workbook gets it: stratpd-xl installed from its wheel, main.py loaded.

    python tests/pyodide/plugin_check.py MAIN_PY

Run from outside the checkout (so the installed package, not the source tree, is imported),
with ``XLWINGS_ON_SERVER=true`` (xlwings' decorators are then Lite's) and a licence key as
tests/test_xlwings_lite.py explains.  Checks that xlwings registers the five formulas, with
the desktop wrappers' arguments, and the analyse_selection script; prints one line.
"""

import importlib.util
import inspect
import sys

from xlwings import server

import stratpd_xl
from stratpd_xl import spreadsheet
from stratpd_xl.excel import udfs

spec = importlib.util.spec_from_file_location("main", sys.argv[1])
main = importlib.util.module_from_spec(spec)
spec.loader.exec_module(main)
assert "site-packages" in stratpd_xl.__file__, f"not the installed package: {stratpd_xl.__file__}"
functions = {f["name"]: [p["name"] for p in f["parameters"]]
             for f in server.custom_functions_meta(main)["functions"]}
assert set(functions) == set(spreadsheet.FORMULA_ARGS), sorted(functions)
for name, params in functions.items():
    desktop = [p for p in inspect.signature(getattr(udfs, name)).parameters if p != "caller"]
    assert params == desktop, (name, params, desktop)
scripts = [s["function_name"] for s in server.custom_scripts_meta(main)]
assert scripts == ["analyse_selection"], scripts
print(f"test-lite-compat: the plugin from {stratpd_xl.__file__} registers "
      f"{', '.join(sorted(functions))} and the script {scripts[0]}")
