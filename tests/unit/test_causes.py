"""A stop's cause is what replanning, notifications and the scorecard decide on; its reason is free text: rewording
every reason changes no decision, and results written before causes were recorded still decide the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agents.types import AgentResult
from orchestrator.causes import STOP_CAUSES, cause_of
from orchestrator.graph.nodes.task import judge_player
from orchestrator.graph.nodes.turns import session_failure
from orchestrator.graph.replan import replannable
from orchestrator.graph.state import TaskState
from orchestrator.store.inspection import results_json
from orchestrator.store.stats import TaskFacts, scorecard
from orchestrator.views import notify


def _session_stop(role: str, status: str) -> dict[str, Any]:
    result = AgentResult(role=role, status=status, errors=["the CLI's own words"])  # type: ignore[arg-type]
    stop = session_failure(role, result)
    assert stop is not None
    return dict(stop)


def _blocker_stop(kind: str = "") -> dict[str, Any]:
    blocker = {"hash": "b1", "description": "the API key is missing", "action": "add it", "resume": "run again",
               "kind": kind, "test": "tests/test_x.py::test_y", "requirement": "returns 2"}
    state = TaskState(task_id="TASK-001", turn=2, blocker_hashes=["b1"])
    result = AgentResult(role="player", status="success", blocker=blocker)
    update = judge_player(state, lambda *args, **fields: None, result, [], Path("."), tampered=[])
    assert update.get("stop") is not None
    return dict(update["stop"] or {})


def _stops() -> list[dict[str, Any]]:
    """Every kind of stop, as the graph writes it (from its own functions where they are pure)."""
    as_written = [
        {"outcome": "failed", "cause": "max_turns", "reason": "max turns reached (10) without an approval"},
        {"outcome": "failed", "cause": "stalled",
         "reason": "stalled: the code did not change since the previous turn (three turns in a row)"},
        _session_stop("player", "max_turns"), _session_stop("coach", "max_turns"),
        _session_stop("precheck", "max_turns"), _session_stop("player", "budget"), _session_stop("coach", "timeout"),
        {"outcome": "aborted", "cause": "budget",
         "reason": "budget exhausted: the feature spent $1.0000 of $1.0000"},
        _blocker_stop(), _blocker_stop("spec-test-conflict"),
        {"outcome": "failed", "cause": "tampering", "reason": "your repository changed outside autobuild/ during an"
                                                             " unsandboxed player session (nothing reverted): HEAD"},
        {"outcome": "aborted", "cause": "question", "reason": "ambiguous decision point: the agent asked 'which?'"
                                                             " and no human is available (--autonomous)"},
        {"outcome": "skipped", "cause": "dependency", "reason": "dependency TASK-000 failed"},
        {"outcome": "conflict", "cause": "merge_conflict", "reason": "merge conflict: a.py (no turn left to resolve"
                                                                     " it)"},
        {"outcome": "conflict", "cause": "merge_conflict", "reason": "merge conflict with autobuild/FEAT-001 still"
                                                                     " unresolved after conflict turn 3: markers"
                                                                     " left in a.py"},
        {"outcome": "failed", "cause": "integration_gate", "reason": "the gate failed on TASK-001 brought up to"
                                                                     " autobuild/FEAT-001: 1 failed\noutput"},
        {"outcome": "failed", "cause": "feature_moved", "reason": "autobuild/FEAT-001 kept moving: TASK-001 could"
                                                                  " not land after 20 bring-ups"},
        {"outcome": "cancelled", "cause": "cancelled", "reason": "cancelled by a person (cli, 2026-11-28T14:00:00Z)"},
    ]
    return as_written


STOPS = _stops()
EXPECTED = {  # cause: (replannable, notification of its finalize event, status a failed merge event is shown as)
    "max_turns": (True, "task_failed", "failed"), "stalled": (True, "task_failed", "failed"),
    "session_max_turns": (True, "task_failed", "failed"), "review_max_turns": (False, "task_failed", "failed"),
    "session_timeout": (False, "task_failed", "failed"), "budget": (False, "budget_reached", "failed"),
    "blocker": (False, "task_failed", "failed"), "spec_test_conflict": (False, "task_failed", "failed"),
    "tampering": (False, "task_failed", "failed"), "question": (False, "task_failed", "failed"),
    "dependency": (False, None, "failed"), "merge_conflict": (False, "task_failed", "conflict"),
    "integration_gate": (False, "task_failed", "failed"), "feature_moved": (False, "task_failed", "failed"),
    "cancelled": (False, None, "failed"),  # a person's own doing: nothing to notify them of
}


@pytest.fixture
def reworded() -> Any:
    """Rewrites a record's reason into words no version ever wrote (its cause, if any, stays)."""
    def reword(record: dict[str, Any]) -> dict[str, Any]:
        return record | {"reason": f"Reworded entirely: {' '.join(reversed(str(record['reason']).split()))}"}
    return reword


