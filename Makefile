# The two set-up commands of the README: `make lab` and `make test`. Everything else is a helper.
# Python may cache bytecode here whatever the calling shell says: the suite starts hundreds of
# interpreters (kernels, servers, subprocesses) that would otherwise compile workbench anew.
unexport PYTHONDONTWRITEBYTECODE
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)
# `make lab PORT=8890` serves on another port; a port in use is an error, never another port.
PORT ?= 8888

NODE_DIR := .node
NODE_SPEC := tests/node

.PHONY: lab test test-steps check flakes soak bench chromium node-tools lint typecheck pytest \
	clean docs docs-serve dist

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# One stamp per extra, rebuilt when pyproject.toml changes. No bytecode is compiled for every
# file installed (a third of the install's time, for JupyterLab's and mkdocs' dependencies): what
# runs compiles what it imports, once, as any interpreter does.
$(VENV)/.installed-%: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-compile -e '.[$*]'
	touch $@

# JupyterLab's settings, the same file Binder's postBuild installs (binder/overrides.json): widget
# state saved with each notebook, so other libraries' widgets draw when a notebook is reopened
# (workbench's own views are saved as static HTML); no "get notified about Jupyter news?" toast.
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json
$(LAB_SETTINGS): binder/overrides.json | $(BIN)/python
	mkdir -p $(dir $@) && cp $< $@

# The lab's own user settings (what a person changes in it is kept here, for this checkout),
# starting with the Help menu's workbench entries, which open pages of docs/ (so the server's
# root is the repository's, as on Binder, and the page opens on notebooks/). Copied once: the
# person's later changes stay.
LAB_USER_SETTINGS := .workbench/lab/user-settings
HELP_MENU := $(LAB_USER_SETTINGS)/@jupyterlab/mainmenu-extension/plugin.jupyterlab-settings
$(HELP_MENU): | binder/user-settings/@jupyterlab/mainmenu-extension/plugin.jupyterlab-settings
	mkdir -p $(dir $@) && cp binder/user-settings/@jupyterlab/mainmenu-extension/$(notdir $@) $@

# Workbench's Jupyter server extension: a saved notebook keeps each workbench view as its static
# HTML. A wheel install brings this file itself; an editable one (as here) does not.
SERVER_CONFIG := $(VENV)/etc/jupyter/jupyter_server_config.d/workbench.json
$(SERVER_CONFIG): jupyter-config/jupyter_server_config.d/workbench.json | $(BIN)/python
	mkdir -p $(dir $@) && cp $< $@

# scripts/serve_lab.py says the URL (token from JUPYTER_TOKEN, or a fresh one) once the server
# answers there, and nothing when the port is taken.
# Notebook 06 meets MCP servers nobody here wrote (the reference servers, pinned in tests/node/):
# installed with the lab when npm is here; without it the notebook shows workbench's own demo
# server in their place, and says so.
LAB_NODE := $(if $(shell command -v npm),node-tools,)
lab: $(VENV)/.installed-lab $(LAB_SETTINGS) $(HELP_MENU) $(SERVER_CONFIG) $(LAB_NODE)
	@$(if $(LAB_NODE),,echo "npm is missing: notebook 06 shows workbench's demo server in place \
		of the reference MCP servers (install Node.js 20+ with npm, then make lab again)";)
	@JUPYTERLAB_SETTINGS_DIR=$(LAB_USER_SETTINGS) $(BIN)/python scripts/serve_lab.py $(PORT) \
		notebooks $(ROOT_FLAG)

# Everything, as CI and a newcomer run it; its wall and CPU time printed at its end.
# What the tests need (chromium, the node tools, the venv) is installed side by side.
test:
	@$(PYTHON) scripts/timed.py "make test" $(MAKE) --no-print-directory -j3 test-steps

# The types are checked while the tests run (much of the suite waits on kernels, browsers and
# subprocesses, so mypy's half minute of CPU fits beside it); either failing fails the run.
test-steps: chromium node-tools $(VENV)/.installed-test
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory -j2 typecheck pytest

# The quick loop while working: lint, types and the unit tests, leaving out every test that
# needs a Jupyter kernel, a browser, a fresh environment from the package index, or minutes
# (the markers of pyproject.toml). `make test` before pushing runs them all.
CHECK_WORKERS ?= 2
check: $(VENV)/.installed-test
	@$(PYTHON) scripts/timed.py "make check" $(MAKE) --no-print-directory lint typecheck \
		pytest PYTEST_SELECT='-m "not (browser or kernel or install or slow)"' \
		TEST_WORKERS=$(CHECK_WORKERS)

