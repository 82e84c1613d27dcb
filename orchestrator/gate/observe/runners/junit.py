"""JUnit XML reports: pytest's (`--junitxml`, through PYTEST_ADDOPTS) and node's test runner's (`--test-reporter
=junit`, through NODE_OPTIONS). pytest ids are `classname::name`; node's are its suite path, `suite > test`."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from orchestrator.gate.observe.bounded import report_bytes
from orchestrator.gate.observe.runners import Observed

# When pytest finds its rootdir above the worktree (no pytest config in the repo, an enclosing project), JUnit
# classnames carry the worktree's own path ("repo..autobuild.worktrees.FEAT-001.TASK-002.tests.test_x"): cut it,
# so the same test has the same id in every worktree (the base's run and each task's).
_WORKTREE_PREFIX = re.compile(r"^(?:.*\.)?\.?autobuild\.worktrees\.[^.]+\.[^.]+\.")


def without_worktree(raw: str | None) -> str:
    """A JUnit classname (or a test id that starts with one) without the worktree's path."""
    return _WORKTREE_PREFIX.sub("", raw or "")


def _parse(path: Path) -> ET.Element | None:
    try:
        return ET.fromstring(report_bytes(path))  # expat: no external entities, bounded expansion
    except (OSError, ET.ParseError):
        return None


def _outcome(observed: Observed, case: ET.Element, test_id: str, ran_as: str) -> None:
    skipped = case.find("skipped")
    if case.find("failure") is not None or case.find("error") is not None:
        observed.fail(test_id)
        observed.ran[-1] = ran_as
    elif skipped is not None:
        observed.skip(test_id, (skipped.get("message") or "").strip(), xfail=skipped.get("type") == "pytest.xfail")
    else:
        observed.ok(test_id, ran_as)


def pytest_junit(path: Path) -> Observed | None:
    """pytest's report; a module that fails to import is a failing test named after the module."""
    root = _parse(path)
    if root is None:
        return None
    observed = Observed("pytest")
    for case in root.iter("testcase"):
        if not case.get("name") and not case.get("classname"):
            continue  # the test a Ctrl+C (or the gate's deadline) interrupted: pytest writes it blank, unjudged
        classname = without_worktree(case.get("classname"))
        test_id = "::".join(part for part in (classname, case.get("name")) if part)
        _outcome(observed, case, test_id, classname or test_id)
    observed.ran = sorted(set(observed.ran))
    if observed.failing is not None:
        observed.failing.sort()
    return observed


def node_junit(path: Path) -> Observed | None:
    """node --test's report: nested suites (describe, subtests) are <testsuite> elements around the cases."""
    root = _parse(path)
    if root is None:
        return None
    observed = Observed("node --test")

    def walk(element: ET.Element, trail: tuple[str, ...]) -> None:
        for child in element:
            name = child.get("name") or ""
            if child.tag == "testsuite":
                walk(child, (*trail, name))
            elif child.tag == "testcase":
                test_id = " > ".join((*trail, name))
                _outcome(observed, child, test_id, test_id)

    walk(root, ())
    return observed
