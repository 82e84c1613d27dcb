"""Graph state: the task loop's state and the workflow's input/output. The facts themselves (results, outcomes,
reviews, the task state's fields) live in orchestrator/facts.py, which views and readers import instead."""

from __future__ import annotations

from typing import TypedDict

from orchestrator.facts import (
    SUCCESS,
    ConflictTurn,
    FeedbackItem,
    HistoryEntry,
    Outcome,
    PlayerTurn,
    Question,
    Review,
    Reviewer,
    Stop,
    TaskResult,
    TaskState,
    Verdict,
    append_list,
)

__all__ = [
    "SUCCESS",
    "ConflictTurn",
    "FeatureInput",
    "FeatureOutput",
    "FeedbackItem",
    "HistoryEntry",
    "Outcome",
    "PlayerTurn",
    "Question",
    "Review",
    "Reviewer",
    "Stop",
    "TaskInput",
    "TaskResult",
    "TaskState",
    "Verdict",
    "append_list",
]


class TaskInput(TypedDict, total=False):
    """What the workflow hands one task subgraph."""

    feature_id: str
    task_id: str
    skip_reason: str | None
    plan_digest: str


class FeatureInput(TypedDict, total=False):
    """The served graph's input: which repo, and which feature (or one task of it)."""

    repo: str
    target: str
    plan: str
    """A plan file where it lies (relative to the repo unless absolute): its feature runs, or `target`, which is
    then its id or one of its tasks. Without it: `.autobuild/features/<target>.yaml`."""
    base_branch: str
    """The base when the plan names none: the branch checked out where the command ran (one of the user's linked
    worktrees, say); without it, the main worktree's branch."""


class FeatureOutput(TypedDict):
    """The workflow's final value: every task's result by id."""

    feature_id: str
    results: dict[str, TaskResult]
