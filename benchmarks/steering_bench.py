"""Steering (issue 41): how soon a note reaches a running player, and whether a `kill -9` loses or duplicates one.

- Latency: the real CLI against the scripted model, a player session of several commands (0.3 s each); a note is
  accepted into the real SQLite queue while a command runs; counted: the tool calls the session made from the note's
  acceptance until a request to the model carried it (1: right after the command that was running).
- Worker takeovers: a served run on two real workers, its serving worker killed -9 (benchmarks/steering_takeovers.py);
  the same around an answer given through the server (benchmarks/steering_answer_takeovers.py).
- Answers: a question answered the way `autobuild answer` does, killed -9 around the answer's life, then resumed
  (benchmarks/steering_answers.py).
- Kill -9: a child process runs a 3-turn task (scripted agents, the real graph, git and SQLite checkpoints); a note
  is accepted at a random moment, the child is killed -9 at another, and a new one resumes the run to its end. Lost:
  no kept player session (the last one of each turn) saw the note; duplicated: more than one did, or it was recorded
  consumed more than once.

    python -m benchmarks.steering_bench [TRIALS]
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
import threading
import time
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agents import AgentResult, PlayerInput, SessionLimits, SessionSettings, TaskBrief, run_player
from agents.testing.repos import make_sample_repo, scripted_env
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, feedback, writes
from agents.testing.scripted_model import ScriptedModel
from benchmarks import steering_answer_takeovers, steering_answers, steering_takeovers
from orchestrator.store import event_log
from orchestrator.store.locations import remember_db
from orchestrator.store.steering import SteeringQueue
from tests.graph.harness import CALC_FILES, Workflow, plan, task

NOTE = "use the existing retry helper"
_COMMAND = "python3 -c 'import time; time.sleep(0.3)'"


def _latency_trial(root: Path, accept_after: int) -> int | None:
    """Tool calls from the note's acceptance (while command `accept_after` runs) until the model saw it."""
    steps: list[dict[str, Any]] = [{"bash": _COMMAND} for _ in range(6)] + [{"text": "Done."}]
    queue = SteeringQueue(root / "db.sqlite")
    worktree = root / "wt"
    worktree.mkdir(parents=True)
    with ScriptedModel({"sessions": [{"role": "player", "task": "T-1", "steps": steps}]}) as model:
        os.environ.update(scripted_env(model.base_url, root))

        def send() -> None:  # the person, at a moment of their own: while command `accept_after` runs
            while len(model.requests) < accept_after:
                time.sleep(0.01)
            time.sleep(0.1)
            queue.accept("FEAT-001", "T-1", NOTE)

        async def pending() -> list[str]:
            return [note.text for note in await asyncio.to_thread(queue.claim, "FEAT-001", "T-1", 1, 1)]

        person = threading.Thread(target=send, daemon=True)
        person.start()
        brief = TaskBrief("Feature", "T-1", "Task", ["do it"], [], None)
        settings = SessionSettings(model="claude-sonnet-4-5", limits=SessionLimits(session_timeout_s=120.0))
        asyncio.run(run_player(PlayerInput(brief, 1, 10, worktree, pending_notes=pending), settings))
        seen = [record.step for record in model.requests if NOTE in record.new_input]
    return seen[0] - accept_after + 1 if len(seen) == 1 else None


def _child(root: Path, mode: str) -> None:
    """One process of a kill trial: run (or resume) the feature; every finished player session is logged."""

    class Logged(ScriptedAgents):
        async def player(self, data: PlayerInput, settings: SessionSettings) -> AgentResult:
            result = await super().player(data, settings)
            line = {"turn": data.turn, "notes": [*data.supervisor_notes, *self.calls[-1].boundary_notes]}
            with (root / "sessions.jsonl").open("a") as log:
                log.write(json.dumps(line) + "\n")
            return result

    def coach(data: Any) -> Turn:
        return approve() if data.turn >= 3 else feedback(("calc/sub.py", None, "more"))

    def player(data: Any) -> Turn:
        return writes({"calc/sub.py": f"def sub(a, b):\n    return a - b  # {data.turn}\n"}, delay_s=0.4, tool_calls=3)

    async def run() -> None:
        async with AsyncSqliteSaver.from_conn_string(str(root / "db.sqlite")) as saver:
            agents = Logged({"player": player, "coach": coach})
            begun = await saver.aget_tuple({"configurable": {"thread_id": "FEAT-001", "checkpoint_ns": ""}})
            fresh = mode == "run" or begun is None  # killed before its first checkpoint: it starts over
            await Workflow(root / "repo", agents, checkpointer=saver).run(max_turns=3, fresh_input=fresh)

    asyncio.run(run())


