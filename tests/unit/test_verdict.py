"""The gate's verdict as one pure function (issue 38): every case built by hand as the evidence a gate run
gathers, no repository, no run, and `decide` says what passes."""

from __future__ import annotations

from dataclasses import replace

from orchestrator import facts
from orchestrator.facts import Acceptance, Observation
from orchestrator.gate.spec import new_tests
from orchestrator.gate.verdict import VERDICT_RULES, Accounted, Evidence, HiddenRun, alone, decide, record


def run(exit_code: int | None, failing: list[str] | None, *, passed: int | None = 3, failed: int | None = None,
        passing: list[str] | None = None, command: str = "python -m pytest",
        runner: str | None = "pytest") -> Observation:
    count = failed if failed is not None else (len(failing) if failing is not None else None)
    return Observation(command=command, summary=f"exit {exit_code}", output="the run's output", exit_code=exit_code,
                       tests_passed=passed, tests_failed=count, failing=failing, new_failures=[], ran_classes=None,
                       runner=runner, passing=passing)


GREEN = run(0, [], passing=["t::a", "t::b", "t::c"])
RED_BASE = run(1, ["t::old"])


def test_a_green_run_passes_on_its_own_and_against_a_green_base() -> None:
    assert decide(Evidence(run=GREEN)).passed
    verdict = decide(Evidence(run=GREEN, base=GREEN))
    assert verdict.passed and verdict.new_failures == () and verdict.rules == VERDICT_RULES
    assert verdict.test_changes is None and verdict.unverified is None, "not accounted: nothing to carry"


def test_a_new_failure_fails_and_only_base_failures_pass() -> None:
    broken = decide(Evidence(run=run(1, ["t::old", "t::new"]), base=RED_BASE))
    assert not broken.passed and broken.new_failures == ("t::new",)
    assert "failing and not on the base: t::new" in broken.summary
    same = decide(Evidence(run=run(1, ["t::old"]), base=RED_BASE))
    assert same.passed and "only tests already failing on the base fail" in same.summary
    assert not decide(Evidence(run=run(1, ["t::new"]), base=GREEN)).passed, "a green base judges by exit status"


def test_a_run_of_no_test_passes_nothing() -> None:
    empty = run(0, [], passed=0, command="go test ./...", runner="go test")
    assert not decide(Evidence(run=empty)).passed
    assert not decide(Evidence(run=empty, base=empty)).passed, "a young repo's task must add a test the gate runs"
    assert not alone(empty)["passed"]


def test_judged_by_counts_without_ids() -> None:
    base = run(101, None, failed=1, command="cargo test", runner="cargo test")
    same = decide(Evidence(run=run(101, None, failed=1, command="cargo test"), base=base))
    assert same.passed and same.judged_by == "counts"
    assert not decide(Evidence(run=run(101, None, failed=2, command="cargo test"), base=base)).passed


def test_a_flaky_failure_counts_only_when_it_fails_again() -> None:
    first = run(1, ["t::a"])
    passed_again = decide(Evidence(run=first, base=GREEN, again=GREEN))
    assert passed_again.passed and "(flaky): t::a" in passed_again.summary
    assert not decide(Evidence(run=first, base=GREEN, again=first)).passed
    never_again = Evidence(run=GREEN, base=GREEN, again=first)
    assert decide(never_again).passed and record(never_again)["failing"] == [], "a pass is never run again"


GONE = facts.TestChange(test="tests.test_x::test_b", fate="gone", detail="deleted from tests/test_x.py",
                  file="tests/test_x.py", accepted=None)


def test_an_unaccepted_base_test_change_refuses_and_an_accepted_one_passes() -> None:
    accounted = Accounted((GONE,), test_files_changed=("tests/test_x.py",))
    refused = decide(Evidence(run=GREEN, base=GREEN, accounted=accounted))
    assert not refused.passed and "the coach did not accept it" in refused.summary
    assert "tests.test_x::test_b: gone" in refused.output
    accepted = (Acceptance(test="tests/test_x.py::test_b", reason="REQ-2 drops b"),)
    passes = decide(Evidence(run=GREEN, base=GREEN, accounted=accounted, accepted=accepted))
    assert passes.passed and passes.test_changes is not None
    assert [change["accepted"] for change in passes.test_changes] == ["REQ-2 drops b"]


