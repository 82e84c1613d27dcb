"""Features on two Aegra workers (`autobuild serve`) over a real Postgres and Redis, the real Claude Code CLI
against the scripted model, a local repo path as the input."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client

from agents.testing.scripted_model import ScriptedModel
from orchestrator.cli.demo import make_sample_repo
from tests.conftest import CliRun, coach_from_pytest, git
from tests.workers.conftest import Worker

pytestmark = [pytest.mark.workers, pytest.mark.cli]

PLAN = {"id": "FEAT-001", "name": "On workers", "verify": "python -m pytest -q", "tasks": [
    {"id": "TASK-1", "name": "one", "complexity": 2},
    {"id": "TASK-2", "name": "two", "complexity": 2, "dependencies": ["TASK-1"]}]}


def writer(task: str, path: str, delay: float = 0.0) -> dict[str, Any]:
    return {"role": "player", "task": task, "steps": [
        {"write": {"path": path, "content": f"{task.replace('-', '_')} = 1\n"}, "delay": delay},
        {"tool": {"name": "report_progress", "input": {"files_modified": [path], "implementation_notes": "x"}}},
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
    assert "FEAT-001" in error and "already running" in error and f"thread={thread}" in error, shown.stdout

    # (a) The first run finishes on the workers.
    assert (await finished(first.url, thread))["status"] == "success"
    status = await asyncio.to_thread(run_cli, "status", "FEAT-001", "--repo-url", str(repo), "--server", second.url,
                                     "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["results"] == {"TASK-1": "approved", "TASK-2": "approved"}
    assert git(repo, "show", "autobuild/FEAT-001:calc/two.py") == "TASK_2 = 1\n"
    assert git(repo, "show", "autobuild/FEAT-001:calc/one.py") == "TASK_1 = 1\n"
