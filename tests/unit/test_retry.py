"""Retry classification (the routers are tested in tests/graph)."""

from __future__ import annotations

from agents.retry import is_retryable
from agents.types import AgentResult


def result(status: str, *errors: str) -> AgentResult:
    return AgentResult(role="player", status=status, errors=list(errors))  # type: ignore[arg-type]


def test_retry_classification() -> None:
    for status in (408, 409, 429, 500, 503, 529):
        assert is_retryable(result("api_error", f"api status {status}: boom")), status
    for status in (400, 413):
        assert not is_retryable(result("api_error", f"api status {status}: bad request")), status
    assert not is_retryable(result("timeout")), "a hung command would hang the same session again"
    assert is_retryable(result("idle_timeout"))
    assert is_retryable(result("cli_error", "ProcessError: exit -9"))
    for status in ("auth_error", "max_turns", "budget", "cancelled", "success"):
        assert not is_retryable(result(status)), status
