"""The facts a run produces, in one low module: task outcomes and results, reviews, the task loop's state, and
the gate's runs. The graph writes them; views, store readers and landing read them; nothing here imports above.

Kept small (no transcripts: those live in files) and importable, so checkpoints round-trip (TypedDicts come back
as plain dicts; old checkpoints may lack keys added later, so readers use `.get`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypedDict


class GateResult(TypedDict):
    """The orchestrator's own run of a gate command (a fact for state, traces and reports)."""

    passed: bool
    command: str | None
    summary: str
    output: str
    exit_code: int | None
    tests_passed: int | None  # None: the runner reported no counts
    tests_failed: int | None
    failing: list[str] | None  # failing test ids; None: the runner reported no ids
    new_failures: list[str]  # failing now, not on the base
    ran_classes: list[str] | None  # JUnit classnames of every test that ran (modules/classes; None: no ids)


class GateSetup(TypedDict):
    """The gate of one run, decided and checked once before any agent session: the command and where it came
    from, the worktree setup, and the command's run on the base (None when there is no command)."""

    command: str | None
    source: str
    setup: str | None
    base: GateResult | None

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
    user_changes: Annotated[list[str], append_list]
    """Changes the user made to their repository during a session (kept, never reverted), for the report."""
    cost_usd: float
    blocker_hashes: list[str]
    stall_count: int
    last_feedback_sig: str
    last_tree: str
    false_approvals: int
    claims_contradicted: int
    result: TaskResult | None
