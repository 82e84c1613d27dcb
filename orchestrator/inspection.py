"""Read-only views of the checkpoint DB and traces for `status`, `history` and `show` (safe during a live run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple
from langgraph.constants import TASKS
from langgraph.types import Send

from orchestrator import trace
from orchestrator.errors import InputError
from orchestrator.plan import FeaturePlan
from orchestrator.store import CheckpointStore, Reader

TASK_NS_PREFIX = "run_task:"


def _next_nodes(values: dict[str, Any]) -> list[str]:
    return sorted(key.removeprefix("branch:to:") for key in values if key.startswith("branch:to:"))


def list_features(store: CheckpointStore) -> list[dict[str, Any]]:
    """Every feature thread in the store with a one-line summary."""
    rows = []
    with store.reader() as reader:
        for thread_id in reader.threads():
            latest = reader.latest(thread_id)
            if latest is None:
                continue
            values = latest.checkpoint.get("channel_values", {})
            results = values.get("results", {})
            counts: dict[str, int] = {}
            for result in results.values():
                counts[result.get("status", "?")] = counts.get(result.get("status", "?"), 0) + 1
            rows.append({
                "thread": thread_id,
                "finished": bool(values.get("finished_at")),
                "updated": latest.checkpoint.get("ts"),
                "tasks": counts,
                "cost_usd": round(sum(float(r.get("cost_usd", 0.0)) for r in results.values()), 6),
            })
    return rows


def _task_snapshots(reader: Reader, thread_id: str) -> dict[str, dict[str, Any]]:
    """Latest state of every task subgraph of the thread (including tasks still running)."""
    snapshots: dict[str, dict[str, Any]] = {}
    for namespace in reader.namespaces(thread_id, TASK_NS_PREFIX):
        latest = reader.latest(thread_id, namespace)
        if latest is None:
            continue
        values = dict(latest.checkpoint.get("channel_values", {}))
        task_id = values.get("task_id")
        if task_id and (task_id not in snapshots or latest.checkpoint["ts"] > snapshots[task_id]["_ts"]):
            snapshots[task_id] = values | {"_ts": latest.checkpoint["ts"], "_next": _next_nodes(values)}
    return snapshots


def feature_status(store: CheckpointStore, plan: FeaturePlan, thread_id: str | None = None) -> dict[str, Any]:
    """The task table of one feature: group, status, turn, last decision, cost, duration."""
    thread_id = thread_id or plan.id
    with store.reader() as reader:
        latest = reader.latest(thread_id)
        if latest is None:
            raise InputError(f"{thread_id} has no checkpoint in {store}: run it first")
        values = latest.checkpoint.get("channel_values", {})
        snapshots = _task_snapshots(reader, thread_id)
    results: dict[str, Any] = values.get("results", {})
    tasks = []
    for group_number, group in enumerate(plan.groups(), 1):
        for task_id in group:
            snap = snapshots.get(task_id, {})
            # A finished task whose group is still running (e.g. a sibling waits for an answer) has its result
            # in its own subgraph state until the whole group's step completes.
            result = results.get(task_id) or (snap.get("results") or {}).get(task_id)
            coach = snap.get("coach") or {}
            if result:
                status = result.get("status", "?")
            elif snap.get("pending_question"):
                status = "waiting for an answer"
            elif snap:
                status = f"running ({', '.join(snap['_next']) or 'finishing'})"
            else:
                status = "pending"
            tasks.append({
                "task": task_id,
                "group": group_number,
                "status": status,
                "turn": int(result.get("turns", 0) if result else snap.get("turn", 0)),
                "last_decision": (coach.get("decision") or {}).get("decision"),
                "cost_usd": round(float(result.get("cost_usd", 0.0) if result else snap.get("cost_usd", 0.0)), 6),
                "duration_s": float(result.get("duration_s", 0.0)) if result else None,
                "reason": result.get("reason", "") if result else "",
                "pending_question": None if result else snap.get("pending_question"),
            })
    return {
        "feature": plan.id,
        "thread": thread_id,
        "next": _next_nodes(values),
        "finished": bool(values.get("finished_at")),
        "updated": latest.checkpoint.get("ts"),
        "group": int(values.get("group_index", 0)) + 1,
        "tasks": tasks,
    }


def history(store: CheckpointStore, thread_id: str, task_id: str | None = None) -> list[dict[str, Any]]:
    """Checkpoint timeline: step, node that produced it, time, decision (feature or one task's subgraph)."""
    with store.reader() as reader:
        if task_id:
            namespaces = [ns for ns, snap in _task_namespaces(reader, thread_id) if snap == task_id]
            if not namespaces:
                raise InputError(f"{thread_id} has no checkpoints for task {task_id}")
        else:
            namespaces = [""]
        produced_by = reader.produced_by(thread_id)
        timeline = []
        for namespace in namespaces:
            items = reader.timeline(thread_id, namespace)
            sent = {item.checkpoint["id"]: _sends(item) for item in items}
            for item in items:
                values = item.checkpoint.get("channel_values", {})
                parent = item.parent_config["configurable"]["checkpoint_id"] if item.parent_config else None
                coach = values.get("coach") or {}
                timeline.append({
                    "step": item.metadata.get("step"),
                    "node": ", ".join(produced_by.get(parent, [])) if parent else "input",
                    "time": item.checkpoint.get("ts"),
                    "next": _next_nodes(values) + sent.get(parent or "", []),
                    "turn": values.get("turn"),
                    "decision": (coach.get("decision") or {}).get("decision"),
                    "checkpoint_id": item.checkpoint["id"],
                })
    return timeline


def _sends(item: CheckpointTuple) -> list[str]:
    """Fan-out targets written from this checkpoint: LangGraph keeps Send packets as pending writes, not
    as channel values, so without this a fan-out step would show no next node."""
    found = []
    for _, channel, value in item.pending_writes or []:
        if channel == TASKS and isinstance(value, Send):
            task_id = value.arg.get("task_id") if isinstance(value.arg, dict) else None
            found.append(f"{value.node}({task_id})" if task_id else value.node)
    return found


def _task_namespaces(reader: Reader, thread_id: str) -> list[tuple[str, Any]]:
    found = []
    for namespace in reader.namespaces(thread_id, TASK_NS_PREFIX):
        latest = reader.latest(thread_id, namespace)
        if latest is not None:
            found.append((namespace, latest.checkpoint.get("channel_values", {}).get("task_id")))
    return found


def show_task(repo: Path, plan: FeaturePlan, task_id: str) -> dict[str, Any]:
    """Requirements, per-turn reports, feedback, gate results, violations and report paths of one task."""
    task = plan.task(task_id)
    events = trace.read(repo, plan.id, task_id)
    turns: dict[int, dict[str, Any]] = {}
    for event in events:
        turn = event.get("turn")
        if not isinstance(turn, int):
            continue
        entry = turns.setdefault(turn, {"turn": turn, "player": None, "coach": None, "gate": None, "violations": []})
        kind = event.get("event")
        if kind == "player_report":
            entry["player"] = {k: event.get(k) for k in ("status", "report", "files", "cost_usd", "session_id")}
        elif kind == "coach_decision":
            keys = ("decision", "rationale", "feedback_items", "cost_usd", "session_id")
            entry["coach"] = {k: event.get(k) for k in keys}
        elif kind == "gate":
            entry["gate"] = {k: event.get(k) for k in ("passed", "command", "summary", "output")}
        elif kind == "contract_violation":
            entry["violations"].append(event.get("detail"))
    folder = trace.runs_dir(repo, plan.id, task_id)
    return {
        "feature": plan.id,
        "task": task_id,
        "name": task.name,
        "requirements": [*task.requirements, *([task.description] if task.description else [])],
        "acceptance_criteria": task.acceptance_criteria,
        "turns": [turns[number] for number in sorted(turns)],
        "final": next((e for e in reversed(events) if e.get("event") == "finalize"), None),
        "reports": sorted(str(p) for p in folder.glob("*")) if folder.is_dir() else [],
    }
