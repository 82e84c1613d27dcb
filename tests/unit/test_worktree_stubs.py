"""A killed agent session leaves its sandbox's mount points in the worktree (empty `.bashrc`, `.claude/hooks`...):
a task's commit never takes them, and never touches a file of those names the repository tracks or that has
content (CI of stop 37: kill -9 mid-session, then resume, merged 23 empty files)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agents.testing.repos import git
from orchestrator.repo.git import GitRepo
from orchestrator.repo.sandbox_stubs import WORKTREE_STUBS


def repo_with_worktree(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Path]:
    """A repository with `files` committed, and a run's worktree of it (a task branch)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for name, text in files.items():
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=u", "-c", "user.email=u@u", "commit", "-qm", "init")
    worktree = repo / ".autobuild/worktrees/FEAT-001/T-1"
    git(repo, "worktree", "add", "-q", "-b", "autobuild/FEAT-001.T-1", str(worktree))
    return repo, worktree


def test_a_commit_leaves_out_the_sandboxs_empty_mount_points_and_nothing_else(tmp_path: Path) -> None:
    # .gitmodules: the repository's own, tracked, empty
    repo, worktree = repo_with_worktree(tmp_path, {".gitmodules": "", "a.py": "A = 1\n"})
    for name in WORKTREE_STUBS:
        path = worktree / name
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("")
    (worktree / ".zshrc").write_text("export A=1\n")  # content: the player's own file, kept
    (worktree / "a.py").write_text("A = 2\n")
    asyncio.run(GitRepo(repo).commit_all(worktree, "work"))
    committed = set(git(worktree, "ls-tree", "-r", "--name-only", "HEAD").split())
    assert committed == {".gitmodules", "a.py", ".zshrc"}
    assert not (worktree / ".bashrc").exists() and not (worktree / ".claude").exists()


def test_nothing_is_removed_through_a_folder_an_agent_made_a_link(tmp_path: Path) -> None:
    """`.claude -> ~/.claude` in the worktree: the user's empty `settings.json` there is not the sandbox's."""
    repo, worktree = repo_with_worktree(tmp_path, {"a.py": "A = 1\n"})
    users = tmp_path / "home" / ".claude"
    users.mkdir(parents=True)
    for name in ("settings.json", "scheduled_tasks.json", "loop.md"):
        (users / name).write_text("")
    (worktree / ".claude").symlink_to(users)
    (worktree / ".bashrc").write_text("")  # the sandbox's own stub beside it: still removed
    asyncio.run(GitRepo(repo).commit_all(worktree, "work"))
    assert sorted(p.name for p in users.iterdir()) == ["loop.md", "scheduled_tasks.json", "settings.json"]
    assert not (worktree / ".bashrc").exists()
