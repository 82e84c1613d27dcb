"""Steering (issue 41): whether a `kill -9` loses, duplicates or asks again a person's answer.

A child process runs a one-task feature (scripted agents, the real graph, git and SQLite checkpoints) whose player
asks a question: the run stops waiting for it. Another child gives the answer the way `autobuild answer` does (its
`run_command`, in-process: the same prepare, `answer_given` record and resume) and is killed -9 at a random moment of
the answer's life (accepted, stored in the checkpoint, consumed by the resumed player). Then, as a person would:
an answer the killed command never accepted (no `answer_given`) is given again, else the run is resumed. Lost: no
kept player session (the last of its turn) had the answer, or the run ended still waiting for it; duplicated: more
than one kept session was given it, or it was recorded accepted (`answer_given`) other than once; asked again: the
question was asked more than once. (A killed run that had taken the answer, `question_answered`, is taken again by
its resume: the checkpoint the kill lost never held it.)

    python -m benchmarks.steering_answers [TRIALS]
"""

from __future__ import annotations

import argparse
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

from agents import AgentResult, PlayerInput, SessionSettings
from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, writes
from orchestrator.cli.run import run_command
from orchestrator.settings import RunSettings
from orchestrator.store import event_log
from orchestrator.store.locations import remember_db
from tests.graph.harness import CALC_FILES, plan, task

QUESTION = "Which store should sessions use?"
ANSWER = "SQLite, the one already in the repo"


def _child(root: Path, mode: str) -> int:
    """One process of a trial: `run` (the question asked), `answer` (the answer given) or `resume`."""

    class Logged(ScriptedAgents):
        async def player(self, data: PlayerInput, settings: SessionSettings) -> AgentResult:
            with (root / "started.jsonl").open("a") as log:  # the session has the answer from its first step
                log.write(json.dumps({"turn": data.turn, "answers": dict(data.answers)}) + "\n")
            result = await super().player(data, settings)
            with (root / "sessions.jsonl").open("a") as log:
                log.write(json.dumps({"turn": data.turn, "answers": dict(data.answers)}) + "\n")
            return result

    def player(data: Any) -> Turn:
        return writes({"calc/sub.py": "def sub(a, b):\n    return a - b\n"}, question=QUESTION,
                      options=["SQLite", "Postgres"], delay_s=0.4, tool_calls=3)

    agents = Logged({"player": player, "coach": approve()})
    settings = RunSettings(repo=root / "repo", target="FEAT-001", db=str(root / "db.sqlite"), agents=agents,
                           interactive=True, replan=0, max_turns=2)  # no terminal: the question waits
    args = argparse.Namespace(command=mode)
    if mode == "answer":
        args.question_id, args.text = json.loads((root / "question.json").read_text()), ANSWER
    return run_command(args, settings)


def _spawn(root: Path, mode: str) -> subprocess.Popen[bytes]:
    with (root / f"{mode}.log").open("a") as said:  # what a child said, for a trial that went wrong
        return subprocess.Popen([sys.executable, "-m", "benchmarks.steering_answers", "child", str(root), mode],
                                stdout=said, stderr=subprocess.STDOUT)


def _events(repo: Path, kind: str) -> list[event_log.LoggedEvent]:
    return [e for e in event_log.task_events(repo, "FEAT-001", "TASK-001") if e.kind == kind]


def drawn(rng: random.Random) -> Callable[[subprocess.Popen[bytes], Path], None]:
    """The wait before the kill, drawn around the answer's life: now and then before it is accepted (the command
    starting), else up to 2 s after its `answer_given` (stored in the checkpoint as the run resumes, consumed by
    the player)."""
    after = rng.uniform(-0.5, 2.0)

    def wait(answering: subprocess.Popen[bytes], repo: Path) -> None:
        if after < 0:
            time.sleep(rng.uniform(0.3, 2.0))
            return
        while answering.poll() is None and not _events(repo, "answer_given"):
            time.sleep(0.02)
        time.sleep(after)

    return wait


def trial(root: Path, wait: Callable[[subprocess.Popen[bytes], Path], None]) -> dict[str, int]:
    """One trial: the question asked, the answer given and killed -9 once `wait` returns, then the person's way on."""
    repo = make_sample_repo(root / "repo", files=CALC_FILES, plan=plan(task("TASK-001")))
    remember_db(repo, "FEAT-001", str(root / "db.sqlite"))
    _spawn(root, "run").wait()
    asked = _events(repo, "question_asked")
    (root / "question.json").write_text(json.dumps(str(asked[0].fields["question_id"])))
    answering = _spawn(root, "answer")
    wait(answering, repo)
    killed = answering.poll() is None
    if killed:
        os.kill(answering.pid, signal.SIGKILL)
    answering.wait()
    accepted = bool(_events(repo, "answer_given"))
    last = _spawn(root, "resume" if accepted else "answer")  # never accepted: the person answers again
    code = last.wait()
    kept: dict[int, dict[str, str]] = {}
    for line in (root / "sessions.jsonl").read_text().splitlines():
        session = json.loads(line)
        kept[session["turn"]] = session["answers"]  # the last session of a turn is the one its checkpoint kept
    seen = sum(1 for answers in kept.values() if answers.get(QUESTION) == ANSWER)
    given = len(_events(repo, "answer_given"))
    return {"killed": int(killed), "accepted_before_kill": int(accepted), "waiting_at_end": int(code == 3),
            "lost": int(seen == 0 or code == 3), "duplicated": int(seen > 1 or given != 1),
            "asked_again": int(len(_events(repo, "question_asked")) > 1)}


def measure(trials: int = 20) -> dict[str, Any]:
    rng = random.Random(4141)
    with tempfile.TemporaryDirectory(prefix="steering-answers-") as tmp:
        results = []
        for number in range(trials):
            (Path(tmp) / f"t{number}").mkdir()
            results.append(trial(Path(tmp) / f"t{number}", drawn(rng)))
    return {"trials": trials, **{key: sum(r[key] for r in results) for key in results[0]}} if results else {}


def report_line(result: dict[str, Any]) -> str:
    if not result:
        return "- `kill -9` around an answer: not run"
    return (f"- `kill -9` around an answer ({result['trials']} trials, {result['killed']} killed before the run's"
            f" end, {result['accepted_before_kill']} of them after the answer was accepted; an answer the killed"
            f" command never accepted was given again, else the run resumed): {result['lost']} lost,"
            f" {result['duplicated']} duplicated, {result['asked_again']} asked again (goal 0, 0 and 0)")


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "child":
        sys.exit(_child(Path(sys.argv[2]), sys.argv[3]))
    print(json.dumps(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 20)))
