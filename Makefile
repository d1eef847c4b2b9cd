# bigmodel-guide: every target sets up what it needs, then says what it could not do.
#   make serve   build the guide and serve it on http://127.0.0.1:8000
#   make test    lint, type-check and run every test tier (unit, pyodide, site, e2e, webkit)
#   make build   build the static site into site/
#   make bench   measure load and recompute times in headless Chromium
#   make calibrate  refit the speed model's parameters to the published kernel measurements

SHELL := /bin/bash
.DEFAULT_GOAL := help
export NO_MKDOCS_2_WARNING := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

PYTHON ?= python3
# Pyodide's lockfile tool (pyodide-build >= 0.26) needs Python >= 3.12; 3.12 and 3.13
# are checked. PY312=/path/to/python3.x picks one; left empty, the $(TOOLS_VENV) rule
# takes the project venv's own Python if it is >= 3.12, else the first of these that
# really runs (a pyenv shim may exist without its version) and is >= 3.12, oldest first.
PY312 ?=
PY312_CANDIDATES = $$(ls -d $$HOME/.pyenv/versions/3.1[2-9]*/bin/python3 2>/dev/null | sort -V) \
  $$(for v in 12 13 14 15 16 17 18 19; do command -v python3.$$v; done 2>/dev/null) \
  $$(command -v python3 2>/dev/null)
PY312_CHECK := import sys; assert sys.version_info >= (3, 12)
VENV := .venv
TOOLS_VENV := .venv-pyodide
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: help setup serve build test lint unit bench calibrate browser clean

help:
	@echo "make serve   build the guide and serve it on http://$(HOST):$(PORT)"
	@echo "make test    everything: ruff, mypy, unit, pyodide, site, e2e (Chromium) and WebKit tests"
	@echo "make build   build the site into site/"
	@echo "make bench   measure the live runtime in headless Chromium (JSON + table)"
	@echo "make calibrate  refit the kernel and link speeds to calibration/*.json (table)"

$(BIN)/mkdocs: pyproject.toml requirements/constraints.txt
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python >= 3.11 is needed"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -c requirements/constraints.txt -e ".[docs,test]"
	@touch $@

# Where the project venv's Python is >= 3.12, the tool goes into .venv itself ($(TOOLS_VENV)
# is then a link to it), but only while every package the two pin files share (certifi,
# requests, packaging, click, attrs, ...) is pinned alike in both: otherwise installing
# it would move one of .venv's pins (or be refused), so it gets a venv of its own, made
# from that same Python. They agree today; the pins are compared each time this runs.
# (selenium is held at 4.51.0 for this: 4.52+ need a certifi newer than both pin.)
$(TOOLS_VENV)/bin/pyodide: requirements/pyodide-tools.txt | $(BIN)/mkdocs
	@py="$(PY312)"; \
	if [ -n "$$py" ]; then \
	  "$$py" -c '$(PY312_CHECK)' 2>/dev/null || { \
	    echo "ERROR: PY312=$$py is not a Python >= 3.12 that runs (pyodide-build needs one)."; exit 1; }; \
	else \
	  for c in $(BIN)/python $(PY312_CANDIDATES); do \
	    "$$c" -c '$(PY312_CHECK)' 2>/dev/null && { py="$$c"; break; }; \
	  done; \
	fi; \
	if [ -z "$$py" ]; then \
	  echo "ERROR: no Python >= 3.12 found. pyodide-build, which makes the site's pyodide-lock.json,"; \
	  echo "       needs one: install Python 3.12 or 3.13 (e.g. 'pyenv install 3.13', or Debian/Ubuntu's"; \
	  echo "       python3.12 / python3.13 package), or run: make PY312=/path/to/python3.x"; exit 1; fi; \
	echo "Pyodide lockfile tool: using $$("$$py" -c 'import sys, platform; print(sys.executable, "(" + platform.python_version() + ")")')"; \
	shared=$$(grep -hv '^#' requirements/constraints.txt requirements/pyodide-tools.txt | grep '==' \
	  | awk -F'==' '{ n = tolower($$1); gsub(/[-_.]+/, "-", n); if ((n in v) && v[n] != $$2) print n; v[n] = $$2 }'); \
	if [ "$$py" = "$(BIN)/python" ] && [ -z "$$shared" ]; then \
	  echo "  the project venv's own Python: pyodide-build goes into $(VENV), $(TOOLS_VENV) links to it"; \
	  $(BIN)/pip install --quiet -c requirements/constraints.txt -r requirements/pyodide-tools.txt || exit 1; \
	  rm -rf $(TOOLS_VENV) && ln -s $(VENV) $(TOOLS_VENV) || exit 1; \
	else \
	  if [ "$$py" = "$(BIN)/python" ]; then \
	    echo "  in a venv of its own: its pins and .venv's differ for" $$shared; fi; \
	  if [ -L $(TOOLS_VENV) ]; then rm $(TOOLS_VENV); fi; \
	  "$$py" -m venv $(TOOLS_VENV) && $(TOOLS_VENV)/bin/pip install --quiet -r requirements/pyodide-tools.txt || exit 1; \
	fi
	@touch $@

node_modules/pyodide/pyodide.mjs: package.json package-lock.json
	@command -v npm >/dev/null || { echo "ERROR: npm not found: it installs the pinned Pyodide runtime (Node.js >= 18)."; exit 1; }
	npm ci --no-audit --no-fund
	@touch $@

setup: $(BIN)/mkdocs $(TOOLS_VENV)/bin/pyodide node_modules/pyodide/pyodide.mjs

# Debian's chromium for the e2e tests and the benchmark, WebKitGTK for the WebKit tier;
# installed only where missing and only when we may (root). Otherwise the tiers whose
# browser is missing are skipped and say so.
# The WebKit tier (tests/e2e/webkit) needs WebKitGTK's WebDriver and an X server of its
# own (Xvfb; xauth for xvfb-run) and reads the clipboard back with xclip.
BROWSER_PACKAGES := chromium fonts-dejavu-core fonts-wqy-zenhei webkit2gtk-driver xvfb xauth xclip

browser:
	@missing=""; for p in $(BROWSER_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "Installing Debian packages for the browser tests:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null \
	    || echo "WARNING: could not install$$missing: browser tests may be skipped or screenshots lack CJK glyphs."; \
	else echo "WARNING: missing$$missing and cannot install here (needs root + apt-get): the e2e tests are skipped without chromium, the WebKit tests without webkit2gtk-driver, xvfb or xclip."; fi

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

# The unit tier (pure Python, independent tests) on TEST_WORKERS processes (pytest-xdist);
# the pyodide, site and e2e tiers after it in one process, since they share one built
# site and one browser per session.
TEST_WORKERS ?= 2
test: setup browser lint
	$(BIN)/pytest -q -p no:cacheprovider -n $(TEST_WORKERS) tests/unit
	$(BIN)/pytest -q -p no:cacheprovider --ignore=tests/unit

bench: setup browser build
	$(BIN)/python scripts/bench.py

# Prints the table and rewrites calibration/fitted.json, which
# tests/unit/kernels/test_calibration.py reads.
calibrate: setup
	$(BIN)/python scripts/calibrate.py

clean:
	rm -rf site build .pytest_cache .mypy_cache .ruff_cache
