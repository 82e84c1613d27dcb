"""A data-driven test is its data file's (issue 31 item 2: expectation data are test files; "a file accepts every
test in it"): found replaying Python-Markdown 3.11 -> 3.11.1 (benchmarks/real_history). tests/test_legacy.py makes a
test of each input/output pair in tests/basic/ and tests/misc/ (`TestMisc.test_nested_patterns` of
nested-patterns.txt and .html); the release deleted four such pairs with the behaviour they pinned. The gate named
the four tests "gone: no longer run (its file and the runner's config are unchanged)", and the data files were no
test files, so no coach could accept them by file."""

from __future__ import annotations

from orchestrator.facts import Acceptance, GateResult
from orchestrator.gate.spec.accounting import TreeDiff, accept, account, fed_by, unaccepted
from orchestrator.gate.spec.test_files import is_test_file

BASE_FILES = ["markdown/core.py", "tests/test_legacy.py", "tests/misc/nested-patterns.txt",
              "tests/misc/nested-patterns.html", "tests/misc/underscores.txt", "tests/misc/underscores.html",
              "tests/misc/em_strong.txt", "tests/misc/em_strong.html"]
GONE = ["tests.test_legacy.TestMisc.test_nested_patterns", "tests.test_legacy.TestMisc.test_underscores"]
DELETED = frozenset(path for path in BASE_FILES if "nested-patterns" in path or "underscores" in path)


def test_a_file_in_the_tests_folder_is_a_test_file_and_feeds_the_test_named_after_it() -> None:
    assert is_test_file("tests/misc/nested-patterns.txt") and is_test_file("test/fixtures.json")
    assert not is_test_file("docs/nested-patterns.txt")
    assert fed_by("tests.test_legacy.TestMisc.test_nested_patterns", "tests/misc/nested-patterns.html")
    assert not fed_by("tests.test_legacy.TestMisc.test_em_strong", "tests/misc/nested-patterns.txt")
    assert not fed_by("tests.test_x.T.test_a_b", "tests/a.txt"), "a name too short to tell"
    # Accepting a generic or partly matching data file must not accept every test.
    assert not fed_by("tests.test_x::test_parse", "tests/test.json")
    assert not fed_by("tests.test_x::test_parse", "tests/data/tests.txt")
    assert not fed_by("tests.test_x::test_unparsed_dates", "tests/parse.txt")
    assert fed_by("tests.test_x::test_parse_dates", "tests/parse.txt")


def test_a_test_whose_data_file_was_deleted_is_named_so_and_accepted_with_it() -> None:
    base = _unittest_run([*GONE, "tests.test_legacy.TestMisc.test_em_strong"])
    run = _unittest_run(["tests.test_legacy.TestMisc.test_em_strong"])
    diff = TreeDiff(deleted=DELETED)
    changes = account(base, run, diff, BASE_FILES)
    assert [(change["test"], change["detail"]) for change in changes] == [
        ("tests.test_legacy.TestMisc.test_nested_patterns",
         "its data file deleted (tests/misc/nested-patterns.html, tests/misc/nested-patterns.txt)"),
        ("tests.test_legacy.TestMisc.test_underscores",
         "its data file deleted (tests/misc/underscores.html, tests/misc/underscores.txt)")]
    judged = accept(changes, [Acceptance(test="tests/misc/underscores.txt", reason="3.11.1 drops it")],
                    diff.test_files_changed)
    assert [change["test"] for change in unaccepted(judged)] == ["tests.test_legacy.TestMisc.test_nested_patterns"]
    # A data file the tree didn't change accepts nothing: an acceptance covers what the task changed.
    judged = accept(changes, [Acceptance(test="tests/misc/em_strong.txt", reason="unrelated")],
                    diff.test_files_changed)
    assert len(unaccepted(judged)) == 2


def _unittest_run(passing: list[str]) -> GateResult:
    return GateResult(passed=True, command="python -m unittest discover -s tests -t .", summary="", output="",
                      exit_code=0, tests_passed=len(passing), tests_failed=0, failing=[], new_failures=[],
                      ran_classes=passing, runner="unittest", passing=passing)


def test_a_changed_expectation_of_an_unchanged_test_file_is_accepted_with_every_changed_test_file() -> None:
    """avvio 9.2.0 -> 9.3.0 (npm): the release changed the helper test/esm.mjs and test/types/tsconfig.json, not
    test/esm.test.js; with the base's helper put back, esm.test.js fails on 9.3.0's code. Its expectation changed
    with the helper: a coach that accepts every changed test file accepts it, one that accepts part of them doesn't."""
    base = _unittest_run(["test/esm.test.js > support esm import"])
    changes = account(base, base, TreeDiff(modified=frozenset({"test/esm.mjs", "test/types/tsconfig.json"})),
                      ["test/esm.test.js", "test/esm.mjs", "test/types/tsconfig.json"],
                      expectations={"test/esm.test.js > support esm import": "Cannot find module boot.js"})
    assert [change["fate"] for change in changes] == ["changed expectation"]
    changed = ["test/esm.mjs", "test/types/tsconfig.json"]
    every = [Acceptance(test=path, reason="9.3.0 moved the entry point") for path in changed]
    assert unaccepted(accept(changes, every, changed)) == []
    assert len(unaccepted(accept(changes, every[:1], changed))) == 1
    assert len(unaccepted(accept(changes, [], changed))) == 1
