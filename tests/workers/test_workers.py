"""Features on two Aegra workers (`autobuild serve`) over a real Postgres and Redis, the real Claude Code CLI
against the scripted model, a local repo path as the input."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
from langgraph_sdk import get_client

from agents.reaper import tagged_pids
from agents.testing.repos import make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from orchestrator.server.client import submit
from tests.conftest import CliRun, coach_from_pytest, git
from tests.integration.test_questions import asking_player
from tests.workers.conftest import Worker

pytestmark = [pytest.mark.workers, pytest.mark.cli]

PLAN = {"id": "FEAT-001", "name": "On workers", "verify": "python -m pytest -q", "tasks": [
    {"id": "TASK-1", "name": "one", "complexity": 2},
    {"id": "TASK-2", "name": "two", "complexity": 2, "dependencies": ["TASK-1"]}]}


def writer(task: str, path: str, delay: float = 0.0) -> dict[str, Any]:
    return {"role": "player", "task": task, "steps": [
        {"write": {"path": path, "content": f"{task.replace('-', '_')} = 1\n"}, "delay": delay},
        {"tool": {"name": "report_progress", "input": {"files_modified": [path], "implementation_notes": "x"}},
         "delay": delay},
        {"text": "done"}]}


async def finished(server: str, thread_id: str, timeout: float = 180) -> dict[str, Any]:
    """Wait for the thread's runs to end; its last run."""
    client = get_client(url=server)
    for _ in range(int(timeout / 0.5)):
        runs = await client.runs.list(thread_id, limit=1)
        if runs and runs[0]["status"] not in ("pending", "running"):
            return dict(runs[0])
        await asyncio.sleep(0.5)
    raise AssertionError(f"thread {thread_id} still running after {timeout} s")


async def until(check: Callable[[], bool], timeout: float = 120) -> None:
    for _ in range(int(timeout / 0.2)):
        if check():
            return
        await asyncio.sleep(0.2)
    raise AssertionError("condition not reached")


