"""Read-only views of the checkpoint DB and traces for `status`, `history` and `show` (safe during a live run)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchestrator.causes import cause_of
from orchestrator.errors import InputError
from orchestrator.facts import TaskResult, accepted_changes
from orchestrator.jsonout import iso_utc, usd
from orchestrator.plan.model import FeaturePlan
from orchestrator.plan.replacement import MARK, recorded, with_replacements
from orchestrator.store import outcomes, receipts
from orchestrator.store import traces as trace
from orchestrator.store.checkpoints import CheckpointStore, Reader
from orchestrator.store.steering_stores import controls_for
from orchestrator.store.task_control import TaskControls

RETURN = "__return__"
"""The channel under which LangGraph keeps a functional-API @task's return value."""

_GATE_TABLE = ("tests_passed", "tests_failed", "tests_skipped", "failing", "new_failures", "test_changes", "runner",
               "judged_by")
"""A gate run's test table as `show` gives it: its counts, failing and new failures, the base tests it changed."""

_next_nodes, _output, _task_snapshots = outcomes.next_nodes, outcomes.output_of, outcomes.task_snapshots


def replans(store: CheckpointStore, thread_id: str) -> list[Mapping[str, Any]]:
    """The replans the thread's run accepted (its checkpointed planner calls), in the order they were made."""
    with store.reader() as reader:
        values = [value for item in reader.timeline(thread_id) for _, channel, value in item.pending_writes or []
                  if channel == RETURN]
    unique = {(str(value[MARK]), int(value.get("round", 0))): value for value in recorded(values)}
    return list(unique.values())


def replanned(store: CheckpointStore, plan: FeaturePlan, thread_id: str | None = None) -> FeaturePlan:
    """The plan as the run works from it: the file's, with the tasks replans added (the file is never edited)."""
    if not store.exists():
        return plan
    found = replans(store, thread_id or plan.id)
    return with_replacements(plan, found) if found else plan


def task_results(store: CheckpointStore, thread_id: str) -> dict[str, TaskResult]:
    """Every finished task's result: the workflow's output, or each task subgraph's own (mid-run)."""
    with store.reader() as reader:
        latest = reader.latest(thread_id)
        output = _output(latest.checkpoint.get("channel_values", {})) if latest else None
        if output is not None:
            return dict(output.get("results", {}))
        snapshots = _task_snapshots(reader, thread_id)
    return {task_id: snap["result"] for task_id, snap in snapshots.items() if snap.get("result")
            and (snap["result"].get("merged") or not snap["_next"])}


def task_facts(store: CheckpointStore, thread_id: str) -> dict[str, dict[str, Any]]:
    """The latest checkpointed state of every task subgraph of the thread, by task id."""
    with store.reader() as reader:
        return _task_snapshots(reader, thread_id)


def list_features(store: CheckpointStore) -> list[dict[str, Any]]:
    """Every feature thread in the store with a one-line summary."""
    rows = []
    with store.reader() as reader:
        threads = [(thread_id, reader.latest(thread_id)) for thread_id in reader.threads()]
        # A feature's row costs what `status FEAT` counts (every attempt, its one-task threads' too); a one-task
        # thread's row, its own attempts.
        spent = {thread_id: sum(outcomes.read_truth(reader, thread_id).spent.values()) for thread_id, _ in threads}
    for thread_id, latest in threads:
        if latest is None:
            continue
        finished = _output(latest.checkpoint.get("channel_values", {})) is not None
        results = task_results(store, thread_id)
        counts: dict[str, int] = {}
        for result in results.values():
            counts[result.get("status", "?")] = counts.get(result.get("status", "?"), 0) + 1
        rows.append({
            "thread": thread_id,
            "finished": finished,
            "updated": iso_utc(latest.checkpoint.get("ts")),
            "tasks": counts,
            "cost_usd": usd(max(spent[thread_id], sum(float(r.get("cost_usd", 0.0)) for r in results.values()))),
        })
    return rows


def feature_status(store: CheckpointStore, plan: FeaturePlan, thread_id: str | None = None,
                   repo: Path | None = None) -> dict[str, Any]:
    """The task table of one feature: status, turn, last decision, cost, duration (also mid-run). Each task's
    row is its latest finished attempt, whichever of the feature's runs made it (`store/outcomes.py`), or the
    attempt running now."""
    thread_id = thread_id or plan.id
    with store.reader() as reader:
        latest = reader.latest(thread_id)
        truth = outcomes.read_truth(reader, plan.id, (thread_id,) if thread_id != plan.id else ())
        if latest is None and not truth.threads:
            raise InputError(f"{thread_id} has no checkpoint in {store}: run it first")
        updated = max((str(tip.checkpoint["ts"]) for tip in map(reader.latest, truth.threads) if tip), default=None)
    found = replans(store, thread_id)
    plan = with_replacements(plan, found) if found else plan
    replaced_by = {str(r[MARK]): [str(t["id"]) for t in r["tasks"]] for r in found}
    output = _output(latest.checkpoint.get("channel_values", {})) if latest else None
    tasks: list[dict[str, Any]] = []
    results: dict[str, dict[str, Any]] = {}
    for group_number, group in enumerate(plan.groups(), 1):
        for task_id in group:
            row, results[task_id] = _task_row(truth, task_id, group_number, replaced_by.get(task_id))
            tasks.append(row)
    _mark_paused(store, plan.id, [row for row in tasks if not results[row["task"]]], repo)
    return {
        "feature": plan.id,
        "thread": thread_id,
        "finished": output is not None and not truth.live,
        "updated": iso_utc(updated),
        "cost_usd": usd(sum(row["cost_usd"] for row in tasks)),
        "claims_contradicted": sum(row["claims_contradicted"] for row in tasks),
        "unverified": sum(1 for row in tasks if row["status"] == "approved-unverified"),
        "receipt": receipts.total(row["receipt"] for row in tasks),
        "accepted_test_changes": accepted_changes(results, [row["task"] for row in tasks]),
        "tasks": tasks,
    }


