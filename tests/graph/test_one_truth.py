"""One truth about a task, and a way on (issue 33, item 1): every view reads a task's outcome from the latest
finished attempt, whichever run produced it, and `resume` of a finished feature re-runs what can be re-run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.runtime import RunControl

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, blocked, feedback, writes
from orchestrator.cli.main import main
from orchestrator.errors import InputError
from orchestrator.graph import rerun, runner
from orchestrator.landing.record import read_record, standing
from orchestrator.plan.model import load_plan
from orchestrator.repo.git import GitRepo
from orchestrator.settings import RunSettings
from orchestrator.store import inspection, outcomes
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.views import pictures
from orchestrator.views.live_view import TaskBoard
from tests import schemas
from tests.graph.harness import CALC_FILES, plan, task

SUB = {"calc/sub.py": "def sub(a, b):\n    return a - b\n"}
MUL = {"calc/mul.py": "def mul(a, b):\n    return a * b\n"}
DIV = {"calc/div.py": "def div(a, b):\n    return a / b\n"}


def three_tasks(tmp_path: Path) -> Path:
    """TASK-001 ← TASK-002 ← TASK-004: the second one fails at max turns in the first run."""
    return make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(
        task("TASK-001"), task("TASK-002", "TASK-001"), task("TASK-004", "TASK-002")))


def failing_second() -> ScriptedAgents:
    return ScriptedAgents({
        ("player", "TASK-001"): writes(SUB), ("coach", "TASK-001"): approve(),
        ("player", "TASK-002"): writes({"calc/other.py": "X = 1\n"}),
        ("coach", "TASK-002"): feedback(("calc/mul.py", None, "missing")),
    })


def approving() -> ScriptedAgents:
    return ScriptedAgents({("player", "TASK-002"): writes(MUL), ("player", "TASK-004"): writes(DIV),
                           "coach": approve()})


async def run(repo: Path, db: Path, target: str, agents: ScriptedAgents, events: list[dict[str, Any]] | None = None,
              **options: Any) -> runner.RunSummary:
    settings = RunSettings(repo=repo, target=target, db=str(db), agents=agents, interactive=False, replan=0,
                           **{"max_turns": 2, **options})
    sink = events.append if events is not None else (lambda event: None)
    return await runner.execute(runner.prepare(settings), sink)


def statuses(table: dict[str, Any]) -> dict[str, str]:
    return {row["task"]: row["status"] for row in table["tasks"]}


async def test_after_a_one_task_run_every_view_tells_the_same_outcome(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, db = three_tasks(tmp_path), tmp_path / "db.sqlite"
    first = await run(repo, db, "FEAT-001", failing_second())
    assert first.results["TASK-002"]["status"] == "failed" and first.results["TASK-004"]["status"] == "skipped"

    single = await run(repo, db, "TASK-002", approving(), max_turns=3)
    assert single.results["TASK-002"]["status"] == "approved" and single.results["TASK-002"]["merged"]

    store, feature = CheckpointStore(str(db)), load_plan(repo, "FEAT-001")
    table = inspection.feature_status(store, feature)
    assert statuses(table) == {"TASK-001": "approved", "TASK-002": "approved", "TASK-004": "skipped"}
    assert table["cost_usd"] == pytest.approx(sum(row["cost_usd"] for row in table["tasks"]))
    assert main(["status", "FEAT-001", "--repo", str(repo), "--db", str(db), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert {row["task"]: row["status"] for row in shown["tasks"]}["TASK-002"] == "approved"
    assert pictures.checkpoint_outcomes(store, feature) == statuses(table)
    shown = schemas.valid("show-task", {"schema_version": 1, **inspection.show_task(repo, feature, "TASK-002")})
    assert shown["attempts"] == 2 and [t["turn"] for t in shown["turns"]] == [1]
    assert shown["final"]["status"] == "approved"
    record = read_record(store, feature)
    assert record.results["TASK-002"]["status"] == "approved"
    found = standing(GitRepo(repo), feature, record)
    assert found.approved == ["TASK-001", "TASK-002"] and list(found.not_approved) == ["TASK-004"]
    assert any("`autobuild resume FEAT-001` runs the failed and skipped ones again" in why
               for why in found.refusals(partial=False))

    # `run TASK-004` now finds its dependency approved, and runs
    fourth = await run(repo, db, "TASK-004", approving())
    assert fourth.results["TASK-004"]["status"] == "approved"
    assert statuses(inspection.feature_status(store, feature)) == {
        "TASK-001": "approved", "TASK-002": "approved", "TASK-004": "approved"}
    report = (repo / ".autobuild/runs/FEAT-001/AUTO-RUN.md").read_text()
    for task_id in ("TASK-001", "TASK-002", "TASK-004"):
        assert f"| {task_id} | approved |" in report, report

    # `run FEAT-001 --fresh` sets the branch aside, and with it what the one-task runs did on it
    fresh = ScriptedAgents({("player", "TASK-001"): writes(SUB), ("player", "TASK-002"): writes(MUL),
                            ("player", "TASK-004"): writes({"calc/other.py": "X = 1\n"}),
                            ("coach", "TASK-004"): feedback(("calc/div.py", None, "missing")), "coach": approve()})
    await run(repo, db, "FEAT-001", fresh, fresh=True)
    assert outcomes.truth(store, "FEAT-001").threads == ["FEAT-001"]
    assert statuses(inspection.feature_status(store, feature))["TASK-004"] == "failed"


async def test_resume_of_a_finished_feature_reruns_its_failed_and_skipped_tasks(tmp_path: Path) -> None:
    repo, db = three_tasks(tmp_path), tmp_path / "db.sqlite"
    await run(repo, db, "FEAT-001", failing_second())
    events: list[dict[str, Any]] = []
    again = approving()
    summary = await run(repo, db, "FEAT-001", again, events, resume_only=True)
    assert {task: r["status"] for task, r in summary.results.items()} == {
        "TASK-001": "approved", "TASK-002": "approved", "TASK-004": "approved"}
    assert summary.exit_code == 0
    assert {call.task for call in again.calls} == {"TASK-002", "TASK-004"}, "approved work is not redone"
    store, feature = CheckpointStore(str(db)), load_plan(repo, "FEAT-001")
    assert set(statuses(inspection.feature_status(store, feature)).values()) == {"approved"}
    report = (repo / ".autobuild/runs/FEAT-001/AUTO-RUN.md").read_text()
    assert "| TASK-001 | approved |" in report and "| TASK-004 | approved |" in report


@pytest.mark.usefixtures("answering_endpoint")  # `resume` checks the credentials and the endpoint first
def test_blocked_tasks_are_rerun_only_when_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES,
                            plan=plan(task("TASK-001"), task("TASK-002"), task("TASK-003", "TASK-002")))
    db = tmp_path / "db.sqlite"
    stuck = ScriptedAgents({("player", "TASK-001"): writes(SUB), "coach": approve(),
                            ("player", "TASK-002"): blocked("which database?")})
    first = asyncio.run(run(repo, db, "FEAT-001", stuck))
    assert first.results["TASK-002"]["status"] == "blocked"
    plan_of = runner.prepare(RunSettings(repo=repo, target="FEAT-001", db=str(db), interactive=False,
                                         resume_only=True))
    assert rerun.rerun_plan(plan_of) == {}, "a blocked task needs a person; its dependent would only skip again"
    unnamed = asyncio.run(run(repo, db, "FEAT-001", approving(), resume_only=True))
    assert unnamed.already_finished and unnamed.results["TASK-002"]["status"] == "blocked"
    capsys.readouterr()
    where = ["--repo", str(repo), "--db", str(db)]
    assert main(["resume", "FEAT-001", *where]) == 1
    said = capsys.readouterr().out
    assert "TASK-002 (blocked) waits for a person (TASK-003 (skipped) after it)" in said
    assert "`autobuild resume FEAT-001 TASK-002 --repo" in said
    assert main(["resume", "FEAT-001", "TASK-009", *where]) == 2
    assert "FEAT-001 has no task TASK-009" in capsys.readouterr().err
    assert main(["resume", "FEAT-001", "TASK-001", *where]) == 2
    assert "TASK-001 already approved and merged" in capsys.readouterr().err
    named = ScriptedAgents({("player", "TASK-002"): writes(MUL), ("player", "TASK-003"): writes(DIV),
                            "coach": approve()})
    summary = asyncio.run(run(repo, db, "FEAT-001", named, resume_only=True, rerun=["TASK-002"]))
    assert summary.results["TASK-002"]["status"] == "approved"
    assert summary.results["TASK-003"]["status"] == "approved", "its dependent follows"
    assert {call.task for call in named.calls} == {"TASK-002", "TASK-003"}
    with pytest.raises(InputError, match="no task TASK-009"):
        runner.prepare(RunSettings(repo=repo, target="FEAT-001", db=str(db), interactive=False, resume_only=True,
                                   rerun=["TASK-009"]))


@pytest.mark.heavy  # a second case of its family in `make test`: kept under 5 minutes
async def test_a_feature_run_after_one_task_runs_builds_on_their_work(tmp_path: Path) -> None:
    repo, db = three_tasks(tmp_path), tmp_path / "db.sqlite"
    first = await run(repo, db, "TASK-001", ScriptedAgents({"player": writes(SUB), "coach": approve()}))
    assert first.results["TASK-001"]["status"] == "approved"
    store, feature = CheckpointStore(str(db)), load_plan(repo, "FEAT-001")
    found = standing(GitRepo(repo), feature, read_record(store, feature))  # review and land know it already
    assert found.approved == ["TASK-001"] and not found.unapproved_commits
    rest = approving()
    summary = await run(repo, db, "FEAT-001", rest)
    assert summary.exit_code == 0 and {call.task for call in rest.calls} == {"TASK-002", "TASK-004"}
    assert set(statuses(inspection.feature_status(CheckpointStore(str(db)), load_plan(repo, "FEAT-001"))).values()) \
        == {"approved"}
    again = await run(repo, db, "FEAT-001", approving())
    assert again.already_finished and again.exit_code == 0
    once_more = approving()
    single = await run(repo, db, "TASK-002", once_more)
    assert single.already_finished and single.exit_code == 0 and once_more.calls == [], "done work is not redone"
    forced = approving()
    await run(repo, db, "TASK-002", forced, fresh=True)
    assert forced.calls, "--fresh starts the task over whatever other runs did"


class Metered(ScriptedAgents):
    """Scripted sessions that end as real ones do: with a `session_end` event carrying their cost (the live
    view's source), through the session settings' event sink."""

    async def _play(self, role: str, data: Any, settings: Any = None) -> Any:
        result, turn = await super()._play(role, data, settings)
        self.sink({"role": role, "task": data.brief.task_id, "turn": getattr(data, "turn", 0),
                   "event": "session_end", "status": result.status, "cost_usd": result.cost_usd})
        return result, turn

    async def player(self, data: Any, settings: Any) -> Any:
        self.sink = settings.on_event
        return await super().player(data, settings)

    async def coach(self, data: Any, settings: Any) -> Any:
        self.sink = settings.on_event
        return await super().coach(data, settings)


async def test_the_live_footer_shows_what_status_counts_after_an_answered_question(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES,
                            plan=plan(task("TASK-001"), task("TASK-002", "TASK-001")))
    db = tmp_path / "db.sqlite"
    asking = Metered({("player", "TASK-001"): writes(SUB, question="Tabs or spaces?", cost_usd=0.03),
                      ("player", "TASK-002"): writes(MUL, cost_usd=0.02), "coach": approve()})
    board, events = TaskBoard(), []
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(db), agents=asking, interactive=True, replan=0)
    run_plan = runner.prepare(settings)
    paused = await runner.execute(run_plan, events.append)
    assert paused.pending_questions
    answered = await runner.execute(run_plan, events.append, answer=(paused.pending_questions[0]["question_id"],
                                                                      "spaces"))
    assert answered.exit_code == 0, answered.results
    for event in events:
        board.update(event, 0.0)
    status = inspection.feature_status(CheckpointStore(str(db)), load_plan(repo, "FEAT-001"))
    assert status["cost_usd"] == pytest.approx(0.03 + 0.03 + 0.01 + 0.02 + 0.01)
    assert f"spent ${status['cost_usd']:.4f}" in board.footer()


async def test_the_live_footer_of_a_rerun_starts_from_what_status_counted(tmp_path: Path) -> None:
    repo, db = three_tasks(tmp_path), tmp_path / "db.sqlite"
    await run(repo, db, "FEAT-001", failing_second())
    board, events = TaskBoard(), []
    again = Metered({("player", "TASK-002"): writes(MUL, cost_usd=0.04), ("player", "TASK-004"): writes(DIV),
                     "coach": approve()})
    await run(repo, db, "FEAT-001", again, events, resume_only=True)
    for event in events:
        board.update(event, 0.0)
    status = inspection.feature_status(CheckpointStore(str(db)), load_plan(repo, "FEAT-001"))
    assert f"spent ${status['cost_usd']:.4f}" in board.footer()


async def test_a_person_s_interrupt_is_not_the_agent_s_fault_nor_costs_a_turn(tmp_path: Path) -> None:
    """Ctrl+C reaches the agent's CLI too (the terminal signals its whole process group): the session ends at once,
    without its report. That is the person's doing: no contract violation, no incomplete turn; the turn runs again
    on resume."""
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-001")))
    db = tmp_path / "db.sqlite"
    control, events = RunControl(), []

    def ctrl_c(data: Any) -> Turn:  # the person presses Ctrl+C while the player works
        control.request_drain("signal")
        return Turn(report=None, text="[Request interrupted by user]", delay_s=0.2)

    cut = ScriptedAgents({"player": ctrl_c, "coach": approve()})
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(db), agents=cut, interactive=False, replan=0)
    stopped = await runner.execute(runner.prepare(settings), events.append, control)
    assert stopped.interrupted
    assert [e for e in events if e["event"] == "contract_violation"] == []
    assert not any(e["event"] == "player_report" for e in events), "the cut session is not judged"
    events.clear()
    after = ScriptedAgents({"player": writes(SUB), "coach": approve()})
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(db), agents=after, interactive=False, replan=0,
                           resume_only=True)
    summary = await runner.execute(runner.prepare(settings), events.append)
    assert summary.results["TASK-001"]["status"] == "approved"
    assert summary.results["TASK-001"]["turns"] == 1, "the interrupted turn ran again: it cost no turn"
    assert [(c.role, c.turn) for c in after.calls] == [("player", 1), ("coach", 1)]
    assert [e for e in events if e["event"] == "contract_violation"] == []
