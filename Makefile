# Every target installs what it needs first, so each works on a fresh machine.
# Aegra (the worker engine, `autobuild serve`) needs Python >= 3.12: python3.12 from PATH (a pyenv shim counts),
# else pyenv's newest 3.12; one environment for the CLI, the workers and the tests.
PYTHON ?= $(shell for c in python3.12 python3 $$HOME/.pyenv/versions/3.12*/bin/python3.12; do \
	$$c -c 'import sys; assert sys.version_info >= (3, 12)' >/dev/null 2>&1 && { echo $$c; break; }; done)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
REAL_HISTORY := $(VENV)/.real-history
DOCS_STAMP := $(VENV)/.installed-docs

.PHONY: install install-demo install-bench test test-heavy test-workers demo docs docs-graphs check lint types bench clean

# What the tests need and nothing more: the real-history bench's releases (90 archives from three registries) are
# fetched by `make install-bench`, which `make bench` and `make test-heavy` run; `make test`'s smoke test of that
# bench reads the few archives it needs from benchmarks/real_history/smoke/, kept in the tree.
install: $(STAMP)

install-bench: $(REAL_HISTORY)

$(STAMP): pyproject.toml
	@# The Postgres tests start a real server on 127.0.0.1: install Debian's postgresql when it is missing.
	@command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }
	@# The gate's Go tests run a real `go test` (offline: no module downloads): install Debian's golang-go.
	@command -v go >/dev/null 2>&1 || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq golang-go >/dev/null; }
	@# The layout tests check a repo whose Git LFS objects are missing: Debian's git-lfs when it is missing.
	@command -v git-lfs >/dev/null 2>&1 || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq git-lfs >/dev/null; }
	@# The gate, setup and agents' Bash run sandboxed: bubblewrap, and socat for Claude Code's sandbox network proxy.
	@command -v bwrap >/dev/null 2>&1 && command -v socat >/dev/null 2>&1 || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap socat >/dev/null; }
	@# The workers' tests start a real Redis (Aegra's job queue) on 127.0.0.1: Debian's redis-server when it is missing.
	@command -v redis-server >/dev/null 2>&1 || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; }
	@# The pictures' tests open the HTML report and `graph --format svg|png` in a headless Chromium: Debian's chromium.
	@command -v chromium >/dev/null 2>&1 || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
	@# The live view's heavy tests run the CLI in a real terminal at 80 and 120 columns: Debian's tmux when missing.
	@command -v tmux >/dev/null 2>&1 || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null; }
	@# The shell completion's tests source the zsh script in a real zsh: Debian's zsh when missing.
	@command -v zsh >/dev/null 2>&1 || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zsh >/dev/null; }
	@test -n "$(PYTHON)" || { echo "error: Python >= 3.12 is needed (Aegra): install python3.12 or set PYTHON=" >&2; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@# Our own modules' bytecode, as a pip-installed AutoBuild carries it: an editable install has none, and
	@# with PYTHONDONTWRITEBYTECODE set (as on CI) every `autobuild` process would compile ~150 modules again.
	$(BIN)/python -m compileall -q orchestrator agents prompts benchmarks >/dev/null
	@# The gate's jest, vitest and mocha matrix, and yarn v1's and pnpm's script runners (make test-heavy, the bench),
	@# run the real tools: installed from the npm registry into .venv/js (majors pinned as the captured fixtures);
	@# offline afterwards; absent, they skip.
	@command -v npm >/dev/null 2>&1 && mkdir -p $(VENV)/js && cd $(VENV)/js && \
		{ test -f package.json || echo '{"name": "autobuild-js-runners", "private": true}' >package.json; } && \
		npm install --no-audit --no-fund --silent jest@30 vitest@4 mocha@12 yarn@1 pnpm@9 >/dev/null 2>&1 || \
		echo "note: jest, vitest, mocha, yarn and pnpm could not be installed into $(VENV)/js: their heavy tests skip" >&2
	touch $(STAMP) $(DEMO_STAMP)

# The real-history bench's releases (benchmarks/real_history/manifest.json), fetched once from the registries by
# pip and npm, and the Go and Rust ones from Debian's archive by apt-get under a private configuration in
# benchmarks/real_history/releases/apt (the machine's apt untouched), checked by sha256, so the bench and the heavy
# tests that replay it run offline.
$(REAL_HISTORY): $(STAMP) benchmarks/real_history/manifest.json benchmarks/real_history/releases.py \
		benchmarks/real_history/debian.py
	$(BIN)/python -m benchmarks.real_history.releases
	touch $(REAL_HISTORY)

# What the demo runs and nothing more: AutoBuild (its wheel bundles the Claude Code CLI) and pytest, which the
# sample repo's gate runs; bubblewrap and socat for the sandbox where apt can install them (without them the demo
# still runs, and says the sandbox is off). No Postgres, Go, Redis or test stack: `make install` brings those.
install-demo: $(DEMO_STAMP)

$(DEMO_STAMP): pyproject.toml
	@command -v bwrap >/dev/null 2>&1 && command -v socat >/dev/null 2>&1 || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap socat >/dev/null; } || \
		echo "note: bubblewrap/socat could not be installed: the demo runs without the sandbox" >&2
	@test -n "$(PYTHON)" || { echo "error: Python >= 3.12 is needed: install python3.12 or set PYTHON=" >&2; exit 2; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[demo]'
	$(BIN)/python -m compileall -q orchestrator agents prompts >/dev/null
	touch $(DEMO_STAMP)

# Four workers on two cores: most of a real-CLI test's time is waiting (model latency, a pause running out, a
# killed run's restart), so two workers left the CPUs idle (7:10 against 4:25 measured). Tests are
# independent (own repos, DBs, ports) and assert no timings. worksteal: a worker that finishes early takes queued
# tests from a busy one, so a slow real-CLI test at the end of a chunk doesn't leave three workers idle.
test: install
	$(BIN)/python -m pytest -q -p no:cacheprovider -n 4 --dist worksteal -m "not heavy and not workers"

# The resilience tests that kill, pause and damage on purpose (kill -9 mid-run and mid-land, usage-limit pauses,
# damaged checkpoint stores), the longer end-to-end runs of the real CLI (conflict turns, the planner, tracing,
# clean, the served graph, a terminal question, the key never written) and the pip-installing or LFS-fetching
# safety cases: slow by nature, so `make test` stays under 5 minutes; CI runs both.
test-heavy: install $(REAL_HISTORY)
	$(BIN)/python -m pytest -q -p no:cacheprovider -n 4 --dist worksteal -m "heavy and not workers"

# Workers (`autobuild serve`, Aegra): real Postgres, Redis and two worker processes per test, the real CLI against
# the scripted model. Two pytest workers: each test already runs two servers.
test-workers: install
	$(BIN)/python -m pytest -q -p no:cacheprovider -n 2 -m workers tests/workers

demo: install-demo
	$(BIN)/python -m orchestrator.cli.demo

# The docs site (docs/, mkdocs.yml) into site/, offline; strict: a broken link between pages fails the build.
# Only the docs' own tools (docs/requirements.txt), nothing of the test stack.
docs: $(DOCS_STAMP)
	$(BIN)/mkdocs build --strict --site-dir site

$(DOCS_STAMP): docs/requirements.txt
	@test -n "$(PYTHON)" || { echo "error: Python >= 3.12 is needed: install python3.12 or set PYTHON=" >&2; exit 2; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q -r docs/requirements.txt
	touch $(DOCS_STAMP)

# docs/architecture.md's generated parts (the layers, the feature and task graphs as Mermaid), drawn again from the
# code; tests/unit/test_architecture_doc.py fails until this is run after a change to them.
docs-graphs: install
	$(BIN)/python -m tests.architecture_doc

lint: install
	$(BIN)/ruff check orchestrator agents prompts tests benchmarks

types: install
	$(BIN)/mypy

check: lint types test

bench: install $(REAL_HISTORY)
	$(BIN)/python -m benchmarks.run

clean:
	rm -rf $(VENV) demo-workspace site .pytest_cache .mypy_cache .ruff_cache *.egg-info
