"""A feature by repository URL on two workers, each with a workspace of its own (two machines): a second run of the
feature is refused by the feature's lock, naming the holder; the remote (a bare repository, `file://`) ends with
both tasks on `autobuild/FEAT-001` after the worker running the second task is killed -9 mid-session, and the
first task is not redone."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
from langgraph_sdk import get_client

from agents.reaper import tagged_pids
from agents.testing.repos import make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from tests.conftest import CliRun, coach_from_pytest, git
from tests.workers.conftest import Worker
from tests.workers.test_workers import PLAN, finished, serving, session_starts, until, writer

pytestmark = [pytest.mark.workers, pytest.mark.cli]


def bare_remote(tmp_path: Path) -> str:
    """The project with its plan committed on main, pushed to a bare repository; its file:// URL. The plan's setup
    gives each worktree the project's environment (a link to this interpreter's, as the sample repo's .venv is)."""
    plan = {**PLAN, "setup": f"ln -sfn {sys.prefix} .venv"}
    work = make_sample_repo(tmp_path / "work", plan=plan, venv=False)
    git(work, "add", ".autobuild")
    git(work, "-c", "user.name=Me", "-c", "user.email=me@localhost", "commit", "-qm", "plan FEAT-001")
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(origin)], check=True)
    return f"file://{origin}"


def on_remote(url: str, *args: str) -> str:
    return git(Path(url.removeprefix("file://")), *args)


async def test_by_url_kill_9_of_the_worker_mid_task_the_other_worker_finishes_from_the_pushed_branches(
    tmp_path: Path, model_factory: Callable[..., ScriptedModel], workers: Callable[..., Worker],
    run_cli: Callable[..., CliRun],
) -> None:
    url = bare_remote(tmp_path)
    main_before = on_remote(url, "rev-parse", "main")
    model = model_factory({"sessions": [writer("TASK-1", "calc/one.py"), writer("TASK-2", "calc/two.py", delay=8.0),
                                        coach_from_pytest()]})
    both = [workers(model, ORCHESTRATOR_WORKSPACE=str(tmp_path / "machine-a")),
            workers(model, ORCHESTRATOR_WORKSPACE=str(tmp_path / "machine-b"))]
    submitted = await asyncio.to_thread(run_cli, "submit", "FEAT-001", "--repo-url", url, "--server", both[0].url)
    assert submitted.returncode == 0, submitted.stderr
    thread = submitted.stdout.strip()
    await until(lambda: bool(model.requests), timeout=120)  # a session runs: the run holds the feature's lock
    # (d) by URL: a second run of the feature from a client of its own, past submit's check. On the other machine
    # (its own clone) only the feature's advisory lock can refuse it; on the same one the clone's file lock does.
    client = get_client(url=both[1].url)
    racer = await client.threads.create(metadata={"repo_url": url, "feature": "FEAT-001"})
    await client.runs.create(racer["thread_id"], "autobuild", input={"repo_url": url, "target": "FEAT-001"})
    assert (await finished(both[1].url, racer["thread_id"]))["status"] == "error", "a second run of one feature ran"
    shown = await asyncio.to_thread(run_cli, "status", racer["thread_id"], "--server", both[1].url, "--json")
    error = json.loads(shown.stdout)["error"]
    assert (f"thread={thread}" in error and "already running" in error) or "already being run by pid" in error, error

    await until(lambda: any((r.role, r.task, r.step) == ("player", "TASK-2", 0) for r in model.requests)
                and serving(both) is not None, timeout=180)
    victim = serving(both)
    assert victim is not None
    other = next(w for w in both if w is not victim)
    doomed = {p.pid for p in psutil.Process(victim.proc.pid).children(recursive=True)} | {
        pid for pid, tag in tagged_pids().items() if tag.startswith(f"{victim.proc.pid}.")}
    assert "calc/one.py" in on_remote(url, "ls-tree", "-r", "--name-only", "autobuild/FEAT-001"), \
        "the first task's merge was pushed before the second task started"
    before = session_starts(model)
    victim.kill()

    await until(lambda: not [pid for pid in doomed if psutil.pid_exists(pid) and
                             psutil.Process(pid).status() != psutil.STATUS_ZOMBIE], timeout=30)
    assert (await finished(other.url, thread, timeout=240))["status"] == "success"
    after = session_starts(model)
    assert after[("player", "TASK-1")] == before[("player", "TASK-1")] == 1, "the first task was not redone"
    assert on_remote(url, "show", "autobuild/FEAT-001:calc/two.py") == "TASK_2 = 1\n"
    assert on_remote(url, "show", "autobuild/FEAT-001:calc/one.py") == "TASK_1 = 1\n"
    assert on_remote(url, "rev-parse", "main") == main_before, "the base branch never moves"
    status = await asyncio.to_thread(run_cli, "status", "FEAT-001", "--repo-url", url, "--server", other.url, "--json")
    assert status.returncode == 0, status.stderr
