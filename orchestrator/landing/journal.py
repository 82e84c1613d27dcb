"""`land`'s journal: what a landing is doing to the repository, written before each step, so the next command
can finish or undo a landing that was killed half-way (kill -9, a power cut).

One small JSON file, `<git common dir>/autobuild-land.json`, replaced atomically before each step:
`worktree` (the throwaway worktree is being made, merged in, verified: the gate's processes carry `tag`),
`moving` (the base branch is being moved: where it is checked out, git is writing the landed files there).
It is deleted when the landing ends, whatever its outcome. `recover` reads a journal left behind by a dead
`land` (the repository lock proves it dead) and puts things right:

- the landing's processes still alive (its git, the user's hooks, its setup and gate: found by their tag) are
  killed and waited for; the throwaway worktree is removed;
- the base moved to the landed commit: the landing finished; nothing else to do;
- the base still where it was: the fast-forward of the user's checkout stopped half-way (the checkout was clean
  when it started: `land` refuses otherwise). Only the landing's own paths are touched: git's stale
  `index.lock` (made after the journal) goes, unless a live process holds it (then nothing is touched and the
  journal stays for the next command); a file the landing adds is removed unless something was there
  before the step (an ignored file, noted in the journal); a file the landing changes is put back as the base
  has it, and if it holds neither version (git cut off mid-write) what it held is first kept under
  `<git dir>/autobuild-land-kept/`, so nothing is lost.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.errors import RunLockedError
from orchestrator.landing import holders
from orchestrator.repo.commands import git_sync
from orchestrator.repo.git import GitRepo
from orchestrator.repo.lock import repo_lock

NAME = "autobuild-land.json"


@dataclass
class Journal:
    """One landing in progress."""

    feature: str
    ref: str
    """The user's branch being landed on (refs/heads/…)."""
    old: str
    worktree: str
    tag: str
    """The environment tag every process of the landing's setup and gate carries."""
    step: str = "worktree"
    new: str | None = None
    checkout: str | None = None
    """The user's worktree of `ref`, fast-forwarded by the `moving` step."""
    present_before: list[str] = field(default_factory=list)
    """Paths the landing adds that already held something in `checkout` (ignored files): never removed."""
    pid: int = field(default_factory=os.getpid)
    since: float = field(default_factory=time.time)


class LockHeld(Exception):
    """The checkout's `index.lock` is held by a live process: the undo waits for another command."""


def path(repo: GitRepo) -> Path:
    common = repo.read("rev-parse", "--git-common-dir").stdout.strip()
    return (repo.root / common).resolve() / NAME


def write(repo: GitRepo, journal: Journal) -> None:
    """Replace the journal atomically, on disk before the step it announces starts."""
    target = path(repo)
    temp = target.with_suffix(f".{os.getpid()}.tmp")
    with temp.open("w", encoding="utf-8") as handle:
        json.dump({"schema_version": 1, **asdict(journal), "since": time.time()}, handle)
        handle.flush()
        os.fsync(handle.fileno())
    temp.replace(target)


def clear(repo: GitRepo) -> None:
    with contextlib.suppress(FileNotFoundError):
        path(repo).unlink()


def read(repo: GitRepo) -> Journal | None:
    """The journal left in the repository, if any; an unreadable one is dropped (nothing can be done with it)."""
    target = path(repo)
    try:
        data: dict[str, Any] = json.loads(target.read_text(encoding="utf-8"))
        data.pop("schema_version", None)
        return Journal(**data)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError):
        target.unlink(missing_ok=True)
        return None


def _git(where: Path, *args: str, stdin: str | None = None) -> tuple[bool, str]:
    """Ours, in the repo or the user's checkout: none of the user's hooks run (the undo's checkout fires
    post-checkout otherwise)."""
    done = git_sync(where, *args, timeout=600, stdin=stdin)
    return done.ok, done.stdout if done.ok else done.tail(5)


def _blobs(repo: GitRepo, commit: str, paths: list[str]) -> dict[str, str]:
    """path -> blob id at `commit`, for the given paths (absent paths are left out)."""
    if not paths:
        return {}
    ok, out = _git(repo.root, "ls-tree", "-r", "-z", "--full-tree", commit, stdin=None)
    found: dict[str, str] = {}
    if ok:
        wanted = set(paths)
        for entry in out.split("\0"):
            meta, _, name = entry.partition("\t")
            if name in wanted:
                found[name] = meta.split()[2]
    return found


def _on_disk(checkout: Path, paths: list[str]) -> dict[str, str]:
    """path -> blob id of what the checkout holds there now (regular files only)."""
    present = [p for p in paths if (checkout / p).is_file() and not (checkout / p).is_symlink()]
    if not present:
        return {}
    ok, out = _git(checkout, "hash-object", "--stdin-paths", stdin="\n".join(present) + "\n")
    return dict(zip(present, out.split(), strict=False)) if ok else {}


def _sort(checkout: Path, paths: list[str], before: dict[str, str], landed: dict[str, str],
          present_before: set[str]) -> tuple[list[str], list[str], list[str]]:
    """The landing's paths in the checkout: to put back as the base has them, to remove (added by the killed
    git), and to set aside first (holding neither version: cut off mid-write, or someone's edit)."""
    now = _on_disk(checkout, paths)
    restore, remove, set_aside = [], [], []
    for name in paths:
        held, exists = now.get(name), os.path.lexists(checkout / name)
        if name not in before:  # the landing adds it: only the killed git can have put it there
            if exists and name not in present_before and not (checkout / name).is_dir():
                remove.append(name)
            continue
        if held is not None and held == before[name]:
            continue
        if exists and held != landed.get(name):
            set_aside.append(name)
        restore.append(name)
    return restore, remove, set_aside


