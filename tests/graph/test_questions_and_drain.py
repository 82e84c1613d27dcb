"""Questions pause one task while the others go on; drain stops at a step boundary; both resume."""

from __future__ import annotations

from pathlib import Path

from langgraph.runtime import RunControl

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, writes
from orchestrator.graph.given_answer import given_answer, with_source
from tests.graph.harness import CALC_FILES, Workflow, plan, task

QUESTION = "Which database should sessions use?"


def repo_with(tmp_path: Path, *tasks: dict[str, object]) -> Path:
    return make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(*tasks, verify=None))


def asking(files: dict[str, str | None]) -> Turn:
    return writes(files, question=QUESTION)


async def test_question_pauses_its_task_and_dependents_only_then_the_answer_reaches_the_agent(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, task("A"), task("B"), task("C", "A"))
    agents = ScriptedAgents({("player", "A"): asking({"calc/a.py": "A = 1\n"}),
                             ("player", "B"): writes({"calc/b.py": "B = 1\n"}),
                             ("player", "C"): writes({"calc/c.py": "C = 1\n"}), "coach": approve()})
    workflow = Workflow(repo, agents, options={"interactive": True})
    first = await workflow.run()
    assert [i.value["question"] for i in first.interrupts] == [QUESTION]
    question = first.interrupts[0].value
    assert question["question_id"].startswith("A-") and question["task"] == "A"
    assert "finalize" in first.kinds("B"), "B went on while A waited"
    assert not agents.prompts_of("player", "C"), "C waits for A's answer"
    second = await workflow.run(resume="Postgres")
    assert {t: second.status(t) for t in "ABC"} == dict.fromkeys("ABC", "approved-unverified")
    assert agents.prompts_of("player", "A")[-1].answers == {QUESTION: "Postgres"}
    assert len(agents.prompts_of("player", "B")) == 1


def two_asking(tmp_path: Path) -> tuple[ScriptedAgents, Workflow]:
    """Tasks A and B side by side, each player asking its own question."""
    repo = repo_with(tmp_path, task("A"), task("B"))
    agents = ScriptedAgents({("player", "A"): asking({"calc/a.py": "A = 1\n"}),
                             ("player", "B"): writes({"calc/b.py": "B = 1\n"}, question="Tabs or spaces?"),
                             "coach": approve()})
    return agents, Workflow(repo, agents, options={"interactive": True, "parallel": 2})


async def test_two_questions_answered_by_interrupt_id(tmp_path: Path) -> None:
    agents, workflow = two_asking(tmp_path)
    first = await workflow.run()
    assert len(first.interrupts) == 2
    by_task = {i.value["task"]: i for i in first.interrupts}
    partial = await workflow.run(resume={by_task["A"].id: "SQLite"})
    assert partial.status("A") if partial.output else True
    assert [i.value["task"] for i in partial.interrupts] == ["B"]
    final = await workflow.run(resume={partial.interrupts[0].id: "spaces"})
    assert final.status("A") == "approved-unverified" and final.status("B") == "approved-unverified"
    assert agents.prompts_of("player", "B")[-1].answers == {"Tabs or spaces?": "spaces"}


async def test_a_served_answer_says_where_it_was_given_and_is_the_answer_alone(tmp_path: Path) -> None:
    """A served run's answer comes as a resume value that says where a person gave it (`answer --server`: cli, the
    worker's page: page): the player gets the answer alone, the task's trace and the run's lines say where from."""
    agents, workflow = two_asking(tmp_path)
    first = await workflow.run()
    by_task = {i.value["task"]: i for i in first.interrupts}
    partial = await workflow.run(resume={by_task["A"].id: with_source("SQLite", "page")})
    final = await workflow.run(resume=with_source("spaces", "cli"))
    assert final.status("A") == final.status("B") == "approved-unverified"
    assert agents.prompts_of("player", "A")[-1].answers == {QUESTION: "SQLite"}
    assert agents.prompts_of("player", "B")[-1].answers == {"Tabs or spaces?": "spaces"}
    answered = [e for e in partial.events + final.events if e["event"] == "question_answered"]
    assert [(e["task"], e["answer"], e.get("source")) for e in answered] == [("A", "SQLite", "page"),
                                                                             ("B", "spaces", "cli")]
    assert given_answer({"answer": "x", "source": "a shell"}) == ({"answer": "x", "source": "a shell"}, {}), \
        "a value that names no known source is the answer itself"


async def test_autonomous_question_aborts_cleanly(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, task("A"))
    run = await Workflow(repo, ScriptedAgents({"player": asking({"calc/a.py": "A = 1\n"})})).run(interactive=False)
    assert run.status("A") == "aborted" and "ambiguous decision point" in run.results["A"]["reason"]
    assert "question_aborted" in run.kinds("A")


async def test_drain_stops_at_a_step_boundary_and_resume_finishes_without_redoing_work(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, task("A"), task("B", "A"))
    control = RunControl()

    def drain_while_a_runs(_: object) -> Turn:  # not a timer: a loaded machine may take longer to reach A's session
        control.request_drain()
        return writes({"calc/a.py": "A = 1\n"}, delay_s=0.5)

    agents = ScriptedAgents({("player", "A"): drain_while_a_runs,
                             ("player", "B"): writes({"calc/b.py": "B = 1\n"}), "coach": approve()})
    workflow = Workflow(repo, agents)
    first = await workflow.run(control=control)
    assert first.output is None
    assert len(agents.prompts_of("player", "A")) == 1, "the running step finished"
    assert not agents.prompts_of("player", "B")
    second = await workflow.run(fresh_input=False)
    assert second.status("A") == "approved-unverified" and second.status("B") == "approved-unverified"
    assert len(agents.prompts_of("player", "A")) == 1, "A's player turn is not redone"
