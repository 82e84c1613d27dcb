"""The user's side of the repository, snapshotted around every agent session and put back if it moved.

Worktrees share refs with the user's repository and live inside it, so an agent's shell could move `main`,
check out another branch in the user's checkout, or commit there. The policy denies the commands it can
recognise; this guard catches the rest: refs outside `refs/heads/autobuild/`, the user's HEAD and index are
compared after each session and restored, and anything new an agent created is kept under
`refs/heads/autobuild/rescued/` (nothing is lost, nothing stays moved).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.repo.git import AUTOBUILD_REFS, GitRepo


@dataclass(frozen=True)
class UserState:
    """What must not change: refs outside autobuild/, HEAD (symbolic or detached) and the index bytes."""

    head: str
    refs: dict[str, str]
    index: bytes | None
    index_digest: str = field(default="", compare=False)


async def _git_dir(repo: GitRepo) -> Path:
    path = (await repo.git("rev-parse", "--git-dir")).stdout.strip()
    return (repo.root / path).resolve()


async def snapshot(repo: GitRepo) -> UserState:
    listed = (await repo.git("for-each-ref", "--format=%(refname) %(objectname)")).stdout.splitlines()
    pairs = (line.split(" ", 1) for line in listed if line and not line.startswith(AUTOBUILD_REFS))
    refs = {name: sha for name, sha in pairs}
    symbolic = await repo.git("symbolic-ref", "-q", "HEAD", check=False)
    head = symbolic.stdout.strip() if symbolic.ok else (await repo.git("rev-parse", "HEAD")).stdout.strip()
    index_path = await _git_dir(repo) / "index"
    index = index_path.read_bytes() if index_path.is_file() else None
    digest = hashlib.sha256(index).hexdigest() if index is not None else ""
    return UserState(head, refs, index, digest)


async def restore(repo: GitRepo, before: UserState, label: str) -> list[str]:
    """Undo whatever moved since `before`; returns the evidence, one line per change (empty: untouched)."""
    after = await snapshot(repo)
    if after == before:
        return []
    changes: list[str] = []
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for ref in sorted(set(before.refs) | set(after.refs)):
        old, new = before.refs.get(ref), after.refs.get(ref)
        if old == new:
            continue
        if new is not None:  # keep what the agent made reachable, under our namespace
            rescued = f"{AUTOBUILD_REFS}rescued/{label}-{stamp}/{ref.removeprefix('refs/')}"
            await repo.git("update-ref", rescued, new)
        if old is None:
            await repo.git("update-ref", "-d", ref)
            changes.append(f"{ref} was created at {new[:10] if new else '?'} (deleted again)")
        else:
            await repo.git("update-ref", ref, old)
            changes.append(f"{ref} moved {old[:10]} → {(new or 'deleted')[:10]} (put back)")
    if after.head != before.head:
        if before.head.startswith("refs/"):
            await repo.git("symbolic-ref", "HEAD", before.head)
        else:
            await repo.git("update-ref", "--no-deref", "HEAD", before.head)
        changes.append(f"HEAD changed {before.head} → {after.head} (put back)")
    if after.index != before.index and before.index is not None:
        (await _git_dir(repo) / "index").write_bytes(before.index)
        changes.append("the index of your checkout changed (put back)")
    return changes
