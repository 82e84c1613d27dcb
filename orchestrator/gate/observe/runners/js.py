"""jest, vitest and mocha from their own output (jest reads no reporter from the environment): the failing
tests they name (jest's bullet lines under "FAIL file"; vitest's "FAIL  file > suite > test"; mocha's numbered
failures) and their closing counts, skips included. "No tests found" and "0 passing" are runs of no test."""

from __future__ import annotations

import re

from orchestrator.gate.observe.runners import Observed

_JEST_FILE = re.compile(r"^(?:PASS|FAIL) +(\S+)", re.MULTILINE)
_JEST_TESTS = re.compile(r"^Tests: +(.*\d+ total)\s*$", re.MULTILINE)
_JEST_NONE = re.compile(r"^No tests found\b", re.MULTILINE)
_JEST_BULLET = re.compile(r"^ {2}● (.+)$")
_COUNT = re.compile(r"(\d+) (failed|passed|skipped|todo|pending)")
_VITEST_TESTS = re.compile(r"^ +Tests +(.*\(\d+\))\s*$", re.MULTILINE)
_VITEST_FAIL = re.compile(r"^ FAIL +(.+?)\s*$", re.MULTILINE)
_VITEST_NONE = re.compile(r"^No test files found\b", re.MULTILINE)
_VITEST_RUN = re.compile(r"^ RUN +v\d", re.MULTILINE)
_MOCHA_PASSING = re.compile(r"^ +(\d+) passing \(", re.MULTILINE)
_MOCHA_FAILING = re.compile(r"^ +(\d+) failing\s*$", re.MULTILINE)
_MOCHA_PENDING = re.compile(r"^ +(\d+) pending\s*$", re.MULTILINE)
_MOCHA_NUMBERED = re.compile(r"^( +)(\d+)\) (.+)$")


def _counts(text: str) -> dict[str, int]:
    return {kind: int(number) for number, kind in _COUNT.findall(text)}


def jest(output: str) -> Observed | None:
    if _JEST_NONE.search(output) and not _JEST_TESTS.search(output):
        return Observed("jest")
    totals = _JEST_TESTS.findall(output)
    if not totals:
        return None
    counts = _counts(totals[-1])
    observed = Observed("jest", passed=counts.get("passed", 0), skipped_count=counts.get("skipped", 0)
                        + counts.get("todo", 0), passing=None)
    current = ""
    ids: set[str] = set()
    for line in output.splitlines():
        if (file := _JEST_FILE.match(line)) is not None:
            current = file.group(1).removeprefix("./")
        elif (bullet := _JEST_BULLET.match(line)) is not None and not bullet.group(1).startswith("Console"):
            ids.add(f"{current} > {bullet.group(1).strip()}" if current else bullet.group(1).strip())
    failed = counts.get("failed", 0)
    # A suite that fails to run ("● Test suite failed to run") counts no test but is named: keep it as a failure.
    observed.failing, observed.failed = sorted(ids), max(failed, len(ids))
    if not ids and failed:
        observed.failing = None
    observed.ran = sorted(ids)
    return observed


def vitest(output: str) -> Observed | None:
    if not _VITEST_RUN.search(output):
        return None
    if _VITEST_NONE.search(output):
        return Observed("vitest")
    totals = _VITEST_TESTS.findall(output)
    if not totals:
        return None
    counts = _counts(totals[-1])
    ids = sorted({name for name in _VITEST_FAIL.findall(output) if " > " in name or name.endswith("]")})
    failed = counts.get("failed", 0)
    return Observed("vitest", passed=counts.get("passed", 0), failing=ids if ids or not failed else None,
                    failed=max(failed, len(ids)), skipped_count=counts.get("skipped", 0) + counts.get("todo", 0),
                    ran=ids, passing=None)


def mocha(output: str) -> Observed | None:
    passing = _MOCHA_PASSING.findall(output)
    if not passing:
        return None
    failing_count = int((_MOCHA_FAILING.findall(output) or ["0"])[-1])
    pending = int((_MOCHA_PENDING.findall(output) or ["0"])[-1])
    ids = _mocha_failures(output)
    return Observed("mocha", passed=int(passing[-1]), failing=ids if len(ids) == failing_count else None,
                    failed=failing_count, skipped_count=pending, ran=ids, passing=None)


def _mocha_failures(output: str) -> list[str]:
    """The numbered list after "N failing": "1) suite" then deeper-indented lines, the last ending with ":"."""
    lines = output.splitlines()
    start = next((index for index, line in enumerate(lines) if _MOCHA_FAILING.match(line)), None)
    if start is None:
        return []
    ids: list[str] = []
    index = start + 1
    while index < len(lines):
        numbered = _MOCHA_NUMBERED.match(lines[index])
        index += 1
        if not numbered:
            continue
        parts, title = [], numbered.group(3).strip()
        while not title.endswith(":") and index < len(lines) and lines[index].strip():
            parts.append(title)
            title = lines[index].strip()
            index += 1
        parts.append(title.removesuffix(":"))
        ids.append(" > ".join(parts))
    return sorted(set(ids))
