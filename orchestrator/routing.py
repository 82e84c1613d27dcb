"""Pure routers of the task and feature graphs: state in, next node name (or Sends) out."""

from __future__ import annotations

from typing import Literal

from langgraph.types import Send

from orchestrator.state import FeatureState, TaskState


def after_initialize(state: TaskState) -> Literal["player", "finalize_failure"]:
    return "finalize_failure" if state.get("outcome") else "player"


def after_player(
    state: TaskState, max_turns: int, precheck: bool = False
) -> Literal["coach", "precheck", "feedback", "finalize_failure", "ask_human"]:
    """An incomplete player turn (no report, no artifacts, a first blocker) goes back without a coach session."""
    if state.get("outcome"):
        return "finalize_failure"
    if state.get("pending_question"):
        return "ask_human"
    if state.get("skip_coach"):
        return "finalize_failure" if state.get("turn", 1) >= max_turns else "feedback"
    return "precheck" if precheck else "coach"


def after_precheck(state: TaskState, max_turns: int) -> Literal["coach", "feedback", "finalize_failure"]:
    """A pre-check "no" goes back to the player without spending a coach session."""
    return after_player(state, max_turns)  # type: ignore[return-value]


def after_feedback(state: TaskState) -> Literal["player", "finalize_failure"]:
    """A stalled loop (three stalled turns in a row) stops instead of burning turns."""
    return "finalize_failure" if state.get("outcome") else "player"


def after_coach(state: TaskState, max_turns: int) -> Literal["finalize_success", "feedback", "finalize_failure"]:
    if state.get("outcome"):
        return "finalize_failure"
    decision = ((state.get("coach") or {}).get("decision") or {}).get("decision")
    if decision == "approve":
        return "finalize_success"
    if state.get("turn", 1) >= max_turns:
        return "finalize_failure"
    return "feedback"


def dispatch_group(
    state: FeatureState, groups: list[list[str]]
) -> list[Send] | Literal["after_group", "finish"]:
    """Fan the current group's unfinished tasks out as task subgraphs."""
    index = state.get("group_index", 0)
    if index >= len(groups):
        return "finish"
    results = state.get("results", {})
    pending = [task_id for task_id in groups[index] if task_id not in results]
    if not pending:
        return "after_group"
    return [Send("run_task", {"feature_id": state["feature_id"], "task_id": task_id}) for task_id in pending]