async def test_a_feature_runs_on_the_workers_and_a_second_run_of_it_is_refused(
    tmp_path: Path, model_factory: Callable[..., ScriptedModel], workers: Callable[[ScriptedModel], Worker],
    run_cli: Callable[..., CliRun],
) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=PLAN)
    model = model_factory({"sessions": [writer("TASK-1", "calc/one.py", delay=3.0),
                                        writer("TASK-2", "calc/two.py"), coach_from_pytest()]})
    first, second = workers(model), workers(model)

    submitted = await asyncio.to_thread(run_cli, "submit", "FEAT-001", "--repo-url", str(repo), "--server", first.url)
    assert submitted.returncode == 0, submitted.stderr
    thread = submitted.stdout.strip()
    await until(lambda: bool(model.requests))  # a session runs: the run holds the feature's lock

    # (d) The same feature again, by the CLI: refused at once, naming the thread that runs it.
    again = await asyncio.to_thread(run_cli, "submit", "FEAT-001", "--repo-url", str(repo), "--server", second.url)
    assert again.returncode == 2 and f"already running on thread {thread}" in again.stderr, again.stderr
    # … and past that check (two submissions racing, a client of its own): the run starts on a worker and the
    # advisory lock refuses it, naming the holder's worker and thread.
    client = get_client(url=second.url)
    racer = await client.threads.create(metadata={"repo_url": str(repo), "feature": "FEAT-001"})
    await client.runs.create(racer["thread_id"], "autobuild", input={"repo": str(repo), "target": "FEAT-001"})
    refused = await finished(second.url, racer["thread_id"])
    assert refused["status"] == "error"
    shown = await asyncio.to_thread(run_cli, "status", racer["thread_id"], "--server", second.url, "--json")
    assert shown.stdout, shown.stderr
    error = json.loads(shown.stdout)["error"]
    # Both workers see this one folder: its file lock (naming the holder's pid) or, past it, the feature's advisory
    # lock (naming the holder's worker and thread) refuses it; by URL each worker has a clone of its own and only
    # the advisory lock stands between them (tests/workers/test_by_url.py).
    assert "FEAT-001" in error and (("already running" in error and f"thread={thread}" in error)
                                    or "already being run by pid" in error), shown.stdout

    # (a) The first run finishes on the workers.
    assert (await finished(first.url, thread))["status"] == "success"
    status = await asyncio.to_thread(run_cli, "status", "FEAT-001", "--repo-url", str(repo), "--server", second.url,
                                     "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["results"] == {"TASK-1": "approved", "TASK-2": "approved"}
    assert git(repo, "show", "autobuild/FEAT-001:calc/two.py") == "TASK_2 = 1\n"
    assert git(repo, "show", "autobuild/FEAT-001:calc/one.py") == "TASK_1 = 1\n"
    where = ("--repo-url", str(repo), "--server", first.url, "--json")
    shown = await asyncio.to_thread(run_cli, "show", "FEAT-001", "TASK-2", *where)
    assert json.loads(shown.stdout)["show"]["status"] == "approved", shown.stderr
    history = json.loads((await asyncio.to_thread(run_cli, "history", "FEAT-001", *where)).stdout)["history"]
    assert [run["status"] for run in history] == ["success"]
    chart = await asyncio.to_thread(run_cli, "graph", "FEAT-001", "--repo", str(repo), *where)
    drawn = json.loads(chart.stdout)
    assert drawn["colored"] and drawn["outcomes"] == {"TASK-1": "approved", "TASK-2": "approved"}, chart.stderr
    assert "TASK-1" in drawn["mermaid"] and drawn["edges"], drawn
    stats = await asyncio.to_thread(run_cli, "stats", "--server", first.url, "--json")
    assert json.loads(stats.stdout)["stats"]["threads"] == {"idle": 1, "error": 1}, stats.stdout + stats.stderr


def session_starts(model: ScriptedModel) -> Counter[tuple[str, str]]:
    return Counter((str(r.role), str(r.task)) for r in model.requests if r.role and r.step == 0)


def serving(workers: list[Worker]) -> Worker | None:
    """The worker whose agent sessions are alive (their tag starts with its pid)."""
    tags = tagged_pids().values()
    return next((w for w in workers if any(tag.startswith(f"{w.proc.pid}.") for tag in tags)), None)


async def test_kill_9_of_the_worker_mid_task_the_other_worker_finishes_without_redoing_the_first_task(
    tmp_path: Path, model_factory: Callable[..., ScriptedModel], workers: Callable[[ScriptedModel], Worker],
    run_cli: Callable[..., CliRun],
) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=PLAN)
    model = model_factory({"sessions": [writer("TASK-1", "calc/one.py"), writer("TASK-2", "calc/two.py", delay=6.0),
                                        coach_from_pytest()]})
    both = [workers(model), workers(model)]
    submitted = await asyncio.to_thread(run_cli, "submit", "FEAT-001", "--repo-url", str(repo), "--server",
                                        both[0].url)
    assert submitted.returncode == 0, submitted.stderr
    thread = submitted.stdout.strip()
    # The second task's player has started; its responses come 8 s apart: the kill lands mid-session, mid-task.
    await until(lambda: session_starts(model)[("player", "TASK-2")] == 1 and serving(both) is not None)
    victim = serving(both)
    assert victim is not None
    other = next(w for w in both if w is not victim)
    doomed = {p.pid for p in psutil.Process(victim.proc.pid).children(recursive=True)} | {
        pid for pid, tag in tagged_pids().items() if tag.startswith(f"{victim.proc.pid}.")}
    before = session_starts(model)
    victim.kill()
    assert not [r for r in model.requests if (r.role, r.task) == ("player", "TASK-2") and r.step >= 2], \
        "the kill came after the second task's player session had finished (test timing, not a takeover)"

    await until(lambda: not [pid for pid in doomed if psutil.pid_exists(pid) and
                             psutil.Process(pid).status() != psutil.STATUS_ZOMBIE], timeout=30)
    assert (await finished(other.url, thread, timeout=240))["status"] == "success"
    after = session_starts(model)
    assert after[("player", "TASK-1")] == before[("player", "TASK-1")] == 1, "the first task was not redone"
    assert after[("player", "TASK-2")] == 2, "the second task's interrupted session ran again on the other worker"
    status = await asyncio.to_thread(run_cli, "status", thread, "--server", other.url, "--json")
    assert json.loads(status.stdout)["results"] == {"TASK-1": "approved", "TASK-2": "approved"}
    assert git(repo, "show", "autobuild/FEAT-001:calc/two.py") == "TASK_2 = 1\n"


async def test_a_question_asked_on_a_worker_is_answered_through_the_server_after_that_worker_died(
    tmp_path: Path, model_factory: Callable[..., ScriptedModel], workers: Callable[[ScriptedModel], Worker],
    run_cli: Callable[..., CliRun],
) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan={**PLAN, "tasks": PLAN["tasks"][:1]})  # type: ignore[index]
    model = model_factory({"sessions": [asking_player("TASK-1", "Which database?", "Postgres", "db.txt"),
                                        coach_from_pytest()]})
    asked_on = workers(model)
    budget = {"budget_usd": 7.5}  # a run option the answered run must keep (the engine carries none over itself)
    thread = await submit(asked_on.url, "FEAT-001", str(repo), context=budget)
    await finished(asked_on.url, thread)  # the run stops at the question (its thread: interrupted)
    asked = await asyncio.to_thread(run_cli, "status", "FEAT-001", "--repo-url", str(repo), "--server", asked_on.url,
                                    "--json")
    assert asked.returncode == 3, asked.stderr
    [question] = json.loads(asked.stdout)["questions"]
    assert question["question"] == "Which database?"
    asked_on.kill()

    other = workers(model)
    answered = await asyncio.to_thread(run_cli, "answer", "FEAT-001", question["question_id"], "Postgres",
                                       "--repo-url", str(repo), "--server", other.url)
    assert answered.returncode == 0, answered.stderr
    assert (await finished(other.url, thread))["status"] == "success"
    final = await asyncio.to_thread(run_cli, "status", thread, "--server", other.url, "--json")
    assert json.loads(final.stdout)["results"] == {"TASK-1": "approved"}
    assert git(repo, "show", "autobuild/FEAT-001:db.txt") == "Postgres\n", "the agent received the answer"
    runs = await get_client(url=other.url).runs.list(thread, limit=10)
    assert len(runs) == 2 and all(dict(run).get("context") == budget for run in runs), [r.get("context") for r in runs]
