"""What each runner's sessions on the gate's channel (gate/observe/channel.py) observed, with the ids its report would
give: pytest's as its JUnit report names them (`classname::name`, a module that failed to collect by its
module), unittest's and node's test runner's as their reporters' lines, jest's, vitest's and mocha's as their
results documents do, go's as its verbose output does (`package.Test/sub`, a package that failed without a failing
test by its name)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orchestrator.gate.observe.channel import Received, Session
from orchestrator.gate.observe.runners import Observed
from orchestrator.gate.observe.runners.js_report import read_suite
from orchestrator.gate.observe.runners.junit import without_worktree as junit_classname
from orchestrator.gate.observe.runners.native import go_package_done
from orchestrator.gate.observe.runners.node import node_events
from orchestrator.gate.observe.runners.python import unittest_events

RUNNERS = ("pytest", "unittest", "node --test", "jest", "vitest", "mocha", "go test")
"""The runners whose reporters write on the channel."""


def pytest_id(record: dict[str, Any]) -> str:
    return "::".join(part for part in (junit_classname(str(record.get("classname") or "")),
                                       str(record.get("name") or "")) if part)


def pytest_sessions(sessions: list[Session]) -> Observed | None:
    """pytest's reports test by test: a failure in any phase fails the test (an error in setup or teardown as
    JUnit's <error>), a skip or an expected failure skips it, a passing call passes it; a rerun's earlier
    reports don't count."""
    if not sessions:
        return None
    observed = Observed("pytest")
    for session in sessions:
        outcomes: dict[str, list[dict[str, Any]]] = {}
        for record in session.tests:
            if record.get("outcome") != "rerun" and record.get("category") != "rerun":
                outcomes.setdefault(pytest_id(record), []).append(record)
        for test_id, records in outcomes.items():
            classname = junit_classname(str(records[0].get("classname") or ""))
            if any(record.get("outcome") == "failed" for record in records):
                observed.fail(test_id)
                observed.ran[-1] = classname or test_id
            elif skipped := next((record for record in records if record.get("outcome") == "skipped"), None):
                observed.skip(test_id, str(skipped.get("reason") or ""), xfail=bool(skipped.get("xfail")))
            elif any(record.get("phase") == "call" for record in records):
                observed.ok(test_id, classname or test_id)
            # else: interrupted before its call ended (the gate's deadline), as JUnit's blank case: not judged
    observed.ran = sorted(set(observed.ran))
    if observed.failing is not None:
        observed.failing.sort()
    return observed


def js_sessions(runner: str, sessions: list[Session], cwd: Path) -> Observed | None:
    """jest's, vitest's or mocha's records, a test file at a time as their results documents give them."""
    if not sessions:
        return None
    observed = Observed(runner)
    for session in sessions:
        suites: dict[str, dict[str, Any]] = {}
        for record in session.tests:
            name = str(record.get("file") or "")
            suite = suites.setdefault(name, {"name": name, "status": "passed", "assertionResults": []})
            if record.get("suite") == "failed":
                suite["status"] = "failed"
            else:
                suite["assertionResults"].append(record)
        for suite in suites.values():
            read_suite(observed, suite, cwd)
    if observed.failing is not None:
        observed.failing.sort()
    return observed


def go_sessions(sessions: list[Session]) -> Observed | None:
    """`go test`'s events: each package's tests as they ended, counted at its result (a test with subtests by its
    subtests), a package that failed without a failing test by its name and why."""
    if not sessions:
        return None
    observed = Observed("go test")
    for session in sessions:
        pending: dict[str, list[tuple[str, str, str]]] = {}
        for record in session.tests:
            package, test, action = (str(record.get(key) or "") for key in ("package", "test", "action"))
            if test and action in ("pass", "fail", "skip"):
                pending.setdefault(package, []).append((action.upper(), test, str(record.get("reason") or "")))
            elif not test and action in ("pass", "fail"):
                go_package_done(observed, "ok" if action == "pass" else "FAIL", package,
                                str(record.get("detail") or "") or None, pending.pop(package, []))
        for package, tests in pending.items():  # no result (cut at the deadline): its tests as they ended
            go_package_done(observed, "ok", package, None, tests)
    return observed


def channel_observed(received: Received, cwd: Path) -> dict[str, Observed]:
    """Each runner the channel heard from, by its sessions' records (a runner with a session of no tests ran
    none: it is still heard, and passed nothing)."""
    found: dict[str, Observed | None] = {
        "pytest": pytest_sessions(received.of("pytest")),
        "unittest": unittest_events([r for s in received.of("unittest") for r in s.tests], started=True)
        if received.of("unittest") else None,
        "node --test": (node_events([r for s in received.of("node --test") for r in s.tests])
                        or Observed("node --test")) if received.of("node --test") else None,
        **{runner: js_sessions(runner, received.of(runner), cwd) for runner in ("jest", "vitest", "mocha")},
        "go test": go_sessions(received.of("go test")),
    }
    return {runner: observed for runner, observed in found.items() if observed is not None}
