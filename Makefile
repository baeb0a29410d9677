# The two commands of the README: `make demo` (the main job on bundled data) and `make test`.
# Both create .venv and install what they need into it first, so a fresh clone needs nothing
# else: `make demo` the package and its runtime libraries only, `make test` the test tools too.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip --disable-pip-version-check
# Stamps: the runtime (make demo) and the runtime plus test tools (make test, developers).
RUNTIME := $(VENV)/.runtime
STAMP   := $(VENV)/.installed

.PHONY: demo test test-lite-compat bench bench-e2e wheel wheel-check

$(RUNTIME): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "make: stratpd-xl needs Python 3.11 or newer; $(PYTHON) is $$($(PYTHON) --version 2>&1) (give another with PYTHON=python3.12)"; exit 1; }
	@echo "make: creating $(VENV) with $$($(PYTHON) --version)"
	$(PYTHON) -m venv $(VENV)
	@echo "make: installing stratpd-xl and its runtime libraries into $(VENV)"
	@echo "      (numpy, pandas, scipy, numba, matplotlib, scikit-learn, xlsxwriter, python-calamine,"
	@echo "      xlwings: about 650 MB installed, 3-5 minutes on a fresh machine; pip names each package"
	@echo "      as it goes)"
	$(PIP) install --progress-bar off -e .
	touch $@

$(STAMP): $(RUNTIME) pyproject.toml
	@echo "make: adding the test tools (pytest, pytest-xdist, pytest-cov, hypothesis, ruff, oletools,"
	@echo "      openpyxl, odfpy, psutil, pyarrow, dask, tree-sitter-powershell)"
	$(PIP) install --progress-bar off -e ".[test]"
	touch $@

demo: $(RUNTIME)
	$(BIN)/stratpd-xl demo

# One test process per core (pytest-xdist) when there is more than one; each test file stays in
# one process (its module fixtures, e.g. one LibreOffice per file, start once), the longest files
# first (tests/conftest.py's LONGEST_FIRST; xdist would otherwise send files with few tests
# last, however slow).  Line coverage
# of the package is printed at the end; its data file goes to a temporary folder.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
PARALLEL := $(if $(filter-out 0 1,$(JOBS)),-n $(JOBS) --dist loadfile --no-loadscope-reorder,)

test: $(STAMP)
	$(BIN)/ruff check .
	cov=$$(mktemp -d) && trap 'rm -rf "$$cov"' EXIT && \
	  COVERAGE_FILE="$$cov/coverage" $(BIN)/python -m pytest $(PARALLEL) --durations=25 \
	    --cov=stratpd_xl --cov-report=term

# xlwings Lite's Pyodide 0.27.5 (Python 3.12, pandas 2.2, no numba) stood in for by a Python 3.12
# venv with its package versions: the Lite-relevant tests and the formulas' cells against the
# desktop's.  Skips with a message without a Python 3.12.  CI runs it after `make test`.
test-lite-compat: $(STAMP)
	DESKTOP_PYTHON=$(BIN)/python sh tests/pyodide/lite_compat.sh

# The wheel and sdist into dist/ (docs/release.md).
wheel: $(RUNTIME)
	$(PIP) install --progress-bar off "build>=1.2" "twine>=5"
	rm -rf dist
	$(BIN)/python -m build --outdir dist .

# What a user gets from the wheel: metadata checked, installed into a fresh venv (runtime
# only), `stratpd-xl demo` run from there, no test tools pulled in.  CI runs it.
wheel-check: wheel
	$(BIN)/python -m twine check --strict dist/*
	sh .ci/wheel_check.sh dist

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_engine.py
	$(BIN)/python benchmarks/bench_issue32.py

# End-to-end front ends vs floors; slow (the 1M-row sizes take an hour or more): pass
# BENCH_E2E_ARGS="--quick" for a 10,000-row sanity run.
bench-e2e: $(STAMP)
	$(BIN)/python benchmarks/bench_end_to_end.py $(BENCH_E2E_ARGS)
