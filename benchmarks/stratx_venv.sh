#!/usr/bin/env bash
# A throw-away virtual environment holding the reference implementation, stratx 0.5, so the
# benchmarks can run it beside stratpd-xl on the same data in the same run.  It is not a
# dependency of stratpd-xl and nothing imports it; delete the folder when done.
#
#   bash benchmarks/stratx_venv.sh [DIR]        # default DIR: $TMPDIR/stratx-venv
#   python benchmarks/bench_engine.py --stratx "$(bash benchmarks/stratx_venv.sh)"
#
# Prints the path of the environment's python as its last line (and only that on stdout).
# stratx 0.5 uses np.float / np.int, removed in numpy 1.24, hence the pin; with it its compute
# functions (stratx.partdep.partial_dependence, cat_partial_dependence) run on Python 3.11.
# Its categorical plotting needs an old matplotlib; the benchmarks do not call it.
set -euo pipefail

dir=${1:-${TMPDIR:-/tmp}/stratx-venv}
python=${PYTHON:-python3}

if "$dir/bin/python" -c "import stratx" >/dev/null 2>&1; then
  echo "$dir/bin/python"
  exit 0
fi
echo "stratx_venv: creating $dir with stratx 0.5 and numpy<1.24 (about a minute)" >&2
"$python" -m venv "$dir"
"$dir/bin/python" -m pip install --disable-pip-version-check --upgrade pip >&2
"$dir/bin/python" -m pip install --disable-pip-version-check "stratx==0.5" "numpy<1.24" >&2
"$dir/bin/python" -c "import stratx" >&2
echo "$dir/bin/python"
