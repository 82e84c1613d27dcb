"""The gate's verdict: `decide`, one pure function over the evidence a gate run gathered, and the only writer of
`passed` (tests/unit/test_verdict_writer.py fails if any other module assigns it).

The gate service gathers the `Evidence` (plain data, no callables): the task's run and the base's, the flaky
re-run, the accounting of every base test (gate/spec/spec_check.py, the tamper and code screens' hits among it) with
the coach's acceptances, what the task's new tests showed on the base's code (gate/spec/new_tests.py), the hidden
tests' run, a monorepo's per-package verdicts, and a slot for the clean room's run. `decide` reads nothing else
and does no I/O; `record` puts its `Verdict` on the run it judged, as the GateResult that state, events and
`status --json` carry. A new kind of evidence is a new field of `Evidence` (default: absent) and a step of
`decide`; a change to what any step concludes bumps VERDICT_RULES, which is part of every gate cache key
(gate/cache.py): verdicts of older rules are never reused.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import cast

from orchestrator.facts import Acceptance, GateResult, Observation, TestChange
from orchestrator.gate.observe import crosscheck
from orchestrator.gate.observe.observed import BY_COUNTS, BY_EXIT, failing_named, green, ran_none, unusable
from orchestrator.gate.spec import accounting, code_screen, hidden, new_tests, oversized, shifted

VERDICT_RULES = "6"
"""The version of the rules below: bump it with any change to what `decide` concludes from the same evidence."""


@dataclass(frozen=True)
class Accounted:
    """What became of every base test on the judged tree (gate/spec/spec_check.py), before the coach's acceptances."""

    changes: tuple[TestChange, ...]
    """Base tests that don't pass here (the tamper screen's hits on base tests included)."""
    test_files_changed: tuple[str, ...] = ()
    """The test files the tree changed (an acceptance naming one covers what it feeds)."""
    unverified: tuple[str, ...] = ()
    """What the gate could not verify: new tests only skipped, or flagged by the tamper screen."""
    case_diff: str = ""
    """The parametrize / table diff of unaccepted tests whose ids are positions (gate/spec/shifted.py)."""
    reads: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Changed files the base's tests read (gate/observe/reads.py), each with those tests: accepting one accepts
    them."""


@dataclass(frozen=True)
class HiddenRun:
    """The hidden acceptance tests' run (already redacted), or why they could not be put in place."""

    paths: tuple[str, ...]
    run: Observation | None = None
    refused: str | None = None


@dataclass(frozen=True)
class Evidence:
    """Everything a gate verdict is decided on. Only `run` is required: a run alone is judged on its own (a base's
    run, a run with no base)."""

    run: Observation
    """The task's (or a merge's) run; a monorepo's: its packages' runs combined."""
    base: Observation | None = None
    """The base's run of the same command (None: judged on its own)."""
    again: Observation | None = None
    """The flaky re-run: the whole command run once more after new failures; only what fails both times counts."""
    accounted: Accounted | None = None
    """Every base test's fate on this tree (None: not accounted, no `against`)."""
    accepted: tuple[Acceptance, ...] = ()
    """The coach's acceptances of base-test changes."""
    hidden: HiddenRun | None = None
    packages: tuple[GateResult, ...] = ()
    """A monorepo's packages, each already decided against its own base run: all must pass."""
    clean_room: Observation | None = None
    """The same tree run in the clean room: judged against the base as `run` is, its new failures refuse too."""
    new_tests: new_tests.Finding | None = None
    """What the task's new tests showed on the base's code, when they break the rule (gate/spec/new_tests.py): refuses,
    unless the coach accepted it (then unverified)."""


@dataclass(frozen=True)
class Verdict:
    """What the gate concludes, apart from what the run showed."""

    passed: bool
    summary: str
    output: str
    new_failures: tuple[str, ...]
    failing: tuple[str, ...] | None
    tests_failed: int | None
    judged_by: str | None
    test_changes: tuple[TestChange, ...] | None
    """None: not accounted."""
    unverified: tuple[str, ...] | None
    tampering: tuple[str, ...] = ()
    """Accounts of the run that disagree (gate/observe/crosscheck.py): refused, named, never judged by counts then."""
    rules: str = VERDICT_RULES


