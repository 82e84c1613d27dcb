"""A task's attempts as records (graph/attempts.py runs them): what each attempt's `@task` hands back, what the
selection knows of it, what the task's result says of it, and the task's result combined from them. Pure."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from orchestrator.facts import AttemptRecord, Receipt, TaskResult
from orchestrator.graph.selection import Candidate, Selection
from orchestrator.store import receipts

APPROACHES = ("attempt_smallest", "attempt_pattern", "attempt_test_first")
"""The approach hints (prompts/ by name) the attempts' players get in turn: the smallest change; the codebase's
nearest pattern; the failing test first."""


def approach(attempt: int) -> str:
    """The approach hint of attempt k (taken in turn)."""
    return APPROACHES[(attempt - 1) % len(APPROACHES)]


class AttemptOutcome(TypedDict):
    """What one attempt's `@task` hands back (checkpointed): its loop's final state, or that it was cancelled."""

    attempt: int
    state: dict[str, Any]
    cancelled: bool
    finished_at: float
    cost_usd: float
    unsaved_usd: NotRequired[float]
    """Cancelled: what its sessions spent after its loop's last checkpoint (in cost_usd; the landing's checkpoint
    counts it for `status`). Absent in older checkpoints."""


def as_candidate(outcome: AttemptOutcome) -> Candidate:
    """What the selection knows of an attempt, from its outcome."""
    result = outcome["state"].get("result") or {}
    accepted = [change for change in result.get("test_changes") or []
                if change.get("accepted") and change.get("accepted") != "moved unchanged"]
    gate = (outcome["state"].get("review") or {}).get("gate") or {}
    return Candidate(attempt=outcome["attempt"], status="cancelled" if outcome["cancelled"] else
                     str(result.get("status", "error")), accepted_changes=len(accepted),
                     failing_on_base=gate.get("new_tests_failing_on_base"), finished_at=outcome["finished_at"])


def record(outcome: AttemptOutcome, selection: Selection) -> AttemptRecord:
    """What the task's result says of one attempt: its verdict, its keys, its rank in the selection."""
    state = outcome["state"]
    result = state.get("result") or {}
    candidate = as_candidate(outcome)
    rank_of = selection.order.index(candidate.attempt) + 1 if candidate.attempt in selection.order else None
    return AttemptRecord(attempt=candidate.attempt, status=candidate.status, reason=str(result.get("reason", "")),
                         verified=candidate.verified, turns=int(result.get("turns", state.get("turn", 0)) or 0),
                         cost_usd=round(outcome["cost_usd"], 6), branch=str(state.get("branch", "")),
                         sha=str(result.get("sha", "")), base_sha=str(state.get("base_sha", "")),
                         approach=approach(candidate.attempt),
                         accepted_changes=candidate.accepted_changes, failing_on_base=candidate.failing_on_base,
                         rank=rank_of, picked=candidate.attempt == selection.picked, landed=False,
                         receipt=receipts.of_result(result) if result else
                         receipts.task_receipt([], candidate.status, 0, outcome["cost_usd"]))


def combined(final: dict[str, Any], records: dict[int, AttemptRecord], selection: Selection,
             outcomes: dict[int, AttemptOutcome], policy: str) -> dict[str, Any]:
    """The task's final state: the landing's (or the standing failure's) result, its cost every attempt's, its
    receipt the standing attempt's with the siblings beside it, and every attempt's record with the pick."""
    result = TaskResult(**(final.get("result") or {}))  # type: ignore[typeddict-item]
    landed_extra = float(result.get("cost_usd", 0.0)) - float(final.get("carried_usd", result.get("cost_usd", 0.0)))
    total = sum(outcome["cost_usd"] for outcome in outcomes.values()) + max(0.0, landed_extra)
    own = int(final.get("attempt") or 0)
    siblings = [records[a] for a in records if a != own]
    # The task's receipt: its standing attempt's, with every sibling attempt spent beside it.
    receipt = receipts.of_result(result)
    sibling_usd = round(sum(float(r.get("cost_usd") or 0.0) for r in siblings), 6)
    result["receipt"] = Receipt(**{
        **receipt, "other": {**receipt["other"], "sibling_attempts_usd": sibling_usd},
        "other_cost_usd": round(float(receipt["other_cost_usd"]) + sibling_usd, 6),
        "other_turns": int(receipt["other_turns"]) + sum(int(r.get("turns") or 0) for r in siblings)})
    result["cost_usd"] = round(total, 6)
    result["attempts"] = list(records.values())
    landed = [attempt for attempt, record in records.items() if record.get("landed")]
    result["picked"] = landed[0] if landed else selection.picked
    result["pick"] = selection.reason
    result["attempts_policy"] = policy
    return {**final, "result": result}
