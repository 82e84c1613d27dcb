"""Graph state types. Kept small (no transcripts) and in an importable module so checkpoints round-trip."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypedDict

TaskOutcome = Literal["approved", "failed", "blocked", "skipped", "conflict", "aborted"]


def merge_dicts(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer: results from concurrent task branches are merged key by key."""
    return {**(left or {}), **(right or {})}


def append_list(left: list[Any] | None, right: list[Any] | None) -> list[Any]:
    return [*(left or []), *(right or [])]


class TaskResult(TypedDict, total=False):
    """What a finished task leaves in the feature state."""

    status: TaskOutcome
    reason: str
    turns: int
    cost_usd: float
    duration_s: float
    sha: str
    branch: str
    report: str
    merged: bool
    false_approvals: int


class TaskInput(TypedDict):
    """What the feature graph sends to one task subgraph."""

    feature_id: str
    task_id: str


class TaskOutput(TypedDict):
    """What a task subgraph hands back to the feature graph."""

    results: Annotated[dict[str, TaskResult], merge_dicts]


class TaskState(TypedDict, total=False):
    """State of one task's player/coach loop."""

    feature_id: str
    task_id: str
    started: float
    turn: int
    worktree: str
    branch: str
    base_sha: str
    head_sha: str
    player: dict[str, Any] | None
    coach: dict[str, Any] | None
    feedback: list[dict[str, Any]]
    feedback_notes: list[str]
    history: Annotated[list[dict[str, Any]], append_list]
    violations: Annotated[list[str], append_list]
    cost_usd: float
    outcome: TaskOutcome | None
    reason: str
    blocker_hashes: list[str]
    skip_coach: bool
    stall_count: int
    last_feedback_sig: str
    last_tree: str
    false_approvals: int
    pending_question: dict[str, Any] | None
    answers: dict[str, str]
    results: Annotated[dict[str, TaskResult], merge_dicts]


class FeatureState(TypedDict, total=False):
    """State of the feature graph (one LangGraph thread per feature)."""

    feature_id: str
    only_task: str | None
    started: float
    group_index: int
    feature_sha: str
    finished_at: float | None
    results: Annotated[dict[str, TaskResult], merge_dicts]