def decide(evidence: Evidence) -> Verdict:
    """The verdict on the evidence: no command passes (nothing could check the work); a monorepo passes when every
    package does; else the run against the base's (the flaky re-run's when there is one), then every base test
    accounted for, the new tests on the base's code, the hidden tests, the clean room, in that order."""
    evidence = replace(evidence, run=_unrefused(evidence.run),
                       again=_unrefused(evidence.again) if evidence.again is not None else None)
    run = evidence.run
    tampering = _tampering(evidence)
    if run["command"] is None:
        judged = _with(run, True)
    elif evidence.packages:
        judged = _with(run, all(package["passed"] for package in evidence.packages))
    elif tampering:
        judged = _with(run, False)
        judged["summary"] = f"{run['summary']}{_REFUSED}{'; '.join(tampering[:3])}"
    else:
        judged = _flaky(evidence.run, evidence.again, evidence.base)
    if evidence.accounted is not None:
        judged = _accounted(judged, evidence.accounted, evidence.accepted)
    if evidence.new_tests is not None:
        judged = _new_tests(judged, evidence.new_tests, evidence.accepted)
    if evidence.hidden is not None:
        judged = _hidden(judged, evidence.hidden)
    if evidence.clean_room is not None:
        judged = _clean_room(judged, evidence.clean_room, evidence.base)
    changes, unverified = judged.get("test_changes"), judged.get("unverified")
    return Verdict(passed=judged["passed"], summary=judged["summary"], output=judged["output"],
                   new_failures=tuple(judged["new_failures"]),
                   failing=tuple(judged["failing"]) if judged["failing"] is not None else None,
                   tests_failed=judged["tests_failed"], judged_by=judged.get("judged_by"),
                   test_changes=tuple(changes) if changes is not None else None,
                   unverified=tuple(unverified) if unverified is not None else None, tampering=tuple(tampering))


def judged_run(evidence: Evidence) -> Observation:
    """The run the verdict is on: the flaky re-run when the first run called for one (a monorepo's: its combined
    run)."""
    if evidence.again is None or evidence.packages or evidence.run["command"] is None or not wants_again(evidence):
        return evidence.run
    return evidence.again


def record(evidence: Evidence, verdict: Verdict | None = None) -> GateResult:
    """The GateResult of the evidence: the judged run with the verdict (`decide`'s when not given) on it, `passed`
    first; the passing ids are left out once accounted (kept in the cache and the base's run only)."""
    verdict = verdict if verdict is not None else decide(evidence)
    found = _with(judged_run(evidence), verdict.passed)
    found["summary"], found["output"] = verdict.summary, verdict.output
    found["new_failures"], found["tests_failed"] = list(verdict.new_failures), verdict.tests_failed
    found["failing"] = list(verdict.failing) if verdict.failing is not None else None
    if verdict.judged_by is not None:
        found["judged_by"] = verdict.judged_by
    if verdict.test_changes is not None:
        found["test_changes"] = list(verdict.test_changes)
        found.pop("passing", None)
    if verdict.unverified is not None:
        found["unverified"] = list(verdict.unverified)
    if verdict.tampering:
        found["tampering"] = list(verdict.tampering)
    else:  # what the run's accounts disagreed on, the base's run shows too: how the project runs, not refused
        found.pop("tampering", None)
    found["rules"] = verdict.rules
    return found


def alone(run: Observation) -> GateResult:
    """A run judged on its own (a base's run, a run with no base): green, and for a recognised runner, a test run."""
    return record(Evidence(run=run))


def no_gate(reason: str) -> GateResult:
    """The record when nothing can check the work: passes, the outcome says unverified."""
    return alone(Observation(command=None, summary=reason, output="", exit_code=None, tests_passed=None,
                             tests_failed=None, failing=None, new_failures=[], ran_classes=None, tests_skipped=None,
                             skipped=None, runner=None, judged_by=BY_EXIT))


def wants_again(evidence: Evidence) -> bool:
    """The run fails with tests the base did not fail: the command is run once more before it counts (flaky)."""
    if _tampering(evidence):  # a run whose accounts disagree is refused as it is, never run again
        return False
    first = _against_base(evidence.run, evidence.base)
    return not first["passed"] and bool(_new(first, evidence.base))


def _tampering(evidence: Evidence) -> list[str]:
    """What disagreed in the run, the hidden tests' and the clean room's (a monorepo's packages: each judged on its
    own)."""
    if evidence.run["command"] is None or evidence.packages:
        return []
    hidden_run = evidence.hidden.run if evidence.hidden is not None else None
    return crosscheck.refusals(evidence.run, evidence.base) + crosscheck.other_runs(
        evidence.base, (("the hidden acceptance tests' run", hidden_run), ("the clean room", evidence.clean_room)))


_REFUSED = "; refused, tampering: "


def _unrefused(run: Observation) -> Observation:
    """The run as it was observed: a run recorded on its own (result.run_gate's, with no base to excuse what its
    accounts disagree on) says it was refused in its summary; judged against its base, that is decided again."""
    if _REFUSED not in run["summary"]:
        return run
    return cast(Observation, {**run, "summary": run["summary"].split(_REFUSED, 1)[0]})


