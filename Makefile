# The two commands of the README:  `make demo` (main job on bundled data) and `make test`.
# Both create .venv and install the package into it first, so a fresh clone needs nothing else.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-lite-compat lint bench bench-e2e

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[test]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/stratpd-xl demo

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

# xlwings Lite's Pyodide 0.27.5 (Python 3.12, pandas 2.2, no numba) stood in for by a Python 3.12
# venv with its package versions: the Lite-relevant tests and the formulas' cells against the
# desktop's.  Skips with a message without a Python 3.12.  CI runs it after `make test`.
test-lite-compat: $(STAMP)
	DESKTOP_PYTHON=$(BIN)/python sh tests/pyodide/lite_compat.sh

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_engine.py

# End-to-end front ends vs floors; slow (the 1M-row sizes take an hour or more): pass
# BENCH_E2E_ARGS="--quick" for a 10,000-row sanity run.
bench-e2e: $(STAMP)
	$(BIN)/python benchmarks/bench_end_to_end.py $(BENCH_E2E_ARGS)
