"""Go and Rust from their own output. `go test` runs verbose (GOFLAGS=-v from the gate): "--- PASS/FAIL/SKIP:
TestX" lines, then the package's "ok"/"FAIL" line; a package that fails without a failing test (a build error,
a panic at init) fails by its own name; "[no test files]"/"[no tests to run]" run nothing. `cargo test`: each
"Running <target>" or "Doc-tests <crate>" section's "test name ... ok|FAILED|ignored" lines, ids by target;
doctests without their line number (numbered when several share a name)."""

from __future__ import annotations

import re

from orchestrator.gate.observe.runners import Observed

_GO_TEST = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+)")
_GO_PACKAGE = re.compile(r"^(ok|FAIL|\?) *\t(\S+)(?:\t\S+)?(?: *\t? *(\[[^\]]+\]))?(?:\s+coverage: [^\n]*)?\s*$")
"""A package's last line: "ok  <tab>pkg<tab>0.3s", with "<tab>coverage: 80.0% of statements" under -cover."""
_GO_LOG = re.compile(r"^\s+\S+\.go:\d+: (.*)$")
_CARGO_TARGET = re.compile(r"^\s+(?:Running (?:unittests )?(\S+)|Doc-tests (\S+))")
_CARGO_TEST = re.compile(r"^test (.+?) \.\.\. (ok|FAILED|ignored)(?:, (.*))?$")
_CARGO_RUNNING = re.compile(r"^running \d+ tests?$", re.MULTILINE)
_DOCTEST_LINE = re.compile(r" \(line (\d+)\)$")
"""A doctest's name carries its line ("src/lib.rs - add (line 5)"): an edit above it moves it, not the test."""
_OUT_DIR = re.compile(r"^/\S*?/target/(?:\S+/)?build/[^/\s]+/out/")
"""A doctest in a build script's output (`include!(concat!(env!("OUT_DIR"), ...))`) is named by its absolute path,
which holds the worktree's own: named from `$OUT_DIR` instead, the same in the base's worktree and a task's."""


def go_test(output: str) -> Observed | None:
    lines = output.splitlines()
    if not any(_GO_PACKAGE.match(line) for line in lines):
        return None
    observed = Observed("go test")
    pending: list[tuple[str, str, str]] = []
    last_log = ""
    for line in lines:
        if (test := _GO_TEST.match(line)) is not None:
            pending.append((test.group(1), test.group(2), last_log))
        elif (package := _GO_PACKAGE.match(line)) is not None and package.group(1) != "?":
            # ("?": "[no test files]", printed whenever it is known, even amid another package's streamed tests.)
            go_package_done(observed, package.group(1), package.group(2), package.group(3), pending)
            pending = []
        if (log := _GO_LOG.match(line)) is not None:
            last_log = log.group(1).strip()
        elif test is not None or line.startswith("=== RUN"):
            last_log = ""
    return observed


def go_package_done(observed: Observed, status: str, name: str, detail: str | None,
                  pending: list[tuple[str, str, str]]) -> None:
    """A package's "ok"/"FAIL" line: its tests seen since the last such line are its own."""
    leaves = {case for _, case, _ in pending}
    for outcome, case, reason in pending:
        if any(other.startswith(case + "/") for other in leaves):
            continue  # a test with subtests: its subtests are counted
        test_id = f"{name}.{case}"
        if outcome == "PASS":
            observed.ok(test_id)
        elif outcome == "FAIL":
            observed.fail(test_id)
        else:
            observed.skip(test_id, reason)
    if status == "FAIL" and not any(outcome == "FAIL" for outcome, _, _ in pending):
        observed.fail(f"{name} {detail or '(package failed)'}".strip())


def cargo_test(output: str) -> Observed | None:
    if not _CARGO_RUNNING.search(output):
        return None
    observed = Observed("cargo test")
    target = ""
    doctests: list[tuple[str, int, str, str]] = []
    for line in output.splitlines():
        if (section := _CARGO_TARGET.match(line)) is not None:
            target = section.group(1) or f"doc-tests {section.group(2)}"
        elif (test := _CARGO_TEST.match(line)) is not None:
            if target.startswith("doc-tests ") and (at := _DOCTEST_LINE.search(test.group(1))) is not None:
                name = _OUT_DIR.sub("$OUT_DIR/", test.group(1)[:at.start()])
                doctests.append((f"{target}::{name}", int(at.group(1)), test.group(2), test.group(3) or ""))
                continue
            _outcome(observed, f"{target}::{test.group(1)}" if target else test.group(1), test.group(2), test.group(3))
    # Doctests without an item of their own (a crate's or module's docs) share a name once their line is dropped:
    # numbered in line order, the second `… - #2` (they finish in any order), so none hides behind another.
    seen: dict[str, int] = {}
    for name, _, outcome, reason in sorted(doctests, key=lambda found: (found[0], found[1])):
        seen[name] = seen.get(name, 0) + 1
        _outcome(observed, name if seen[name] == 1 else f"{name} #{seen[name]}", outcome, reason)
    return observed


def _outcome(observed: Observed, test_id: str, outcome: str, reason: str | None) -> None:
    if outcome == "ok":
        observed.ok(test_id)
    elif outcome == "FAILED":
        observed.fail(test_id)
    else:
        observed.skip(test_id, (reason or "").strip())
