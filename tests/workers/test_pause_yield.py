"""A served run in a long quota pause gives its worker slot back and is re-queued by the worker's waker once the
window resets: one worker with one run slot, the real CLI against a scripted model reporting a subscription's
five-hour window at 95%."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client

from agents.limits import Pause
from agents.testing.repos import make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from orchestrator.server.waker import wake_due
from orchestrator.store.pause import credential_key, quota_path
from orchestrator.store.paused_threads import CLAIM_LEASE_S, PausedThreads
from tests.conftest import CliRun, coach_from_pytest, git
from tests.workers.conftest import Worker
from tests.workers.test_workers import PLAN, finished, session_starts, writer

pytestmark = [pytest.mark.workers, pytest.mark.cli]

RESET_IN = 25.0
"""The window resets this long after the model first reports it at 95% (the first task's player, mid-session)."""
TOKEN = f"sk-ant-oat01-test-{uuid.uuid4().hex}"  # a subscription: only those report utilization


def quota_scenario(*sessions: dict[str, Any]) -> dict[str, Any]:
    """Sessions on a subscription whose five-hour window is at 50%, then from the second answer on at 95%."""
    quota = {"anthropic-ratelimit-unified-status": "allowed", "anthropic-ratelimit-unified-reset": "{reset}",
             "anthropic-ratelimit-unified-5h-reset": "{reset}"}
    return {"sessions": list(sessions), "rate_limit_headers": [
        {"headers": {**quota, "anthropic-ratelimit-unified-5h-utilization": "0.5"}, "resets_in_s": 3600},
        {"from_request": 2, "headers": {**quota, "anthropic-ratelimit-unified-5h-utilization": "0.95"},
         "resets_in_s": RESET_IN}]}


@pytest.fixture
def model(model_factory: Callable[..., ScriptedModel]) -> Iterator[ScriptedModel]:
    started = model_factory(quota_scenario(writer("TASK-1", "calc/one.py"), writer("TASK-2", "calc/two.py"),
                                           writer("TASK-3", "calc/three.py"), coach_from_pytest()))
    yield started
    quota_path(credential_key({"CLAUDE_CODE_OAUTH_TOKEN": TOKEN, "ANTHROPIC_BASE_URL": started.base_url})).unlink(
        missing_ok=True)


async def ended_runs(server: str, thread: str, count: int, timeout: float = 180) -> list[dict[str, Any]]:
    """The thread's runs, oldest first, once it has `count` of them and the last has ended."""
    client = get_client(url=server)
    for _ in range(int(timeout / 0.5)):
        runs = [dict(run) for run in reversed(await client.runs.list(thread, limit=10))]
        if len(runs) >= count and runs[-1]["status"] not in ("pending", "running"):
            return runs
        await asyncio.sleep(0.5)
    raise AssertionError(f"thread {thread}: not {count} ended runs after {timeout} s")


async def test_a_paused_run_frees_its_slot_and_the_waker_resumes_it_after_the_reset(
    tmp_path: Path, model: ScriptedModel, workers: Callable[..., Worker], run_cli: Callable[..., CliRun],
) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=PLAN)
    other = make_sample_repo(tmp_path / "other", plan={**PLAN, "id": "FEAT-002", "tasks": [
        {"id": "TASK-3", "name": "three", "complexity": 2}]})
    worker = workers(model, ORCHESTRATOR_WORKER_RUNS="1", ORCHESTRATOR_YIELD_PAUSE_SECONDS="2",
                     ORCHESTRATOR_WAKE_SECONDS="1", CLAUDE_CODE_OAUTH_TOKEN=TOKEN, ANTHROPIC_API_KEY="")
    submitted = await asyncio.to_thread(run_cli, "submit", "FEAT-001", "--repo-url", str(repo), "--server", worker.url)
    assert submitted.returncode == 0, submitted.stderr
    thread = submitted.stdout.strip()

    # The first task's player crosses 95% mid-session and finishes; no coach starts: the run ends, paused.
    first = await finished(worker.url, thread)
    reset = model.phase_started[1] + RESET_IN
    assert first["status"] == "interrupted" and time.time() < reset - 5, "the run ended well before the reset"
    assert session_starts(model) == {("player", "TASK-1"): 1}, "the running session finished, no new one started"
    shown = await asyncio.to_thread(run_cli, "status", thread, "--server", worker.url, "--json")
    paused = json.loads(shown.stdout)
    assert shown.returncode == 0 and paused["questions"] == [], shown.stdout + shown.stderr
    assert abs(paused["paused_until"] - round(reset)) <= 1 and "five_hour" in paused["pause_reason"]
    text = await asyncio.to_thread(run_cli, "status", thread, "--server", worker.url)
    assert "re-queued automatically" in text.stdout and "paused until" in text.stdout, text.stdout
    again = await asyncio.to_thread(run_cli, "submit", "FEAT-001", "--repo-url", str(repo), "--server", worker.url)
    assert again.returncode == 2 and "paused until" in again.stderr, "no second thread to race the re-queued one"

    # Its one slot is free: another feature's run starts and ends (it too honours the credential's pause) meanwhile.
    queued = await asyncio.to_thread(run_cli, "submit", "FEAT-002", "--repo-url", str(other), "--server", worker.url)
    assert queued.returncode == 0, queued.stderr
    meanwhile = queued.stdout.strip()
    assert (await finished(worker.url, meanwhile))["status"] in ("interrupted", "success")
    assert time.time() < reset, "the second feature ran in the slot while the first was paused"

    # After the reset the waker re-queues both; the first finishes without redoing its finished session.
    runs = await ended_runs(worker.url, thread, 2)
    assert [run["status"] for run in runs] == ["interrupted", "success"], runs
    coach = model.sessions("coach", "TASK-1")
    assert coach and coach[0].started >= round(reset) - 1, "no session started before the window reset"
    starts = session_starts(model)
    assert starts[("player", "TASK-1")] == 1 and starts[("player", "TASK-2")] == 1, starts
    status = await asyncio.to_thread(run_cli, "status", thread, "--server", worker.url, "--json")
    assert json.loads(status.stdout)["results"] == {"TASK-1": "approved", "TASK-2": "approved"}, status.stdout
    assert git(repo, "show", "autobuild/FEAT-001:calc/one.py") == "TASK_1 = 1\n"
    assert git(repo, "show", "autobuild/FEAT-001:calc/two.py") == "TASK_2 = 1\n"
    # The other feature, paused too, was re-queued the same way and ends approved.
    others = await ended_runs(worker.url, meanwhile, 2)
    assert [run["status"] for run in others] == ["interrupted", "success"], others


