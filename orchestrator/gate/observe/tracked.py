"""Which tracked files one run of the gate changed: the worktree's modified tracked files and their content's
hashes, taken before and after the run (a file the run rewrote, deleted or restored shows as a difference). The
base's run records its own, so a task's run that touches what the base's leaves alone is named
(gate/observe/crosscheck.py). Outside a git worktree there is nothing to compare (None)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from orchestrator.processes import Completed
from orchestrator.repo.commands import filters_off, git_sync

State = dict[str, str]
"""A modified (or deleted) tracked file, by its path from the repository's top, and its content's hash."""
_TIMEOUT_S = 120.0


async def snapshot(cwd: Path) -> State | None:
    """The tracked files that differ from HEAD in `cwd`'s worktree, each with its content's hash ("" when
    deleted); None when `cwd` is no git worktree or git can't say."""
    try:
        top = await _git(cwd, "rev-parse", "--show-toplevel")
        if not top.ok:
            return None
        root = Path(top.stdout.strip())
        off = await asyncio.to_thread(filters_off, root)  # `status` would run the user's clean filters
        listed = await _git(root, *off, "-c", "core.quotePath=false", "status", "--porcelain=v1", "-z",
                            "--untracked-files=no", "--ignore-submodules=all")
    except OSError:
        return None
    if not listed.ok:
        return None
    paths = _paths(listed.stdout)
    present = [path for path in paths if (root / path).is_file()]
    hashes: list[str] = []
    if present:
        hashed = await _git(root, *off, "hash-object", "--no-filters", "--", *present)
        if not hashed.ok:
            return None
        hashes = hashed.stdout.split()
    state = dict.fromkeys(paths, "")
    state.update(zip(present, hashes, strict=False))
    return state


async def _git(where: Path, *args: str) -> Completed:
    """Git through our one guarded way (no hooks, no fsmonitor: the task's worktree may configure either), off
    the event loop."""
    return await asyncio.to_thread(git_sync, where, *args, timeout=_TIMEOUT_S)


def _paths(porcelain: str) -> list[str]:
    """Paths of `git status --porcelain=v1 -z` (a rename's entry names its new path, then its old one)."""
    paths: list[str] = []
    entries = iter(porcelain.split("\0"))
    for entry in entries:
        if len(entry) < 4:
            continue
        paths.append(entry[3:])
        if entry[0] in "RC":
            paths.append(next(entries, ""))
    return [path for path in paths if path]


def changed(before: State | None, after: State | None) -> list[str] | None:
    """The tracked files whose state differs after the run (None when either side is unknown)."""
    if before is None or after is None:
        return None
    return sorted(path for path in set(before) | set(after) if before.get(path) != after.get(path))
