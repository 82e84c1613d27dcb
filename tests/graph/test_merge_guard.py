"""The worktree guard (one git call per proof, remembered while what git resolves it from is unchanged) still
refuses every place a write must not go: a plain folder, a worktree of another repository, a worktree on a branch
that is not ours, a detached HEAD unless allowed. Real git repos under tmp_path."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from agents.testing.repos import git, make_sample_repo
from orchestrator.repo import watch
from orchestrator.repo.footing import footing
from orchestrator.repo.git import GitRepo
from tests.graph.harness import unsandboxed


def _repo(path: Path) -> GitRepo:
    return GitRepo(make_sample_repo(path, files={"a.txt": "a\n"}, venv=False))


async def test_the_guard_accepts_our_worktrees_and_refuses_everything_else(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    ours = repo.worktrees_dir / "F" / "T"
    await repo.add_worktree(ours, "autobuild/F.T", "HEAD")
    assert await repo.worktree_problem(ours) is None

    plain = repo.worktrees_dir / "F" / "plain"
    plain.mkdir(parents=True)
    (plain / ".git").write_text("gitdir: /nowhere\n")
    assert "does not resolve" in str(await repo.worktree_problem(plain))

    theirs = _repo(tmp_path / "other")
    foreign = repo.worktrees_dir / "F" / "foreign"
    git(theirs.root, "worktree", "add", "-q", "-b", "autobuild/x", str(foreign))
    assert "belongs to another repository" in str(await repo.worktree_problem(foreign))

    user = repo.worktrees_dir / "F" / "user"
    git(repo.root, "worktree", "add", "-q", "-b", "feature", str(user))
    assert "is on refs/heads/feature, not an autobuild/ branch" in str(await repo.worktree_problem(user))

    detached = repo.worktrees_dir / "F" / "detached"
    await repo.add_detached_worktree(detached, repo.rev("HEAD"))
    assert "a detached HEAD" in str(await repo.worktree_problem(detached))
    assert await repo.worktree_problem(detached, detached_ok=True) is None


def _counting_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `git` first on PATH that logs each call, then runs the real one."""
    folder, log = tmp_path / "bin", tmp_path / "git-calls.log"
    folder.mkdir()
    (folder / "git").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {shutil.which("git")} "$@"\n')
    (folder / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return log


def _asked(log: Path) -> int:
    return sum("--show-toplevel" in line for line in log.read_text().splitlines()) if log.exists() else 0


def _keep_times(path: Path, write: Callable[[], None]) -> None:
    """Rewrite a file and put its modification time back, as a careful attacker would."""
    before = path.stat()
    write()
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


async def test_a_proven_worktree_is_not_asked_again_until_what_git_resolves_it_from_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path / "repo")
    ours = repo.worktrees_dir / "F" / "T"
    await repo.add_worktree(ours, "autobuild/F.T", "HEAD")
    log = _counting_git(tmp_path, monkeypatch)
    assert await repo.worktree_problem(ours) is None
    assert await repo.worktree_problem(ours) is None
    await repo.commit_all(ours, "nothing")  # our own writes don't disturb what the proof rests on
    assert await repo.worktree_problem(ours) is None
    assert _asked(log) == 1, "one git call proved it; the checks after it were answered from the proof"

    admin = Path(git(ours, "rev-parse", "--absolute-git-dir").strip())
    # The worktree's HEAD moved to a user branch, same size and mtime as before: its ctime still tells.
    git(repo.root, "branch", "autobuild/F.U")
    git(repo.root, "branch", "user/F.T-")  # a name as long as "autobuild/F.T"
    _keep_times(admin / "HEAD", lambda: (admin / "HEAD").write_text("ref: refs/heads/user/F.T-\n"))
    assert "not an autobuild/ branch" in str(await repo.worktree_problem(ours))
    (admin / "HEAD").write_text("ref: refs/heads/autobuild/F.T\n")
    assert await repo.worktree_problem(ours) is None

    # The shared config changed (it can say where a worktree is): git is asked again.
    asked = _asked(log)
    git(repo.root, "config", "core.worktree", str(repo.root))
    assert await repo.worktree_problem(ours) is None and _asked(log) == asked + 1

    # The worktree's .git file swapped for one naming the user's own git folder.
    dot_git = ours / ".git"
    _keep_times(dot_git, lambda: dot_git.write_text(f"gitdir: {repo.root / '.git'}\n"))
    assert "does not resolve to its own worktree" in str(await repo.worktree_problem(ours))
    assert _asked(log) == 5, "every change was put to git"
    assert await repo.worktree_problem(ours) is not None and _asked(log) == 6, "a refusal is never remembered"


async def test_a_watched_operation_starts_from_the_last_snapshot_and_always_ends_on_a_new_one(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    first = await watch.take(repo)
    assert await watch.take(repo) is first, "within REUSE_S the last snapshot is the start"
    git(repo.root, "branch", "mine")  # the user, during the operation
    assert await watch.since(repo, first) == [f"refs/heads/mine was created at {repo.rev('main')[:10]}"]
    after = await watch.take(repo)
    assert after is not first and "refs/heads/mine" in after.refs.refs, "the end of one is the start of the next"
    assert await watch.since(repo, after) == []
    watch._latest[repo.root] = (time.monotonic() - watch.REUSE_S - 1, after)
    assert await watch.take(repo) is not after, "an older one is not reused"


async def test_a_worktree_file_made_a_link_is_checked_again_when_what_it_points_to_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path / "repo")
    ours = repo.worktrees_dir / "F" / "T"
    await repo.add_worktree(ours, "autobuild/F.T", "HEAD")
    admin = Path(git(ours, "rev-parse", "--absolute-git-dir").strip())
    target = tmp_path / "elsewhere-commondir"
    target.write_text((admin / "commondir").read_text())
    (admin / "commondir").unlink()
    (admin / "commondir").symlink_to(target)  # the link itself never changes again
    assert await repo.worktree_problem(ours) is None, "git follows the link: still this repository"
    log = _counting_git(tmp_path, monkeypatch)
    theirs = _repo(tmp_path / "other")
    target.write_text(f"{theirs.root / '.git'}\n")
    assert await repo.worktree_problem(ours) is not None
    assert _asked(log) == 1


async def test_without_the_sandboxes_every_watched_operation_starts_from_a_snapshot_of_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unsandboxed(tmp_path, monkeypatch)  # there a change seen around a session fails its task: never misattributed
    repo = _repo(tmp_path / "repo")
    first = await watch.take(repo)
    assert await watch.take(repo) is not first


def test_a_reftable_worktree_is_never_answered_from_a_remembered_proof(tmp_path: Path) -> None:
    common, worktree = tmp_path / "repo/.git", tmp_path / "repo/.autobuild/worktrees/F/T"
    admin = common / "worktrees/T"
    admin.mkdir(parents=True)
    worktree.mkdir(parents=True)
    (worktree / ".git").write_text(f"gitdir: {admin}\n")
    (admin / "HEAD").write_text("ref: refs/heads/autobuild/F.T\n")
    assert footing(worktree, common) == footing(worktree, common), "files backend: the same footing"
    (admin / "HEAD").write_text("ref: refs/heads/.invalid\n")  # reftable: HEAD lives in the worktree's stack
    assert footing(worktree, common) != footing(worktree, common)
