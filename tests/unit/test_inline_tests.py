"""Tests inside Rust code files (gate/spec/inline_tests.py): a changed `#[cfg(test)]` body or helper and a changed
doctest example are test changes; a moved line, a comment, a brace in a string, an added test or a non-Rust block are
not; cargo's overlay is restricted to the overlaid targets."""

from __future__ import annotations

from typing import Any

from benchmarks.native_cheats import LIB
from orchestrator.gate.spec.inline_tests import changed
from orchestrator.gate.spec.overlay import _restriction


def names(base: str, text: str, path: str = "src/lib.rs") -> list[str]:
    return [found.test for found in changed(path, base, text)]


def test_a_changed_unit_test_body_or_its_modules_helper_is_a_change() -> None:
    assert names(LIB, LIB.replace("(3, 4), 12)", "(3, 4), 13)")) == ["src/lib.rs::tests::unit_mul"]
    helper = LIB.replace("    use super::*;\n", "    use super::*;\n    const WANT: i32 = 12;\n")
    assert names(helper, helper.replace("WANT: i32 = 12", "WANT: i32 = 13")) == ["src/lib.rs::tests::unit_mul"]
    assert names(LIB, LIB, "src/calc/mod.rs") == []
    assert names(LIB, LIB.replace("(3, 4), 12)", "(3, 4), 13)"), "src/calc/mod.rs") == \
        ["src/lib.rs::calc::tests::unit_mul"]


def test_a_changed_doctest_example_is_a_change_but_prose_and_other_blocks_are_not() -> None:
    assert names(LIB, LIB.replace("(4, 5), 20)", "(4, 5), 21)")) == ["src/lib.rs - mul"]
    assert names(LIB, LIB.replace("/// Multiplies.", "/// Multiplies two numbers.")) == []
    text = LIB.replace("/// ```\n/// assert", "/// ```text\n/// assert")
    assert names(text, text.replace("20)", "21)")) == []


def test_what_is_not_a_change_to_a_test() -> None:
    moved = "// a new first line\n" + LIB.replace("    a * b\n", "    // why\n    a * b\n")
    assert names(LIB, moved) == []
    braces = LIB.replace("assert_eq!(mul(3, 4), 12);", "assert_eq!(mul(3, 4), 12, \"}}{\");")
    assert names(braces, braces.replace("    #[test]\n    fn unit_mul", "    #[test]\n    fn unit_new() {}\n\n"
                                        "    #[test]\n    fn unit_mul")) == []
    assert names("fn f() {}\n", "fn g() {}\n", "src/x.py") == []


def test_cargos_overlay_runs_only_the_overlaid_targets() -> None:
    assert _restriction(["tests/mul.rs", "tests/big/main.rs"], []) == \
        {"AUTOBUILD_CARGO_TEST_ARGS": "--test big --test mul"}
    assert _restriction(["tests/mul.rs", "tests/common/mod.rs"], []) == {}, "a shared module: every target"


def test_a_go_test_gone_from_one_of_its_packages_files_is_named_by_the_file_the_task_changed() -> None:
    """hashicorp/golang-lru: TestLRU renamed out of lru_test.go; the package's first test file is 2q_test.go."""
    from orchestrator.gate.spec.accounting import TreeDiff, account  # noqa: PLC0415 - beside the Rust tests, one use

    base: Any = {"command": "go test", "exit_code": 0, "passing": ["example.com/m.TestLRU", "example.com/m.Test2Q"],
                 "failing": [], "runner": "go test"}
    run: Any = {**base, "passing": ["example.com/m.Test2Q"]}
    diff = TreeDiff(modified=frozenset({"lru_test.go"}), names={"lru_test.go": "func testLRUOff(t *testing.T) {}"})
    [change] = account(base, run, diff, ["2q_test.go", "lru_test.go", "lru.go"])
    assert (change["test"], change["detail"]) == ("example.com/m.TestLRU", "deleted from lru_test.go")
