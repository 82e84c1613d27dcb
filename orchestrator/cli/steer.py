"""`autobuild steer FEAT TASK "note" [--attempt a2]`, `pause`, `unpause` and `cancel FEAT TASK`: a person steering a
running task, into the store's steering queue and control records, each also in the task's trace (`note_accepted`,
`pause_requested`, …). The checks and the records are store/supervise.py's, the one path the page takes too (its
`source` is "page"): bad input raises InputError before anything is written."""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:  # the parser is built on every command: what the command needs is imported when it runs
    from orchestrator.settings import Settings
    from orchestrator.store.steering import Note
    from orchestrator.store.task_control import ControlRecord

Parser = TypeVar("Parser", bound=argparse.ArgumentParser)
_HELP = {"pause": "pause a task at its next node boundary (`--now`: at once, its session's work kept): its slot"
                  " goes to another task until `unpause`",
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
        if action == "pause":
            parser.add_argument("--now", action="store_true",
                                help="cut the task's running player session at once; its work so far is kept and"
                                     " the turn goes on from it after `unpause`")
        parsers.append(parser)
    return parsers


def send_note(settings: Settings, feature: str, task: str, text: str, *, attempt: str | None = None,
              source: str = "cli") -> Note:
    """A note accepted for the task's player (store/supervise.py: the page's path too)."""
    from orchestrator.store import supervise

    return supervise.send_note(settings.repo, settings.db, feature, task, text, attempt=attempt, source=source)


def control_task(settings: Settings, feature: str, task: str, action: str, *, now: bool = False,
                 source: str = "cli") -> ControlRecord:
    """A pause, unpause or cancel of the task (store/supervise.py: the page's path too)."""
    from orchestrator.store import supervise

    return supervise.control_task(settings.repo, settings.db, feature, task, action, now=now, source=source)


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

    record = control_task(settings, args.feature, args.task, args.command, now=bool(getattr(args, "now", False)))
    said = {"pause": ("pauses now, its session's work kept" if record.now else "pauses at its next node boundary")
                     + "; `autobuild unpause` lets it go on",
            "unpause": f"goes on (if its run ended waiting: `autobuild resume {record.feature}`)",
            "cancel": "ends `cancelled` at its next node boundary; `autobuild resume` runs it again"}[record.action]
    return output.print_document({"record": record.id, "feature": record.feature, "task": record.task,
                                  "action": record.action, "now": record.now, "created": record.created,
                                  "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, bool(args.json),
                                 lambda data: f"{record.task} {said}")
