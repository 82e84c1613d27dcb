"""The one event model: what happened, as nodes write it to LangGraph's stream writer and to the task's trace
file; consumed alike by the live view, `--json` lines, traces, notifications and served runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.jsonout import SCHEMA_VERSION, now_utc

EventSink = Callable[[dict[str, Any]], None]
"""Where a command's events go (the live view, `--json` lines, notifications)."""

EventKind = Literal[
    # the feature workflow
    "feature_start", "resume", "task_ready", "feature_end", "task_error", "pull_request",
    # the task loop
    "initialize", "player_start", "player_report", "coach_validate", "coach_decision", "precheck", "gate",
    "feedback", "stall", "blocker", "contract_violation", "frozen_test_tampering", "question_asked",
    "question_answered", "question_aborted", "budget_raised", "budget_reached", "finalize", "skipped", "merge",
    "landing", "integration_gate",
    "repo_tampering", "user_state_changed", "sandbox_refused", "sandbox_unavailable",
    "command_hung", "session_interrupted", "usage_limit", "usage_limit_over", "usage_pause_yield", "replan_start",
    "replan", "replan_refused", "note_delivered", "note_consumed", "task_cancelled",
    # a person steering a running task (issue 41): written by `steer`, `pause`, `unpause`, `cancel` and the page
    "note_accepted", "pause_requested", "unpause_requested", "cancel_requested", "task_paused", "task_unpaused",
    "session_paused", "answer_given", "pause_dropped",
    # a task's attempts (issue 40)
    "attempts_start", "attempt_start", "attempt_end", "attempt_cancelled", "selection", "attempt_refused",
    "cross_tests", "selector_start", "selector",
    "attempts_queue",
    # agent sessions (agents/ emits these as plain dicts)
    "session_start", "session_end", "tool", "retry", "question_answered_in_session", "supervisor_notes",
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
