"""One gate run asks for the same `diff --name-status` three times (spec check, code screen, clean room): it is
remembered by the two commits, HEAD read from git's files; a new commit, a moved branch or a base that is no commit
is asked again."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from orchestrator.repo.git import GitRepo
from orchestrator.repo.queries import head_commit


def _git(where: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=where, check=True,
                          capture_output=True, text=True).stdout.strip()


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("a\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one")
    return repo


def test_head_is_read_from_loose_packed_and_detached_heads(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    assert head_commit(repo) == _git(repo, "rev-parse", "HEAD")
    _git(repo, "pack-refs", "--all")
    assert not (repo / ".git/refs/heads/main").exists()
    assert head_commit(repo) == _git(repo, "rev-parse", "HEAD")
    worktree = tmp_path / "wt"
    _git(repo, "worktree", "add", "-q", "--detach", str(worktree))
    (worktree / "b.txt").write_text("b\n")
    _git(worktree, "add", "-A")
    _git(worktree, "commit", "-qm", "two")
    assert head_commit(worktree) == _git(worktree, "rev-parse", "HEAD") != head_commit(repo)
    _git(repo, "checkout", "-q", "--orphan", "unborn")
    assert head_commit(repo) is None


def test_a_new_commit_is_a_new_answer(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    base = _git(repo, "rev-parse", "HEAD")
    git = GitRepo(repo)
    assert asyncio.run(git.name_status(repo, base)) == ""
    (repo / "b.txt").write_text("b\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "two")
    assert asyncio.run(git.name_status(repo, base)).split() == ["A", "b.txt"]
    _git(repo, "reset", "-q", "--hard", base)
    assert asyncio.run(git.name_status(repo, base)) == ""
    assert asyncio.run(git.name_status(repo, "main")) == ""  # a ref: asked, never remembered


def test_the_same_commits_are_not_asked_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    base = _git(repo, "rev-parse", "HEAD")
    (repo / "b.txt").write_text("b\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "two")
    git = GitRepo(repo)
    first = asyncio.run(git.name_status(repo, base))
    files = asyncio.run(git.changed_files(repo, base))
    folder = tmp_path / "no-git"  # a git that fails: the answer now is the remembered one
    folder.mkdir()
    (folder / "git").write_text("#!/bin/sh\nexit 3\n")
    (folder / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:/usr/bin:/bin")
    assert asyncio.run(git.name_status(repo, base)) == first == "A\tb.txt\n"
    assert asyncio.run(git.changed_files(repo, base)) == files == ["b.txt"]  # the task's files after its commit too
