"""What test runners observed in one run of the gate, read from their reports (pytest's and node's JUnit, the
unittest shim's lines) and their own output (TAP, jest, vitest, mocha, go test -v, cargo test, unittest and
pytest summaries): the tests that passed, failed (by id where the runner names them) and were skipped (with
their reasons). One module per family; `observe` asks each of them.

junit.py: JUnit XML reports: pytest's and node's test runner's.
python.py: Python's runners without JUnit: unittest through the gate's shim, pytest's summary.
node.py: node's test runner, from the gate's own reporter's lines.
js.py: jest, vitest and mocha from their own output.
js_report.py: jest, vitest and mocha from the reports the preload shim adds to their runs.
native.py: Go and Rust from their own output.
ctest.py: CMake's ctest: its JUnit reports, else its console.
channel_reports.py: pytest, unittest, node --test and jest from their sessions on the gate's channel.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Observed:
    """One runner's account of a run. Counts are never derived by subtraction: a runner that names its tests
    is counted test by test, one that only prints a summary is taken at its word."""

    runner: str
    passed: int = 0
    failing: list[str] | None = field(default_factory=list)
    """Ids of the failing tests; None: the runner only said how many (`failed`)."""
    failed: int = 0
    skipped: list[str] = field(default_factory=list)
    """Skipped tests as "id (reason)" where the runner names them."""
    skipped_count: int = 0
    ran: list[str] = field(default_factory=list)
    """Ids (for pytest, JUnit classnames) of the tests that ran: passed or failed, not skipped."""
    passing: list[str] | None = field(default_factory=list)
    """Ids of the tests that passed; None: the runner only said how many (`passed`)."""
    skipped_ids: list[str] = field(default_factory=list)
    """Ids of the skipped tests (without reasons), expected failures included."""
    xfailed: list[str] = field(default_factory=list)
    """Ids of the tests that failed as expected (pytest's xfail, unittest's expectedFailure)."""

    @property
    def total(self) -> int:
        return self.passed + self.failed

    def fail(self, test_id: str) -> None:
        if self.failing is not None and test_id not in self.failing:
            self.failing.append(test_id)
            self.failed += 1
        self.ran.append(test_id)

    def ok(self, test_id: str, ran_as: str | None = None) -> None:
        self.passed += 1
        self.ran.append(ran_as or test_id)
        if self.passing is not None:
            self.passing.append(test_id)

    def skip(self, test_id: str, reason: str = "", *, xfail: bool = False) -> None:
        self.skipped.append(f"{test_id} ({reason})" if reason else test_id)
        self.skipped_count += 1
        self.skipped_ids.append(test_id)
        if xfail:
            self.xfailed.append(test_id)


def combine(observed: list[Observed]) -> Observed | None:
    """Several runners behind one command (`make test` running pytest and cargo) add up; ids are known only if
    every runner named its failures."""
    if not observed:
        return None
    ids: list[str] | None = []
    passing: list[str] | None = []
    for one in observed:
        ids = None if ids is None or one.failing is None else [*ids, *one.failing]
        passing = None if passing is None or one.passing is None else [*passing, *one.passing]
    return Observed(runner="+".join(dict.fromkeys(one.runner for one in observed)),
                    passed=sum(one.passed for one in observed), failing=sorted(set(ids)) if ids is not None else None,
                    failed=sum(one.failed for one in observed),
                    skipped=[entry for one in observed for entry in one.skipped],
                    skipped_count=sum(one.skipped_count for one in observed),
                    ran=sorted({test for one in observed for test in one.ran}),
                    passing=sorted(set(passing)) if passing is not None else None,
                    skipped_ids=sorted({test for one in observed for test in one.skipped_ids}),
                    xfailed=sorted({test for one in observed for test in one.xfailed}))
