"""How the gate gets test ids out of runners it does not control, through the environment they read (the same
inside `make test`, `npm test`, tox or nox when they pass it on): pytest writes JUnit (PYTEST_ADDOPTS) and which
files each test read (its plugin, gate/observe/reads.py), node's test runner TAP on stdout and JUnit to a file
(NODE_OPTIONS), jest, vitest and mocha a JSON report each into a folder of ours (a NODE_OPTIONS preload adds the
runner's own reporter option when it sees one start), `go test` runs verbose (GOFLAGS) through a `go` ahead of the
real one on PATH that runs it as `go test -json` and puts its events on the gate's channel
(runners/shim/autobuild_go.py), unittest runs under a result-recording shim (a sitecustomize on PYTHONPATH), and
`cargo test` finds a `cargo` ahead of the real one on PATH that adds `--no-fail-fast`, so every test binary runs
on the base and on each task; `ctest` (3.21 and later) finds one that adds `--output-junit`, a report per call, so
its tests are named."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from orchestrator.processes import run_async

SHIM = Path(__file__).resolve().parent / "runners" / "shim"
NODE_REPORTER = "autobuild_node_reporter.mjs"
JS_PRELOAD = "autobuild_js_preload.cjs"
GO_SHIM = "autobuild_go.py"
_CARGO = """#!/bin/sh
# AutoBuild's gate: `cargo test` without fail-fast, so base and task runs see the same tests; an overlay's run
# restricted to the overlaid targets (AUTOBUILD_CARGO_TEST_ARGS: `--test <target>`).
real="$AUTOBUILD_REAL_CARGO"
toolchain=""
case "$1" in +*) toolchain="$1"; shift;; esac
if [ "$1" = test ]; then
  case " $* " in
    *" --no-fail-fast "*) ;;
    *) shift; exec "$real" $toolchain test --no-fail-fast $AUTOBUILD_CARGO_TEST_ARGS "$@";;
  esac
  shift; exec "$real" $toolchain test $AUTOBUILD_CARGO_TEST_ARGS "$@"
fi
exec "$real" $toolchain "$@"
"""
_CTEST = """#!/bin/sh
# AutoBuild's gate: ctest names its tests in a JUnit report of its own (one per call).
real="$AUTOBUILD_REAL_CTEST"
case " $* " in
  *" --output-junit "*|*" --version "*|*" -N "*|*" --show-only"*) exec "$real" "$@";;
esac
exec "$real" "$@" --output-junit "$AUTOBUILD_CTEST_REPORTS/ctest-$$.xml"
"""
_GO = """#!/bin/sh
# AutoBuild's gate: `go test` as `go test -json`, its events read and put on the gate's channel by the gate's own
# Python (runners/shim/autobuild_go.py), outside the test binaries; any other go command is the real one.
case " $* " in
  *" test "*) if [ -x "$AUTOBUILD_GATE_PYTHON" ] && [ -f "$AUTOBUILD_GO_SHIM" ]; then
                exec "$AUTOBUILD_GATE_PYTHON" -I -S "$AUTOBUILD_GO_SHIM" "$@"
              fi;;
esac
exec "$AUTOBUILD_REAL_GO" "$@"
"""
_CTEST_JUNIT = (3, 21)
"""The first ctest with `--output-junit`."""


DEADLINE = "AUTOBUILD_GATE_DEADLINE"
"""When the gate's pytest plugin interrupts a run the timeout is about to kill, so it still writes its report
(seconds since the epoch; the shim's autobuild_gate_pytest.py reads it by the same name, and prints STOPPED when
it did: the run timed out, as if killed)."""
STOPPED = "autobuild: pytest interrupted at the gate's deadline"
READS, ROOT = "AUTOBUILD_PYTEST_READS", "AUTOBUILD_GATE_ROOT"
"""Where the gate's pytest plugin records the files each test read, and the tree they are named relative to (the
shim's autobuild_gate_reads.py reads them by the same names)."""
REPORTER_VARIABLES = ("PYTEST_ADDOPTS", "NODE_OPTIONS", "GOFLAGS", "AUTOBUILD_UNITTEST_REPORT", "PYTHONPATH",
                      DEADLINE, READS, ROOT, "AUTOBUILD_GATE_CHANNEL", "AUTOBUILD_REAL_GO", "AUTOBUILD_GO_SHIM",
                      "AUTOBUILD_GATE_PYTHON")
"""The variables the runners' reports depend on (PYTHONPATH: the unittest shim; an env's own `setenv` of it
still wins in tox): an edit that clears them loses the base's passing ids."""


@dataclass(frozen=True)
class Reports:
    """Where the instrumented runners write their reports during one run."""

    pytest_junit: Path
    node_junit: Path
    unittest: Path
    node: Path
    js: Path
    """A folder: one JSON document per jest, vitest or mocha process (runners/js_report.py)."""
    ctest: Path | None = None
    """A folder: ctest's JUnit reports, one per call."""
    reads: Path | None = None
    """A folder: which files each pytest test read, one JSON document per process (gate/observe/reads.py)."""


def _add(env: dict[str, str], key: str, value: str, sep: str = " ") -> None:
    env[key] = f"{env[key]}{sep}{value}" if env.get(key) else value


