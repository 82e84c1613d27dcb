"""`autobuild steer FEAT TASK "note" [--attempt a2]`, `pause`, `unpause` and `cancel FEAT TASK`: a person steering a
running task, into the store's steering queue and control records (store/steering.py, store/task_control.py), each
also in the task's trace (`note_accepted`, `pause_requested`, …). `send_note` and `control_task` are the one path
the page takes too (its `source` is "page"): bad input raises InputError before anything is written."""

from __future__ import annotations

import argparse
import re
import time
from typing import TYPE_CHECKING, Any, TypeVar

from orchestrator.errors import InputError

if TYPE_CHECKING:  # the parser is built on every command: what the command needs is imported when it runs
    from orchestrator.plan.model import FeaturePlan
    from orchestrator.settings import Settings
    from orchestrator.store.steering import Note
    from orchestrator.store.task_control import ControlRecord

Parser = TypeVar("Parser", bound=argparse.ArgumentParser)
_FINISHED = frozenset({"approved", "approved-unverified", "failed", "blocked", "aborted", "conflict", "error",
                       "skipped", "replaced", "cancelled"})
"""A task with one of these outcomes takes no note, pause nor cancel: nothing of it runs until a `resume`."""
_MERGING = ("running (merge", "running (finalize_success")
"""A task whose approved work is queued for the merge: it can't be paused (the merge queue holds its place)."""
_HELP = {"pause": "pause a task at its next node boundary: its slot goes to another task; `unpause` then `resume`",
         "unpause": "let a paused task go on (`resume FEAT` runs it again if its run ended waiting)",
         "cancel": "end a task `cancelled` at its next node boundary (its dependents are skipped; `resume` runs it"
                   " again)"}


def add_steer_command(commands: argparse._SubParsersAction[Parser]) -> list[Parser]:
    """The `steer`, `pause`, `unpause` and `cancel` parsers (their common options are added by the caller)."""
    steer = commands.add_parser("steer", help="send a note to a running task's player: it reads it after its next"
                                              " tool call, or at the start of its next turn")
    steer.add_argument("feature")
    steer.add_argument("task")
    steer.add_argument("text", metavar="NOTE", help="what the player should know (at most 8 KB)")
    steer.add_argument("--attempt", default=None, metavar="aN",
                       help="only this attempt of the task (a2, or 2); default: every attempt")
    parsers = [steer]
    for action, said in _HELP.items():
        parser = commands.add_parser(action, help=said)
        parser.add_argument("feature")
        parser.add_argument("task")
        parsers.append(parser)
    return parsers


def attempt_number(text: str | None, attempts: int) -> int | None:
    """`a2` or `2` as attempt 2 of a task run as `attempts` (None: every attempt), or one line saying why not."""
    if text is None:
        return None
    matched = re.fullmatch(r"a?([1-9][0-9]?)", text.strip())
    if matched is None or int(matched.group(1)) > attempts:
        raise InputError(f"--attempt {text!r} names no attempt of this task: it runs as {attempts} attempt(s),"
                         f" a1{f' to a{attempts}' if attempts > 1 else ''}")
    return int(matched.group(1))


def attempts_of(settings: Settings, plan: FeaturePlan, task: str) -> int:
    """How many attempts the task's run has: the run's `--attempts`, else the task's or the feature's, else 1."""
    from orchestrator.store import run_options

    given = run_options.recorded(settings.repo, plan.id).get("attempts")
    return int(given or plan.task(task).attempts or plan.attempts or 1)


