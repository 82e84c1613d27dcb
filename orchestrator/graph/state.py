"""Graph state: the task loop's state and the workflow's input/output. The facts themselves (results, outcomes,
reviews, the task state's fields) live in orchestrator/facts.py, which views and readers import instead."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from pydantic import ConfigDict, with_config

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
    attempt: int
    """One of the task's independent attempts (graph/attempts.py; absent: the only one)."""
    approach: str
    """That attempt's approach hint, a prompt's name."""
    hold_landing: bool
    """An attempt ends at its verdict: only the one the selection picks lands."""


@with_config(ConfigDict(use_attribute_docstrings=True))  # the docstrings below are the input form's help (Studio)
class FeatureInput(TypedDict, total=False):
    """The served graph's input: which repo, and which feature (or one task of it)."""

    repo: str
    """The target git repository on the server's machine (an absolute path), or `repo_url` instead."""
    target: str
    """The feature to run (`FEAT-001`: `.autobuild/features/FEAT-001.yaml`), or one of its tasks (`TASK-002`)."""
    plan: str
    """A plan file where it lies (relative to the repo unless absolute): its feature runs, or `target`, which is
    then its id or one of its tasks. Without it: `.autobuild/features/<target>.yaml`."""
    repo_url: str
    """A run by URL (instead of `repo`): a git URL without credentials; the run happens on the worker's own clone
    and pushes its `autobuild/` branches there (graph/by_url.py)."""
    base: str
    """With `repo_url`: the branch the feature starts from and the plan is read at (default `main`)."""
    plan_yaml: str
    """With `repo_url`: the plan itself (YAML text), when it is not in the repository at `base`."""
    plan_files: dict[str, str]
    """With `plan_yaml`: its task markdown files, text by path relative to the repository."""
    base_branch: str
    """The base when the plan names none: the branch checked out where the command ran (one of the user's linked
    worktrees, say); without it, the main worktree's branch."""
    rerun: list[str]
    """A finished feature run again (`resume`): only these of its tasks run; the others keep their results."""
    earlier: dict[str, TaskResult]
    """The latest results of the plan's tasks that do not run now (from earlier runs, `run TASK` ones included):
    they settle dependencies and complete the feature report, which never shrinks to the tasks of one run."""
    spent: dict[str, float]
    """What each task's attempts before this run cost (USD): the feature report counts every attempt."""
    spent_turns: dict[str, int]
    """The turns those attempts took."""
    answers: dict[str, dict[str, str]]
    """A run again (`resume`): a person's answers to each task's questions in its earlier runs, by task id (each
    starts with them, as part of its brief: nothing answered is asked again)."""


@with_config(ConfigDict(use_attribute_docstrings=True))
class FeatureOutput(TypedDict):
    """The workflow's final value: every task's result by id."""

    feature_id: str
    """The feature that ran."""
    results: dict[str, TaskResult]
    """Each task's result by its id; its `status` is the task's outcome."""
    refused: NotRequired[str]
    """A served run that refused its input (one line: what is wrong and what to do); nothing ran."""
