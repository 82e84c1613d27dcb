"""The gate's readers of test runners, on outputs captured from the real tools (tests/fixtures/gate/, re-captured
by tests/fixtures/gate/capture.sh): green, red, subTests, nested TAP, no tests, skips, fail-fast. Every runner
names its failing tests; a run of no test is seen as one; skips are counted with their reasons."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.gate.observe.instrument import Reports
from orchestrator.gate.observe.result import observe
from orchestrator.gate.observe.runners import Observed

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gate"


ABSENT = Reports(*(FIXTURES / "absent",) * 5)
CAPTURED_IN = Path("/tmp/scratch")
"""Where capture.sh's scratch projects lay (their paths in the fixtures are rewritten to it)."""


def observed_run(runner: str, case: str, *, reports: bool = True) -> Observed:
    """A captured run as the gate reads it: with the reports written beside it, or from its output alone."""
    base = FIXTURES / runner / case
    found = Reports(base.with_suffix(".xml") if runner == "pytest" else base.with_suffix(".none"),
                    base.with_suffix(".xml") if runner == "node" else base.with_suffix(".none"),
                    base.with_suffix(".jsonl"), base.with_suffix(".nodejsonl"), base.with_suffix(".js"))
    observed = observe(base.with_suffix(".out").read_text(), found if reports else ABSENT, CAPTURED_IN / runner)
    assert observed is not None, f"{runner}/{case}: no runner recognised"
    return observed


def seen(runner: str, case: str) -> tuple[str, list[str] | None, int, int, int, list[str]]:
    """(runner, failing ids, passed, failed, skipped, skipped entries) as the gate reads a captured run."""
    observed = observed_run(runner, case)
    return (observed.runner, observed.failing, observed.passed, observed.failed, observed.skipped_count,
            observed.skipped)


@pytest.mark.parametrize(("runner", "case", "name"), [
    ("pytest", "green", "pytest"), ("unittest", "green", "unittest"), ("node", "green", "node --test"),
    ("jest", "green", "jest"), ("vitest", "green", "vitest"), ("mocha", "green", "mocha"), ("go", "green", "go test"),
    ("cargo", "green", "cargo test"),
])
def test_a_green_run_of_every_runner_is_read_as_passing_tests_and_no_failure(runner: str, case: str,
                                                                              name: str) -> None:
    found, failing, passed, failed, _, _ = seen(runner, case)
    assert (found, failing, failed) == (name, [], 0) and passed >= 1


@pytest.mark.parametrize(("runner", "case", "failing", "passed", "skipped"), [
    ("pytest", "red", ["tests.test_red.TestSuite::test_method", "tests.test_red::test_red"], 1, 1),
    ("pytest", "collection-error", ["tests.test_broken"], 0, 0),
    ("pytest", "collection-error-continued", ["tests.test_broken"], 1, 0),
    ("unittest", "red-subtests", ["tests.test_broken", "tests.test_calc.Calc.test_error",
                                  "tests.test_calc.Calc.test_sub (i=2)", "tests.test_calc.Calc.test_sub (i=3)"], 1, 1),
    ("node", "red-nested", ["test/a.test.js > breaks", "test/a.test.js > outer > inner bad",
                            "test/b.test.js > suite > nested > fails deep"], 3, 2),
    ("node", "npm-test-red", ["test/a.test.js > breaks", "test/a.test.js > outer > inner bad"], 2, 2),
    ("jest", "red", ["a.test.js > calc > breaks", "a.test.js > calc > nested > deep fail"], 3, 1),
    ("jest", "suite-error", ["a.test.js > calc > breaks", "a.test.js > calc > nested > deep fail",
                             "broken.test.js"], 2, 1),
    ("vitest", "red", ["a.test.js > calc > breaks", "a.test.js > calc > nested > deep fail"], 3, 1),
    ("mocha", "red", ["test/a.spec.js > calc > breaks", "test/a.spec.js > calc > nested > deep fail"], 1, 2),
    ("go", "red", ["example.com/m/calc.TestBad", "example.com/m/calc.TestSub/two"], 2, 1),
    ("go", "build-failed", ["example.com/m/calc [build failed]"], 0, 0),
    ("cargo", "red-no-fail-fast", ["tests/first.rs::first_red"], 4, 1),
])
def test_a_red_run_names_its_failing_tests_and_counts_skips(runner: str, case: str, failing: list[str], passed: int,
                                                             skipped: int) -> None:
    _, found, found_passed, failed, found_skipped, _ = seen(runner, case)
    assert found == failing and failed == len(failing)
    assert (found_passed, found_skipped) == (passed, skipped)


@pytest.mark.parametrize(("runner", "case"), [
    ("pytest", "none"), ("unittest", "none"), ("node", "none"), ("jest", "none"), ("vitest", "none"),
    ("mocha", "none"), ("go", "no-test-files"), ("go", "no-tests-to-run"), ("cargo", "none"),
])
def test_a_run_of_no_test_is_recognised_for_every_runner(runner: str, case: str) -> None:
    _, failing, passed, failed, _, _ = seen(runner, case)
    assert (failing, passed, failed) == ([], 0, 0)


def test_skips_carry_their_reasons() -> None:
    assert seen("pytest", "red")[5] == ["tests.test_red::test_db (no DATABASE_URL)"]
    assert seen("unittest", "red-subtests")[5] == ["tests.test_calc.Calc.test_db (no DATABASE_URL)"]
    assert seen("go", "red")[5] == ["example.com/m/calc.TestSkip (no DATABASE_URL)"]
    assert seen("cargo", "red-no-fail-fast")[5] == ["src/lib.rs::tests::unit_db (needs a database)"]
    assert "test/a.test.js > needs a database (no DATABASE_URL)" in seen("node", "red-nested")[5]


