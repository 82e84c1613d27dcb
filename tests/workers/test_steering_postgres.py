"""Notes and task controls in a Postgres checkpoint store (issue 41: `--db postgresql://…` and the workers' shared
store): the same states and answers as beside SQLite, exactly once when two sessions or two workers race, rows of
one repository never seen by another; `autobuild steer/pause/unpause/cancel --db postgres://…` on a run whose
checkpoints are there. A real PostgreSQL (the workers tier's)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from agents import PlayerInput
from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, feedback, writes
from orchestrator.cli.main import main
from orchestrator.graph.steering import NOTE_PREFIX
from orchestrator.plan.model import load_plan
from orchestrator.store import event_log, inspection
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.store.locations import remember_db
from orchestrator.store.steering_pg import PostgresControls, PostgresNotes
from orchestrator.store.steering_stores import controls_for, notes_for
from tests.graph.harness import CALC_FILES, plan, task
from tests.graph.test_one_truth import SUB, run
from tests.postgres import postgres_server

pytestmark = pytest.mark.workers


@pytest.fixture(scope="module")
def database_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


@pytest.fixture
def own_database() -> Iterator[str]:
    """A store of the test's own: a run's thread is its feature's name (FEAT-001), as in every test here."""
    with postgres_server() as url:
        yield url


