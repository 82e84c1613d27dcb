"""Every router of the task subgraph, on state facts alone."""

from __future__ import annotations

from typing import Any

from orchestrator.graph import routing
from orchestrator.graph.state import Review, TaskState


def review(turn: int, reviewer: Any = "coach", verdict: Any = "feedback") -> Review:
    return Review(turn=turn, reviewer=reviewer, verdict=verdict, rationale="r", items=[], notes=[], gate=None,
                  false_approval=False)


def state(**facts: Any) -> TaskState:
    return TaskState(**{"turn": 1, **facts})  # type: ignore[typeddict-item]


STOP: Any = {"outcome": "failed", "reason": "x"}


def test_after_initialize() -> None:
    assert routing.after_initialize(state()) == "player"
    assert routing.after_initialize(state(stop=STOP)) == "finalize_failure"


def test_after_player() -> None:
    assert routing.after_player(state(), max_turns=3) == "coach"
    assert routing.after_player(state(), max_turns=3, precheck=True) == "precheck"
    assert routing.after_player(state(stop=STOP), max_turns=3) == "finalize_failure"
    assert routing.after_player(state(question={"question": "?"}), max_turns=3) == "ask_human"
    for reviewer in ("incomplete", "blocker", "tampering"):
        judged = state(review=review(1, reviewer))
        assert routing.after_player(judged, max_turns=3) == "feedback"
        assert routing.after_player({**judged, "turn": 3, "review": review(3, reviewer)}, max_turns=3) == \
            "finalize_failure"
    # a review of an earlier turn is history: this turn still goes to the coach
    assert routing.after_player(state(turn=2, review=review(1)), max_turns=3) == "coach"


def test_after_precheck() -> None:
    assert routing.after_precheck(state(), max_turns=3) == "coach"
    assert routing.after_precheck(state(review=review(1, "precheck")), max_turns=3) == "feedback"
    assert routing.after_precheck(state(stop=STOP), max_turns=3) == "finalize_failure"


def test_after_coach() -> None:
    assert routing.after_coach(state(review=review(1, verdict="approve")), max_turns=3) == "finalize_success"
    assert routing.after_coach(state(review=review(1)), max_turns=3) == "feedback"
    assert routing.after_coach(state(turn=3, review=review(3)), max_turns=3) == "finalize_failure"
    assert routing.after_coach(state(review=review(1, verdict="approve"), stop=STOP), max_turns=3) == \
        "finalize_failure"


def test_after_feedback_and_finalize() -> None:
    assert routing.after_feedback(state()) == "player"
    assert routing.after_feedback(state(stop=STOP)) == "finalize_failure"
    assert routing.after_finalize_success(state(result={"status": "approved"})) == "merge"
    assert routing.after_finalize_success(state(result={"status": "approved-unverified"})) == "merge"
    assert routing.after_finalize_success(state(result={"status": "failed"})) == "__end__"
