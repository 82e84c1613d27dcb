"""Every end-of-session summary a runner printed in one run's output, in order, as counts by kind: pytest's
closing line, unittest's "Ran N tests" and its verdict, node's test runner's closing counts (TAP's `# pass 3`,
the spec reporter's the same behind its information sign), jest's `Tests:` line, vitest's `Tests` line, mocha's
`N passing` with its pending and failing counts, and the go command's line per package (`ok`, `FAIL`, `?`). The
cross-check (gate/observe/crosscheck.py) holds each against the session the gate's channel heard. Lines inside a failing
pytest test's captured output are not summaries (a test that runs pytest in itself prints one there)."""

from __future__ import annotations

import re

from orchestrator.text import uncoloured

_PYTEST_LINE = re.compile(r"^=*\s*((?:\d+ (?:subtests )?\w+(?:, )?)+|no tests ran) in [\d.]+m?s\b")
"""pytest 9 counts unittest's subTest blocks there too ("2 passed, 3 subtests passed in"): not tests, not counted."""
_PYTEST_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b")
_CAPTURED = re.compile(r"^-+ Captured (?:stdout|stderr|log) \w+ -+$")
_SECTION = re.compile(r"^(?:_{3,} .* _{3,}|={3,} (?:short test summary info|FAILURES|ERRORS|warnings summary|"
                      r"PASSES|XFAIL|XPASS|slowest)\b.*)$")
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in ")
_UNITTEST_END = re.compile(r"^(OK|FAILED)(?: \(([^)]*)\))?\s*$")
_NODE = re.compile(r"^(?:#|ℹ) (tests|suites|pass|fail|cancelled|skipped|todo) (\d+)$")
_JEST = re.compile(r"^Tests: +(.*\d+ total)\s*$")
_JEST_COUNT = re.compile(r"(\d+) (failed|passed|skipped|todo|pending|total)\b")
_VITEST = re.compile(r"^ +Tests +(.*)\((\d+)\)\s*$")
_MOCHA = re.compile(r"^ +(\d+) (passing|pending|failing)(?: \(\S+\))?\s*$")
_GO_PACKAGE = re.compile(r"^(ok|FAIL|\?) *\t(\S+)(?=\s|$)")
PYTEST_KINDS = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")


def pytest_summaries(output: str) -> list[dict[str, int]]:
    found: list[dict[str, int]] = []
    captured = False
    for line in output.splitlines():
        if _CAPTURED.match(line):
            captured = True
        elif _SECTION.match(line):
            captured = False
        elif not captured and (summary := _PYTEST_LINE.match(line)):
            counts = dict.fromkeys(PYTEST_KINDS, 0)
            for number, kind in _PYTEST_COUNT.findall(summary.group(1)):
                counts["error" if kind.startswith("error") else kind] = int(number)
            found.append(counts)
    return found


def unittest_summaries(output: str) -> list[dict[str, int]]:
    """"Ran N tests" followed by its verdict line: tests run, failures (errors and unexpected successes
    included), skips, expected failures, and `ok` (1: OK)."""
    found: list[dict[str, int]] = []
    ran: int | None = None
    for line in output.splitlines():
        if started := _UNITTEST_RAN.match(line):
            ran = int(started.group(1))
        elif ran is not None and (end := _UNITTEST_END.match(line)):
            parts = {key.strip(): int(value) for key, value in
                     (part.split("=", 1) for part in (end.group(2) or "").split(",") if "=" in part)}
            found.append({"ran": ran, "failed": parts.get("failures", 0) + parts.get("errors", 0)
                          + parts.get("unexpected successes", 0), "skipped": parts.get("skipped", 0),
                          "xfail": parts.get("expected failures", 0), "ok": int(end.group(1) == "OK")})
            ran = None
    return found


def node_summaries(output: str) -> list[dict[str, int]]:
    found: list[dict[str, int]] = []
    for line in output.splitlines():
        if count := _NODE.match(line.strip()):
            if count.group(1) == "tests":
                found.append({})
            if found:
                found[-1][count.group(1)] = int(count.group(2))
    return found


def jest_summaries(output: str) -> list[dict[str, int]]:
    found: list[dict[str, int]] = []
    for line in output.splitlines():
        if totals := _JEST.match(line):
            counts = dict.fromkeys(("failed", "passed", "skipped", "todo", "total"), 0)
            for number, kind in _JEST_COUNT.findall(totals.group(1)):
                counts["skipped" if kind == "pending" else kind] += int(number)
            found.append(counts)
    return found


def vitest_summaries(output: str) -> list[dict[str, int]]:
    found: list[dict[str, int]] = []
    for line in uncoloured(output).splitlines():  # vitest colours its summary even into a pipe
        if totals := _VITEST.match(line):
            counts = dict.fromkeys(("failed", "passed", "skipped", "todo"), 0)
            for number, kind in _JEST_COUNT.findall(totals.group(1)):
                if kind in counts:
                    counts[kind] += int(number)
            found.append({**counts, "total": int(totals.group(2))})
    return found


def mocha_summaries(output: str) -> list[dict[str, int]]:
    """Each "N passing" line with the pending and failing lines after it (mocha prints those only when not 0)."""
    found: list[dict[str, int]] = []
    for line in output.splitlines():
        if count := _MOCHA.match(line):
            if count.group(2) == "passing":
                found.append(dict.fromkeys(("passing", "pending", "failing"), 0))
            if found:
                found[-1][count.group(2)] = int(count.group(1))
    return found


def go_packages(output: str) -> list[tuple[str, str]]:
    """The go command's result line of each package, in order: (`ok`, `FAIL` or `?`, the package)."""
    return [(found.group(1), found.group(2)) for line in output.splitlines() if (found := _GO_PACKAGE.match(line))]
