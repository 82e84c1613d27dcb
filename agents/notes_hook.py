"""Notes from the person supervising a run, into a running session at its next tool boundary: a PostToolUse hook
asks the caller for the notes waiting (the caller's queue decides which, and marks them delivered) and hands them to
the model as the hook's `additionalContext`; each one is written to the session's transcript too."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from agents.request import SessionRequest, emit

PendingNotes = Callable[[], Awaitable[list[str]]]
"""Asked after every tool call: the notes for the session now (each as the model reads it), never the same twice."""
BOUNDARY_EVENTS = ("PostToolUse", "PostToolUseFailure")
"""A tool call ended, well or not: both are a boundary the model reads a hook's context at."""


@dataclass
class SupervisorNotes:
    """What a hook added to the session (one transcript line)."""

    notes: list[str]
    after_tool: str
    tool_use_id: str | None


class Transcribing(Protocol):
    """Whatever writes the session's transcript (agents/stream.py's Transcript)."""

    def write(self, message: object) -> None: ...


@dataclass
class NoteHook:
    """The hook of one session attempt; `transcript` is set once the session's transcript is open."""

    request: SessionRequest
    pending: PendingNotes
    transcript: Transcribing | None = None
    delivered: list[str] = field(default_factory=list)

    async def hook(self, hook_input: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        notes = await self.pending()
        if not notes:
            return {}
        self.delivered.extend(notes)
        tool = str(hook_input.get("tool_name") or "")
        if self.transcript is not None:
            self.transcript.write(SupervisorNotes(list(notes), tool, tool_use_id))
        emit(self.request, {"event": "supervisor_notes", "count": len(notes), "after_tool": tool})
        event = str(hook_input.get("hook_event_name") or "PostToolUse")
        return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": "\n\n".join(notes)}}


def boundary_hooks(hook: NoteHook | None, matcher: Callable[..., Any]) -> dict[str, list[Any]]:
    """The session's hooks for tool boundaries (none without a note source); `matcher` is the SDK's HookMatcher."""
    if hook is None:
        return {}
    return {event: [matcher(matcher=None, hooks=[hook.hook])] for event in BOUNDARY_EVENTS}
