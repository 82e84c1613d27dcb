"""The overhead bench's accounting: work outside sessions and gate runs, read from a run's traces (no timing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.overhead_bench import Run, outside_sessions
from benchmarks.workers_bench import finished


def _trace(repo: Path, task: str, events: list[tuple[float, str, dict[str, object]]]) -> None:
    folder = repo / ".autobuild" / "runs" / "FEAT-001" / task
    folder.mkdir(parents=True)
    lines = [json.dumps({"time": at, "task": task, "event": kind, "feature": "FEAT-001", **extra})
             for at, kind, extra in events]
    (folder / "trace.jsonl").write_text("\n".join(lines) + "\n")


def _task(repo: Path, task: str, t0: float) -> None:
    """initialize at t0; a 3 s player from t0+0.1, a 2 s coach from t0+3.2, merged at t0+6.0."""
    _trace(repo, task, [
        (t0, "initialize", {}),
        (t0 + 0.1, "player_start", {"turn": 1}),
        (t0 + 3.1, "session_end", {"turn": 1, "role": "player"}),
        (t0 + 3.15, "player_report", {"turn": 1}),
        (t0 + 3.2, "coach_validate", {"turn": 1}),
        (t0 + 5.2, "session_end", {"turn": 1, "role": "coach"}),
        (t0 + 5.25, "coach_decision", {"turn": 1}),
        (t0 + 5.9, "gate", {"turn": 1}),
        (t0 + 6.0, "merge", {"merged": True}),
    ])


def test_outside_sessions_subtracts_each_tasks_sessions_and_its_own_gate_runs(tmp_path: Path) -> None:
    _task(tmp_path, "TASK-1", 1000.0)
    _task(tmp_path, "TASK-2", 1010.0)
    # A gate run inside each task (0.5 s) and the base's run before both (0.4 s): the base's is not a task's.
    gates = [(999.0, 999.4), (1005.3, 1005.8), (1015.3, 1015.8)]
    found = outside_sessions(Run(wall=20.0, repo=tmp_path, gates=gates))
    # Per task: 6.0 s span - 5.0 s of sessions - 0.5 s of its gate = 0.5 s.
    assert found["in_task"] == pytest.approx(0.5)
    # The whole run: 20 s - 10 s of sessions - 1.4 s of gate runs, over two tasks.
    assert found["whole_run"] == pytest.approx(4.3)


@pytest.mark.parametrize(("status", "done"), [
    ({"status": "idle", "results": {"TASK-1": "approved", "TASK-2": "failed"}}, True),
    ({"status": "busy", "results": {}}, False),
    ({"status": "idle", "results": {}}, False),  # queued, not started
    ({"status": "interrupted", "results": {}}, False),
    ({"status": "error", "error": "boom"}, True),
    ({"error": "no server", "exit": 2}, True),
])
def test_workers_bench_reads_status_server_json_for_a_finished_run(status: dict[str, object], done: bool) -> None:
    assert finished(status) is done
