"""`attempts` in the plan and `--attempts N --attempts-policy first|best` on run/resume (issue 40): 1-8, the flag
over the plan, kept for resume; a bad value is one line, exit 2, nothing written."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from agents.testing.repos import DEMO_PLAN, make_sample_repo
from orchestrator.cli.main import _settings, main
from orchestrator.cli.parser import build_parser
from orchestrator.errors import PlanError
from orchestrator.plan.model import parse_plan, plan_digest
from orchestrator.store import run_options


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One repository for every refusal: none may write to it (each test checks)."""
    return make_sample_repo(tmp_path_factory.mktemp("attempts") / "repo", plan=DEMO_PLAN)


def _files(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if ".git" not in p.parts}


_BAD_FLAGS = {"zero": ["--attempts", "0"], "nine": ["--attempts", "9"], "word": ["--attempts", "x"],
              "negative": ["--attempts", "-1"], "policy": ["--attempts-policy", "fastest"]}


@pytest.mark.parametrize("command", ["run", "resume"])
@pytest.mark.parametrize("flags", _BAD_FLAGS.values(), ids=_BAD_FLAGS.keys())
def test_a_bad_attempts_flag_is_one_line_exit_2_nothing_written(command: str, flags: list[str], repo: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    before = _files(repo)
    code = _exit_code([command, "FEAT-001", "--repo", str(repo), "--autonomous", *flags])
    err = capsys.readouterr().err
    assert (code, err.count("\n")) == (2, 1), err
    assert "attempts" in err and "Traceback" not in err
    assert _files(repo) == before


def _exit_code(argv: list[str]) -> int:
    """`main`'s exit code, also when argparse refuses the flag (it raises SystemExit)."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def _plan(**changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(DEMO_PLAN)
    task_changes = changes.pop("task", {})
    data["tasks"][0].update(task_changes)  # type: ignore[index]
    return data | changes


@pytest.mark.parametrize("changes", [{"attempts": -1}, {"attempts": 0}, {"attempts": 9}, {"attempts": "3"},
                                     {"attempts": True}, {"task": {"attempts": -1}}, {"task": {"attempts": 2.5}},
                                     {"attempt_models": ["so net"]}, {"attempt_models": [""]}],
                         ids=["-1", "0", "9", "text", "bool", "task -1", "task 2.5", "model space", "model empty"])
def test_bad_attempts_in_a_plan_are_refused_naming_the_field(changes: dict[str, Any]) -> None:
    with pytest.raises(PlanError) as refused:
        parse_plan(_plan(**changes), "FEAT-001.yaml")
    assert "attempt" in str(refused.value) and "\n" not in str(refused.value)


def test_a_bad_plan_attempts_is_exit_2_nothing_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_sample_repo(tmp_path / "repo", plan=_plan(task={"attempts": -1}))
    before = _files(root)
    assert main(["run", "FEAT-001", "--repo", str(root), "--autonomous"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "attempts" in err
    assert _files(root) == before


def test_attempts_in_a_plan_and_the_digest_of_plans_without_them() -> None:
    plan = parse_plan(_plan(attempts=3, attempt_models=["sonnet", "opus"], task={"attempts": 2}), "p")
    assert (plan.attempts, plan.attempt_models, plan.tasks[0].attempts, plan.tasks[1].attempts) == (
        3, ["sonnet", "opus"], 2, None)
    # How many attempts is how a task runs, not what it is: a run resumes with another count.
    assert plan_digest(plan) == plan_digest(parse_plan(_plan(), "p"))
    again = parse_plan(plan.model_dump(mode="json"), "p")  # a dumped plan (a replan's) says `attempts: null`
    assert (again.attempts, again.tasks[1].attempts) == (3, None)
    assert yaml.safe_dump(_plan()) == yaml.safe_dump(DEMO_PLAN)  # the fixture itself is untouched


def test_the_flags_reach_the_settings_and_resume_keeps_them(repo: Path, tmp_path: Path) -> None:
    given = _settings(build_parser().parse_args(["run", "FEAT-001", "--repo", str(repo), "--attempts", "3",
                                                 "--attempts-policy", "best"]))
    assert (given.attempts, given.attempts_policy) == (3, "best")
    assert (given.options().attempts, given.options().attempts_policy) == (3, "best")
    default = _settings(build_parser().parse_args(["run", "FEAT-001", "--repo", str(repo)]))
    assert (default.attempts, default.attempts_policy) == (None, "first")
    kept = make_sample_repo(tmp_path / "kept")
    run_options.record(kept, "FEAT-001", {"attempts": 3, "attempts_policy": "best"})
    resumed = _settings(build_parser().parse_args(["resume", "FEAT-001", "--repo", str(kept)]))
    assert (resumed.attempts, resumed.attempts_policy) == (3, "best")
    fewer = _settings(build_parser().parse_args(["resume", "FEAT-001", "--repo", str(kept), "--attempts", "2"]))
    assert fewer.attempts == 2