def test_subtest_failures_outnumbering_tests_never_give_negative_counts() -> None:
    _, failing, passed, failed, _, _ = seen("unittest", "subtests-outnumber-tests")
    assert passed == 1 and failed == 6 and failing is not None and len(failing) == 6
    text = (FIXTURES / "unittest" / "subtests-outnumber-tests.out").read_text()
    assert "Ran 2 tests" in text and "failures=6" in text, "the shape that gave -4 passed by subtraction"
    summary_only = observe(text, ABSENT)
    assert summary_only is not None and summary_only.failing is None and summary_only.passed >= 0


def test_cargo_fail_fast_hides_later_binaries_which_the_gate_runs_without_it() -> None:
    _, _, fast_passed, _, _, _ = seen("cargo", "red-fail-fast")
    _, _, full_passed, _, _, _ = seen("cargo", "red-no-fail-fast")
    assert fast_passed == 2 and full_passed == 4, "tests/second.rs and the doctest only run with --no-fail-fast"


def test_unittest_fail_fast_is_switched_off_by_the_shim() -> None:
    _, failing, passed, _, skipped, _ = seen("unittest", "failfast")
    assert failing == ["tests.test_calc.Calc.test_error", "tests.test_calc.Calc.test_sub (i=2)",
                       "tests.test_calc.Calc.test_sub (i=3)"], "every test ran despite -f"
    assert (passed, skipped) == (1, 1)


def test_pytest_fail_fast_is_switched_off_by_the_shims_plugin() -> None:
    assert seen("pytest", "failfast")[1:3] == seen("pytest", "red")[1:3], "-x: every test still ran"


def test_node_tests_of_the_same_name_in_two_files_stay_apart() -> None:
    tap = (FIXTURES / "node" / "red-nested.out").read_text()
    twice = tap + "\n" + tap.replace("a.test.js", "c.test.js").replace("b.test.js", "d.test.js")
    observed = observe(twice, ABSENT)
    assert observed is not None and observed.failing is not None
    assert "a.test.js > breaks" in observed.failing and "c.test.js > breaks" in observed.failing
    assert observed.failed == 6


@pytest.mark.parametrize(("runner", "failing"), [
    ("jest", ["a.test.js > calc › breaks", "a.test.js > calc › nested › deep fail"]),
    ("vitest", ["a.test.js > calc > breaks", "a.test.js > calc > nested > deep fail"]),
    ("mocha", ["calc > breaks", "calc > nested > deep fail"]),
])
def test_without_the_gates_report_jest_vitest_and_mocha_are_read_from_their_output_by_count(
        runner: str, failing: list[str]) -> None:
    observed = observed_run(runner, "red", reports=False)
    assert observed.failing == failing
    assert observed.passing is None, "no passing test named: accounted by count"


@pytest.mark.parametrize("runner", ["jest", "vitest", "mocha"])
def test_the_gates_reporter_names_every_passing_test_of_jest_vitest_and_mocha_by_its_file(runner: str) -> None:
    file = "test/a.spec.js" if runner == "mocha" else "a.test.js"
    observed = observed_run(runner, "red")
    assert observed.passing is not None and f"{file} > calc > adds" in observed.passing
    assert not set(observed.passing) & set(observed.failing or []), "a test is passing or failing, not both"


@pytest.mark.parametrize(("runner", "skipped"), [
    ("jest", ["test/math.test.js > calc > later (todo)", "test/math.test.js > calc > needs a database (skipped)",
              "test/math.test.js > calc > off > inside (skipped)", "test/only.test.js > left out (skipped)"]),
    ("vitest", ["test/math.test.js > calc > later (todo)", "test/math.test.js > calc > needs a database (skipped)",
                "test/math.test.js > calc > off > inside (skipped)", "test/only.test.js > left out (skipped)"]),
    ("mocha", ["test/a.spec.js > calc > needs a database (skipped)",
               "test/a.spec.js > calc > pending without body (skipped)", "test/a.spec.js > off > inside (skipped)"]),
])
def test_skipped_todo_and_left_out_by_only_are_named_apart_through_npm_test(runner: str, skipped: list[str]) -> None:
    observed = observed_run(runner, "skips")
    assert sorted(observed.skipped) == skipped
    assert observed.passing is not None and observed.passing


def test_vitest_1s_empty_file_suite_title_is_no_part_of_the_id(tmp_path: Path) -> None:
    """vitest 1.x's json reporter puts the file's own suite, titled "", among the ancestors (seen on
    blakeembrey/change-case): the id is the same as vitest 4 gives."""
    (tmp_path / "js").mkdir()
    (tmp_path / "js" / "vitest-1.json").write_text(
        '{"testResults": [{"name": "/w/src/a.spec.ts", "status": "passed", "assertionResults": ['
        '{"ancestorTitles": ["", "swap case"], "title": "x", "status": "passed"}]}]}')
    reports = Reports(*(tmp_path / "absent",) * 4, tmp_path / "js")
    observed = observe(" RUN  v1.6.0 /w\n", reports, Path("/w"))
    assert observed is not None and observed.passing == ["src/a.spec.ts > swap case > x"]


def test_a_pytest_run_interrupted_at_the_gates_deadline_names_what_finished_and_no_phantom_pass() -> None:
    """pytest writes the test a Ctrl+C interrupted as a blank `<testcase/>`: not a pass, and no id."""
    observed = observed_run("pytest", "interrupted")
    assert (observed.passing, observed.passed, observed.failing) == (["tests.test_a::test_a"], 1, [])
