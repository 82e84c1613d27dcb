"""The pick bench's case records: a task, its candidates, each candidate's change to a file."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

RIGHT = ("real", "alt")
"""The kinds of a right candidate: the release's change, and another right one (its code or tests differ)."""
EXTRA = ("general",)
"""Kinds outside the goal's mixtures, reported on their own: `general`, a plausible wrong generalisation (no
special-casing) that passes every test its siblings wrote, which nothing deterministic can tell from a right one."""
KINDS = (*RIGHT, "special", "partial", "break", *EXTRA)


@dataclass(frozen=True)
class Change:
    """One file of a candidate: the old release's text (`start="old"`) or the new one's, with exact edits applied
    in order (each `old` must occur once); a file of its own (`text`); or removed (`gone`)."""

    start: str = "old"
    edits: tuple[tuple[str, str], ...] = ()
    gone: bool = False
    text: str | None = None


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

    @property
    def extra(self) -> bool:
        return self.kind in EXTRA


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