_NODE_MAJOR: dict[str, int] = {}
_CTEST_VERSION: dict[str, tuple[int, int]] = {}
_NODE_REPORTERS = 20  # node 20 accepts --test-reporter in NODE_OPTIONS (measured); older ones may refuse to start


async def _node_major(env: dict[str, str], cwd: Path) -> int:
    """The major version of the `node` the command will find (0: none), asked once per node binary."""
    node = await asyncio.to_thread(shutil.which, "node", path=env.get("PATH"))
    if node is None:
        return 0
    if node not in _NODE_MAJOR:
        try:
            done = await run_async([node, "--version"], cwd, timeout=30, env=env | {"NODE_OPTIONS": ""})
        except OSError:
            return 0
        found = re.match(r"v(\d+)\.", done.stdout.strip())
        _NODE_MAJOR[node] = int(found.group(1)) if done.ok and found else 0
    return _NODE_MAJOR[node]


async def instrument(env: dict[str, str], scratch: Path, cwd: Path) -> tuple[dict[str, str], Reports]:
    """`env` with the gate's instrumentation; reports go under `scratch` (a directory of the run's own)."""
    reports = Reports(scratch / "pytest.xml", scratch / "node.xml", scratch / "unittest.jsonl", scratch / "node.jsonl",
                      scratch / "js", scratch / "ctest", scratch / "reads")
    env = dict(env)
    _add(env, "PYTEST_ADDOPTS", f"--junitxml={reports.pytest_junit} --continue-on-collection-errors")
    node = await _node_major(env, cwd)
    if node:  # every node since 8 takes --require in NODE_OPTIONS
        await asyncio.to_thread(reports.js.mkdir, exist_ok=True)
        env["AUTOBUILD_JS_REPORTS"] = str(reports.js)
        _add(env, "NODE_OPTIONS", f"--require={SHIM / JS_PRELOAD}")
    if node >= _NODE_REPORTERS:
        _add(env, "NODE_OPTIONS", "--test-reporter=tap --test-reporter-destination=stdout"
                                  f" --test-reporter=junit --test-reporter-destination={reports.node_junit}"
                                  f" --test-reporter={SHIM / NODE_REPORTER} --test-reporter-destination={reports.node}")
    if "-v" not in env.get("GOFLAGS", "").split():
        _add(env, "GOFLAGS", "-v")
    env["AUTOBUILD_UNITTEST_REPORT"] = str(reports.unittest)
    env[READS], env[ROOT] = str(reports.reads), str(cwd)
    # tox passes an env only the variables it is told to (tox 4 reads any option from TOX_<OPTION>): ours too.
    _add(env, "TOX_OVERRIDE", f"testenv.pass_env+={','.join(REPORTER_VARIABLES)}", ";")
    env["PYTHONPATH"] = os.pathsep.join([str(SHIM), *(p for p in env["PYTHONPATH"].split(os.pathsep)
                                                      if p and p != str(SHIM))])
    env.setdefault("CTEST_OUTPUT_ON_FAILURE", "1")  # a failing test's own lines, for the feedback
    shims: dict[str, str] = {}
    cargo = await asyncio.to_thread(shutil.which, "cargo", path=env.get("PATH"))
    if cargo is not None:
        env["AUTOBUILD_REAL_CARGO"], shims["cargo"] = cargo, _CARGO
    go = await asyncio.to_thread(shutil.which, "go", path=env.get("PATH"))
    if go is not None:
        env["AUTOBUILD_REAL_GO"], env["AUTOBUILD_GO_SHIM"], shims["go"] = go, str(SHIM / GO_SHIM), _GO
        env["AUTOBUILD_GATE_PYTHON"] = sys.executable
    ctest = await asyncio.to_thread(shutil.which, "ctest", path=env.get("PATH"))
    if ctest is not None and await _ctest_version(ctest, env, cwd) >= _CTEST_JUNIT:
        env["AUTOBUILD_REAL_CTEST"], env["AUTOBUILD_CTEST_REPORTS"] = ctest, str(reports.ctest)
        shims["ctest"] = _CTEST
    if shims:
        bin_dir = scratch / "bin"
        await asyncio.to_thread(_write_shims, bin_dir, shims, reports.ctest)
        env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
    return env, reports


async def _ctest_version(ctest: str, env: dict[str, str], cwd: Path) -> tuple[int, int]:
    """ctest's (major, minor), asked once per binary; (0, 0) when it can't say."""
    if ctest not in _CTEST_VERSION:
        try:
            done = await run_async([ctest, "--version"], cwd, timeout=30, env=env)
        except OSError:
            return (0, 0)
        found = re.search(r"version (\d+)\.(\d+)", done.stdout)
        _CTEST_VERSION[ctest] = (int(found.group(1)), int(found.group(2))) if done.ok and found else (0, 0)
    return _CTEST_VERSION[ctest]


def _write_shims(bin_dir: Path, shims: dict[str, str], ctest_reports: Path | None) -> None:
    bin_dir.mkdir(exist_ok=True)
    for name, text in shims.items():
        (bin_dir / name).write_text(text, encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    if ctest_reports is not None:
        ctest_reports.mkdir(exist_ok=True)
