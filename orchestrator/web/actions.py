"""What the page changes, each through the path its command takes: a note, a pause, an unpause or a cancel is checked
and recorded by the function `autobuild steer|pause|unpause|cancel` calls (store/supervise.py), and an answer is
`autobuild answer` itself, started as its own process (the run it resumes outlives the page). Two answers to one
question: the first wins, the second is told it was already answered."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.errors import InputError
from orchestrator.processes import Detached, start_detached
from orchestrator.repo.lock import lock_path
from orchestrator.store import supervise
from orchestrator.store import traces as trace
from orchestrator.store.steering import Note
from orchestrator.store.supervise import Refusal
from orchestrator.store.task_control import ControlRecord
from orchestrator.web.reading import Where, questions

__all__ = ["ANSWER_START_S", "Answers", "Refusal", "control_task", "send_note"]

ANSWER_START_S = 60.0
"""How long an answer's run may take to start (take the repository's lock, or refuse) before the page says so."""
_POLL_S = 0.1


def send_note(where: Where, feature: str, task_id: str, text: str, attempt: str | None = None) -> Note:
    """Accept a note for a running task (every attempt, or the one named: `a2`): `autobuild steer`'s own path
    (store/supervise.py), from the page."""
    return supervise.send_note(where.repo, where.db, feature, task_id, text, attempt=attempt, source="page")


def control_task(where: Where, feature: str, task_id: str, action: str, *, now: bool = False) -> ControlRecord:
    """A pause, unpause or cancel: `autobuild pause|unpause|cancel`'s own path (store/supervise.py), from the page."""
    return supervise.control_task(where.repo, where.db, feature, task_id, action, now=now, source="page")


def _asked_before(where: Where, feature: str, question_id: str, tasks: Sequence[str]) -> bool:
    """Whether the run ever asked this question (its task's trace says so)."""
    return any(event.get("event") == "question_asked" and event.get("question_id") == question_id
               for task_id in tasks for event in trace.read(where.repo, feature, task_id))


def _lock_holder(repo: Path) -> int | None:
    try:
        return int(json.loads(lock_path(repo).read_text())["pid"])
    except (OSError, ValueError, KeyError, TypeError, InputError):
        return None


@dataclass
class Answers:
    """The answers this page started, by (feature, question id): the first one given wins."""

    where: Where
    command: Sequence[str] = (sys.executable, "-m", "orchestrator")
    started: dict[tuple[str, str], Detached] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    async def answer_async(self, feature: str, question_id: str, text: str) -> str:
        """`answer`, off the event loop."""
        return await asyncio.to_thread(self.answer, feature, question_id, text)

    def answer(self, feature: str, question_id: str, text: str) -> str:
        """Resume the feature's run with the answer, as `autobuild answer FEAT Q TEXT` (blocking: call it in a
        thread). Returns once that run holds the repository (the answer is taken), else says why it refused."""
        if not text.strip():
            raise Refusal("the answer is empty: pick an option or say what the agent should do", 400)
        plan = self.where.plan(feature)
        with self._lock:  # held until the run started or refused: a second answer waits, then is told
            given = self.started.get((plan.id, question_id))
            if given is not None and given.poll() is None:  # its run is going on with it
                raise Refusal(f"{question_id} was already answered")
            table = self.where.status(plan)
            if question_id not in {q["question_id"] for q in questions(table)}:
                if _asked_before(self.where, plan.id, question_id, plan.task_ids()):
                    raise Refusal(f"{question_id} was already answered")
                raise Refusal(f"{plan.id} has no question {question_id} waiting for an answer", 404)
            if running := [key for key, proc in self.started.items() if key[0] == plan.id and proc.poll() is None]:
                raise Refusal(f"the run that took {running[0][1]}'s answer is going on: answer {question_id} once it"
                              " stopped at the question again")
            return self._start(plan.id, question_id, text.strip())

    def _start(self, feature: str, question_id: str, text: str) -> str:
        log = trace.runs_dir(self.where.repo, feature) / "answers.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        offset = log.stat().st_size if log.exists() else 0
        argv = [*self.command, "answer", feature, question_id, text, "--repo", str(self.where.repo), "--interactive",
                "--from", "page", *(["--db", self.where.db] if self.where.db else [])]
        proc = start_detached(argv, self.where.repo, log)
        self.started[(feature, question_id)] = proc
        deadline = time.monotonic() + ANSWER_START_S
        while proc.poll() is None and _lock_holder(self.where.repo) != proc.pid:
            if time.monotonic() > deadline:
                return f"{question_id} answered; its run is starting (see {log})"
            time.sleep(_POLL_S)
        if proc.returncode == 2:  # refused before it ran: nothing was taken
            del self.started[(feature, question_id)]
            said = log.read_bytes()[offset:].decode(errors="replace").strip().splitlines()
            reason = next((line.removeprefix("error: ") for line in reversed(said) if line.startswith("error:")),
                          "the answer's run refused to start")
            if "no pending question" in reason:
                raise Refusal(f"{question_id} was already answered")
            raise Refusal(reason)
        return f"{question_id} answered: the run goes on with it (its output: {log})"
