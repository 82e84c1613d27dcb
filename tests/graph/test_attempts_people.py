"""A task's attempts and the people and money around them (issue 40, items 1, 4 and 5), in-process: a question
asked in the same words by sibling attempts is asked once and its answer reaches every sibling; a budget reached
stops the running attempts and the finished candidate is judged; a replan comes only after every attempt failed,
and its tasks run as many attempts; a crash while three attempts run resumes only the unfinished ones."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, feedback, replacement, writes
from orchestrator.cli.ask import QuestionDesk
from orchestrator.cli.main import main
from orchestrator.graph import runner
from orchestrator.settings import RunSettings
from orchestrator.views.progress import Progress
from tests import schemas
from tests.graph.harness import CALC_FILES, Workflow, plan, task

SUB = {"calc/sub.py": "def sub(a, b):\n    return a - b\n"}
WRONG = {"calc/other.py": "X = 1\n"}  # the gate (check.py) needs calc/sub.py
QUESTION = "Should sub round half up?"


def repo_with(tmp_path: Path, **fields: Any) -> Path:
    return make_sample_repo(tmp_path / "repo", files=dict(CALC_FILES), plan=plan(task("TASK-001", **fields)))


class AnsweredFirst(ScriptedAgents):
    """Attempt 2's second turn starts only once attempt 1 ran with the person's answer (bounded: a broken run
    fails, not hangs): what attempt 2 is told then is what a sibling's answer gives it."""

    def __init__(self, script: dict[Any, Any]) -> None:
        super().__init__(script)
        self.answered = asyncio.Event()

    async def player(self, data: Any, settings: Any) -> Any:
        if data.attempt == 1 and data.answers:
            self.answered.set()
        if data.attempt == 2 and data.turn == 2:
            await asyncio.wait_for(self.answered.wait(), timeout=30)
        return await super().player(data, settings)


async def test_a_question_is_asked_once_and_its_answer_reaches_every_sibling(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, attempts=3)
    asks = writes(WRONG, question=QUESTION, options=["yes", "no"])
    agents = AnsweredFirst({("player", "TASK-001.a1"): asks, ("player", "TASK-001.a3"): asks,
                            ("player", "TASK-001.a2"): writes(WRONG), "coach": feedback(("calc", None, "no"))})
    prompts: list[str] = []
    desk = QuestionDesk(lambda event: None, Progress(stream=io.StringIO()), enabled=True,
                        read=lambda prompt: prompts.append(prompt) or "yes", write=lambda text: None)
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(tmp_path / "db.sqlite"), agents=agents,
                           interactive=True, parallel=3, replan=0, max_turns=2, asker=desk.answer,
                           attempts_policy="best")
    summary = await runner.execute(runner.prepare(settings), desk)
    assert summary.pending_questions == [] and summary.results["TASK-001"]["status"] == "failed"
    assert len(prompts) == 1, "attempts 1 and 3 asked in the same words: the person is asked once"
    turn_two = {c.attempt: c.input for c in agents.calls if c.role == "player" and c.turn == 2}
    assert {k: turn_two[k].brief.answers for k in (1, 2, 3)} == {k: {QUESTION: "yes"} for k in (1, 2, 3)}
    coach_two = [c.input.brief.answers for c in agents.calls if c.role == "coach" and c.attempt == 2 and c.turn == 2]
    assert coach_two == [{QUESTION: "yes"}], "attempt 2 never asked: its sibling's answer is in its brief"


async def test_one_answer_resumes_every_sibling_waiting_on_the_same_question(tmp_path: Path,
                                                                             capsys: pytest.CaptureFixture[str]
                                                                             ) -> None:
    # No terminal: each attempt's question is an interrupt; the same words are one question, one answer.
    repo = repo_with(tmp_path, attempts=2)
    agents = ScriptedAgents({"player": writes(SUB, question=QUESTION), "coach": approve()})
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(tmp_path / "db.sqlite"), agents=agents,
                           interactive=True, parallel=2, replan=0, max_turns=1, attempts_policy="best")
    asked = await runner.execute(runner.prepare(settings), lambda event: None)
    ids = [q["question_id"] for q in asked.pending_questions]
    assert len(ids) == 2 and len(set(ids)) == 1, "both attempts wait on one question"
    resumed = settings.model_copy(update={"resume_only": True})
    done = await runner.execute(runner.prepare(resumed), lambda event: None,
                                answer=(asked.pending_questions[0]["question_id"], "yes"))
    assert done.pending_questions == [], "the one answer resumed both attempts"
    result = done.results["TASK-001"]
    assert [r["status"] for r in result["attempts"]] == ["approved", "approved"] and result["merged"]
    answered = [c.input.answers for c in agents.calls if c.role == "player" and c.input.answers]
    assert answered == [{QUESTION: "yes"}, {QUESTION: "yes"}]
    # `stats` counts the task's attempts and which one won.
    assert main(["stats", "--repo", str(repo), "--db", str(tmp_path / "db.sqlite"), "--json"]) == 0
    card = schemas.valid("stats", json.loads(capsys.readouterr().out))
    assert card["attempts"] == {"tasks_with_attempts": 1, "attempts_per_task": 2.0,
                                "won_by_attempt": {str(result["picked"]): 1}}


