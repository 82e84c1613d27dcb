"""Runs of the gate command and what they mean: the counts and failing test ids a run observed (JUnit XML
from pytest, else the runner's summary line), whether a command can gate at all, and the verdict of a run
judged against the base's run (tests already red on the base neither block a task nor hide a new failure)."""

from __future__ import annotations

import re
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from orchestrator.facts import GateResult
from orchestrator.processes import run_shell
from orchestrator.sandbox import Sandbox


def no_gate(reason: str) -> GateResult:
    return GateResult(passed=True, command=None, summary=reason, output="", exit_code=None, tests_passed=None,
                      tests_failed=None, failing=None, new_failures=[], ran_classes=None)


_PYTEST_UNUSABLE = {3: "pytest hit an internal error", 4: "pytest usage error", 5: "no tests were collected"}
_COUNT_PATTERNS = (
    # pytest "3 passed, 1 failed", jest "Tests: 1 failed, 3 passed, 4 total", cargo "2 passed; 1 failed"
    (re.compile(r"(\d+) passed"), re.compile(r"(\d+) failed")),
    # node --test / TAP "# pass 3", "# fail 1"
    (re.compile(r"^# pass (\d+)", re.MULTILINE), re.compile(r"^# fail (\d+)", re.MULTILINE)),
)
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests?", re.MULTILINE)
_UNITTEST_FAILED = re.compile(r"^FAILED \((?:failures=(\d+))?(?:, )?(?:errors=(\d+))?", re.MULTILINE)
_NO_TESTS = re.compile(r"\bno tests ran\b|\bcollected 0 items\b", re.IGNORECASE)


# When pytest finds its rootdir above the worktree (no pytest config in the repo, an enclosing project), JUnit
# classnames carry the worktree's own path ("repo..autobuild.worktrees.FEAT-001.TASK-002.tests.test_x"): cut it,
# so the same test has the same id in every worktree (the base's run and each task's).
_WORKTREE_PREFIX = re.compile(r"^(?:.*\.)?\.?autobuild\.worktrees\.[^.]+\.[^.]+\.")


def _classname(raw: str | None) -> str:
    return _WORKTREE_PREFIX.sub("", raw or "")


def _junit(path: Path) -> tuple[int, list[str], list[str]] | None:
    """(passed, failing ids, classnames that ran) from a JUnit XML report, or None when there is none."""
    try:
        root = ET.parse(path).getroot()  # expat: no external entities, bounded expansion
    except (OSError, ET.ParseError):
        return None
    passed, failing, classes = 0, [], set()
    for case in root.iter("testcase"):
        classname = _classname(case.get("classname"))
        classes.add(classname)
        test_id = "::".join(part for part in (classname, case.get("name")) if part)
        if case.find("failure") is not None or case.find("error") is not None:
            failing.append(test_id)
        elif case.find("skipped") is None:
            passed += 1
    return passed, sorted(set(failing)), sorted(classes - {""})


def _counts(output: str) -> tuple[int, int] | None:
    ran = _UNITTEST_RAN.findall(output)
    if ran:
        failed = _UNITTEST_FAILED.findall(output)
        bad = sum(int(a or 0) + int(b or 0) for a, b in failed[-1:])
        return int(ran[-1]) - bad, bad
    for passed_re, failed_re in _COUNT_PATTERNS:
        passed, failed = passed_re.findall(output), failed_re.findall(output)
        if passed or failed:
            return sum(map(int, passed)), sum(map(int, failed))
    return None


