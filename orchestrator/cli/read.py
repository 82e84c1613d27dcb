"""The read commands (status, history, show): what a run recorded, as text or JSON."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from orchestrator.cli import output
from orchestrator.errors import InputError
from orchestrator.facts import accepted_summary
from orchestrator.landing.pick import on_rows
from orchestrator.plan.ids import check_id
from orchestrator.plan.model import load_plan
from orchestrator.settings import Settings
from orchestrator.store import inspection, pause, receipts
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.store.run_liveness import said_state
from orchestrator.text import one_line
from orchestrator.views import attempt_report


def repo_and_db(settings: Settings, feature: str | None) -> tuple[Path, CheckpointStore]:
    return settings.repo, CheckpointStore.for_repo(settings.repo, settings.db, feature)


def status(args: argparse.Namespace, settings: Settings) -> int:
    repo, db = repo_and_db(settings, args.feature)
    if not args.feature:
        features = inspection.list_features(db)
        return output.print_document(features, args.json, lambda rows: "\n".join(
            f"{r['thread']:<24} {_run_state(db, r):<12} "
            f"{', '.join(f'{n} {s}' for s, n in sorted(r['tasks'].items())) or 'no task finished'}"
            f"  ${r['cost_usd']:.4f}  updated {r['updated']}" for r in rows) or "no features in " + str(db))
    plan = load_plan(repo, args.feature)
    table = inspection.feature_status(db, plan)
    table["tasks"] = on_rows(table["tasks"], repo, plan.id)  # a person's `pick` over the selection's
    table["paused"] = None if table["finished"] else pause.of_run(repo, plan.id, db, table["thread"])

    def text(data: dict[str, Any]) -> str:
        state = "finished" if data["finished"] else (data["paused"] or said_state(db, plan.id, data["thread"],
                                                                                    "not finished"))
        lines = [f"{data['feature']} ({state}; updated {data['updated']})",
                 f"{'task':<12} {'grp':>3}  {'status':<28} {'turn':>4}  {'decision':<9} {'cost':>9}  reason"]
        for row in data["tasks"]:
            cost = f"${row['cost_usd']:.4f}"  # the sign beside its number, the pair right-aligned
            lines.append(f"{row['task']:<12} {row['group']:>3}  {row['status']:<28} {row['turn']:>4}  "
                         f"{row['last_decision'] or '-':<9} {cost:>9}  {one_line(row['reason'], 100)}")
        lines.append(f"receipt: {receipts.describe(data['receipt'])}")
        lines.append(f"coach claims contradicted: {data['claims_contradicted']}"
                     + (f"; approvals unverified (no gate): {data['unverified']}" if data["unverified"] else ""))
        if summary := accepted_summary(data["accepted_test_changes"]):
            lines.append(summary)
        return "\n".join(lines)

    return output.print_document(table, args.json, text)


def _run_state(store: CheckpointStore, row: dict[str, Any]) -> str:
    """A feature thread's state in `status`'s list: finished, in progress, or stopped (its process is gone)."""
    if row["finished"]:
        return "finished"
    return said_state(store, str(row["thread"]).partition(":")[0], str(row["thread"]), "in progress")


def history(args: argparse.Namespace, settings: Settings) -> int:
    _, db = repo_and_db(settings, args.feature)
    check_id("feature", args.feature)
    timeline = inspection.history(db, args.feature, args.task)
    width = max([len(str(r["task"] or "")) for r in timeline] + [len("feature")])
    return output.print_document(timeline, args.json, lambda rows: "\n".join(
        f"{r['task'] or 'feature':<{width}}  step {r['step']:>3}  {r['time']}  {r['node']:<18} →"
        f" {', '.join(r['next']) or '-':<18}{' turn ' + str(r['turn']) if r['turn'] else ''}"
        f"{' ' + r['decision'] if r['decision'] else ''}" for r in rows))


def feedback_line(item: dict[str, Any]) -> str:
    """A coach's feedback item as `file:line: issue`, with no bare `:` where it names no place."""
    where = f"{item.get('file') or ''}{':' + str(item['line']) if item.get('line') else ''}"
    return f"{where + ': ' if where else ''}{item.get('issue')}"


