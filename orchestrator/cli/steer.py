"""`autobuild steer FEAT TASK "note"`: a note to a running task's player, into the store's steering queue
(store/steering.py); the player reads it at the start of its next turn."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TypeVar

from orchestrator.errors import InputError

if TYPE_CHECKING:  # the parser is built on every command: what the command needs is imported when it runs
    from orchestrator.settings import Settings

Parser = TypeVar("Parser", bound=argparse.ArgumentParser)
_FINISHED = frozenset({"approved", "approved-unverified", "failed", "blocked", "aborted", "conflict", "error",
                       "skipped", "replaced"})
"""A task with one of these outcomes takes no note: nothing of it runs until a `resume`."""


def add_steer_command(commands: argparse._SubParsersAction[Parser]) -> Parser:
    """The `steer` parser (its common options are added by the caller)."""
    steer = commands.add_parser("steer", help="send a note to a running task's player: it reads it at the start of"
                                              " its next turn")
    steer.add_argument("feature")
    steer.add_argument("task")
    steer.add_argument("text", metavar="NOTE", help="what the player should know (at most 8 KB)")
    return steer


def steer_command(args: argparse.Namespace, settings: Settings) -> int:
    from orchestrator.cli import output
    from orchestrator.cli.logs import plan_with_task
    from orchestrator.store import inspection
    from orchestrator.store.checkpoints import CheckpointStore
    from orchestrator.store.steering import SteeringQueue, checked_note

    text = checked_note(args.text)
    plan = plan_with_task(settings, args.feature, args.task)
    store = CheckpointStore.for_repo(settings.repo, settings.db, plan.id)
    queue = SteeringQueue.for_feature(settings.repo, plan.id, settings.db)
    if queue is None:
        raise InputError(f"{store} is a Postgres store: notes are kept beside SQLite checkpoints only, for now")
    if not store.exists():
        raise InputError(f"{plan.id} has not run yet ({store} holds no checkpoint): `autobuild run {plan.id}` first")
    row = next((r for r in inspection.feature_status(store, plan)["tasks"] if r["task"] == args.task), None)
    if row is not None and row["status"] in _FINISHED:
        raise InputError(f"{args.task} has finished ({row['status']}): a note reaches only a task that runs;"
                         f" `autobuild resume {plan.id} {args.task}` runs it again")
    note = queue.accept(plan.id, args.task, text)
    return output.print_document({"note": note.id, "feature": plan.id, "task": args.task, "state": note.state,
                                  "created": note.created}, bool(args.json),
                                 lambda data: f"note {data['note']} accepted: {args.task}'s player reads it at the"
                                              " start of its next turn")