async def test_a_budget_reached_stops_the_running_attempt_and_the_finished_candidate_lands(tmp_path: Path) -> None:
    # The feature's $0.05: attempt 1 is approved on its first turn; attempt 2 keeps being sent back and stops at
    # the budget; the selection judges the finished candidate, attempt 1, and it lands.
    repo = repo_with(tmp_path, attempts=2)
    agents = ScriptedAgents({("player", "TASK-001.a1"): writes(SUB), ("coach", "TASK-001.a1"): approve(),
                             "player": writes(WRONG), "coach": feedback(("calc", None, "no"))})
    run = await Workflow(repo, agents).run(budget_usd=0.05, max_turns=5, parallel=2, attempts_policy="best")
    result = run.results["TASK-001"]
    records = {r["attempt"]: r for r in result["attempts"]}
    assert records[2]["status"] == "aborted" and "budget" in records[2]["reason"]
    assert (result["status"], result["picked"], result["merged"]) == ("approved", 1, True)
    assert result["cost_usd"] <= 0.05 + 0.01 + 1e-9
    # Each attempt has its receipt; the task's adds them up.
    for record in records.values():
        receipt = record["receipt"]
        assert abs(receipt["approved_cost_usd"] + receipt["other_cost_usd"] - record["cost_usd"]) < 1e-6
    assert records[1]["receipt"]["approved_cost_usd"] > 0 and records[2]["receipt"]["approved_cost_usd"] == 0
    assert abs(result["receipt"]["other"]["sibling_attempts_usd"] - records[2]["cost_usd"]) < 1e-6


async def test_a_replan_comes_after_every_attempt_failed_and_its_tasks_run_as_many(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, attempts=2)
    agents = ScriptedAgents({("player", "TASK-001"): writes(WRONG), ("coach", "TASK-001"): feedback(("x", None, "no")),
                             ("replan", "TASK-001"): replacement({"id": "a", "name": "subtract", "complexity": 2}),
                             "player": writes(SUB), "coach": approve()})
    run = await Workflow(repo, agents).run(max_turns=1, replan=1, parallel=1)
    # The run said at its start that the attempts wait for the one slot.
    queued = [e for e in run.events if e["event"] == "attempts_queue"]
    assert [(e["attempts"], e["parallel"]) for e in queued] == [(2, 1)]
    assert "--parallel 1" in str(Progress.describe(queued[0]))
    kinds = [(e["event"], e.get("task"), e.get("attempt")) for e in run.events
             if e["event"] in ("attempt_end", "replan_start")]
    assert kinds[:3] == [("attempt_end", "TASK-001", 1), ("attempt_end", "TASK-001", 2),
                         ("replan_start", "TASK-001", None)], "the planner only after every attempt failed"
    assert run.results["TASK-001"]["status"] == "replaced"
    new = run.results["TASK-001-R1-1"]
    assert new["status"] == "approved" and len(new["attempts"]) == 2, "the replacement runs as two attempts"
    assert [r["status"] for r in new["attempts"]] == ["approved", "cancelled"]
    assert "calc/sub.py" in git(repo, "ls-tree", "-r", "--name-only", "autobuild/FEAT-001")


async def test_a_crash_while_three_attempts_run_resumes_only_the_unfinished_ones(tmp_path: Path) -> None:
    # Attempt 1 is approved at once; attempts 2 and 3, both sent back on their first turn, crash in their second
    # (the process dies there): nothing lands. The resume never runs attempt 1 again, nor anyone's first turn.
    repo = repo_with(tmp_path, attempts=3)
    saver = InMemorySaver()
    crash = Turn(raises=OSError("the worker was killed"))
    before = ScriptedAgents({("player", "TASK-001.a1"): writes(SUB), ("coach", "TASK-001.a1"): approve(),
                             ("player", "TASK-001.a2"): [writes(WRONG), crash],
                             ("player", "TASK-001.a3"): [writes(WRONG), crash],
                             "coach": feedback(("calc", None, "no"))})
    first = await Workflow(repo, before, checkpointer=saver).run(max_turns=2, parallel=3, attempts_policy="best")
    assert "TASK-001" not in first.results and not [e for e in first.events if e["event"] == "selection"]
    assert sorted((c.role, c.attempt, c.turn) for c in before.calls if c.attempt == 1) == [("coach", 1, 1),
                                                                                        ("player", 1, 1)]
    assert git(repo, "rev-parse", "autobuild/FEAT-001") == git(repo, "rev-parse", "main")
    after = ScriptedAgents({("player", "TASK-001.a2"): writes(SUB), ("coach", "TASK-001.a2"): approve(),
                            "player": writes(WRONG), "coach": feedback(("calc", None, "no"))})
    second = await Workflow(repo, after, checkpointer=saver).run(fresh_input=False, max_turns=2, parallel=3,
                                                                 attempts_policy="best")
    assert sorted((c.role, c.attempt, c.turn) for c in after.calls if c.role in ("player", "coach")) == [
        ("coach", 2, 2), ("coach", 3, 2), ("player", 2, 2), ("player", 3, 2)], "only the unfinished, where they were"
    result = second.results["TASK-001"]
    assert [r["status"] for r in result["attempts"]] == ["approved", "approved", "failed"]
    assert (result["picked"], result["merged"]) == (1, True), "attempt 1 was approved first"
    assert [e["picked"] for e in second.events if e["event"] == "selection"] == [1]
