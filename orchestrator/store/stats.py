"""The loop's scorecard (`autobuild stats`): every feature in the store, read-only, measured against the seed's
targets (>= 70% of tasks completed without a human, <= 4 turns per approved task, no false approvals).

`task_facts` reads what the checkpoints hold per task; `scorecard` is a pure function of those facts, so its
figures can be checked exactly."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from orchestrator.causes import StopCause, cause_of
from orchestrator.errors import InputError
from orchestrator.facts import SUCCESS, Receipt
from orchestrator.jsonout import iso_utc, usd
from orchestrator.store import outcomes, receipts
from orchestrator.store.checkpoints import CheckpointStore

TARGETS = {"completed_without_human_pct": 70.0, "turns_per_approved_task": 4.0, "false_approvals_missed": 0}
"""The seed's bar for the loop itself."""
NOT_COUNTED = frozenset({"skipped", "replaced"})
"""Outcomes that are not a task's own result: a task that never ran, and one the planner split into others
(its replacements are counted instead; the split itself shows as a replan)."""


@dataclass
class TaskFacts:
    """What the scorecard needs of one finished task."""

    feature: str
    task: str
    status: str
    turns: int
    cost_usd: float
    started: float | None = None
    answers: int = 0
    """Questions a human answered during the task."""
    false_approvals: int = 0
    claims_contradicted: int = 0
    violations: int = 0
    replans: int = 0
    accepted_test_changes: int = 0
    """Base tests the approving coach accepted changing."""
    receipt: Receipt | None = None
    """None: computed from status, turns and cost (everything as `unjudged`)."""
    cause: StopCause | None = None
    """Why it stopped without an approval (None: approved)."""
    attempts: int = 1
    """Independent attempts it ran as (`--attempts`; 1: one loop)."""
    won_by: int | None = None
    """Of several attempts, the one whose work landed (None: one attempt, or none landed)."""


def parse_since(text: str | None) -> float | None:
    """`--since 2026-11-01` (or any ISO-8601 time; a date is midnight UTC) as epoch seconds."""
    if text is None:
        return None
    try:  # a time at the calendar's edge (0001-01-01T00:00+23:59) is out of range only once moved to UTC
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC).timestamp()
    except (ValueError, OverflowError):
        shown = repr(text[:40]) + ("…" if len(text) > 40 else "")
        raise InputError(f"--since {shown} is not a date: use YYYY-MM-DD or an ISO-8601 time") from None


def task_facts(store: CheckpointStore) -> list[TaskFacts]:
    """Every finished task of every feature in the store (tasks still running are left out): each task's latest
    finished attempt, whichever of the feature's runs made it (`store/outcomes.py`), costing every attempt."""
    found = []
    with store.reader() as reader:
        features = sorted({thread.split(":", 1)[0] for thread in reader.threads()})
        truths = {feature: outcomes.read_truth(reader, feature) for feature in features}
    for feature, truth in truths.items():
        for task_id, attempt in sorted(truth.results.items()):
            result, state = attempt.result, truth.snapshots.get(task_id, {})
            cost = float(result.get("cost_usd", 0.0) or 0.0)
            spent = max(truth.spent.get(task_id, cost), cost)
            turns = int(result.get("turns", 0) or 0)
            receipt = receipts.with_earlier(receipts.of_result(result), spent - cost,
                                            truth.spent_turns.get(task_id, turns) - turns)
            found.append(TaskFacts(
                feature=feature, task=task_id, status=str(result.get("status", "")),
                turns=int(result.get("turns", 0) or 0), cost_usd=spent,
                started=float(state["started"]) if state.get("started") else None,
                answers=len(state.get("answers") or {}),
                false_approvals=int(result.get("false_approvals", 0) or 0),
                claims_contradicted=int(result.get("claims_contradicted", 0) or 0),
                violations=len(state.get("violations") or []),
                replans=max(int(receipt["replans"]), 1 if result.get("status") == "replaced" else 0),
                accepted_test_changes=len(result.get("test_changes") or []), receipt=receipt,
                cause=cause_of(result), **_attempts(result),
            ))
    return found


