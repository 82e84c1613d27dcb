"""Steering served runs (issues 40 and 41): the page on a worker (`/ui`, the worker's token) reads the workers'
Postgres through the same readers and takes a note into the store's queue; a note accepted before a worker dies
reaches the player exactly once after another worker took the run over; a served run's finished attempt is not run
again by the worker that takes it over. Two real workers, Postgres and Redis, the real CLI and the scripted model."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from orchestrator.store import event_log
from orchestrator.store.steering_pg import PostgresNotes
from tests.conftest import CliRun, coach_from_pytest, git
from tests.integration.test_questions import asking_player
from tests.workers.conftest import Worker
from tests.workers.test_workers import finished, serving, until

pytestmark = [pytest.mark.workers, pytest.mark.cli]

TOKEN = "worker-token-0123456789abcdef0123"
NOTE = "use the existing retry helper"
ONE = {"id": "FEAT-001", "name": "Served", "verify": "python -m pytest -q",
       "tasks": [{"id": "TASK-1", "name": "one", "complexity": 2}]}


def slow_player(task: str, path: str, commands: int, delay: float) -> dict[str, Any]:
    """A player session of `commands` tool calls, each answer `delay` seconds after the last (a note sent while it
    runs reaches it after its next tool call)."""
    steps: list[dict[str, Any]] = [{"write": {"path": path, "content": "ONE = 1\n"}, "delay": delay}]
    steps += [{"bash": "true", "delay": delay} for _ in range(commands)]
    steps += [{"tool": {"name": "report_progress", "input": {"files_modified": [path], "implementation_notes": "x"}}},
              {"text": "done"}]
    return {"role": "player", "task": task, "steps": steps}


def carrying(model: ScriptedModel, text: str, since: float = 0.0) -> int:
    """The player's requests (from `since` on) that brought the model `text` as new input: at a turn's start (its
    prompt) or after a tool call (the hook's context)."""
    return sum(1 for r in model.requests if r.role == "player" and r.started >= since and text in r.new_input)


async def test_the_workers_page_loads_behind_its_token_and_a_note_sent_on_it_reaches_the_player(
    tmp_path: Path, model_factory: Callable[..., ScriptedModel], workers: Callable[..., Worker],
    run_cli: Callable[..., CliRun], database_url: str,
) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=ONE)
    model = model_factory({"sessions": [slow_player("TASK-1", "calc/one.py", 8, 1.0), coach_from_pytest()]})
    worker = workers(model, ORCHESTRATOR_AUTH_TOKEN=TOKEN)
    submitted = await asyncio.to_thread(run_cli, "submit", "FEAT-001", "--repo-url", str(repo), "--server",
                                        worker.url, ORCHESTRATOR_AUTH_TOKEN=TOKEN)
    assert submitted.returncode == 0, submitted.stderr
    thread = submitted.stdout.strip()
    await until(lambda: any(r.role == "player" and r.step >= 1 for r in model.requests))

    async with httpx.AsyncClient(base_url=worker.url, follow_redirects=True, timeout=30) as page:
        assert (await page.get("/ui/")).status_code == 401, "no token, no page"
        assert (await page.get("/ui/?token=not-the-token")).status_code == 401
        assert (await page.get("/ui/", headers={"host": "evil.example:80"})).status_code == 421, "DNS rebinding"
        listed = await page.get(f"/ui/?token={TOKEN}")  # the printed address: the token becomes a cookie
        assert listed.status_code == 200 and thread in listed.text and "FEAT-001" in listed.text
        assert TOKEN not in listed.text and database_url not in listed.text, "no secret in the page"
        assert "default-src 'none'" in listed.headers["content-security-policy"]
        shown = await page.get(f"/ui/{thread}/")  # a run's own page: its feature's, read from the workers' store
        assert shown.status_code == 200 and str(shown.url).endswith(f"/ui/{thread}/f/FEAT-001"), shown.text
        assert f'href="/ui/{thread}/f/FEAT-001/t/TASK-1"' in shown.text and TOKEN not in shown.text
        task_page = await page.get(f"/ui/{thread}/f/FEAT-001/t/TASK-1")
        assert task_page.status_code == 200 and f'action="/ui/{thread}/f/FEAT-001/t/TASK-1/note"' in task_page.text
        note_url = f"/ui/{thread}/f/FEAT-001/t/TASK-1/note"
        foreign = await page.post(note_url, data={"text": NOTE}, headers={"origin": "http://evil.example"})
        assert foreign.status_code == 403
        sent = await page.post(note_url, data={"text": NOTE},
                               headers={"origin": worker.url, "accept": "application/json"})
        assert sent.status_code == 202 and sent.json()["ok"], sent.text
        assert (await page.post(note_url, data={"text": " "}, headers={"origin": worker.url})).status_code == 400

    notes = PostgresNotes(database_url, str(repo.resolve())).all_notes("FEAT-001", "TASK-1")
    assert [(n.text, n.source) for n in notes] == [(NOTE, "page")], "in the workers' store, from the page"
    await until(lambda: carrying(model, NOTE) == 1, timeout=60)  # after the player's next tool call
    client = get_client(url=worker.url, headers={"Authorization": f"Bearer {TOKEN}"})
    for _ in range(360):  # the run's end, asked with the worker's token
        runs = await client.runs.list(thread, limit=1)
        if runs and runs[0]["status"] not in ("pending", "running"):
            break
        await asyncio.sleep(0.5)
    assert runs[0]["status"] == "success", runs
    assert carrying(model, NOTE) == 1
    assert [n.state for n in PostgresNotes(database_url, str(repo.resolve())).all_notes("FEAT-001")] == ["consumed"]
    async with httpx.AsyncClient(base_url=worker.url, follow_redirects=True, timeout=30) as page:
        await page.get(f"/ui/?token={TOKEN}")
        done = await page.get(f"/ui/{thread}/f/FEAT-001")
        assert re.search(r"TASK-1.*?approved", done.text, re.S), done.text