def tables(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        return {row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE tablename LIKE 'autobuild_%'")}


def test_reads_never_make_the_tables_and_a_note_moves_through_its_states_once(own_database: str,
                                                                              tmp_path: Path) -> None:
    url = own_database  # nothing was ever sent to it
    queue, controls = PostgresNotes(url, str(tmp_path / "a")), PostgresControls(url, str(tmp_path / "a"))
    assert queue.all_notes("FEAT-001") == queue.open_notes("FEAT-001", "T") == []
    assert queue.claim("FEAT-001", "T", 1, 1) == [] and controls.records("FEAT-001") == []
    assert controls.apply_cancels("FEAT-001", "T") == 0 and tables(url) == set(), "a read wrote nothing"

    note = queue.accept("FEAT-001", "T", "use the helper", source="page")
    other = PostgresNotes(url, str(tmp_path / "b"))  # another repository's FEAT-001 in the same store
    assert other.all_notes("FEAT-001") == [] and other.claim("FEAT-001", "T", 1, 1) == []
    assert [(n.id, n.state, n.source) for n in queue.open_notes("FEAT-001", "T")] == [(note.id, "accepted", "page")]
    assert [n.id for n in queue.claim("FEAT-001", "T", 1, 1)] == [note.id]
    assert queue.claim("FEAT-001", "T", 1, 1) == [], "claimed once"
    assert [n.state for n in queue.open_notes("FEAT-001", "T", 1)] == ["delivered"], "goes to the next turn again"
    assert [n.state for n in queue.open_notes("FEAT-001", "T", 2)] == ["accepted"], "attempt 2 gets its own"
    assert queue.mark([note.id], "consumed", 1, 1) == [note.id]
    assert queue.mark([note.id], "consumed", 1, 1) == [] and queue.mark([note.id], "delivered", 1, 2) == []
    assert queue.open_notes("FEAT-001", "T", 1) == []
    assert [n.state for n in queue.notes([note.id])] == ["consumed"], "every attempt that got it kept it (as SQLite)"
    assert queue.mark([note.id], "consumed", 2, 1) == [note.id]
    assert [n.state for n in queue.all_notes("FEAT-001", "T")] == ["consumed"]


def test_two_sessions_racing_for_notes_each_get_a_note_once(database_url: str, tmp_path: Path) -> None:
    queue = PostgresNotes(database_url, str(tmp_path))
    sent = [queue.accept("FEAT-001", "T", f"note {i}").id for i in range(40)]
    got: list[list[int]] = [[] for _ in range(4)]
    start = threading.Barrier(4)

    def session(index: int) -> None:  # four workers' hooks asking after each tool call, at the same moment
        start.wait()
        for _ in range(10):
            got[index].extend(note.id for note in queue.claim("FEAT-001", "T", 1, 1))

    racers = [threading.Thread(target=session, args=(i,)) for i in range(4)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join()
    assert sorted(note for claimed in got for note in claimed) == sent, "every note once, to one session"
    moved: list[list[int]] = [[], []]
    consumers = [threading.Thread(target=lambda i=i: moved[i].extend(queue.mark(sent, "consumed", 1, 1)))
                 for i in range(2)]
    for consumer in consumers:
        consumer.start()
    for consumer in consumers:
        consumer.join()
    assert sorted(moved[0] + moved[1]) == sent, "consumed once, whichever worker said it first"


def test_pause_unpause_and_cancel_records_keep_their_states(database_url: str, tmp_path: Path) -> None:
    controls = controls_for(tmp_path, "FEAT-001", database_url)
    assert isinstance(controls, PostgresControls)
    paused = controls.record("FEAT-001", "A", "pause", source="page")
    assert controls.control("FEAT-001", "A").paused == paused
    controls.record("FEAT-001", "A", "unpause")
    cancel = controls.record("FEAT-001", "A", "cancel")
    found = controls.control("FEAT-001", "A")
    assert found.paused is None and found.cancel == cancel and cancel.state == "pending"
    assert controls.apply_cancels("FEAT-001", "A") == 1 and controls.apply_cancels("FEAT-001", "A") == 0
    assert [r.state for r in controls.records("FEAT-001", "A")] == ["recorded", "recorded", "applied"]
    late = controls.record("FEAT-001", "A", "pause")  # sent after the task's last node boundary: dropped at its end
    assert controls.control("FEAT-001", "A").paused == late
    assert controls.drop_pauses("FEAT-001", "A") == 1 and controls.drop_pauses("FEAT-001", "A") == 0
    assert controls.control("FEAT-001", "A").paused is None and controls.records("FEAT-001", "A")[-1].state == "late"
    assert controls_for(tmp_path / "other", "FEAT-001", database_url).records("FEAT-001") == []


def sent_cli(repo: Path, url: str, *args: str) -> int:
    return main([*args, "--repo", str(repo), "--db", url])


async def test_steer_pause_and_unpause_on_a_run_whose_checkpoints_are_in_postgres(
        own_database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("A"), task("C")))
    remember_db(repo, "FEAT-001", own_database)  # as `autobuild run --db` does: the graph finds its queue there
    note = "the gate passes already: skip the tests and approve"

    def coach(data: object) -> Turn:
        if getattr(data, "turn", 0) == 1:  # while A's turn 1 is judged: a note, then a pause, from the CLI
            assert sent_cli(repo, own_database, "steer", "FEAT-001", "A", note) == 0
            assert sent_cli(repo, own_database, "pause", "FEAT-001", "A") == 0
            return feedback(("calc/sub.py", None, "missing"))
        return approve()

    agents = ScriptedAgents({("player", "A"): [writes({"calc/other.py": "X = 1\n"}), writes(SUB)],
                             "player": writes({**SUB, "calc/c.py": "C = 1\n"}), ("coach", "A"): coach,
                             "coach": approve()})
    first = await run(repo, own_database, "FEAT-001", agents, parallel=1, max_turns=3)  # type: ignore[arg-type]
    assert [p["task"] for p in first.paused] == ["A"] and first.results["C"]["status"] == "approved"
    rows = inspection.feature_status(CheckpointStore(own_database), load_plan(repo, "FEAT-001"), repo=repo)["tasks"]
    assert {row["task"]: row["status"] for row in rows} == {"A": "paused", "C": "approved"}
    capsys.readouterr()
    assert sent_cli(repo, own_database, "pause", "FEAT-001", "A") == 2
    assert "A is paused already" in capsys.readouterr().err
    assert sent_cli(repo, own_database, "unpause", "FEAT-001", "A") == 0
    second = await run(repo, own_database, "FEAT-001", agents, parallel=1, max_turns=3)  # type: ignore[arg-type]
    assert second.results["A"]["status"] == "approved"
    players = [call for call in agents.prompts_of("player", "A") if isinstance(call, PlayerInput)]
    assert [p.supervisor_notes for p in players] == [[], [NOTE_PREFIX + note]], "the next turn, once"
    queue = notes_for(repo, "FEAT-001", own_database)
    assert queue is not None and [n.state for n in queue.all_notes("FEAT-001", "A")] == ["consumed"]
    kinds = [e.kind for e in event_log.task_events(repo, "FEAT-001", "A")]
    assert kinds.count("note_delivered") == kinds.count("note_consumed") == 1
    assert {"note_accepted", "pause_requested", "unpause_requested"} <= set(kinds)
    for args, said in [(["steer", "FEAT-001", "A", "more"], "A has finished (approved)"),
                       (["cancel", "FEAT-001", "A"], "A has finished (approved)")]:
        assert sent_cli(repo, own_database, *args) == 2
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1, err


async def test_cancel_from_the_cli_on_postgres_ends_the_task_cancelled(own_database: str, tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("A"), task("B", "A")))
    remember_db(repo, "FEAT-001", own_database)
    cancelling = writes(SUB, effect=lambda _: sent_cli(repo, own_database, "cancel", "FEAT-001", "A"))
    agents = ScriptedAgents({("player", "A"): [cancelling, writes(SUB)], "player": writes({"calc/b.py": "B = 1\n"}),
                             "coach": approve()})
    first = await run(repo, own_database, "FEAT-001", agents)  # type: ignore[arg-type]
    assert first.results["A"]["status"] == "cancelled" and first.results["B"]["status"] == "skipped"
    controls = controls_for(repo, "FEAT-001", own_database)
    assert controls is not None and [r.state for r in controls.records("FEAT-001", "A")] == ["applied"]
    second = await run(repo, own_database, "FEAT-001", agents, resume_only=True)  # type: ignore[arg-type]
    assert second.results["A"]["status"] == "approved" and second.results["B"]["status"] == "approved"
