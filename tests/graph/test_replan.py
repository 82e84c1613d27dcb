"""Replan instead of failing, in-process: a task too big for its turns is replaced by the planner's smaller tasks,
its dependents wait for them, the feature finishes; an invalid replacement is refused; `--replan 0` is today."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agents.replanner import ReplanInput
from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, feedback, replacement, writes
from orchestrator.cli.main import main
from orchestrator.views.live_view import TaskBoard
from tests import schemas
from tests.graph.harness import CALC_FILES, Workflow, plan, task

SUB = {"calc/sub.py": "def sub(a, b):\n    return a - b\n"}


def repo_with_a_big_task(tmp_path: Path) -> Path:
    return make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(
        task("TASK-001", requirements=["calc/sub.py defines sub", "calc/neg.py defines neg"]),
        task("TASK-002", "TASK-001")))


def script(**replans: object) -> ScriptedAgents:
    return ScriptedAgents({
        # the big task never gets there in two turns: the coach sends it back twice
        ("player", "TASK-001"): writes({"calc/half.py": "HALF = 1\n"}, notes="half of it"),
        ("coach", "TASK-001"): feedback(("calc/neg.py", None, "neg is missing")),
        ("player", "TASK-001-R1-1"): writes(SUB),
        ("player", "TASK-001-R1-2"): writes({"calc/neg.py": "def neg(a):\n    return -a\n"}),
        ("player", "TASK-002"): writes({"calc/mul.py": "def mul(a, b):\n    return a * b\n"}),
        "coach": approve(),
        **{("replan", task_id): turn for task_id, turn in replans.items()},  # type: ignore[misc]
    })


TWO_TASKS = replacement(
    {"id": "a", "name": "subtract", "complexity": 2, "requirements": ["calc/sub.py defines sub"]},
    {"id": "b", "name": "negate", "complexity": 2, "dependencies": ["a"], "requirements": ["calc/neg.py"]},
    cost_usd=0.05)


async def test_a_task_out_of_turns_is_replaced_by_the_planners_two_tasks_and_the_feature_finishes(
        tmp_path: Path) -> None:
    agents = script(**{"TASK-001": TWO_TASKS})
    run = await Workflow(repo_with_a_big_task(tmp_path), agents).run(max_turns=2)
    assert {t: run.status(t) for t in run.results} == {
        "TASK-001": "replaced", "TASK-001-R1-1": "approved", "TASK-001-R1-2": "approved", "TASK-002": "approved"}
    replaced = run.results["TASK-001"]
    assert replaced["replaced_by"] == ["TASK-001-R1-1", "TASK-001-R1-2"]
    assert replaced["reason"].startswith("replaced by TASK-001-R1-1, TASK-001-R1-2 (max turns reached (2)")
    asked = agents.prompts_of("replan", "TASK-001")
    assert len(asked) == 1 and isinstance(asked[0], ReplanInput)
    assert asked[0].brief.requirements[:2] == ["calc/sub.py defines sub", "calc/neg.py defines neg"]
    assert "neg is missing" in asked[0].feedback and "calc/half.py" in asked[0].diff
    # the dependent waited for both new tasks (merged), and the second new task for the first
    order = [(e["event"], e.get("task")) for e in run.events if e["event"] in ("merge", "task_ready")]
    assert order.index(("task_ready", "TASK-002")) > order.index(("merge", "TASK-001-R1-2"))
    assert order.index(("task_ready", "TASK-001-R1-2")) > order.index(("merge", "TASK-001-R1-1"))
    # the replan's cost is the replaced task's, in its receipt, and the receipts add up to the feature's total
    assert replaced["receipt"]["other"]["replans_usd"] == pytest.approx(0.05) and replaced["receipt"]["replans"] == 1
    total = sum(r["cost_usd"] for r in run.results.values())
    summed = sum(r["receipt"]["approved_cost_usd"] + r["receipt"]["other_cost_usd"] for r in run.results.values())
    assert summed == pytest.approx(total)
    assert [e["tasks"] for e in run.events if e["event"] == "replan"] == [["TASK-001-R1-1", "TASK-001-R1-2"]]
    board = TaskBoard()
    for event in run.events:
        board.update(event, 0.0)
    assert board.rows["TASK-001"].state == "replaced" and board.rows["TASK-001-R1-2"].state == "approved"
    report = (run_dir(tmp_path) / "AUTO-RUN.md").read_text()
    assert "| TASK-001 | replaced |" in report and "| TASK-001-R1-2 | approved |" in report
    task_report = (run_dir(tmp_path) / "TASK-001/AUTO-RUN.md").read_text()
    assert "split this task into TASK-001-R1-1, TASK-001-R1-2" in task_report


def run_dir(tmp_path: Path) -> Path:
    return tmp_path / "repo/.autobuild/runs/FEAT-001"


@pytest.mark.parametrize(("proposal", "why"), [
    (replacement({"id": "a", "name": "x", "dependencies": ["b"]}, {"id": "b", "name": "y", "dependencies": ["a"]}),
     "dependency cycle"),
    (replacement({"id": "a", "name": "x", "dependencies": ["TASK-404"]}), "depends on unknown task TASK-404"),
])
async def test_an_invalid_replacement_is_refused_and_the_task_stays_failed_with_the_reason(
        tmp_path: Path, proposal: object, why: str) -> None:
    agents = script(**{"TASK-001": proposal})
    run = await Workflow(repo_with_a_big_task(tmp_path), agents).run(max_turns=2)
    assert run.status("TASK-001") == "failed" and run.status("TASK-002") == "skipped"
    assert "replan refused" in run.results["TASK-001"]["reason"] and why in run.results["TASK-001"]["reason"]
    assert set(run.results) == {"TASK-001", "TASK-002"}
    assert [e["event"] for e in run.events if e["event"].startswith("replan")] == ["replan_start", "replan_refused"]


async def test_replan_0_keeps_todays_behaviour(tmp_path: Path) -> None:
    agents = script(**{"TASK-001": TWO_TASKS})
    run = await Workflow(repo_with_a_big_task(tmp_path), agents).run(max_turns=2, replan=0)
    assert run.status("TASK-001") == "failed" and run.status("TASK-002") == "skipped"
    assert run.results["TASK-001"]["reason"] == "max turns reached (2) without an approval"
    assert not agents.prompts_of("replan", "TASK-001")


async def test_a_question_in_a_replacement_task_pauses_and_resumes_without_asking_the_planner_again(
        tmp_path: Path) -> None:
    agents = script(**{"TASK-001": TWO_TASKS})
    agents.script[("player", "TASK-001-R1-2")] = writes({"calc/neg.py": "def neg(a):\n    return -a\n"},
                                                        question="Negate zero how?")
    workflow = Workflow(repo_with_a_big_task(tmp_path), agents, options={"interactive": True, "max_turns": 2})
    agreed = await workflow.run()
    assert [i.value["question_id"] for i in agreed.interrupts] == ["TASK-001-replan-1"]
    first = await workflow.run(resume="yes")
    assert [i.value["question"] for i in first.interrupts] == ["Negate zero how?"]
    second = await workflow.run(resume="as -0")
    assert {t: second.status(t) for t in second.results} == {
        "TASK-001": "replaced", "TASK-001-R1-1": "approved", "TASK-001-R1-2": "approved", "TASK-002": "approved"}
    assert len(agents.prompts_of("replan", "TASK-001")) == 1, "the replan was replayed from the checkpoint"
    assert len(agents.prompts_of("player", "TASK-001-R1-1")) == 1, "finished replacement work is not redone"
    assert len(agents.prompts_of("player", "TASK-001")) == 2, "nor the replaced task's turns"
    assert agents.prompts_of("player", "TASK-001-R1-2")[-1].answers == {"Negate zero how?": "as -0"}


async def test_status_graph_show_stats_and_land_see_the_replacement(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    repo = repo_with_a_big_task(tmp_path)
    db = tmp_path / "db.sqlite"
    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        await Workflow(repo, script(**{"TASK-001": TWO_TASKS}), checkpointer=saver).run(max_turns=2)
    where = ["--repo", str(repo), "--db", str(db), "--json"]

    def document(*args: str) -> dict[str, Any]:
        assert main([*args, *where]) == 0
        return dict(json.loads(capsys.readouterr().out))

    status = schemas.valid("status", json.dumps(document("status", "FEAT-001")))
    assert [(row["task"], row["status"]) for row in status["tasks"]] == [
        ("TASK-001", "replaced"), ("TASK-001-R1-1", "approved"), ("TASK-001-R1-2", "approved"),
        ("TASK-002", "approved")]
    chart = document("graph", "FEAT-001")
    assert chart["outcomes"]["TASK-001"] == "replaced" and "TASK-001-R1-2" in chart["node_ids"]
    shown = document("show", "FEAT-001", "TASK-001-R1-2")
    assert shown["final"]["status"] == "approved"
    replaced = schemas.valid("show-task", json.dumps(document("show", "FEAT-001", "TASK-001")))
    assert replaced["replaced_by"] == ["TASK-001-R1-1", "TASK-001-R1-2"]
    assert document("stats")["replans"] == 1
    assert (repo / ".autobuild/features/FEAT-001.yaml").read_text().count("TASK-001-R1") == 0, "plan file untouched"
    landed = await asyncio.to_thread(main, ["land", "FEAT-001", "--repo", str(repo), "--db", str(db)])
    assert landed == 0, capsys.readouterr()
    assert (repo / "calc/neg.py").is_file() and (repo / "calc/mul.py").is_file()


@pytest.mark.parametrize(("answer", "status"), [("yes", "replaced"), ("no", "failed")])
async def test_interactive_runs_ask_before_replacing_a_task(tmp_path: Path, answer: str, status: str) -> None:
    agents = script(**{"TASK-001": TWO_TASKS})
    workflow = Workflow(repo_with_a_big_task(tmp_path), agents, options={"interactive": True, "max_turns": 2})
    first = await workflow.run()
    [asked] = [i.value for i in first.interrupts]
    assert asked["question_id"] == "TASK-001-replan-1" and "TASK-001-R1-2: negate" in asked["question"]
    assert not agents.prompts_of("player", "TASK-001-R1-1"), "nothing replaced before the answer"
    second = await workflow.run(resume=answer)
    assert second.status("TASK-001") == status
    assert len(agents.prompts_of("replan", "TASK-001")) == 1, "the answer does not ask the planner again"
    assert second.status("TASK-002") == ("approved" if answer == "yes" else "skipped")


@pytest.mark.heavy  # second of its family: `make test` stays under 5 minutes
async def test_a_finished_replacement_is_rebuilt_from_the_checkpoint_when_the_run_resumes(tmp_path: Path) -> None:
    agents = script(**{"TASK-001": TWO_TASKS})
    agents.script[("player", "TASK-002")] = writes({"calc/mul.py": "def mul(a, b):\n    return a * b\n"},
                                                   question="Integers only?")
    workflow = Workflow(repo_with_a_big_task(tmp_path), agents, options={"interactive": True, "max_turns": 2})
    await workflow.run()  # the replan question
    waiting = await workflow.run(resume="yes")  # the replacement runs and finishes; TASK-002 asks
    assert [i.value["question"] for i in waiting.interrupts] == ["Integers only?"]
    done = await workflow.run(resume="yes, integers")  # replays TASK-001's finished task from the checkpoint
    assert {t: done.status(t) for t in done.results} == {
        "TASK-001": "replaced", "TASK-001-R1-1": "approved", "TASK-001-R1-2": "approved", "TASK-002": "approved"}
    assert len(agents.prompts_of("replan", "TASK-001")) == 1
    assert len(agents.prompts_of("player", "TASK-001-R1-2")) == 1 and len(agents.prompts_of("player", "TASK-002")) == 2


async def test_at_a_terminal_the_replacement_is_agreed_in_process(tmp_path: Path) -> None:
    """The question is asked when it is asked (issue 33, item 4): with the run's asker, the person's yes is taken
    in-process and the replacement runs in the same pass, no interrupt."""
    asked: list[dict[str, Any]] = []

    async def asker(question: dict[str, Any]) -> str:
        asked.append(question)
        return "yes"

    agents = script(**{"TASK-001": TWO_TASKS})
    workflow = Workflow(repo_with_a_big_task(tmp_path), agents,
                        options={"interactive": True, "max_turns": 2, "asker": asker})
    run = await workflow.run()
    assert not run.interrupts
    assert [q["question_id"] for q in asked] == ["TASK-001-replan-1"]
    assert run.status("TASK-001") == "replaced" and run.status("TASK-002") == "approved"
