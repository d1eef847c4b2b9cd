# bigmodel-guide: every target sets up what it needs, then says what it could not do.
#   make serve   build the guide and serve it on http://127.0.0.1:8000
#   make test    lint, type-check and run every test tier (unit, pyodide, site, e2e)
#   make build   build the static site into site/
#   make bench   measure load and recompute times in headless Chromium
#   make calibrate  refit the speed model's parameters to the published kernel measurements

SHELL := /bin/bash
.DEFAULT_GOAL := help
export NO_MKDOCS_2_WARNING := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

PYTHON ?= python3
# The first Python 3.12 that really runs (a pyenv shim may exist without the version).
PY312 ?= $(shell for c in $$(ls -d $$HOME/.pyenv/versions/3.12*/bin/python3.12 2>/dev/null) $$(command -v python3.12 2>/dev/null); do "$$c" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null && { echo "$$c"; break; }; done)
VENV := .venv
TOOLS_VENV := .venv-pyodide
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: help setup serve build test lint unit bench calibrate browser clean

help:
	@echo "make serve   build the guide and serve it on http://$(HOST):$(PORT)"
	@echo "make test    everything: ruff, mypy, unit, pyodide, site and e2e tests"
	@echo "make build   build the site into site/"
	@echo "make bench   measure the live runtime in headless Chromium (JSON + table)"
	@echo "make calibrate  refit the kernel and link speeds to calibration/*.json (table)"

$(BIN)/mkdocs: pyproject.toml requirements/constraints.txt
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python >= 3.11 is needed"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -c requirements/constraints.txt -e ".[docs,test]"
	@touch $@

$(TOOLS_VENV)/bin/pyodide: requirements/pyodide-tools.txt
	@if [ -z "$(PY312)" ]; then \
	  echo "ERROR: Python 3.12 not found (pyodide-build, which makes the site's pyodide-lock.json, needs it)."; \
	  echo "       Install it (e.g. 'pyenv install 3.12') or run: make PY312=/path/to/python3.12"; exit 1; fi
	$(PY312) -m venv $(TOOLS_VENV)
	$(TOOLS_VENV)/bin/pip install --quiet -r requirements/pyodide-tools.txt
	@touch $@

node_modules/pyodide/pyodide.mjs: package.json package-lock.json
	@command -v npm >/dev/null || { echo "ERROR: npm not found: it installs the pinned Pyodide runtime (Node.js >= 18)."; exit 1; }
	npm ci --no-audit --no-fund
	@touch $@

setup: $(BIN)/mkdocs $(TOOLS_VENV)/bin/pyodide node_modules/pyodide/pyodide.mjs

# Debian's chromium for the e2e tests and the benchmark; installed only where missing
# and only when we may (root). Otherwise the e2e tier is skipped and says so.
BROWSER_PACKAGES := chromium fonts-dejavu-core fonts-wqy-zenhei

browser:
	@missing=""; for p in $(BROWSER_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "Installing Debian packages for the browser tests:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null \
	    || echo "WARNING: could not install$$missing: browser tests may be skipped or screenshots lack CJK glyphs."; \
	else echo "WARNING: missing$$missing and cannot install here (needs root + apt-get): the e2e tests are skipped without chromium."; fi

build: setup
	$(BIN)/mkdocs build --strict

serve: build
	@echo "Serving the guide on http://$(HOST):$(PORT) (Ctrl-C to stop)"
	@# No live-reload: it injects an inline script, which the site's CSP forbids.
	SITE_URL="$${SITE_URL:-http://$(HOST):$(PORT)/}" $(BIN)/mkdocs serve --strict --no-livereload --dev-addr $(HOST):$(PORT)

lint: setup
	$(BIN)/ruff check calculators bigmodel_guide published_checks tests scripts
	$(BIN)/mypy

unit: setup
	$(BIN)/pytest tests/unit -q

test: setup browser lint
	$(BIN)/pytest -q -p no:cacheprovider

bench: setup browser build
	$(BIN)/python scripts/bench.py

# Prints the table and rewrites calibration/fitted.json, which
# tests/unit/kernels/test_calibration.py reads.
calibrate: setup
	$(BIN)/python scripts/calibrate.py

clean:
	rm -rf site build .pytest_cache .mypy_cache .ruff_cache
