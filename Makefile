# The two commands of the README: `make serve` and `make test`. Only Python 3.11+ is needed.
# `make serve` installs only what running the service needs; `make test` adds the test tools.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The suite runs on one worker process per core, at most four, each test module whole on one worker
# (its live server is shared by its tests). `make test TEST_WORKERS=-n0` runs it in one process.
TEST_WORKERS ?= -n auto --maxprocesses=4 --dist loadfile
# Extra arguments for `switchboard serve`, e.g. `make serve ARGS="--port 8001"`.
ARGS ?=

.PHONY: serve test lint bench screenshots install install-runtime

serve: $(VENV)/.installed-runtime
	$(BIN)/switchboard serve $(ARGS)

# Every package, type-checked; the layering of DESIGN.md, held by import-linter (pyproject.toml).
PACKAGES := switchboard http_api mcp_server oauth dashboard tasks service storage platforms kit

test: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/mypy $(PACKAGES)
	$(BIN)/lint-imports
	$(BIN)/python -m pytest $(TEST_WORKERS)

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/mypy $(PACKAGES)
	$(BIN)/lint-imports

bench: $(VENV)/.installed-test
	$(BIN)/python bench/run_all.py

# The console's pages at 1280 px from a seeded sandbox, into docs/screenshots/ (needs Chromium).
screenshots: $(VENV)/.installed-test
	$(BIN)/python docs/make_screenshots.py

install: $(VENV)/.installed-test

install-runtime: $(VENV)/.installed-runtime

$(VENV)/.installed-runtime: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(VENV)/.installed-runtime $@
