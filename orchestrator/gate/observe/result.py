"""Runs of the gate command and what they observed: the command run once with the runners instrumented
(gate/observe/instrument.py), then what each runner reported (gate/observe/runners/) gathered into a GateResult: passed,
failing and skipped tests by id where the runner names them, by count where it only counts, by exit status
when no test runner is recognised. Each run's record is its observation judged on its own (gate/verdict.py:
green, and for a recognised runner, a test run); the gate service judges it against the base."""

from __future__ import annotations

import asyncio
import dataclasses
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from orchestrator.errors import InfrastructureError
from orchestrator.facts import GateResult, Observation
from orchestrator.gate.observe import crosscheck, tracked
from orchestrator.gate.observe.channel import Channel, Received
from orchestrator.gate.observe.excerpt import failure_excerpts
from orchestrator.gate.observe.instrument import DEADLINE, STOPPED, Reports, instrument
from orchestrator.gate.observe.observed import BY_COUNTS, BY_EXIT, BY_IDS, TAIL_MARK
from orchestrator.gate.observe.reads import pytest_reads
from orchestrator.gate.observe.runners import Observed, combine
from orchestrator.gate.observe.runners.channel_reports import channel_observed
from orchestrator.gate.observe.runners.ctest import ctest_junit, ctest_output
from orchestrator.gate.observe.runners.js import jest, mocha, vitest
from orchestrator.gate.observe.runners.js_report import js_reports
from orchestrator.gate.observe.runners.junit import node_junit, pytest_junit
from orchestrator.gate.observe.runners.native import cargo_test, go_test
from orchestrator.gate.observe.runners.node import node_report, node_tap
from orchestrator.gate.observe.runners.python import pytest_summary, unittest_report, unittest_summary
from orchestrator.gate.spec.no_baseline import load_errors
from orchestrator.gate.verdict import alone
from orchestrator.processes import Completed, run_shell
from orchestrator.sandbox import Sandbox
from orchestrator.text import without_secrets

KILLED_TRIES = 3
"""Runs of the gate killed by a signal (not our timeout) before one counts as the machine's failure."""


def killed_by(completed: Completed) -> int | None:
    """The signal that killed a run (not our own timeout): the shell's child (exit 128+N) or the shell itself."""
    if completed.timed_out:
        return None
    if completed.returncode < 0:
        return -completed.returncode
    if completed.returncode in (128 + 9, 128 + 15):  # SIGKILL, SIGTERM through bash (a crash of the code is a verdict)
        return completed.returncode - 128
    return None


def _clear(reports: Reports) -> None:
    for path in (reports.pytest_junit, reports.node_junit, reports.unittest, reports.node):
        path.unlink(missing_ok=True)
    for path in reports.js.glob("*.json") if reports.js.is_dir() else ():
        path.unlink(missing_ok=True)
    for report in reports.ctest.glob("*.xml") if reports.ctest is not None else ():
        report.unlink(missing_ok=True)
    for report in reports.reads.glob("*.json") if reports.reads is not None and reports.reads.is_dir() else ():
        report.unlink(missing_ok=True)


def failing_on(base: Observation | None) -> list[str]:
    """The tests already failing on the base's run (none without one)."""
    return (base["failing"] or []) if base else []


def observe(output: str, reports: Reports, cwd: Path | None = None,
            heard: dict[str, Observed] | None = None) -> Observed | None:
    """Every runner's account of one run in `cwd`: what the gate's channel `heard` first, else a report the
    runner wrote, else its own output lines."""
    heard = heard or {}
    reported = {one.runner: one for one in js_reports(reports.js, cwd or Path.cwd())}
    found = [
        heard.get("pytest") or pytest_junit(reports.pytest_junit) or pytest_summary(output),
        heard.get("unittest") or unittest_report(reports.unittest) or unittest_summary(output),
        heard.get("node --test") or node_report(reports.node) or node_tap(output) or node_junit(reports.node_junit),
        heard.get("jest") or reported.get("jest") or jest(output),
        heard.get("vitest") or reported.get("vitest") or vitest(output),
        heard.get("mocha") or reported.get("mocha") or mocha(output), heard.get("go test") or go_test(output),
        cargo_test(output),
        ctest_junit(reports.ctest) or ctest_output(output),
    ]
    return combine([one for one in found if one is not None])


