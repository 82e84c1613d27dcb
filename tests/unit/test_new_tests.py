"""Which of a task's tests the new-tests rule runs on the base's code, and what their run there means
(gate/spec/new_tests.py)."""

from __future__ import annotations

from orchestrator.facts import Acceptance, GateResult
from orchestrator.gate.spec import new_tests
from orchestrator.gate.spec.accounting import TreeDiff
from orchestrator.gate.verdict import Evidence, record

BASE_TEST = "def test_a():\n    assert f() == 1\n\n\ndef test_b():\n    assert f() == 1\n"


def run(passing: list[str] | None, failing: list[str], output: str = "") -> GateResult:
    return GateResult(passed=not failing, command="pytest", summary="ran", output=output, exit_code=0,
                      tests_passed=len(passing or []), tests_failed=len(failing), failing=failing, new_failures=[],
                      ran_classes=None, passing=passing)


def test_only_new_tests_and_changed_functions_are_candidates() -> None:
    text = BASE_TEST.replace("def test_b():\n    assert f() == 1", "def test_b():\n    assert f() == 2") \
        + "\n\ndef test_c():\n    assert g()\n"
    changed = {"tests/test_x.py": new_tests.changed_functions("tests/test_x.py", BASE_TEST, text)}
    assert changed["tests/test_x.py"] == {"test_b", "test_c"}
    ids = ["tests.test_x::test_a", "tests.test_x::test_b", "tests.test_x::test_c", "tests.test_y::test_d"]
    found = new_tests.candidates(ids, ["tests/test_x.py", "tests/test_y.py"], changed)
    assert found == ["tests.test_x::test_b", "tests.test_x::test_c"]
    moved = {"tests/test_z.py": new_tests.changed_functions("tests/test_z.py", BASE_TEST, BASE_TEST + "\n")}
    assert new_tests.candidates(["tests.test_z::test_a"], ["tests/test_z.py"], moved) == [], "moved unchanged"
    fresh = {"tests/test_z.py": new_tests.changed_functions("tests/test_z.py", None, BASE_TEST)}
    assert new_tests.candidates(["tests.test_z::test_a"], ["tests/test_z.py"], fresh) == ["tests.test_z::test_a"]


def test_go_tests_are_found_by_their_package_and_function() -> None:
    base = "package calc\n\nfunc TestA(t *testing.T) {\n\tcheck(t, 1)\n}\n"
    text = base + "\nfunc TestB(t *testing.T) {\n\tcheck(t, 2)\n}\n"
    changed = {"calc/more_test.go": new_tests.changed_functions("calc/more_test.go", base, text)}
    ids = ["example.com/m/calc.TestA", "example.com/m/calc.TestB/case_1", "example.com/m/other.TestC"]
    files = ["calc/a_test.go", "calc/more_test.go", "other/c_test.go"]
    assert new_tests.candidates(ids, files, changed) == ["example.com/m/calc.TestB/case_1"]



def test_a_new_go_test_file_adds_only_its_own_functions_of_the_package() -> None:
    """A new `main_test.go` with a TestMain beside the package's old tests: the old tests are not the task's."""
    text = "package calc\n\nfunc TestMain(m *testing.M) {\n\tsetUp()\n\tos.Exit(m.Run())\n}\n"
    changed = {"calc/main_test.go": new_tests.changed_functions("calc/main_test.go", None, text)}
    ids = ["example.com/m/calc.TestMul", "example.com/m/calc.TestZero"]
    assert new_tests.candidates(ids, ["calc/calc_test.go", "calc/main_test.go"], changed) == []
    more = {**changed, "calc/div_test.go": new_tests.changed_functions(
        "calc/div_test.go", None, "package calc\n\nfunc TestDiv(t *testing.T) {\n\tcheck(t, 2)\n}\n")}
    found = new_tests.candidates([*ids, "example.com/m/calc.TestDiv"], ["calc/calc_test.go", "calc/div_test.go"], more)
    assert found == ["example.com/m/calc.TestDiv"]

def test_js_tests_are_found_by_their_name() -> None:
    base = "test('div', () => {\n  assert.strictEqual(div(6, 3), 2);\n});\n"
    text = base.replace("6, 3), 2", "6, 3), 2.0") + "describe('zero', () => {\n  it(\"by zero\", () => {});\n});\n"
    assert new_tests.changed_functions("test/div.test.js", base, text) == {"div", "by zero"}
    assert new_tests.changed_functions("test/div.test.js", base, base + "// more\n") == {"div"}
    ids = ["test/div.test.js > div", "test/div.test.js > zero > by zero", "test/div.test.js > other"]
    changed = {"test/div.test.js": {"by zero"}}
    assert new_tests.candidates(ids, ["test/div.test.js"], changed) == ["test/div.test.js > zero > by zero"]


def test_code_files_and_touched_tests() -> None:
    diff = TreeDiff(added=frozenset({"calc/new.py", "tests/test_new.py", "tests/data/x.json"}),
                    modified=frozenset({"calc/div.py", "tests/test_div.py"}), deleted=frozenset({"calc/old.py"}),
                    renamed={"calc/a.py": ("calc/b.py", 90)})
    assert new_tests.code_files(diff) == ["calc/a.py", "calc/b.py", "calc/div.py", "calc/new.py", "calc/old.py"]
    assert new_tests.touched_tests(diff) == ["tests/test_div.py", "tests/test_new.py"]


def test_what_the_run_on_the_base_means_by_kind() -> None:
    tests = ["t::a", "t::b"]
    assert new_tests.verdict("fix", tests, run(["t::a"], ["t::b"])) is None, "one fails on the base: it can fail"
    assert new_tests.verdict("fix", tests, run(["t::a"], [])) is None, "one didn't run there (an import error)"
    found = new_tests.verdict("feature", tests, run(tests, []))
    assert found is not None and found.line.startswith("none of the 2 test(s) the feature added")
    assert new_tests.verdict("refactor", tests, run(tests, [])) is None
    broken = new_tests.verdict("refactor", tests, run(["t::a"], ["t::b"], "E       assert 3 == 2\n"))
    assert broken is not None and "t::b: assert 3 == 2" in broken.line
    assert new_tests.verdict("fix", tests, run(None, [])) is None, "a runner that names no test: nothing to judge"


def test_a_finding_refuses_unless_the_coach_accepted_it() -> None:
    finding = new_tests.Finding("none of them fails", "add a failing test")
    refused = record(Evidence(run=run(["t::a"], []), new_tests=finding,
                              accepted=(Acceptance(test="t::a", reason="other"),)))
    assert not refused["passed"] and refused["summary"].endswith("; none of them fails")
    assert refused["output"].startswith("add a failing test")
    accepted = record(Evidence(run=run(["t::a"], []), new_tests=finding,
                               accepted=(Acceptance(test="new-tests-on-base", reason="perf"),)))
    assert accepted["passed"] and accepted.get("unverified") == ["none of them fails (accepted by the coach: perf)"]


def test_a_feature_or_fix_that_changed_nothing_is_a_finding_unless_it_is_another_kind() -> None:
    found = new_tests.unchanged("fix", ["tests/test_div.py"])
    assert found is not None and found.line == ("the fix changed none of the product's code and added no test that"
                                                " passes (it touched only tests/test_div.py)")
    assert "new-tests-on-base" in found.explanation
    assert new_tests.unchanged("feature", []) is not None
    assert new_tests.unchanged("refactor", []) is None and new_tests.unchanged("docs", []) is None
