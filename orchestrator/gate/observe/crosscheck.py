"""Every account of one run must agree: the sessions the gate's channel heard (gate/observe/channel.py), the summaries
the runners printed (gate/observe/summaries.py), the runners' own end status and the command's exit status; go's
packages and cargo's test binaries as gate/observe/stream_checks.py checks them. A disagreement is tampering, named as
`subject: what disagreed`; a finding whose subject the base's run of the same command also shows is how the project runs
(a wrapper that hides a summary, a retry plugin), not the task's doing. Plain data in, plain lines out: the verdict
refuses any finding left (`refusals`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from orchestrator.facts import Observation
from orchestrator.gate.observe.channel import Received, Session
from orchestrator.gate.observe.runners import Observed
from orchestrator.gate.observe.runners.channel_reports import pytest_id
from orchestrator.gate.observe.stream_checks import cargo_findings, go_findings
from orchestrator.gate.observe.summaries import (
    PYTEST_KINDS,
    jest_summaries,
    mocha_summaries,
    node_summaries,
    pytest_summaries,
    unittest_summaries,
    vitest_summaries,
)

Counts = dict[str, int]


def _pytest_counts(session: Session) -> Counts:
    categories = Counter(str(record.get("category") or "") for record in session.tests)
    return {kind: categories.get(kind, 0) for kind in PYTEST_KINDS}


def _unittest_counts(session: Session) -> Counts:
    outcomes = Counter(str(record.get("outcome") or "") for record in session.tests)
    return {"ran": outcomes["start"], "failed": outcomes["failed"] + outcomes["error"] + outcomes["unexpected"],
            "skipped": outcomes["skipped"], "xfail": outcomes["xfail"], "ok": int(session.status == 0)}


def _node_counts(session: Session) -> Counts:
    tests = [record for record in session.tests if not record.get("suite")]
    outcomes = Counter(str(record.get("outcome")) for record in tests)
    cancelled = sum(1 for record in tests if record.get("outcome") == "fail" and record.get("cancelled"))
    return {"tests": len(tests), "pass": outcomes["pass"], "fail": outcomes["fail"] - cancelled,
            "cancelled": cancelled, "skipped": outcomes["skip"], "todo": outcomes["todo"]}


def _jest_counts(session: Session) -> Counts:
    tests = [record for record in session.tests if record.get("suite") != "failed"]
    statuses = Counter(str(record.get("status")) for record in tests)
    return {"failed": statuses["failed"], "passed": statuses["passed"],
            "skipped": statuses["pending"] + statuses["skipped"] + statuses["disabled"], "todo": statuses["todo"],
            "total": len(tests)}


def _mocha_counts(session: Session) -> Counts:
    """mocha counts a hook's failure (a record of its file's suite) among its failing."""
    statuses = Counter(str(record.get("status") or record.get("suite")) for record in session.tests)
    return {"passing": statuses["passed"], "pending": statuses["pending"], "failing": statuses["failed"]}


_CHECKED: dict[str, tuple[Callable[[Session], Counts], Callable[[str], list[Counts]]]] = {
    "pytest": (_pytest_counts, pytest_summaries),
    "unittest": (_unittest_counts, unittest_summaries),
    "node --test": (_node_counts, node_summaries),
    "jest": (_jest_counts, jest_summaries),
    "vitest": (_jest_counts, vitest_summaries),
    "mocha": (_mocha_counts, mocha_summaries),
}


def _said(counts: Counts) -> str:
    return ", ".join(f"{number} {kind}" for kind, number in counts.items() if number) or "nothing"


def _summaries(runner: str, sessions: list[Session], output: str) -> list[str]:
    """Each session against the summary its runner printed for it, in order; a session that ran no test may
    print none (jest's "No tests found")."""
    count, summarise = _CHECKED[runner]
    printed = summarise(output)
    found: list[str] = []
    index = 0
    for number, session in enumerate(sessions, 1):
        heard = count(session)
        if index >= len(printed):
            if session.tests:
                found.append(f"{runner} summary: session {number} on the gate's channel ({_said(heard)}) has no"
                             " end-of-session summary in the output")
            continue
        said = {kind: printed[index].get(kind, 0) for kind in heard}
        if said != heard and not session.tests:
            continue  # an empty session that printed nothing: the summary is the next session's
        if said != heard:
            found.append(f"{runner} summary: it says {_said(said)}; the gate's channel heard {_said(heard)}")
        index += 1
    if index < len(printed):
        found.append(f"{runner} summary: the output has {len(printed)} end-of-session summaries, the gate's"
                     f" channel heard {len(sessions)} session(s)")
    return found


def _outcome(runner: str, record: dict[str, Any]) -> tuple[str, str] | None:
    """A record's (test, outcome), or None for a record that is no outcome (a rerun, a unittest start)."""
    if runner == "pytest":
        if record.get("outcome") == "rerun" or record.get("category") == "rerun":
            return None
        subtest = f" {record['subtest']}" if record.get("subtest") else ""  # a subtest's outcome is its own
        return f"{pytest_id(record)} ({record.get('phase')}){subtest}", str(record.get("outcome"))
    if runner == "unittest":
        outcome = str(record.get("outcome"))
        return None if outcome == "start" else (str(record.get("id")), outcome)
    if runner == "go test":
        action = str(record.get("action"))
        name = ".".join(part for part in (str(record.get("package") or ""), str(record.get("test") or "")) if part)
        return None if action == "run" else (name, action)
    if runner == "node --test":
        return " > ".join([str(record.get("file") or ""), *map(str, record.get("path") or [])]), \
            str(record.get("outcome"))
    return " > ".join([str(record.get("file") or ""), *map(str, record.get("ancestorTitles") or []),
                       str(record.get("title") or "")]), str(record.get("status") or record.get("suite"))


def _twice(session: Session) -> list[str]:
    seen: dict[str, str] = {}
    found: list[str] = []
    for record in session.tests:
        if (pair := _outcome(session.runner, record)) is None:
            continue
        test, outcome = pair
        if test in seen and seen[test] != outcome:
            found.append(f"reported twice {session.runner} {test}: {seen[test]}, then {outcome}")
        seen.setdefault(test, outcome)
    return found


def _failing(session: Session) -> int:
    if session.runner == "go test":
        return sum(1 for record in session.tests if record.get("action") == "fail")
    counts = _CHECKED[session.runner][0](session) if session.runner in _CHECKED else {}
    return counts.get("failed", 0) + counts.get("error", 0) + counts.get("fail", 0) + counts.get("failing", 0)


def _status(session: Session) -> list[str]:
    if session.status == 0 and (failing := _failing(session)):
        return [f"{session.runner} status: its session ended passing (status 0) while it reported {failing}"
                " failing test(s) on the gate's channel"]
    return []


def _altered(session: Session) -> list[str]:
    """The runner's own functions code of the run replaced, and finders it put on Python's import system, each its
    own subject (a project whose plugin patches one on the base too is excused for that one)."""
    return [f"{session.runner} {name}: {'a finder added' if name.startswith('sys.') else 'replaced'} by code outside"
            f" the runner ({where})" for name, where in session.altered]


def check(received: Received, output: str, exit_code: int | None, timed_out: bool,
          heard: dict[str, Observed]) -> list[str]:
    """What disagrees in one run (the base's included: its findings excuse a task's of the same subject)."""
    found: list[str] = []
    if received.malformed:
        found.append(f"channel: {received.malformed} line(s) on the gate's channel were no record of a runner")
    for runner in received.runners:
        sessions = received.of(runner)
        if not timed_out:
            found += [f"{runner} end: a session on the gate's channel never ended (its process died or closed the"
                      " channel before its runner finished)" for session in sessions if not session.ended]
        for session in sessions:
            found += _twice(session) + _status(session) + _altered(session)
        if runner in _CHECKED and not timed_out:
            found += _summaries(runner, sessions, output)
        if runner == "go test":
            found += go_findings(sessions, output, timed_out=timed_out)
    found += cargo_findings(output, timed_out=timed_out)
    failing_ids = [test for one in heard.values() for test in one.failing or []]
    if exit_code == 0 and failing_ids:
        found.append(f"exit status: the command exited 0 while the gate's channel heard {len(failing_ids)} failing"
                     f" test(s): {', '.join(failing_ids[:5])}")
    return list(dict.fromkeys(found))


def _subject(finding: str) -> str:
    return finding.split(": ", 1)[0]


def refusals(run: Observation, base: Observation | None) -> list[str]:
    """The run's findings its base's run of the same command doesn't also show, and what it lost or changed
    that the base's run did not: the runners the base's channel heard (a base judged by ids), tracked files."""
    same = base is not None and base.get("command") == run.get("command")
    excused = {_subject(finding) for finding in (base.get("tampering") or [])} if base is not None and same else set()
    found = [finding for finding in run.get("tampering") or [] if _subject(finding) not in excused]
    if base is None or not same or run.get("exit_code") is None:
        return found
    lost = [runner for runner in base.get("channel") or [] if runner not in (run.get("channel") or [])]
    if lost and base.get("judged_by") != "counts":
        found.append(f"lost ids: the base's run reported {', '.join(lost)} on the gate's channel, this run's did"
                     " not (its runner's reporter was kept from running)")
    if run.get("tracked_changed") is not None and base.get("tracked_changed") is not None:
        changed = sorted(set(run.get("tracked_changed") or []) - set(base.get("tracked_changed") or []))
        if changed:
            found.append(f"tracked files: the run changed {', '.join(changed[:10])}, which the base's run of the"
                         " same command leaves alone")
    return found


def other_runs(base: Observation | None, runs: tuple[tuple[str, Observation | None], ...]) -> list[str]:
    """The refusals of the gate's other runs of the same tree (the hidden acceptance tests', the clean room's),
    each against the base's run as the task's run is, named by the run it came from."""
    return [f"{name}: {finding}" for name, run in runs if run is not None for finding in refusals(run, base)]