def _task_row(truth: outcomes.FeatureTruth, task_id: str, group_number: int,
              replaced_by: list[str] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """A task's row of `status` (its latest finished attempt, or the one running now), and its result as
    recorded (`{}` while it runs): what its accepted test changes are read from."""
    live = truth.live.get(task_id)
    result: dict[str, Any] | None = None if live else dict(truth.result_of(task_id) or {}) or None
    recorded = result or {}
    snap = truth.snapshots.get(task_id, {})
    review = snap.get("review") or {}
    if replaced_by is not None and (result or {}).get("status") != "replaced":
        # replaced while its own task still runs its replacements: say so already
        result = dict(result or {}) | {"status": "replaced", "reason": f"replaced by {', '.join(replaced_by)}"}
    latest_usd = float(result.get("cost_usd", 0.0) if result else snap.get("cost_usd", 0.0))
    spent = max(truth.spent.get(task_id, latest_usd), latest_usd)  # every attempt's cost, this one's too
    latest_turns = int(result.get("turns", 0) if result else snap.get("turn", 0))
    earlier_turns = truth.spent_turns.get(task_id, latest_turns) - latest_turns
    receipt = receipts.of_result(result) if result else receipts.task_receipt(
        snap.get("history") or [], "", int(snap.get("turn", 0)), float(snap.get("cost_usd", 0.0)))
    row = {
        "task": task_id,
        "group": group_number,
        "status": _task_status(result, snap, live),
        "turn": int(result.get("turns", 0) if result else snap.get("turn", 0)),
        "last_decision": review.get("verdict") if review.get("reviewer") == "coach" else None,
        "cost_usd": usd(spent),
        "duration_s": round(float(result.get("duration_s", 0.0)), 3) if result else None,
        "reason": result.get("reason", "") if result else (snap.get("_error") or ""),
        "cause": cause_of(result),
        "pending_question": None if result else snap.get("question"),
        "claims_contradicted": int((result or snap).get("claims_contradicted", 0)),
        "receipt": receipts.with_earlier(receipt, spent - latest_usd, earlier_turns),
    }
    return row | attempt_fields(recorded), recorded


def _mark_paused(store: CheckpointStore, feature: str, unfinished: list[dict[str, Any]], repo: Path | None) -> None:
    """Unfinished tasks a person paused (`autobuild pause`) say `paused` (store/task_control.py); in a Postgres
    store, which many repositories share, only when the caller names the repository."""
    if not unfinished or (store.is_postgres and repo is None):
        return
    controls = controls_for(repo, feature, store.location) if repo else TaskControls(store.path)
    for row in unfinished:
        if controls.control(feature, row["task"]).paused is not None:
            row["status"] = "paused"


def attempt_fields(result: Mapping[str, Any]) -> dict[str, Any]:
    """A task run as several attempts: each one's verdict, the pick and why (nothing for a task's only loop)."""
    if not result.get("attempts"):
        return {}
    return {"attempt_verdicts": list(result["attempts"]), "picked": result.get("picked"),
            "pick": result.get("pick", ""), "attempts_policy": result.get("attempts_policy")} | (
        {"selection": result["selection"]} if result.get("selection") else {})


def _task_status(result: dict[str, Any] | None, snap: dict[str, Any], live: dict[str, Any] | None) -> str:
    """What `status` says of a task: its outcome, else where its latest attempt stands."""
    if result:
        status: str = result.get("status", "?")
        return status
    if snap.get("_error"):
        return "error (resumable)"
    if snap.get("question"):
        return "waiting for an answer"
    if live:
        return f"running ({', '.join(snap['_next']) or 'finishing'})"
    return "pending"


def history(store: CheckpointStore, thread_id: str, task_id: str | None = None) -> list[dict[str, Any]]:
    """Checkpoint timeline: step, node that produced it, time, decision (feature or one task's subgraph)."""
    with store.reader() as reader:
        namespaces = [ns for ns, snap in _task_namespaces(reader, thread_id) if task_id in (None, snap)]
        if task_id and not namespaces:
            raise InputError(f"{thread_id} has no checkpoints for task {task_id}")
        produced_by = reader.produced_by(thread_id)
        timeline = []
        for namespace in ([] if task_id else [""]) + namespaces:
            for item in reader.timeline(thread_id, namespace):
                values = item.checkpoint.get("channel_values", {})
                parent = item.parent_config["configurable"]["checkpoint_id"] if item.parent_config else None
                review = values.get("review") or {}
                timeline.append({
                    "task": values.get("task_id"),
                    "step": item.metadata.get("step"),
                    "node": ", ".join(produced_by.get(parent, [])) if parent else "input",
                    "time": iso_utc(item.checkpoint.get("ts")),
                    "next": _next_nodes(values),
                    "turn": values.get("turn"),
                    "decision": review.get("verdict") if review.get("reviewer") == "coach" else None,
                    "checkpoint_id": item.checkpoint["id"],
                })
    if not task_id:
        timeline.sort(key=lambda row: str(row["time"]))
    return timeline


def _task_namespaces(reader: Reader, thread_id: str) -> list[tuple[str, Any]]:
    found = []
    for namespace in reader.namespaces(thread_id, outcomes.TASK_NS_MARK):
        latest = reader.latest(thread_id, namespace)
        if latest is not None:
            found.append((namespace, latest.checkpoint.get("channel_values", {}).get("task_id")))
    return found


def show_task(repo: Path, plan: FeaturePlan, task_id: str) -> dict[str, Any]:
    """Requirements, per-turn reports, feedback, gate results, violations and report paths of one task."""
    task = plan.task(task_id)
    events = trace.read(repo, plan.id, task_id)
    # Each run of the task (the feature's, `run TASK`, a `resume` running it again) starts an attempt: shown is the
    # latest, the one every other view reads its outcome from.
    # Several attempts of one run start together (`attempts_start`): their turns are shown each with its attempt.
    starts = [i for i, e in enumerate(events) if e.get("event") in ("initialize", "skipped", "attempts_start")
              and not (e.get("event") == "initialize" and e.get("attempt"))]
    events = events[starts[-1]:] if starts else events
    turns: dict[tuple[int, int], dict[str, Any]] = {}
    for event in events:
        turn = event.get("turn")
        if not isinstance(turn, int):
            continue
        attempt = event.get("attempt")
        entry = turns.setdefault((int(attempt or 0), turn), {"turn": turn, "player": None, "coach": None,
                                                             "gate": None, "violations": []}
                                 | ({"attempt": attempt} if attempt else {}))
        kind = event.get("event")
        if kind == "player_report":
            entry["player"] = {k: event.get(k) for k in ("status", "report", "files", "session_id", "sha")}
            entry["player"]["cost_usd"] = usd(event.get("cost_usd"))
        elif kind == "coach_decision":
            keys = ("decision", "rationale", "feedback_items", "session_id")
            entry["coach"] = {**{k: event.get(k) for k in keys}, "cost_usd": usd(event.get("cost_usd"))}
        elif kind == "gate":
            entry["gate"] = {k: event.get(k) for k in ("passed", "command", "summary", "output")} | {
                k: event[k] for k in _GATE_TABLE if k in event}  # the test table the page shows
        elif kind == "contract_violation":
            entry["violations"].append(event.get("detail"))
    folder = trace.runs_dir(repo, plan.id, task_id)
    return {
        "feature": plan.id,
        "task": task_id,
        "name": task.name,
        "requirements": [*task.requirements, *([task.description] if task.description else [])],
        "acceptance_criteria": task.acceptance_criteria,
        "attempts": max(1, len(starts)),
        "turns": [turns[key] for key in sorted(turns)],
        "final": _final(events),
        "replaced_by": next((list(e.get("tasks") or []) for e in reversed(events) if e.get("event") == "replan"), []),
        "reports": sorted(str(p) for p in folder.glob("*")) if folder.is_dir() else [],
    }


def _final(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The task's last `finalize`: of several attempts, the picked one's (the one that landed, or would have)."""
    picked = next((e.get("picked") for e in reversed(events) if e.get("event") == "selection"), None)
    finals = [e for e in events if e.get("event") == "finalize"]
    return next((e for e in reversed(finals) if picked is None or e.get("attempt") == picked),
                finals[-1] if finals else None)


def results_json(results: dict[str, Any]) -> dict[str, Any]:
    """Task results as `--json` shows them: costs to 4 decimals, durations to milliseconds, with their cause."""
    shown: dict[str, Any] = {}
    for task_id, result in results.items():
        row = dict(result)
        if "cost_usd" in row:
            row["cost_usd"] = usd(row["cost_usd"])
        if "duration_s" in row:
            row["duration_s"] = round(float(row["duration_s"]), 3)
        if (cause := cause_of(row)) is not None:  # a result recorded before causes were: derived
            row["cause"] = cause
        shown[task_id] = row
    return shown
