"""Agent sessions on the real CLI: timeouts, stalls, retries, auth, limits, policy, and process hygiene."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agents import (
    AgentSetupError,
    CoachInput,
    PlayerInput,
    SessionLimits,
    SessionSettings,
    TaskBrief,
    run_coach,
    run_player,
)
from agents.reaper import reap_orphans, tagged_pids
from agents.testing.scripted_model import ScriptedModel
from tests import schemas
from tests.cli_in_process import cli_in_process

pytestmark = pytest.mark.cli

HANG = "python3 -c 'import time; time.sleep(600)'"


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    path = tmp_path / "wt"
    path.mkdir()
    return path


@pytest.fixture
def use_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
              model_factory: Callable[[dict[str, Any]], ScriptedModel]) -> Iterator[Callable[..., ScriptedModel]]:
    def start(*steps: dict[str, Any]) -> ScriptedModel:
        model = model_factory({"sessions": [{"role": "player", "task": "T-1", "steps": list(steps)}]})
        monkeypatch.setenv("ANTHROPIC_BASE_URL", model.base_url)
        return model

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-sessions")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    yield start


def settings(events: list[dict[str, Any]] | None = None, attempts: int = 3, **limits: Any) -> SessionSettings:
    return SessionSettings(
        model="claude-sonnet-4-5",
        limits=SessionLimits(**({"session_timeout_s": 60.0, "idle_timeout_s": 30.0} | limits)),
        retry_attempts=attempts,
        retry_max_wait_s=0.5,
        on_event=events.append if events is not None else None,
    )


async def play(worktree: Path, session: SessionSettings) -> Any:
    brief = TaskBrief("Feature", "T-1", "Task", ["do it"], [], None)
    return await run_player(PlayerInput(brief, 1, 10, worktree), session)


def my_session_processes() -> dict[int, str]:
    return {pid: tag for pid, tag in tagged_pids().items() if tag.startswith(f"{os.getpid()}.")}


async def test_hung_tool_hits_session_timeout_and_leaves_no_process(worktree: Path, use_model: Any) -> None:
    use_model({"bash": HANG})
    started = time.monotonic()
    # Long enough that the CLI has started and the command runs before it (3 s, then 8 s, were flaky under load: the
    # session timed out before the Bash call began, so no command was stuck yet).
    result = await play(worktree, settings(attempts=3, session_timeout_s=15.0))
    elapsed = time.monotonic() - started
    assert result.status == "timeout" and result.attempts == 1, "a hung command is not retried as the session"
    assert result.stuck_commands == [f"Bash: {HANG}"]
    assert "session timeout" in result.errors[-1] and HANG in result.errors[-1]
    assert elapsed < 15.0 + 15.0, elapsed  # timeout + interrupt + grace + kill, generously bounded
    assert my_session_processes() == {}


async def test_stalled_stream_hits_idle_timeout(worktree: Path, use_model: Any) -> None:
    use_model({"text": "thinking", "stall": True})
    result = await play(worktree, settings(attempts=1, idle_timeout_s=2.0))
    assert result.status == "idle_timeout"
    assert my_session_processes() == {}


async def test_overloaded_twice_then_ok(worktree: Path, use_model: Any) -> None:
    model = use_model(
        {"tool": {"name": "start_implementation", "input": {"approach": "x"}}, "fault": {"status": 529, "times": 2}},
        {"text": "done"},
    )
    events: list[dict[str, Any]] = []
    result = await play(worktree, settings(events))
    assert result.status == "success" and result.attempts == 3
    retries = [e for e in events if e["event"] == "retry"]
    assert [e["reason"] for e in retries] == ["overloaded (529)", "overloaded (529)"]
    assert [r.outcome for r in model.requests][:3] == ["fault 529", "fault 529", "ok"]


async def test_rate_limit_persisting_is_bounded(worktree: Path, use_model: Any) -> None:
    model = use_model({"text": "x", "fault": {"status": 429, "times": 1000}})
    result = await play(worktree, settings(attempts=2))
    assert result.status == "api_error" and result.attempts == 2
    assert "429" in result.errors[-1]
    # One retry layer: the CLI itself does not retry (CLAUDE_CODE_MAX_RETRIES=0), so 2 attempts = 2 requests.
    assert len(model.requests) == 2


async def test_unauthorized_aborts_without_retry(worktree: Path, use_model: Any) -> None:
    model = use_model({"text": "x", "fault": {"status": 401, "times": 1000}})
    result = await play(worktree, settings(attempts=5))
    assert result.status == "auth_error" and result.attempts == 1
    assert len(model.requests) == 1


async def test_connection_refused_is_bounded(worktree: Path, monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # discard port: nothing listens
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    result = await play(worktree, settings(attempts=2))
    assert result.status == "api_error" and result.attempts == 2
    assert my_session_processes() == {}


async def test_missing_cli_is_a_clear_error(worktree: Path, use_model: Any, tmp_path: Path) -> None:
    use_model({"text": "x"})
    session = settings()
    session.cli_path = str(tmp_path / "no-such-claude")
    with pytest.raises(AgentSetupError, match="CLI not found"):
        await play(worktree, session)


async def test_max_turns_and_budget_are_outcomes(worktree: Path, use_model: Any) -> None:
    # Each step a tool call that continues the session: a write, which starts no shell (a Bash step costs a login
    # shell and the CLI's shell snapshot, ~0.5 CPU-s, and the limits don't depend on which tool ran).
    use_model(*[{"write": {"path": f"step{i}.txt", "content": f"step {i}\n"}} for i in range(6)])
    result = await play(worktree, settings(max_turns=2))
    assert result.status == "max_turns"
    result = await play(worktree, settings(max_budget_usd=0.000001))
    assert result.status == "budget"


async def test_write_outside_worktree_denied_and_model_told(worktree: Path, use_model: Any,
                                                           tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    model = use_model({"write": {"path": str(outside), "content": "x"}}, {"bash": "git push origin main"},
                      {"text": "done"})
    result = await play(worktree, settings())
    assert not outside.exists()
    assert any("outside the task's worktree" in d for d in result.permission_denials)
    assert any("git push is not allowed" in d for d in result.permission_denials)
    told = [r.tool_results[0] for r in model.requests if r.step in (1, 2)]
    assert "outside the task's worktree" in told[0] and "git push is not allowed" in told[1]


async def test_cleanup_finishes_when_cancelled_twice(worktree: Path, use_model: Any) -> None:
    use_model({"bash": HANG})
    task = asyncio.create_task(play(worktree, settings(attempts=1)))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # polling /proc: there is no event to wait on
        if any(b"time.sleep(600)" in _cmdline(p) for p in my_session_processes()):
            break
        await asyncio.sleep(0.1)
    assert my_session_processes(), "the hung tool should be running"
    task.cancel()
    await asyncio.sleep(0.3)
    task.cancel()  # a second Ctrl+C while the first cleanup is still running
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert my_session_processes() == {}


def test_reaper_kills_what_a_crashed_predecessor_left(tmp_path: Path) -> None:
    dead_owner = _dead_pid()
    env = dict(os.environ, AUTOBUILD_SESSION_TAG=f"{dead_owner}.leftover")
    orphan = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], env=env,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and orphan.pid not in tagged_pids():
            time.sleep(0.05)
        assert reap_orphans(grace_s=2.0) >= 1
        assert orphan.wait(timeout=10) is not None
    finally:
        if orphan.poll() is None:
            orphan.kill()
            orphan.wait()


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


async def test_each_role_is_offered_only_its_own_tools_and_a_call_outside_it_is_a_violation(
        worktree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        model_factory: Callable[[dict[str, Any]], ScriptedModel]) -> None:
    model = model_factory({"sessions": [
        {"role": "player", "task": "T-1", "steps": [
            {"tool": {"name": "record_decision", "input": {"task_id": "T-1", "decision": "approve",
                                                             "rationale": "I approve myself"}}},
            {"text": "done"}]},
        {"role": "coach", "task": "T-1", "steps": [
            {"tool": {"name": "record_decision", "input": {"task_id": "T-1", "decision": "approve",
                                                             "rationale": "fine"}}},
            {"text": "done"}]},
    ]})
    monkeypatch.setenv("ANTHROPIC_BASE_URL", model.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-sessions")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    brief = TaskBrief("Feature", "T-1", "Task", ["do it"], [], None)
    player = await run_player(PlayerInput(brief, 1, 10, worktree), settings(attempts=1))
    coach = await run_coach(CoachInput(brief, 1, worktree, None, ""), settings(attempts=1))
    offered = {r.role: {t for t in r.tools if t.startswith("mcp__autobuild__")} for r in model.requests if r.tools}
    assert offered == {"player": {"mcp__autobuild__start_implementation", "mcp__autobuild__report_progress"},
                       "coach": {"mcp__autobuild__record_decision"}}
    refused = [call for call in player.tool_calls if not call.accepted]
    assert [(c.name, c.error) for c in refused] == [
        ("record_decision", "only the coach may call record_decision; you are the player")]
    assert player.report is None and coach.report is not None and coach.report["decision"] == "approve"


async def test_the_repos_permission_denials_apply_and_nothing_else_of_its_settings(worktree: Path,
                                                                                  use_model: Any) -> None:
    settings_dir = worktree / ".claude"
    settings_dir.mkdir()
    (settings_dir / "settings.json").write_text(json.dumps({
        "permissions": {"deny": ["Bash(touch:*)"]},
        "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "touch hooked.txt"}]}]},
    }))
    use_model({"bash": "touch denied.txt"}, {"bash": "echo allowed > allowed.txt"}, {"text": "done"})
    result = await play(worktree, settings(attempts=1))
    assert result.status == "success"
    assert (worktree / "allowed.txt").is_file()
    assert not (worktree / "denied.txt").exists(), "the repo's permissions.deny applies"
    assert not (worktree / "hooked.txt").exists(), "the repo's hooks never run"


async def test_a_transient_error_mid_session_continues_the_session_instead_of_restarting_it(
        worktree: Path, use_model: Any) -> None:
    model = use_model(
        {"write": {"path": "first.txt", "content": "1\n"}},
        {"write": {"path": "second.txt", "content": "2\n"}},
        {"tool": {"name": "report_progress", "input": {"task_id": "T-1", "files_modified": ["first.txt", "second.txt"],
                                                        "implementation_notes": "x"}},
         "fault": {"status": 529, "times": 1}},
        {"text": "done"},
    )
    events: list[dict[str, Any]] = []
    result = await play(worktree, settings(events))
    assert result.status == "success" and result.attempts == 2, result.errors
    steps = [(r.step, r.outcome) for r in model.requests]
    assert steps.count((0, "ok")) == 1, f"the session's first call was made once: {steps}"
    assert (2, "fault 529") in steps and (2, "ok") in steps
    assert result.report is not None and set(result.files_modified) >= {"first.txt", "second.txt"}
    retries = [e for e in events if e["event"] == "retry"]
    assert retries and retries[0]["continues"] and "continuing session" in retries[0]["how"]


async def test_a_claude_code_login_without_an_api_key_drives_a_session(
        worktree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        model_factory: Callable[[dict[str, Any]], ScriptedModel]) -> None:
    model = model_factory({"sessions": [{"role": "player", "task": "T-1", "steps": [{"text": "done"}]}]})
    config = tmp_path / "claude-login"
    config.mkdir()
    expires = int((time.time() + 86400) * 1000)
    (config / ".credentials.json").write_text(json.dumps({"claudeAiOauth": {
        "accessToken": "sk-ant-oat01-fake-token-for-tests", "refreshToken": "sk-ant-ort01-fake",
        "expiresAt": expires, "scopes": ["user:inference", "user:profile"], "subscriptionType": "max"}}))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", model.base_url)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    result = await play(worktree, settings(attempts=1))
    assert result.status == "success", result.errors
    assert [r.outcome for r in model.requests if r.role == "player"] == ["ok"]
    # `main` in this process (on a thread: this test's loop is running), with the same login and still no key.
    doctor = await asyncio.to_thread(cli_in_process, tmp_path, "doctor", "--repo", str(worktree), "--db",
                                     str(tmp_path / "db.sqlite"), "--json", model=model, ANTHROPIC_API_KEY="",
                                     CLAUDE_CONFIG_DIR=str(config))
    found = {c["check"]: c for c in schemas.valid("doctor", doctor.stdout)}
    assert found["credentials"]["ok"] and "Claude Code login (max subscription)" in found["credentials"]["detail"]
    assert found["model call"]["ok"], "and the login works: the model answered"
    assert "fake" not in doctor.stdout + doctor.stderr, "no secret is shown"


@pytest.mark.heavy  # a second case of its family in `make test`: kept under 5 minutes
async def test_the_repos_hooks_run_only_when_asked_for(worktree: Path, use_model: Any) -> None:
    settings_dir = worktree / ".claude"
    settings_dir.mkdir()
    (settings_dir / "settings.json").write_text(json.dumps({
        "env": {"HOOK_LEAK": "1"}, "apiKeyHelper": "echo stolen",
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "touch hooked.txt"}]}]},
    }))
    use_model({"bash": "echo $HOOK_LEAK > env.txt"}, {"text": "done"})
    asked = dataclasses.replace(settings(attempts=1), repo_hooks=True)
    result = await play(worktree, asked)
    assert result.status == "success", result.errors
    assert (worktree / "hooked.txt").is_file(), "with --repo-hooks the repo's hook ran"
    assert (worktree / "env.txt").read_text().strip() == "", "its env never applies"
