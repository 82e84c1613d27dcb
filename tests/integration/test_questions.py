"""Agents asking humans: pause with exit 3, `answer`, questions surviving SIGKILL, autonomous abort."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from tests.conftest import CliRun, cli_env, coach_from_pytest, git

pytestmark = pytest.mark.cli


def asking_player(task: str, question: str, answer: str, path: str, delay: float = 0.0) -> dict[str, Any]:
    """Asks; once answered, writes the answer into `path` (so the branch proves the agent saw it)."""
    return {"role": "player", "task": task, "steps": [
        {"ask": {"question": question, "options": [answer, "something else"]}, "delay": delay},
        {"when": {"result_matches": answer},
         "then": {"write": {"path": path, "content": f"{answer}\n"}},
         "else": {"text": "I got no answer."}},
        {"tool": {"name": "report_progress", "input": {"files_modified": [path], "implementation_notes": "x"}}},
        {"text": "done"}]}


def plan(*tasks: str) -> dict[str, Any]:
    return {"id": "FEAT-001", "name": "Questions", "verify": "python -m pytest -q",
            "tasks": [{"id": t, "name": t, "complexity": 2} for t in tasks]}


def run(run_cli: Callable[..., CliRun], tmp_path: Path, model: ScriptedModel, *args: str) -> CliRun:
    return run_cli(*args, "--repo", str(tmp_path / "repo"), "--db", str(tmp_path / "db"), model=model)


def status(run_cli: Callable[..., CliRun], tmp_path: Path) -> dict[str, dict[str, Any]]:
    out = run_cli("status", "FEAT-001", "--repo", str(tmp_path / "repo"), "--db", str(tmp_path / "db"), "--json")
    return {row["task"]: row for row in json.loads(out.stdout)["tasks"]}


def qid(result: CliRun, task: str) -> str:
    line = next(line for line in result.stdout.splitlines() if line.startswith(f"{task} asks {task}-"))
    return line.split()[2].rstrip(":")


@pytest.mark.heavy
def test_question_answered_then_agent_sees_it(tmp_path: Path, model_factory: Callable[..., ScriptedModel],
                                              run_cli: Callable[..., CliRun]) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=plan("TASK-1"))
    model = model_factory({"sessions": [asking_player("TASK-1", "Which database?", "Postgres", "db.txt"),
                                        coach_from_pytest()]})
    paused = run(run_cli, tmp_path, model, "run", "FEAT-001", "--interactive")
    assert paused.returncode == 3, paused.stdout + paused.stderr
    question_id = qid(paused, "TASK-1")
    row = status(run_cli, tmp_path)["TASK-1"]
    assert row["status"] == "waiting for an answer"
    assert row["pending_question"]["question"] == "Which database?"
    wrong = run(run_cli, tmp_path, model, "answer", "FEAT-001", "TASK-1-nope", "x")
    assert wrong.returncode == 2 and question_id in wrong.stderr
    done = run(run_cli, tmp_path, model, "answer", "FEAT-001", question_id, "Postgres")
    assert done.returncode == 0, done.stdout + done.stderr
    again = run(run_cli, tmp_path, model, "answer", "FEAT-001", question_id, "Postgres")
    assert again.returncode == 2 and "no pending question" in again.stderr, again.stdout + again.stderr
    answered = [r for r in model.requests if r.role == "player" and r.step == 1]
    assert '"Which database?"="Postgres"' in answered[-1].tool_results[0], "the SDK-format answer reached the agent"
    assert git(repo, "show", "autobuild/FEAT-001:db.txt") == "Postgres\n"
    events = [json.loads(x)["event"] for x in
              (repo / ".autobuild/runs/FEAT-001/TASK-1/trace.jsonl").read_text().splitlines()]
    assert events.index("question_asked") < events.index("question_answered") < events.index("finalize")


@pytest.mark.heavy
def test_pending_question_survives_sigkill(tmp_path: Path, model_factory: Callable[..., ScriptedModel],
                                           run_cli: Callable[..., CliRun]) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=plan("TASK-1", "TASK-2"))
    slow = {"role": "player", "task": "TASK-2", "steps": [{"bash": "python3 -c 'import time; time.sleep(600)'"}]}
    model = model_factory({"sessions": [asking_player("TASK-1", "Which database?", "Postgres", "db.txt"), slow,
                                        coach_from_pytest()]})
    proc = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "run", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "db"),
         "--interactive", "--parallel", "2"], env=cli_env(model, tmp_path), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    trace = repo / ".autobuild/runs/FEAT-001/TASK-1/trace.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (trace.is_file() and "question_asked" in trace.read_text()):
        time.sleep(0.1)
    time.sleep(1.0)  # let the player node's checkpoint land while TASK-2 keeps its session busy
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    rows = status(run_cli, tmp_path)
    assert rows["TASK-1"]["pending_question"]["question"] == "Which database?"
    model.scenario.sessions = [s for s in model.scenario.sessions if s.task != "TASK-2"]
    model.scenario.sessions.append(model.scenario.from_data({"sessions": [{
        "role": "player", "task": "TASK-2", "steps": [
            {"write": {"path": "two.txt", "content": "2\n"}},
            {"tool": {"name": "report_progress", "input": {"files_modified": ["two.txt"],
                                                           "implementation_notes": "x"}}},
            {"text": "done"}]}]}).sessions[0])
    assert json.loads((repo / ".autobuild/runs/FEAT-001/options.json").read_text()) == {"parallel": 2}
    resumed = run(run_cli, tmp_path, model, "resume", "FEAT-001")  # keeps run's --parallel 2
    assert resumed.returncode == 3, resumed.stdout + resumed.stderr
    done = run(run_cli, tmp_path, model, "answer", "FEAT-001", qid(resumed, "TASK-1"), "Postgres")
    assert done.returncode == 0, done.stdout + done.stderr
    assert git(repo, "show", "autobuild/FEAT-001:db.txt") == "Postgres\n"


@pytest.mark.heavy
def test_interactive_terminal_prompts_for_the_answer(tmp_path: Path,
                                                     model_factory: Callable[..., ScriptedModel]) -> None:
    """In a real terminal the run is interactive by default, shows the live table and asks at the prompt."""
    repo = make_sample_repo(tmp_path / "repo", plan=plan("TASK-1"))
    model = model_factory({"sessions": [asking_player("TASK-1", "Which database?", "Postgres", "db.txt"),
                                        coach_from_pytest()]})
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "run", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "db")],
        env=cli_env(model, tmp_path) | {"COLUMNS": "120", "TERM": "xterm"},
        stdin=follower, stdout=follower, stderr=follower, close_fds=True)
    os.close(follower)
    seen = b""
    answered = False
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                seen += os.read(leader, 65536)
            except OSError:
                break
        if not answered and b"your answer" in seen:
            os.write(leader, b"Postgres\n")
            answered = True
    proc.wait(timeout=60)
    os.close(leader)
    text = seen.decode(errors="replace")
    assert answered, text[-2000:]
    assert proc.returncode == 0, text[-2000:]
    assert "Which database?" in text and "AutoBuild" in text and "Elapsed" in text, "live table on a terminal"
    assert git(repo, "show", "autobuild/FEAT-001:db.txt") == "Postgres\n"
