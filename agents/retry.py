"""Which session failures are worth another attempt, and the single tenacity policy that retries them.

One layer retries each error: the CLI is told not to retry (CLAUDE_CODE_MAX_RETRIES=0 in the session
env), so API errors surface at once and this policy owns backoff.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_result,
    stop_after_attempt,
    wait_random_exponential,
)

from agents.limits import limit_hit
from agents.types import AgentResult

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}


def is_retryable(result: AgentResult) -> bool:
    """Transient failures: rate limits, overload, 5xx, connection errors, a killed CLI, a model that went
    silent. Never the session timeout: the same session would hang on the same command again."""
    if result.status in ("idle_timeout", "cli_error"):
        return True
    if result.status != "api_error":
        return False
    status = result.api_status
    return status is None or status in RETRYABLE_STATUS or status >= 500


def short_reason(result: AgentResult) -> str:
    """A progress-friendly reason: "rate limited (429)", "overloaded (529)", "session timeout"…"""
    if result.status in ("timeout", "idle_timeout"):
        return "session timeout" if result.status == "timeout" else "idle timeout"
    if result.status == "cli_error":
        return "Claude Code CLI failed"
    status = result.api_status
    labels = {429: "rate limited", 529: "overloaded", 408: "request timeout", 409: "conflict"}
    if status is None:
        return "connection error"
    return f"{labels.get(status, 'server error' if status >= 500 else 'API error')} ({status})"


def retrying(
    attempts: int, max_wait_s: float, on_retry: Callable[[RetryCallState], Any] | None = None,
    skip_limits: bool = False,
) -> AsyncRetrying:
    """Exponential backoff with full jitter capped at `max_wait_s`, bounded attempts. With `skip_limits`, a
    rate or usage limit is handed back at once (the run's usage-limit gate pauses everything instead)."""

    def retry(result: AgentResult) -> bool:
        return is_retryable(result) and not (skip_limits and limit_hit(result))

    return AsyncRetrying(
        stop=stop_after_attempt(max(1, attempts)),
        wait=wait_random_exponential(multiplier=1, max=max_wait_s),
        retry=retry_if_result(retry),
        before_sleep=on_retry,
        retry_error_callback=lambda state: state.outcome.result() if state.outcome else None,
        reraise=True,
    )
