"""The steering bench's answers over worker takeovers (issue 41): a served one-task feature (two `autobuild serve`
workers on one real Postgres and Redis, the real CLI against the scripted model) whose player asks a question; the
answer is given through the server (`autobuild answer --server`, the route the worker's page uses too) and the
serving worker is killed -9 at a random moment of the answer's life: while the answer command starts (before it is
accepted: a person then answers again through the other worker), just after it is accepted, or while the resumed
player session runs. The other worker takes the run over. Lost: no kept player session (the last of its turn) had
the answer, or the run ended waiting for it again; duplicated: more than one kept session had it, or `answer_given`
was recorded more than once; asked again: a second `question_asked`.

    python -m benchmarks.steering_answer_takeovers [TRIALS]
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from benchmarks.steering_takeovers import PLAN, Workers, _ended, _wait, totals, worker_trials
from orchestrator.store import event_log

QUESTION, ANSWER = "Which store should sessions use?", "Postgres, the one the workers share"
COMMANDS, DELAY_S = 5, 1.0
"""The answered session: COMMANDS commands before its write and report, each answer DELAY_S after the last."""
MOMENTS = ("session", "accepted", "starting")
"""Taken in turn, the takeover of a running session first; the wait within each is drawn."""


def scenario() -> dict[str, Any]:
    steps: list[dict[str, Any]] = [{"ask": {"question": QUESTION, "options": [ANSWER, "SQLite"]}}]
    steps += [{"bash": "true", "delay": DELAY_S} for _ in range(COMMANDS)]
    steps += [{"write": {"path": "calc/store.txt", "content": "postgres\n"}},
              {"tool": {"name": "report_progress", "input": {"files_modified": ["calc/store.txt"],
                                                             "implementation_notes": "x"}}}, {"text": "done"}]
    coach = {"role": "coach", "steps": [{"tool": {"name": "record_decision", "input": {
        "decision": "approve", "rationale": "ok"}}}, {"text": "ok"}]}
    return {"sessions": [{"role": "player", "task": "TASK-1", "steps": steps}, coach]}


def _cli(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "orchestrator", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _events(repo: Path, kind: str) -> list[event_log.LoggedEvent]:
    return [e for e in event_log.task_events(repo, "FEAT-001", "TASK-1") if e.kind == kind]


def _kill_around_answer(workers: Workers, repo: Path, qid: str, moment: str, *, rng: random.Random,
                        sessions: Any) -> dict[str, int]:
    """Give the answer through the worker that asked and kill -9 the serving worker at `moment`."""
    victim = next(iter(workers.procs))
    answer = ["answer", "FEAT-001", qid, ANSWER, "--repo-url", str(repo), "--server"]
    answering = _cli(workers.env, *answer, victim)
    before = sessions()
    if moment == "starting":  # the answer command is a fresh process: it reaches the server ~1 s in
        time.sleep(rng.uniform(0.0, 1.2))
    else:
        answering.wait()
        if moment == "accepted":
            time.sleep(rng.uniform(0.0, 1.0))
        else:  # the resumed player session runs: kill within its commands
            _wait(lambda: sessions() > before and workers.serving() is not None)
            time.sleep(rng.uniform(0.0, COMMANDS * DELAY_S))
    victim = workers.serving() or victim
    took_over = int(workers.serving() == victim)
    workers.kill(victim)
    accepted = answering.wait() == 0
    if not accepted:  # never accepted: the person answers again, through the worker still up
        survivor = next(iter(workers.procs))
        again = _cli(workers.env, *answer, survivor)
        err = again.communicate()[1]
        assert again.returncode == 0, err
    return {"accepted_before_kill": int(accepted), "took_over": took_over}


def trial(root: Path, model: ScriptedModel, workers: Workers, rng: random.Random, moment: str) -> dict[str, int]:
    """One served run: the question asked, the answer given through the server and a worker killed around it."""
    repo = make_sample_repo(root / "repo", plan=PLAN)
    begun = time.time()
    first = [workers.start(), workers.start()]
    submitted = subprocess.run([sys.executable, "-m", "orchestrator", "submit", "FEAT-001", "--repo-url", str(repo),
                                "--server", first[0]], env=workers.env, capture_output=True, text=True, check=True)
    thread = submitted.stdout.strip()

    def players() -> list[Any]:
        return [r for r in model.requests if r.role == "player" and r.started >= begun]

    asyncio.run(_ended(first[0], thread))  # the run stops at the question
    status = _cli(workers.env, "status", "FEAT-001", "--repo-url", str(repo), "--server", first[0], "--json")
    [question] = json.loads(status.communicate()[0])["questions"]
    killed = _kill_around_answer(workers, repo, str(question["question_id"]), moment, rng=rng,
                                 sessions=lambda: sum(1 for r in players() if r.step == 0))
    survivor = next(iter(workers.procs))
    ended = asyncio.run(_ended(survivor, thread))
    final = _cli(workers.env, "status", "FEAT-001", "--repo-url", str(repo), "--server", survivor, "--json")
    waiting = bool(json.loads(final.communicate()[0] or "{}").get("questions"))
    workers.stop()
    kept: dict[int | None, list[Any]] = {}
    for request in sorted(players(), key=lambda r: r.started):
        if request.step == 0:
            kept[request.turn] = []  # the last session of a turn is the one its checkpoint kept
        kept.setdefault(request.turn, []).append(request)
    seen = sum(1 for requests in kept.values()
               if any(ANSWER in r.prompt + r.new_input + "".join(r.tool_results) for r in requests))
    given = len(_events(repo, "answer_given"))
    return {"succeeded": int(ended == "success"), "sessions": sum(1 for r in players() if r.step == 0),
            **killed, f"at_{moment}": 1, "waiting_at_end": int(waiting), "lost": int(seen == 0 or waiting),
            "duplicated": int(seen > 1 or given > 1), "answer_given": given,
            "question_answered": len(_events(repo, "question_answered")),
            "asked_again": int(len(_events(repo, "question_asked")) > 1)}


def measure(trials: int = 5) -> dict[str, Any]:
    """`trials` answers around a worker's kill, or why they could not run here."""
    rng = random.Random(4142)
    results = worker_trials(trials, "answer-takeover-", scenario(), lambda root, model, workers, _, i: trial(
        root, model, workers, rng, MOMENTS[i % len(MOMENTS)]))
    if isinstance(results, str):
        return {"trials": 0, "skipped": results}
    return {"trials": trials, **totals(results), "per_trial": results}  # which moment lost or duplicated, when one did


def report_line(result: dict[str, Any]) -> str:
    if not result.get("trials"):
        return f"- Answers over worker takeovers: not measured here ({result.get('skipped', 'no trial ran')})"
    return (f"- Answers over worker takeovers ({result['trials']} trials: a served run on two workers, the player's"
            f" question answered through the server and the serving worker killed -9 while the answer command"
            f" started ({result.get('at_starting', 0)}), just after it was accepted ({result.get('at_accepted', 0)})"
            f" or during the resumed player session ({result.get('at_session', 0)}); {result['took_over']} killed"
            f" with the run's player session alive on it, {result['succeeded']} finished approved):"
            f" {result['lost']} lost, {result['duplicated']} duplicated, {result['asked_again']} asked again"
            f" (goal 0, 0 and 0)")


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 5)))
