# The two commands of the README:  `make demo` (main job on bundled data) and `make test`.
# Both create .venv and install the package into it first, so a fresh clone needs nothing else.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench bench-e2e

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

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_engine.py

# End-to-end front ends vs floors; slow (the 1M-row sizes take an hour or more): pass
# BENCH_E2E_ARGS="--quick" for a 10,000-row sanity run.
bench-e2e: $(STAMP)
	$(BIN)/python benchmarks/bench_end_to_end.py $(BENCH_E2E_ARGS)
