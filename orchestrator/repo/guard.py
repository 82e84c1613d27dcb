"""The user's side of the repository, snapshotted around every agent session, setup and gate run: compared, never
put back.

Worktrees share refs with the user's repository and live inside it. What an agent or a gate command runs is
sandboxed (orchestrator/sandbox.py, Claude Code's Bash sandbox): it can't write the user's refs, HEAD or index,
so a change seen there during a run is the user's own (a commit, a checkout) and is only noted. Where the
sandbox can't run, the caller fails the task with the evidence; either way nothing is reverted (undoing a
change we can't attribute would undo the user's work).

The one ref outside autobuild/ that may move is the user's branch `land` moves, which the user asks for by
name: only here, only under a `LandPermit`, only by compare-and-swap to a commit that contains where the
branch was read (never forced), and checked afterwards that nothing else moved.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.errors import GitError
from orchestrator.repo.git import AUTOBUILD_REFS, GitRepo


@dataclass(frozen=True)
class UserState:
    """What must not change: refs outside autobuild/, HEAD (symbolic or detached) and the index bytes."""

    head: str
    refs: dict[str, str]
    index: bytes | None
    index_digest: str = field(default="", compare=False)


def _head_and_index(git_dir: Path) -> tuple[str | None, bytes | None]:
    """HEAD as git stores it ("refs/heads/x" when symbolic, else the commit) and the index bytes, read from the
    files (blocking: run in a thread); HEAD None when the file can't say (a reftable repository keeps
    "refs/heads/.invalid" there)."""
    try:
        text = (git_dir / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        text = ""
    head: str | None = text.removeprefix("ref:").strip() if text.startswith("ref:") else text
    if not head or head == "refs/heads/.invalid":
        head = None
    index_path = git_dir / "index"
    index = index_path.read_bytes() if index_path.is_file() else None
    return head, index


async def snapshot(repo: GitRepo) -> UserState:
    """The user's refs (one git call), HEAD and index (read from their files)."""
    listed = (await repo.git("for-each-ref", "--format=%(refname) %(objectname)")).stdout.splitlines()
    pairs = (line.split(" ", 1) for line in listed if line and not line.startswith(AUTOBUILD_REFS))
    refs = {name: sha for name, sha in pairs}
    head, index = await asyncio.to_thread(_head_and_index, await repo.git_dir())
    if head is None:
        symbolic = await repo.git("symbolic-ref", "-q", "HEAD", check=False)
        head = symbolic.stdout.strip() if symbolic.ok else (await repo.git("rev-parse", "HEAD")).stdout.strip()
    digest = hashlib.sha256(index).hexdigest() if index is not None else ""
    return UserState(head, refs, index, digest)


def differences(before: UserState, after: UserState) -> list[str]:
    """What changed between two snapshots, one line per change (empty: nothing)."""
    if after == before:
        return []
    changes: list[str] = []
    for ref in sorted(set(before.refs) | set(after.refs)):
        old, new = before.refs.get(ref), after.refs.get(ref)
        if old == new:
            continue
        if old is None:
            changes.append(f"{ref} was created at {(new or '?')[:10]}")
        else:
            changes.append(f"{ref} moved {old[:10]} → {(new or 'deleted')[:10]}")
    if after.head != before.head:
        changes.append(f"HEAD changed {before.head} → {after.head}")
    if after.index != before.index:
        changes.append("the index of your checkout changed")
    return changes


@dataclass(frozen=True)
class LandPermit:
    """The one exception to the safety invariant (DESIGN §5): `land FEAT` may move the user's branch `ref`
    from `old`, the commit it pointed at when it was read, to a commit that contains `old`."""

    feature_id: str
    ref: str
    old: str

    def __post_init__(self) -> None:
        if not self.ref.startswith("refs/heads/") or self.ref.startswith(AUTOBUILD_REFS):
            raise GitError(f"a land permit names a user branch (refs/heads/…, not autobuild/), not {self.ref}")


@dataclass(frozen=True)
class LandMove:
    """What moving the permitted ref did."""

    moved: bool
    reason: str = ""
    """Why nothing moved."""
    checkout: str | None = None
    """The user's worktree that has the branch checked out (fast-forwarded when moved)."""
    unexpected: list[str] = field(default_factory=list)
    """Anything else that changed meanwhile outside autobuild/ (a hook of the user's, another process)."""


async def land_ref(repo: GitRepo, permit: LandPermit, new: str) -> LandMove:
    """Move `permit.ref` from `permit.old` to `new`, or nothing at all. Where the branch is checked out, the
    checkout must still be clean and is fast-forwarded (`git merge --ff-only` there, which refuses local
    changes it would overwrite and a branch that no longer fast-forwards); elsewhere one `git update-ref` with
    the old value, which git refuses if the branch moved since it was read."""
    name = permit.ref.removeprefix("refs/heads/")
    if not await repo.is_ancestor(permit.old, new):
        return LandMove(False, f"{new[:10]} does not contain {name} ({permit.old[:10]}): refusing to force it")
    before = await snapshot(repo)
    now = before.refs.get(permit.ref)
    if now != permit.old:
        return LandMove(False, f"{name} moved while landing ({permit.old[:10]} → {(now or 'deleted')[:10]})")
    checkout = next((row["path"] for row in repo.worktree_list()
                     if row["branch"] == permit.ref and Path(row["path"]).is_dir()), None)
    if checkout is not None:
        status = await repo.git("status", "--porcelain", "--untracked-files=no", cwd=Path(checkout))
        if status.stdout.strip():
            return LandMove(False, f"{checkout} has uncommitted changes now: commit or stash them", checkout)
        done = await repo.git("merge", "--ff-only", "-q", new, cwd=Path(checkout), check=False,
                              user_filters=True)  # the user's checkout, written as their own git would
    else:
        done = await repo.git("update-ref", "-m", f"autobuild land {permit.feature_id}", permit.ref, new,
                              permit.old, check=False)
    if not done.ok:
        return LandMove(False, f"git refused to move {name}: {done.tail(5)}", checkout)
    after = await snapshot(repo)
    unexpected = [f"{ref} {(before.refs.get(ref) or 'absent')[:10]} → {(after.refs.get(ref) or 'deleted')[:10]}"
                  for ref in sorted(set(before.refs) | set(after.refs))
                  if ref != permit.ref and before.refs.get(ref) != after.refs.get(ref)]
    if after.refs.get(permit.ref) != new:
        unexpected.append(f"{permit.ref} is at {(after.refs.get(permit.ref) or 'deleted')[:10]}, not {new[:10]}")
    if after.head != before.head:
        unexpected.append(f"HEAD changed {before.head} → {after.head}")
    return LandMove(True, checkout=checkout, unexpected=unexpected)
