"""Parallel groups: concurrent subgraphs, --parallel, merge conflicts, the integration gate, skipped dependents."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents.testing.scenario import Scenario
from agents.testing.scripted_model import RequestRecord, ScriptedModel
from orchestrator.demo import make_sample_repo
from tests.conftest import CliRun, coach_from_pytest, git

pytestmark = pytest.mark.cli


def span(requests: list[RequestRecord], task: str) -> tuple[float, float]:
    mine = [r for r in requests if r.task == task]
    return min(r.started for r in mine), max(r.ended for r in mine)


@pytest.mark.parametrize("parallel", [2, 1])
def test_group_tasks_overlap_only_when_parallel(parallel: int, tmp_path: Path,
                                                run_cli: Callable[..., CliRun]) -> None:
    plan = two_task_plan()
    plan["tasks"].append({"id": "TASK-C", "name": "C", "complexity": 2, "dependencies": ["TASK-A", "TASK-B"]})
    repo = make_sample_repo(tmp_path / "repo", plan=plan)
    # A fixed latency on every player step makes overlap (or its absence) unmistakable.
    players = [slowed(writer(task, {f"calc/{task.lower()}.py": "X = 1\n"})) for task in ("TASK-A", "TASK-B")]
    scenario = Scenario.from_data({"sessions": [*players, writer("TASK-C", {"calc/c.py": "C = 1\n"}),
                                                coach_from_pytest()]})
    with ScriptedModel(scenario) as model:
        result = run_cli("run", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "db"),
                         "--parallel", str(parallel), model=model)
    assert result.returncode == 0, result.stdout + result.stderr
    first, second = span(model.requests, "TASK-A"), span(model.requests, "TASK-B")
    overlap = min(first[1], second[1]) - max(first[0], second[0])
    if parallel == 2:
        assert overlap > 0.5, (first, second)
    else:
        assert overlap < 0, (first, second)
    # Group 2 starts only after group 1 is merged, whatever the parallelism.
    assert span(model.requests, "TASK-C")[0] >= max(first[1], second[1])
    for name in ("task-a", "task-b", "c"):
        assert git(repo, "show", f"autobuild/FEAT-001:calc/{name}.py")
    assert git(repo, "worktree", "list").count("\n") == 1


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


def test_two_tasks_writing_one_file_conflict(tmp_path: Path, model_factory: Callable[..., ScriptedModel],
                                             run_cli: Callable[..., CliRun]) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=two_task_plan())
    model = model_factory({"sessions": [
        writer("TASK-A", {"calc/shared.py": "VALUE = 'a'\n"}),
        writer("TASK-B", {"calc/shared.py": "VALUE = 'b'\n"}),
        coach_from_pytest()]})
    result = run_cli("run", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "db"), "--parallel", "2",
                     model=model)
    assert result.returncode == 1, result.stdout + result.stderr
    assert git(repo, "show", "autobuild/FEAT-001:calc/shared.py") == "VALUE = 'a'\n"
    status = json.loads(run_cli("status", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "db"),
                                "--json").stdout)
    by_task = {row["task"]: row for row in status["tasks"]}
    assert by_task["TASK-A"]["status"] == "approved"
    assert by_task["TASK-B"]["status"] == "conflict" and "calc/shared.py" in by_task["TASK-B"]["reason"]
    assert "autobuild/FEAT-001.TASK-B" in git(repo, "branch", "--list"), "the conflicting branch is kept"
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""


def test_integration_gate_names_the_breaking_task(tmp_path: Path, model_factory: Callable[..., ScriptedModel],
                                                  run_cli: Callable[..., CliRun]) -> None:
    plan = two_task_plan()
    plan["tasks"][0]["verify"] = "python -m pytest -q tests/test_add.py"
    plan["tasks"][1]["verify"] = "python -m pytest -q tests/test_b.py"
    repo = make_sample_repo(tmp_path / "repo", plan=plan)
    coach_approves = {"role": "coach", "steps": [
        {"tool": {"name": "record_decision", "input": {"decision": "approve", "rationale": "ok"}}},
        {"text": "ok"}]}
    model = model_factory({"sessions": [
        # A renames add() to plus() consistently; B, started from the old code, still imports add().
        writer("TASK-A", {"calc/add.py": "def plus(a, b):\n    return a + b\n",
                          "tests/test_add.py": "from calc.add import plus\n\n\ndef test_plus():\n"
                                               "    assert plus(2, 3) == 5\n"}),
        writer("TASK-B", {"tests/test_b.py": "from calc.add import add\n\n\ndef test_b():\n"
                                             "    assert add(1, 1) == 2\n"}),
        coach_approves]})
    db = tmp_path / "db"
    result = run_cli("run", "FEAT-001", "--repo", str(repo), "--db", str(db), "--parallel", "2", model=model)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "TASK-B integration gate FAILED" in result.stdout
    rows = {r["task"]: r for r in json.loads(run_cli("status", "FEAT-001", "--repo", str(repo), "--db", str(db),
                                                     "--json").stdout)["tasks"]}
    assert rows["TASK-A"]["status"] == "approved"
    assert rows["TASK-B"]["status"] == "failed" and "integration gate failed after merging TASK-B" in \
        rows["TASK-B"]["reason"]
    files = git(repo, "ls-tree", "-r", "--name-only", "autobuild/FEAT-001").split()
    assert "tests/test_b.py" not in files, "the breaking merge is undone: the feature branch stays green"


def test_failed_dependency_skips_dependents_only(tmp_path: Path, model_factory: Callable[..., ScriptedModel],
                                                 run_cli: Callable[..., CliRun]) -> None:
    plan = {"id": "FEAT-001", "name": "Deps", "verify": "python -m pytest -q", "tasks": [
        {"id": "TASK-1", "name": "fails", "complexity": 2},
        {"id": "TASK-2", "name": "independent", "complexity": 2},
        {"id": "TASK-3", "name": "dependent", "complexity": 2, "dependencies": ["TASK-1"]}]}
    repo = make_sample_repo(tmp_path / "repo", plan=plan)
    model = model_factory({"sessions": [
        writer("TASK-1", {"tests/test_one.py": "def test_one():\n    assert False\n"}),
        writer("TASK-2", {"calc/two.py": "TWO = 2\n"}),
        coach_from_pytest()]})
    result = run_cli("run", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "db"), "--max-turns", "1",
                     model=model)
    assert result.returncode == 1
    assert "TASK-3 skipped: dependency TASK-1 failed" in result.stdout
    assert not any(r.task == "TASK-3" for r in model.requests), "a skipped task starts no session"
    assert git(repo, "show", "autobuild/FEAT-001:calc/two.py") == "TWO = 2\n"
    assert "skipped" in (repo / ".autobuild/runs/FEAT-001/AUTO-RUN.md").read_text()


def test_dry_run_reports_groups_estimate_and_scope_overlaps(tmp_path: Path, run_cli: Callable[..., CliRun]) -> None:
    plan = two_task_plan()
    plan["tasks"][0]["files"] = ["src/auth/**"]
    plan["tasks"][1]["files"] = ["src/auth/login.py"]
    repo = make_sample_repo(tmp_path / "repo", plan=plan)
    db = tmp_path / "db"
    result = run_cli("run", "FEAT-001", "--repo", str(repo), "--db", str(db), "--dry-run", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["groups"] == [["TASK-A", "TASK-B"]] and data["estimate"]["sessions_expected"] >= 2
    assert "TASK-A and TASK-B may write the same files" in data["scope_overlaps"][0]
    assert "may write the same files" in run_cli("validate", "FEAT-001", "--repo", str(repo)).stderr
    assert data["previous_run"] is None
    assert not db.exists() and "autobuild/" not in git(repo, "branch", "--list")


def test_clean_removes_leftovers_and_prunes_finished_threads(
    tmp_path: Path, model_factory: Callable[..., ScriptedModel], run_cli: Callable[..., CliRun]
) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=two_task_plan())
    model = model_factory({"sessions": [writer("TASK-A", {"calc/a.py": "A = 1\n"}),
                                        writer("TASK-B", {"calc/b.py": "B = 1\n"}), coach_from_pytest()]})
    db = tmp_path / "db"
    result = run_cli("run", "FEAT-001", "--repo", str(repo), "--db", str(db), "--keep-worktrees", model=model)
    assert result.returncode == 0, result.stdout + result.stderr
    assert git(repo, "worktree", "list").count("\n") == 4, "kept: two task worktrees and the integration one"
    dry = run_cli("run", "FEAT-001", "--repo", str(repo), "--db", str(db), "--dry-run", "--json")
    assert json.loads(dry.stdout)["previous_run"].startswith("FEAT-001 already finished (2 approved)")
    cleaned = run_cli("clean", "FEAT-001", "--repo", str(repo), "--db", str(db), "--json")
    assert cleaned.returncode == 0, cleaned.stderr
    data = json.loads(cleaned.stdout)
    assert data["pruned_threads"] == ["FEAT-001"] and len(data["removed"]) >= 3
    assert git(repo, "worktree", "list").count("\n") == 1
    assert "autobuild/FEAT-001\n" in git(repo, "branch", "--list") + "\n", "the feature branch always stays"
    assert "autobuild/FEAT-001." not in git(repo, "branch", "--list")
    assert run_cli("status", "--repo", str(repo), "--db", str(db), "--json").stdout.strip() == "[]"
