"""Pure routers and retry classification."""

from __future__ import annotations

from langgraph.types import Send

from agents.retry import is_retryable
from agents.types import AgentResult
from orchestrator import routing


def test_after_coach_routes() -> None:
    approve = {"coach": {"decision": {"decision": "approve"}}, "turn": 1}
    feedback = {"coach": {"decision": {"decision": "feedback"}}, "turn": 1}
    assert routing.after_coach(approve, max_turns=3) == "finalize_success"  # type: ignore[arg-type]
    assert routing.after_coach(feedback, max_turns=3) == "feedback"  # type: ignore[arg-type]
    assert routing.after_coach({**feedback, "turn": 3}, max_turns=3) == "finalize_failure"  # type: ignore[arg-type]
    assert routing.after_coach({**approve, "outcome": "failed"}, max_turns=3) == "finalize_failure"  # type: ignore[arg-type]


def test_dispatch_group_sends_only_unfinished_tasks() -> None:
    groups = [["A", "B"], ["C"]]
    sends = routing.dispatch_group({"feature_id": "F", "group_index": 0, "results": {"A": {}}}, groups)
    assert isinstance(sends, list) and [s.arg["task_id"] for s in sends if isinstance(s, Send)] == ["B"]
    assert routing.dispatch_group({"feature_id": "F", "group_index": 1, "results": {"C": {}}}, groups) == "after_group"
    assert routing.dispatch_group({"feature_id": "F", "group_index": 2, "results": {}}, groups) == "finish"


def result(status: str, *errors: str) -> AgentResult:
    return AgentResult(role="player", status=status, errors=list(errors))  # type: ignore[arg-type]


def test_retry_classification() -> None:
    for status in (408, 409, 429, 500, 503, 529):
        assert is_retryable(result("api_error", f"api status {status}: boom")), status
    for status in (400, 413):
        assert not is_retryable(result("api_error", f"api status {status}: bad request")), status
    assert is_retryable(result("timeout"))
    assert is_retryable(result("idle_timeout"))
    assert is_retryable(result("cli_error", "ProcessError: exit -9"))
    for status in ("auth_error", "max_turns", "budget", "cancelled", "success"):
        assert not is_retryable(result(status)), status
