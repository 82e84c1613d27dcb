"""A person's note, pause, unpause or cancel of a running task, checked and recorded once for the CLI (`autobuild
steer|pause|unpause|cancel`) and the page alike: the same checks in the same order (an empty note or one over 8 KB,
an unknown task, a feature that never ran, a finished task, a task queued for merge), the
same reasons, nothing written when refused; accepted, it goes into the store's queue or control records and the
task's trace (`note_accepted`, `pause_requested`, …, with its source and time). A refusal carries the HTTP status the
page answers with; the CLI says its one line and exits 2."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from orchestrator.errors import InputError
from orchestrator.events import EventKind, event_dict
from orchestrator.plan.model import FeaturePlan, load_plan
from orchestrator.store import inspection, run_options
from orchestrator.store import traces as trace
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.store.served import thread_of
from orchestrator.store.steering import SOURCES, Note, checked_note
from orchestrator.store.steering_stores import controls_for, notes_for
from orchestrator.store.task_control import ControlRecord

FINISHED = frozenset({"approved", "approved-unverified", "failed", "blocked", "aborted", "conflict", "error",
                      "skipped", "replaced", "cancelled"})
"""A task with one of these outcomes takes no note, pause nor cancel: nothing of it runs until a `resume`."""
_MERGING = ("running (merge", "running (finalize_success")
"""A task whose approved work is queued for the merge: it can't be paused (the merge queue holds its place)."""


class Refusal(InputError):
    """A change refused, with the HTTP status that says why (409: the state is not what it needs)."""

    def __init__(self, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.status = status


def attempt_number(text: str | None, attempts: int) -> int | None:
    """`a2` or `2` as attempt 2 of a task run as `attempts` (None: every attempt), or one line saying why not."""
    if text is None:
        return None
    matched = re.fullmatch(r"a?([1-9][0-9]?)", text.strip())
    if matched is None or int(matched.group(1)) > attempts:
        raise Refusal(f"--attempt {text!r} names no attempt of this task: it runs as {attempts} attempt(s),"
                      f" a1{f' to a{attempts}' if attempts > 1 else ''}", 400)
    return int(matched.group(1))


def attempts_of(repo: Path, plan: FeaturePlan, task: str) -> int:
    """How many attempts the task's run has: the run's `--attempts`, else the task's or the feature's, else 1."""
    given = run_options.recorded(repo, plan.id).get("attempts")
    return int(given or plan.task(task).attempts or plan.attempts or 1)


def running_row(repo: Path, db: str | None, feature: str, task: str, what: str) -> tuple[FeaturePlan, dict[str, Any]]:
    """The plan and the task's status row, when the task can take `what` (notes, pauses, …): else a refusal."""
    store = CheckpointStore.for_repo(repo, db, feature)
    plan = inspection.replanned(store, load_plan(repo, feature))
    if task not in plan.task_ids():
        raise Refusal(f"{plan.id} has no task {task}: tasks are {', '.join(plan.task_ids())}", 404)
    if not store.exists():
        raise Refusal(f"{plan.id} has not run yet ({store} holds no checkpoint): `autobuild run {plan.id}` first")
    thread = thread_of(store, repo, plan.id)  # a served run's (the workers' store) is named by an id
    row = next((r for r in inspection.feature_status(store, plan, thread, repo=repo)["tasks"] if r["task"] == task),
               None)
    status = str((row or {}).get("status") or "pending")
    if status in FINISHED:
        raise Refusal(f"{task} has finished ({status}): {what} reach only a task that runs;"
                      f" `autobuild resume {plan.id} {task}` runs it again")
    return plan, row or {"task": task, "status": status}


def _traced(repo: Path, feature: str, task: str, kind: EventKind, **fields: Any) -> None:
    trace.append(repo, feature, task, event_dict(kind, feature=feature, task=task, **fields))


def send_note(repo: Path, db: str | None, feature: str, task: str, text: str, *, attempt: str | None = None,
              source: str = "cli") -> Note:
    """A note accepted for the task's player (every running attempt, or the one named), recorded in its trace."""
    assert source in SOURCES
    note_text = checked_note(text)
    plan, _ = running_row(repo, db, feature, task, "notes")
    number = attempt_number(attempt, attempts_of(repo, plan, task))
    queue = notes_for(repo, plan.id, db)
    note = queue.accept(plan.id, task, note_text, attempt=number, source=source)
    _traced(repo, plan.id, task, "note_accepted", note=note.id, text=note.text, source=source,
            **({"attempt": number} if number else {}))
    return note


def control_task(repo: Path, db: str | None, feature: str, task: str, action: str, *, now: bool = False,
                 source: str = "cli") -> ControlRecord:
    """A pause (`now`: cutting the running session, its work kept), unpause or cancel of the task, recorded in its
    trace; refused where it can't apply."""
    assert source in SOURCES
    plan, row = running_row(repo, db, feature, task, f"{action}s")
    controls = controls_for(repo, plan.id, db)
    state = controls.control(plan.id, task)
    if action in ("pause", "cancel") and str(row["status"]).startswith(_MERGING):
        done = {"pause": "paused", "cancel": "cancelled"}[action]
        raise Refusal(f"{task} is queued for merge ({row['status']}): it can't be {done} now; once it has"
                      f" landed, `autobuild discard` or a new task undoes it")
    if action == "pause" and state.paused is not None and not (now and not state.paused.now):
        raise Refusal(f"{task} is paused already (since {state.paused.created}): `autobuild unpause {plan.id}"
                      f" {task}` lets it go on")
    if action == "unpause" and state.paused is None:
        raise Refusal(f"{task} is not paused: nothing to unpause")
    record = controls.record(plan.id, task, action, now=now and action == "pause", source=source)
    _traced(repo, plan.id, task, f"{action}_requested", source=source, record=record.id,  # type: ignore[arg-type]
            **({"now": True} if record.now else {}))
    return record
