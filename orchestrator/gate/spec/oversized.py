"""Files the gate reads to judge a tree (tests, code, manifests), read at most up to a size: a larger one the task
added or changed is a finding the coach must accept, never a file skipped unjudged nor one read whole."""

from __future__ import annotations

import stat
from collections.abc import Iterable
from pathlib import Path

from agents.bounded import read_bounded
from orchestrator.facts import TestChange, TestFate

MAX_BYTES = 4_000_000
"""The most the gate reads of one file: a task can write a file of any size (a sparse file costs nothing on disk,
or a link to one), and reading it whole would take the run's memory."""

FATE: TestFate = "too large to judge"


def bounded_text(file: Path) -> str | None:
    """The text of `file` (links followed), or None when it is not a regular file or is larger than `MAX_BYTES`;
    never blocks on a FIFO swapped in, never reads more than `MAX_BYTES` + 1 bytes (blocking: run it in a thread)."""
    try:
        return read_bounded(file, MAX_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None


def changes(worktree: Path, paths: Iterable[str]) -> list[TestChange]:
    """A change the coach must accept for each of `paths` (files the task added or changed that the gate reads)
    that is a regular file larger than `MAX_BYTES` in `worktree` (blocking: run it in a thread)."""
    found = []
    for path in sorted(set(paths)):
        try:
            info = (worktree / path).stat()
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_size > MAX_BYTES:
            found.append(TestChange(test=path, fate=FATE, file=path, accepted=None,
                                    detail=f"{info.st_size:,} bytes, over the {MAX_BYTES:,} the gate reads of a file:"
                                           " its tests and code were not screened"))
    return found
