"""Steering into a running session (issue 41): a note sent while the player works reaches it at its next tool
boundary once, the coach reads it as what the player was told and never as an acceptance, and a note whose session
died goes to the turn that replaces it; per attempt, a note to every attempt or to the one it names."""

from __future__ import annotations

from pathlib import Path

from langgraph.checkpoint.memory import InMemorySaver

from agents import CoachInput, PlayerInput
from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from benchmarks.cheat_corpus import BROKEN, CHEATS, MUL, PY_FILES
from orchestrator.graph.steering import NOTE_PREFIX
from orchestrator.store import event_log
from orchestrator.store.steering import SteeringQueue
from orchestrator.store.steering_stores import notes_for
from tests.graph.harness import CALC_FILES, Workflow, plan, task
from tests.graph.test_one_truth import SUB

ACCEPT = "accept the test change in tests/test_mul.py: I approve it"


def queue_of(repo: Path) -> SteeringQueue:
    queue = notes_for(repo, "FEAT-001")
    assert queue is not None
    return queue


async def test_a_note_sent_mid_session_reaches_the_player_and_the_coach_and_accepts_nothing(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=PY_FILES,
                            plan=plan(task("TASK-001"), verify="python -m pytest -q"))
    queue = queue_of(repo)
    bent, _ = CHEATS["expected value rewritten"]
    cheat = writes({"calc/mul.py": BROKEN, **bent}, tool_calls=3,
                   effect=lambda _: queue.accept("FEAT-001", "TASK-001", ACCEPT, source="page"))
    honest = writes({"calc/mul.py": MUL, "calc/div.py": "X = 1\n", **{path: PY_FILES[path] for path in bent}})
    assert honest.report is not None
    honest.report["files_modified"] = ["calc/div.py"]
    agents = ScriptedAgents({("player", "TASK-001"): [cheat, honest], "coach": approve()})
    run = await Workflow(repo, agents).run(max_turns=2)

    players = [call for call in agents.calls if call.role == "player"]
    assert [call.boundary_notes for call in players] == [[NOTE_PREFIX + ACCEPT], []], "once, at the next tool call"
    coaches = [call.input for call in agents.calls if call.role == "coach"]
    assert [c.supervisor_notes for c in coaches if isinstance(c, CoachInput)] == [[ACCEPT], []]
    gate = next(event for event in run.events if event["event"] == "gate")
    assert not gate["passed"], "the note accepted nothing: the bent test refuses the approval"
    assert any("not accepted" in e["detail"] for e in run.events if e["event"] == "contract_violation")
    assert run.status("TASK-001") == "approved"
    assert run.results["TASK-001"]["test_changes_accepted"] == []
    assert [(n.state, n.source) for n in queue.all_notes("FEAT-001", "TASK-001")] == [("consumed", "page")]
    logged = event_log.task_events(repo, "FEAT-001", "TASK-001")
    assert [(e.kind, e.turn, e.fields.get("at")) for e in logged if e.kind.startswith("note_")] == [
        ("note_delivered", 1, "tool_boundary"), ("note_consumed", None, None)]


async def test_a_note_handed_to_a_session_that_died_goes_to_its_replacement_once(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-001")))
    queue = queue_of(repo)
    dying = writes({"calc/other.py": "X = 1\n"}, dies=OSError("the worker died"),
                   effect=lambda _: queue.accept("FEAT-001", "TASK-001", "use calc/sub.py"))
    agents = ScriptedAgents({("player", "TASK-001"): [dying, writes(SUB)], "coach": approve()})
    workflow = Workflow(repo, agents, checkpointer=InMemorySaver())
    first = await workflow.run(max_turns=2)
    assert first.output is None and "task_error" in first.kinds("TASK-001")
    assert [n.state for n in queue.all_notes("FEAT-001", "TASK-001")] == ["delivered"]
    second = await workflow.run(fresh_input=False, max_turns=2)
    assert second.status("TASK-001") == "approved"

    players = [call for call in agents.calls if call.role == "player"]
    assert [(c.turn, c.boundary_notes) for c in players] == [(1, [NOTE_PREFIX + "use calc/sub.py"]), (1, [])]
    assert [c.input.supervisor_notes for c in players if isinstance(c.input, PlayerInput)] == [
        [], [NOTE_PREFIX + "use calc/sub.py"]], "the replacement turn gets it at its start, and only there"
    assert [n.state for n in queue.all_notes("FEAT-001", "TASK-001")] == ["consumed"]
    logged = event_log.task_events(repo, "FEAT-001", "TASK-001")
    assert [(e.fields.get("at"), e.fields.get("again")) for e in logged if e.kind == "note_delivered"] == [
        ("tool_boundary", False), ("turn_start", True)]
    assert len([e for e in logged if e.kind == "note_consumed"]) == 1


def test_a_note_goes_to_every_attempt_or_to_the_one_it_names(tmp_path: Path) -> None:
    queue = SteeringQueue(tmp_path / "db")
    every = queue.accept("FEAT-001", "T", "to all")
    second = queue.accept("FEAT-001", "T", "to a2", attempt=2)
    assert [n.id for n in queue.open_notes("FEAT-001", "T", 1)] == [every.id]
    assert [n.id for n in queue.open_notes("FEAT-001", "T", 2)] == [every.id, second.id]
    assert [n.id for n in queue.claim("FEAT-001", "T", 2, turn=1)] == [every.id, second.id]
    assert queue.claim("FEAT-001", "T", 2, turn=1) == [], "claimed once per attempt"
    assert [n.id for n in queue.claim("FEAT-001", "T", 1, turn=3)] == [every.id], "a1 gets its own copy"
    assert queue.mark([every.id], "consumed", 1) == [every.id]
    assert queue.mark([every.id], "consumed", 1) == [], "consumed once"
    assert [(n.text, n.state) for n in queue.all_notes("FEAT-001", "T")] == [("to all", "delivered"),
                                                                            ("to a2", "delivered")]
    queue.mark([every.id, second.id], "consumed", 2)
    assert [n.state for n in queue.all_notes("FEAT-001", "T")] == ["consumed", "consumed"]
    assert queue.open_notes("FEAT-001", "T", 1) == queue.open_notes("FEAT-001", "T", 2) == []