def _attempts(result: Mapping[str, Any]) -> dict[str, Any]:
    """A task's attempts and the one that won, from its result (graph/attempts.py)."""
    records = result.get("attempts") or []
    landed = [int(r["attempt"]) for r in records if r.get("landed")]
    return {"attempts": len(records) or 1, "won_by": landed[0] if landed else None}


def attempts_card(facts: list[TaskFacts]) -> dict[str, Any]:
    """Attempts per task, and how often attempt k won (its work landed) among the tasks run as several."""
    several = [f for f in facts if f.attempts > 1]
    wins: dict[str, int] = {}
    for fact in several:
        if fact.won_by is not None:
            wins[str(fact.won_by)] = wins.get(str(fact.won_by), 0) + 1
    return {"tasks_with_attempts": len(several), "attempts_per_task": _ratio(sum(f.attempts for f in facts),
                                                                             len(facts), 2),
            "won_by_attempt": dict(sorted(wins.items(), key=lambda item: int(item[0])))}


def _ratio(part: float, whole: float, digits: int = 1) -> float | None:
    return round(part / whole, digits) if whole else None


def scorecard(facts: Iterable[TaskFacts], since: float | None = None) -> dict[str, Any]:
    """The figures, from the finished tasks started at or after `since` (every one without it)."""
    chosen = [f for f in facts if since is None or (f.started is not None and f.started >= since)]
    counted = [f for f in chosen if f.status not in NOT_COUNTED]
    approved = [f for f in counted if f.status in SUCCESS]
    unattended = [f for f in approved if f.answers == 0]
    outcomes: dict[str, int] = {}
    stopped_by: dict[str, int] = {}
    for fact in chosen:
        outcomes[fact.status] = outcomes.get(fact.status, 0) + 1
        if fact.cause is not None:
            stopped_by[fact.cause] = stopped_by.get(fact.cause, 0) + 1
    cost = sum(f.cost_usd for f in chosen)
    turns_per_approved = _ratio(sum(f.turns for f in approved), len(approved), 2)
    first_turn = sum(1 for f in approved if f.turns == 1)
    unverified = sum(1 for f in approved if f.status == "approved-unverified")
    without_human = _ratio(100.0 * len(unattended), len(counted))
    receipt = receipts.total(f.receipt or receipts.of_result({"status": f.status, "turns": f.turns,
                                                              "cost_usd": f.cost_usd}) for f in chosen)
    cached = receipts.cache_read_share(receipt)
    return {
        "since": iso_utc(since) if since is not None else None,
        "features": len({f.feature for f in chosen}),
        "tasks": len(counted),
        "approved": len(approved),
        "outcomes": dict(sorted(outcomes.items())),
        "stopped_by": dict(sorted(stopped_by.items())),
        "completed_without_human": len(unattended),
        "completed_without_human_pct": without_human,
        "turns_per_approved_task": turns_per_approved,
        "first_turn_approvals": first_turn,
        "first_turn_approval_pct": _ratio(100.0 * first_turn, len(approved)),
        "false_approvals_caught": sum(f.false_approvals for f in chosen),
        "unverified_approvals": unverified,
        "approvals_with_accepted_test_changes": sum(1 for f in approved if f.accepted_test_changes),
        "claims_contradicted": sum(f.claims_contradicted for f in chosen),
        "contract_violations": sum(f.violations for f in chosen),
        "replans": sum(f.replans for f in chosen),
        "cost_usd": usd(cost),
        "cost_per_approved_task_usd": usd(cost / len(approved)) if approved else None,
        "receipt": receipt,
        "cache_read_pct": None if cached is None else round(100 * cached, 1),
        "attempts": attempts_card(counted),
        "targets": {
            "completed_without_human_pct": {"target": f">= {TARGETS['completed_without_human_pct']:.0f}%",
                                            "met": None if without_human is None else
                                            without_human >= TARGETS["completed_without_human_pct"]},
            "turns_per_approved_task": {"target": f"<= {TARGETS['turns_per_approved_task']:.0f}",
                                        "met": None if turns_per_approved is None else
                                        turns_per_approved <= TARGETS["turns_per_approved_task"]},
            "false_approvals": {"target": "none gets through, none unverified (the gate catches the false ones it"
                                          " checks)", "met": unverified == 0},
        },
    }
