"""Parallel groups: concurrent subgraphs, --parallel, merge conflicts, the integration gate, skipped dependents."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_model import RequestRecord, ScriptedModel
from tests import schemas
from tests.cli_in_process import cli_in_process
from tests.conftest import CliRun, coach_from_pytest, git

pytestmark = pytest.mark.cli


def span(requests: list[RequestRecord], task: str) -> tuple[float, float]:
    mine = [r for r in requests if r.task == task]
    return min(r.started for r in mine), max(r.ended for r in mine)


def slowed(script: dict[str, Any]) -> dict[str, Any]:
    return {**script, "steps": [{**step, "delay": 0.4} for step in script["steps"]]}


def writer(task: str, files: dict[str, str]) -> dict[str, Any]:
    steps: list[dict[str, Any]] = [{"write": {"path": p, "content": c}} for p, c in files.items()]
    steps += [{"tool": {"name": "report_progress", "input": {"files_modified": list(files),
                                                             "implementation_notes": "done"}}},
              {"text": "done"}]
    return {"role": "player", "task": task, "steps": steps}


def two_task_plan(**second: Any) -> dict[str, Any]:
    return {"id": "FEAT-001", "name": "Two", "verify": "python -m pytest -q", "tasks": [
        {"id": "TASK-A", "name": "A", "complexity": 2},
        {"id": "TASK-B", "name": "B", "complexity": 2, **second}]}


def test_dry_run_reports_groups_estimate_and_scope_overlaps(tmp_path: Path) -> None:
    """Commands that start no session: `main` in this process (tests/cli_in_process.py)."""
    plan = two_task_plan()
    plan["tasks"][0]["files"] = ["src/auth/**"]
    plan["tasks"][1]["files"] = ["src/auth/login.py"]
    repo = make_sample_repo(tmp_path / "repo", plan=plan)
    db = tmp_path / "db"
    result = cli_in_process(tmp_path, "run", "FEAT-001", "--repo", str(repo), "--db", str(db), "--dry-run", "--json")
    assert result.returncode == 0, result.stderr
    data = schemas.valid("dry-run", result.stdout)
    assert data["groups"] == [["TASK-A", "TASK-B"]] and data["estimate"]["sessions_expected"] >= 2
    assert "TASK-A and TASK-B may write the same files" in data["scope_overlaps"][0]
    assert "may write the same files" in cli_in_process(tmp_path, "validate", "FEAT-001", "--repo", str(repo)).stderr
    assert data["previous_run"] is None
    assert not db.exists() and "autobuild/" not in git(repo, "branch", "--list")


@pytest.mark.heavy
def test_clean_removes_leftovers_and_prunes_finished_threads(
    tmp_path: Path, model_factory: Callable[..., ScriptedModel], run_cli: Callable[..., CliRun]
) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=two_task_plan())
    model = model_factory({"sessions": [writer("TASK-A", {"calc/a.py": "A = 1\n"}),
                                        writer("TASK-B", {"calc/b.py": "B = 1\n"}), coach_from_pytest()]})
    db = tmp_path / "db"
    result = run_cli("run", "FEAT-001", "--repo", str(repo), "--db", str(db), "--keep-worktrees", model=model)
    assert result.returncode == 0, result.stdout + result.stderr
    assert git(repo, "worktree", "list").count("\n") == 3, "kept: the two task worktrees (landing needs no other)"
    dry = run_cli("run", "FEAT-001", "--repo", str(repo), "--db", str(db), "--dry-run", "--json")
    assert schemas.valid("dry-run", dry.stdout)["previous_run"].startswith("FEAT-001 already finished (2 approved)")
    backup, unmerged = "autobuild/FEAT-001.before-20260101-000000", "autobuild/FEAT-001.TASK-Z"
    git(repo, "branch", backup, "autobuild/FEAT-001")
    git(repo, "branch", unmerged, git(repo, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "only here").strip())
    cleaned = run_cli("clean", "FEAT-001", "--repo", str(repo), "--db", str(db), "--json")
    assert cleaned.returncode == 0, cleaned.stderr
    data = schemas.valid("clean", cleaned.stdout)
    assert data["pruned_threads"] == ["FEAT-001"] and len(data["removed"]) >= 3
    assert git(repo, "worktree", "list").count("\n") == 1
    assert "autobuild/FEAT-001\n" in git(repo, "branch", "--list") + "\n", "the feature branch always stays"
    branches = git(repo, "branch", "--list")
    assert backup in branches and unmerged in branches, "backups and unmerged work are never cleaned"
    assert "autobuild/FEAT-001.TASK-A" not in branches and data["kept"] == [unmerged]
    assert run_cli("status", "--repo", str(repo), "--db", str(db), "--json").stdout.strip() == "[]"