async def test_a_note_accepted_before_its_worker_died_reaches_the_player_once_after_the_takeover(
    tmp_path: Path, model_factory: Callable[..., ScriptedModel], workers: Callable[..., Worker],
    run_cli: Callable[..., CliRun], database_url: str,
) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=ONE)
    model = model_factory({"sessions": [slow_player("TASK-1", "calc/one.py", 6, 1.5), coach_from_pytest()]})
    both = [workers(model), workers(model)]
    submitted = await asyncio.to_thread(run_cli, "submit", "FEAT-001", "--repo-url", str(repo), "--server",
                                        both[0].url)
    assert submitted.returncode == 0, submitted.stderr
    thread = submitted.stdout.strip()
    await until(lambda: any(r.role == "player" and r.step >= 1 for r in model.requests) and serving(both) is not None)
    steered = await asyncio.to_thread(run_cli, "steer", "FEAT-001", "TASK-1", NOTE, "--repo", str(repo),
                                      "--db", database_url)
    assert steered.returncode == 0, steered.stderr
    await until(lambda: carrying(model, NOTE) == 1, timeout=60)  # delivered to the session that is about to die
    victim = serving(both)
    assert victim is not None
    other = next(w for w in both if w is not victim)
    victim.kill()
    killed_at = time.time()
    assert not [r for r in model.requests if r.role == "player" and r.step >= 8], "killed after the session ended"

    assert (await finished(other.url, thread, timeout=240))["status"] == "success"
    assert carrying(model, NOTE, since=killed_at) == 1, "the kept session got it once"
    queue = PostgresNotes(database_url, str(repo.resolve()))
    assert [n.state for n in queue.all_notes("FEAT-001", "TASK-1")] == ["consumed"]
    consumed = [e for e in event_log.task_events(repo, "FEAT-001", "TASK-1") if e.kind == "note_consumed"]
    assert len(consumed) == 1, consumed
    assert git(repo, "show", "autobuild/FEAT-001:calc/one.py") == "ONE = 1\n"


def attempt_of(record: Any) -> int:
    found = re.search(r"Current branch: autobuild/\S+?\.a(\d+)\b", record.system + record.prompt + record.new_input)
    return int(found.group(1)) if found else 1


