"""What a run of the gate means: whether the command can gate at all (it must run: not found, not executable,
usage and internal errors can't), whether the base's run leaves something to judge tasks by, and the verdict on
a task's run next to the base's. Never by subtraction: tests already red on the base neither block a task nor
hide a new failure, compared by id; by count only where the user said so (--judge-by-counts); a run of no test
passes nothing; a new failure is run again once before it fails a task (flaky tests)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path

from orchestrator.facts import GateResult
from orchestrator.gate.crosscheck import refusals, refused
from orchestrator.gate.no_baseline import baseline
from orchestrator.gate.result import BY_COUNTS, failing_on, last_lines, run_gate
from orchestrator.sandbox import Sandbox

_PYTEST_UNUSABLE = {3: "pytest hit an internal error", 4: "pytest usage error"}
_USAGE = re.compile(r"^(?:usage: |error: unrecognized arguments|error: unexpected argument|.*: bad option: |"
                    r"flag provided but not defined)", re.IGNORECASE | re.MULTILINE)
NAMED_RUNNERS = "pytest, unittest, node --test, jest, vitest, mocha, go test, cargo test"


def ran_none(run: GateResult) -> bool:
    """A recognised runner ran no test at all."""
    return run.get("runner") is not None and not run["tests_passed"] and not run["tests_failed"]


def unusable(run: GateResult) -> str | None:
    """Why this run shows the command can't run at all (timed out, not found, not executable, a usage or an
    internal error), or None. A run of no test is a fact (a young repo), not a reason."""
    code = run["exit_code"]
    if code is None:
        return run["summary"]
    if code in (126, 127):
        return f"`{run['command']}` could not run (exit {code}: command not found or not executable)"
    if code in _PYTEST_UNUSABLE and (run.get("runner") == "pytest" or "pytest" in (run["command"] or "")) \
            and not run["tests_passed"] and not run["tests_failed"]:
        return f"`{run['command']}`: {_PYTEST_UNUSABLE[code]} (exit {code})"
    if code != 0 and not run["tests_passed"] and not run["tests_failed"] and _USAGE.search(last_lines(run)):
        return f"`{run['command']}`: usage error (exit {code})"
    return None


def unusable_base(base: GateResult, detected: bool = True, judge_by_counts: bool = False) -> str | None:
    """Why the base's run leaves nothing to judge tasks by, or None. A base that ran no test is fine (every task
    must then run and pass one). A red base must name its failing tests, unless the user accepts judgement by
    counts (`--judge-by-counts`). A red command that is no test runner is judged by exit status (each task must
    make it pass: a plan's acceptance check may be red by design), but a detected one means the repo's own
    test command is broken here."""
    reason = unusable(base)
    if reason or base["passed"] or ran_none(base) or base["failing"] is not None:
        return reason
    if base.get("runner") is None:
        if not detected:
            return None
        return (f"`{base['command']}` fails on the base (exit {base['exit_code']}) without test results we can"
                f" read (from {NAMED_RUNNERS}), so no task could be judged by it: make it pass on the base (its"
                " output below says why), or pass --verify CMD with a test command")
    if judge_by_counts:
        return None
    return (f"`{base['command']}` fails on the base (exit {base['exit_code']}: {base['tests_failed']} failing) and"
            f" {base.get('runner')} does not name its failing tests here, so a task that fixes one and breaks"
            f" another would look the same: pass --verify CMD with a command whose failures are named"
            f" ({NAMED_RUNNERS}), or --judge-by-counts to judge tasks by the number of failures")


def judge(run: GateResult, base: GateResult | None) -> GateResult:
    """The verdict on a task's (or a merge's) run, given the base's run of the same command: refused, named,
    where its accounts disagree (gate/crosscheck.py: never judged by counts then)."""
    return refused(run, tampering) if (tampering := refusals(run, base)) else _judged(run, base)


def _judged(run: GateResult, base: GateResult | None) -> GateResult:
    base = baseline(base)  # a base whose tests never ran waives nothing
    if ran_none(run):
        verdict = run.copy()
        verdict["passed"] = False
        return verdict
    if run["passed"] or base is None or base["passed"] or ran_none(base) or base["command"] != run["command"]:
        return run
    if unusable(run) or run["exit_code"] is None:
        return run
    verdict = run.copy()
    if run["failing"] is not None and base["failing"] is not None:
        new = sorted(set(run["failing"]) - set(base["failing"]))
        if new:
            verdict["new_failures"] = new
            verdict["summary"] = f"{run['summary']}; failing and not on the base: {', '.join(new[:5])}"
        else:
            verdict["passed"] = True
            verdict["summary"] = f"{run['summary']}; only tests already failing on the base fail"
        return verdict
    # No ids (only reachable when the user accepted judgement by counts): the same exit status and no more
    # failures than the base had.
    if run["tests_failed"] is None or base["tests_failed"] is None:
        return verdict
    verdict["judged_by"] = BY_COUNTS
    if run["exit_code"] == base["exit_code"] and run["tests_failed"] <= base["tests_failed"]:
        verdict["passed"] = True
        verdict["summary"] = (f"{run['summary']}; judged by counts (--judge-by-counts): no more failures than"
                              f" the base's {base['tests_failed']}")
    return verdict


def _new(run: GateResult, base: GateResult | None) -> set[str]:
    """The failing tests the base did not have (all of them when the base was green or ran none)."""
    if run["new_failures"] or (base is not None and base["failing"] and not base["passed"]):
        return set(run["new_failures"])
    return set(run["failing"] or [])


async def judged_run(command: str, cwd: Path, timeout_s: float, env: dict[str, str],
                     base: GateResult | None, *, run: Callable[[], Awaitable[GateResult]] | None = None,
                     sandbox: Sandbox | None = None) -> GateResult:
    """Run the gate and judge it; when tests fail that did not on the base, the command runs once more (the
    whole command, which works for every runner) and only what fails both times counts (flaky tests). `run`
    replaces the plain run of the command (the run's gate cache)."""
    base = baseline(base)

    async def once() -> GateResult:
        if run is not None:
            return await run()
        return await run_gate(command, cwd, timeout_s, env, sandbox, known_failing=failing_on(base))

    first = judge(await once(), base)
    if first["passed"] or not _new(first, base) or refusals(first, base):  # tampering is never run again
        return first
    again = judge(await once(), base)
    flaky = sorted(_new(first, base) - _new(again, base))
    if again["passed"] and flaky:
        again["summary"] = f"{again['summary']}; failed once, passed when run again (flaky): {', '.join(flaky[:5])}"
    return again


def _module_of(path: str) -> str | None:
    return path.removesuffix(".py").replace("/", ".") if path.endswith(".py") else None


def _runs(module: str, test_id: str) -> bool:
    return test_id == module or test_id.startswith((module + ".", module + "::"))


def tests_not_run(reported: list[str], gate: GateResult) -> list[str]:
    """Python test files a player reported writing of which the gate's run ran no test (by JUnit classnames or
    unittest ids); empty when the gate reported none."""
    if not gate["ran_classes"]:
        return []
    return [path for path in reported if (module := _module_of(path))
            and not any(_runs(module, name) for name in gate["ran_classes"] or [])]


def tests_only_skipped(reported: list[str], gate: GateResult) -> list[str]:
    """The player's reported Python test files that the gate only skipped, as "file: id (reason)"."""
    found = []
    for path in reported:
        module = _module_of(path)
        if module is None or any(_runs(module, name) for name in gate["ran_classes"] or []):
            continue
        skips = [entry for entry in gate.get("skipped") or [] if _runs(module, entry.split(" ", 1)[0])]
        if skips:
            found.append(f"{path}: {'; '.join(skips[:3])}")
    return found