def _running_row(settings: Settings, feature: str, task: str, what: str) -> tuple[FeaturePlan, dict[str, Any]]:
    """The plan and the task's status row, when the task can take `what`: else one line, exit 2."""
    from orchestrator.cli.logs import plan_with_task
    from orchestrator.store import inspection
    from orchestrator.store.checkpoints import CheckpointStore
    from orchestrator.store.served import thread_of

    plan = plan_with_task(settings, feature, task)
    store = CheckpointStore.for_repo(settings.repo, settings.db, plan.id)
    if not store.exists():
        raise InputError(f"{plan.id} has not run yet ({store} holds no checkpoint): `autobuild run {plan.id}` first")
    thread = thread_of(store, settings.repo, plan.id)  # a served run's (the workers' store) is named by id
    table = inspection.feature_status(store, plan, thread, repo=settings.repo)
    row = next((r for r in table["tasks"] if r["task"] == task), None)
    status = str((row or {}).get("status") or "pending")
    if status in _FINISHED:
        raise InputError(f"{task} has finished ({status}): {what} reach only a task that runs;"
                         f" `autobuild resume {plan.id} {task}` runs it again")
    return plan, row or {"task": task, "status": status}


def _trace(settings: Settings, feature: str, task: str, kind: Any, **fields: Any) -> None:
    from orchestrator.events import event_dict
    from orchestrator.store import traces

    traces.append(settings.repo, feature, task, event_dict(kind, feature=feature, task=task, **fields))


def send_note(settings: Settings, feature: str, task: str, text: str, *, attempt: str | None = None,
              source: str = "cli") -> Note:
    """A note accepted for the task's player (every running attempt, or the one named), recorded in its trace."""
    from orchestrator.store.steering import checked_note
    from orchestrator.store.steering_stores import notes_for

    note_text = checked_note(text)
    plan, _ = _running_row(settings, feature, task, "notes")
    number = attempt_number(attempt, attempts_of(settings, plan, task))
    queue = notes_for(settings.repo, plan.id, settings.db)
    note = queue.accept(plan.id, task, note_text, attempt=number, source=source)
    _trace(settings, plan.id, task, "note_accepted", note=note.id, text=note.text, source=source,
           **({"attempt": number} if number else {}))
    return note


def control_task(settings: Settings, feature: str, task: str, action: str, *, source: str = "cli") -> ControlRecord:
    """A pause, unpause or cancel of the task, recorded in its trace; refused (one line) where it can't apply."""
    from orchestrator.store.steering_stores import controls_for

    plan, row = _running_row(settings, feature, task, f"{action}s")
    controls = controls_for(settings.repo, plan.id, settings.db)
    state = controls.control(plan.id, task)
    if action in ("pause", "cancel") and str(row["status"]).startswith(_MERGING):
        raise InputError(f"{task} is queued for merge ({row['status']}): it can't be {action}ed now; once it has"
                         f" landed, `autobuild discard` or a new task undoes it")
    if action == "pause" and state.paused is not None:
        raise InputError(f"{task} is paused already (since {state.paused.created}): `autobuild unpause {plan.id}"
                         f" {task}` lets it go on")
    if action == "unpause" and state.paused is None:
        raise InputError(f"{task} is not paused: nothing to unpause")
    record = controls.record(plan.id, task, action, source=source)
    _trace(settings, plan.id, task, f"{action}_requested", source=source, record=record.id)
    return record


def steer_command(args: argparse.Namespace, settings: Settings) -> int:
    from orchestrator.cli import output

    note = send_note(settings, args.feature, args.task, args.text, attempt=args.attempt)
    whom = f"attempt a{note.attempt} of {args.task}" if note.attempt else args.task
    return output.print_document({"note": note.id, "feature": note.feature, "task": args.task, "state": note.state,
                                  "attempt": note.attempt, "created": note.created}, bool(args.json),
                                 lambda data: f"note {data['note']} accepted: {whom}'s player reads it after its next"
                                              " tool call, or at the start of its next turn")


def control_command(args: argparse.Namespace, settings: Settings) -> int:
    from orchestrator.cli import output

    record = control_task(settings, args.feature, args.task, args.command)
    said = {"pause": "pauses at its next node boundary; `autobuild unpause` lets it go on",
            "unpause": f"goes on (if its run ended waiting: `autobuild resume {record.feature}`)",
            "cancel": "ends `cancelled` at its next node boundary; `autobuild resume` runs it again"}[record.action]
    return output.print_document({"record": record.id, "feature": record.feature, "task": record.task,
                                  "action": record.action, "created": record.created,
                                  "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, bool(args.json),
                                 lambda data: f"{record.task} {said}")
