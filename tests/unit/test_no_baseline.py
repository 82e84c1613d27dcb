"""A base whose tests never ran is no baseline (gate/spec/no_baseline.py), on real runners' captured output: every
failure a test file that didn't load, compile or build is refused; a base red by assertions, or a young repo with
no tests yet, is not; a repaired base waives no failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.testing.repos import make_sample_repo
from orchestrator.errors import PlanError
from orchestrator.facts import GateResult
from orchestrator.gate.observe.judge import judge
from orchestrator.gate.spec.no_baseline import load_errors, no_baseline
from orchestrator.plan.model import load_plan, plan_digest
from orchestrator.settings import RunSettings, load_settings
from tests.unit.test_gate_runners import FIXTURES, observed_run


def base_of(runner: str, case: str, *, recognised: bool = True) -> GateResult:
    """A captured run as the gate's base run would record it."""
    output = (FIXTURES / runner / f"{case}.out").read_text()
    code = int((FIXTURES / runner / f"{case}.exit").read_text().split()[-1])
    seen = observed_run(runner, case) if recognised else None
    failing = seen.failing if seen else None
    return GateResult(passed=False, command="tests", summary=f"exit {code}", output=output, exit_code=code,
                      tests_passed=seen.passed if seen else None, tests_failed=seen.failed if seen else None,
                      failing=failing, new_failures=[], ran_classes=None, runner=seen.runner if seen else None,
                      load_errors=load_errors(output, failing))


@pytest.mark.parametrize(("runner", "case"), [
    ("pytest", "collection-error"), ("pytest", "collection-error-coloured"), ("unittest", "import-errors"),
    ("go", "build-failed"), ("node", "load-error"), ("ctest", "not-built")])
def test_a_base_whose_every_failure_is_a_file_that_did_not_load_is_refused(runner: str, case: str) -> None:
    base = base_of(runner, case)
    assert base["failing"] and base["load_errors"] == base["failing"]
    assert "could not load, compile or build" in str(no_baseline(base))


def test_a_crate_that_does_not_compile_is_named() -> None:
    base = base_of("cargo", "compile-error", recognised=False)
    assert base["load_errors"] == ["could not compile `calc` (lib)", "could not compile `calc` (lib test)"]
    assert "could not compile `calc` (lib)" in str(no_baseline(base))


@pytest.mark.parametrize(("runner", "case"), [
    ("pytest", "red"), ("pytest", "collection-error-continued"), ("unittest", "red-subtests"), ("go", "red"),
    ("jest", "red"), ("jest", "suite-error"), ("node", "red-nested"), ("ctest", "red"), ("cargo", "red-no-fail-fast")])
def test_a_base_red_by_its_tests_stays_a_baseline(runner: str, case: str) -> None:
    base = base_of(runner, case)
    assert no_baseline(base) is None
    assert not set(base["load_errors"] or []) & {t for t in base["failing"] or [] if "::" in t or " > " in t}


def test_only_the_files_that_did_not_load_are_load_errors() -> None:
    assert base_of("unittest", "red-subtests")["load_errors"] == ["tests.test_broken"]
    assert base_of("jest", "suite-error")["load_errors"] == ["broken.test.js"]


def test_ctest_finding_nothing_is_no_baseline_only_where_the_project_declares_tests(tmp_path: Path) -> None:
    base = base_of("ctest", "no-build")
    (tmp_path / "CMakeLists.txt").write_text("project(c C)\nenable_testing()\n")
    assert no_baseline(base, tmp_path) is None  # a young repo: no tests yet
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "CMakeLists.txt").write_text("add_executable(t t.c)\nadd_test(NAME t COMMAND t)\n")
    assert "tests/CMakeLists.txt declares tests" in str(no_baseline(base, tmp_path))


def test_a_repaired_base_waives_no_failure() -> None:
    base = base_of("pytest", "collection-error")
    run = base.copy()
    assert judge(run, base)["passed"]  # what a plain break got merged as: "only tests already failing on the base"
    base["not_a_baseline"] = str(no_baseline(base))
    assert not judge(run, base)["passed"]


def test_a_task_says_it_repairs_the_base_and_a_run_says_so_by_its_flag_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def plan_with(folder: str, fields: dict[str, object]) -> Path:
        plan = {"id": "FEAT-001", "name": "Feature", "tasks": [{"id": "TASK-001", "name": "Task", **fields}]}
        return make_sample_repo(tmp_path / folder, files={"calc.py": ""}, plan=plan, venv=False)

    assert load_plan(plan_with("yes", {"repairs_base": True}), "FEAT-001").repairs_base()
    plain = load_plan(plan_with("no", {}), "FEAT-001")
    assert not plain.repairs_base()
    assert plan_digest(plain) == plan_digest(load_plan(plan_with("false", {"repairs_base": False}), "FEAT-001"))
    with pytest.raises(PlanError, match="repairs_base: must be true or false"):
        load_plan(plan_with("bad", {"repairs_base": "yes"}), "FEAT-001")
    monkeypatch.setenv("ORCHESTRATOR_REPAIR_BASE", "1")
    assert not load_settings(RunSettings, tmp_path, target="FEAT-001").options().repair_base
    assert load_settings(RunSettings, tmp_path, target="FEAT-001", repair_base=True).options().repair_base
