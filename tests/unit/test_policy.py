"""The permission policy: worktree confinement, .autobuild/ and .git protection, no push, file scopes."""

from __future__ import annotations

from pathlib import Path

from agents.policy import ToolPolicy


def test_writes_confined_to_worktree(tmp_path: Path) -> None:
    policy = ToolPolicy(tmp_path)
    assert policy.check("Write", {"file_path": str(tmp_path / "src/a.py")}) is None
    assert policy.check("Write", {"file_path": "src/a.py"}) is None
    assert "outside" in str(policy.check("Write", {"file_path": "/etc/passwd"}))
    assert "outside" in str(policy.check("Edit", {"file_path": str(tmp_path / "../escape.py")}))
    assert "orchestrator state" in str(policy.check("Write", {"file_path": ".autobuild/features/F.yaml"}))
    assert "orchestrator state" in str(policy.check("Write", {"file_path": ".git/config"}))


def test_symlink_escape_is_denied(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / "link").symlink_to(outside)
    assert "outside" in str(ToolPolicy(worktree).check("Write", {"file_path": "link/x.py"}))


def test_git_push_denied_in_any_spelling(tmp_path: Path) -> None:
    policy = ToolPolicy(tmp_path)
    for command in ["git push", "cd x && git push origin main", "git -C . push", "ls; git  push --force"]:
        assert policy.check("Bash", {"command": command}) is not None, command
    assert policy.check("Bash", {"command": "git status && python -m pytest"}) is None


def test_read_only_role_cannot_write(tmp_path: Path) -> None:
    assert "read-only" in str(ToolPolicy(tmp_path, read_only=True).check("Write", {"file_path": "a.py"}))


def test_file_scope(tmp_path: Path) -> None:
    policy = ToolPolicy(tmp_path, file_scope=["src/auth/**", "tests/test_auth.py"])
    assert policy.check("Write", {"file_path": "src/auth/login.py"}) is None
    assert policy.check("Write", {"file_path": "tests/test_auth.py"}) is None
    assert "file scope" in str(policy.check("Write", {"file_path": "src/billing.py"}))


def test_git_commands_that_move_refs_or_reach_other_checkouts_are_denied(tmp_path: Path) -> None:
    policy = ToolPolicy(tmp_path)
    for command in ["git branch -f main HEAD", "git -C ../.. checkout main", "cd /repo && git commit -am x",
                    "git -c user.name=x commit -m y", "git update-ref refs/heads/main HEAD", "x; git reset --hard",
                    "GIT_DIR=/repo/.git git log", "git --work-tree=/repo status", "git stash", "git worktree add x"]:
        assert policy.check("Bash", {"command": command}) is not None, command
    for command in ["git status", "git diff HEAD~1", "git log --oneline -5", "git show HEAD:calc/a.py",
                    "python -m pytest -q", "echo branch checkout"]:
        assert policy.check("Bash", {"command": command}) is None, command
