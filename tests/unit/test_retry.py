"""Retry classification (the routers are tested in tests/graph)."""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_agent_sdk import ResultMessage, SystemMessage

from agents.limits import limit_hit
from agents.request import SessionRequest
from agents.retry import is_retryable, short_reason
from agents.stream import Collector
from agents.types import AgentResult


def result(status: str, *errors: str, api_status: int | None = None) -> AgentResult:
    return AgentResult(role="player", status=status, errors=list(errors),  # type: ignore[arg-type]
                       api_status=api_status)


def test_retry_classification() -> None:
    for status in (408, 409, 429, 500, 503, 529):
        assert is_retryable(result("api_error", f"api status {status}: boom", api_status=status)), status
    for status in (400, 413):
        assert not is_retryable(result("api_error", f"api status {status}: bad request", api_status=status)), status
    assert not is_retryable(result("timeout")), "a hung command would hang the same session again"
    assert is_retryable(result("idle_timeout"))
    assert is_retryable(result("cli_error", "ProcessError: exit -9"))
    for status in ("auth_error", "max_turns", "budget", "cancelled", "success"):
        assert not is_retryable(result(status)), status


@pytest.mark.parametrize("text", ["", "api status 400: bad request", "usage limit reached", "api status 429: x"])
def test_decisions_read_the_typed_status_never_the_text(text: str) -> None:
    """Retries, their progress label and the usage-limit gate decide on `api_status`: the errors are human text."""
    limited = result("api_error", *([text] if text else []), api_status=429)
    assert is_retryable(limited) and limit_hit(limited) and short_reason(limited) == "rate limited (429)"
    refused = result("api_error", *([text] if text else []), api_status=400)
    assert not is_retryable(refused) and not limit_hit(refused) and short_reason(refused) == "API error (400)"
    silent = result("api_error", *([text] if text else []))
    assert is_retryable(silent) and not limit_hit(silent) and short_reason(silent) == "connection error"


def test_the_stream_keeps_the_api_status_and_terminal_reason_as_fields(tmp_path: Path) -> None:
    """The SDK's typed fields reach AgentResult as fields; the errors keep the human text beside them."""
    request = SessionRequest(role="player", task_id="T", turn=1, cwd=tmp_path, system_prompt="", prompt="", tools=[])
    collector = Collector(request, AgentResult(role="player", status="success"))
    collector.take(ResultMessage(subtype="success", duration_ms=1, duration_api_ms=1, is_error=True, num_turns=1,
                                 session_id="s", result="API Error: 529 overloaded", api_error_status=529,
                                 terminal_reason="api_error"))
    ended = collector.result
    assert (ended.status, ended.api_status, ended.terminal_reason) == ("api_error", 529, "api_error")
    assert is_retryable(ended) and short_reason(ended) == "overloaded (529)"
    notice = Collector(request, AgentResult(role="player", status="success"))
    notice.take(SystemMessage(subtype="api_retry", data={"status": 429}))
    notice.take(ResultMessage(subtype="success", duration_ms=1, duration_api_ms=1, is_error=True, num_turns=1,
                              session_id="s", result="rate limited", api_error_status=429,
                              terminal_reason="api_error"))
    assert notice.result.api_status == 429 and limit_hit(notice.result)


def test_the_stream_counts_every_input_token_and_the_cache_reads_among_them(tmp_path: Path) -> None:
    """Input is what was sent uncached, written to the cache and read from it; the cache reads are kept apart
    (they cost a tenth of an input token: the receipts and `stats` show their share)."""
    request = SessionRequest(role="player", task_id="T", turn=1, cwd=tmp_path, system_prompt="", prompt="", tools=[])
    collector = Collector(request, AgentResult(role="player", status="success"))
    collector.take(ResultMessage(subtype="success", duration_ms=1, duration_api_ms=1, is_error=False, num_turns=3,
                                 session_id="s", result="done", total_cost_usd=0.02,
                                 usage={"input_tokens": 30, "cache_creation_input_tokens": 170,
                                        "cache_read_input_tokens": 800, "output_tokens": 40}))
    ended = collector.result
    assert (ended.input_tokens, ended.cache_read_tokens, ended.output_tokens) == (1000, 800, 40)