async def test_a_served_runs_finished_attempt_is_not_run_again_by_the_worker_that_takes_it_over(
    tmp_path: Path, model_factory: Callable[..., ScriptedModel], workers: Callable[..., Worker],
) -> None:
    plan = {**ONE, "tasks": [{"id": "TASK-1", "name": "one", "complexity": 2, "attempts": 2}]}
    repo = make_sample_repo(tmp_path / "repo", plan=plan)
    wrong = {"role": "player", "task": "TASK-1", "steps": [
        {"write": {"path": "tests/test_wrong.py", "content": "def test_wrong():\n    assert False\n"}},
        {"tool": {"name": "report_progress", "input": {"files_modified": ["tests/test_wrong.py"],
                                                       "implementation_notes": "x"}}}, {"text": "done"}]}
    model = model_factory({"sessions": [wrong, slow_player("TASK-1.a2", "calc/one.py", 6, 1.5),
                                        coach_from_pytest()]})
    both = [workers(model), workers(model)]
    client = get_client(url=both[0].url)
    created = await client.threads.create(metadata={"repo_url": str(repo.resolve()), "feature": "FEAT-001"})
    thread = created["thread_id"]
    await client.runs.create(thread, "autobuild", input={"repo": str(repo), "target": "FEAT-001"},
                             context={"max_turns": 1, "replan": 0})

    def starts(attempt: int) -> int:
        return sum(1 for r in model.requests if r.role == "player" and r.step == 0 and attempt_of(r) == attempt)

    def second_began() -> float | None:  # attempt 2's session's first request (only it names its branch)
        return next((r.started for r in model.requests if r.role == "player" and r.step == 0 and attempt_of(r) == 2),
                    None)

    def second_at(step: int) -> bool:  # one slot: every player request after attempt 2 began is attempt 2's
        began = second_began()
        return began is not None and any(r.role == "player" and r.step >= step and r.started >= began
                                         for r in model.requests)

    # One slot: attempt 1 ran to its verdict (failed) before attempt 2's session began; the kill lands in that one.
    await until(lambda: second_at(2) and serving(both) is not None, timeout=180)
    victim = serving(both)
    assert victim is not None and starts(1) == 1
    other = next(w for w in both if w is not victim)
    victim.kill()
    assert not second_at(8), "killed after attempt 2's session ended (test timing, not a takeover)"

    assert (await finished(other.url, thread, timeout=300))["status"] == "success"
    assert starts(1) == 1, "the finished attempt was not run again"
    assert starts(2) == 2, "the interrupted attempt ran again on the other worker"
    state = await get_client(url=other.url).threads.get_state(thread)
    assert state["values"]["results"]["TASK-1"]["status"] == "approved", state["values"]
    assert git(repo, "show", "autobuild/FEAT-001:calc/one.py") == "ONE = 1\n"


async def _ended(url: str, thread: str) -> dict[str, Any]:
    """The thread's last run once it ended, asked with the worker's token."""
    client = get_client(url=url, headers={"Authorization": f"Bearer {TOKEN}"})
    for _ in range(360):
        runs = await client.runs.list(thread, limit=1)
        if runs and runs[0]["status"] not in ("pending", "running"):
            return dict(runs[0])
        await asyncio.sleep(0.5)
    raise AssertionError(f"thread {thread} still running")


async def test_a_question_on_a_served_run_is_answered_on_the_workers_page_first_answer_wins(
    tmp_path: Path, model_factory: Callable[..., ScriptedModel], workers: Callable[..., Worker],
    run_cli: Callable[..., CliRun],
) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=ONE)
    model = model_factory({"sessions": [asking_player("TASK-1", "Which database?", "Postgres", "db.txt"),
                                        coach_from_pytest()]})
    worker = workers(model, ORCHESTRATOR_AUTH_TOKEN=TOKEN)
    submitted = await asyncio.to_thread(run_cli, "submit", "FEAT-001", "--repo-url", str(repo), "--server",
                                        worker.url, ORCHESTRATOR_AUTH_TOKEN=TOKEN)
    assert submitted.returncode == 0, submitted.stderr
    thread = submitted.stdout.strip()
    await _ended(worker.url, thread)  # the run stops at the question (its thread: interrupted)
    async with httpx.AsyncClient(base_url=worker.url, follow_redirects=True, timeout=60) as page:
        await page.get(f"/ui/?token={TOKEN}")
        shown = await page.get(f"/ui/{thread}/f/FEAT-001")
        found = re.search(r'name="question_id" value="([^"]+)"', shown.text)
        assert found is not None and "Which database?" in shown.text, shown.text
        answer_url, origin = f"/ui/{thread}/f/FEAT-001/answer", {"origin": worker.url, "accept": "application/json"}
        empty = await page.post(answer_url, data={"question_id": found.group(1), "text": " "}, headers=origin)
        assert empty.status_code == 400
        given = await page.post(answer_url, data={"question_id": found.group(1), "text": "Postgres"}, headers=origin)
        assert given.status_code == 202 and given.json()["ok"], given.text
        again = await page.post(answer_url, data={"question_id": found.group(1), "text": "SQLite"}, headers=origin)
        assert again.status_code == 409 and "already answered" in again.text, again.text
    assert (await _ended(worker.url, thread))["status"] == "success"
    assert git(repo, "show", "autobuild/FEAT-001:db.txt") == "Postgres\n", "the agent received the page's answer"
