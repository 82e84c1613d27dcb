"""The pick bench's tasks (issue 40): real-history release pairs, each with hand-written candidates that all pass
the gate and the visible tests but differ in correctness (the release's own change; a fix special-casing the
visible test's inputs; a partial fix; a fix breaking what no visible test covers), each with tests of its own.

A candidate's code is written as changes to the old release's files (or the new release's) by exact text edits, so
a case reads as the few lines that make it wrong. The oracle, which neither the gate nor the selection sees, is the
new release's changed test files and the base test files held back from the task's repo.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

RIGHT = ("real", "alt")
"""The kinds of a right candidate: the release's change, and another right one (its code or tests differ)."""
KINDS = (*RIGHT, "special", "partial", "break")


@dataclass(frozen=True)
class Change:
    """One file of a candidate: the old release's text (`start="old"`) or the new one's, with exact edits applied
    in order (each `old` must occur once), or removed (`gone`)."""

    start: str = "old"
    edits: tuple[tuple[str, str], ...] = ()
    gone: bool = False


NEW = Change("new")
"""The file as the new release has it."""


@dataclass(frozen=True)
class Candidate:
    """One attempt's work: its kind, its code changes, and its own new tests (beside the visible ones)."""

    kind: str
    code: Mapping[str, Change]
    tests: Mapping[str, str] = field(default_factory=dict)
    summary: str = ""

    @property
    def right(self) -> bool:
        return self.kind in RIGHT


@dataclass(frozen=True)
class PickCase:
    """A task: a manifest case (`package old -> new`), the tests its brief shows (every candidate adds them), the
    base test files held back from its repo (the oracle's), and its candidates."""

    case: str
    visible: Mapping[str, str]
    candidates: tuple[Candidate, ...]
    held_back: tuple[str, ...] = ()
    oracle_tests: tuple[str, ...] = ()
    """The new release's test files the oracle runs (empty: the manifest's `tests_changed`)."""
    requirement: str = ""

    @property
    def package(self) -> str:
        return self.case.split(" ", 1)[0]

    def of_kind(self, kind: str) -> Candidate | None:
        return next((c for c in self.candidates if c.kind == kind), None)


def cases() -> list[PickCase]:
    """Every task, one library after another."""
    from benchmarks.pick_cases import go_version, js_cases, py_cases

    return [*py_cases.CASES, *js_cases.CASES, *go_version.CASES]
