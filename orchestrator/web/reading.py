"""What each page shows, read through the inspection readers `status`, `show` and `history` use (no second way to
read a run's state): the runs, a feature's table and pictures, a task's turns. Blocking: called in a thread."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.errors import InputError
from orchestrator.facts import SUCCESS
from orchestrator.jsonout import iso_utc
from orchestrator.plan.ids import is_id
from orchestrator.plan.model import FeaturePlan, load_plan
from orchestrator.store import event_log, inspection, pause, receipts, supervise
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.store.run_liveness import said_state
from orchestrator.store.served import thread_of
from orchestrator.views.mermaid import flowchart, gantt
from orchestrator.views.pictures import LEGEND, timeline
from orchestrator.views.timeline import epoch

FINISHED = frozenset({*SUCCESS, "failed", "blocked", "aborted", "conflict", "error", "skipped", "replaced",
                      "cancelled"})
"""A task with one of these outcomes runs no more until a `resume`: it takes no note."""
WAITING = "waiting for an answer"
LOG_PAGE = 200
"""Events on a page of a task's log: the task page follows the log from its last page's first event on; the ones
before are paged through (`/events?page=N`), never all sent at once."""
LOG_FIELDS = ("status", "decision", "passed", "reason", "summary", "rationale", "detail", "tool", "note", "notes",
              "text", "question", "question_id")
"""The fields a log line shows, each cut at `LOG_FIELD_CHARS` (web/static/ui.js shows the same for a live line)."""
LOG_FIELD_CHARS = 200


@dataclass(frozen=True)
class Where:
    """The repository the page is about and the checkpoint DB setting it was started with (None: as `status`
    finds it: the feature's remembered DB, else the repo's default)."""

    repo: Path
    db: str | None
    thread: str | None = None
    """The thread the feature's checkpoints are in (a served run's, on the worker's page); None: found as `steer`
    finds it (the feature's own name, else the newest served thread of it, store/served.py)."""

    def store(self, feature: str | None = None) -> CheckpointStore:
        return CheckpointStore.for_repo(self.repo, self.db, feature)

    def thread_of(self, feature: str) -> str:
        return self.thread or thread_of(self.store(feature), self.repo, feature)

    def plan(self, feature: str) -> FeaturePlan:
        """The feature's plan with the tasks replans added (as `show` reads it); one line when there is none."""
        if not is_id(feature):
            raise InputError(f"{feature!r} is not a feature id (FEAT-001)")
        store = self.store(feature)
        thread = self.thread_of(feature) if store.exists() else feature
        return inspection.replanned(store, load_plan(self.repo, feature), thread)

    def status(self, plan: FeaturePlan) -> dict[str, Any]:
        """`status FEAT`'s table of the feature (its thread's, with its paused tasks)."""
        return inspection.feature_status(self.store(plan.id), plan, self.thread_of(plan.id), repo=self.repo)


def _seconds(start: str | None, end: str | None) -> float | None:
    begun, ended = epoch(start), epoch(end)
    return None if begun is None or ended is None else max(0.0, ended - begun)


def runs(where: Where) -> list[dict[str, Any]]:
    """Every feature thread in the store: `status`'s row, with its state, its tasks done of all, when it started and
    how long it ran (to its last checkpoint; to now while it runs)."""
    store = where.store()
    if not store.exists():
        return []
    rows = []
    for row in inspection.list_features(store):
        timeline_rows = inspection.history(store, row["thread"])
        started = timeline_rows[0]["time"] if timeline_rows else None
        done, total, state = _done_of(where, row)
        end = iso_utc(time.time()) if state == "in progress" else row["updated"]
        rows.append(row | {"started": started, "duration_s": _seconds(started, end), "done": done, "total": total,
                           "state": state})
    rows.sort(key=lambda r: str(r["started"] or ""), reverse=True)
    return rows


def run_state(table: dict[str, Any]) -> str:
    """What a feature's run is doing, as its `status` table says: finished, waiting for an answer (a question is
    pending: the run stopped, or goes on only with other tasks), paused (nothing left but paused tasks), in
    progress."""
    if table["finished"]:
        return "finished"
    if questions(table):
        return WAITING
    open_rows = [row for row in table["tasks"] if row["status"] not in FINISHED]
    return "paused" if open_rows and all(row["status"] == "paused" for row in open_rows) else "in progress"


def _done_of(where: Where, row: dict[str, Any]) -> tuple[int, int, str]:
    """Tasks approved of the feature's tasks (its plan's, replans' added), and the run's state; a thread with no
    plan: its results."""
    try:
        table = where.status(where.plan(row["thread"]))
    except InputError:
        done = sum(n for status, n in row["tasks"].items() if status in SUCCESS)
        total, state = sum(row["tasks"].values()), "finished" if row["finished"] else "in progress"
    else:
        done = sum(1 for task in table["tasks"] if task["status"] in SUCCESS)
        total, state = len(table["tasks"]), run_state(table)
    return done, total, going_on(where, str(row["thread"]).partition(":")[0], str(row["thread"]), state)


def going_on(where: Where, feature: str, thread: str, state: str) -> str:
    """`state`, or, for a run "in progress" whose process is gone (a `kill -9`), what `status` says of it:
    stopped, and how to resume it (store/run_liveness.py)."""
    return said_state(where.store(feature), feature, thread, state) if state == "in progress" else state


def feature(where: Where, feature_id: str) -> dict[str, Any]:
    """`status FEAT`'s table with the plan drawn (colored by state), the Gantt, the receipt and the next commands."""
    plan = where.plan(feature_id)
    table = where.status(plan)
    table["paused"] = None if table["finished"] else pause.of_run(where.repo, plan.id, where.store(plan.id),
                                                                    table["thread"])
    table["state"] = going_on(where, plan.id, table["thread"], run_state(table))
    outcomes = {row["task"]: row["status"] for row in table["tasks"]}
    names = {task.id: task.name for task in plan.tasks}
    order = [row["task"] for row in table["tasks"]]
    sections = timeline(where.repo, plan.id, order, time.time())
    return {"plan": plan, "status": table, "names": names, "flowchart": flowchart(plan, outcomes).text,
            "gantt": gantt(f"{plan.id} - what ran when (UTC)", sections) if sections else "", "legend": LEGEND,
            "receipt": receipts.describe(table["receipt"]), "questions": questions(table),
            "commands": next_commands(where, plan.id, table)}


def questions(table: dict[str, Any]) -> list[dict[str, Any]]:
    """The questions waiting for an answer, each with its task and options."""
    found = []
    for row in table["tasks"]:
        asked = row.get("pending_question")
        if isinstance(asked, dict) and asked.get("question_id"):
            found.append({"task": row["task"], "question_id": str(asked["question_id"]),
                          "question": str(asked.get("question", "")),
                          "options": [str(option) for option in asked.get("options") or []]})
    return found


def next_commands(where: Where, feature_id: str, table: dict[str, Any]) -> list[str]:
    """What a person runs next: land (with review first) once every task is approved, else resume."""
    repo = f" --repo {where.repo}"
    if waiting := questions(table):
        return [f"autobuild answer {feature_id} {q['question_id']} \"…\"{repo}   (or answer it above)" for q in waiting]
    if table["finished"] and all(row["status"] in SUCCESS for row in table["tasks"]):
        return [f"autobuild review {feature_id}{repo}", f"autobuild land {feature_id}{repo}"]
    if table["finished"]:
        return [f"autobuild resume {feature_id}{repo}", f"autobuild land {feature_id} --partial{repo}"]
    running = next((row["task"] for row in table["tasks"] if str(row["status"]).startswith("running")), "TASK")
    return [f"autobuild logs {feature_id} {running} --follow{repo}", f"autobuild resume {feature_id}{repo}"
            "   (once the run stopped)"]


def task(where: Where, feature_id: str, task_id: str) -> dict[str, Any]:
    """`show FEAT TASK`: the task's turns (the player's report, the coach's feedback, the gate's verdict), with
    its row of `status` and its notes."""
    plan = where.plan(feature_id)
    if task_id not in plan.task_ids():
        raise InputError(f"{feature_id} has no task {task_id}: tasks are {', '.join(plan.task_ids())}")
    store = where.store(feature_id)
    table = where.status(plan) if store.exists() else None
    row = next((r for r in (table or {}).get("tasks", []) if r["task"] == task_id), None)
    shown = inspection.show_task(where.repo, plan, task_id)
    return {"plan": plan, "shown": shown, "row": row, "status": table,
            "questions": [q for q in questions(table) if q["task"] == task_id] if table else [],
            "receipt": receipts.describe(row["receipt"]) if row else "",
            "takes_notes": row is not None and row["status"] not in FINISHED,
            "attempts": supervise.attempts_of(where.repo, plan, task_id), **_log_start(where, plan.id, task_id)}


def _log_start(where: Where, feature_id: str, task_id: str) -> dict[str, int]:
    """Where the task page's live log starts (after `log_since`: its last page), and how many events come before."""
    events = event_log.task_events(where.repo, feature_id, task_id, 0)
    earlier = max(0, len(events) - LOG_PAGE)
    return {"log_since": events[earlier - 1].id if earlier else 0, "log_earlier": earlier}


def _log_line(event: event_log.LoggedEvent) -> str:
    shown = []
    for key in LOG_FIELDS:
        value = event.fields.get(key)
        if value is None or value in ("", []):
            continue
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        shown.append(f"{key}={text[:LOG_FIELD_CHARS]}{'…' if len(text) > LOG_FIELD_CHARS else ''}")
    turn = "" if event.turn is None else f" turn {event.turn}"
    return f"{event.time} {event.kind}{turn} {' '.join(shown)}".rstrip()


def log_page(where: Where, feature_id: str, task_id: str, page: int | None) -> dict[str, Any]:
    """Page `page` of the task's log (None: the last), `LOG_PAGE` events a page, each as one line of text."""
    plan = where.plan(feature_id)
    if task_id not in plan.task_ids():
        raise InputError(f"{feature_id} has no task {task_id}: tasks are {', '.join(plan.task_ids())}")
    events = event_log.task_events(where.repo, plan.id, task_id, 0)
    pages = max(1, -(-len(events) // LOG_PAGE))
    shown = pages - 1 if page is None else min(max(0, page), pages - 1)
    return {"page": shown, "pages": pages, "total": len(events),
            "lines": [(e.id, _log_line(e)) for e in events[shown * LOG_PAGE:(shown + 1) * LOG_PAGE]]}
