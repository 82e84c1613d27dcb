"""The agents' Bash sandbox on the real Claude Code CLI (bubblewrap): a player's command can write its worktree
and nothing of the user's, and what the sandbox refused is reported with the session's result."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents import PlayerInput, SessionLimits, SessionSettings, TaskBrief, run_player
from agents.testing.scripted_model import ScriptedModel
from orchestrator import sandbox
from orchestrator.repo import sandbox_stubs

pytestmark = [pytest.mark.cli,
              pytest.mark.skipif(not sandbox.agents_available(), reason=sandbox.why_unavailable())]


def git_listing(repo: Path) -> list[str]:
    """The user's .git, objects and worktree admin folders aside."""
    return sorted(str(path.relative_to(repo)) for path in (repo / ".git").rglob("*")
                  if path.relative_to(repo / ".git").parts[0] not in ("objects", "worktrees", "logs")
                  and path.name != "index")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def repo_with_a_task_worktree(tmp_path: Path) -> tuple[Path, Path]:
    """The user's repository (one commit of theirs) and a task's worktree in it, as a run makes it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("mine\n")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=u", "-c", "user.email=u@u", "commit", "-qm", "init")
    worktree = repo / ".autobuild/worktrees/FEAT-001/T-1"
    git(repo, "worktree", "add", "-q", "-b", "autobuild/FEAT-001.T-1", str(worktree))
    return repo, worktree


async def test_an_agents_write_outside_its_worktree_is_refused_and_reported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        model_factory: Callable[[dict[str, Any]], ScriptedModel]) -> None:
    repo, worktree = repo_with_a_task_worktree(tmp_path)
    site = repo / ".venv/lib/site-packages"  # the user's venv (git-excluded), as pip would write into it
    site.mkdir(parents=True)
    (site / "__editable__.calc.pth").write_text(f"{repo}\n")
    (repo / ".git/info/exclude").write_text(".venv\n")
    main_before, config_before = git(repo, "rev-parse", "main"), (repo / ".git/config").read_bytes()
    env_dir = worktree.parent / "_env"
    env_dir.mkdir()
    readme_write = {"bash": f"pwd; printf x >> {repo}/README.md"}
    steps = [readme_write,
             # Past what the policy recognises: only the sandbox stands between this and the user's branch.
             {"bash": "G=git; $G update-ref refs/heads/main $($G commit-tree 'HEAD^{tree}' -p HEAD -m rogue)"},
             {"bash": "git config core.hooksPath .husky/_"},
             # What `pip install` does to the user's venv: rewrite the editable install's .pth.
             {"bash": "python3 -c \"open('../../../../.venv/lib/site-packages/__editable__.calc.pth', 'w')"
                      ".write('/elsewhere')\""},
             {"bash": "printf ok > made.txt && printf ok > ../_env/installed.txt"},
             # Again until refused: under load (CI, stops 35 and 36) a Bash call of the CLI failed in its own
             # sandbox setup, or came back "completed with no output" with README.md untouched.
             # The refusal's wording is the shell's: bash "README.md: Read-only file system", zsh (CI's $SHELL)
             # "(eval):1: read-only file system: /.../README.md".
             *[{"when": {"result_matches": r"(?i)README\.md: read-only|read-only file system: \S*README\.md"},
                "then": {"bash": "true"},
                "else": readme_write} for _ in range(3)],
             {"text": "done"}]
    model = model_factory({"sessions": [{"role": "player", "task": "T-1", "steps": steps}]})
    monkeypatch.setenv("ANTHROPIC_BASE_URL", model.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-sandbox")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    settings = SessionSettings(model="claude-sonnet-4-5", retry_attempts=1,
                               limits=SessionLimits(session_timeout_s=60.0, idle_timeout_s=30.0),
                               sandbox_writable=(env_dir,))
    brief = TaskBrief("Feature", "T-1", "Task", ["do it"], [], None)
    git_dir_before, absent = git_listing(repo), sandbox_stubs.absent_stubs(repo)
    result = await run_player(PlayerInput(brief, 1, 10, worktree), settings)
    # The sandbox leaves mount points in the user's .git (an empty read-only config.lock among them, which
    # makes every `git config` of theirs fail): the run removes them once its last session ended.
    sandbox_stubs.remove_stubs(absent)
    assert git_listing(repo) == git_dir_before

    assert result.status == "success", result.errors
    assert (repo / "README.md").read_text() == "mine\n", "the user's file is untouched"
    assert git(repo, "rev-parse", "main") == main_before, "the user's branch did not move"
    assert (repo / ".git/config").read_bytes() == config_before
    assert (site / "__editable__.calc.pth").read_text() == f"{repo}\n", "the user's venv is untouched"
    assert (worktree / "made.txt").read_text() == "ok", "the worktree is writable"
    assert (env_dir / "installed.txt").read_text() == "ok", "the run's environment is writable"
    refused = [denial for denial in result.permission_denials if "sandbox refused a write" in denial]
    if not any("README.md" in line for line in refused):  # pytest.fail's text is never shortened
        results = [record.tool_results for record in model.sessions(role="player")]
        pytest.fail(f"no README.md refusal in {result.permission_denials}; tool results: {results}")
    assert any("refs/heads/main" in line for line in refused), result.permission_denials
    assert any("__editable__.calc.pth" in line for line in refused), result.permission_denials
    git(repo, "config", "user.name", "still works")  # no lock left behind