def counts_text(passed: int | None, failed: int | None, skipped: int | None) -> str:
    if passed is None and failed is None:
        return ""
    text = f"{passed or 0} passed, {failed or 0} failed"
    return f"{text}, {skipped} skipped" if skipped else text


async def run_gate(command: str, cwd: Path, timeout_s: float, env: dict[str, str],
                   sandbox: Sandbox | None = None, *, known_failing: Sequence[str] = ()) -> GateResult:
    """Run the gate command once in `cwd` and record what it observed, judged on its own (not yet against the
    base: gate/verdict.py). Its output
    is the lines around the failing tests (those not `known_failing` on the base first), then the last lines."""
    scratch = await asyncio.to_thread(tempfile.TemporaryDirectory, prefix="autobuild-gate-")  # made and removed
    try:  # off the event loop
        tmp = scratch.name
        run_env, reports = await instrument(env, Path(tmp), cwd)
        box = sandbox.with_writable(Path(tmp)).for_run() if sandbox else None  # the gate's env: setup's only
        completed, received, changed = await _run_unkilled(command, cwd, timeout_s, run_env, reports=reports,
                                                           sandbox=box)
        heard = channel_observed(received, cwd)
        seen = await asyncio.to_thread(observe, completed.stdout + "\n" + completed.stderr, reports, cwd, heard)
        unloaded = load_errors(completed.stdout + "\n" + completed.stderr, seen.failing if seen else None)
        reads = await asyncio.to_thread(pytest_reads, reports.reads)
    finally:
        await asyncio.to_thread(scratch.cleanup)
    ran_none = seen is not None and seen.total == 0
    failing = seen.failing if seen is not None else None
    if completed.timed_out:
        summary = f"`{command}` timed out after {timeout_s:.0f}s"
    elif ran_none:
        summary = f"`{command}` ran no tests (exit {completed.returncode})"
    else:
        summary = f"`{command}` exited {completed.returncode}"
    judged_by = BY_EXIT if seen is None else BY_IDS if failing is not None else BY_COUNTS
    if seen is not None:
        summary += f" ({counts_text(seen.passed, seen.failed, seen.skipped_count)}; {seen.runner})"
    else:
        summary += " (no test runner recognised: judged by exit status)"
    output = without_secrets(completed.tail(30), run_env)
    if failing and (excerpt := await asyncio.to_thread(failure_excerpts, completed.stdout + "\n" + completed.stderr,
                                                       failing, known_failing)):
        output = f"{without_secrets(excerpt, run_env)}\n{TAIL_MARK}\n{output}"
    observed = Observation(
        command=command, summary=summary, output=output,
        exit_code=None if completed.timed_out else completed.returncode,
        tests_passed=seen.passed if seen else None, tests_failed=seen.failed if seen else None,
        failing=failing, new_failures=[], ran_classes=seen.ran if seen else None,
        tests_skipped=seen.skipped_count if seen else None, skipped=seen.skipped if seen else None,
        runner=seen.runner if seen else None, judged_by=judged_by, passing=seen.passing if seen else None,
        skipped_ids=seen.skipped_ids if seen else [], xfailed=seen.xfailed if seen else [],
        tampering=crosscheck.check(received, completed.stdout + "\n" + completed.stderr,
                                   None if completed.timed_out else completed.returncode, completed.timed_out, heard),
        channel=list(heard), tracked_changed=changed, load_errors=unloaded)
    if reads:  # kept with `passing` (a base's run, the cache), dropped from a judged run's verdict
        observed["reads"] = reads
    return alone(observed)


