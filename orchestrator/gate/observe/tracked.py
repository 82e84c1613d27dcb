"""Which tracked files one run of the gate changed: the worktree's modified tracked files and their content's
hashes, taken before and after the run (a file the run rewrote, deleted or restored shows as a difference). The
base's run records its own, so a task's run that touches what the base's leaves alone is named
(gate/observe/crosscheck.py). Outside a git worktree there is nothing to compare (None)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from orchestrator.gate.spec.test_files import is_test_file
from orchestrator.processes import Completed
from orchestrator.repo import config_stamp
from orchestrator.repo.commands import filters_off, git_sync

State = dict[str, str]
"""A modified (or deleted) tracked file, by its path from the repository's top, and its content's hash."""
_TIMEOUT_S = 120.0
PROTECTED_LIMIT = 8000
"""Read-only binds on one command line (bwrap's arguments stay well under the kernel's limit)."""
TEST_DATA_FOLDERS = frozenset({"tests", "test", "testing", "__tests__", "__mocks__", "__fixtures__", "spec", "specs",
                               "testdata", "fixtures", "snapshots", "__snapshots__", "e2e"})


@dataclass(frozen=True)
class Worktree:
    """Where `cwd`'s tracked files are: its worktree's top and the user's filter drivers there, switched off.
    Asked once before a gate run for its first snapshot and its protected files."""

    top: Path
    filters_off: tuple[str, ...]
    stamp: tuple[object, ...] | None = None
    """The top's `.git` and every config file git reads there, stamped before both were read (repo/config_stamp.py;
    None: can't be sure): while it holds, git would locate the same top with the same filter drivers."""


async def locate(cwd: Path) -> Worktree | None:
    """`cwd`'s worktree (None when it is no git worktree or git can't say)."""
    try:
        top = await _git(cwd, "rev-parse", "--show-toplevel")
        if not top.ok:
            return None
        root = Path(top.stdout.strip())
        stamp = await asyncio.to_thread(config_stamp.stamp, root)  # first: a change after it fails `again`
        return Worktree(root, await asyncio.to_thread(filters_off, root), stamp)  # `status` would run clean filters
    except OSError:
        return None


async def again(cwd: Path, where: Worktree | None) -> Worktree | None:
    """`cwd`'s worktree after a run that could write there: `where` while its stamp holds (no `.git` and no config
    file changed, so neither the top nor a filter driver did), else located anew (a run can write its worktree's
    config.worktree: a filter driver `status` would start, a core.worktree)."""
    if where is not None and where.stamp is not None and await asyncio.to_thread(
            config_stamp.stamp, where.top) == where.stamp:
        return where
    return await locate(cwd)


async def snapshot(cwd: Path, where: Worktree | None = None) -> State | None:
    """The tracked files that differ from HEAD in `cwd`'s worktree (`where`, when located already), each with its
    content's hash ("" when deleted); None when `cwd` is no git worktree or git can't say."""
    where = where or await locate(cwd)
    if where is None:
        return None
    root, off = where.top, where.filters_off
    try:
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


async def test_files(cwd: Path, limit: int = PROTECTED_LIMIT, where: Worktree | None = None) -> list[Path]:
    """The tracked files of `cwd`'s worktree (`where`, when located already) a gate run shows read-only: test code
    and what the test folders hold (its data, snapshots, fixtures), at most `limit` (test code first); none
    outside a git worktree."""
    where = where or await locate(cwd)
    if where is None:
        return []
    root = where.top
    listed = await _git(root, "-c", "core.quotePath=false", "ls-files", "-z", "--cached")
    if not listed.ok:
        return []
    paths = [path for path in dict.fromkeys(listed.stdout.split("\0")) if path]
    code = [path for path in paths if is_test_file(path)]
    tests = set(code)
    data = [path for path in paths if path not in tests and any(
        part.lower() in TEST_DATA_FOLDERS for part in PurePosixPath(path).parts[:-1])]
    return [root / path for path in [*code, *data][:limit]]


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
