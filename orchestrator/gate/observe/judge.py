"""What a run of the gate can mean: whether the command can gate at all (it must run: not found, not executable,
usage and internal errors can't), whether the base's run leaves something to judge tasks by (a red base must
name its failures, unless --judge-by-counts), and the runs a task's verdict is decided on (gate/verdict.py): a
new failure is run again once before it counts (flaky tests)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

from orchestrator.facts import GateResult, Observation
from orchestrator.gate.observe.observed import green, ran_none, unusable
from orchestrator.gate.observe.result import failing_on, run_gate
from orchestrator.gate.spec.no_baseline import baseline
from orchestrator.gate.verdict import Evidence, decide, record, wants_again
from orchestrator.sandbox import Sandbox

NAMED_RUNNERS = "pytest, unittest, node --test, jest, vitest, mocha, go test, cargo test"


def unusable_base(base: Observation, detected: bool = True, judge_by_counts: bool = False) -> str | None:
    """Why the base's run leaves nothing to judge tasks by, or None. A base that ran no test is fine (every task
    must then run and pass one). A red base must name its failing tests, unless the user accepts judgement by
    counts (`--judge-by-counts`). A red command that is no test runner is judged by exit status (each task must
    make it pass: a plan's acceptance check may be red by design), but a detected one means the repo's own
    test command is broken here."""
    reason = unusable(base)
    if reason or green(base) or ran_none(base) or base["failing"] is not None:
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


def judge(run: Observation, base: Observation | None) -> GateResult:
    """The verdict on a task's (or a merge's) run, given the base's run of the same command (gate/verdict.py)."""
    return record(Evidence(run=run, base=baseline(base)))  # a base whose tests never ran waives nothing


def settled(run: Observation, base: Observation | None) -> bool:
    """Whether `run`, judged against the base's, passes as it is: no test fails that the base did not fail, so
    `gathered_run` would not run the command again and a run repeating it could only confirm the verdict (a
    remembered first sighting of it may be reused, as a pass is: gate/cache.py)."""
    evidence = Evidence(run=run, base=baseline(base))
    return not wants_again(evidence) and decide(evidence).passed


async def gathered_run(command: str, cwd: Path, timeout_s: float, env: dict[str, str],
                       base: Observation | None, *, run: Callable[[], Awaitable[GateResult]] | None = None,
                       sandbox: Sandbox | None = None) -> Evidence:
    """The gate's run next to the base's; when tests fail that did not on the base, the command runs once more
    (the whole command, which works for every runner) and only what fails both times counts (flaky tests).
    `run` replaces the plain run of the command (the run's gate cache). A base whose tests never ran waives
    nothing (gate/spec/no_baseline.py)."""
    base = baseline(base)

    async def once() -> GateResult:
        if run is not None:
            return await run()
        return await run_gate(command, cwd, timeout_s, env, sandbox, known_failing=failing_on(base))

    evidence = Evidence(run=await once(), base=base)
    if not wants_again(evidence):
        return evidence
    return replace(evidence, again=await once())


async def judged_run(command: str, cwd: Path, timeout_s: float, env: dict[str, str],
                     base: Observation | None, *, run: Callable[[], Awaitable[GateResult]] | None = None,
                     sandbox: Sandbox | None = None) -> GateResult:
    """`gathered_run`'s verdict."""
    return record(await gathered_run(command, cwd, timeout_s, env, base, run=run, sandbox=sandbox))


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
