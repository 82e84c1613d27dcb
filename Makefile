# Every target installs what it needs first, so each works on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test demo check lint types bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@# The Postgres tests start a real server on 127.0.0.1: install Debian's postgresql when it is missing.
	@command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

# Two workers: the real-CLI tier is CPU-bound on two cores; tests are independent (own repos, DBs, ports).
test: install
	$(BIN)/python -m pytest -q -p no:cacheprovider -n 2

demo: install
	$(BIN)/python -m orchestrator.demo

lint: install
	$(BIN)/ruff check orchestrator agents prompts tests

types: install
	$(BIN)/mypy

check: lint types test

bench: install
	$(BIN)/python -m benchmarks.run

clean:
	rm -rf $(VENV) demo-workspace .pytest_cache .mypy_cache .ruff_cache *.egg-info
