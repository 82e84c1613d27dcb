"""The worktree guard (one git call per check since issue 24) still refuses every place a write must not go: a
plain folder, a worktree of another repository, a worktree on a branch that is not ours, a detached HEAD unless
allowed. Real git repos under tmp_path."""

from __future__ import annotations

from pathlib import Path

from orchestrator.cli.demo import git, make_sample_repo
from orchestrator.repo.git import GitRepo


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
