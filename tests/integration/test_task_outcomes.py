"""Task outcomes through `python -m orchestrator run`: aborts with reports, blockers, hygiene after SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from agents.reaper import tagged_pids
from agents.testing.repos import make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from tests.cli_in_process import cli_in_process
from tests.conftest import CliRun, approve_scenario, cli_env, git, one_task_plan

pytestmark = pytest.mark.cli

BLOCKER = ("Stopping.\n<blocker>\ndescription: needs the PAYMENTS_KEY secret\naction: add PAYMENTS_KEY to .env\n"
           "resume: rerun the task\n</blocker>")


def run_feature(
    tmp_path: Path, run_cli: Callable[..., CliRun], model: ScriptedModel, *args: str
) -> tuple[Path, CliRun]:
    repo = tmp_path / "repo"
    result = run_cli("run", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "ck.sqlite"), *args, model=model)
    return repo, result


def report_text(repo: Path, task: str | None = "TASK-001") -> str:
    return (repo / ".autobuild/runs/FEAT-001" / (task or "") / "AUTO-RUN.md").read_text()


@pytest.mark.heavy
def test_agent_max_turns_aborts_with_report(tmp_path: Path, model_factory: Callable[..., ScriptedModel],
                                            run_cli: Callable[..., CliRun]) -> None:
    make_sample_repo(tmp_path / "repo", plan=one_task_plan())
    # The player prompt allows 60 agent turns; this player loops on tool calls forever.
    model = model_factory({"sessions": [{"role": "player", "steps": [{"bash": "echo again"}] * 80}]})
    repo, result = run_feature(tmp_path, run_cli, model)
    assert result.returncode == 1, result.stdout + result.stderr
    text = report_text(repo)
    assert "**Status:** failed" in text and "max turns" in text
    assert not any(r.role == "coach" for r in model.requests), "no coach session for a failed player"


@pytest.mark.heavy
def test_sigkill_of_orchestrator_leaves_no_process(tmp_path: Path,
                                                   model_factory: Callable[..., ScriptedModel]) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=one_task_plan())
    model = model_factory({"sessions": [{"role": "player", "steps": [
        {"bash": "python3 -c 'import time; time.sleep(600)'"}]}]})
    proc = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "run", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "db")],
        env=cli_env(model, tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    owned: dict[int, str] = {}
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            owned = {p: t for p, t in tagged_pids().items() if t.startswith(f"{proc.pid}.")}
            if any(b"time.sleep(600)" in _cmdline(p) for p in owned):
                break
            time.sleep(0.1)
        assert any(b"time.sleep(600)" in _cmdline(p) for p in owned), "the tool never started"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 10
    left = owned
    while time.monotonic() < deadline and left:
        time.sleep(0.2)
        left = {p: t for p, t in tagged_pids().items() if t.startswith(f"{proc.pid}.")}
    assert left == {}, [(p, _cmdline(p)) for p in left]
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return b""


@pytest.mark.heavy
def test_auth_failure_is_a_resumable_error_with_reason_and_retries_are_traced(
    tmp_path: Path, model_factory: Callable[..., ScriptedModel], run_cli: Callable[..., CliRun]
) -> None:
    plan = one_task_plan()
    plan["tasks"].append({"id": "TASK-002", "name": "Second", "complexity": 1, "dependencies": []})
    make_sample_repo(tmp_path / "repo", plan=plan)
    scenario = approve_scenario()
    scenario["sessions"][0]["steps"][0]["fault"] = {"status": 529, "times": 2}
    scenario["sessions"].insert(0, {"role": "player", "task": "TASK-002", "steps": [
        {"text": "x", "fault": {"status": 401, "times": 1000}}]})
    model = model_factory(scenario)
    repo, result = run_feature(tmp_path, run_cli, model)
    assert result.returncode == 1
    # Credentials are infrastructure: the task stops as a resumable error, named in the feature report.
    assert "authentication failed" in report_text(repo, None) and "not finished" in report_text(repo, None)
    assert "TASK-002 did not finish: error: InfrastructureError" in result.stderr
    assert len([r for r in model.requests if r.task == "TASK-002"]) == 1, "401 is never retried"
    assert report_text(repo, None).count("approved") >= 1
    trace = (repo / ".autobuild/runs/FEAT-001/TASK-001/trace.jsonl").read_text()
    assert trace.count('"event": "retry"') == 2 and "overloaded (529)" in trace
    assert "overloaded (529), retrying" in result.stdout


def test_missing_cli_refuses_before_writing(tmp_path: Path) -> None:
    """A refusal before any session: `main` in this process (tests/cli_in_process.py)."""
    repo = make_sample_repo(tmp_path / "repo", plan=one_task_plan())
    result = cli_in_process(tmp_path, "run", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "ck.sqlite"),
                            ORCHESTRATOR_CLI_PATH=str(tmp_path / "missing-claude"))
    assert result.returncode == 2
    assert result.stderr.startswith("error: Claude Code CLI not found at") and "ORCHESTRATOR_CLI_PATH" in result.stderr
    assert not (tmp_path / "ck.sqlite").exists() and "autobuild/" not in git(repo, "branch", "--list")
