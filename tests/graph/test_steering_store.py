"""The notes and controls a run reads are its own store's (issue 41): a run with `--db X` reads X's, never those of
the store the repository remembers for the feature (another run's `--db`), which a command without `--db` would
pick."""

from __future__ import annotations

from pathlib import Path

from agents import PlayerInput
from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, feedback, writes
from orchestrator.graph.steering import NOTE_PREFIX
from orchestrator.store.locations import remember_db
from orchestrator.store.steering import SteeringQueue
from orchestrator.store.task_control import TaskControls
from tests.graph.harness import CALC_FILES, plan, task
from tests.graph.test_one_truth import SUB, run
from tests.graph.test_task_control import sent


async def test_a_run_reads_the_notes_and_pauses_of_its_own_store_only(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-001")))
    own, other = tmp_path / "own.sqlite", tmp_path / "other.sqlite"
    remember_db(repo, "FEAT-001", str(other))  # what `steer` without --db would pick: another run's store
    SteeringQueue(other).accept("FEAT-001", "TASK-001", "a note for another run")
    TaskControls(other).record("FEAT-001", "TASK-001", "pause")

    def coach(data: object) -> Turn:
        if getattr(data, "turn", 0) == 1:  # while turn 1 is judged, a note to this run's own store
            assert sent(repo, own, "steer", "FEAT-001", "TASK-001", "use the existing helper") == 0
            return feedback(("calc/sub.py", None, "missing"))
        return approve()

    agents = ScriptedAgents({("player", "TASK-001"): writes(SUB), ("coach", "TASK-001"): coach})
    summary = await run(repo, own, "FEAT-001", agents, max_turns=3)
    assert summary.paused == [] and summary.results["TASK-001"]["status"] == "approved", "the other store's pause"
    players = [call for call in agents.prompts_of("player", "TASK-001") if isinstance(call, PlayerInput)]
    assert [p.supervisor_notes for p in players] == [[], [NOTE_PREFIX + "use the existing helper"]]
    assert [n.state for n in SteeringQueue(other).all_notes("FEAT-001")] == ["accepted"], "never delivered"