def test_racing_wakers_claim_a_due_thread_once_and_never_one_still_paused(database_url: str) -> None:
    now = time.time()
    first, second = PausedThreads(database_url), PausedThreads(database_url)
    first.record("due", Pause(until=now - 1, reason="quota", since=now - 60, kind="quota"))
    first.record("later", Pause(until=now + 3600, reason="quota", since=now, kind="quota"))
    assert second.due(now) == ["due"]
    with ThreadPoolExecutor(8) as pool:  # eight wakers on two "machines" at once
        claims = list(pool.map(lambda store: store.claim("due", now), [first, second] * 4))
    assert claims.count(True) == 1
    assert not first.claim("later", now) and second.due(now) == []
    # The claim is a lease: a waker that died before starting its run leaves the thread due again after it.
    assert second.due(now + CLAIM_LEASE_S + 1) == ["due"] and first.claim("due", now + CLAIM_LEASE_S + 1)
    first.forget("due")  # what the resumed run does as it starts
    first.forget("later")
    assert first.due(now + 7200) == []


class FakeRuns:
    """The LangGraph Server API's runs, as the waker sees them (a fake at the HTTP boundary): each thread's last run,
    and the runs the wakers create."""

    def __init__(self, last: dict[str, dict[str, Any]]) -> None:
        self.last = last
        self.created: list[tuple[str, dict[str, Any]]] = []

    async def list(self, thread_id: str, limit: int = 10) -> list[dict[str, Any]]:
        return [self.last[thread_id]] if thread_id in self.last else []

    async def create(self, thread_id: str, assistant_id: str, **fields: Any) -> dict[str, Any]:
        await asyncio.sleep(0.05)  # a request's latency: racing wakers overlap
        self.created.append((thread_id, fields))
        self.last[thread_id] = {"status": "pending"}
        return {"run_id": "r", "thread_id": thread_id}


class FakeClient:
    def __init__(self, runs: FakeRuns) -> None:
        self.runs = runs


async def test_the_waker_resumes_only_yielded_threads_whose_run_ended_once_each(database_url: str) -> None:
    now = time.time()
    paused = PausedThreads(database_url)
    over = Pause(until=now - 1, reason="quota", since=now - 60, kind="quota")
    for thread in ("yielded", "draining", "finished"):
        paused.record(thread, over)
    paused.record("not-yet", Pause(until=now + 3600, reason="quota", since=now, kind="quota"))
    runs = FakeRuns({"yielded": {"status": "interrupted", "context": {"parallel": 2}},
                     "draining": {"status": "running"}, "finished": {"status": "success"},
                     "not-yet": {"status": "interrupted"}, "question": {"status": "interrupted"}})
    two_workers = [wake_due(PausedThreads(database_url), FakeClient(runs), now) for _ in range(2)]
    resumed = await asyncio.gather(*two_workers)
    assert sorted(t for found in resumed for t in found) == ["yielded"], "one worker resumed it, the other didn't"
    assert runs.created == [("yielded", {"input": None, "checkpoint": {}, "context": {"parallel": 2},
                                         "multitask_strategy": "reject"})]
    # The draining run is looked at again next time; the finished one is forgotten; a question is never touched.
    assert paused.due(now) == ["draining"]
    runs.last["draining"] = {"status": "interrupted"}
    assert await wake_due(paused, FakeClient(runs), now) == ["draining"]
    assert "question" not in [t for t, _ in runs.created]
    # Claimed rows stay (leased) until the resumed run forgets them as it starts: past the lease, a thread whose new
    # run is still queued is not resumed twice.
    assert sorted(paused.due(now + 7200)) == ["draining", "not-yet", "yielded"]
    assert await wake_due(paused, FakeClient(runs), now + 7200) == ["not-yet"]
    assert [t for t, _ in runs.created] == ["yielded", "draining", "not-yet"]
