"""Every attempt counts (issue 33, item 2): a task run three times cost three times, and the live footer,
`status`, `show`, the feature reports, the final table and `stats` say the same total."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from agents.testing.scripted_agents import ScriptedAgents, approve, feedback, writes
from orchestrator.cli.main import main
from orchestrator.plan.model import load_plan
from orchestrator.store import inspection
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.store.stats import scorecard, task_facts
from orchestrator.views.live_view import TaskBoard
from orchestrator.views.progress import render_table
from tests import schemas
from tests.graph.test_one_truth import DIV, MUL, Metered, failing_second, run, three_tasks


def failing_again() -> ScriptedAgents:
    return ScriptedAgents({("player", "TASK-002"): writes({"calc/other.py": "X = 2\n"}),
                           ("coach", "TASK-002"): feedback(("calc/mul.py", None, "missing"))})


async def test_a_task_run_three_times_costs_three_times_in_every_view(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, db = three_tasks(tmp_path), tmp_path / "db.sqlite"
    await run(repo, db, "FEAT-001", failing_second())  # TASK-001 $0.02; TASK-002 fails at 2 turns: $0.04
    await run(repo, db, "FEAT-001", failing_again(), resume_only=True)  # TASK-002 again: $0.04
    events: list[dict[str, Any]] = []
    last = Metered({("player", "TASK-002"): writes(MUL), ("player", "TASK-004"): writes(DIV), "coach": approve()})
    summary = await run(repo, db, "FEAT-001", last, events, resume_only=True)  # TASK-002 $0.02, TASK-004 $0.02
    assert summary.exit_code == 0
    total = 0.02 + (0.04 + 0.04 + 0.02) + 0.02

    store, feature = CheckpointStore(str(db)), load_plan(repo, "FEAT-001")
    status = inspection.feature_status(store, feature)
    assert status["cost_usd"] == pytest.approx(total)
    assert {row["task"]: row["cost_usd"] for row in status["tasks"]} == pytest.approx(
        {"TASK-001": 0.02, "TASK-002": 0.10, "TASK-004": 0.02})
    receipt = next(row["receipt"] for row in status["tasks"] if row["task"] == "TASK-002")
    assert receipt["approved_cost_usd"] + receipt["other_cost_usd"] == pytest.approx(0.10), "a receipt adds up"
    assert receipt["other_turns"] == 4 and receipt["other"]["earlier_attempts_usd"] == pytest.approx(0.08)

    board = TaskBoard()
    for event in events:
        board.update(event, 0.0)
    assert f"spent ${total:.4f}" in board.footer()

    capsys.readouterr()
    assert main(["show", "FEAT-001", "--repo", str(repo), "--db", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"]["cost_usd"] == pytest.approx(total)
    assert main(["show", "FEAT-001", "TASK-002", "--repo", str(repo), "--db", str(db), "--json"]) == 0
    shown = schemas.valid("show-task", capsys.readouterr().out)
    assert shown["attempts"] == 3 and shown["spent"]["cost_usd"] == pytest.approx(0.10), shown
    assert main(["show", "FEAT-001", "TASK-002", "--repo", str(repo), "--db", str(db)]) == 0
    shown_text = capsys.readouterr().out
    assert "every attempt: $0.1000" in shown_text
    assert main(["status", "--repo", str(repo), "--db", str(db), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)  # `status` without a feature: one row per thread
    assert [row["cost_usd"] for row in listed if row["thread"] == "FEAT-001"] == [pytest.approx(total)], listed

    report = (repo / ".autobuild/runs/FEAT-001/AUTO-RUN.md").read_text()
    assert f"**Total cost:** ${total:.4f}" in report, report
    assert "| TASK-002 | approved | 1 | $0.1000 | $0.0200 (1) | $0.0800 (4) |" in report, report
    page = (repo / ".autobuild/runs/FEAT-001/report.html").read_text()
    assert f"total cost ${total:.4f}" in page
    assert main(["status", "FEAT-001", "--repo", str(repo), "--db", str(db)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("TASK-002"))
    assert "  $0.1000  " in row and "$ " not in row, row  # the sign beside its number
    assert main(["history", "FEAT-001", "--repo", str(repo), "--db", str(db)]) == 0
    steps = capsys.readouterr().out.splitlines()
    assert {line.split()[0] for line in steps} >= {"feature", "TASK-001", "TASK-002"}, steps  # whose step it is

    table = io.StringIO()
    render_table(summary.results, summary.order, table, width=120, spent=summary.spent)
    assert f"${total:.4f}" in table.getvalue().splitlines()[-1], table.getvalue()

    card = scorecard(task_facts(store))
    assert card["cost_usd"] == pytest.approx(total) and card["features"] == 1 and card["tasks"] == 3
    assert card["receipt"]["other_turns"] == 4 and card["receipt"] == status["receipt"]
