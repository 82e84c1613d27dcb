"""The bench's phases of a run's overhead, read from a run's own timeline (benchmarks/overhead_phases.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmarks import overhead_phases

PLAN = {"id": "FEAT-001", "tasks": [{"id": "A"}, {"id": "B", "dependencies": ["A"]},
                                    {"id": "C", "dependencies": ["A"]}]}


@dataclass
class Seen:
    role: str
    task: str
    turn: int
    first: float
    last: float


def _task(runs: Path, task: str, ready: float, player: tuple[float, float], coach: tuple[float, float], *,
          merged: float) -> None:
    events: list[tuple[str, float, dict[str, object]]] = [
              ("task_ready", ready, {}), ("initialize", ready + 0.1, {}), ("player_start", player[0], {"turn": 1}),
              ("session_end", player[1], {"role": "player"}), ("player_report", player[1] + 0.05, {}),
              ("coach_validate", coach[0], {"turn": 1}), ("session_end", coach[1], {"role": "coach"}),
              ("coach_decision", coach[1] + 0.05, {}), ("merge", merged, {"merged": True})]
    (runs / task).mkdir(parents=True)
    (runs / task / "trace.jsonl").write_text("".join(
        json.dumps({"event": kind, "task_id": task, "time": at, **extra}) + "\n" for kind, at, extra in events))


@pytest.fixture
def timelines(tmp_path: Path) -> list[overhead_phases.TaskTimeline]:
    _task(tmp_path, "A", 10.0, (10.2, 12.0), (12.1, 13.0), merged=13.2)
    _task(tmp_path, "B", 13.25, (13.4, 20.0), (20.1, 21.0), merged=21.3)
    _task(tmp_path, "C", 13.25, (13.4, 15.0), (15.1, 16.0), merged=16.2)
    seen = [Seen("player", "A", 1, 11.0, 11.9), Seen("coach", "A", 1, 12.5, 12.9),
            Seen("player", "B", 1, 14.4, 19.9), Seen("coach", "B", 1, 20.6, 20.9),
            Seen("player", "C", 1, 14.0, 14.9), Seen("coach", "C", 1, 15.5, 15.9)]
    return overhead_phases.read_timelines(tmp_path, PLAN, seen)


def test_the_chain_is_what_the_last_merge_waited_on(timelines: list[overhead_phases.TaskTimeline]) -> None:
    assert [t.task for t in overhead_phases.critical_chain(timelines)] == ["A", "B"]


def test_the_phases_tile_the_run_along_its_chain(timelines: list[overhead_phases.TaskTimeline]) -> None:
    phases = overhead_phases.chain_phases(timelines, started=8.0, ended=21.5)
    expected = {"start-up": 2.0, "scheduling": 0.05, "worktree and setup": 0.35, "session start-up": 2.7,
                "model": 7.1, "session end": 0.4, "between sessions": 0.2, "landing": 0.5, "end": 0.2}
    assert phases == pytest.approx(expected)
    assert sum(phases.values()) == pytest.approx(21.5 - 8.0)


def test_per_task_means_count_scheduling_from_the_latest_dependency(
        timelines: list[overhead_phases.TaskTimeline]) -> None:
    means = overhead_phases.mean_task_phases(timelines)
    assert means["scheduling"] == pytest.approx((0.05 + 0.05) / 3)
    assert means["landing"] == pytest.approx((0.2 + 0.3 + 0.2) / 3)


def test_the_bare_cli_s_sessions_split_into_start_up_model_and_exit() -> None:
    seen = [Seen("player", "A", 1, 1.5, 3.0), Seen("coach", "A", 1, 4.6, 5.0)]
    phases = overhead_phases.bare_phases([(0.0, 3.2), (3.2, 5.1)], seen)
    assert (phases["session start-up"], phases["model"], phases["session end"]) == pytest.approx((2.9, 1.9, 0.3))


def test_the_table_names_every_phase_that_took_time() -> None:
    phases = dict.fromkeys(overhead_phases.PHASES, 0.0) | {"start-up": 1.0, "model": 3.0}
    table = "\n".join(overhead_phases.lines("t", phases))
    assert "| start-up | 1.00 s | 25% |" in table and "landing" not in table
