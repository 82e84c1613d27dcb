"""A pull request's body: the feature report (its pictures and receipts), what the request holds and leaves
out, and the base tests the coach accepted changing, each with the coach's reason."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from orchestrator.repo import run_files
from orchestrator.store import traces as trace
from orchestrator.text import plain_line
from orchestrator.views.reports import REPORT_NAME

TEST_CHANGES_FIELD = "test_changes_accepted"
"""The coach's `record_decision` field (DESIGN §5): `[{test, reason}]`, every base test a task removed, skipped or
whose expectation it changed. Found wherever a task's result or its trace's events carry it."""
MAX_BODY = 65_000
"""GitHub refuses a pull request body over 65,536 characters: a longer report loses its timeline, then its tail."""
BODY_NAME = "PULL-REQUEST.md"
"""The body as written beside the feature report (for `gh --body-file`, or to paste by hand)."""


def _found(value: Any) -> Iterable[Mapping[str, Any]]:
    """Every `test_changes_accepted` entry in a nested event or result, wherever it sits."""
    if isinstance(value, Mapping):
        for key, inner in value.items():
            if key == TEST_CHANGES_FIELD and isinstance(inner, list):
                yield from (entry for entry in inner if isinstance(entry, Mapping))
            else:
                yield from _found(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _found(inner)


def accepted_test_changes(repo: Path, feature_id: str, task_ids: Sequence[str],
                          results: Mapping[str, Mapping[str, Any]]) -> dict[str, list[tuple[str, str]]]:
    """Task id → the base tests its coach accepted changing, as (test, reason), each once, in the order recorded.
    The hook for the coach's `test_changes_accepted`: read from the task's result and its trace's events."""
    changes: dict[str, list[tuple[str, str]]] = {}
    for task_id in task_ids:
        seen: dict[str, str] = {}
        for entry in _found([results.get(task_id, {}), trace.read(repo, feature_id, task_id)]):
            test = plain_line(str(entry.get("test", "")), 200)
            if test and test not in seen:
                seen[test] = plain_line(str(entry.get("reason", "")), 300)
        if seen:
            changes[task_id] = list(seen.items())
    return changes


def pull_request_body(report: str, proposed: Sequence[str], left_out: Mapping[str, str],
                      test_changes: Mapping[str, Sequence[tuple[str, str]]], *,
                      unverified: Mapping[str, str] | None = None) -> str:
    """The body: the approvals the gate could not verify first, what it holds, the base tests changed (or that none
    were), then the feature report as written."""
    lines = [f"**Approved but not verified by the gate ({len(unverified)}): a draft until a person has read them.**",
             *[f"- {task}: {why}" for task, why in unverified.items()], ""] if unverified else []
    lines += [f"Built by AutoBuild: {len(proposed)} approved task(s) ({', '.join(proposed) or '-'}); how each was"
             " checked is in the report below."]
    if left_out:
        lines += ["", "**Left out (not approved):**", *[f"- {task}: {status}" for task, status in left_out.items()]]
    lines += ["", "## Base tests changed, with the coach's reasons", ""]
    if test_changes:
        lines += ["| Task | Test | Why the coach accepted it |", "|---|---|---|"]
        lines += [f"| {task} | `{test.replace('`', '')}` | {reason.replace('|', '/') or '-'} |"
                  for task, entries in test_changes.items() for test, reason in entries]
    else:
        lines.append("None: no approval recorded a change to a test that was already there.")
    head = "\n".join([*lines, "", "---", "", ""])
    return head + _fitted(report.strip() or "(the run wrote no feature report)", MAX_BODY - len(head) - 1) + "\n"


def _fitted(report: str, room: int) -> str:
    """The report within `room` characters: whole when it fits, else without its timeline, else cut."""
    if len(report) <= room:
        return report
    before, found, after = report.partition("\n## Timeline\n")
    if found:
        rest = after.partition("\n## ")
        report = before + "\n\n(The timeline is left out: too long for a pull request.)\n" + (
            f"\n## {rest[2]}" if rest[1] else "")
    if len(report) <= room:
        return report
    note = "\n\n… (cut here: the whole report is AUTO-RUN.md in the run's folder)"
    cut = report[:max(0, room - len(note) - 4)]
    return cut + ("\n```" if cut.count("```") % 2 else "") + note  # an open ```mermaid block closed first


def write_body(repo: Path, feature_id: str, proposed: Sequence[str], left_out: Mapping[str, str],
               results: Mapping[str, Mapping[str, Any]], *, unverified: Mapping[str, str] | None = None
               ) -> tuple[Path, str]:
    """The body built from the feature's report and traces, written to the run's folder; its path and the report
    (blocking file work: async callers run it in a thread)."""
    folder = trace.runs_dir(repo, feature_id)
    report_path = folder / REPORT_NAME
    report = run_files.read(report_path) or ""  # a link planted there is refused: the body is published
    changes = accepted_test_changes(repo, feature_id, [*proposed, *left_out], results)
    body = run_files.write(folder / BODY_NAME, pull_request_body(report, proposed, left_out, changes,
                                                                 unverified=unverified or {}), "PR body")
    return body, report
