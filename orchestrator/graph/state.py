"""Graph state: facts only (what happened), never control flags; routers derive the next step from them.

Kept small (no transcripts, no accumulating feature results: those live in each task's own subgraph state
and in the workflow's task outputs) and in an importable module so checkpoints round-trip.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypedDict

from orchestrator.gate import GateResult

Outcome = Literal[
    "approved",  # the coach approved and the verify gate passed (and the merge landed)
    "approved-unverified",  # the coach approved, but no verify command could check it
    "failed",  # the loop's verdict: max turns, a stall, an agent session that failed, an integration gate
    "blocked",  # the agent reported the same blocker twice: a human must act
    "conflict",  # approved, but merging into the feature branch conflicted (the task branch is kept)
    "skipped",  # a dependency did not succeed
    "aborted",  # a budget ran out, or a question nobody can answer (--autonomous)
    "error",  # infrastructure (git, disk, a crash in our code): the task is resumable where it stopped
]
SUCCESS: frozenset[str] = frozenset({"approved", "approved-unverified"})

Reviewer = Literal["coach", "precheck", "incomplete", "blocker", "tampering"]
"""Who judged the turn: the coach; the pre-check; the orchestrator (an incomplete turn: no report, no files);
the player itself (a first blocker); the orchestrator (frozen acceptance tests edited)."""
Verdict = Literal["approve", "feedback"]


def append_list(left: list[Any] | None, right: list[Any] | None) -> list[Any]:
    return [*(left or []), *(right or [])]


class FeedbackItem(TypedDict):
    """One concrete problem: where and what."""

    file: str
    line: int | None
    issue: str


class Review(TypedDict):
    """The judgement of one turn, whoever made it."""

    turn: int
    reviewer: Reviewer
    verdict: Verdict
    rationale: str
    items: list[FeedbackItem]
    notes: list[str]
    gate: GateResult | None
    false_approval: bool


class Stop(TypedDict):
    """The task cannot go on: its outcome and why."""

    outcome: Outcome
    reason: str


class Question(TypedDict, total=False):
    """An agent's question waiting for a human."""

    question_id: str
    question: str
    options: list[str]
    task: str
    turn: int


class PlayerTurn(TypedDict):
    """The small part of a player session kept in state (its transcript is a file)."""

    status: str
    report: dict[str, Any] | None
    files: list[str]
    final_text: str
    session_id: str


class HistoryEntry(TypedDict):
    turn: int
    role: str
    status: str
    cost_usd: float
    tokens: int
    sha: str
    summary: str


class TaskResult(TypedDict, total=False):
    """How a task ended: in its subgraph's final state and the workflow's output."""

    status: Outcome
    reason: str
    turns: int
    cost_usd: float
    duration_s: float
    sha: str
    branch: str
    report: str
    merged: bool
    false_approvals: int
    claims_contradicted: int


class TaskInput(TypedDict, total=False):
    """What the workflow hands one task subgraph."""

    feature_id: str
    task_id: str
    skip_reason: str | None
    plan_digest: str


class TaskState(TypedDict, total=False):
    """State of one task's player/coach loop."""

    feature_id: str
    task_id: str
    skip_reason: str | None
    plan_digest: str
    started: float
    turn: int
    worktree: str
    branch: str
    base_sha: str
    head_sha: str
    player: PlayerTurn | None
    review: Review | None
    stop: Stop | None
    question: Question | None
    answers: dict[str, str]
    history: Annotated[list[HistoryEntry], append_list]
    violations: Annotated[list[str], append_list]
    cost_usd: float
    blocker_hashes: list[str]
    stall_count: int
    last_feedback_sig: str
    last_tree: str
    false_approvals: int
    claims_contradicted: int
    result: TaskResult | None


class FeatureInput(TypedDict, total=False):
    """The served graph's input: which repo, and which feature (or one task of it)."""

    repo: str
    target: str
    plan: str
    """A plan file where it lies (relative to the repo unless absolute): its feature runs, or `target`, which is
    then its id or one of its tasks. Without it: `.autobuild/features/<target>.yaml`."""


class FeatureOutput(TypedDict):
    """The workflow's final value: every task's result by id."""

    feature_id: str
    results: dict[str, TaskResult]
