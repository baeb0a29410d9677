#!/bin/sh
# `make test-lite-compat`: stratpd-xl under the package versions of xlwings Lite's Pyodide.
#
# xlwings Lite runs Pyodide 0.27.5 (Python 3.12, pandas 2.2.3, numpy 2.0.2, no numba).  A
# CPython 3.12 venv gets exactly that release's numpy/pandas/scipy/matplotlib/scikit-learn and
# their dependencies (versions from the committed lock file), then
#   1. the tests of what Lite uses (engine, sheet typing, workflow, yes/no, formulas, the Lite
#      adapters, the dependency check) run there with the numpy backend;
#   2. the Lite formulas' cells for a corpus of tables must equal the desktop's (pandas 3).
# Without a Python 3.12 it says so and skips, so `make` still works on machines without one.
#
# Environment: DESKTOP_PYTHON (the desktop .venv's python), LITE_VENV (where to build),
# LITE_PYTHON (a python3.12 to use instead of looking for one).
set -eu
cd "$(dirname "$0")/../.."
LOCK=tests/pyodide/pyodide-lock-0.27.5.json
LITE_VENV=${LITE_VENV:-.venv-lite-compat}
DESKTOP_PYTHON=${DESKTOP_PYTHON:-.venv/bin/python}

py=""
for candidate in ${LITE_PYTHON:-} python3.12 \
    "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3.12; do
  # pyenv's shim answers even when 3.12 is not selected, so ask the interpreter itself.
  if "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then
    py=$candidate
    break
  fi
done
if [ -z "$py" ]; then
  echo "test-lite-compat: SKIPPED - no Python 3.12 found (xlwings Lite's Pyodide 0.27.5 is 3.12);"
  echo "  install one (e.g. pyenv install 3.12) or pass LITE_PYTHON=/path/to/python3.12"
  exit 0
fi

stamp=$LITE_VENV/.installed
if [ ! -f "$stamp" ] || [ "$LOCK" -nt "$stamp" ] || [ tests/pyodide/pins.py -nt "$stamp" ] \
    || [ tests/pyodide/pure_python_wheels.json -nt "$stamp" ]; then
  rm -rf "$LITE_VENV"
  "$py" -m venv "$LITE_VENV"
  python_bin=$LITE_VENV/bin/python
  "$python_bin" tests/pyodide/pins.py "$LOCK" > "$LITE_VENV/pins.txt"
  # Wheels only: a missing wheel should fail here, not compile numpy for ten minutes.  No numba,
  # as in Pyodide; xlwings for the decorators main.py uses; the package itself via PYTHONPATH.
  "$python_bin" -m pip install -q --disable-pip-version-check --only-binary=:all: \
    -r "$LITE_VENV/pins.txt" "pytest>=8" "hypothesis>=6.100" "xlwings==0.37.8"
  touch "$stamp"
fi
python_bin=$LITE_VENV/bin/python

export STRATPD_XL_BACKEND=numpy PYTHONPATH="$PWD"
"$python_bin" -c 'import sys, numpy, pandas, scipy, matplotlib, sklearn; print("test-lite-compat:",
  "Python", sys.version.split()[0], "numpy", numpy.__version__, "pandas", pandas.__version__,
  "scipy", scipy.__version__, "matplotlib", matplotlib.__version__, "scikit-learn",
  sklearn.__version__)'
"$python_bin" -m pytest -q -p no:cacheprovider \
  tests/test_xlwings_lite.py tests/test_pyodide_deps.py tests/test_excel_udfs.py \
  tests/test_ribbon.py tests/test_workflow.py tests/test_yes_no.py tests/test_sheet.py \
  tests/test_typing_fast_path.py tests/test_engine_api.py tests/test_engine_accuracy.py \
  tests/test_engine_tree.py tests/test_engine_huge.py tests/test_many_categories.py \
  tests/test_charts.py tests/test_model.py

# The plugin as a workbook gets it: the package's wheel installed (its dependencies are the
# pins above), main.py loaded from outside the checkout, the formulas and script registered.
rm -rf "$LITE_VENV/wheel"
"$DESKTOP_PYTHON" -m pip wheel -q --disable-pip-version-check --no-deps -w "$LITE_VENV/wheel" .
"$python_bin" -m pip install -q --disable-pip-version-check --no-deps --force-reinstall \
  "$LITE_VENV"/wheel/stratpd_xl-*.whl
main_py=$PWD/addin/xlwings_lite/main.py
check=$PWD/tests/pyodide/plugin_check.py
(cd "$LITE_VENV" && env -u PYTHONPATH XLWINGS_ON_SERVER=true \
  XLWINGS_LICENSE_KEY="${XLWINGS_LICENSE_KEY:-noncommercial}" "$PWD/bin/python" "$check" "$main_py")
"$python_bin" -m pip uninstall -q -y stratpd-xl  # the tests above import the checkout's
"$DESKTOP_PYTHON" tests/pyodide/same_numbers.py dump "$LITE_VENV/desktop-cells.json"
"$python_bin" tests/pyodide/same_numbers.py dump "$LITE_VENV/lite-cells.json"
"$python_bin" tests/pyodide/same_numbers.py compare \
  "$LITE_VENV/desktop-cells.json" "$LITE_VENV/lite-cells.json"
