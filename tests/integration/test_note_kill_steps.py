"""A run killed -9 at each step of a note's life (issue 41): right after the note is accepted, once a session holds
it (delivered), once the session that read it has ended but before its turn's checkpoint, and after the turn is
committed (consumed). Each time a new process resumes the run to its end, and the note is seen exactly once by the
sessions whose turns were kept, and recorded consumed once. The run is the steering bench's child: the real graph,
git and SQLite checkpoints, scripted agents that read notes at their tool boundaries."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from agents.testing.repos import make_sample_repo
from orchestrator.store import event_log
from orchestrator.store.locations import remember_db
from orchestrator.store.steering import SteeringQueue
from tests.graph.harness import CALC_FILES, plan, task

pytestmark = [pytest.mark.heavy]

NOTE = "use the existing retry helper"
_CHILD = [sys.executable, "-m", "benchmarks.steering_bench", "child"]


def _session_saw_note(root: Path) -> bool:
    log = root / "sessions.jsonl"
    return log.is_file() and NOTE in log.read_text()


def _state(queue: SteeringQueue) -> str:
    notes = queue.all_notes("FEAT-001", "TASK-001")
    return notes[0].state if notes else "none"


STEPS: dict[str, Callable[[Path, SteeringQueue], bool]] = {
    "accepted": lambda root, queue: True,
    "delivered": lambda root, queue: _state(queue) != "accepted",
    "session ended, turn not committed": lambda root, queue: _session_saw_note(root),
    "turn committed": lambda root, queue: _state(queue) == "consumed",
}


def _wait(condition: Callable[[], bool], child: subprocess.Popen[bytes], limit_s: float = 120.0) -> None:
    deadline = time.monotonic() + limit_s
    while child.poll() is None and not condition():
        assert time.monotonic() < deadline, "the run never reached the step"
        time.sleep(0.005)


@pytest.mark.parametrize("step", list(STEPS))
def test_a_run_killed_at_any_step_of_a_notes_life_resumes_with_the_note_seen_once(tmp_path: Path, step: str) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-001")))
    remember_db(repo, "FEAT-001", str(tmp_path / "db.sqlite"))
    queue = SteeringQueue(tmp_path / "db.sqlite")
    trace = repo / ".autobuild" / "runs" / "FEAT-001" / "TASK-001" / "trace.jsonl"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    with (tmp_path / "run.log").open("w") as said:
        child = subprocess.Popen([*_CHILD, str(tmp_path), "run"], stdout=said, stderr=subprocess.STDOUT, env=env)
    try:
        _wait(trace.is_file, child)
        note = queue.accept("FEAT-001", "TASK-001", NOTE)
        _wait(lambda: STEPS[step](tmp_path, queue), child)
        assert child.poll() is None, f"the run ended before the step: {(tmp_path / 'run.log').read_text()[-2000:]}"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
    resumed = subprocess.run([*_CHILD, str(tmp_path), "resume"], capture_output=True, text=True, env=env, check=False)
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]

    kept: dict[int, list[str]] = {}
    for line in (tmp_path / "sessions.jsonl").read_text().splitlines():
        session = json.loads(line)
        kept[session["turn"]] = session["notes"]  # the last session of a turn is the one its checkpoint kept
    seen = [turn for turn, notes in kept.items() for text in notes if NOTE in text]
    consumed = [e for e in event_log.task_events(repo, "FEAT-001", "TASK-001")
                if e.kind == "note_consumed" and note.id in (e.fields.get("notes") or [])]
    assert len(seen) == 1, f"kept sessions that saw the note: {seen} ({kept})"
    assert len(consumed) == 1
    assert _state(queue) == "consumed"
