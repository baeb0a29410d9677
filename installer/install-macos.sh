#!/usr/bin/env bash
# Install stratpd-xl for Excel on macOS: finds Python 3.11+ and runs
# "python -m stratpd_xl.excel.install", where every step lives (and is tested).
#
#   installer/install-macos.sh [--dry-run] [--uninstall] [--venv DIR] [--package WHEEL-OR-URL]
#                              [--from-pypi] [--use-current]
#
# Python is $STRATPD_XL_PYTHON if set, else the activated conda environment's ($CONDA_PREFIX),
# else python3 on PATH. Options go to the Python installer
# unchanged; "python3 -m stratpd_xl.excel.install --help" lists them.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${STRATPD_XL_PYTHON:-}"
if [ -z "$PYTHON" ] && [ -n "${CONDA_PREFIX:-}" ] && [ -x "$CONDA_PREFIX/bin/python" ]; then
  PYTHON="$CONDA_PREFIX/bin/python"  # the installer uses that environment as its venv
fi
PYTHON="${PYTHON:-python3}"

if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "install-macos.sh: '$PYTHON' is not Python 3.11 or newer: install it from python.org" \
       "or set STRATPD_XL_PYTHON." >&2
  exit 1
fi

# The installer uses only the standard library, so it runs from this folder before installing.
PYTHONPATH="$ROOT" exec "$PYTHON" -m stratpd_xl.excel.install "$@"
