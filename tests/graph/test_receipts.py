"""Receipts, in-process: the approved attempt against rejected turns and retries, adding up to what was spent."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, feedback, writes
from orchestrator.cli.main import main
from orchestrator.plan.model import load_plan
from orchestrator.store import inspection
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.store.stats import scorecard, task_facts
from tests import schemas
from tests.graph.harness import CALC_FILES, Workflow, plan, task

SUB = {"calc/sub.py": "def sub(a, b):\n    return a - b\n"}


async def test_receipts_split_the_approved_attempt_from_the_rest_and_add_up(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES,
                            plan=plan(task("TASK-001"), task("TASK-002", "TASK-001")))
    agents = ScriptedAgents({
        ("player", "TASK-001", 1): writes({"calc/other.py": "X = 1\n"}, cost_usd=0.10),
        ("player", "TASK-001", 2): writes(SUB, cost_usd=0.20),
        ("coach", "TASK-001", 1): feedback(("calc/sub.py", None, "missing")),  # 0.01
        # turn 2: the coach ends without a decision once (retried), then approves
        ("coach", "TASK-001", 2): [Turn(report=None, cost_usd=0.03), Turn(report=approve().report, cost_usd=0.04)],
        ("player", "TASK-002"): writes({"calc/mul.py": "def mul(a, b):\n    return a * b\n"}, cost_usd=0.05,
                                       cache_read_tokens=300),  # of its 400 input tokens
        ("coach", "TASK-002"): approve(),  # 0.01
    })
    db = tmp_path / "db.sqlite"
    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        run = await Workflow(repo, agents, checkpointer=saver).run()
    assert run.status("TASK-001") == "approved" and run.status("TASK-002") == "approved"
    first = run.results["TASK-001"]["receipt"]
    assert first["approved_cost_usd"] == pytest.approx(0.24) and first["approved_turns"] == 1
    assert first["other_cost_usd"] == pytest.approx(0.14) and first["other_turns"] == 1
    assert first["other"]["rejected_usd"] == pytest.approx(0.11)
    assert first["other"]["retries_usd"] == pytest.approx(0.03)
    second = run.results["TASK-002"]["receipt"]
    assert second["approved_cost_usd"] == pytest.approx(0.06) and second["other_cost_usd"] == 0.0
    assert (second["input_tokens"], second["cache_read_tokens"]) == (500, 300), "the coach's 100 read nothing cached"
    assert (first["input_tokens"], first["cache_read_tokens"]) == (500, 0), "five sessions of 100, a retry's too"

    table = schemas.valid("status", {"schema_version": 1, **inspection.feature_status(
        CheckpointStore(str(db)), load_plan(repo, "FEAT-001"))})
    feature = table["receipt"]
    assert feature["approved_cost_usd"] + feature["other_cost_usd"] == pytest.approx(table["cost_usd"])
    assert table["cost_usd"] == pytest.approx(0.44)
    assert feature["approved_turns"] == 2 and feature["other_turns"] == 1
    for row in table["tasks"]:
        assert row["receipt"]["approved_cost_usd"] + row["receipt"]["other_cost_usd"] == pytest.approx(row["cost_usd"])

    report = (repo / ".autobuild/runs/FEAT-001/AUTO-RUN.md").read_text()
    assert "approved attempt $0.3000 (2 turns); everything else $0.1400 (1 turn" in report
    assert "| TASK-001 | approved | 2 | $0.3800 | $0.2400 (1) | $0.1400 (1) |" in report
    task_report = (repo / ".autobuild/runs/FEAT-001/TASK-001/AUTO-RUN.md").read_text()
    assert "rejected $0.1100, retries $0.0300" in task_report
    assert "; cache reads 30% of 1.0k input tokens (at a tenth of the price: input billed at 73% of uncached)" \
        in report
    card = schemas.valid("stats", {"schema_version": 1, "store": str(db),
                                   **scorecard(task_facts(CheckpointStore(str(db))))})
    assert card["cache_read_pct"] == 30.0 and card["receipt"]["cache_read_tokens"] == 300
    assert "cache reads 60% of 500 input tokens" in (repo / ".autobuild/runs/FEAT-001/TASK-002/AUTO-RUN.md").read_text()
    shown = schemas.valid("show-task", {"schema_version": 1, **inspection.show_task(
        repo, load_plan(repo, "FEAT-001"), "TASK-001")})
    assert shown["final"]["receipt"]["approved_cost_usd"] == pytest.approx(0.24)


async def test_a_failed_task_has_no_approved_attempt(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-001")))
    agents = ScriptedAgents({"player": writes({"calc/other.py": "X = 1\n"}, cost_usd=0.10),
                             "coach": feedback(("calc/sub.py", None, "missing"))})
    run = await Workflow(repo, agents).run(max_turns=2, replan=0)
    assert run.status("TASK-001") == "failed"
    receipt = run.results["TASK-001"]["receipt"]
    assert receipt["approved_cost_usd"] == 0.0 and receipt["approved_turns"] == 0
    assert receipt["other_turns"] == 2 and receipt["other_cost_usd"] == pytest.approx(0.22)


async def test_stats_over_a_store_with_known_outcomes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(
        task("T1"), task("T2", verify="python check.py && test -f calc/t2.py"), task("T3"), task("T4", "T3"),
        task("T5"), verify="python check.py"))
    wrong, right = {"calc/other.py": "X = 1\n"}, SUB
    agents = ScriptedAgents({
        ("player", "T1"): writes(right, cost_usd=0.10),
        ("player", "T2", 1): writes(wrong, cost_usd=0.10),
        ("player", "T2", 2): writes({**right, "calc/t2.py": "T2 = 2\n"}, cost_usd=0.10),
        ("player", "T3"): writes(wrong, cost_usd=0.10),
        ("coach", "T3"): feedback(("calc/sub.py", None, "missing")),
        ("player", "T5"): writes({**right, "calc/t5.py": "T5 = 5\n"}, question="Which name?", cost_usd=0.10),
        "coach": approve(),  # T2's first approval is false: the gate overturns it
    })
    db = tmp_path / "db.sqlite"
    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        workflow = Workflow(repo, agents, checkpointer=saver, options={"interactive": True, "max_turns": 2})
        first = await workflow.run()
        assert [i.value["question"] for i in first.interrupts] == ["Which name?"]
        run = await workflow.run(resume="sub")
    assert {t: run.status(t) for t in run.results} == {
        "T1": "approved", "T2": "approved", "T3": "failed", "T4": "skipped", "T5": "approved"}

    assert main(["stats", "--json", "--repo", str(repo), "--db", str(db)]) == 0
    card = schemas.valid("stats", capsys.readouterr().out)
    assert (card["features"], card["tasks"], card["approved"]) == (1, 4, 3)
    assert card["completed_without_human"] == 2 and card["completed_without_human_pct"] == 50.0
    assert card["turns_per_approved_task"] == pytest.approx(4 / 3, abs=0.01)
    assert card["first_turn_approvals"] == 2 and card["false_approvals_caught"] == 1
    assert card["claims_contradicted"] == 1 and card["replans"] == 0
    assert card["cost_usd"] == pytest.approx(run.results["T1"]["cost_usd"] + run.results["T2"]["cost_usd"]
                                             + run.results["T3"]["cost_usd"] + run.results["T5"]["cost_usd"])
    assert card["outcomes"] == {"approved": 3, "failed": 1, "skipped": 1}
    assert main(["stats", "--repo", str(repo), "--db", str(db), "--since", "2999-01-01"]) == 0
    assert "no finished tasks" in capsys.readouterr().out
    assert main(["stats", "--repo", str(repo), "--db", str(db), "--since", "soon"]) == 2
