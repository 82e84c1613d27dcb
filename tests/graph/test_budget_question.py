"""At a budget's cap an interactive run asks whether to raise it, as an ordinary question (issue 39, item 5): in-
process at a terminal, an interrupt on a served run; a yes raises it for the rest of the run (kept in the run's
folder), a no stops the task as before, and `--autonomous` stops as today (tests/graph/test_loop.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, writes
from orchestrator.graph.nodes.budget_question import raised_to
from tests.graph.harness import CALC_FILES, Workflow, plan, task

SUB = {"calc/sub.py": "def sub(a, b):\n    return a - b\n"}


def _repo(tmp_path: Path) -> Path:
    return make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-1")))


class Person:
    """A person at the terminal, answering every question with `answer` (an option's number stands for it)."""

    def __init__(self, answer: str) -> None:
        self.answer, self.asked = answer, []  # type: ignore[var-annotated]

    async def __call__(self, question: dict[str, Any]) -> str:
        self.asked.append(question)
        return question["options"][int(self.answer) - 1] if self.answer.isdigit() else self.answer


async def test_a_session_stopped_at_the_cap_asks_and_a_yes_goes_on(tmp_path: Path) -> None:
    """The CLI ends the player's session at the run's cap: the turn ends unfinished, not the task; the next session's
    start asks, "yes" raises the budget to twice the cap (past what was spent) and the task gets approved."""
    repo = _repo(tmp_path)
    agents = ScriptedAgents({("player", "TASK-1"): [Turn(files=SUB, status="budget", cost_usd=0.06),
                                                    writes(SUB, cost_usd=0.01)], "coach": approve()})
    person = Person("1")
    run = await Workflow(repo, agents).run(budget_usd=0.05, interactive=True, asker=person, replan=0)
    assert run.status("TASK-1") == "approved", run.results["TASK-1"]["reason"]
    assert [q["question"] for q in person.asked] == [
        "The feature's budget of $0.05 is spent ($0.0600). Raise it to $0.11?"]
    assert person.asked[0]["question_id"] == "TASK-1-budget-5" and person.asked[0]["task"] == "TASK-1"
    raised = [e for e in run.events if e["event"] == "budget_raised"]
    assert [(e["budget"], e["from_usd"], e["to_usd"]) for e in raised] == [("feature", 0.05, 0.11)]
    assert "budget_reached" in run.kinds("TASK-1") and "question_asked" in run.kinds("TASK-1")
    kept = json.loads((repo / ".autobuild/runs/FEAT-001/budgets.json").read_text())
    assert kept == {"feature": [0.05, 0.11]}
    assert "stopped at the run's budget" in agents.prompts_of("player", "TASK-1")[1].feedback_notes[0]
    assert "contract_violation" not in run.kinds("TASK-1"), "the cap ended the session, not the agent"


async def test_a_no_stops_the_task_as_the_cap_did(tmp_path: Path) -> None:
    """Also when the repository commits a raise of its own: only a person's answer raises a budget."""
    repo = _repo(tmp_path)
    planted = repo / ".autobuild/runs/FEAT-001/budgets.json"
    planted.parent.mkdir(parents=True)
    planted.write_text(json.dumps({"feature": [0.05, 100.0]}))
    git(repo, "add", "-f", str(planted))
    git(repo, "commit", "-qm", "a raise nobody made")
    agents = ScriptedAgents({"player": writes(SUB, cost_usd=0.06), "coach": approve()})
    person = Person("2")
    run = await Workflow(repo, agents).run(budget_usd=0.05, interactive=True, asker=person)
    assert run.status("TASK-1") == "aborted" and run.results["TASK-1"]["cause"] == "budget"
    assert "a person kept it" in run.results["TASK-1"]["reason"]
    assert len(person.asked) == 1 and [call.role for call in agents.calls] == ["player"], "no coach session"


async def test_a_served_run_asks_by_interrupt_and_the_answer_raises_it_for_the_run(tmp_path: Path) -> None:
    """No terminal: the cap is an interrupt, answered like an agent's question; an amount raises it to that. The
    raise is kept: the next invocation of the run neither asks again nor stops at the old cap."""
    repo = _repo(tmp_path)
    agents = ScriptedAgents({"player": [writes(SUB, cost_usd=0.06), writes(SUB, cost_usd=0.01, question="Why?")],
                             "coach": [Turn(report={"decision": "feedback", "rationale": "again",
                                                    "feedback_items": []}, cost_usd=0.01), approve()]})
    workflow = Workflow(repo, agents, options={"interactive": True, "budget_usd": 0.05, "replan": 0})
    first = await workflow.run()
    assert [i.value["question_id"] for i in first.interrupts] == ["TASK-1-budget-5"]
    assert [call.role for call in agents.calls] == ["player"], "the coach waits for the answer"
    asked = await workflow.run(resume="$0.50")
    assert [i.value["question"] for i in asked.interrupts] == ["Why?"], "the agent's own question, in turn 2"
    done = await workflow.run(resume="because")
    assert not done.interrupts and done.status("TASK-1") == "approved", done.results["TASK-1"]["reason"]
    assert [call.role for call in agents.calls] == ["player", "coach", "player", "player", "coach"]
    assert "budget_raised" not in done.kinds(), "the raise was kept: the third invocation asked nothing again"
    assert json.loads((repo / ".autobuild/runs/FEAT-001/budgets.json").read_text()) == {"feature": [0.05, 0.5]}


def test_what_an_answer_raises_the_budget_to() -> None:
    for answer in ("yes", "Y", "yes: raise it to $0.11"):
        assert raised_to(answer, 0.11, 0.06) == 0.11
    assert raised_to("$0.50", 0.11, 0.06) == raised_to("raise to 0.5", 0.11, 0.06) == 0.5
    for answer in ("no", "no: stop the task", "", "0.01", "$-5", "maybe"):
        assert raised_to(answer, 0.11, 0.06) is None, answer
