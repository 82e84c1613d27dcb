"""Where a task's (or the feature's) events go in a graph run: its trace file and LangGraph's stream writer
(`stream_mode="custom"`). The event model itself is orchestrator/events.py."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from langgraph.types import StreamWriter

from orchestrator.events import Event, EventKind, event_dict
from orchestrator.store import traces as trace

__all__ = ["ATTEMPT", "Event", "EventKind", "EventLog", "event_dict"]

ATTEMPT: ContextVar[int] = ContextVar("autobuild_attempt", default=0)
"""The task attempt whose loop runs in this context (graph/attempts.py sets it around each attempt's subgraph, whose
nodes inherit it): its events carry `attempt`. 0: a task's only loop, whose events are as they always were."""


def _no_writer(_: Any) -> None:
    """Outside a graph run (e.g. the CLI's own notices) there is no stream to write to."""


class EventLog:
    """Where one task's (or the feature's) events go: its trace file (the feature's own events: the feature's
    trace, which keeps its usage-limit pauses for the timeline) and the graph's stream."""

    def __init__(self, repo: Any, feature_id: str, writer: StreamWriter | None) -> None:
        self.repo = repo
        self.feature_id = feature_id
        self.writer: StreamWriter = writer or _no_writer

    def __call__(self, kind: EventKind, task: str | None = None, **data: Any) -> Event:
        if task is not None and (attempt := ATTEMPT.get()) and "attempt" not in data:
            data["attempt"] = attempt
        event = Event(event=kind, feature=self.feature_id, task=task, **data)
        record = event.to_dict()
        trace.append(self.repo, self.feature_id, task, record)  # the feature's own events: its trace
        self.writer(record)
        return event

    def session_event(self, data: dict[str, Any]) -> None:
        """An agent session's event (plain dict from agents/): retries and ends go to the trace too."""
        kind = data.get("event")
        fields = {k: v for k, v in data.items() if k not in ("event", "task", "feature")}
        task = str(data["task"]) if data.get("task") else None
        if kind in ("retry", "session_end") and task:
            self(kind, task, **fields)
        elif kind in ("session_start", "tool", "question_answered_in_session"):
            if task is not None and (attempt := ATTEMPT.get()) and "attempt" not in fields:
                fields["attempt"] = attempt  # which of several attempts is running that command
            self.writer(Event(event=kind, feature=self.feature_id, task=task, **fields).to_dict())
