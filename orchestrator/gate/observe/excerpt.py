"""Where a failing test's own lines are in a gate run's output: the feedback and reports lead with them, because
the output's last lines often hold only the totals (node's TAP prints each failure where it happens and ends with
counts; `go test -v` and unittest interleave the failure with hundreds of passing lines)."""

from __future__ import annotations

import re
from collections.abc import Sequence

_SEPARATORS = re.compile(r" > | › |::")
_FAILURE = re.compile(r"not ok|FAIL|ERROR|Error|✗|✕|×|failed|panicked", re.IGNORECASE)
BEFORE, AFTER, MOST_TESTS, MOST_LINES = 12, 20, 5, 120
MAX_LINE, MAX_TEXT = 500, 4_000_000  # a minified bundle in a stack trace is one line; a run's output can be huge


def _where(lines: list[str], test_id: str) -> int | None:
    """The line that reports `test_id` failing: the whole id, else its last part (after ` > `, `::` or jest's
    arrow; go's `pkg.TestX/sub` as `TestX/sub`, then `sub`); a line that says it failed first."""
    leaf = _SEPARATORS.split(test_id)[-1].strip()
    for needle in dict.fromkeys((test_id, leaf, leaf.rsplit(".", 1)[-1], leaf.rsplit("/", 1)[-1])):
        if len(needle) < 3:
            continue
        hits = [index for index, line in enumerate(lines) if needle in line]
        if hits:
            return next((index for index in hits if _FAILURE.search(lines[index])), hits[0])
    return None


def failure_excerpts(text: str, failing: Sequence[str], known: Sequence[str] = ()) -> str:
    """The lines around each failing test (new failures before those `known` to fail already, at most
    `MOST_TESTS`, at most `MOST_LINES` in all), joined where they overlap; "" when none is found."""
    lines = [line if len(line) <= MAX_LINE else line[:MAX_LINE] + " …" for line in text[-MAX_TEXT:].splitlines()]
    red_before = set(known)
    ordered = [*(t for t in failing if t not in red_before), *(t for t in failing if t in red_before)]
    spans: list[tuple[int, int]] = []
    for test_id in ordered[:MOST_TESTS]:
        at = _where(lines, test_id)
        if at is not None:
            spans.append((max(0, at - BEFORE), min(len(lines), at + AFTER + 1)))
    merged: list[tuple[int, int]] = []  # in the order chosen (new failures first), overlapping ones joined
    for start, end in spans:
        near = next((index for index, (a, b) in enumerate(merged) if start <= b and a <= end), None)
        if near is None:
            merged.append((start, end))
        else:
            merged[near] = (min(merged[near][0], start), max(merged[near][1], end))
    shown: list[str] = []
    for start, end in merged:
        shown += [*lines[start:end], "…"]
    return "\n".join(shown[:MOST_LINES]).rstrip("…\n")
