"""The steering bench's worker takeovers (issue 41): a served run on two real workers (`autobuild serve`, a real
Postgres and Redis, the real CLI against the scripted model); a note is accepted into the workers' store at a random
moment of the player's session and the serving worker is killed -9 at another; the other worker takes the run over
and finishes it. Lost: the kept player session (the last one of the turn) never saw the note; duplicated: it saw it
more than once, or the note was recorded consumed more than once.

    python -m benchmarks.steering_takeovers [TRIALS]
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.reaper import tagged_pids
from agents.testing.repos import make_sample_repo, scripted_env
from agents.testing.scripted_model import ScriptedModel
from benchmarks.workers_bench import _free_port, _redis, _wait_ok, unavailable
from orchestrator.store import event_log
from orchestrator.store.steering_pg import PostgresNotes
from tests.postgres import _bin, postgres_server

NOTE = "use the existing retry helper"
PLAN: dict[str, object] = {"id": "FEAT-001", "name": "Served", "verify": "python -m pytest -q",
        "tasks": [{"id": "TASK-1", "name": "one", "complexity": 2}]}
COMMANDS, DELAY_S = 6, 1.0
"""The player's session: a write, COMMANDS commands and its report, each answer DELAY_S after the last."""


def scenario() -> dict[str, Any]:
    steps: list[dict[str, Any]] = [{"write": {"path": "calc/one.py", "content": "ONE = 1\n"}, "delay": DELAY_S}]
    steps += [{"bash": "true", "delay": DELAY_S} for _ in range(COMMANDS)]
    steps += [{"tool": {"name": "report_progress", "input": {"files_modified": ["calc/one.py"],
                                                             "implementation_notes": "x"}}}, {"text": "done"}]
    coach = {"role": "coach", "steps": [{"tool": {"name": "record_decision", "input": {
        "decision": "approve", "rationale": "ok"}}}, {"text": "ok"}]}
    return {"sessions": [{"role": "player", "task": "TASK-1", "steps": steps}, coach]}


class Workers:
    """`autobuild serve` processes on one Postgres and Redis, each its own process group (a machine)."""

    def __init__(self, env: dict[str, str], folder: Path) -> None:
        self.env, self.folder, self.count = env, folder, 0
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self) -> str:
        port, n = _free_port(), self.count
        self.count += 1
        log = self.folder / f"worker-{n}.log"
        proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "serve"], cwd=self.folder,
                                stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True,
                                env=self.env | {"PORT": str(port), "ORCHESTRATOR_LEASE_SECONDS": "6",
                                                "ORCHESTRATOR_SERVE_DIR": str(self.folder / f"serve-{n}")})
        url = f"http://127.0.0.1:{port}"
        self.procs[url] = proc
        _wait_ok(url, proc, log)
        return url

    def serving(self) -> str | None:
        """The worker whose agent sessions are alive (their tag starts with its pid)."""
        tags = list(tagged_pids().values())
        return next((url for url, p in self.procs.items() if any(t.startswith(f"{p.pid}.") for t in tags)), None)

    def kill(self, url: str) -> None:
        proc = self.procs.pop(url)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def stop(self) -> None:
        for proc in self.procs.values():
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.procs.clear()


async def _ended(url: str, thread: str, timeout: float = 300.0) -> str:
    from langgraph_sdk import get_client  # noqa: PLC0415  # the `worker` extra

    client = get_client(url=url)
    for _ in range(int(timeout / 0.5)):
        runs = await client.runs.list(thread, limit=1)
        if runs and runs[0]["status"] not in ("pending", "running"):
            return str(runs[0]["status"])
        await asyncio.sleep(0.5)
    return "timeout"


