"""LangSmith tracing for a command's lifetime: a client that never holds the process, flushed at the end.

LangGraph traces the graph's runs itself and `agents.tracing` the sessions, both only when LangSmith's own
switch is on (`LANGSMITH_TRACING=true`; see `agents.tracing.enabled`). What this adds for the CLI: langsmith's
default client sends from non-daemon threads, so an endpoint that is down or stuck held a finished run's exit
for minutes (measured: a 6 s run exited after 137-194 s). Here the threads are daemon threads, synchronous calls
time out after seconds, and the command flushes for at most `FLUSH_TIMEOUT_S` before it exits.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

from agents.tracing import enabled

FLUSH_TIMEOUT_S = 10.0
"""The longest a command waits at its end for queued traces (the `trace_flush_timeout` setting overrides)."""
_TIMEOUT_MS = (3_000, 10_000)
"""(connect, read) for the client's own calls (its `/info`); langsmith's background sends use the same."""


@contextlib.contextmanager
def traced(flush_timeout: float = FLUSH_TIMEOUT_S) -> Iterator[None]:
    """Around a command that runs the graph or agent sessions. Nothing happens when tracing is off."""
    if not enabled():
        yield
        return
    try:
        client = _client()
    except Exception as exc:  # noqa: BLE001 - tracing must never fail a run
        print(f"note: LangSmith tracing not set up: {exc}", file=sys.stderr)
        client = None
    try:
        yield
    finally:
        if client is not None:
            _flush(client, flush_timeout)


def _client() -> Any:
    import langsmith
    from langsmith import utils

    # langsmith's own switches (read, and cached, as its client starts): sender threads that never hold the
    # process, and no compressed sends, which go through a thread pool whose workers the exit waits for.
    # An explicit setting of either wins.
    os.environ.setdefault("LANGSMITH_USE_DAEMON", "true")
    os.environ.setdefault("LANGSMITH_DISABLE_RUN_COMPRESSION", "true")
    utils.get_env_var.cache_clear()  # type: ignore[attr-defined]  # lru_cache under typing overloads
    client = langsmith.Client(timeout_ms=_TIMEOUT_MS)
    langsmith.configure(client=client)  # what LangGraph's tracer and the sessions' runs use
    return client


def _flush(client: Any, timeout: float) -> None:
    """Send what is still queued, for at most `timeout` s; say so when some of it could not be sent."""
    try:
        client.flush(timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - tracing must never fail a run
        print(f"note: LangSmith traces not flushed: {exc}", file=sys.stderr)
        return
    queue = getattr(client, "tracing_queue", None)
    if queue is not None and queue.unfinished_tasks:
        print(f"note: some LangSmith traces were not sent within {timeout:g}s"
              f" ({client.api_url} is down or slow); the run itself is unaffected", file=sys.stderr)


def tracing_check() -> tuple[bool, str]:
    """What `doctor` says about tracing (never a key): off is fine; on without an API key is not."""
    if not enabled():
        return True, "off (LANGSMITH_TRACING=true and LANGSMITH_API_KEY trace the graph and sessions to LangSmith)"
    endpoint = tracing_endpoint()
    has_key = bool(_env("API_KEY"))
    return has_key, (f"on: project {_env('PROJECT') or 'default'} at {endpoint}, LANGSMITH_API_KEY"
                     f" {'is set (value not shown)' if has_key else 'is NOT set: LangSmith will refuse the traces'}")


def tracing_endpoint() -> str | None:
    """Where traces go (langsmith's default: the hosted service), or None when tracing is off."""
    return (_env("ENDPOINT") or "https://api.smith.langchain.com") if enabled() else None


def _env(name: str) -> str | None:
    """A LangSmith setting as langsmith reads it: LANGSMITH_<NAME>, else LANGCHAIN_<NAME>."""
    return os.environ.get(f"LANGSMITH_{name}") or os.environ.get(f"LANGCHAIN_{name}") or None
