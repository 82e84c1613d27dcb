"""What a commit holds never changes: its file list, a file's text (or its absence) and its tree are read by git once
per GitRepo when asked by full id, and asked again by a name that can move; HEAD is read from git's files."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from orchestrator.repo.git import GitRepo


def _git(where: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=where, check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture
def logged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every git our code starts, one line each (a `git` first on PATH that logs and runs the real one)."""
    folder, log = tmp_path / "bin", tmp_path / "git.log"
    folder.mkdir()
    real = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True, check=True).stdout.strip()
    (folder / "git").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {real} "$@"\n')
    (folder / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return log


def _started(log: Path, what: str) -> int:
    return sum(what in line for line in log.read_text().splitlines()) if log.exists() else 0


def test_a_commits_files_texts_and_tree_are_read_once_and_a_branch_is_read_again(tmp_path: Path,
                                                                                logged: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("one\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one")
    sha, tree = _git(repo, "rev-parse", "HEAD"), _git(repo, "rev-parse", "HEAD^{tree}")
    git = GitRepo(repo)
    logged.unlink(missing_ok=True)  # from here on, only what our code starts

    async def asked() -> tuple[object, ...]:
        return (await git.files_at(sha), await git.show_file(sha, "a.txt"), await git.show_file(sha, "gone.txt"),
                await git.tree_of(sha), await git.head(repo))

    first, again = asyncio.run(asked()), asyncio.run(asked())
    assert first == again == (["a.txt"], "one\n", None, tree, sha)
    for what in ("ls-tree", f"{sha}:a.txt", f"{sha}:gone.txt", f"{sha}^{{tree}}"):
        assert _started(logged, what) == 1, what
    assert _started(logged, "rev-parse HEAD") == 0, "HEAD is read from the worktree's files"

    (repo / "a.txt").write_text("two\n")
    _git(repo, "commit", "-qam", "two")
    assert asyncio.run(git.show_file("main", "a.txt")) == "two\n", "a branch is a name that moves: asked again"
    assert asyncio.run(git.head(repo)) == _git(repo, "rev-parse", "HEAD") != sha
    assert asyncio.run(git.show_file(sha, "a.txt")) == "one\n"