def show(args: argparse.Namespace, settings: Settings) -> int:
    repo, db = repo_and_db(settings, args.feature)
    plan = inspection.replanned(db, load_plan(repo, args.feature))  # with the tasks replans added
    if args.task:
        if args.task not in plan.task_ids():
            raise InputError(f"{args.feature} has no task {args.task}: tasks are {', '.join(plan.task_ids())}")
        table = inspection.feature_status(db, plan) if db.exists() else None
        if table is not None:
            table["tasks"] = on_rows(table["tasks"], repo, plan.id)
        data = _with_spent(inspection.show_task(repo, plan, args.task), table)
        return output.print_document(data, args.json, _task_text)
    table = inspection.feature_status(db, plan) if db.exists() else None
    data = {"status": table,
            "tasks": [_with_spent(inspection.show_task(repo, plan, task_id), table) for task_id in plan.task_ids()]}
    return output.print_document(data, args.json, lambda d: "\n\n".join(_task_text(t) for t in d["tasks"]) + (
        f"\n\nfeature receipt: {receipts.describe(d['status']['receipt'])}" if d["status"] else ""))


def _with_spent(shown: dict[str, Any], table: dict[str, Any] | None) -> dict[str, Any]:
    """A task's `show` with what `status` counts for it (`spent`: cost and receipt over every attempt)."""
    row = next((r for r in (table or {}).get("tasks", []) if r["task"] == shown["task"]), None)
    return shown | ({"spent": {"cost_usd": row["cost_usd"], "receipt": row["receipt"]}} if row else {}) | (
        attempt_report.of_row(row))


def _task_text(data: dict[str, Any]) -> str:
    attempt = f" (attempt {data['attempts']}: its turns below; every attempt is in its trace)" if data.get(
        "attempts", 1) > 1 else ""
    lines = [f"{data['task']}: {data['name']}{attempt}", "requirements:",
             *[f"  - {r}" for r in data["requirements"]]]
    for turn in data["turns"]:
        player, coach, gate = turn["player"] or {}, turn["coach"] or {}, turn["gate"]
        notes = (player.get("report") or {}).get("implementation_notes", "")
        of = f"attempt {turn['attempt']} " if turn.get("attempt") else ""
        lines.append(f"{of}turn {turn['turn']}: player {player.get('status', '-')}, {len(player.get('files') or [])}"
                     f" file(s); {notes}")
        if gate:
            lines.append(f"  verify: {'passed' if gate['passed'] else 'FAILED'} ({gate['summary']})")
        if coach:
            lines.append(f"  coach: {coach.get('decision')}: {coach.get('rationale')}")
            for item in coach.get("feedback_items") or []:
                lines.append(f"    - {feedback_line(item)}")
        lines.extend(f"  contract violation: {v}" for v in turn["violations"])
    final = data.get("final")
    if final:
        lines.append(f"result: {final.get('status')}: {final.get('reason')}")
        lines.extend(f"  base test changed, accepted by the coach: {change.get('test')}: {change.get('fate')}"
                     f" ({change.get('accepted')})" for change in final.get("test_changes") or [])
        if data.get("replaced_by"):
            lines.append(f"replaced by {', '.join(data['replaced_by'])} (a replan: they carry on its work)")
        if final.get("receipt"):
            lines.append(f"receipt: {receipts.describe(receipts.of_result(final))}")
    if (data.get("attempts", 1) > 1 or data.get("attempt_verdicts")) and data.get("spent"):
        lines.append(f"every attempt: ${data['spent']['cost_usd']:.4f}; {receipts.describe(data['spent']['receipt'])}")
    lines.extend(attempt_report.text_lines(data))
    lines.extend(f"  {path}" for path in data["reports"])
    return "\n".join(lines)
