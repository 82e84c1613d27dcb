"""`autobuild stats [--since DATE]`: the loop's scorecard over every feature in the store, against the seed's
targets (text, or one JSON document with `--json`)."""

from __future__ import annotations

import argparse
from typing import Any

from orchestrator.cli.output import print_document
from orchestrator.settings import Settings
from orchestrator.store import receipts
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.store.stats import parse_since, scorecard, task_facts


def stats_command(args: argparse.Namespace, settings: Settings) -> int:
    since = parse_since(args.since)  # before touching the store: a bad date is a usage error
    store = CheckpointStore.for_repo(settings.repo, settings.db)
    card = scorecard(task_facts(store) if store.exists() else [], since)
    card["store"] = str(store)
    return print_document(card, args.json, _text)


def _figure(value: Any, unit: str = "") -> str:
    return "-" if value is None else f"{value}{unit}"


def _met(card: dict[str, Any], name: str) -> str:
    """"; target >= 70%: met", after a figure and its one parenthesis (never a parenthesis inside another)."""
    target = card["targets"][name]
    verdict = {True: "met", False: "MISSED", None: "no data"}[target["met"]]
    return f"; target {target['target']}: {verdict}"


def _text(card: dict[str, Any]) -> str:
    if not card["tasks"] and not card["outcomes"]:
        return f"no finished tasks in {card['store']}" + (f" since {card['since']}" if card["since"] else "")
    outcomes = ", ".join(f"{count} {status}" for status, count in card["outcomes"].items())
    cost_per = card["cost_per_approved_task_usd"]
    return "\n".join([
        f"{card['features']} feature(s), {card['tasks']} task(s) counted: {outcomes}"
        + (f" (since {card['since']})" if card["since"] else ""),
        f"completed without a human:    {card['completed_without_human']} of {card['tasks']}"
        f" ({_figure(card['completed_without_human_pct'], '%')}){_met(card, 'completed_without_human_pct')}",
        f"turns per approved task:      {_figure(card['turns_per_approved_task'])}"
        f"{_met(card, 'turns_per_approved_task')}",
        f"first-turn approvals:         {card['first_turn_approvals']} of {card['approved']}"
        f" ({_figure(card['first_turn_approval_pct'], '%')})",
        f"false approvals caught:       {card['false_approvals_caught']} (coach approvals the gate overturned)",
        f"unverified approvals:         {card['unverified_approvals']} (no gate could check them)"
        f"{_met(card, 'false_approvals')}",
        f"with accepted test changes:   {card['approvals_with_accepted_test_changes']} (base tests the coach let"
        " change: where a false approval could hide, with unverified ones)",
        f"coach claims contradicted:    {card['claims_contradicted']}",
        f"contract violations:          {card['contract_violations']}",
        f"replans:                      {card['replans']}",
        f"cost:                         ${card['cost_usd']:.4f}"
        + (f", ${cost_per:.4f} per approved task" if cost_per is not None else ""),
        f"receipt:                      {receipts.describe(card['receipt'], cache=False)}",
        f"cache reads:                  {receipts.cache_reads(card['receipt']) or '- (no tokens counted)'}",
        *_attempt_lines(card.get("attempts") or {}),
    ])


def _attempt_lines(attempts: dict[str, Any]) -> list[str]:
    """Attempts per task and which attempt won how often, when any task ran as several (`--attempts`)."""
    if not attempts.get("tasks_with_attempts"):
        return []
    wins = ", ".join(f"attempt {k} {count}x" for k, count in attempts["won_by_attempt"].items()) or "none landed"
    return [f"attempts:                     {attempts['attempts_per_task']} per task;"
            f" {attempts['tasks_with_attempts']} task(s) ran several, won by {wins}"]
