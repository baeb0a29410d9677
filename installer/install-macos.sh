#!/usr/bin/env bash
# Install stratpd-xl for Excel on macOS: a virtual environment with the package, the add-in
# (stratpd_xl.xlam, "StratPD" ribbon tab) and the add-in's config file.
# Safe to run again: an existing venv is reused, the package and add-in are updated, and the
# config file keeps any settings that are not ours.
#
#   installer/install-macos.sh [--dry-run] [--venv DIR] [--python PYTHON] [--from-pypi]
#
# --dry-run     print every step, change nothing (also what the config file would contain)
# --venv DIR    where the virtual environment goes (default: ~/.stratpd-xl/venv)
# --python PY   Python 3.11+ used to create the venv (default: python3)
# --from-pypi   install "stratpd-xl" from PyPI instead of the folder this script sits in
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${HOME}/.stratpd-xl/venv"
PYTHON="python3"
DRY_RUN=0
FROM_PYPI=0

while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY_RUN=1 ;;
    --venv) VENV="$2"; shift ;;
    --python) PYTHON="$2"; shift ;;
    --from-pypi) FROM_PYPI=1 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "install-macos.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

ADDIN="${ROOT}/addin/stratpd_xl.xlam"
CONFIG_TOOL="${ROOT}/stratpd_xl/excel/config.py"
VENV_PY="${VENV}/bin/python"
if [ "$FROM_PYPI" -eq 1 ]; then PACKAGE="stratpd-xl"; else PACKAGE="$ROOT"; fi

step() { echo "==> $*"; }
run() {
  # Print the command as it would be typed, then run it unless this is a dry run.
  printf '    $'; printf ' %q' "$@"; printf '\n'
  if [ "$DRY_RUN" -eq 0 ]; then "$@"; fi
}

[ -f "$ADDIN" ] || { echo "missing $ADDIN: run this script from the stratpd-xl folder" >&2; exit 1; }
[ -f "$CONFIG_TOOL" ] || { echo "missing $CONFIG_TOOL" >&2; exit 1; }
if [ "$DRY_RUN" -eq 1 ]; then echo "Dry run: nothing is changed."; fi

step "1/4 Python environment ${VENV}"
if [ -x "$VENV_PY" ]; then
  echo "    exists, reused"
else
  if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
    echo "install-macos.sh: '$PYTHON' is not Python 3.11 or newer; install it (python.org)" \
         "or name one with --python" >&2
    exit 1
  fi
  run "$PYTHON" -m venv "$VENV"
fi

step "2/4 Install the package (${PACKAGE})"
run "$VENV_PY" -m pip install --quiet --upgrade pip
run "$VENV_PY" -m pip install --quiet --upgrade "$PACKAGE"

step "3/4 Install the add-in into Excel (Excel may open briefly; quit it with Cmd-Q afterwards)"
# xlwings copies the .xlam into Excel's startup folder and installs its AppleScript helper.
run "${VENV}/bin/xlwings" addin install -f "$ADDIN"
if [ "$DRY_RUN" -eq 0 ]; then
  # "xlwings addin install" reports failures but exits 0; ask where the add-in is instead.
  status_out="$("${VENV}/bin/xlwings" addin status -f "$ADDIN")"
  case "$status_out" in
    *"is installed"*) echo "    ${status_out%%$'\n'*}" ;;
    *) echo "install-macos.sh: the add-in was not installed: ${status_out}" >&2
       echo "Quit Excel (Cmd-Q) and run this script again." >&2
       exit 1 ;;
  esac
fi

step "4/4 Add-in config: interpreter and formula module"
CONFIG_PY="$VENV_PY"
if [ "$DRY_RUN" -eq 1 ] && [ ! -x "$VENV_PY" ]; then CONFIG_PY="$PYTHON"; fi
config_args=(write --platform darwin --interpreter "$VENV_PY")
if [ "$DRY_RUN" -eq 1 ]; then config_args+=(--dry-run); fi
# Runs even in a dry run: with --dry-run it only prints the file it would write.
"$CONFIG_PY" "$CONFIG_TOOL" "${config_args[@]}" | sed 's/^/    /'

if [ "$DRY_RUN" -eq 1 ]; then echo "Dry run done: nothing was changed."; exit 0; fi
echo "Done. Restart Excel: the ribbon has a StratPD tab; select a table, click Analyse selection."
echo "Cell formulas (=STRATPD, =STRATIMPACT) need Excel on Windows; on macOS use the ribbon button."
