"""CMake's ctest: its JUnit reports (`--output-junit`, added by the gate's `ctest` on PATH), else its own console
lines ("1/4 Test #1: mul ....***Failed"), as when `make test` in a build folder runs ctest by its full path. Ids
are ctest's test names; a skipped or disabled test is skipped, any other outcome but Passed fails."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from orchestrator.gate.observe.bounded import report_bytes
from orchestrator.gate.observe.runners import Observed

_LINE = re.compile(r"^\s*\d+/\d+ Test\s+#\d+: (.+?) \.+\s*(?:\*\*\*)?(Passed|Skipped|Not Run \(Disabled\)|.+?)\s+"
                   r"[\d.]+ sec\s*$")
_SUMMARY = re.compile(r"^(?:\d+% tests passed, \d+ tests? failed out of \d+|No tests were found!!!)", re.MULTILINE)


def ctest_junit(folder: Path | None) -> Observed | None:
    """Every JUnit report ctest wrote in `folder` during the run (one per ctest call); None when it wrote none."""
    try:
        reports = sorted(folder.glob("*.xml")) if folder is not None and folder.is_dir() else []
    except OSError:
        return None
    observed, read = Observed("ctest"), False
    for report in reports:
        try:
            root = ET.fromstring(report_bytes(report))  # expat: no external entities
        except (OSError, ET.ParseError):
            continue
        read = True
        for case in root.iter("testcase"):
            name, status = case.get("name") or "", case.get("status") or ""
            skipped = case.find("skipped")
            if status == "disabled" or (status == "notrun" and skipped is not None):
                reason = (skipped.get("message") if skipped is not None else None) or status
                observed.skip(name, reason)
            elif status == "run" and case.find("failure") is None:
                observed.ok(name)
            else:
                observed.fail(name)
    return observed if read else None


def ctest_output(output: str) -> Observed | None:
    """ctest's console lines; None when no ctest summary was printed."""
    if not _SUMMARY.search(output):
        return None
    observed = Observed("ctest")
    for line in output.splitlines():
        if (test := _LINE.match(line)) is None:
            continue
        name, outcome = test.group(1).strip(), test.group(2).strip()
        if outcome == "Passed":
            observed.ok(name)
        elif outcome in ("Skipped", "Not Run (Disabled)"):
            observed.skip(name, outcome.lower())
        else:
            observed.fail(name)
    return observed