def _kill_trial(root: Path, rng: random.Random) -> dict[str, int]:
    repo = make_sample_repo(root / "repo", files=CALC_FILES, plan=plan(task("TASK-001")))
    remember_db(repo, "FEAT-001", str(root / "db.sqlite"))
    command = [sys.executable, "-m", "benchmarks.steering_bench", "child", str(root)]
    with (root / "run.log").open("w") as said:  # what a child said, for a trial that went wrong
        child = subprocess.Popen([*command, "run"], stdout=said, stderr=subprocess.STDOUT)
    trace = repo / ".autobuild" / "runs" / "FEAT-001" / "TASK-001" / "trace.jsonl"
    while child.poll() is None and not trace.is_file():  # times count from the task's start, not the process's
        time.sleep(0.02)
    started = time.monotonic()
    # The kill comes within 2 s of the note (before it, now and then): a 3-turn task lasts ~4 s on an idle machine,
    # so a kill drawn over the whole run mostly came after its end, and most notes after the task had finished.
    note_at = rng.uniform(0.0, 2.0)
    kill_at = max(0.0, note_at + rng.uniform(-0.5, 2.0))
    queue, note = SteeringQueue(root / "db.sqlite"), None
    while child.poll() is None and time.monotonic() - started < max(note_at, kill_at):
        if note is None and time.monotonic() - started >= note_at:
            note = queue.accept("FEAT-001", "TASK-001", NOTE)
        time.sleep(0.02)
    if note is None:
        note = queue.accept("FEAT-001", "TASK-001", NOTE)
    killed = child.poll() is None
    if killed:
        os.kill(child.pid, signal.SIGKILL)
    child.wait()
    with (root / "resume.log").open("w") as said:
        subprocess.run([*command, "resume"], stdout=said, stderr=subprocess.STDOUT, check=False)
    kept: dict[int, list[str]] = {}
    log = root / "sessions.jsonl"
    for line in log.read_text().splitlines() if log.is_file() else []:
        session = json.loads(line)
        kept[session["turn"]] = session["notes"]  # the last session of a turn is the one its checkpoint kept
    seen = sum(1 for notes in kept.values() for text in notes if NOTE in text)
    consumed = [e for e in event_log.task_events(repo, "FEAT-001", "TASK-001")
                if e.kind == "note_consumed" and note.id in (e.fields.get("notes") or [])]
    state = queue.all_notes("FEAT-001", "TASK-001")[0].state
    return {"killed": int(killed), "seen": seen, "consumed_events": len(consumed),
            "lost": int(seen == 0 and state != "accepted"), "duplicated": int(seen > 1 or len(consumed) > 1),
            "left_open": int(state != "consumed")}


def measure(trials: int = 20, latency_trials: int = 6, takeovers: int = 5,
            answer_trials: int | None = None, answer_takeovers: int | None = None) -> dict[str, Any]:
    """`trials` kill trials of a note and (`answer_trials`, else as many) of an answer; `takeovers` worker ones of a
    note and (`answer_takeovers`, else as many) of an answer."""
    rng = random.Random(41)
    with tempfile.TemporaryDirectory(prefix="steering-") as tmp:
        base = Path(tmp)
        calls = [_latency_trial(base / f"latency{i}", rng.randint(1, 4)) for i in range(latency_trials)]
        kills = [_kill_trial(base / f"kill{i}", rng) for i in range(trials)]
    seen_calls = sorted(call for call in calls if call is not None)
    return {"latency_trials": latency_trials, "tool_calls": seen_calls,
            "p95_tool_calls": seen_calls[max(0, int(0.95 * len(seen_calls)) - 1)] if seen_calls else None,
            "latency_missed": sum(1 for call in calls if call is None), "trials": trials,
            "killed": sum(k["killed"] for k in kills), "lost": sum(k["lost"] for k in kills),
            "duplicated": sum(k["duplicated"] for k in kills), "left_open": sum(k["left_open"] for k in kills),
            "takeovers": steering_takeovers.measure(takeovers),
            "answers": steering_answers.measure(trials if answer_trials is None else answer_trials),
            "answer_takeovers": steering_answer_takeovers.measure(
                takeovers if answer_takeovers is None else answer_takeovers)}


def report_lines(result: dict[str, Any]) -> list[str]:
    return [
        "## Steering: a note to a running player (issue 41)",
        "",
        f"- Note accepted → seen by the player (real CLI, scripted model, 0.3 s commands, {result['latency_trials']}"
        f" sessions): tool calls until the model's next request carried it {result['tool_calls']}, p95"
        f" {result['p95_tool_calls']} (goal ≤ 1); sessions that never saw it: {result['latency_missed']}",
        f"- `kill -9` mid-run ({result['trials']} trials, {result['killed']} killed before the end; a note accepted and"
        f" a kill at random moments, then a resume): {result['lost']} lost, {result['duplicated']} duplicated"
        f" (goal 0 and 0); notes left unconsumed: {result['left_open']}",
        steering_answers.report_line(result.get("answers") or {}),
        steering_takeovers.report_line(result.get("takeovers") or {}),
        steering_answer_takeovers.report_line(result.get("answer_takeovers") or {}),
        "",
    ]


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "child":
        _child(Path(sys.argv[2]), sys.argv[3])
        sys.exit(0)
    print(json.dumps(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 20)))