async def run_gate(command: str, cwd: Path, timeout_s: float, env: dict[str, str],
                   sandbox: Sandbox | None = None) -> GateResult:
    """Run the gate command once in `cwd` and record what it observed (not yet judged: `passed` is exit 0
    with tests run)."""
    with tempfile.TemporaryDirectory(prefix="autobuild-gate-") as tmp:
        junit = Path(tmp) / "junit.xml"
        # Any pytest the command starts (directly, via make, tox…) writes its test ids here.
        addopts = f"{env.get('PYTEST_ADDOPTS', '')} --junitxml={junit}".strip()
        completed = await run_shell(command, cwd, timeout_s, env | {"PYTEST_ADDOPTS": addopts},
                                    sandbox.with_writable(Path(tmp)) if sandbox else None)
        from_junit = _junit(junit)
    output = completed.tail(30)
    full = completed.stdout + "\n" + completed.stderr
    classes: list[str] | None = None
    if from_junit is not None:
        passed_count, failing, classes = from_junit
        counts: tuple[int, int] | None = (passed_count, len(failing))
        ids: list[str] | None = failing
    else:
        counts, ids = _counts(full), None
    ran_none = (counts is not None and sum(counts) == 0) or bool(_NO_TESTS.search(full))
    ok = completed.ok and not ran_none
    if completed.timed_out:
        summary = f"`{command}` timed out after {timeout_s:.0f}s"
    elif completed.ok and ran_none:
        summary = f"`{command}` ran no tests"
    else:
        summary = f"`{command}` exited {completed.returncode}"
    if counts is not None:
        summary += f" ({counts[0]} passed, {counts[1]} failed)"
    return GateResult(passed=ok, command=command, summary=summary, output=output,
                      exit_code=None if completed.timed_out else completed.returncode,
                      tests_passed=counts[0] if counts else None, tests_failed=counts[1] if counts else None,
                      failing=ids, new_failures=[], ran_classes=classes)


def unusable(run: GateResult) -> str | None:
    """Why this run shows the command can't gate anything at all (not found, not runnable, a usage error, no
    tests collected), or None."""
    code = run["exit_code"]
    if code is None:
        return run["summary"]
    if code in (126, 127):
        return f"`{run['command']}` could not run (exit {code}: command not found or not executable)"
    if code in _PYTEST_UNUSABLE and (run["failing"] is not None or "pytest" in (run["command"] or "")):
        return f"`{run['command']}`: {_PYTEST_UNUSABLE[code]} (exit {code})"
    if run["tests_passed"] is not None and (run["tests_passed"] or 0) + (run["tests_failed"] or 0) == 0:
        return f"`{run['command']}` collected no tests"
    return None


def unusable_base(base: GateResult, detected: bool) -> str | None:
    """Why the base's run leaves nothing to judge tasks by, or None. Beyond `unusable`, for a command we
    detected (a plan's own `verify` may be red on the base by design): a red base must say which tests fail
    (ids) or how many (counts) and pass at least one, else the repo's environment is what is broken."""
    reason = unusable(base)
    if reason or base["passed"] or not detected:
        return reason
    if base["failing"] is None and base["tests_failed"] is None:
        return (f"`{base['command']}` fails on the base (exit {base['exit_code']}) and reports neither test ids"
                " nor counts, so no task could be judged by it")
    if base["tests_passed"] == 0:
        return f"`{base['command']}` passes no test on the base (exit {base['exit_code']})"
    return None


def judge(run: GateResult, base: GateResult | None) -> GateResult:
    """The verdict on a task's (or a merge's) run, given the base's run of the same command."""
    if run["passed"] or base is None or base["passed"] or base["command"] != run["command"]:
        return run
    if not base["tests_passed"]:
        return run  # nothing passed on the base: "no new failures" would let a task through on no evidence
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
    # No ids: the same exit status and no more failures than the base had. Without counts either there is
    # nothing to compare, and a failing exit fails.
    if run["tests_failed"] is None or base["tests_failed"] is None:
        return verdict
    if run["exit_code"] == base["exit_code"] and run["tests_failed"] <= base["tests_failed"]:
        verdict["passed"] = True
        verdict["summary"] = f"{run['summary']}; the base fails the same way (no test ids to compare)"
    return verdict


def tests_not_run(reported: list[str], gate: GateResult) -> list[str]:
    """Python test files a player reported writing that the gate's run (by its JUnit classnames) never ran;
    empty when the gate reported no ids."""
    if not gate["ran_classes"]:
        return []
    missing = []
    for path in reported:
        if not path.endswith(".py"):
            continue
        module = path.removesuffix(".py").replace("/", ".")
        if not any(name == module or name.startswith(module + ".") for name in gate["ran_classes"]):
            missing.append(path)
    return missing


def describe_base(base: GateResult) -> list[str]:
    """Report lines on the base's run: what was already failing before any task."""
    if base["passed"]:
        return [f"green ({base['summary']})"]
    lines = [f"already red ({base['summary']}); failing before any task:"]
    lines += [f"  - {test_id}" for test_id in (base["failing"] or [])[:50]]
    return lines