# The timing-sensitive tests (runtime, history, browser) FLAKE_RUNS times in a row under a CPU
# hog on every core, as `make test` runs them; each test's failures are counted and printed.
FLAKE_RUNS ?= 5
flakes: chromium node-tools $(VENV)/.installed-test
	$(BIN)/python -m scripts.flakes --runs $(FLAKE_RUNS) --workers $(TEST_WORKERS) \
		tests/runtime tests/history tests/browser

# The browser tests drive Debian's /usr/bin/chromium; Playwright's browser download is never used.
chromium:
	@test -x /usr/bin/chromium || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

# MCP clients and servers nobody here wrote (the MCP Inspector CLI, the reference servers), pinned
# by tests/node/package-lock.json and installed into .node/ for the tests; needs Node 20+ and npm.
# Reinstalled only when the pins change.
node-tools: $(NODE_DIR)/.installed

$(NODE_DIR)/.installed: $(NODE_SPEC)/package.json $(NODE_SPEC)/package-lock.json
	@command -v npm >/dev/null || { echo "npm is missing: install Node.js 20+ with npm"; exit 1; }
	mkdir -p $(NODE_DIR)
	cp $(NODE_SPEC)/package.json $(NODE_SPEC)/package-lock.json $(NODE_DIR)/
	cd $(NODE_DIR) && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	touch $@

# The docs site (mkdocs.yml): the notebooks executed once into docs/tutorials/ (kept in .cache/
# until a notebook or the package changes), then built strictly into site/. `make docs-serve
# PORT=8000` serves it on 127.0.0.1 and rebuilds it on every change.
DOCS_PORT = $(if $(filter command line environment,$(origin PORT)),$(PORT),8000)

docs: $(VENV)/.installed-docs
	$(BIN)/python -m scripts.executed_notebooks docs/tutorials
	$(BIN)/mkdocs build --strict --site-dir site

docs-serve: $(VENV)/.installed-docs
	$(BIN)/python -m scripts.executed_notebooks docs/tutorials
	$(BIN)/mkdocs serve --strict --dev-addr 127.0.0.1:$(DOCS_PORT)

# The sdist and the wheel of `tool-workbench` into dist/, checked as the package index would.
dist: $(VENV)/.installed-docs
	rm -rf dist
	$(BIN)/python -m build --outdir dist .
	$(BIN)/twine check --strict dist/*

# The history's promises held longer than `make test` holds them: the torture test (several
# processes, kill -9, a held lock, a full disk) for SOAK_SECONDS, and the salvage matrix on
# SOAK_LAYOUTS histories built afresh, and the history's fuzz with SOAK_CALLS awkward calls. Each
# prints its seed or keeps its failing layout in test-output/.
SOAK_SECONDS ?= 300
SOAK_LAYOUTS ?= 200
SOAK_CALLS ?= 10000
soak: $(VENV)/.installed-test
	WORKBENCH_TORTURE_SECONDS=$(SOAK_SECONDS) $(BIN)/python -m pytest -s \
		--timeout=$$(( $(SOAK_SECONDS) + 600 )) tests/history/test_torture.py
	WORKBENCH_SALVAGE_LAYOUTS=$(SOAK_LAYOUTS) $(BIN)/python -m pytest \
		--timeout=$$(( $(SOAK_LAYOUTS) * 60 + 300 )) tests/history/test_salvage.py -k fresh_layouts
	WORKBENCH_FUZZ_CALLS=$(SOAK_CALLS) $(BIN)/python -m pytest \
		--timeout=$$(( $(SOAK_CALLS) / 10 + 600 )) tests/history/test_history_fuzz.py

# Every benchmark in one run (ratios against the alternatives); writes benchmarks/results.md.
bench: $(VENV)/.installed-bench
	$(BIN)/python -m benchmarks

lint:
	$(BIN)/ruff check workbench tests benchmarks scripts
	$(BIN)/ruff format --check workbench tests benchmarks scripts

typecheck:
	$(BIN)/mypy

# Three processes on two cores: much of the suite waits (kernels, browsers, servers,
# subprocesses). Each test is in a unit (an xdist_group: its file, or the browser tests, the
# packaging tests, the notebook readers) that one process runs whole, with its fixtures; the
# slowest units are collected first and handed out in that order (tests/conftest.py).
TEST_WORKERS ?= 3
PYTEST_SELECT ?=
pytest:
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder \
		--durations=40 $(PYTEST_SELECT)

clean:
	rm -rf $(VENV) $(NODE_DIR) .workbench .pytest_cache .mypy_cache .ruff_cache .cache site dist