def _with(run: Observation, passed: bool) -> GateResult:
    """A copy of the run with `passed` first (a record given as the run gets this one)."""
    judged = cast(GateResult, {"passed": passed, **run})  # every key of the run's, `passed` first
    judged["passed"] = passed
    return judged


def _new(run: GateResult, base: Observation | None) -> set[str]:
    """The failing tests the base did not have (all of them when the base was green or ran none)."""
    if run["new_failures"] or (base is not None and base["failing"] and not green(base)):
        return set(run["new_failures"])
    return set(run["failing"] or [])


def _flaky(first_run: Observation, again: Observation | None, base: Observation | None) -> GateResult:
    """The run against the base; after new failures, the re-run's instead: only what failed both times counts."""
    first = _against_base(first_run, base)
    if again is None or first["passed"] or not _new(first, base):
        return first
    second = _against_base(again, base)
    flaky = sorted(_new(first, base) - _new(second, base))
    if second["passed"] and flaky:
        second["summary"] = f"{second['summary']}; failed once, passed when run again (flaky): {', '.join(flaky[:5])}"
    return second


def _against_base(run: Observation, base: Observation | None) -> GateResult:
    """A run next to the base's run of the same command. Never by subtraction: tests already red on the base
    neither block it nor hide a new failure, compared by id; by count only where the user said so (a red base
    that names no failing test is refused before, unless --judge-by-counts); a run of no test passes nothing."""
    verdict = _with(run, green(run))
    if ran_none(run):
        verdict["passed"] = False
        return verdict
    if not verdict["passed"] and base is not None and green(base):
        verdict["summary"] = f"{run['summary']}{failing_named(run)}"  # on a red base: named below, if new
    if verdict["passed"] or base is None or green(base) or ran_none(base) or base["command"] != run["command"]:
        return verdict
    if unusable(run) or run["exit_code"] is None:
        return verdict
    if run["failing"] is not None and base["failing"] is not None:
        new = sorted(set(run["failing"]) - set(base["failing"]))
        if new:
            verdict["new_failures"] = new
            verdict["summary"] = f"{run['summary']}; failing and not on the base: {', '.join(new[:5])}"
        else:
            verdict["passed"] = True
            verdict["summary"] = f"{run['summary']}; only tests already failing on the base fail"
        return verdict
    # No ids: the same exit status and no more failures than the base had.
    if run["tests_failed"] is None or base["tests_failed"] is None:
        return verdict
    verdict["judged_by"] = BY_COUNTS
    if run["exit_code"] == base["exit_code"] and run["tests_failed"] <= base["tests_failed"]:
        verdict["passed"] = True
        verdict["summary"] = (f"{run['summary']}; judged by counts (--judge-by-counts): no more failures than"
                              f" the base's {base['tests_failed']}")
    return verdict


def _accounted(run: GateResult, found: Accounted, accepted: tuple[Acceptance, ...]) -> GateResult:
    """The run with its accounting: failed, naming them, when a base test's change is not accepted (a failing
    base test is the run's own failure, judged against the base)."""
    judged = accounting.accept(found.changes, accepted, found.test_files_changed,
                               {path: frozenset(tests) for path, tests in found.reads})
    changes = [change for change in judged
               if change["fate"] not in (code_screen.FATE, accounting.NEW_CANT_FAIL, oversized.FATE)]
    verdict = run.copy()
    verdict["test_changes"] = changes
    open_changes = [change for change in accounting.unaccepted(changes) if change["fate"] != "failing"]
    if open_changes:
        verdict["passed"] = False
        named = "; ".join(accounting.describe(change) for change in open_changes[:5])
        more = f" (and {len(open_changes) - 5} more)" if len(open_changes) > 5 else ""
        verdict["summary"] = (f"{run['summary']}; {len(open_changes)} test(s) that passed on the base don't pass here"
                              f" and the coach did not accept it: {named}{more}")
        listing = "\n".join(f"- {accounting.describe(change)}" for change in open_changes[:50])
        cases = f"\n\n{shifted.NOTE}\n```diff\n{found.case_diff}```" if found.case_diff else ""
        verdict["output"] = (f"Tests that passed on the base and don't pass here (each must pass again, or the"
                             f" coach must accept the change in test_changes_accepted, naming the requirement"
                             f" it serves):\n{listing}{cases}\n\n{run['output']}")
    verdict["unverified"] = list(found.unverified)
    verdict = _code_screened(verdict, [change for change in judged if change["fate"] == code_screen.FATE])
    verdict = _code_screened(verdict, [change for change in judged if change["fate"] == accounting.NEW_CANT_FAIL],
                             _NEW_CANT_FAIL)
    return _code_screened(verdict, [change for change in judged if change["fate"] == oversized.FATE], _TOO_LARGE)