def _wait(check: Any, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit("a takeover trial did not reach its player's session in time")
        time.sleep(0.05)


def trial(root: Path, model: ScriptedModel, workers: Workers, database_url: str, rng: random.Random) -> dict[str, int]:
    """One served run, a note and a kill -9 of its worker at random moments of the player's session."""
    repo = make_sample_repo(root / "repo", plan=PLAN)
    begun = time.time()
    first = [workers.start(), workers.start()]
    env = workers.env
    submitted = subprocess.run([sys.executable, "-m", "orchestrator", "submit", "FEAT-001", "--repo-url", str(repo),
                                "--server", first[0]], env=env, capture_output=True, text=True, check=True)
    thread = submitted.stdout.strip()

    def players(step: int = 0) -> list[Any]:
        return [r for r in model.requests if r.role == "player" and r.started >= begun and r.step >= step]

    _wait(lambda: bool(players(1)) and workers.serving() is not None)
    victim = workers.serving()
    assert victim is not None
    started, note_at, kill_at = time.monotonic(), rng.uniform(0.0, 2.0), rng.uniform(1.0, 16.0)
    queue, note = PostgresNotes(database_url, str(repo.resolve())), None
    while time.monotonic() - started < max(note_at, kill_at):
        if note is None and time.monotonic() - started >= note_at:
            note = queue.accept("FEAT-001", "TASK-1", NOTE)
        if victim in workers.procs and time.monotonic() - started >= kill_at:
            workers.kill(victim)
        time.sleep(0.02)
    if note is None:
        note = queue.accept("FEAT-001", "TASK-1", NOTE)
    if victim in workers.procs:
        workers.kill(victim)
    survivor = next(iter(workers.procs))
    status = asyncio.run(_ended(survivor, thread))
    workers.stop()
    sessions = [r.started for r in players() if r.step == 0]
    last = max(sessions, default=begun)
    kept = [r for r in players() if r.started >= last and NOTE in r.new_input]
    dying = [r for r in players() if r.started < last and NOTE in r.new_input]  # the killed session had it too
    consumed = [e for e in event_log.task_events(repo, "FEAT-001", "TASK-1")
                if e.kind == "note_consumed" and note.id in (e.fields.get("notes") or [])]
    state = queue.all_notes("FEAT-001", "TASK-1")[0].state
    return {"succeeded": int(status == "success"), "sessions": len(sessions), "seen": len(kept),
            "consumed_events": len(consumed), "lost": int(not kept), "redelivered": int(bool(dying)),
            "duplicated": int(len(kept) > 1 or len(consumed) > 1), "left_open": int(state != "consumed")}


Trial = Callable[[Path, ScriptedModel, "Workers", str, int], dict[str, Any]]
"""One trial: (its folder, the scripted model, its two workers, the database's URL, its number) → its counts."""


def worker_trials(trials: int, prefix: str, script: dict[str, Any], trial_of: Trial) -> list[dict[str, Any]] | str:
    """`trials` runs of `trial_of`, each with two fresh workers over one real Postgres and Redis and the model
    scripted by `script`; or why they could not run here."""
    if reason := unavailable():
        return reason
    try:
        _bin("initdb")
    except RuntimeError as exc:  # no PostgreSQL here: said, not measured
        return str(exc)
    results = []
    with (tempfile.TemporaryDirectory(prefix=prefix) as tmp, postgres_server() as database_url,
          _redis() as redis, ScriptedModel(script) as model):
        for i in range(trials):
            root = Path(tmp) / f"trial{i}"
            root.mkdir()
            env = scripted_env(model.base_url, root) | {
                "DATABASE_URL": database_url, "REDIS_URL": redis, "ORCHESTRATOR_WORKER_RUNS": "1",
                "ORCHESTRATOR_WORKSPACE": str(root / "ws"), "LANGSMITH_TRACING": "false"}
            results.append(trial_of(root, model, Workers(env, root), database_url, i))
    return results


def measure(trials: int = 5) -> dict[str, Any]:
    """`trials` takeovers, or why they could not run here."""
    rng = random.Random(40)
    results = worker_trials(trials, "takeover-", scenario(),
                            lambda root, model, workers, url, _: trial(root, model, workers, url, rng))
    if isinstance(results, str):
        return {"takeovers": 0, "skipped": results}
    return {"takeovers": trials, **totals(results)} if results else {}


def totals(results: list[dict[str, Any]]) -> dict[str, int]:
    """Each count any trial reported, summed over the trials (0 where a trial did not report it)."""
    return {key: sum(r.get(key, 0) for r in results) for key in sorted({key for r in results for key in r})}


def report_line(result: dict[str, Any]) -> str:
    if not result.get("takeovers"):
        return f"- Worker takeovers: not measured here ({result.get('skipped', 'no trial ran')})"
    return (f"- Worker takeovers ({result['takeovers']} trials: a served run on two workers, a note accepted into the"
            f" workers' Postgres and the serving worker killed -9 at random moments of the player's session, the other"
            f" worker finishing the run; {result['succeeded']} finished approved, {result['sessions']} player"
            f" sessions, {result['redelivered']} notes delivered to the dying session first and again to its"
            f" replacement): {result['lost']} lost, {result['duplicated']} duplicated (goal 0 and 0); notes left"
            f" unconsumed: {result['left_open']}")


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 5)))
