"""The planner and doctor: a scripted planner writes a valid plan; invalid plans are retried or write nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from orchestrator.plan.model import load_plan
from tests import schemas
from tests.conftest import SECRET_KEY, CliRun

pytestmark = [pytest.mark.cli, pytest.mark.heavy]


def submitted(*tasks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"name": "Auth", "description": "Add login", "verify": "python -m pytest -q", "tasks": list(tasks), **extra}


def task(tid: str, *deps: str, **extra: Any) -> dict[str, Any]:
    return {"id": tid, "name": f"task {tid}", "complexity": 3, "dependencies": list(deps),
            "requirements": [f"do {tid}"], "acceptance_criteria": [f"{tid} works"], **extra}


def planner(turn: int | None, plan: dict[str, Any]) -> dict[str, Any]:
    return {"role": "planner", **({"turn": turn} if turn else {}), "steps": [
        {"read": "README.md"}, {"tool": {"name": "submit_plan", "input": plan}}, {"text": "submitted"}]}


def test_planner_writes_valid_plan_and_task_files(tmp_path: Path, model_factory: Callable[..., ScriptedModel],
                                                  run_cli: Callable[..., CliRun]) -> None:
    repo = make_sample_repo(tmp_path / "repo")
    plan = submitted(task("a"), task("b"), task("c", "a", "b", complexity=14),
                     orchestration={"parallel_groups": [["a", "b", "c"]]})  # the model's grouping is ignored
    model = model_factory({"sessions": [planner(None, plan)]})
    result = run_cli("plan", "Add OAuth2 login", "--repo", str(repo), model=model)
    assert result.returncode == 0, result.stdout + result.stderr
    path = repo / ".autobuild/features/FEAT-001.yaml"
    data = yaml.safe_load(path.read_text())
    assert [t["id"] for t in data["tasks"]] == ["TASK-001", "TASK-002", "TASK-003"]
    assert data["tasks"][2]["dependencies"] == ["TASK-001", "TASK-002"]
    assert data["tasks"][2]["complexity"] == 10
    assert data["orchestration"]["parallel_groups"] == [["TASK-001", "TASK-002"], ["TASK-003"]]
    assert load_plan(repo, "FEAT-001").groups() == [["TASK-001", "TASK-002"], ["TASK-003"]]
    assert {p.name for p in (repo / ".autobuild/tasks").iterdir()} == {"TASK-001.md", "TASK-002.md", "TASK-003.md"}
    assert "TASK-003" in result.stdout
    assert f"autobuild run FEAT-001 --dry-run --repo {repo}" in result.stdout, "the next step is named"
    prompt = next(r for r in model.requests if r.role == "planner" and r.step == 0)
    assert "Add OAuth2 login" in prompt.prompt
    # A second plan gets the next free ids and never overwrites the first one's task files.
    second = run_cli("plan", "Add logout", "--repo", str(repo), "--json", model=model)
    assert second.returncode == 0, second.stderr
    lines = second.stdout.splitlines()
    kinds = [schemas.valid("event", line)["event"] for line in lines[:-1]]
    assert kinds[0] == "session_start" and "tool" in kinds and kinds[-1] == "session_end", kinds
    assert schemas.valid("plan", lines[-1])["feature"] == "FEAT-002"
    assert [t["id"] for t in yaml.safe_load((repo / ".autobuild/features/FEAT-002.yaml").read_text())["tasks"]] \
        == ["TASK-004", "TASK-005", "TASK-006"]


def test_invalid_first_plan_is_retried_with_the_errors(tmp_path: Path, model_factory: Callable[..., ScriptedModel],
                                                       run_cli: Callable[..., CliRun]) -> None:
    repo = make_sample_repo(tmp_path / "repo")
    model = model_factory({"sessions": [
        planner(1, submitted(task("a", "ghost"))),
        planner(2, submitted(task("a"))),
    ]})
    result = run_cli("plan", "Add login", "--repo", str(repo), "--id", "FEAT-007", model=model)
    assert result.returncode == 0, result.stdout + result.stderr
    retry = next(r for r in model.requests if r.role == "planner" and r.turn == 2 and r.step == 0)
    assert "depends on unknown task ghost" in retry.prompt
    assert (repo / ".autobuild/features/FEAT-007.yaml").is_file()


def test_a_proposed_verify_that_does_not_run_is_asked_for_again(tmp_path: Path,
                                                                 model_factory: Callable[..., ScriptedModel],
                                                                 run_cli: Callable[..., CliRun]) -> None:
    repo = make_sample_repo(tmp_path / "repo")
    model = model_factory({"sessions": [
        planner(1, submitted(task("a"), verify="no-such-test-runner --all")),
        planner(2, submitted(task("a"), verify="python -m pytest -q")),
    ]})
    result = run_cli("plan", "Add login", "--repo", str(repo), "--id", "FEAT-003", model=model)
    assert result.returncode == 0, result.stdout + result.stderr
    retry = next(r for r in model.requests if r.role == "planner" and r.turn == 2 and r.step == 0)
    assert "verify `no-such-test-runner --all` does not run on the base" in retry.prompt
    assert "exit 127" in retry.prompt
    assert load_plan(repo, "FEAT-003").verify == "python -m pytest -q"
    assert not (repo / ".autobuild/worktrees/FEAT-003/_baseline").exists(), "the check's worktree is gone"


def test_cyclic_plan_twice_writes_nothing(tmp_path: Path, model_factory: Callable[..., ScriptedModel],
                                          run_cli: Callable[..., CliRun]) -> None:
    repo = make_sample_repo(tmp_path / "repo")
    model = model_factory({"sessions": [planner(None, submitted(task("a", "b"), task("b", "a")))]})
    result = run_cli("plan", "Add login", "--repo", str(repo), model=model)
    assert result.returncode == 1
    assert "no valid plan after 2 attempt(s)" in result.stderr and "cycle" in result.stderr
    assert "Nothing was written" in result.stderr
    assert not (repo / ".autobuild").exists()


def test_doctor_reports_without_leaking_the_key(tmp_path: Path, model_factory: Callable[..., ScriptedModel],
                                               run_cli: Callable[..., CliRun]) -> None:
    repo = make_sample_repo(tmp_path / "repo")
    model = model_factory({"sessions": []})
    result = run_cli("doctor", "--repo", str(repo), "--db", str(tmp_path / "db.sqlite"), "--json", model=model)
    assert result.returncode == 0, result.stdout + result.stderr
    checks = {c["check"]: c for c in schemas.valid("doctor", result.stdout)}
    assert set(checks) == {"claude CLI", "credentials", "git", "repo", "checkpoint DB", "sandbox", "model endpoint",
                           "tracing", "model call"}
    assert all(c["ok"] for c in checks.values()), checks
    assert "the model answered" in checks["model call"]["detail"]
    assert any(r.role == "doctor" for r in model.requests), "a real session reached the model"
    assert "2.1." in checks["claude CLI"]["detail"]
    assert SECRET_KEY not in result.stdout + result.stderr
    model.stop()
    down = run_cli("doctor", "--repo", str(repo), "--db", str(tmp_path / "db.sqlite"), model=model)
    assert down.returncode == 1 and "FAIL  model endpoint" in down.stdout and "FAIL  model call" in down.stdout
    offline = run_cli("doctor", "--repo", str(repo), "--db", str(tmp_path / "db.sqlite"), "--offline", model=model)
    assert "model call" not in offline.stdout
