"""A gate run judges what is committed: a tracked file that is not as the commit has it is put back
(gate/prepare/checkout.py), and what the agents left in a task's worktree outside git (a build folder the
coach made, an ignored file, a stale cache) is removed before the gate runs there. What setup made and what the
gate's own last run made are recorded after them, outside the worktree (out of the agents' reach), each top entry
with the newest status-change time (ctime: `touch -d` can't set it back) of anything under it; an entry the gate's
run made that changed since goes too; so does a product of setup that changed, and setup runs again. Only
worktrees set up by the gate are cleaned (a record exists)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

from orchestrator.gate.prepare import checkout
from orchestrator.repo.git import GitRepo

RECORD_PREFIX = "_untracked-"
TRACKED = "setup_tracked"
"""In a record: the tracked files setup changed, by the blob of its content (kept while they hold it)."""
_KEPT = (".git",)
"""Never removed: a worktree's `.git` link file."""


def record_path(worktree: Path) -> Path:
    """Where a worktree's record lies: beside it, in the feature's folder (the agents write only the worktree)."""
    return worktree.parent / f"{RECORD_PREFIX}{worktree.name}.json"


def newest_change(path: Path) -> float:
    """The newest ctime of `path` and everything under it (links not followed)."""
    try:
        newest = path.lstat().st_ctime
    except OSError:
        return 0.0
    if path.is_dir() and not path.is_symlink():
        for folder, dirs, files in os.walk(path):
            for name in (*dirs, *files):
                try:
                    newest = max(newest, os.lstat(os.path.join(folder, name)).st_ctime)
                except OSError:
                    continue
    return newest


async def _entries(repo: GitRepo, worktree: Path) -> list[str]:
    """The worktree's untracked and ignored top entries, as git shows them (a folder whole, with its `/`)."""
    listed = await repo.git("status", "--porcelain=v1", "-z", "--ignored=traditional", "--untracked-files=normal",
                            cwd=worktree, check=False)
    entries = [item[3:] for item in listed.stdout.split("\0") if item[:3] in ("?? ", "!! ")]
    return [entry for entry in entries if entry.rstrip("/") not in _KEPT]


def _guarded(worktree: Path) -> bool:
    """A task's worktree, where agents work (the gate's own are named `_baseline`, `_land`, `_base-…`)."""
    return not worktree.name.startswith("_") and worktree.parent.parent.name == "worktrees"


def _read(worktree: Path) -> dict[str, dict[str, Any]] | None:
    try:
        found = json.loads(record_path(worktree).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def products(worktree: Path) -> tuple[dict[str, float], dict[str, str]] | None:
    """What setup made in a task's worktree, as recorded: its top entries outside git (with their newest change
    then) and the tracked files it rewrote (by blob); None when the gate did not set the worktree up."""
    known = _read(worktree) if _guarded(worktree) else None
    if known is None or not isinstance(known.get("setup"), dict):
        return None
    return dict(known["setup"]), dict(known.get(TRACKED) or {})


async def record(repo: GitRepo, worktree: Path, by: str) -> None:
    """Remember what is in a task's worktree outside git now, as left by `by`: "setup" (kept whatever becomes of
    it: only setup could make it again) or "gate" (its last run's, kept while unchanged)."""
    if not _guarded(worktree):
        return
    entries = await _entries(repo, worktree)
    known = await asyncio.to_thread(_read, worktree) or {}
    setup = known.get("setup", {}) if by == "gate" else {}
    seen = await asyncio.to_thread(lambda: {e: newest_change(worktree / e) for e in entries if e not in setup})
    tracked = await checkout.changed_tracked(repo, worktree) if by == "setup" else known.get(TRACKED, {})
    known = {"setup": seen, "gate": {}} if by == "setup" else {"setup": setup, "gate": seen}
    known[TRACKED] = tracked
    await asyncio.to_thread(record_path(worktree).write_text, json.dumps(known), "utf-8")


def _remove(worktree: Path, entry: str) -> None:
    path = worktree / entry.rstrip("/")
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


async def clean(repo: GitRepo, worktree: Path) -> tuple[list[str], bool]:
    """Put every tracked file of a task's worktree back as its commit has it (gate/prepare/checkout.py), and remove what
    is outside git and was not left as it is by setup or by the gate's last run there: the paths put back and the
    entries removed (none without a record: a worktree the gate did not set up), and whether one was setup's
    (setup must then run again: a version file edited, a package planted in its `node_modules`)."""
    known = await asyncio.to_thread(_read, worktree) if _guarded(worktree) else None
    if known is None:
        return [], False
    setup, gate = known.get("setup", {}), known.get("gate", {})
    made = known.get(TRACKED, {})
    gone = await checkout.put_back(repo, worktree, keep=made)
    again = any(path in made for path in gone)  # what setup made of a tracked file, changed: made again
    for entry in await _entries(repo, worktree):
        was = setup.get(entry, gate.get(entry))
        if was is None or await asyncio.to_thread(newest_change, worktree / entry) > float(was):
            await asyncio.to_thread(_remove, worktree, entry)
            gone.append(entry)
            again = again or entry in setup
    return gone, again
