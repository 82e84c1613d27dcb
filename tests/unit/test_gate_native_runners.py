"""The gate's readers of ctest and cargo, on outputs captured from the real tools (tests/fixtures/gate/, re-captured
by tests/fixtures/gate/capture.sh ctest cargo): ctest's JUnit and its console alone (`make test` in a build
folder), cargo's passing ids with doctests named without their line."""

from __future__ import annotations

from pathlib import Path

from orchestrator.gate.observe.instrument import Reports
from orchestrator.gate.observe.result import observe

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gate"
ABSENT = FIXTURES / "absent"


def read(runner: str, case: str, ctest_reports: Path | None = None) -> tuple[str, list[str] | None, list[str] | None,
                                                                         list[str]]:
    """(runner, failing, passing, skipped entries) as the gate reads a captured run."""
    observed = observe((FIXTURES / runner / f"{case}.out").read_text(), Reports(*(ABSENT,) * 5, ctest_reports))
    assert observed is not None, f"{runner}/{case}: no runner recognised"
    return observed.runner, observed.failing, observed.passing, observed.skipped


def test_ctest_names_its_tests_from_its_junit_report() -> None:
    assert read("ctest", "red", FIXTURES / "ctest" / "red-junit") == (
        "ctest", ["mul"], ["zero"], ["needs_db (SKIP_RETURN_CODE=77)", "later (disabled)"])
    assert read("ctest", "green", FIXTURES / "ctest" / "green-junit")[1:3] == ([], ["mul", "zero"])


def test_ctest_names_its_tests_from_its_console_when_no_report_was_written() -> None:
    """`make test` in a CMake build folder runs ctest by its full path: not the gate's ctest, no report."""
    for case in ("red", "red-make-test"):
        assert read("ctest", case) == ("ctest", ["mul"], ["zero"], ["needs_db (skipped)", "later (not run (disabled))"])
    assert read("ctest", "green")[1:3] == ([], ["mul", "zero"])


def test_a_ctest_run_of_no_test_is_seen_as_one() -> None:
    observed = observe((FIXTURES / "ctest" / "none.out").read_text(), Reports(*(ABSENT,) * 5))
    assert observed is not None and observed.runner == "ctest" and observed.total == 0


def test_cargo_names_every_passing_test_by_target_and_doctests_without_their_line() -> None:
    runner, failing, passing, skipped = read("cargo", "red-no-fail-fast")
    assert (runner, failing) == ("cargo test", ["tests/first.rs::first_red"])
    assert passing == ["doc-tests calc::src/lib.rs - add", "src/lib.rs::tests::unit_ok", "tests/first.rs::first_ok",
                       "tests/second.rs::second_ok"]
    assert skipped == ["src/lib.rs::tests::unit_db (needs a database)"]


def test_doctests_sharing_a_name_without_their_line_are_numbered_in_line_order() -> None:
    """A crate's own docs (no item) hold several doctests: one dropped or broken must not hide behind another."""
    _, failing, passing, _ = read("cargo", "doctests-shared-name")
    assert failing == ["doc-tests calc::src/lib.rs - #3"]
    assert passing == ["doc-tests calc::src/lib.rs -", "doc-tests calc::src/lib.rs - #2",
                       "doc-tests calc::src/lib.rs - add"]


def test_a_go_package_without_test_files_printed_amid_anothers_tests_takes_none_of_them() -> None:
    """hashicorp/golang-lru: `go test -v ./...` streams the first package's tests and prints "? internal [no test
    files]" when it knows, sometimes before that package's "ok" line: the tests are still the first package's."""
    output = ("=== RUN   Test2Q\n--- PASS: Test2Q (0.00s)\n"
              "?   \tgithub.com/hashicorp/golang-lru/v2/internal\t[no test files]\n"
              "=== RUN   TestLRU\n--- PASS: TestLRU (0.00s)\nPASS\nok  \tgithub.com/hashicorp/golang-lru/v2\t0.3s\n")
    observed = observe(output, Reports(*(ABSENT,) * 5))
    assert observed is not None and observed.passing == ["github.com/hashicorp/golang-lru/v2.Test2Q",
                                                         "github.com/hashicorp/golang-lru/v2.TestLRU"]


def test_a_go_package_line_with_coverage_closes_its_tests() -> None:
    """hashicorp/golang-lru's CI runs `go test -v ./... -coverprofile=coverage.out`: "ok ... coverage: 93.4% of
    statements" closed no package, and every test went to the next "[no test files]" package, or to none."""
    output = ("=== RUN   TestLRU\n--- PASS: TestLRU (0.00s)\nPASS\n"
              "ok  \tgithub.com/hashicorp/golang-lru/v2\t0.3s\tcoverage: 93.4% of statements\n"
              "?   \tgithub.com/hashicorp/golang-lru/v2/internal\t[no test files]\n"
              "--- FAIL: TestX (0.00s)\nFAIL\n"
              "FAIL\tgithub.com/hashicorp/golang-lru/v2/x\t0.1s\tcoverage: [no statements]\n")
    observed = observe(output, Reports(*(ABSENT,) * 5))
    assert observed is not None and observed.passing == ["github.com/hashicorp/golang-lru/v2.TestLRU"]
    assert observed.failing == ["github.com/hashicorp/golang-lru/v2/x.TestX"]
