"""A pause in a live run (issue 41): the paused task waits in place, its slot given to another task, and goes on at
`unpause` without a `resume`; `pause --now` cuts the running player session, keeps its work (committed on the task's
branch) and runs the same turn again on it once unpaused, in the same run or, after the run ended waiting (exit 3),
on `unpause` + `resume`."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.roles import PlayerInput
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, writes
from orchestrator.graph.pause_now import RESUMED
from orchestrator.repo.git import GitRepo
from orchestrator.store.task_control import TaskControls
from tests.graph.harness import task
from tests.graph.test_one_truth import SUB, run
from tests.graph.test_task_control import kinds, sample, sent
from tests.graph.test_ui_page import feature_page_is_status_json_s

HALF = {"calc/sub.py": "def sub(a, b):\n    # half done\n"}
C_FILES = {**SUB, "calc/c.py": "C = 1\n"}


def seen_at_start(path: str, into: list[bool]) -> Turn:
    """A player turn that first notes whether `path` is in its worktree (the work a cut session left), then
    writes SUB."""
    return writes(SUB, effect=lambda worktree: into.append((worktree / path).exists()))


async def test_a_paused_task_goes_on_in_the_same_run_when_unpaused(tmp_path: Path) -> None:
    repo, db = sample(tmp_path, task("A"), task("C"))
    pausing = writes(SUB, effect=lambda _: sent(repo, db, "pause", "FEAT-001", "A"))
    unpausing = writes(C_FILES, effect=lambda _: sent(repo, db, "unpause", "FEAT-001", "A"))
    agents = ScriptedAgents({("player", "A"): pausing, ("player", "C"): unpausing, "coach": approve()})
    summary = await run(repo, db, "FEAT-001", agents, parallel=1)
    assert summary.paused == [] and summary.results["A"]["status"] == "approved", "no resume needed"
    assert summary.results["C"]["status"] == "approved"
    order = [(call.role, call.task) for call in agents.calls]
    assert order.index(("player", "C")) < order.index(("coach", "A")), "A's slot went to C while A was paused"
    assert [c.task for c in agents.calls if c.role == "player"].count("A") == 1, "its turn was kept"
    events = kinds(repo, "A")
    assert events.index("task_paused") < events.index("task_unpaused") < events.index("coach_decision")


async def test_pause_now_cuts_the_session_keeps_its_work_and_the_turn_goes_on_from_it(tmp_path: Path) -> None:
    repo, db = sample(tmp_path, task("A"), task("C"))
    found: list[bool] = []
    cut = Turn(files=HALF, effect=lambda _: sent(repo, db, "pause", "FEAT-001", "A", "--now"), hangs_s=120)
    unpausing = writes(C_FILES, effect=lambda _: sent(repo, db, "unpause", "FEAT-001", "A"))
    agents = ScriptedAgents({("player", "A"): [cut, seen_at_start("calc/sub.py", found)],
                             ("player", "C"): unpausing, "coach": approve()})
    summary = await run(repo, db, "FEAT-001", agents, parallel=1)
    assert summary.paused == [] and summary.results["A"]["status"] == "approved"
    players = [c for c in agents.calls if c.role == "player"]
    assert [(c.task, c.turn) for c in players] == [("A", 1), ("C", 1), ("A", 1)], "C ran in A's slot"
    assert found == [True], "the second session started on the first one's work"
    again = players[2].input
    assert isinstance(again, PlayerInput) and again.feedback_notes[0] == RESUMED
    assert again.transcript_path is not None and again.transcript_path.name.startswith("turn-1-player-after-")
    log = (await GitRepo(repo).git("log", "--all", "--format=%s")).stdout
    assert "autobuild(A): player turn 1, paused (its work so far)" in log
    assert {"pause_requested", "session_paused", "task_paused", "task_unpaused"} <= set(kinds(repo, "A"))
    assert [r.now for r in TaskControls(db).records("FEAT-001", "A")] == [True, False]
    assert summary.results["A"]["cost_usd"] == pytest.approx(0.03), "the cut session's spend counts, once"
    assert summary.spent["A"] == pytest.approx(0.03)


async def test_a_run_with_only_paused_tasks_left_waits_and_resume_goes_on_with_the_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, db = sample(tmp_path, task("A"), task("B", "A"))
    found: list[bool] = []
    cut = Turn(files=HALF, effect=lambda _: sent(repo, db, "pause", "FEAT-001", "A", "--now"), hangs_s=120)
    agents = ScriptedAgents({("player", "A"): [cut, seen_at_start("calc/sub.py", found)],
                             ("player", "B"): writes(C_FILES), "coach": approve()})
    first = await run(repo, db, "FEAT-001", agents)
    assert [p["task"] for p in first.paused] == ["A"] and first.paused[0]["node"] == "player"
    assert "B" not in first.results, "B waits for A: the run ends waiting (exit 3)"
    table = feature_page_is_status_json_s(repo, db, capsys)
    assert {row["task"]: row["status"] for row in table["tasks"]}["A"] == "paused"
    capsys.readouterr()
    assert sent(repo, db, "pause", "FEAT-001", "A", "--now") == 2
    assert "A is paused already" in capsys.readouterr().err
    assert sent(repo, db, "unpause", "FEAT-001", "A") == 0
    second = await run(repo, db, "FEAT-001", agents, resume_only=True)
    assert second.results["A"]["status"] == "approved" and second.results["B"]["status"] == "approved"
    assert found == [True], "resume ran the cut turn on its kept work"
