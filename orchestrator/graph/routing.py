"""Pure routers of the task subgraph: state facts in, the next node's name out."""

from __future__ import annotations

from typing import Literal

from orchestrator.graph.state import SUCCESS, Review, TaskState

AfterPlayer = Literal["coach", "precheck", "feedback", "finalize_failure", "ask_human", "player"]


def _turn_review(state: TaskState) -> Review | None:
    """This turn's review, if one was made (a review of an earlier turn is history, not a decision)."""
    review = state.get("review")
    return review if review is not None and review["turn"] == state.get("turn") else None


def _after_feedback_review(state: TaskState, max_turns: int) -> Literal["feedback", "finalize_failure"]:
    return "finalize_failure" if state.get("turn", 1) >= max_turns else "feedback"


def after_initialize(state: TaskState) -> Literal["player", "finalize_failure"]:
    return "finalize_failure" if state.get("stop") else "player"


def after_player(state: TaskState, max_turns: int, precheck: bool = False) -> AfterPlayer:
    """A turn the orchestrator already judged (incomplete, a first blocker, tampering) skips the reviewers; a turn
    a person's `pause --now` cut runs again."""
    if state.get("stop"):
        return "finalize_failure"
    if state.get("question"):
        return "ask_human"
    if state.get("paused_turn") and state.get("paused_turn") == state.get("turn"):
        return "player"  # `pause --now` cut the turn, its work kept: the player runs it again once unpaused
    if _turn_review(state) is not None:
        return _after_feedback_review(state, max_turns)
    return "precheck" if precheck else "coach"


def after_precheck(state: TaskState, max_turns: int) -> Literal["coach", "feedback", "finalize_failure"]:
    """A pre-check "no" goes back to the player without spending a coach session."""
    if state.get("stop"):
        return "finalize_failure"
    if _turn_review(state) is not None:
        return _after_feedback_review(state, max_turns)
    return "coach"


def after_coach(state: TaskState, max_turns: int) -> Literal["finalize_success", "feedback", "finalize_failure"]:
    if state.get("stop"):
        return "finalize_failure"
    review = _turn_review(state)
    if review is not None and review["verdict"] == "approve":
        return "finalize_success"
    return _after_feedback_review(state, max_turns)


def after_feedback(state: TaskState) -> Literal["player", "finalize_failure"]:
    """A stalled loop (three stalled turns in a row) stops instead of burning turns."""
    return "finalize_failure" if state.get("stop") else "player"


def after_finalize_success(state: TaskState) -> Literal["merge", "__end__"]:
    """An approved task lands; one attempt of several ends at its verdict (the selection picks which lands)."""
    result = state.get("result") or {}
    return "merge" if result.get("status") in SUCCESS and not state.get("hold_landing") else "__end__"


def after_merge(state: TaskState) -> Literal["feedback", "__end__"]:
    """Landing either ended the task (landed, or a conflict/failure with no turn left) or handed the player a turn:
    a conflict to resolve, or a gate that failed on the brought-up tree (ordinary feedback)."""
    return "feedback" if state.get("result") is None else "__end__"
