# Two entry points, as the README promises: `make example` runs the gate on examples/,
# `make test` runs the test suite. Both create the virtualenv on first use.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: example test lint bench

$(BIN)/agentv-gate: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

example: $(BIN)/agentv-gate
	$(BIN)/agentv-gate run examples/evals --targets examples/.agentv/targets.yaml --output-dir .agentv-gate

test: $(BIN)/agentv-gate
	$(BIN)/python -m pytest

lint: $(BIN)/agentv-gate
	$(BIN)/ruff check agentv_gate tests
	$(BIN)/mypy agentv_gate

bench: $(BIN)/agentv-gate
	$(BIN)/python bench/run_bench.py
