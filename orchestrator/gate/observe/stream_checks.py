"""Accounts that a count per session can't hold (gate/observe/crosscheck.py asks): `go test`'s events, taken outside the
test binary (runners/shim/autobuild_go.py), against the go command's own result line per package, a test's outcome
its runner never started (a line the test binary printed, not its runner's: go before 1.24 reads the binary's
output for them), a test left mid-run in a package that passed; and `cargo test`'s output, where libtest prints in
the test binary itself: every test binary cargo (the parent, which runs no test) announced has one `test result:`
line, agreeing with its tests' lines and with what cargo said of the binary's exit. Each finding is
`subject: what disagreed`, as crosscheck's are."""

from __future__ import annotations

import re
from collections import Counter

from orchestrator.gate.observe.channel import Session
from orchestrator.gate.observe.summaries import go_packages

_GO_RESULT = {"pass": "ok", "fail": "FAIL", "skip": "?"}
_CARGO_SECTION = re.compile(r"^\s+(?:Running (?:unittests )?(\S+)|Doc-tests (\S+))")
_CARGO_RUNNING = re.compile(r"^running (\d+) tests?$")
_CARGO_TEST = re.compile(r"^test (.+?) \.\.\. (ok|FAILED|ignored)(?:, .*)?$")
_CARGO_RESULT = re.compile(r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured")
_CARGO_FAILED = re.compile(r"^error: (?:test|doctest) failed, to rerun pass ")


def go_findings(sessions: list[Session], output: str, *, timed_out: bool) -> list[str]:
    """What disagrees in `go test`'s sessions: each test's events in order, and the packages' results against
    the go command's lines in the output (a line a test printed that looks like one is one too many)."""
    found: list[str] = []
    heard: list[tuple[str, str]] = []
    for session in sessions:
        started: dict[tuple[str, str], str | None] = {}
        results: dict[str, str] = {}
        for record in session.tests:
            package, test, action = (str(record.get(key) or "") for key in ("package", "test", "action"))
            if not test:
                if action in _GO_RESULT:
                    heard.append((_GO_RESULT[action], package))
                    results[package] = action
            elif action == "run":
                started.setdefault((package, test), None)
            elif action in ("pass", "fail", "skip"):
                if (package, test) not in started:
                    found.append(f"go test stream: {package}.{test} reported `{action}` without being started (a"
                                 " line its test binary printed, not its runner's)")
                started[(package, test)] = action
        for (package, test), outcome in started.items():
            if outcome is None and results.get(package) == "pass":
                found.append(f"go test end: {package}.{test} started and never ended, yet its package passed (its"
                             " test binary left in the middle of it)")
            elif outcome is None and package not in results and session.ended and not timed_out:
                found.append(f"go test end: package {package} started {test} and has no result")
    if not timed_out and (printed := Counter(go_packages(output))):  # none: a wrapper reprinted them (gotestsum)
        found += _go_lines(printed, Counter(heard))
    return found


def _go_lines(printed: Counter[tuple[str, str]], heard: Counter[tuple[str, str]]) -> list[str]:
    def named(lines: Counter[tuple[str, str]]) -> str:
        return ", ".join(f"{status} {package}" for status, package in sorted(lines.elements())[:5])

    found = []
    if extra := printed - heard:
        found.append(f"go test summary: the output has package result line(s) the gate's channel did not hear:"
                     f" {named(extra)}")
    if missing := heard - printed:
        found.append(f"go test summary: the gate's channel heard package result(s) the output lacks: {named(missing)}")
    return found


class _Binary:
    """One test binary's section of cargo's output: what cargo announced, what libtest printed."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.lines: Counter[str] = Counter()
        self.results: list[tuple[str, int, int, int]] = []
        self.announced = False
        """libtest's `running N tests`: the binary started its tests."""
        self.cargo_failed = False


def _cargo_sections(output: str) -> list[_Binary]:
    binaries: list[_Binary] = []
    for line in output.splitlines():
        if (section := _CARGO_SECTION.match(line)) is not None:
            binaries.append(_Binary(section.group(1) or f"doc-tests {section.group(2)}"))
        elif not binaries:
            continue
        elif _CARGO_RUNNING.match(line):
            binaries[-1].announced = True
        elif (test := _CARGO_TEST.match(line)) is not None:
            binaries[-1].lines[test.group(2)] += 1
        elif (result := _CARGO_RESULT.match(line)) is not None:
            binaries[-1].results.append((result.group(1), int(result.group(2)), int(result.group(3)),
                                         int(result.group(4))))
        elif _CARGO_FAILED.match(line):
            binaries[-1].cargo_failed = True
    return binaries


def cargo_findings(output: str, *, timed_out: bool) -> list[str]:
    """Each test binary cargo announced against what libtest printed for it: one `test result:` line (none: the
    binary left before its end; two: one was printed by a test), the same counts as its tests' lines (unless
    libtest printed no line per test, as under --quiet), and cargo's word on its exit."""
    found: list[str] = []
    binaries = [binary for binary in _cargo_sections(output) if binary.announced or binary.results or binary.lines]
    for binary in binaries if not timed_out else []:
        if len(binary.results) != 1:
            found.append(f"cargo test end: {binary.target} printed {len(binary.results)} `test result:` lines"
                         " (its test binary left before its end, or a test printed one)")
            continue
        verdict, passed, failed, ignored = binary.results[0]
        lines = (binary.lines["ok"], binary.lines["FAILED"], binary.lines["ignored"])
        if any(lines) and lines != (passed, failed, ignored):
            found.append(f"cargo test summary: {binary.target}: its `test result:` says {passed} passed, {failed}"
                         f" failed, {ignored} ignored; its tests' lines say {lines[0]} ok, {lines[1]} FAILED,"
                         f" {lines[2]} ignored")
        if (verdict == "ok") == binary.cargo_failed or (verdict == "ok") == bool(failed):
            said = "failed" if binary.cargo_failed else "passed"
            found.append(f"cargo test status: {binary.target}: its `test result:` says {verdict} with {failed}"
                         f" failed; cargo says its test binary {said}")
    return found
