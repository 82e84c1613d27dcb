"""A conflict turn end to end (issue 24), the real CLI against the scripted model: two parallel tasks change the same
line; the second, brought up to the feature head after the first landed, conflicts; its player gets a turn with the
markers in place and the conflict described, resolves it with its own tools, the coach is told it reviews a
conflict resolution and runs the tests, and both changes land by fast-forward."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents.testing.repos import SAMPLE_FILES, make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from tests.conftest import CliRun, coach_from_pytest, git

pytestmark = [pytest.mark.cli, pytest.mark.heavy]


def player(task: str, turn: int, content: str, delay: float = 0.0) -> dict[str, Any]:
    steps: list[dict[str, Any]] = [
        {"write": {"path": "calc/shared.py", "content": content}},
        {"tool": {"name": "report_progress", "input": {"files_modified": ["calc/shared.py"],
                                                        "implementation_notes": "done"}}},
        {"text": "done"}]
    return {"role": "player", "task": task, "turn": turn, "steps": [{**s, "delay": delay} for s in steps]}


def test_a_conflict_turn_resolves_the_conflict_and_both_changes_land(
    tmp_path: Path, model_factory: Callable[..., ScriptedModel], run_cli: Callable[..., CliRun]
) -> None:
    plan = {"id": "FEAT-001", "name": "Two", "verify": "python -m pytest -q", "tasks": [
        {"id": "TASK-A", "name": "A", "complexity": 2}, {"id": "TASK-B", "name": "B", "complexity": 2}]}
    repo = make_sample_repo(tmp_path / "repo", files={**SAMPLE_FILES, "calc/shared.py": "V = [0]\n"}, plan=plan)
    model = model_factory({"sessions": [
        player("TASK-A", 1, "V = ['a']\n"),
        player("TASK-B", 1, "V = ['b']\n", delay=1.5),  # lands after A: its merge conflicts
        player("TASK-B", 2, "V = ['a', 'b']\n"),
        player("TASK-A", 2, "V = ['a', 'b']\n"),  # should a loaded machine let B land first
        coach_from_pytest(),
    ]})
    result = run_cli("run", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "db.sqlite"), "--parallel", "2",
                     model=model)
    assert result.returncode == 0, result.stdout + result.stderr
    assert git(repo, "show", "autobuild/FEAT-001:calc/shared.py") == "V = ['a', 'b']\n"
    turn2 = next(r for r in model.requests if r.role == "player" and r.turn == 2)
    second, first = turn2.task, "TASK-A" if turn2.task == "TASK-B" else "TASK-B"
    assert "resolves a merge conflict" in turn2.prompt and f"changed on the feature branch by {first}" in turn2.prompt
    coach2 = next(r for r in model.requests if r.role == "coach" and r.task == second and r.turn == 2)
    assert "Yes: this turn resolved a merge conflict" in coach2.prompt
    subjects = git(repo, "log", "--format=%s", "autobuild/FEAT-001").splitlines()
    assert subjects[0].startswith(f"autobuild({second})"), "its own commits are the feature branch: a fast-forward"
    assert f"autobuild({second}): resolve conflicts with autobuild/FEAT-001 (turn 2)" in subjects
    assert not [s for s in subjects if s.startswith("autobuild: merge")], "no merge made by landing"
    report = (repo / ".autobuild/runs/FEAT-001/AUTO-RUN.md").read_text()
    assert "**Conflict turns:** 1" in report
