"""Submodules in a run's worktrees: filled from the main checkout's own copies (no network), and a task's changes
inside one found and undone (a submodule is another repository: a task can neither commit nor merge them, and
the gate must never test uncommitted work).

Measured with git 2.39: `git -c protocol.file.allow=always -c submodule.<name>.url=<main checkout's submodule>
-c submodule.<name>.active=true submodule update -- <path>` run in a worktree clones from that local copy into
the worktree's own git dir (`.git/worktrees/<wt>/modules/`), and leaves `.git/config` and `.git/modules` of the
user untouched (`submodule init` would write the shared `.git/config`: never used)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from agents.bounded import CONFIG_FILE, read_text_bounded
from orchestrator.errors import GitError
from orchestrator.repo.git import GitRepo

_SECTION = re.compile(r'^\s*\[submodule\s+"(.+)"\s*\]\s*$')
_PATH = re.compile(r"^\s*path\s*=\s*(.+?)\s*$")


def submodules(checkout: Path) -> dict[str, str]:
    """The submodules `.gitmodules` of `checkout` declares: path -> name (read here, no subprocess: graph nodes
    call this)."""
    try:
        text = read_text_bounded(checkout / ".gitmodules", CONFIG_FILE)  # a FIFO there never blocks the loop
    except OSError:
        return {}
    found: dict[str, str] = {}
    name = None
    for line in text.splitlines():
        if (section := _SECTION.match(line)) is not None:
            name = section.group(1)
        elif name is not None and (path := _PATH.match(line)) is not None:
            found[path.group(1).strip('"')] = name
    return found


def uninitialised(root: Path) -> list[str]:
    """Submodules the main checkout has not checked out: worktrees get them empty (no network is used)."""
    return [path for path in submodules(root) if not (root / path / ".git").exists()]


async def init_submodules(repo: GitRepo, worktree: Path, paths: list[str] | None = None) -> list[str]:
    """Check out the worktree's submodules (all, or `paths`) at their recorded commits from the main checkout's
    copies; returns a note for each that couldn't be (not initialised in the main checkout: left empty)."""
    notes = []
    for path, name in submodules(worktree).items():
        if paths is not None and path not in paths:
            continue
        source = repo.root / path
        if not (source / ".git").exists():
            notes.append(f"submodule {path} is not initialised in the main checkout (`git submodule update --init"
                         f" {path}` there): worktrees get it empty")
            continue
        done = await repo.git("-c", "protocol.file.allow=always", "-c", f"submodule.{name}.url={source}",
                              "-c", f"submodule.{name}.active=true", "submodule", "update", "--force", "--", path,
                              cwd=worktree, check=False)
        if not done.ok:
            notes.append(f"submodule {path} could not be checked out from the main checkout: {done.tail(3)}")
    return notes


async def submodule_changes(repo: GitRepo, worktree: Path, base: str) -> list[str]:
    """Submodules the worktree changed since `base`: edited or untracked files inside, or a moved commit."""
    paths = submodules(worktree)
    if not paths:
        return []
    status = await repo.git("status", "--porcelain", "--ignore-submodules=none", cwd=worktree, check=False)
    dirty = {line[3:].strip() for line in status.stdout.splitlines()} & set(paths)
    # Files written into a submodule that is not checked out: git sees none of them, the gate would.
    dirty |= {path for path in paths if not (worktree / path / ".git").exists() and _has_files(worktree / path)}
    committed = set(await repo.changed_files(worktree, base)) & set(paths)
    return sorted(dirty | committed)


def _has_files(folder: Path) -> bool:
    try:
        return folder.is_dir() and any(folder.iterdir())
    except OSError:
        return False


async def undo_submodule_changes(repo: GitRepo, worktree: Path, base: str, paths: list[str]) -> None:
    """Put the submodules back at `base`'s recorded commits, without the files changed inside them (the caller
    commits the worktree afterwards). Only in a run's worktree."""
    if not worktree.resolve().is_relative_to(repo.worktrees_dir.resolve()):
        raise GitError(f"refusing to write in {worktree}: only worktrees under {repo.worktrees_dir} are ours")
    for path in paths:
        # The index entry back to base's commit (`restore_paths` can't: a gitlink's commit is not in this
        # repository's objects, so it would delete the submodule).
        await repo.git("reset", "-q", base, "--", path, cwd=worktree)
        inside = worktree / path
        if (inside / ".git").exists():
            await repo.git("reset", "-q", "--hard", cwd=inside, check=False)
            await repo.git("clean", "-q", "-fdx", cwd=inside, check=False)
        elif inside.is_dir():  # not checked out: back to the empty folder git made
            for child in inside.iterdir():
                shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    await init_submodules(repo, worktree, paths)


def refusal(paths: list[str]) -> str:
    """The turn feedback for changes inside submodules."""
    return (f"You changed files inside the submodule(s) {', '.join(paths)}. A submodule is another repository:"
            " this task can neither commit nor merge changes there, and the gate never tests uncommitted work,"
            " so they were undone. Make the change in this repository's own files; if the submodule itself must"
            " change, report a blocker saying what a person must do there.")
