"""The facts a run produces, in one low module: task outcomes and results, reviews, the task loop's state, and
the gate's runs. The graph writes them; views, store readers and landing read them; nothing here imports above.

Kept small (no transcripts: those live in files) and importable, so checkpoints round-trip (TypedDicts come back
as plain dicts; old checkpoints may lack keys added later, so readers use `.get`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, Literal, NotRequired, TypedDict

from orchestrator.causes import StopCause

TestFate = Literal["gone", "moved", "skipped", "xfailed", "failing", "changed expectation", "fewer passing",
                   "weakened", "knows it is tested", "passes only with the task's test side", "new test can't fail",
                   "too large to judge"]
"""What became of a test that passed on the base (gate/spec/accounting.py)."""


class Acceptance(TypedDict):
    """The coach's acceptance of a base test's change: the test id or its file, and the requirement it serves."""

    test: str
    reason: str


class TestChange(TypedDict):
    """A test that passed on the base and does not pass, as such, on the judged tree."""

    test: str
    fate: TestFate
    detail: str
    file: str | None  # the base file it lives in, where known
    accepted: str | None  # the coach's reason (None: not accepted)


class Observation(TypedDict):
    """What one run of a gate command showed (exit status, counts, test ids, output): no verdict. GateResult is
    the record of a run with the verdict gate/verdict.py decided on it."""

    command: str | None
    summary: str
    output: str
    exit_code: int | None
    tests_passed: int | None  # None: the runner reported no counts
    tests_failed: int | None
    failing: list[str] | None  # failing test ids; None: the runner reported no ids
    new_failures: list[str]  # failing now, not on the base
    ran_classes: list[str] | None  # JUnit classnames (pytest) or ids of the tests that ran, skips not included
    # Added later (older checkpoints lack them: read with .get):
    tests_skipped: NotRequired[int | None]
    skipped: NotRequired[list[str] | None]  # skipped tests as "id (reason)" where the runner names them
    runner: NotRequired[str | None]  # the test runner(s) recognised ("pytest", "go test+cargo test"); None: none
    judged_by: NotRequired[str]  # "test ids" | "counts" (--judge-by-counts) | "exit status" (no runner)
    passing: NotRequired[list[str] | None]  # passing test ids (None: counted only); kept for base runs
    skipped_ids: NotRequired[list[str]]
    xfailed: NotRequired[list[str]]
    test_changes: NotRequired[list[TestChange]]  # base tests that don't pass here, and what became of them
    unverified: NotRequired[list[str]]  # new tests the gate only skipped, or whose code the tamper screen flags
    unstable: NotRequired[list[str]]  # a base run's tests present in only one of its two runs: not accounted
    load_errors: NotRequired[list[str]]  # failures that are a test file failing to load or build (no_baseline.py)
    not_a_baseline: NotRequired[str]  # a base run: why it is none, when a task repairs it (every test must pass)
    reads: NotRequired[dict[str, list[str]]]  # a base run's pytest tests -> the files each read (gate/observe/reads.py)
    tampering: NotRequired[list[str]]  # accounts of the run that disagree, "subject: what" (gate/observe/crosscheck.py)
    channel: NotRequired[list[str]]  # the runners the gate's channel heard in this run
    tracked_changed: NotRequired[list[str] | None]  # tracked files the run changed (None: not a git worktree)


class GateResult(Observation):
    """The orchestrator's own run of a gate command and its verdict (a fact for state, traces and reports): the
    observation with `passed` and what the verdict added, all written by gate/verdict.py alone."""

    passed: bool
    rules: NotRequired[str]  # the verdict rules' version it was decided by (gate/verdict.py VERDICT_RULES)
    new_tests_failing_on_base: NotRequired[int]  # the task's new tests that failed on the base's code (new_tests.py)


class PackageGate(TypedDict):
    """One package of a monorepo, gated on its own: its folder (relative to the repo's top, "." the top), its
    command and where that came from, the packages it depends on, and its run on the base (None: not run yet)."""

    path: str
    command: str
    source: str
    depends_on: list[str]
    base: GateResult | None


class GateSetup(TypedDict):
    """The gate of one run, decided and checked once before any agent session: the command and where it came
    from, the worktree setup, and the command's run on the base (None when there is no command). A monorepo's
    gate is per package (`packages`; `command` then runs them all, for whatever needs one command)."""

    command: str | None
    source: str
    setup: str | None
    base: GateResult | None
    packages: NotRequired[list[PackageGate]]
    base_sha: NotRequired[str]  # the commit `base` ran on

Outcome = Literal[
    "approved",  # the coach approved and the verify gate passed (and the merge landed)
    "approved-unverified",  # the coach approved, but no verify command could check it
    "failed",  # the loop's verdict: max turns, a stall, an agent session that failed, an integration gate
    "blocked",  # the agent reported the same blocker twice: a human must act
    "conflict",  # approved, but merging into the feature branch conflicted (the task branch is kept)
    "skipped",  # a dependency did not succeed
    "aborted",  # a budget ran out, or a question nobody can answer (--autonomous)
    "error",  # infrastructure (git, disk, a crash in our code): the task is resumable where it stopped
    "replaced",  # failed at max turns or stalled, and split by the planner into tasks that replaced it (--replan)
    "cancelled",  # a person cancelled it (`autobuild cancel`, the page): `resume` runs it again
]
SUCCESS: frozenset[str] = frozenset({"approved", "approved-unverified"})
FAILED: frozenset[str] = frozenset({"failed", "blocked", "aborted", "conflict", "error"})
"""The outcomes that count as a task's failure (shown red, notified)."""


class AcceptedChange(TypedDict):
    """A base test approved work changed, accepted by its coach: where a false approval could hide."""

    task: str
    test: str
    fate: str
    detail: str
    reason: str


def accepted_changes(results: Mapping[str, Mapping[str, Any]], tasks: Iterable[str] | None = None
                     ) -> list[AcceptedChange]:
    """The accepted base-test changes of the approved tasks among `results` (`tasks`, in that order: all of them
    without it); a test moved unchanged needs no acceptance and is left out."""
    found = []
    for task in tasks if tasks is not None else results:
        result = results.get(task) or {}
        if result.get("status") not in SUCCESS:
            continue
        found += [AcceptedChange(task=task, test=str(change.get("test")), fate=str(change.get("fate")),
                                 detail=str(change.get("detail") or ""), reason=str(change.get("accepted")))
                  for change in result.get("test_changes") or []
                  if change.get("accepted") and change.get("accepted") != "moved unchanged"]
    return found


def accepted_summary(changes: Sequence[AcceptedChange], shown: int = 10) -> str:
    """`2 base tests changed, accepted by the coach: TASK-001: t::x: gone (reason); …` ("" when none)."""
    if not changes:
        return ""
    named = "; ".join(f"{c['task']}: {c['test']}: {c['fate']} ({c['reason']})" for c in changes[:shown])
    more = f"; and {len(changes) - shown} more" if len(changes) > shown else ""
    plural = "s" if len(changes) > 1 else ""
    return f"{len(changes)} base test{plural} changed, accepted by the coach: {named}{more}"


def settled(results: dict[str, Any], task_id: str) -> bool:
    """Did the task's work get done: approved, or `replaced` by tasks that all got done? (A replaced task fails
    neither the run nor `land`; its replacements decide.)"""
    result = results.get(task_id) or {}
    if result.get("status") == "replaced":
        return bool(result.get("replaced_by")) and all(settled(results, t) for t in result["replaced_by"])
    return result.get("status") in SUCCESS


def run_order(order: list[str], results: dict[str, Any]) -> list[str]:
    """The plan's order with the tasks that replaced a task right after it (a replan's tasks)."""
    found: list[str] = []

    def add(task_id: str) -> None:
        found.append(task_id)
        for new_id in (results.get(task_id) or {}).get("replaced_by") or []:
            if new_id not in found:
                add(str(new_id))

    for task_id in order:
        if task_id not in found:
            add(task_id)
    return found

Reviewer = Literal["coach", "precheck", "incomplete", "blocker", "tampering", "merge"]
"""Who judged the turn: the coach; the pre-check; the orchestrator (an incomplete turn: no report, no files);
the player itself (a first blocker); the orchestrator (frozen acceptance tests edited); landing (bringing the
approved work up to the feature head conflicted, or the gate failed on the brought-up tree)."""
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
    accepted_tests: NotRequired[list[Acceptance]]  # the coach's test_changes_accepted with this decision


def review_of(turn: int, reviewer: Reviewer, rationale: str, *, verdict: Verdict = "feedback",
              items: Iterable[FeedbackItem] = (), notes: Iterable[str] = (), gate: GateResult | None = None) -> Review:
    """A turn's review, with what most reviews leave empty left empty (no items, notes or gate run; no false
    approval: only the coach's approval that the gate overturns is one, and it says so)."""
    return Review(turn=turn, reviewer=reviewer, verdict=verdict, rationale=rationale, items=list(items),
                  notes=list(notes), gate=gate, false_approval=False)


class Stop(TypedDict):
    """The task cannot go on: its outcome, why (the cause to decide on), and why in words."""

    outcome: Outcome
    reason: str
    cause: StopCause  # added by issue 34: older checkpoints lack it (read with `cause_of`)


class Question(TypedDict, total=False):
    """An agent's question waiting for a human."""

    question_id: str
    question: str
    options: list[str]
    task: str
    turn: int


class PlayerReport(TypedDict):
    """The player's `report_progress` call (agents/tools.py's schema), as `player_report` reads it."""

    task_id: str
    files_modified: list[str]
    tests_written: list[str]
    implementation_notes: str


class PlayerTurn(TypedDict):
    """The small part of a player session kept in state (its transcript is a file)."""

    status: str
    report: dict[str, Any] | None  # the report's arguments as the model sent them: read with `player_report`
    files: list[str]
    final_text: str
    session_id: str


def player_report(state: Mapping[str, Any]) -> PlayerReport:
    """The last player turn's report in a task's state, its lists as strings (all empty without a report)."""
    player = state.get("player")
    raw: Mapping[str, Any] = (player.get("report") if player else None) or {}
    return PlayerReport(task_id=str(raw.get("task_id") or ""),
                        files_modified=[str(path) for path in raw.get("files_modified") or []],
                        tests_written=[str(path) for path in raw.get("tests_written") or []],
                        implementation_notes=str(raw.get("implementation_notes") or ""))


class HistoryEntry(TypedDict):
    turn: int
    role: str
    status: str
    cost_usd: float
    tokens: int
    sha: str
    summary: str
    retry_cost_usd: NotRequired[float]  # what this turn's repeated sessions of the role cost (in cost_usd)
    input_tokens: NotRequired[int]  # every input token of the turn's sessions of the role (in tokens)
    cache_read_tokens: NotRequired[int]  # the part of input_tokens read from the prompt cache


class Receipt(TypedDict):
    """What a task's (or a feature's) work cost: the approved attempt against everything else.

    `approved_*` is the turn that was approved (its player, pre-check and coach sessions, without retries);
    `other_*` is the rest, broken down in `other` by kind (`rejected_usd`, `retries_usd`, `conflicts_usd`,
    `replans_usd`, `unjudged_usd`: sessions that ended without a judgement).
    approved_cost_usd + other_cost_usd == the task's cost_usd."""

    approved_cost_usd: float
    approved_turns: int
    other_cost_usd: float
    other_turns: int
    other: dict[str, float]
    replans: int
    input_tokens: NotRequired[int]
    """Every input token of the sessions counted (older receipts lack it)."""
    cache_read_tokens: NotRequired[int]
    """The part of `input_tokens` read from the prompt cache, at a tenth of an input token's price."""


class AttemptRecord(TypedDict, total=False):
    """One of a task's independent attempts, as the task's result lists them (graph/attempts.py): its verdict,
    what the selection ranked it by, and whether it was picked."""

    attempt: int
    status: str  # an Outcome, or "cancelled" (a sibling won first) / "not started"
    reason: str
    verified: bool  # approved with the gate's confirmation (`approved`)
    turns: int
    cost_usd: float
    branch: str
    sha: str
    approach: str  # the approach hint its player had ("" for none)
    model: str | None  # the player's model when `attempt_models` named one
    accepted_changes: int  # base-test / test-side changes its coach accepted
    failing_on_base: int | None  # the task's new tests shown to fail on the base's code (None: not known)
    rank: int | None  # its place in the selection's order (1 = first choice); None: not a candidate
    picked: bool
    landed: bool  # it is the work on the feature branch
    refused: str  # why its landing was refused (the next candidate was tried)
    confirmed_by: int | None  # sibling candidates' new-test suites its code passed (cross-testing; None: not run)
    why_not: str  # why it was not picked: the selector's reason, else the key it lost on
    base_sha: str  # the commit it started from (`pick` re-merges its change: base_sha..sha)
    receipt: Receipt  # what this attempt alone cost, approved turn against the rest (the task's adds them up)


class CrossCell(TypedDict):
    """One cell of the cross-test matrix: attempt `tests_of`'s new tests run on attempt `code_of`'s code."""

    tests_of: int
    code_of: int
    outcome: str  # passed | failed | no tests | not run
    failing: list[str]
    detail: str


class SelectionRecord(TypedDict, total=False):
    """How the selection among a task's attempts decided (graph/attempt_choice.py), beside the attempts' records."""

    by: str  # policy | keys | cross-tests | consensus | selector | fallback (the selector failed or did not decide)
    tied: list[int]  # the candidates the keys tied (cross-tested; the selector chose among those still tied)
    cross_tests: list[CrossCell]
    cross_tests_s: float  # the cross-tests' wall time (they spend no model money)
    confirmed: dict[str, int]  # attempt -> how many tied siblings' new-test suites its code passed
    unshared: dict[str, int]  # cross-test leader -> its code lines no tied sibling changed (graph/attempt_consensus.py)
    selector: dict[str, Any]  # chosen, reasons {attempt: why not}, status, note, cost_usd
    cost_usd: float  # the selector's cost (in the task's)


class TaskResult(TypedDict, total=False):
    """How a task ended: in its subgraph's final state and the workflow's output."""

    status: Outcome
    reason: str
    cause: StopCause  # a task that ended without an approval (older results lack it: read with `cause_of`)
    turns: int
    cost_usd: float
    duration_s: float
    sha: str
    branch: str
    report: str
    merged: bool
    false_approvals: int
    claims_contradicted: int
    receipt: Receipt
    replaced_by: list[str]  # a `replaced` task: the ids of the tasks that replaced it
    replacement: dict[str, Any]  # and, once they ended, `{"tasks": [their specs], "results": {id: result}}`
    conflict_turns: int  # player turns spent resolving a merge conflict with the feature head
    test_changes_accepted: list[Acceptance]  # the approving coach's acceptances (they cover its landing too)
    test_changes: list[TestChange]  # base tests the approved work changed, each accepted by the coach
    attempts: list[AttemptRecord]  # a task run as several attempts (issue 40): each one's verdict, in order
    picked: int | None  # the attempt that landed or would have (None: no candidate)
    pick: str  # why that one: the selection's keys, or the policy (`first`: the first verified approval)
    attempts_policy: str  # first | best
    selection: SelectionRecord  # how the pick was decided: the cross-test matrix, the selector's reasons, costs
    answers: dict[str, str]  # a person's answers to its questions, by question: a run of it again starts with them


class ConflictTurn(TypedDict):
    """A player turn that resolves a conflict with the feature head: the merge is re-created from these facts
    at the start of the turn (also on resume), so the markers are always the same."""

    turn: int
    head: str  # the feature head being merged into the task branch
    files: list[str]
    description: str


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
    conflict: ConflictTurn | None  # added by issue 24; older checkpoints lack it (read with .get)
    conflict_turns: int
    attempt: int  # issue 40: which of the task's attempts this loop is (absent: 1, the only one)
    approach: str  # the attempt's approach hint (a prompt's name; absent: none)
    hold_landing: bool  # an attempt ends at its verdict: the selection decides which one lands
    more_candidates: bool  # landing a picked attempt: a refusal ends it, another candidate is tried
    carried_usd: float  # landing a picked attempt: the cost its own loop already counted (not counted twice)
    carried_turns: int
    unsaved_usd: float  # landing a picked attempt: what cancelled siblings spent after their last checkpoint
    notes_delivered: list[int]  # issue 41: the steering notes the last player turn carried (read with .get)
    paused_turn: int | None  # issue 41: a turn `pause --now` cut, its work kept: the player runs it again
