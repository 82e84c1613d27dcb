"""The gate's decisions without running a feature: which command a repo's files call for, and what a run of it
means next to the base's run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.gate import GateResult, choose_gate, default_setup, detect_test_command, judge, unusable
from orchestrator.gate.observe.judge import unusable_base


def repo_with(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize(("files", "command", "source"), [
    ({"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n"}, "python -m pytest", "pyproject.toml"),
    ({"pytest.ini": "[pytest]\n"}, "python -m pytest", "pytest.ini"),
    ({"setup.cfg": "[tool:pytest]\n"}, "python -m pytest", "setup.cfg"),
    ({"package.json": json.dumps({"scripts": {"test": "jest"}})}, "npm test", "package.json"),
    ({"package.json": json.dumps({"scripts": {"test": "vitest"}}), "pnpm-lock.yaml": ""}, "pnpm test", "pnpm"),
    ({"package.json": json.dumps({"scripts": {"test": "jest"}}), "yarn.lock": ""}, "yarn test", "yarn"),
    ({"Cargo.toml": "[package]\nname = 'x'\n"}, "cargo test", "Cargo.toml"),
    ({"go.mod": "module x\n"}, "go test ./...", "go.mod"),
    ({"Makefile": "build:\n\tcc x.c\n\ntest: build\n\t./run-tests\n"}, "make test", "Makefile test target"),
])
def test_the_repos_own_test_command_is_found_with_its_source(tmp_path: Path, files: dict[str, str], command: str,
                                                             source: str) -> None:
    choice = detect_test_command(repo_with(tmp_path, files))
    assert choice.command == command and source in choice.source


def test_a_tests_folder_without_pytest_in_the_repos_environment_uses_unittest(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, {"tests/test_x.py": "import unittest\n"})
    (repo / ".venv" / "bin").mkdir(parents=True)  # a venv without pytest (its python: the system's, no pytest)
    (repo / ".venv" / "bin" / "python").symlink_to("/usr/bin/python3")
    (repo / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    choice = detect_test_command(repo)
    assert choice.command == "python -m unittest discover -s tests" and "unittest" in choice.source


@pytest.mark.parametrize("files", [
    {"README.md": "docs only\n"},
    {"package.json": json.dumps({"scripts": {"test": 'echo "Error: no test specified" && exit 1'}})},
    {"Makefile": "TEST := 1\ntest := yes\nbuild:\n\ttrue\n"},
])
def test_no_test_command_is_said_plainly(tmp_path: Path, files: dict[str, str]) -> None:
    choice = detect_test_command(repo_with(tmp_path, files))
    assert choice.command is None and "no test command found" in choice.source
    assert "unverified" in choice.describe()


def test_verify_override_wins_and_none_is_explicit(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, {"go.mod": "module x\n"})
    assert choose_gate(repo, "make check", None).source == "the plan's verify"
    assert choose_gate(repo, "make check", "pytest -x").command == "pytest -x"
    assert choose_gate(repo, "make check", "none").command is None
    assert choose_gate(repo, None, None).command == "go test ./..."


def test_node_worktrees_get_a_clean_install_only_when_the_main_checkout_has_none(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, {"package.json": json.dumps({"dependencies": {"x": "1"}}), "package-lock.json": "{}"})
    assert default_setup(repo) == "npm ci --no-audit --no-fund"
    (repo / "node_modules").mkdir()
    assert default_setup(repo) is None, "worktrees inside the repo resolve the main checkout's node_modules"


def run_of(code: int | None, failing: list[str] | None, passed: int | None = 3, failed: int | None = None, *,
           command: str = "python -m pytest", runner: str | None = "pytest") -> GateResult:
    count = failed if failed is not None else (len(failing) if failing is not None else None)
    return GateResult(passed=code == 0 and (passed or 0) + (count or 0) > 0, command=command, summary=f"exit {code}",
                      output="", exit_code=code, tests_passed=passed, tests_failed=count, failing=failing,
                      new_failures=[], ran_classes=None, runner=runner if passed is not None else None)


def test_tests_red_on_the_base_neither_block_nor_hide() -> None:
    base = run_of(1, ["t::old"])
    assert judge(run_of(1, ["t::old"]), base)["passed"]
    broken = judge(run_of(1, ["t::old", "t::new"]), base)
    assert not broken["passed"] and broken["new_failures"] == ["t::new"]
    assert not judge(run_of(1, ["t::new"]), run_of(0, []))["passed"], "a green base judges by exit status"


def test_a_swap_on_a_red_base_is_caught_by_id() -> None:
    base = run_of(1, ["t::a", "t::b"], passed=5)
    swapped = judge(run_of(1, ["t::a", "t::c"], passed=5), base)
    assert not swapped["passed"] and swapped["new_failures"] == ["t::c"], "same exit status, same counts"


def test_by_counts_only_with_consent_and_without_counts_a_failure_fails() -> None:
    base = run_of(101, None, failed=1, command="cargo test", runner="cargo test")
    assert "--judge-by-counts" in (unusable_base(base) or ""), "a red base without ids stops the run"
    assert unusable_base(base, judge_by_counts=True) is None
    assert judge(run_of(101, None, failed=1, command="cargo test"), base)["passed"]
    assert judge(run_of(101, None, failed=1, command="cargo test"), base)["judged_by"] == "counts"
    assert not judge(run_of(101, None, failed=2, command="cargo test"), base)["passed"]
    no_runner = run_of(1, None, passed=None, failed=None, command="./check.sh")
    assert "without test results we can read" in (unusable_base(no_runner, judge_by_counts=True) or "")
    assert unusable_base(no_runner, detected=False) is None, "a plan's acceptance check may be red by design"
    assert not judge(no_runner, no_runner)["passed"], "judged by exit status: it must pass outright"


@pytest.mark.parametrize(("code", "failing", "passed", "reason"), [
    (127, None, None, "could not run"),
    (126, None, None, "could not run"),
    (4, None, None, "usage error"),
    (3, None, None, "internal error"),
])
def test_a_command_that_cannot_run_is_recognised(code: int, failing: list[str] | None, passed: int | None,
                                                 reason: str) -> None:
    assert reason in (unusable(run_of(code, failing, passed=passed)) or "")


@pytest.mark.parametrize(("code", "failing", "passed"), [
    (1, ["t::a"], 3),  # a red but running suite
    (5, [], 0),  # pytest: no tests collected (a young repo)
    (0, [], 0),  # unittest, go, cargo...: ran nothing
    (1, ["tests.test_broken"], 0),  # every module fails to import: a red base by id
])
def test_a_command_that_runs_can_gate_and_a_base_without_tests_is_a_fact(code: int, failing: list[str],
                                                                        passed: int) -> None:
    run = run_of(code, failing, passed=passed)
    assert unusable(run) is None and unusable_base(run) is None


def test_a_run_of_no_test_passes_nothing_whatever_the_base() -> None:
    empty = run_of(0, [], passed=0, command="go test ./...", runner="go test")
    assert not judge(empty, empty)["passed"], "a young repo's task must add a test the gate runs"
    assert not judge(empty, run_of(1, ["t::old"], command="go test ./..."))["passed"], "deleting every test"
    assert judge(run_of(0, [], passed=1, command="go test ./..."), empty)["passed"]


def test_a_base_that_passes_nothing_still_judges_by_id() -> None:
    nothing_passes = run_of(2, ["tests.test_sub"], passed=0)
    assert judge(run_of(1, ["tests.test_sub"], passed=1), nothing_passes)["passed"]
    assert not judge(run_of(1, ["tests.test_sub", "tests.test_new::t"], passed=1), nothing_passes)["passed"]