async def _run_unkilled(command: str, cwd: Path, timeout_s: float, run_env: dict[str, str], *, reports: Reports,
                        sandbox: Sandbox | None) -> tuple[Completed, Received, list[str] | None]:
    """The command's run, again when something on the machine killed it (not our timeout), at most KILLED_TRIES
    times; one stream, in the order it was written: runners print a test's section header on one stream and its
    results on the other (cargo: "Running tests/x.rs" on stderr, "test y ... FAILED" on stdout)."""
    for attempt in range(1, KILLED_TRIES + 1):
        await asyncio.to_thread(_clear, reports)
        run_env[DEADLINE] = f"{time.time() + timeout_s - min(15.0, timeout_s * 0.2):.1f}"
        completed, received, changed = await _run_heard(command, cwd, timeout_s, run_env, sandbox)
        if STOPPED in completed.stdout[-2000:]:  # interrupted just before the timeout, its report written
            completed = dataclasses.replace(completed, timed_out=True)
        if (signal := killed_by(completed)) is None:
            return completed, received, changed
        if attempt == KILLED_TRIES:  # never a verdict, never a baseline: what it printed is cut short
            raise InfrastructureError(f"the gate `{command}` was killed by signal {signal} {KILLED_TRIES} times"
                                      f" in a row (not a timeout: something on this machine killed it, such as"
                                      f" the kernel's out-of-memory killer); its results don't count. Last"
                                      f" output: {completed.tail(5)}")
    raise AssertionError("unreachable: the last attempt returns or raises")


async def _run_heard(command: str, cwd: Path, timeout_s: float, env: dict[str, str],
                     sandbox: Sandbox | None) -> tuple[Completed, Received, list[str] | None]:
    """One run of the command with the gate's channel open (gate/observe/channel.py), and the tracked files it
    changed."""
    where = await tracked.locate(cwd)
    before = await tracked.snapshot(cwd, where)
    if sandbox is not None:  # the code under test can't rewrite a test before it runs and put it back after
        sandbox = sandbox.protecting(await tracked.test_files(cwd, where=where))
    channel = Channel()
    channel.listen()
    try:
        completed = await run_shell(f"exec 2>&1\n{command}", cwd, timeout_s, env | channel.env, sandbox,
                                    pass_fds=channel.fds)
    finally:
        received = await channel.close()
    # Located again unless no config file changed: with worktreeConfig on, the run can write its worktree's
    # config.worktree (a filter driver that `status` would start, a core.worktree).
    return completed, received, tracked.changed(before, await tracked.snapshot(cwd, await tracked.again(cwd, where)))


def describe_base(base: GateResult) -> list[str]:
    """Report lines on the base's run: green, no tests yet, or what was already failing before any task."""
    judged = f"judged by {base.get('judged_by') or BY_IDS}"
    if base.get("not_a_baseline"):
        return [f"no baseline ({base['summary']}): {base.get('not_a_baseline')}; a task repairs it"
                " (repairs_base): every test the gate runs must pass"]
    skipped = [f"  - skipped: {entry}" for entry in (base.get("skipped") or [])[:20]]
    skipped += [f"  - unstable on the base (in one of its two runs only, not held against tasks): {test}"
                for test in (base.get("unstable") or [])[:20]]
    if base["passed"]:
        return [f"green ({base['summary']}; {judged})", *skipped]
    if base["tests_passed"] == 0 and not base["tests_failed"] and base["exit_code"] is not None:
        return [f"no tests yet ({base['summary']}): every task must add a test the gate runs and passes"]
    if base["failing"]:
        lines = [f"already red ({base['summary']}; {judged}); failing before any task:"]
        return lines + [f"  - {test_id}" for test_id in base["failing"][:50]] + skipped
    return [f"already red ({base['summary']}; {judged}): its failures are not named, tasks are judged by"
            " the number of failures (--judge-by-counts)", *skipped]