def _remove(checkout: Path, names: list[str]) -> None:
    for name in names:
        (checkout / name).unlink()
        with contextlib.suppress(OSError):  # folders the landing made and left empty
            parent = (checkout / name).parent
            while parent != checkout and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent


def _undo_checkout(repo: GitRepo, journal: Journal) -> list[str]:
    """Put the landing's paths in the user's checkout back as the base has them; returns what was done."""
    assert journal.checkout is not None and journal.new is not None
    checkout = Path(journal.checkout)
    said: list[str] = []
    git_dir = Path(git_sync(checkout, "rev-parse", "--absolute-git-dir").stdout.strip() or checkout / ".git")
    stale = git_dir / "index.lock"
    if stale.exists() and stale.stat().st_mtime >= journal.since - 1:
        if held := holders.held_after_waiting(stale):  # a live git is writing the index: never taken from it
            raise LockHeld(f"{stale} is held by a live process (pid {', '.join(map(str, held))}): the checkout was"
                           " left as it is; run the command again once it has ended")
        stale.unlink()
        said.append("removed git's index.lock the killed landing left")
    ok, out = _git(repo.root, "diff", "--name-only", "--no-renames", "-z", journal.old, journal.new)
    paths = [p for p in out.split("\0") if p] if ok else []
    before, landed = _blobs(repo, journal.old, paths), _blobs(repo, journal.new, paths)
    restore, remove, set_aside = _sort(checkout, paths, before, landed, set(journal.present_before))
    aside = git_dir / "autobuild-land-kept"
    for name in set_aside:
        (aside / name).parent.mkdir(parents=True, exist_ok=True)
        os.replace(checkout / name, aside / name)
    if paths:  # the index entries of the landing's paths, as the base has them
        _git(checkout, "reset", "-q", journal.old, "--pathspec-from-file=-", "--pathspec-file-nul",
             stdin="\0".join(paths))
    if restore:
        _git(checkout, "checkout", journal.old, "--pathspec-from-file=-", "--pathspec-file-nul",
             stdin="\0".join(restore))
    _remove(checkout, remove)
    if restore or remove:
        said.append(f"undid the half-done update of {checkout}: {len(restore)} file(s) put back,"
                    f" {len(remove)} added file(s) removed")
    if set_aside:
        said.append(f"{len(set_aside)} file(s) held neither version ({', '.join(set_aside[:5])}): put back, what"
                    f" they held is kept in {aside}")
    return said


def recover(repo: GitRepo) -> list[str]:
    """Finish or undo a landing a dead `land` left (call under the repository lock); returns what was done,
    one line each (empty: there was nothing to do)."""
    journal = read(repo)
    if journal is None:
        return []
    name = journal.ref.removeprefix("refs/heads/")
    said = [f"a landing of {journal.feature} on {name} was interrupted ({journal.step}, pid {journal.pid})"]
    killed = holders.end_landing(journal.tag)  # and waited for: none of them writes after the undo
    if killed:
        said.append(f"stopped {killed} process(es) of the landing (its git, hooks, setup or gate)")
    worktree = Path(journal.worktree)
    if worktree.is_relative_to(repo.worktrees_dir):
        repo.read("worktree", "remove", "--force", "--", str(worktree))
        if worktree.exists():
            shutil.rmtree(worktree, ignore_errors=True)
        repo.read("worktree", "prune")
    current = repo.read("rev-parse", "--verify", "-q", journal.ref).stdout.strip()
    if journal.step == "moving" and journal.new and current == journal.new:
        said.append(f"{name} had moved to {journal.new[:10]}: the landing finished")
    elif journal.step == "moving" and journal.checkout and current == journal.old:
        try:
            said += _undo_checkout(repo, journal)
        except LockHeld as held:  # the journal stays: the next command tries again
            return [*said, str(held)]
        said.append(f"{name} stays at {journal.old[:10]}: land again to land it")
    elif current != journal.old and journal.step == "moving":
        said.append(f"{name} is at {current[:10] or 'nothing'} (neither before nor after the landing): left as is")
    else:
        said.append(f"{name} was not moved (still {journal.old[:10]})")
    clear(repo)
    return said


def finish_interrupted(repo: GitRepo, note: Callable[[str], None]) -> None:
    """`recover` for any command (review, discard, run), telling `note` what it did: under the repository's
    lock, and only when a journal is there; a live `land` holding the lock is left alone (its journal is live)."""
    if not path(repo).is_file():
        return
    try:
        with repo_lock(repo.root, "finish an interrupted land"):
            for line in recover(repo):
                note(line)
    except RunLockedError:
        return


def present_in(checkout: Path, old: str, new: str) -> list[str]:
    """The paths `new` adds over `old` that already hold something in `checkout` (the `moving` step's journal)."""
    ok, out = _git(checkout, "diff", "--name-only", "--no-renames", "--diff-filter=A", "-z", old, new)
    return [name for name in out.split("\0") if name and os.path.lexists(checkout / name)] if ok else []
