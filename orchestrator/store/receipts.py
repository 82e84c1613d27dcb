"""Receipts: what a task's approved attempt cost against everything else it spent, and a feature's totals.

Pure functions over the run's facts (a task's history and result), so the graph, the reports, `status`, `show`
and `stats` all show the same figures, and a task's receipt always adds up to its cost."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from orchestrator.facts import SUCCESS, Receipt

KINDS = ("rejected_usd", "retries_usd", "conflicts_usd", "replans_usd", "unjudged_usd")
"""The kinds of spend beside the approved attempt: turns the reviewers sent back (or a task that never got
approved), repeated sessions within a turn, conflict-resolution sessions, the planner's replans, and sessions
that ended without a judgement (a failed session, a question)."""
_CONFLICT_ROLES = frozenset({"conflict", "resolver", "merge"})


def _round(value: float) -> float:
    return round(value, 6)


def empty() -> Receipt:
    return Receipt(approved_cost_usd=0.0, approved_turns=0, other_cost_usd=0.0, other_turns=0,
                   other=dict.fromkeys(KINDS, 0.0), replans=0)


def task_receipt(history: Iterable[Mapping[str, Any]], status: str, turns: int, cost_usd: float,
                 *, replan_cost_usd: float = 0.0, replans: int = 0) -> Receipt:
    """A task's receipt from its history: the approved turn's sessions (a successful task's last turn) against
    the rest. Whatever the history doesn't itemise (a session that ended without a judgement) is `unjudged`,
    so the two sides add up to `cost_usd` (which includes `replan_cost_usd`)."""
    entries = list(history)
    approved_turn = turns if status in SUCCESS else None
    receipt = empty()
    approved = 0.0
    read_in = sum(int(entry.get("input_tokens") or 0) for entry in entries)
    if read_in:
        receipt["input_tokens"] = read_in
        receipt["cache_read_tokens"] = sum(int(entry.get("cache_read_tokens") or 0) for entry in entries)
    for entry in entries:
        cost = float(entry.get("cost_usd") or 0.0)
        retry = min(float(entry.get("retry_cost_usd") or 0.0), cost)
        receipt["other"]["retries_usd"] += retry
        if str(entry.get("role")) in _CONFLICT_ROLES:
            receipt["other"]["conflicts_usd"] += cost - retry
        elif entry.get("turn") == approved_turn:
            approved += cost - retry
        else:
            receipt["other"]["rejected_usd"] += cost - retry
    receipt["other"]["replans_usd"] = replan_cost_usd
    itemised = sum(receipt["other"].values())
    receipt["other"]["unjudged_usd"] = max(0.0, cost_usd - approved - itemised)
    receipt["other"] = {kind: _round(value) for kind, value in receipt["other"].items()}
    receipt["approved_cost_usd"] = _round(approved)
    receipt["other_cost_usd"] = _round(max(0.0, cost_usd - approved))
    receipt["approved_turns"] = 1 if approved_turn else 0
    receipt["other_turns"] = max(0, turns - receipt["approved_turns"])
    receipt["replans"] = replans
    return receipt


def of_result(result: Mapping[str, Any]) -> Receipt:
    """The receipt a result carries; an older result without one: everything it cost as `unjudged`."""
    found = result.get("receipt")
    if isinstance(found, dict) and "approved_cost_usd" in found:
        return Receipt(**{**empty(), **found})
    return task_receipt([], str(result.get("status", "")), int(result.get("turns", 0) or 0),
                        float(result.get("cost_usd", 0.0) or 0.0))


def with_earlier(receipt: Receipt, earlier_usd: float, earlier_turns: int = 0) -> Receipt:
    """A task's receipt over all its attempts: what the attempts before this one cost (a failed run, then
    `resume` running it again) and the turns they took are spent beside the approved attempt, as
    `earlier_attempts_usd`."""
    if earlier_usd <= 0.0 and earlier_turns <= 0:
        return receipt
    other = {**receipt["other"], "earlier_attempts_usd": _round(max(0.0, earlier_usd))}
    return Receipt(**{**receipt, "other": other,
                      "other_cost_usd": _round(float(receipt["other_cost_usd"]) + max(0.0, earlier_usd)),
                      "other_turns": int(receipt["other_turns"]) + max(0, earlier_turns)})


def counting_attempts(results: Mapping[str, Mapping[str, Any]], ran: Iterable[str], spent: Mapping[str, float],
                      spent_turns: Mapping[str, int]) -> dict[str, dict[str, Any]]:
    """Results whose `cost_usd` and receipt count every attempt of their task, for the feature's reports: `spent`
    (`spent_turns`) is what each task's attempts cost (took) before this run (`store/outcomes.py`), the tasks in
    `ran` ran again now (their result is a new attempt), the others' results are their latest attempt, already in
    `spent`."""
    counted: dict[str, dict[str, Any]] = {}
    now = set(ran)
    for task_id, result in results.items():
        cost, turns = float(result.get("cost_usd", 0.0) or 0.0), int(result.get("turns", 0) or 0)
        earlier = float(spent.get(task_id, 0.0)) - (0.0 if task_id in now else cost)
        earlier_turns = int(spent_turns.get(task_id, 0)) - (0 if task_id in now else turns)
        counted[task_id] = dict(result) if earlier <= 0.0 and earlier_turns <= 0 else {
            **result, "cost_usd": _round(cost + max(0.0, earlier)),
            "receipt": with_earlier(of_result(result), earlier, earlier_turns)}
    return counted


def total(receipts: Iterable[Receipt]) -> Receipt:
    """A feature's receipt: the sum of its tasks'."""
    summed = empty()
    for receipt in receipts:
        for key in ("approved_cost_usd", "other_cost_usd"):
            summed[key] += float(receipt[key])
        for key in ("approved_turns", "other_turns", "replans"):
            summed[key] += int(receipt[key])  # type: ignore[literal-required]
        for kind, value in receipt["other"].items():
            summed["other"][kind] = summed["other"].get(kind, 0.0) + float(value)
        if receipt.get("input_tokens"):
            summed["input_tokens"] = summed.get("input_tokens", 0) + int(receipt.get("input_tokens", 0))
            summed["cache_read_tokens"] = summed.get("cache_read_tokens", 0) + int(receipt.get("cache_read_tokens", 0))
    summed["approved_cost_usd"] = _round(summed["approved_cost_usd"])
    summed["other_cost_usd"] = _round(summed["other_cost_usd"])
    summed["other"] = {kind: _round(value) for kind, value in summed["other"].items()}
    return summed


def describe(receipt: Receipt, *, cache: bool = True) -> str:
    """"approved attempt $0.0200 (1 turn); everything else $0.0400 (2 turns: rejected $0.0300, retries $0.0100)"."""
    parts = [f"{kind.removesuffix('_usd')} ${value:.4f}" for kind, value in receipt["other"].items() if value]
    other = f"{receipt['other_turns']} turn{'s' if receipt['other_turns'] != 1 else ''}"
    if receipt["replans"]:
        other += f", {receipt['replans']} replan{'s' if receipt['replans'] != 1 else ''}"
    cached = cache_reads(receipt) if cache else None
    return (f"approved attempt ${receipt['approved_cost_usd']:.4f} ({receipt['approved_turns']} turn"
            f"{'s' if receipt['approved_turns'] != 1 else ''}); everything else ${receipt['other_cost_usd']:.4f}"
            f" ({other}{': ' + ', '.join(parts) if parts else ''})" + (f"; {cached}" if cached else ""))


CACHE_READ_PRICE = 0.1
"""A token read from the prompt cache costs a tenth of an input token."""


def cache_read_share(receipt: Receipt) -> float | None:
    """The share of the input tokens that were cache reads (0-1); None: no tokens counted (an older receipt)."""
    read_in = int(receipt.get("input_tokens", 0))
    return min(1.0, int(receipt.get("cache_read_tokens", 0)) / read_in) if read_in > 0 else None


def cache_reads(receipt: Receipt) -> str | None:
    """"cache reads 80% of 12.0k input tokens (at a tenth of the price: input billed at 28% of uncached)"."""
    share = cache_read_share(receipt)
    if share is None:
        return None
    billed = 1 - share * (1 - CACHE_READ_PRICE)
    return (f"cache reads {100 * share:.0f}% of {_tokens(int(receipt.get('input_tokens', 0)))} input tokens (at a"
            f" tenth of the price: input billed at {100 * billed:.0f}% of uncached)")


def _tokens(count: int) -> str:
    return f"{count / 1e6:.1f}M" if count >= 1e6 else f"{count / 1e3:.1f}k" if count >= 1e3 else str(count)
