"""A task queued for merge can't be paused nor cancelled (issue 41, item 2): once its approved work waits for the
merge (`running (merge)` or `running (finalize_success)`), `autobuild pause` and `cancel` refuse with one line (the
page's 409), nothing is recorded, and the task lands."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from orchestrator.errors import InputError
from orchestrator.store import event_log, supervise
from orchestrator.store.locations import remember_db
from orchestrator.store.steering_stores import controls_for
from tests.graph.harness import CALC_FILES, plan, task
from tests.graph.test_one_truth import SUB, run

pytestmark = pytest.mark.heavy  # two gate runs of 2 s each, to hold the task in the merge long enough to ask
SLOW_CHECK = CALC_FILES["check.py"] + "\nimport os, time\nif os.path.exists('slow'):\n    time.sleep(2)\n"


def _refusals_while_merging(repo: Path, db: Path, stop: threading.Event) -> list[str]:
    """Once TASK-1 shows as queued for merge: what a pause and a cancel of it are told."""
    said: list[str] = []
    while not stop.is_set() and not event_log.task_events(repo, "FEAT-001", "TASK-1"):
        stop.wait(0.02)  # the run has made its store (a read of one being made can fail)
    while not stop.is_set() and not said:
        try:
            _, row = supervise.running_row(repo, str(db), "FEAT-001", "TASK-1", "pauses")
        except InputError:  # not run yet, or landed already
            row = {"status": ""}
        if str(row["status"]).startswith(("running (merge", "running (finalize_success")):
            for action in ("pause", "cancel"):
                try:
                    supervise.control_task(repo, str(db), "FEAT-001", "TASK-1", action)
                    said.append(f"{action}: taken")
                except InputError as refused:
                    said.append(str(refused))
        stop.wait(0.02)
    return said


async def test_a_task_queued_for_merge_cant_be_paused_or_cancelled(tmp_path: Path) -> None:
    repo, db = make_sample_repo(tmp_path / "repo", files={**CALC_FILES, "check.py": SLOW_CHECK},
                                plan=plan(task("TASK-1"))), tmp_path / "db"
    remember_db(repo, "FEAT-001", str(db))
    agents = ScriptedAgents({"player": writes({**SUB, "slow": ""}), "coach": approve()})
    stop = threading.Event()
    asking = asyncio.create_task(asyncio.to_thread(_refusals_while_merging, repo, db, stop))
    try:
        summary = await run(repo, db, "FEAT-001", agents)
    finally:
        stop.set()
    said = await asking
    assert summary.results["TASK-1"]["status"] == "approved", "it landed"
    assert len(said) == 2 and all(" is queued for merge (running (" in line for line in said), said
    assert "it can't be paused now" in said[0] and "it can't be cancelled now" in said[1]
    assert controls_for(repo, "FEAT-001", str(db)).records("FEAT-001", "TASK-1") == [], "nothing recorded"
    assert not [e for e in event_log.task_events(repo, "FEAT-001", "TASK-1") if e.kind.endswith("_requested")]