_CODE_SCREENED = ("place(s) in the code the task wrote know they are tested",
                  "Code the task wrote that behaves differently under a test runner, touches the runner or its"
                  " output, or answers a comparison without reading it (remove it")
_TOO_LARGE = ("file(s) the task wrote are too large for the gate to read",
              "Files the task added or changed that the gate reads (tests, code, manifests) and that are too large to"
              " read, so nothing in them was screened (make each smaller: generate it when the tests run, or split it")
_NEW_CANT_FAIL = ("test(s) the task added can't fail",
                  "Tests the task added that can't fail: skipped, marked to fail, or with assertions that hold"
                  " whatever the code does (make each able to fail")


def _code_screened(verdict: GateResult, hits: list[TestChange],
                   words: tuple[str, str] = _CODE_SCREENED) -> GateResult:
    """The verdict with the code screen's hits (gate/spec/code_screen.py), or the tests the task added that can't fail,
    among its test changes: refused naming each one the coach did not accept; an accepted one leaves the approval
    unverified."""
    if not hits:
        return verdict
    verdict = verdict.copy()
    verdict["test_changes"] = [*(verdict.get("test_changes") or []), *hits]
    verdict["unverified"] = [*(verdict.get("unverified") or []),
                             *(accounting.describe(change) for change in hits if change["accepted"])]
    open_hits = [change for change in hits if change["accepted"] is None]
    if open_hits:
        verdict["passed"] = False
        named = "; ".join(f"{change['test']}: {change['detail']}" for change in open_hits[:5])
        more = f" (and {len(open_hits) - 5} more)" if len(open_hits) > 5 else ""
        verdict["summary"] = (f"{verdict['summary']}; {len(open_hits)} {words[0]}, and the coach did not accept it:"
                              f" {named}{more}")
        listing = "\n".join(f"- {change['test']}: {change['detail']}" for change in open_hits[:50])
        verdict["output"] = (f"{words[1]}, or the coach must accept its file in test_changes_accepted, naming the"
                             f" requirement it serves; the approval is then unverified):\n{listing}\n\n"
                             f"{verdict['output']}")
    return verdict


def _hidden(result: GateResult, found: HiddenRun) -> GateResult:
    """The verdict with the hidden tests folded in: any hidden test failing (or not put in place) fails it."""
    paths = list(found.paths)
    if found.refused is not None or found.run is None:
        failed = result.copy()
        failed["passed"] = False
        failed["failing"] = list(dict.fromkeys([*(result["failing"] or []), *paths]))
        failed["new_failures"] = list(dict.fromkeys([*result["new_failures"], *paths]))
        failed["summary"] = f"the hidden acceptance tests could not be put in place: {found.refused or 'no run'}"
        return failed
    failing = hidden.failing_hidden(found.run, paths)
    if not failing:
        return result
    merged = result.copy()
    merged["passed"] = False
    merged["failing"] = list(dict.fromkeys([*(result["failing"] or []), *failing]))
    merged["new_failures"] = list(dict.fromkeys([*result["new_failures"], *failing]))
    merged["tests_failed"] = (result["tests_failed"] or 0) + len(failing)
    did_not_run = " (did not run: see the output)" if set(failing) <= set(paths) else ""
    merged["summary"] = (f"{len(failing)} hidden acceptance test(s) failing: {', '.join(failing[:5])}{did_not_run}"
                         + (f"; {result['summary']}" if result["summary"] else ""))
    merged["output"] = f"{result['output']}\n--- the hidden acceptance tests' run ---\n{found.run['output']}"
    return merged


def _new_tests(result: GateResult, finding: new_tests.Finding, accepted: tuple[Acceptance, ...]) -> GateResult:
    """The verdict with the new-tests rule's finding: refused, unless the coach accepted it (then unverified)."""
    verdict = result.copy()
    reason = next((entry["reason"] or "accepted by the coach" for entry in accepted
                   if str(entry.get("test") or "").strip() == new_tests.ACCEPTANCE), None)
    if reason is not None:
        verdict["unverified"] = [*(result.get("unverified") or []), f"{finding.line} (accepted by the coach: {reason})"]
        return verdict
    verdict["passed"] = False
    verdict["summary"] = f"{result['summary']}; {finding.line}"
    verdict["output"] = f"{finding.explanation}\n\n{result['output']}"
    return verdict


def _clean_room(result: GateResult, run: Observation, base: Observation | None) -> GateResult:
    """The verdict with the clean room's run judged as the task's is: failing there fails it, named."""
    there = _against_base(run, base)
    if there["passed"]:
        return result
    failed = result.copy()
    failed["passed"] = False
    failed["new_failures"] = list(dict.fromkeys([*result["new_failures"], *there["new_failures"]]))
    failed["summary"] = f"{result['summary']}; in the clean room: {there['summary']}"
    return failed
