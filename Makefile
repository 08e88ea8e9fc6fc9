# The two commands of the README: `make serve` and `make test`. Only Python 3.11+ is needed.
# `make serve` installs only what running the service needs; `make test` adds the test tools.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The suite runs on one worker process per core, at most four, each test module whole on one worker
# (its live server is shared by its tests), the longest modules first (tests/conftest.py). `make test
# TEST_WORKERS=-n0` runs it in one process.
TEST_WORKERS ?= -n auto --maxprocesses=4 --dist loadfile --no-loadscope-reorder
# Extra arguments for `switchboard serve`, e.g. `make serve ARGS="--port 8001"`.
ARGS ?=

.PHONY: serve test test-slow lint bench screenshots install install-runtime image

serve: $(VENV)/.installed-runtime
	$(BIN)/switchboard serve $(ARGS)

# Every package, type-checked; the layering of docs/architecture.md, held by import-linter (pyproject.toml).
PACKAGES := switchboard http_api mcp_server oauth dashboard tasks service storage platforms kit

test: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/mypy $(PACKAGES)
	$(BIN)/lint-imports
	$(BIN)/python -m pytest $(TEST_WORKERS)

# System tests outside the default run's time budget (`-m slow`: third-party MCP clients, ...).
test-slow: $(VENV)/.installed-test
	$(BIN)/python -m pytest -m slow -n0

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/mypy $(PACKAGES)
	$(BIN)/lint-imports

bench: $(VENV)/.installed-test
	$(BIN)/python bench/run_all.py

# The console's pages at 1280 px from a seeded sandbox, into docs/screenshots/ (needs Chromium).
screenshots: $(VENV)/.installed-test
	$(BIN)/python docs/make_screenshots.py

# The container image (Containerfile), built from Debian's own packages, with no image registry:
# mmdebstrap makes bookworm's minbase system (what bookworm-slim is), podman imports it as the
# base, buildah builds the Containerfile on it (in Docker's format: OCI's has no HEALTHCHECK).
# Needs mmdebstrap, podman and buildah (Debian packages) and root. Where PyPI is reached through
# a TLS-inspecting proxy, PIP_CERT (a CA bundle file, as pip reads it) is lent to the build.
IMAGE ?= localhost/switchboard:latest
IMAGE_BASE ?= localhost/switchboard-base:bookworm
IMAGE_BUILD := build/image
CONTAINERS := CONTAINERS_CONF=$(CURDIR)/$(IMAGE_BUILD)/containers.conf

image:
	mkdir -p $(IMAGE_BUILD)
	printf '[containers]\ndefault_ulimits = []\n' > $(IMAGE_BUILD)/containers.conf
	$(CONTAINERS) podman image exists $(IMAGE_BASE) || { \
	  mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm $(IMAGE_BUILD)/base.tar \
	  && $(CONTAINERS) podman import $(IMAGE_BUILD)/base.tar $(IMAGE_BASE) && rm -f $(IMAGE_BUILD)/base.tar; }
	$(CONTAINERS) buildah bud --quiet --layers --format docker --isolation chroot --build-arg BASE=$(IMAGE_BASE) \
	  $(if $(PIP_CERT),--build-arg PIP_CERT=/run/build-ca.crt --volume $(PIP_CERT):/run/build-ca.crt:ro) \
	  -t $(IMAGE) -f Containerfile .

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
	@# axe-core (npm) for the dashboard's accessibility tests, fetched now so a test run needs no network.
	-$(BIN)/python -m tests.support.axe_core
	touch $(VENV)/.installed-runtime $@
