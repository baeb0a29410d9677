#!/bin/sh
# The built wheel as a user gets it: `sh .ci/wheel_check.sh DIST` (after `make wheel`).
# Checks that it is pure Python, that the sdist and the wheel carry the bundled data, then
# installs the wheel into a fresh virtual environment outside the checkout, runs
# `stratpd-xl demo` there and checks that no test tool (pytest) came with it.
set -eu
dist=$(cd "${1:-dist}" && pwd)
python=${PYTHON:-python3}

wheel=$(ls "$dist"/stratpd_xl-*-py3-none-any.whl 2>/dev/null | head -n 1)
[ -n "$wheel" ] || { echo "wheel-check: no py3-none-any wheel in $dist" >&2; exit 1; }
sdist=$(ls "$dist"/stratpd_xl-*.tar.gz | head -n 1)
"$python" - "$wheel" "$sdist" <<'PY'
import sys, tarfile, zipfile
wheel, sdist = sys.argv[1:]
names = zipfile.ZipFile(wheel).namelist()
assert "stratpd_xl/data/diamonds.csv" in names, "the wheel lacks the bundled data"
assert not [n for n in names if n.endswith((".so", ".pyd", ".dylib"))], "the wheel is not pure"
assert not [n for n in names if n.startswith("tests/")], "the wheel carries the tests"
members = tarfile.open(sdist).getnames()
assert any(m.endswith("stratpd_xl/data/diamonds.csv") for m in members), "the sdist lacks the data"
print(f"wheel-check: {wheel.rsplit('/', 1)[-1]} ({len(names)} files) and the sdist carry the data")
PY

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "wheel-check: installing the wheel into a fresh environment ($work/venv)"
"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --disable-pip-version-check --progress-bar off "$wheel"
if "$work/venv/bin/python" -c "import pytest" 2>/dev/null; then
  echo "wheel-check: installing the wheel pulled in pytest" >&2
  exit 1
fi
cd "$work"
"$work/venv/bin/stratpd-xl" demo
test -s "$work/stratpd-demo/diamonds-report.xlsx"
test -s "$work/stratpd-demo/diamonds.csv"
echo "wheel-check: the wheel installs and runs the demo; no test tools came with it"
