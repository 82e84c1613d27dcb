"""What a task's tied attempts agree their change needs: for each, the lines of its code change (not its tests)
that no sibling's change has. Two attempts that pass each other's tests and differ only by a change one of them made
alone: that lone change is where a break no test covers hides (issue 40's pick bench: a fix that also rewrites an
unrelated function). Pure: diffs in, counts out."""

from __future__ import annotations

from collections.abc import Mapping

from orchestrator.gate import is_test_file


def changed_lines(diff: str) -> set[tuple[str, str, str]]:
    """The code lines a unified diff adds or removes, as (path, sign, text without surrounding blanks); lines of
    test files and blank lines left out."""
    found: set[tuple[str, str, str]] = set()
    path, old_path = "", ""
    for line in diff.splitlines():
        if line.startswith("--- "):
            old_path = line[4:].removeprefix("a/").strip()
        elif line.startswith("+++ "):
            new_path = line[4:].removeprefix("b/").strip()
            path = old_path if new_path == "/dev/null" else new_path
        elif path and not is_test_file(path) and line[:1] in "+-" and line[1:].strip():
            found.add((path, line[0], line[1:].strip()))
    return found


def unshared(diffs: Mapping[int, str]) -> dict[int, int]:
    """Each attempt's code lines (by `changed_lines`) that no other attempt's diff has."""
    lines = {attempt: changed_lines(diff) for attempt, diff in diffs.items()}
    return {attempt: len(mine - set().union(*(theirs for other, theirs in lines.items() if other != attempt)))
            for attempt, mine in lines.items()}
