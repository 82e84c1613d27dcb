"""A coach that accepts a Rust code file accepts the doctests in it (issue 31: "a file accepts every test in it"),
as it accepts its `#[cfg(test)]` tests: found replaying human_format 1.0.3 -> 1.2.1 (benchmarks/real_history), whose
release dropped one of the crate docs' two examples; the gate refused the release with src/lib.rs accepted."""

from __future__ import annotations

from orchestrator.facts import Acceptance, GateResult
from orchestrator.gate.observe.runners.native import cargo_test
from orchestrator.gate.spec.accounting import TreeDiff, accept, account, file_of

BASE_FILES = ["Cargo.toml", "src/lib.rs", "tests/demo.rs"]


def test_a_doctest_lives_in_the_code_file_its_id_names() -> None:
    assert file_of("doc-tests calc::src/lib.rs - #2", BASE_FILES) == "src/lib.rs"
    assert file_of("doc-tests calc::src/lib.rs - Formatter::parse", BASE_FILES) == "src/lib.rs"
    assert file_of("doc-tests calc::src/gone.rs - add", BASE_FILES) is None


def test_accepting_a_code_file_accepts_its_gone_doctest() -> None:
    base = _cargo_run(["doc-tests calc::src/lib.rs -", "doc-tests calc::src/lib.rs - #2"])
    run = _cargo_run(["doc-tests calc::src/lib.rs -"])
    changes = account(base, run, TreeDiff(modified=frozenset({"src/lib.rs"})), BASE_FILES)
    assert [change["test"] for change in changes] == ["doc-tests calc::src/lib.rs - #2"]
    accepted = accept(changes, [Acceptance(test="src/lib.rs", reason="the docs' second example is gone")])
    assert accepted[0]["accepted"] == "the docs' second example is gone"


def _cargo_run(passing: list[str]) -> GateResult:
    return GateResult(passed=True, command="cargo test", summary="", output="", exit_code=0,
                      tests_passed=len(passing), tests_failed=0, failing=[], new_failures=[], ran_classes=passing,
                      runner="cargo test", passing=passing)


def test_a_doctest_of_a_generated_file_is_named_the_same_in_every_worktree() -> None:
    """typenum 1.17 includes build-script output (`$OUT_DIR/consts.rs`) with doctests: rustdoc names them by the
    absolute path, which holds the worktree's own path, so the base's were all "gone" from any task's run."""
    def run_in(worktree: str) -> list[str]:
        output = (f"   Doc-tests typenum\n\nrunning 1 test\ntest {worktree}/target/debug/build/typenum-9c63968e/out/"
                  "consts.rs - generated::consts (line 12) ... ok\n\ntest result: ok. 1 passed; 0 failed\n")
        observed = cargo_test(output)
        assert observed is not None
        return list(observed.passing or [])

    base, task = run_in("/r/.autobuild/worktrees/FEAT-001/_baseline"), run_in("/r/.autobuild/worktrees/FEAT-001/TASK-1")
    assert base == task == ["doc-tests typenum::$OUT_DIR/consts.rs - generated::consts"]