def test_a_file_too_large_to_read_refuses_and_an_accepted_one_passes_unverified() -> None:
    large = facts.TestChange(test="calc/big.py", fate="too large to judge", file="calc/big.py", accepted=None,
                             detail="68,719,476,736 bytes, over the 4,000,000 the gate reads of a file")
    refused = decide(Evidence(run=GREEN, base=GREEN, accounted=Accounted((large,))))
    assert not refused.passed and "1 file(s) the task wrote are too large for the gate to read" in refused.summary
    assert "- calc/big.py: 68,719,476,736 bytes" in refused.output
    accepted = (Acceptance(test="calc/big.py", reason="REQ-3 ships the generated table"),)
    passes = decide(Evidence(run=GREEN, base=GREEN, accounted=Accounted((large,)), accepted=accepted))
    assert passes.passed and passes.unverified is not None
    assert any("REQ-3 ships the generated table" in line for line in passes.unverified)


def test_a_failing_base_test_is_judged_by_the_run_not_by_acceptance() -> None:
    failing = facts.TestChange(test="t::old", fate="failing", detail="fails", file=None, accepted=None)
    verdict = decide(Evidence(run=run(1, ["t::old"]), base=RED_BASE, accounted=Accounted((failing,))))
    assert verdict.passed, "already red on the base: the run's own verdict, no accounting refusal"


def test_unverified_entries_are_carried_and_the_record_keeps_the_observation() -> None:
    accounted = Accounted((), unverified=("a test the task added was only skipped: t::new",))
    evidence = Evidence(run=GREEN, base=GREEN, accounted=accounted)
    verdict = decide(evidence)
    assert verdict.passed and verdict.unverified == ("a test the task added was only skipped: t::new",)
    found = record(evidence, verdict)
    assert next(iter(found)) == "passed" and found["passed"] and found["rules"] == VERDICT_RULES
    assert found["unverified"] == list(verdict.unverified) and found["test_changes"] == []
    assert "passing" not in found, "accounted: the passing ids stay in the cache and the base's run"
    assert "passed" not in GREEN, "the observation is not written"


def test_a_hidden_test_failing_or_not_in_place_refuses() -> None:
    paths = ("tests/acceptance/test_secret.py",)
    secret = "tests.acceptance.test_secret::test_f"
    hidden_red = run(1, [secret], passing=[])
    failed = decide(Evidence(run=GREEN, base=GREEN, hidden=HiddenRun(paths, run=hidden_red)))
    assert not failed.passed and secret in failed.new_failures
    assert "1 hidden acceptance test(s) failing" in failed.summary
    hidden_green = run(0, [], passing=[secret])
    assert decide(Evidence(run=GREEN, base=GREEN, hidden=HiddenRun(paths, run=hidden_green))).passed
    refused = decide(Evidence(run=GREEN, base=GREEN, hidden=HiddenRun(paths, refused="a link leads out")))
    assert not refused.passed and "could not be put in place: a link leads out" in refused.summary


def test_tampering_in_the_hidden_tests_run_or_the_clean_room_refuses_named_by_its_run() -> None:
    paths = ("tests/acceptance/test_secret.py",)
    secret = "tests.acceptance.test_secret::test_f"
    lied = run(0, [], passing=[secret]) | {"tampering": ["pytest end: a session on the gate's channel never ended"]}
    hidden = decide(Evidence(run=GREEN, base=GREEN, hidden=HiddenRun(paths, run=lied)))
    assert not hidden.passed and hidden.tampering == (
        "the hidden acceptance tests' run: pytest end: a session on the gate's channel never ended",)
    assert "refused, tampering: the hidden acceptance tests' run: pytest end" in hidden.summary
    heard = GREEN | {"channel": ["pytest"]}
    clean = decide(Evidence(run=heard, base=heard, clean_room=GREEN | {"channel": []}))
    assert not clean.passed and clean.tampering[0].startswith("the clean room: lost ids: the base's run reported")
    excused = GREEN | {"tampering": ["pytest end: a session on the gate's channel never ended"]}
    assert decide(Evidence(run=GREEN, base=excused, hidden=HiddenRun(paths, run=lied))).passed, \
        "what the base's run of the same command also shows is how the project runs"


