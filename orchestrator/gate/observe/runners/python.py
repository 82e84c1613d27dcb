"""Python's runners without JUnit: unittest through the gate's shim (one JSON line per outcome, subTests by their
own ids, import errors as failing modules), else unittest's and pytest's own summaries."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from orchestrator.gate.observe.bounded import report_text
from orchestrator.gate.observe.runners import Observed

_FAILED_IMPORT = "unittest.loader._FailedTest."
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in ", re.MULTILINE)
_UNITTEST_END = re.compile(r"^(OK|FAILED)(?: \(([^)]*)\))?\s*$", re.MULTILINE)
_PYTEST_SUMMARY = re.compile(r"^=*\s*(?:\d+ \w+(?:, )?)+ in [\d.]+s", re.MULTILINE)
_PYTEST_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected)")
_PYTEST_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.MULTILINE)
_PYTEST_NONE = re.compile(r"^(?:collected 0 items|no tests ran in )", re.MULTILINE)


def unittest_report(path: Path) -> Observed | None:
    """The shim's lines; None when no unittest run started (the file is absent or has no "run" line)."""
    try:
        lines = report_text(path).splitlines()
    except OSError:
        return None
    events = []
    for line in lines:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return unittest_events(events)


def unittest_events(events: list[dict[str, Any]], started: bool = False) -> Observed | None:
    """The shim's records (from its file or the gate's channel); None when no unittest run started."""
    observed = Observed("unittest")
    for event in events:
        outcome, test_id = event.get("outcome"), str(event.get("id") or "").removeprefix(_FAILED_IMPORT)
        if outcome == "run":
            started = True
        elif outcome == "passed":
            observed.ok(test_id)
        elif outcome == "subtest-passed" and observed.passing is not None:
            observed.passing.append(test_id)
        elif outcome in ("failed", "error", "unexpected"):
            observed.fail(test_id)
        elif outcome in ("skipped", "xfail"):
            observed.skip(test_id, str(event.get("reason") or ("expected failure" if outcome == "xfail" else "")),
                          xfail=outcome == "xfail")
    if not started and not observed.total:
        return None
    if observed.failing is not None:
        observed.failing.sort()
    return observed


def unittest_summary(output: str) -> Observed | None:
    """unittest's "Ran N tests" and "FAILED (failures=F, errors=E, skipped=S)": counts only. subTest failures can
    outnumber the tests ("Ran 16 tests … failures=21"), so passes are what is left, never below zero."""
    ran, end = _UNITTEST_RAN.findall(output), _UNITTEST_END.findall(output)
    if not ran or not end:
        return None
    parts = dict(part.strip().split("=", 1) for part in end[-1][1].split(",") if "=" in part)
    failed = int(parts.get("failures", 0)) + int(parts.get("errors", 0)) + int(parts.get("unexpected successes", 0))
    skipped = int(parts.get("skipped", 0)) + int(parts.get("expected failures", 0))
    return Observed("unittest", passed=max(int(ran[-1]) - failed - skipped, 0), failing=None, failed=failed,
                    skipped_count=skipped, passing=None)


def pytest_summary(output: str) -> Observed | None:
    """pytest's closing line ("2 failed, 3 passed, 1 skipped in 0.1s") and its FAILED/ERROR lines, for a pytest
    that wrote no JUnit (PYTEST_ADDOPTS dropped by a wrapper such as tox)."""
    if _PYTEST_NONE.search(output) and not _PYTEST_SUMMARY.search(output):
        return Observed("pytest")  # ran no test: none passed, by id
    summaries = _PYTEST_SUMMARY.findall(output)
    if not summaries:
        return None
    counts: dict[str, int] = {}
    for number, kind in _PYTEST_COUNT.findall(summaries[-1]):
        counts[kind.rstrip("s") if kind.startswith("error") else kind] = int(number)
    failed = counts.get("failed", 0) + counts.get("error", 0) + counts.get("xpassed", 0)
    ids = sorted(set(_PYTEST_FAILED.findall(output)))
    return Observed("pytest", passed=counts.get("passed", 0), failing=ids if len(ids) == failed else None,
                    failed=failed, skipped_count=counts.get("skipped", 0) + counts.get("xfailed", 0), passing=None)
