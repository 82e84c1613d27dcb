"""Usage limits against the real CLI: a limit pauses the whole run (no request storm), the pause survives a
kill -9, and a pause past --max-wait stops the run with exit 75."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents.reaper import tagged_pids
from agents.testing.repos import make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from orchestrator.store.pause import credential_key, quota_path
from tests.conftest import CliRun, approve_scenario, cli_env, one_task_plan

pytestmark = [pytest.mark.cli, pytest.mark.heavy]

WINDOW_S = 25.0


def two_task_repo(tmp_path: Path) -> Path:
    plan = {"id": "FEAT-001", "name": "Two", "verify": "python -m pytest -q", "tasks": [
        {"id": "TASK-001", "name": "subtract", "complexity": 2},
        {"id": "TASK-002", "name": "multiply", "complexity": 2}]}
    return make_sample_repo(tmp_path / "repo", plan=plan)


def limited_scenario(seconds: float, *, held: bool = False) -> dict[str, Any]:
    first = approve_scenario("TASK-001")
    second = approve_scenario("TASK-002", {"calc/multiply.py": "def multiply(a, b):\n    return a * b\n"})
    return {"sessions": [*first["sessions"], second["sessions"][0]],  # one coach script serves both tasks
            "limit_window": {"seconds": seconds, "status": 429, "headers": {"retry-after": "120"}, "held": held}}


def quota_crossed_scenario(reset_in: float) -> dict[str, Any]:
    """One approved task on a subscription whose five-hour window is at 50%, then, from the player's second request
    on, at 95% and resetting `reset_in` seconds later."""
    quota = {"anthropic-ratelimit-unified-status": "allowed", "anthropic-ratelimit-unified-reset": "{reset}",
             "anthropic-ratelimit-unified-5h-reset": "{reset}"}
    return {**approve_scenario(), "rate_limit_headers": [
        {"headers": {**quota, "anthropic-ratelimit-unified-5h-utilization": "0.5"}, "resets_in_s": 3600},
        {"from_request": 2, "headers": {**quota, "anthropic-ratelimit-unified-5h-utilization": "0.95"},
         "resets_in_s": reset_in}]}


def start_run(repo: Path, db: Path, env: dict[str, str], command: str = "run") -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "orchestrator", command, "FEAT-001", "--repo", str(repo), "--db",
                             str(db), "--parallel", "2", "--autonomous"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL, start_new_session=True)


def wait_for_pause(repo: Path) -> Path:
    pause_file = repo / ".autobuild/runs/FEAT-001/usage-limit.json"
    deadline = time.monotonic() + 60
    while not pause_file.is_file() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pause_file.is_file(), "the limit paused the run"
    return pause_file


def test_a_usage_limit_pauses_the_whole_run_which_then_finishes_by_itself(
        tmp_path: Path, model_factory: Callable[..., ScriptedModel]) -> None:
    repo = two_task_repo(tmp_path)
    model = model_factory(limited_scenario(WINDOW_S, held=True))  # held until `status` has looked, however slow
    db = tmp_path / "db.sqlite"
    env = cli_env(model, tmp_path) | {"ORCHESTRATOR_LIMIT_PROBE": "4"}
    run = start_run(repo, db, env)
    pause_file = wait_for_pause(repo)
    status = subprocess.run([sys.executable, "-m", "orchestrator", "status", "FEAT-001", "--repo", str(repo),
                             "--db", str(db)], env=env, capture_output=True, text=True, check=False)
    model.end_limit()
    state = status.stdout.split(";", 1)[0]  # in force, or past its time while a probe asks: paused either way
    assert state.startswith(("FEAT-001 (paused until", "FEAT-001 (paused since")), status.stdout + status.stderr
    assert "usage limit" in status.stdout.splitlines()[0], status.stdout
    out, err = run.communicate(timeout=240)
    assert run.returncode == 0, out + err
    window_end = max((model.first_request_at or 0) + WINDOW_S, model.limit_ended_at or 0)
    in_window = [r for r in model.requests if r.started < window_end]
    # The probes back off exponentially: a window held past WINDOW_S (a slow `status`) has one more per doubling.
    longer = max(0, math.ceil(math.log2((window_end - (model.first_request_at or 0)) / WINDOW_S)))
    assert len(in_window) <= 6 + longer, [(round(r.started - in_window[0].started, 1), r.outcome) for r in in_window]
    assert not pause_file.exists(), "the pause record is removed once the limit is over"
    assert "usage limit over" in out


def test_kill_9_during_a_pause_then_resume_waits_out_the_remaining_time_only(
        tmp_path: Path, model_factory: Callable[..., ScriptedModel]) -> None:
    repo = two_task_repo(tmp_path)
    model = model_factory(limited_scenario(5))
    db = tmp_path / "db.sqlite"
    env = cli_env(model, tmp_path) | {"ORCHESTRATOR_LIMIT_PROBE": "6"}
    first = start_run(repo, db, env)
    until = json.loads(wait_for_pause(repo).read_text())["until"]
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    killed_at = time.time()
    resumed = start_run(repo, db, env, "resume")
    out, err = resumed.communicate(timeout=240)
    assert resumed.returncode == 0, out + err
    after_kill = [r for r in model.requests if r.started > killed_at]
    assert after_kill and after_kill[0].started >= until - 0.5, "the resumed run waited out the recorded pause"
    assert after_kill[0].started <= until + 10, "and only the remaining time (plus CLI start-up)"
    assert {tag for tag in tagged_pids().values() if tag.startswith(f"{first.pid}.")} == set()


def test_a_pause_past_max_wait_stops_the_run_with_exit_75(tmp_path: Path,
                                                          model_factory: Callable[..., ScriptedModel],
                                                          run_cli: Callable[..., CliRun]) -> None:
    repo = two_task_repo(tmp_path)
    model = model_factory(limited_scenario(600))
    result = run_cli("run", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "db.sqlite"), "--autonomous",
                     "--max-wait", "2", model=model, ORCHESTRATOR_LIMIT_PROBE="5")
    assert result.returncode == 75, result.stdout + result.stderr
    assert "usage limit outlasted --max-wait" in result.stderr + result.stdout
    assert "resume with:" in result.stdout
    assert len(model.requests) <= 2, "one refused request per running session, then no more"


def test_a_quota_window_over_max_utilization_stops_new_sessions_running_ones_finish_then_the_run_goes_on(
        tmp_path: Path, model_factory: Callable[..., ScriptedModel], run_cli: Callable[..., CliRun]) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=one_task_plan())
    reset_in = 6.0
    model = model_factory(quota_crossed_scenario(reset_in))
    token = f"sk-ant-oat01-test-{uuid.uuid4().hex}"  # a subscription: only those report utilization
    shared = quota_path(credential_key({"CLAUDE_CODE_OAUTH_TOKEN": token, "ANTHROPIC_BASE_URL": model.base_url}))
    result = run_cli("run", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "db.sqlite"), "--autonomous",
                     model=model, ANTHROPIC_API_KEY="", CLAUDE_CODE_OAUTH_TOKEN=token)
    assert result.returncode == 0, result.stdout + result.stderr
    crossed = model.phase_started[1]
    reset = round(crossed + reset_in)
    player = model.sessions("player")
    coach = model.sessions("coach")
    assert len(player) == 3 and player[-1].started >= crossed, "the running player session finished its requests"
    assert coach and coach[0].started >= reset - 0.05, "no new session started before the window reset"
    assert "quota (five_hour quota at 95%, at or over --max-utilization 0.9)" in result.stdout
    assert not (repo / ".autobuild/runs/FEAT-001/usage-limit.json").exists() and not shared.exists()


def test_kill_9_during_a_quota_pause_then_resume_starts_no_session_before_the_window_resets(
        tmp_path: Path, model_factory: Callable[..., ScriptedModel]) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=one_task_plan())
    reset_in = 12.0
    model = model_factory(quota_crossed_scenario(reset_in))
    token = f"sk-ant-oat01-test-{uuid.uuid4().hex}"
    shared = quota_path(credential_key({"CLAUDE_CODE_OAUTH_TOKEN": token, "ANTHROPIC_BASE_URL": model.base_url}))
    env = cli_env(model, tmp_path) | {"ANTHROPIC_API_KEY": "", "CLAUDE_CODE_OAUTH_TOKEN": token}
    db = tmp_path / "db.sqlite"
    first = subprocess.Popen([sys.executable, "-m", "orchestrator", "run", "FEAT-001", "--repo", str(repo), "--db",
                              str(db), "--autonomous"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 90
    # The quota is recorded and the player has finished its three requests: the run is waiting for the window.
    while not (shared.is_file() and len(model.sessions("player")) >= 3) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)
    assert shared.is_file() and not model.sessions("coach"), "the quota paused the run before the coach"
    os.killpg(first.pid, signal.SIGKILL)
    first.communicate()
    reset = model.phase_started[1] + reset_in
    resumed = subprocess.run([sys.executable, "-m", "orchestrator", "resume", "FEAT-001", "--repo", str(repo),
                              "--db", str(db), "--autonomous"], env=env, capture_output=True, text=True,
                             timeout=240, check=False)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    coach = model.sessions("coach")
    assert coach and coach[0].started >= round(reset) - 0.05, "the resumed run honoured the recorded quota pause"
    assert {tag for tag in tagged_pids().values() if tag.startswith(f"{first.pid}.")} == set()
    assert not shared.exists(), "the pause is cleared once the window reset"

