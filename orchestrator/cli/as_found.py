"""Exit 2 leaves the repository and the store as they were found: what a run command wrote before it was refused
(a gate that can't run on the base, a missing tool found only when the run starts) is removed before it exits.

`AsFound.note` records, before the run, what a refused run could leave behind: the feature's thread in the
checkpoint store (and the store file itself), `.autobuild/db.json`, the feature's reports folder and worktrees,
`autobuild/<FEAT>*` branches, the repository's lock file and the exclude lines; `undo` removes exactly what
is new since (an existing thread, branch or file is never touched).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.repo.git import GitRepo, feature_branch
from orchestrator.repo.lock import lock_path
from orchestrator.store import traces
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.store.locations import REMEMBERED_DB


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _put_back(path: Path, content: bytes | None) -> None:
    if content is None:
        path.unlink(missing_ok=True)
    elif _read(path) != content:
        path.write_bytes(content)


def _remove_lock_file(path: Path) -> None:
    """The repository lock's file, made by the refused run: removed only while holding its lock (another command
    that holds it keeps it)."""
    with path.open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return
        path.unlink(missing_ok=True)


@dataclass
class AsFound:
    """What a run of `feature` on `repo` with `store` could leave behind, as it was before the run."""

    repo: GitRepo
    feature: str
    thread: str
    store: CheckpointStore
    files: dict[Path, bytes | None] = field(default_factory=dict)
    folders: dict[Path, bool] = field(default_factory=dict)
    branches: set[str] = field(default_factory=set)
    worktrees: set[str] = field(default_factory=set)
    store_existed: bool = False
    thread_known: bool = False

    def _branches(self) -> set[str]:
        prefix = f"refs/heads/{feature_branch(self.feature)}"
        listed = self.repo.read("for-each-ref", "--format=%(refname:short)", prefix, f"{prefix}.*")
        return set(listed.stdout.split())

    def _worktrees(self) -> set[str]:
        return {row["path"] for row in self.repo.worktree_list()}

    def note(self) -> AsFound:
        root = self.repo.root
        exclude = lock_path(root).parent / "info" / "exclude"
        for path in (root / REMEMBERED_DB, lock_path(root), exclude):
            self.files[path] = _read(path)
        for folder in (traces.runs_dir(root, self.feature), self.repo.worktrees_dir / self.feature,
                       self.repo.worktrees_dir, root / ".autobuild"):
            self.folders[folder] = folder.exists()
        self.branches, self.worktrees = self._branches(), self._worktrees()
        self.store_existed = self.store.exists()
        if self.store_existed:
            with self.store.reader() as reader:
                self.thread_known = self.thread in reader.threads()
        return self

    def undo(self) -> None:
        """Remove what the refused run made; called after it released the repository's lock."""
        repo = self.repo
        for made in sorted(self._worktrees() - self.worktrees):
            if Path(made).is_relative_to(repo.worktrees_dir):
                asyncio.run(repo.remove_worktree(Path(made)))
        for name in sorted(self._branches() - self.branches, key=lambda n: n == feature_branch(self.feature)):
            asyncio.run(repo.delete_branch(name))
        if not self.thread_known and self.store.exists():
            if self.store_existed or self.store.is_postgres:
                self.store.delete_threads([self.thread])
            else:
                for suffix in ("", "-wal", "-shm", "-journal"):
                    Path(f"{self.store.path}{suffix}").unlink(missing_ok=True)
        for folder, existed in self.folders.items():
            # Only a folder that is where its name says: `.autobuild` swapped for a link meanwhile would have
            # rmtree remove what the link leads to (the repository's root is resolved, so any link was planted).
            if not existed and folder.exists() and os.path.realpath(folder) == str(folder):
                shutil.rmtree(folder, ignore_errors=True)
        for path, content in self.files.items():
            with contextlib.suppress(OSError):
                if path.name == lock_path(self.repo.root).name and content is None:
                    _remove_lock_file(path)
                else:
                    _put_back(path, content)
