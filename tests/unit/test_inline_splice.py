"""The base's version of a Rust code file with the task's test modules (gate/spec/inline_splice.py): which tests the
task added or changed there, the spliced text, and the cargo targets that run only them."""

from __future__ import annotations

from orchestrator.gate.spec import inline_splice

BASE = ("pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n"
        "    #[test]\n    fn adds() {\n        assert_eq!(add(1, 2), 3);\n    }\n}\n\npub fn after() {}\n")
TASK = (BASE.replace("a + b", "a.wrapping_add(b)")
        .replace("    }\n}\n\npub fn after", "    }\n\n    #[test]\n    fn wraps() {\n"
                 "        assert_eq!(add(i32::MAX, 1), i32::MIN);\n    }\n}\n\npub fn after"))


def test_the_tasks_test_module_replaces_the_bases_over_the_bases_code() -> None:
    found = inline_splice.spliced("src/lib.rs", BASE, TASK)
    assert found is not None
    assert found.tests == ("tests::wraps",)
    assert "a + b" in found.text and "wrapping_add" not in found.text, "the code is the base's"
    assert "fn wraps()" in found.text and found.text.count("mod tests") == 1
    assert "pub fn after() {}" in found.text
    assert not found.only_tests


def test_a_module_the_base_lacks_is_appended_and_a_test_only_change_is_seen() -> None:
    bare = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"
    found = inline_splice.spliced("src/calc/mod.rs", bare, BASE.removesuffix("\npub fn after() {}\n"))
    assert found is not None and found.tests == ("calc::tests::adds",)
    assert found.text.startswith(bare.rstrip("\n")) and "fn adds()" in found.text
    assert found.only_tests, "only a test module was added"
    assert not inline_splice.spliced("src/calc/mod.rs", bare, BASE).only_tests  # type: ignore[union-attr]
    assert inline_splice.spliced("src/lib.rs", BASE, BASE) is None, "no test added or changed"
    assert inline_splice.spliced("build.rs", bare, BASE) is None, "no crate target is rooted there"


def test_the_run_is_restricted_to_the_spliced_targets() -> None:
    found = inline_splice.spliced("src/lib.rs", BASE, TASK)
    assert found is not None
    ids = inline_splice.test_ids(["src/lib.rs::tests::adds", "src/lib.rs::tests::wraps", "tests/it.rs::wraps"],
                                 [found])
    assert ids == ["src/lib.rs::tests::wraps"]
    assert inline_splice.restriction([], ids, {}) == {"AUTOBUILD_CARGO_TEST_ARGS": "--lib"}
    assert inline_splice.restriction(["tests/it.rs"], ids, {}) == {"AUTOBUILD_CARGO_TEST_ARGS": "--test it --lib"}
    assert inline_splice.restriction(["tests/helpers/mod.rs"], ids, {}) == {}, "a helper: the whole command"
    assert inline_splice.restriction(["tests/it.rs"], [], {"X": "1"}) == {"X": "1"}
