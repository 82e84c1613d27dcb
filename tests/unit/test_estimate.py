"""The dry run's estimate is the core's (graph/estimate.py): typed, read from a prepared run, printed by the CLI."""

from __future__ import annotations

from pathlib import Path

from agents.testing.repos import DEMO_PLAN, make_sample_repo
from orchestrator.graph import runner
from orchestrator.graph.estimate import Estimate, estimate
from orchestrator.settings import RunSettings


def test_the_estimate_counts_two_sessions_a_turn_priced_per_session(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=DEMO_PLAN)
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(tmp_path / "db.sqlite"), interactive=False,
                           max_turns=3, est_session_usd=0.5)
    expected = estimate(runner.prepare(settings))
    assert isinstance(expected, Estimate)
    # Complexities 2, 2, 4 and 1: round(c / 3) turns, at least 1 and at most max_turns.
    assert [(row["task"], row["expected_turns"]) for row in expected.rows] == [
        ("TASK-001", 1), ("TASK-003", 1), ("TASK-002", 1), ("TASK-004", 1)]
    assert expected.document() == {"sessions_expected": 8, "sessions_max": 2 * 3 * 4, "cost_usd_expected": 4.0,
                                   "cost_per_session_usd": 0.5, "peak_sessions": 1, "peak_memory_mb": 220}


def test_attempts_multiply_the_sessions_and_the_peak_is_the_slots(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=DEMO_PLAN)
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(tmp_path / "db.sqlite"), interactive=False,
                           max_turns=3, est_session_usd=0.5, attempts=3, parallel=4)
    expected = estimate(runner.prepare(settings))
    assert [row["attempts"] for row in expected.rows] == [3, 3, 3, 3]
    assert expected.document() == {"sessions_expected": 24, "sessions_max": 2 * 3 * 4 * 3, "cost_usd_expected": 12.0,
                                   "cost_per_session_usd": 0.5, "peak_sessions": 4, "peak_memory_mb": 4 * 220}
