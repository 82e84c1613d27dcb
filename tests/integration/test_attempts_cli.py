"""Three attempts through `python -m orchestrator run` and the real CLI (issue 40): the scripted model plays each
attempt in its own worktree; only the one right attempt passes the gate, and only its work lands."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from tests.conftest import CliRun, coach_from_pytest, git, one_task_plan

pytestmark = pytest.mark.cli

TEST = "from calc.subtract import subtract\n\n\ndef test_subtract():\n    assert subtract(5, 3) == 2\n"


def player(task: str, body: str) -> dict[str, Any]:
    files = {"calc/subtract.py": f"def subtract(a, b):\n    return {body}\n", "tests/test_subtract.py": TEST}
    steps: list[dict[str, Any]] = [{"write": {"path": p, "content": c}} for p, c in files.items()]
    steps += [{"tool": {"name": "report_progress", "input": {
        "files_modified": ["calc/subtract.py"], "tests_written": ["tests/test_subtract.py"],
        "implementation_notes": "subtract"}}}, {"text": "done"}]
    return {"role": "player", "task": task, "steps": steps}


@pytest.mark.heavy  # three attempts of real CLI sessions and real pytest gates
def test_three_attempts_one_right_only_it_lands(tmp_path: Path, model_factory: Callable[..., ScriptedModel],
                                                run_cli: Callable[..., CliRun]) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=one_task_plan(attempts=3))
    model = model_factory({"sessions": [player("TASK-001", "a + b"), player("TASK-001.a2", "a - b"),
                                        player("TASK-001.a3", "b - a"), coach_from_pytest()]})
    done = run_cli("run", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "db.sqlite"), "--autonomous",
                   "--json", "--parallel", "3", "--max-turns", "1", "--replan", "0", "--attempts-policy", "best",
                   model=model, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    summary = json.loads(done.stdout.splitlines()[-1])
    assert summary["results"]["TASK-001"]["status"] == "approved"
    players = sorted(r.task or "" for r in model.requests if r.role == "player" and r.step == 0)
    assert len(players) == 3, players
    landed = git(repo, "show", "autobuild/FEAT-001:calc/subtract.py")
    assert "return a - b" in landed, landed
    status = run_cli("status", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "db.sqlite"), "--json")
    row = json.loads(status.stdout)["tasks"][0]
    assert row["picked"] == 2, row
    assert [(v["attempt"], v["status"]) for v in row["attempt_verdicts"]] == [(1, "failed"), (2, "approved"),
                                                                             (3, "failed")]
