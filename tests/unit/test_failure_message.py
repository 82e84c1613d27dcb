"""A changed expectation (and a new test that fails on the base's code) quotes the failing test's own failure, as
its runner reported it, on real runners' output (tests/fixtures/gate/): not the first assertion-looking line of a
source listing (pytest lists the lines that passed before the one that failed), nor another test's report."""

from __future__ import annotations

from pathlib import Path

from orchestrator.gate.observe.failure_message import failure_message

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gate"


def output(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_pytest_quotes_the_failing_statement_and_its_e_line_not_the_first_assert_listed() -> None:
    # A base test put back over the task's code (captured through the gate's overlay): two asserts pass first.
    message = failure_message(output("pytest/changed-expectation.out"), "tests.test_add::test_add")
    assert message == "assert add(2, 3) == 5: assert 7 == 5"


def test_each_failing_test_gets_its_own_report() -> None:
    red = output("pytest/red.out")
    assert failure_message(red, "tests.test_red::test_red") == "assert 1 + 1 == 3: assert (1 + 1) == 3"
    assert failure_message(red, "tests.test_red::TestSuite::test_method") == "assert False"
    # vitest lists every test before the failures: the second failure's name appears first in that tree.
    vitest = output("vitest/red.out")
    assert failure_message(vitest, "a.test.js > calc > breaks") == (
        "AssertionError: expected 2 to be 3 // Object.is equality")
    assert failure_message(vitest, "a.test.js > calc > nested > deep fail") == (
        "AssertionError: expected true to be false // Object.is equality")
    jest = output("jest/red.out")
    assert failure_message(jest, "a.test.js > calc > breaks") == (
        "test('breaks', () => expect(1 + 1).toBe(3));: Expected: 3; Received: 2")
    assert failure_message(jest, "a.test.js > calc > nested > deep fail").endswith("Expected: false; Received: true")


def test_go_quotes_file_and_line() -> None:
    go = output("go/red.out")
    assert failure_message(go, "example.com/m/calc.TestBad") == "calc_test.go:6: red"
    assert failure_message(go, "example.com/m/calc.TestSub/two") == "calc_test.go:10: sub red"


def test_an_output_with_nothing_to_quote() -> None:
    assert failure_message("1 failed\n", "t::x") == "it fails"
