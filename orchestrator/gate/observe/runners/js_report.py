"""jest, vitest and mocha from the reports the gate adds to their runs (shim/autobuild_js_preload.cjs): one JSON
document per runner process in the shape of vitest's json reporter (jest's results and mocha's tests written in
it by our shims), every test named `file > suite > test` with its file relative to where the gate ran, passes,
skips and todos included, so the accounting names each base test. A suite that failed to run is one failing id,
its file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from orchestrator.gate.observe.bounded import report_text
from orchestrator.gate.observe.runners import Observed

RUNNERS = ("jest", "vitest", "mocha")
_SKIPPED = {"pending": "skipped", "skipped": "skipped", "disabled": "skipped", "todo": "todo"}


def js_reports(folder: Path, cwd: Path) -> list[Observed]:
    """One Observed per runner with a report in `folder` (several processes of one runner add up)."""
    found: dict[str, Observed] = {}
    try:
        paths = sorted(folder.glob("*.json"))
    except OSError:
        return []
    for path in paths:
        runner = path.stem.split("-", 1)[0]
        if runner not in RUNNERS or (document := _load(path)) is None:
            continue
        observed = found.setdefault(runner, Observed(runner))
        for suite in document.get("testResults") or []:
            if isinstance(suite, dict):
                read_suite(observed, suite, cwd)
    for observed in found.values():
        if observed.failing is not None:
            observed.failing.sort()
    return [found[runner] for runner in RUNNERS if runner in found]


def _load(path: Path) -> dict[str, Any] | None:
    try:
        document = json.loads(report_text(path))
    except (OSError, ValueError):
        return None  # cut short (a killed run): its runner is read from its output instead
    return document if isinstance(document, dict) else None


def read_suite(observed: Observed, suite: dict[str, Any], cwd: Path) -> None:
    file = _relative(str(suite.get("name") or ""), cwd)
    tests = [test for test in suite.get("assertionResults") or [] if isinstance(test, dict)]
    if suite.get("status") == "failed" and not any(test.get("status") == "failed" for test in tests):
        observed.fail(file)  # the suite failed to run, or a hook failed: named by its file
    for test in tests:
        titles = [str(title) for title in test.get("ancestorTitles") or [] if title]  # vitest 1 lists the file's ""
        test_id = " > ".join([file, *titles, str(test.get("title") or "")])
        status = str(test.get("status") or "")
        if status == "passed":
            observed.ok(test_id)
        elif status == "failed":
            observed.fail(test_id)
        elif status in _SKIPPED:
            observed.skip(test_id, _SKIPPED[status])


def _relative(name: str, cwd: Path) -> str:
    """A test file as the repo knows it: relative to the gate's folder (the base's worktree and a task's differ)."""
    if not name or not os.path.isabs(name):
        return name
    try:
        return Path(os.path.relpath(os.path.realpath(name), os.path.realpath(cwd))).as_posix()
    except ValueError:
        return name
