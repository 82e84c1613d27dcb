"""The pick bench's tasks (issue 40): real-history release pairs, each with hand-written candidates that all pass
the gate and the visible tests but differ in correctness (the release's own change; a fix special-casing the
visible test's inputs; a partial fix; a fix breaking what no visible test covers), each with tests of its own; and,
outside the goal's mixtures, a plausible wrong generalisation no sibling's tests catch (`EXTRA`).

A candidate's code is written as changes to the old release's files (or the new release's) by exact text edits, so
a case reads as the few lines that make it wrong. The oracle, which neither the gate nor the selection sees, is the
new release's changed test files and the base test files held back from the task's repo.
"""

from __future__ import annotations

from benchmarks.pick_cases import go_cases, js_cases, py_cases
from benchmarks.pick_cases.model import EXTRA, KINDS, NEW, RIGHT, Candidate, Change, PickCase

__all__ = ["EXTRA", "KINDS", "NEW", "RIGHT", "Candidate", "Change", "PickCase", "cases"]


def cases() -> list[PickCase]:
    """Every task, one library after another."""
    return [*py_cases.CASES, *js_cases.CASES, *go_cases.CASES]