def test_a_clean_room_run_failing_refuses_as_the_task_run_would() -> None:
    evidence = Evidence(run=GREEN, base=GREEN, clean_room=run(1, ["t::needs_local_state"]))
    verdict = decide(evidence)
    assert not verdict.passed and "in the clean room" in verdict.summary
    assert decide(replace(evidence, clean_room=GREEN)).passed
    red_both = Evidence(run=run(1, ["t::old"]), base=RED_BASE, clean_room=run(1, ["t::old"]))
    assert decide(red_both).passed, "tests red on the base don't refuse in the clean room either"


def test_new_tests_that_cannot_fail_refuse_unless_accepted() -> None:
    finding = new_tests.Finding("none of the 2 test(s) the feature added fails on the base's code", "add one")
    refused = decide(Evidence(run=GREEN, base=GREEN, new_tests=finding))
    assert not refused.passed and refused.summary.endswith("fails on the base's code")
    accepted = decide(Evidence(run=GREEN, base=GREEN, new_tests=finding,
                               accepted=(Acceptance(test=new_tests.ACCEPTANCE, reason="a perf change"),)))
    assert accepted.passed and accepted.unverified and "a perf change" in accepted.unverified[0]


def test_a_monorepo_passes_when_every_package_does() -> None:
    package_red = record(Evidence(run=run(1, ["t::new"]), base=GREEN))
    assert not decide(Evidence(run=GREEN, packages=(alone(GREEN), package_red))).passed
    assert decide(Evidence(run=run(1, ["t::old"]), packages=(alone(GREEN),))).passed, "the packages decide"


def test_no_command_passes_unverified() -> None:
    nothing = Observation(command=None, summary="no verify command", output="", exit_code=None, tests_passed=None,
                          tests_failed=None, failing=None, new_failures=[], ran_classes=None)
    assert decide(Evidence(run=nothing)).passed


def test_a_failure_on_a_green_base_names_the_failing_tests_in_its_summary() -> None:
    # The run's summary line and AUTO-RUN.md show this summary: counts alone sent the user to `show`.
    one = decide(Evidence(run=run(1, ["t::two_by_three"]), base=GREEN))
    assert not one.passed and one.summary == "exit 1; failing: t::two_by_three"
    many = decide(Evidence(run=run(1, ["t::a", "t::b", "t::c", "t::d", "t::e"]), base=GREEN))
    assert many.summary.endswith("; failing: t::a, t::b, t::c and 2 more"), many.summary
    counted = decide(Evidence(run=run(1, None, failed=2), base=GREEN))
    assert counted.summary == "exit 1", "no ids named: nothing to add"


def test_a_finding_the_base_also_shows_is_excused_in_the_summary_and_the_record_too() -> None:
    """A run recorded on its own (run_gate's) is refused in its summary; judged against a base whose run of the same
    command shows the same finding (a summary the project's command hides), it passes and says nothing of it."""
    finding = "pytest summary: session 1 on the gate's channel (3 passed) has no end-of-session summary in the output"
    alone_run = alone(GREEN | {"tampering": [finding]})
    assert not alone_run["passed"] and "refused, tampering: pytest summary" in alone_run["summary"]
    base = alone(GREEN | {"tampering": [finding]})
    assert base["tampering"] == [finding], "the base's record keeps what excuses a task's"
    observed = Observation(**{key: value for key, value in alone_run.items() if key != "passed"})  # type: ignore[typeddict-item]
    verdict = decide(Evidence(run=observed, base=base))
    assert verdict.passed and verdict.summary == "exit 0" and verdict.tampering == ()
    recorded = record(Evidence(run=observed, base=base))
    assert recorded["passed"] and "tampering" not in recorded and "refused" not in recorded["summary"]
    other = alone(GREEN | {"tampering": ["pytest end: a session on the gate's channel never ended"]})
    still = decide(Evidence(run=Observation(**{k: v for k, v in other.items() if k != "passed"}),  # type: ignore[typeddict-item]
                            base=base))
    assert not still.passed and still.summary.count("refused, tampering") == 1, still.summary
