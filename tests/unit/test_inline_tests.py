"""Tests inside Rust code files (gate/spec/inline_tests.py): a changed `#[cfg(test)]` body or helper and a changed
doctest example are test changes; a moved line, a comment, a brace in a string, an added test or a non-Rust block are
not; cargo's overlay is restricted to the overlaid targets."""

from __future__ import annotations

from typing import Any

from benchmarks.native_cheats import LIB
from orchestrator.gate.spec.inline_tests import changed
from orchestrator.gate.spec.overlay import _restriction
from orchestrator.gate.spec.test_files import go_test_homes


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
    homes = go_test_homes({"2q_test.go": "func Test2Q(t *testing.T) {}",
                           "lru_test.go": "func TestLRU(t *testing.T) {}"})
    diff = TreeDiff(modified=frozenset({"lru_test.go"}), names={"lru_test.go": "func testLRUOff(t *testing.T) {}"},
                    inherited=homes)
    [change] = account(base, run, diff, ["2q_test.go", "lru_test.go", "lru.go"])
    assert (change["test"], change["detail"], change["file"]) == \
        ("example.com/m.TestLRU", "deleted from lru_test.go", "lru_test.go")


def test_a_go_test_is_named_by_the_file_that_defines_it_not_its_packages_first() -> None:
    """dustin/go-humanize: TestOrdinals is in ordinals_test.go, the package's first test file is bigbytes_test.go;
    a skip added there, or a change to the first file, names and accepts it by its own file."""
    from orchestrator.gate.spec.accounting import TreeDiff, account  # noqa: PLC0415 - beside the Rust tests, one use

    texts = {"bigbytes_test.go": "package humanize\n\nfunc TestBigByteParsing(t *testing.T) {}\n",
             "ordinals_test.go": "package humanize\n\nfunc TestOrdinals(t *testing.T) {\n}\n\n"
                                 "func ExampleOrdinal() {}\nfunc helperTest() {}\n",
             "sub/x_test.go": "func TestX(t *testing.T) {}\n"}
    homes = go_test_homes(texts)
    assert homes == {"bigbytes_test.go::TestOrdinals": "ordinals_test.go",
                     "bigbytes_test.go::ExampleOrdinal": "ordinals_test.go"}
    ordinals, parsing = "github.com/dustin/go-humanize.TestOrdinals", "github.com/dustin/go-humanize.TestBigByteParsing"
    base: Any = {"command": "go test", "exit_code": 0, "runner": "go test", "failing": [],
                 "passing": [ordinals, parsing]}
    run: Any = {**base, "passing": [parsing], "skipped_ids": [ordinals]}
    diff = TreeDiff(modified=frozenset({"ordinals_test.go"}), inherited=homes,
                    names={"ordinals_test.go": texts["ordinals_test.go"].replace("{\n", "{\n\tt.Skip()\n")})
    [change] = account(base, run, diff, [*texts, "bigbytes.go"])
    assert (change["fate"], change["file"]) == ("skipped", "ordinals_test.go")
    first_changed = TreeDiff(modified=frozenset({"bigbytes_test.go"}), inherited=homes,
                             names={"bigbytes_test.go": texts["bigbytes_test.go"]})
    [gone] = account(base, {**base, "passing": [parsing]}, first_changed, [*texts, "bigbytes.go"])
    assert (gone["file"], gone["detail"]) == (
        "ordinals_test.go", "no longer run; the task added or changed on the test side: bigbytes_test.go"), \
        "not 'deleted from' a file it never was in"