def _result(stop: dict[str, Any]) -> dict[str, Any]:
    """The task's result for a stop (as finalize_failure writes it)."""
    result = {"status": stop["outcome"], "reason": stop["reason"], "turns": 3, "cost_usd": 0.5}
    return result | ({"cause": stop["cause"]} if "cause" in stop else {})


def _decisions(result: dict[str, Any]) -> tuple[Any, ...]:
    finalize = {"event": "finalize", "feature": "FEAT-001", "task": "TASK-001", **result}
    merge = {"event": "merge", "feature": "FEAT-001", "task": "TASK-001", "merged": False,
             **{key: value for key, value in result.items() if key in ("reason", "cause")}}
    card = scorecard([TaskFacts("FEAT-001", "TASK-001", result["status"], turns=3, cost_usd=0.5,
                                cause=cause_of(result))])
    return (replannable(result, "TASK-001", 1), notify.classify(finalize),
            notify.message("task_failed", merge).split()[2].rstrip(":"), card["stopped_by"])


def test_every_cause_is_written_by_some_stop() -> None:
    assert {stop["cause"] for stop in STOPS} == STOP_CAUSES == set(EXPECTED)


@pytest.mark.parametrize("stop", STOPS, ids=[f"{s['cause']}-{i}" for i, s in enumerate(STOPS)])
def test_rewording_a_reason_changes_no_decision(stop: dict[str, Any], reworded: Any) -> None:
    result = _result(stop)
    replan, notification, merge_status = EXPECTED[stop["cause"]]
    expected = (replan, notification, merge_status, {stop["cause"]: 1})
    assert _decisions(result) == expected
    assert _decisions(reworded(result)) == expected, "the decisions read the cause, never the reason"
    replaced = result | {"status": "replaced", "reason": f"replaced by TASK-001-R1-1 ({result['reason']})"}
    assert cause_of(reworded(replaced)) == stop["cause"], "a replaced task keeps its failure's cause"


@pytest.mark.parametrize("stop", STOPS, ids=[f"{s['cause']}-{i}" for i, s in enumerate(STOPS)])
def test_a_result_from_before_causes_decides_as_it_did(stop: dict[str, Any]) -> None:
    """Checkpoints and run files written before causes were recorded hold only the reason (in these words):
    their cause is derived, once, by `cause_of`."""
    earlier = {key: value for key, value in stop.items() if key != "cause"}
    assert cause_of(earlier) == stop["cause"], "a stop in an older checkpoint (finalize_failure reads it)"
    result = _result(earlier)
    assert "cause" not in result
    replan, notification, merge_status = EXPECTED[stop["cause"]]
    assert _decisions(result) == (replan, notification, merge_status, {stop["cause"]: 1})
    if stop["outcome"] == "failed":  # only a failed task is replaced
        replaced = result | {"status": "replaced", "reason": f"replaced by T-R1-1, T-R1-2 ({stop['reason']})"}
        assert cause_of(replaced) == stop["cause"]


def test_approved_results_have_no_cause() -> None:
    for status in ("approved", "approved-unverified"):
        assert cause_of({"status": status, "reason": "approved by the coach and the verify gate"}) is None
    assert cause_of(None) is None and cause_of({}) is None
    assert cause_of({"status": "failed", "reason": "words no version wrote"}) is None


def test_json_results_carry_the_cause_also_for_results_from_before() -> None:
    shown = results_json({"T1": {"status": "failed", "reason": "max turns reached (3) without an approval"},
                          "T2": {"status": "failed", "reason": "reworded", "cause": "stalled"},
                          "T3": {"status": "approved", "reason": "approved by the coach and the verify gate"}})
    assert shown["T1"]["cause"] == "max_turns" and shown["T2"]["cause"] == "stalled" and "cause" not in shown["T3"]
