"""A person's answer is part of the task from then on: a task that asked, was answered and then failed is not asked
again when `resume` runs it again, nor are the tasks a replan puts in its place; their brief carries the answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, feedback, replacement, writes
from orchestrator.graph import runner
from orchestrator.settings import RunSettings
from tests.graph.harness import CALC_FILES, plan, task

QUESTION = "Which database should sessions use?"
SUB = {"calc/sub.py": "def sub(a, b):\n    return a - b\n"}


async def run(repo: Path, agents: ScriptedAgents, answer: tuple[str, str] | None = None,
              **options: Any) -> runner.RunSummary:
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(repo.parent / "db.sqlite"), agents=agents,
                           interactive=True, **{"max_turns": 1, "replan": 0, **options})
    return await runner.execute(runner.prepare(settings), lambda event: None, answer=answer)


def asks_then_fails() -> ScriptedAgents:
    """The player asks (until answered), the coach sends every turn back: the task fails at max turns."""
    return ScriptedAgents({("player", "TASK-001"): writes({"calc/half.py": "HALF = 1\n"}, question=QUESTION),
                           ("coach", "TASK-001"): feedback(("calc/sub.py", None, "sub is missing"))})


async def answered_and_failed(repo: Path, **options: Any) -> runner.RunSummary:
    asked = await run(repo, asks_then_fails(), **options)
    assert [q["question"] for q in asked.pending_questions] == [QUESTION]
    return await run(repo, asks_then_fails(), answer=(asked.pending_questions[0]["question_id"], "Postgres"),
                     **options)


async def test_resume_of_a_task_that_failed_after_an_answer_does_not_ask_again(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-001"), verify=None))
    failed = await answered_and_failed(repo)
    assert failed.results["TASK-001"]["status"] == "failed" and not failed.pending_questions
    again = ScriptedAgents({("player", "TASK-001"): writes(SUB, question=QUESTION), "coach": approve()})
    resumed = await run(repo, again, resume_only=True)
    assert resumed.pending_questions == [], "answered before: not asked again"
    assert resumed.results["TASK-001"]["status"] == "approved-unverified"
    for call in again.calls:  # the player's and the coach's brief, every turn
        assert call.input.brief.answers == {QUESTION: "Postgres"}, call.role


async def test_the_tasks_a_replan_puts_in_place_of_an_answered_task_know_the_answer(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-001"), verify=None))
    agents = asks_then_fails()
    agents.script |= {("replan", "TASK-001"): replacement({"id": "a", "name": "subtract", "complexity": 2}),
                      ("player", "TASK-001-R1-1"): writes(SUB, question=QUESTION), "coach": approve()}
    asked = await run(repo, agents, replan=1)
    proposal = await run(repo, agents, answer=(asked.pending_questions[0]["question_id"], "Postgres"), replan=1)
    assert [q["question_id"] for q in proposal.pending_questions] == ["TASK-001-replan-1"]
    assert agents.prompts_of("replan", "TASK-001")[0].brief.answers == {QUESTION: "Postgres"}
    done = await run(repo, agents, answer=("TASK-001-replan-1", "yes"), replan=1)
    assert done.pending_questions == [], "the replacement is not asked what the replaced task was told"
    assert done.results["TASK-001-R1-1"]["status"] == "approved-unverified"
    assert agents.prompts_of("player", "TASK-001-R1-1")[0].brief.answers == {QUESTION: "Postgres"}
