"""`autobuild pause`, `unpause` and `cancel` (issue 41): a pause stops the task at its next node boundary while the
other tasks run on, and the run ends waiting (exit 3) until `unpause` and `resume`; a cancel ends the task
`cancelled`, its dependents `skipped`, and `resume` runs it again; each is in the task's trace and AUTO-RUN.md; bad
input is one line, exit 2, nothing written."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, writes
from orchestrator.cli.main import main
from orchestrator.cli.run import run_command
from orchestrator.plan.model import load_plan
from orchestrator.settings import RunSettings
from orchestrator.store import event_log, inspection
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.store.locations import remember_db
from orchestrator.store.task_control import TaskControls
from orchestrator.views.progress import Progress
from tests.graph.harness import CALC_FILES, plan, task
from tests.graph.test_one_truth import SUB, run


def sent(repo: Path, db: Path, *args: str) -> int:
    return main([*args, "--repo", str(repo), "--db", str(db)])


def sample(tmp_path: Path, *tasks: dict[str, object]) -> tuple[Path, Path]:
    """A repo whose feature's DB is remembered as `autobuild run --db` does (the graph finds its queue there)."""
    repo, db = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(*tasks)), tmp_path / "db"
    remember_db(repo, "FEAT-001", str(db))
    return repo, db


def kinds(repo: Path, task_id: str) -> list[str]:
    return [e.kind for e in event_log.task_events(repo, "FEAT-001", task_id)]


async def test_a_paused_task_waits_while_the_others_run_then_goes_on_after_unpause(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, db = sample(tmp_path, task("A"), task("C"))
    pausing = writes(SUB, effect=lambda _: sent(repo, db, "pause", "FEAT-001", "A"))
    agents = ScriptedAgents({("player", "A"): [pausing, writes(SUB)], "player": writes({**SUB, "calc/c.py": "C = 1\n"}),
                             "coach": approve()})
    first = await run(repo, db, "FEAT-001", agents, parallel=1)
    assert [p["task"] for p in first.paused] == ["A"] and first.paused[0]["node"] == "coach"
    assert "A" not in first.results and first.results["C"]["status"] == "approved", "its slot went to C"
    assert [c.task for c in agents.calls if c.role == "coach"] == ["C"], "paused before its coach ran"
    rows = inspection.feature_status(CheckpointStore(str(db)), load_plan(repo, "FEAT-001"))["tasks"]
    assert {row["task"]: row["status"] for row in rows} == {"A": "paused", "C": "approved"}

    for args, said in [(["pause", "FEAT-001", "A"], "A is paused already"),
                       (["steer", "FEAT-001", "A", "hi", "--attempt", "a3"], "--attempt 'a3' names no attempt")]:
        assert sent(repo, db, *args) == 2
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1, err
    second = await run(repo, db, "FEAT-001", agents, parallel=1)
    assert [p["task"] for p in second.paused] == ["A"], "still paused: nothing ran"
    assert [c.task for c in agents.calls if c.role == "coach"] == ["C"]
    assert sent(repo, db, "unpause", "FEAT-001", "A") == 0
    third = await run(repo, db, "FEAT-001", agents, parallel=1)
    assert third.paused == [] and third.results["A"]["status"] == "approved"
    assert [c.task for c in agents.calls if c.role == "player"].count("A") == 1, "its turn was kept, not redone"
    assert {"pause_requested", "unpause_requested"} <= set(kinds(repo, "A"))
    report = (repo / ".autobuild/runs/FEAT-001/A/AUTO-RUN.md").read_text()
    steering = report.split("## Steering", 1)[1].split("##", 1)[0]
    assert " pause (cli)" in steering and " unpause (cli)" in steering


async def test_a_cancelled_task_ends_cancelled_its_dependents_skipped_and_resume_runs_it_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, db = sample(tmp_path, task("A"), task("B", "A"))
    cancelling = writes(SUB, effect=lambda _: sent(repo, db, "cancel", "FEAT-001", "A"))
    agents = ScriptedAgents({("player", "A"): [cancelling, writes(SUB)], "player": writes({"calc/b.py": "B = 1\n"}),
                             "coach": approve()})
    first = await run(repo, db, "FEAT-001", agents)
    assert first.results["A"]["status"] == "cancelled" and first.results["A"]["cause"] == "cancelled"
    assert first.results["B"]["status"] == "skipped"
    assert "task_cancelled" in kinds(repo, "A") and "cancel_requested" in kinds(repo, "A")
    assert [r.state for r in TaskControls(db).records("FEAT-001", "A")] == ["applied"]
    capsys.readouterr()
    for args, said in [(["pause", "FEAT-001", "A"], "A has finished (cancelled)"),
                       (["cancel", "FEAT-001", "Z"], "FEAT-001 has no task Z")]:
        assert sent(repo, db, *args) == 2
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1, err
    assert len(TaskControls(db).records("FEAT-001")) == 1, "nothing written"

    second = await run(repo, db, "FEAT-001", agents, resume_only=True)
    assert second.results["A"]["status"] == "approved" and second.results["B"]["status"] == "approved"


async def test_a_pause_sent_while_the_approving_coach_runs_is_dropped_and_said(tmp_path: Path) -> None:
    """An approval goes on to the merge with no node boundary in between: the pause can't take effect. It is closed
    `late` and the run says so, so a later run of the task does not stop at a pause meant for this one."""
    repo, db = sample(tmp_path, task("A"))
    pausing = Turn(report=approve().report, effect=lambda _: sent(repo, db, "pause", "FEAT-001", "A"))
    agents = ScriptedAgents({"player": writes(SUB), "coach": pausing})
    events: list[dict[str, Any]] = []
    first = await run(repo, db, "FEAT-001", agents, events)
    assert first.paused == [] and first.results["A"]["status"] == "approved" and first.results["A"]["merged"]
    assert [(r.action, r.state) for r in TaskControls(db).records("FEAT-001", "A")] == [("pause", "late")]
    assert TaskControls(db).control("FEAT-001", "A").paused is None
    dropped = [e for e in events if e["event"] == "pause_dropped"]
    assert [Progress.describe(e) for e in dropped] == [
        "A ended approved before its pause took effect (no step was left to pause at): the pause is dropped"]


def test_a_run_left_with_only_paused_tasks_exits_3_and_says_how_it_goes_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, db = sample(tmp_path, task("A"))
    pausing = writes(SUB, effect=lambda _: sent(repo, db, "pause", "FEAT-001", "A"))
    agents = ScriptedAgents({"player": [pausing, writes(SUB)], "coach": approve()})
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(db), agents=agents, replan=0)
    capsys.readouterr()
    assert run_command(argparse.Namespace(command="run"), settings) == 3, "waiting, as for a question"
    printed = capsys.readouterr()
    said = printed.err
    assert "A is paused (since " in said and "`autobuild unpause FEAT-001 A`, then `autobuild resume" in said, said
    row = next(line for line in printed.out.splitlines() if line.startswith("A ") and "$" in line)
    assert "paused" in row and "not run" not in row, f"the result table shows the paused task as paused: {row}"
