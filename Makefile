# Two entry points for a fresh machine: `make run` (install + main job) and `make test` (install + tests).
PY      ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
RFBENCH_DATA ?= $(abspath ../shared/data)
export RFBENCH_DATA

.PHONY: install run test lint format figures reproduce bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/rfbench pointwise --r 1.5

test: $(STAMP)
	$(BIN)/ruff check rfbench tests benchmarks
	$(BIN)/ruff format --check rfbench tests benchmarks
	$(BIN)/pytest -q

lint: $(STAMP)
	$(BIN)/ruff check rfbench tests benchmarks
	$(BIN)/ruff format --check rfbench tests benchmarks

format: $(STAMP)
	$(BIN)/ruff format rfbench tests benchmarks
	$(BIN)/ruff check --fix rfbench tests benchmarks

figures: $(STAMP)
	@echo "make figures: not implemented yet (issue 5)"; exit 1

reproduce: $(STAMP)
	@echo "make reproduce: not implemented yet (issue 4/5)"; exit 1

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_estimators.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build *.egg-info
