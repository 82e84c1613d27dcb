"""The one event model: written by nodes to LangGraph's stream writer (`stream_mode="custom"`) and to the
task's trace file; consumed alike by the live view, `--json` lines, traces and served runs."""

from __future__ import annotations

from typing import Any, Literal

from langgraph.types import StreamWriter
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.jsonout import SCHEMA_VERSION, now_utc
from orchestrator.store import traces as trace

EventKind = Literal[
    # the feature workflow
    "feature_start", "resume", "task_ready", "feature_end", "task_error",
    # the task loop
    "initialize", "player_start", "player_report", "coach_validate", "coach_decision", "precheck", "gate",
    "feedback", "stall", "blocker", "contract_violation", "frozen_test_tampering", "question_asked",
    "question_answered", "question_aborted", "finalize", "skipped", "merge", "integration_gate", "repo_tampering",
    "command_hung", "usage_limit", "usage_limit_over",
    # agent sessions (agents/ emits these as plain dicts)
    "session_start", "session_end", "tool", "retry", "question_answered_in_session",
    # the CLI and the planner
    "interrupt", "branch_set_aside", "plan_invalid", "plan_warning",
]


class Event(BaseModel):
    """One thing that happened. Common fields are typed; each kind adds its own fields (kept flat)."""

    model_config = ConfigDict(extra="allow")

    schema_version: int = SCHEMA_VERSION
    event: EventKind
    time: str = Field(default_factory=now_utc)
    """ISO-8601 UTC, milliseconds."""
    feature: str | None = None
    task: str | None = None
    turn: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


def event_dict(kind: EventKind, **fields: Any) -> dict[str, Any]:
    """One event as the sinks receive it (for emitters outside a task's EventLog: the CLI, runner, planner)."""
    return Event(event=kind, **fields).to_dict()


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
            self.writer(Event(event=kind, feature=self.feature_id, task=task, **fields).to_dict())
