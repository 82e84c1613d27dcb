"""LangSmith tracing of agent sessions, through LangSmith's own Claude Agent SDK integration, on exactly when
LangSmith itself traces.

With tracing on, each session is a `claude.conversation` chain run (metadata: role, task id, turn, and what the
caller adds, e.g. the feature id; tagged with the role) whose children are its model turns (`llm` runs) and
tool calls (`tool` runs). Inside a traced LangGraph node it nests under that node's run. langsmith is imported
only when tracing is on: a session without it never pays for it.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
from collections.abc import Iterator, Mapping

_SWITCHES = ("LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGSMITH_TRACING", "LANGCHAIN_TRACING")


def enabled(environ: Mapping[str, str] | None = None) -> bool:
    """LangSmith's own rule (`langsmith.utils.tracing_is_enabled`), read without importing it: the first of
    LANGSMITH_TRACING_V2, LANGCHAIN_TRACING_V2, LANGSMITH_TRACING, LANGCHAIN_TRACING that is set (not blank)
    decides, and only the exact value `true` turns tracing on. An API key or endpoint alone sends nothing."""
    env = os.environ if environ is None else environ
    for name in _SWITCHES:
        value = env.get(name)
        if value is not None and value.strip():
            return value == "true"
    return False


def instrument() -> None:
    """When tracing is on, apply LangSmith's integration once per process: it patches `ClaudeSDKClient` in
    place (its sessions' responses become runs, and tracing hooks join the options' own `PreToolUse` hooks).
    Call it before a client is created."""
    if enabled():
        _configure_integration()


@functools.cache
def _configure_integration() -> bool:
    try:
        from langsmith.integrations.claude_agent_sdk import configure_claude_agent_sdk  # noqa: PLC0415 - when on

        return configure_claude_agent_sdk()
    except Exception as exc:  # noqa: BLE001 - tracing must never fail a session: it runs untraced
        logging.getLogger(__name__).warning("LangSmith tracing of agent sessions is off: %s", exc)
        return False


@contextlib.contextmanager
def session_scope(role: str, task_id: str, turn: int, metadata: Mapping[str, str]) -> Iterator[None]:
    """Runs started inside (the session's conversation run) carry the session's metadata and its role as a
    tag, so a session's trace is found by feature, task, role and turn. Nothing happens when tracing is off."""
    if not enabled():
        yield
        return
    from langsmith.run_helpers import tracing_context  # noqa: PLC0415 - only when tracing is on

    # tracing_context merges in the enclosing run's metadata (a LangGraph node's), whose `ls_integration` would
    # otherwise relabel the session's run as LangGraph's: keep the integration's own label.
    labels = {**metadata, "role": role, "task_id": task_id, "turn": turn, "ls_integration": "claude-agent-sdk"}
    with tracing_context(metadata=labels, tags=[role]):
        yield
