# The two commands of the README: `make serve` and `make test`. Only Python 3.11+ is needed.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: serve test lint bench install

serve: $(VENV)/.installed
	$(BIN)/switchboard serve

test: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/mypy service platforms
	$(BIN)/python -m pytest

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/mypy service platforms

bench: $(VENV)/.installed
	$(BIN)/python bench/run_all.py

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@
