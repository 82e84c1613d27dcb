"""Every account of a run must agree (issue 38 item 3): the runners' printed summaries, read from real captured
output (tests/fixtures/gate/), and the gate's channel's sessions are held against each other, the runners' own
status and the exit status; what disagrees is tampering, unless the base's run of the same command shows the
same; a run that lost the channel the base's had, or changed a tracked file the base's run left alone, too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from orchestrator.facts import GateResult
from orchestrator.gate.observe.channel import parse
from orchestrator.gate.observe.crosscheck import check, refusals
from orchestrator.gate.observe.runners.channel_reports import channel_observed
from orchestrator.gate.observe.summaries import jest_summaries, node_summaries, pytest_summaries, unittest_summaries
from orchestrator.gate.observe.tracked import changed
from orchestrator.gate.verdict import no_gate

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gate"


def _out(runner: str, name: str) -> str:
    return (FIXTURES / runner / f"{name}.out").read_text()


def test_each_runner_s_printed_summary_is_read_as_counts() -> None:
    assert pytest_summaries(_out("pytest", "red")) == [
        {"passed": 1, "failed": 2, "error": 0, "skipped": 1, "xfailed": 0, "xpassed": 0}]
    assert pytest_summaries(_out("pytest", "collection-error-continued"))[0]["error"] == 1
    assert pytest_summaries(_out("pytest", "none"))  # "no tests ran in": a summary of nothing
    assert pytest_summaries(_out("pytest", "green-subtests")) == [  # pytest 9: "2 passed, 3 subtests passed"
        {"passed": 2, "failed": 0, "error": 0, "skipped": 0, "xfailed": 0, "xpassed": 0}]
    assert unittest_summaries(_out("unittest", "red-subtests")) == [
        {"ran": 5, "failed": 4, "skipped": 1, "xfail": 0, "ok": 0}]
    assert node_summaries(_out("node", "red-nested")) == [
        {"tests": 9, "suites": 2, "pass": 3, "fail": 4, "cancelled": 0, "skipped": 1, "todo": 1}]
    assert jest_summaries(_out("jest", "red")) == [{"failed": 2, "passed": 3, "skipped": 1, "todo": 0, "total": 6}]


def test_a_summary_inside_a_failing_test_s_captured_output_is_not_one() -> None:
    output = ("_____ test_inner _____\n------------------- Captured stdout call -------------------\n"
              "===== 3 passed in 0.01s =====\n=========================== short test summary info ====\n"
              "FAILED tests/test_x.py::test_inner\n1 failed in 0.2s\n")
    assert pytest_summaries(output) == [{"passed": 0, "failed": 1, "error": 0, "skipped": 0, "xfailed": 0,
                                         "xpassed": 0}]


def _lines(*records: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def _pytest(test: str, outcome: str, *, phase: str = "call", category: str | None = None) -> dict[str, Any]:
    module, name = test.split("::")
    return {"s": "1-1", "runner": "pytest", "event": "test", "id": test, "classname": module, "name": name,
            "phase": phase, "outcome": outcome, "category": outcome if category is None else category}


OPEN = {"s": "1-1", "runner": "pytest", "event": "open"}
GREEN = [OPEN, _pytest("t::a", "passed"), _pytest("t::b", "passed"), {"s": "1-1", "event": "end", "status": 0}]


def _check(data: bytes, output: str, exit_code: int = 0) -> list[str]:
    received = parse(data)
    return check(received, output, exit_code, False, channel_observed(received, Path.cwd()))


def test_an_honest_session_agrees_with_its_summary_and_exit_status() -> None:
    assert _check(_lines(*GREEN), "2 passed in 0.01s\n") == []
    assert channel_observed(parse(_lines(*GREEN)), Path.cwd())["pytest"].passing == ["t::a", "t::b"]


def test_a_fake_or_second_summary_disagrees_with_the_channel() -> None:
    red = [OPEN, _pytest("t::a", "passed"), _pytest("t::b", "failed"), {"s": "1-1", "event": "end", "status": 1}]
    assert _check(_lines(*red), "5 passed in 0.01s\n", 1) == [
        "pytest summary: it says 5 passed; the gate's channel heard 1 passed, 1 failed"]
    found = _check(_lines(*red), "1 failed, 1 passed in 0.01s\n2 passed in 0.01s\n", 0)
    assert [finding.split(":")[0] for finding in found] == ["pytest summary", "exit status"], found


def test_a_session_without_its_end_is_tampering_unless_the_run_timed_out() -> None:
    cut = _lines(OPEN, _pytest("t::a", "passed"))
    assert _check(cut, "2 passed in 0.01s\n")[0].startswith("pytest end: a session on the gate's channel never ended")
    received = parse(cut)
    assert not [finding for finding in check(received, "", None, True, channel_observed(received, Path.cwd()))
                if finding.startswith("pytest end")]


def test_a_test_reported_twice_with_different_outcomes_is_named_but_a_rerun_is_not() -> None:
    twice = [*GREEN[:2], _pytest("t::a", "failed"), GREEN[2], GREEN[3]]
    assert "reported twice pytest t::a (call): passed, then failed" in _check(_lines(*twice), "")
    rerun = [OPEN, _pytest("t::a", "rerun", category="rerun"), *GREEN[1:]]
    assert _check(_lines(*rerun), "2 passed, 1 rerun in 0.01s\n") == []


def test_a_runner_that_ends_passing_with_failures_and_garbage_on_the_channel_are_named() -> None:
    red = [OPEN, _pytest("t::a", "failed"), {"s": "1-1", "event": "end", "status": 0}]
    found = _check(_lines(*red) + b"not a record\n", "1 failed in 0.01s\n", 1)
    assert [finding.split(":")[0] for finding in found] == ["channel", "pytest status"], found


def _run(**fields: Any) -> GateResult:
    run = no_gate("")
    run.update({"command": "make test", "exit_code": 0, "judged_by": "test ids", **fields})  # type: ignore[typeddict-item]
    return run


def test_a_finding_the_base_shows_too_is_how_the_project_runs() -> None:
    finding = "pytest summary: the output has 0 end-of-session summaries, the gate's channel heard 1 session(s)"
    assert refusals(_run(tampering=[finding]), _run(tampering=[finding.replace("0 end", "0  end")])) == []
    assert refusals(_run(tampering=[finding]), _run(tampering=[])) == [finding]
    assert refusals(_run(tampering=[finding]), None) == [finding]


def test_a_run_that_lost_the_base_s_channel_or_changed_what_the_base_left_alone_is_refused() -> None:
    base = _run(channel=["pytest"], tracked_changed=["snapshots/a.txt"])
    lost = refusals(_run(channel=[], tracked_changed=["snapshots/a.txt"]), base)
    assert lost == ["lost ids: the base's run reported pytest on the gate's channel, this run's did not (its"
                    " runner's reporter was kept from running)"]
    touched = refusals(_run(channel=["pytest"], tracked_changed=["snapshots/a.txt", "calc/add.py"]), base)
    assert touched == ["tracked files: the run changed calc/add.py, which the base's run of the same command leaves"
                       " alone"]
    assert refusals(_run(channel=[]), _run(channel=["pytest"], judged_by="counts")) == []


def test_tracked_file_states_compare_by_content() -> None:
    assert changed({"a": "1"}, {"a": "1", "b": "2"}) == ["b"]
    assert changed({"a": "1"}, {}) == ["a"]
    assert changed({"a": "1"}, {"a": "2"}) == ["a"]
    assert changed(None, {}) is None


def test_a_runner_function_replaced_by_the_run_s_code_is_named_and_a_base_s_own_patch_excused() -> None:
    altered = {"s": "1-1", "runner": "unittest", "event": "altered",
               "names": [["unittest.case.TestCase.assertEqual", "/repo/calc/__init__.py:3"], "not a pair"]}
    received = parse(_lines({"s": "1-1", "runner": "unittest", "event": "open"}, altered,
                            {"s": "1-1", "runner": "unittest", "event": "end", "status": 0}))
    found = check(received, "", 0, False, {})
    assert found == ["unittest unittest.case.TestCase.assertEqual: replaced by code outside the runner"
                     " (/repo/calc/__init__.py:3)"]
    assert refusals(_run(tampering=found), _run(tampering=[found[0].replace("calc/__init__.py:3", "conftest.py:9")])) \
        == [], "a project whose own code patches it on the base too"
    assert refusals(_run(tampering=found), _run(tampering=[])) == found
