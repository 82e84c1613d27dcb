"""The walking skeleton through the real CLI and the scripted model: approve, feedback, turn limit, key hygiene."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from agents.testing.repos import SAMPLE_FILES, make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from tests import schemas
from tests.cli_in_process import cli_in_process
from tests.conftest import SECRET_KEY, CliRun, approve_scenario, coach_from_pytest, git, one_task_plan
from tests.fake_langsmith import fake_langsmith, langsmith_env

pytestmark = pytest.mark.cli

BUGGY_DIVIDE = "def divide(a, b):\n    return a // b\n"
DIVIDE_TEST = "from calc.divide import divide\n\n\ndef test_divide():\n    assert divide(7, 2) == 3.5\n"


def report(*files: str) -> dict[str, Any]:
    return {"tool": {"name": "report_progress", "input": {
        "files_modified": list(files), "tests_written": [], "implementation_notes": "see diff"}}}


def test_approved_on_turn_one(tmp_path: Path, model_factory: Callable[..., ScriptedModel],
                              run_cli: Callable[..., CliRun]) -> None:
    files = {**SAMPLE_FILES, "CLAUDE.md": "House rules: CONVENTION-MARKER-7f3a. See @docs/more.md\n",
             "docs/more.md": "IMPORTED-MARKER-91c2\n"}
    repo = make_sample_repo(tmp_path / "repo", files=files, plan=one_task_plan())
    main_before = git(repo, "rev-parse", "main")
    model = model_factory(approve_scenario())
    db = tmp_path / "ck.sqlite"
    result = run_cli("run", "FEAT-001", "--repo", str(repo), "--db", str(db), model=model)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "approved" in result.stdout and "TASK-001" in result.stdout
    assert git(repo, "show", "autobuild/FEAT-001:calc/subtract.py").startswith("def subtract")
    assert git(repo, "rev-parse", "main") == main_before
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""
    assert not (repo / "calc" / "subtract.py").exists(), "the user's checkout must not change"
    assert (repo / ".autobuild/runs/FEAT-001/TASK-001/AUTO-RUN.md").is_file()
    assert (repo / ".autobuild/runs/FEAT-001/AUTO-RUN.md").is_file()
    assert "autobuild/FEAT-001.TASK-001" not in git(repo, "branch", "--list"), "merged task branch is removed"
    assert git(repo, "worktree", "list").count("\n") == 1, "no worktree left behind"
    assert [r.role for r in model.requests if r.step == 0] == ["player", "coach"]
    for first in (r for r in model.requests if r.step == 0):
        assert "CONVENTION-MARKER-7f3a" in first.system and "IMPORTED-MARKER-91c2" in first.system, first.role
    # Running it again reports the finished thread instead of redoing work (`main` in this process: no session).
    again = cli_in_process(tmp_path, "run", "FEAT-001", "--repo", str(repo), "--db", str(db), model=model)
    assert again.returncode == 0 and "already finished" in again.stdout
    assert len([r for r in model.requests if r.step == 0]) == 2


@pytest.mark.heavy
def test_feedback_then_approval_with_real_pytest(tmp_path: Path, model_factory: Callable[..., ScriptedModel],
                                                 run_cli: Callable[..., CliRun]) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=one_task_plan(name="Add divide"))
    scenario = {"sessions": [
        {"role": "player", "task": "TASK-001", "turn": 1, "steps": [
            {"write": {"path": "calc/divide.py", "content": BUGGY_DIVIDE}},
            {"write": {"path": "tests/test_divide.py", "content": DIVIDE_TEST}},
            report("calc/divide.py", "tests/test_divide.py"), {"text": "done"}]},
        {"role": "player", "task": "TASK-001", "turn": 2, "steps": [
            {"read": "calc/divide.py"},
            {"edit": {"path": "calc/divide.py", "old": "a // b", "new": "a / b"}},
            report("calc/divide.py"), {"text": "fixed"}]},
        coach_from_pytest(),
    ]}
    model = model_factory(scenario)
    result = run_cli("run", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "ck.sqlite"), model=model)
    assert result.returncode == 0, result.stdout + result.stderr
    coach_runs = [r for r in model.requests if r.role == "coach" and r.step == 1]
    assert [r.turn for r in coach_runs] == [1, 2]
    assert "1 failed" in coach_runs[0].tool_results[0], "the coach's real pytest run fails on turn 1"
    assert "2 passed" in coach_runs[1].tool_results[0], "and passes on turn 2"
    turn2 = next(r for r in model.requests if r.role == "player" and r.turn == 2 and r.step == 0)
    assert "calc/x.py:1: tests fail" in turn2.prompt, "feedback items reach the next player prompt verbatim"
    assert git(repo, "show", "autobuild/FEAT-001:calc/divide.py") == "def divide(a, b):\n    return a / b\n"
    trace = [json.loads(line)["event"] for line in
             (repo / ".autobuild/runs/FEAT-001/TASK-001/trace.jsonl").read_text().splitlines()]
    expected = ["task_ready", "initialize", "player_start", "session_end", "player_report", "coach_validate",
                "session_end", "coach_decision", "feedback", "player_start", "session_end", "player_report",
                "coach_validate", "session_end", "gate", "coach_decision", "finalize", "landing", "integration_gate",
                "merge"]
    assert trace == expected


@pytest.mark.heavy
def test_api_key_never_written_and_nothing_traced_unasked(tmp_path: Path,
                                                          model_factory: Callable[..., ScriptedModel],
                                                          run_cli: Callable[..., CliRun]) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=one_task_plan())
    model = model_factory(approve_scenario())
    db = tmp_path / "ck.sqlite"
    with fake_langsmith() as langsmith:  # its endpoint, key and project are set; LANGSMITH_TRACING is not
        result = run_cli("run", "FEAT-001", "--repo", str(repo), "--db", str(db), "--json", model=model,
                         **langsmith_env(langsmith.url))
        assert result.returncode == 0, result.stderr
        assert langsmith.requests == [], "nothing is sent to LangSmith unless LANGSMITH_TRACING asks: not even /info"
    written = [p for p in [*repo.rglob("*"), *tmp_path.glob("ck.sqlite*")] if p.is_file()]
    assert len(written) > 20
    for path in written:
        assert SECRET_KEY.encode() not in path.read_bytes(), path
    assert SECRET_KEY not in result.stdout + result.stderr
    events = schemas.valid_lines(result.stdout)
    assert events[-1]["event"] == "summary" and events[-1]["exit_code"] == 0
    assert {"feature_start", "session_start", "tool", "session_end", "gate", "coach_decision", "finalize",
            "merge", "feature_end"} <= {event["event"] for event in events}


@pytest.mark.heavy
def test_run_single_task_checks_dependencies(tmp_path: Path, model_factory: Callable[..., ScriptedModel],
                                             run_cli: Callable[..., CliRun]) -> None:
    plan = one_task_plan()
    plan["tasks"].append({"id": "TASK-002", "name": "Docs", "complexity": 1, "dependencies": ["TASK-001"]})
    repo = make_sample_repo(tmp_path / "repo", plan=plan)
    db = tmp_path / "ck.sqlite"
    refused = run_cli("run", "TASK-002", "--repo", str(repo), "--db", str(db))
    assert refused.returncode == 2
    assert "TASK-001" in refused.stderr and "--ignore-deps" in refused.stderr
    assert not db.exists()
    model = model_factory(approve_scenario("TASK-002", {"docs/OPS.md": "# ops\n"}))
    forced = run_cli("run", "TASK-002", "--repo", str(repo), "--db", str(db), "--ignore-deps", model=model)
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert git(repo, "show", "autobuild/FEAT-001:docs/OPS.md") == "# ops\n"
    assert {r.task for r in model.requests if r.role} == {"TASK-002"}


BAD_PLANS: dict[str, Any] = {
    "cycle": {"tasks": [{"id": "A", "name": "a", "dependencies": ["B"]},
                        {"id": "B", "name": "b", "dependencies": ["A"]}]},
    "unknown-dep": {"tasks": [{"id": "A", "name": "a", "dependencies": ["Z"]}]},
    "duplicate": {"tasks": [{"id": "A", "name": "a"}, {"id": "A", "name": "b"}]},
    "groups": {"tasks": [{"id": "A", "name": "a"}, {"id": "B", "name": "b", "dependencies": ["A"]}],
               "orchestration": {"parallel_groups": [["A", "B"]]}},
    "complexity": {"tasks": [{"id": "A", "name": "a", "complexity": 12}]},
    "slash-id": {"tasks": [{"id": "A/B", "name": "a"}]},
    "dotdot-id": {"tasks": [{"id": "..", "name": "a"}]},
    "empty": {"tasks": []},
    "wrong-type": {"tasks": [{"id": "A", "name": "a", "dependencies": "B"}]},
    "tasks-not-list": {"tasks": "A"},
}


@pytest.mark.parametrize("case", [*BAD_PLANS, "missing-file", "malformed-yaml", "feature-id-traversal"])
def test_bad_input_exits_2_and_writes_nothing(case: str, tmp_path: Path, run_cli: Callable[..., CliRun]) -> None:
    repo = make_sample_repo(tmp_path / "repo")
    features = repo / ".autobuild" / "features"
    features.mkdir(parents=True)
    target = "FEAT-001"
    if case in BAD_PLANS:
        (features / "FEAT-001.yaml").write_text(yaml.safe_dump({"id": "FEAT-001", "name": "x", **BAD_PLANS[case]}))
    elif case == "malformed-yaml":
        (features / "FEAT-001.yaml").write_text("id: FEAT-001\ntasks: [\n  - {id: A\n")
    elif case == "feature-id-traversal":
        target = "../FEAT-001"
    branches_before = git(repo, "branch", "--list")
    db = tmp_path / "ck.sqlite"
    for command in (["run", target], ["validate", target]):
        argv = [*command, "--repo", str(repo), *(["--db", str(db)] if command[0] == "run" else [])]
        # One command of one case through the real process (what a person sees whole); the rest through `main` in
        # this process.
        real = case == "malformed-yaml" and command[0] == "run"
        result = run_cli(*argv) if real else cli_in_process(tmp_path, *argv)
        assert result.returncode == 2, (case, result.stdout, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
        assert "Traceback" not in result.stderr
    assert git(repo, "branch", "--list") == branches_before
    assert not (repo / ".autobuild" / "worktrees").exists()
    assert not (repo / ".autobuild" / "runs").exists()
    assert not db.exists() and not list(tmp_path.glob("ck.sqlite*"))
    assert git(repo, "worktree", "list").count("\n") == 1
