"""`autobuild logs FEAT TASK [--follow] [--since ID]`: a task's event log (store/event_log.py), one line an event,
followed until the task's attempt ends or Ctrl+C."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from orchestrator.errors import EXIT_INTERRUPTED, InputError
from orchestrator.text import one_line

if TYPE_CHECKING:  # the parser is built on every command: what the command needs is imported when it runs
    from orchestrator.plan.model import FeaturePlan
    from orchestrator.settings import Settings
    from orchestrator.store import event_log

POLL_S = 0.5
"""How often `--follow` looks at the log again."""
_SHOWN_FIELDS = ("status", "decision", "passed", "reason", "summary", "rationale", "detail", "tool", "note", "notes",
                 "text")


Parser = TypeVar("Parser", bound=argparse.ArgumentParser)


def add_logs_command(commands: argparse._SubParsersAction[Parser]) -> Parser:
    """The `logs` parser (its common options are added by the caller)."""
    logs = commands.add_parser(
        "logs", help="a task's event log, each event with its id (--follow: as it happens)")
    logs.add_argument("feature")
    logs.add_argument("task")
    logs.add_argument("--follow", "-f", action="store_true",
                      help="keep printing events as they are written, until the task's attempt ends (or Ctrl+C)")
    logs.add_argument("--since", type=_event_id, default=None, metavar="ID",
                      help="only the events after this id (the last one seen: resume from there)")
    return logs


def _event_id(given: str) -> int:
    if not given.isdigit():
        raise argparse.ArgumentTypeError(f"--since takes an event id (a whole number >= 0), not {given!r}")
    return int(given)


def logs_command(args: argparse.Namespace, settings: Settings) -> int:
    from orchestrator.store import event_log  # see the imports above

    plan = plan_with_task(settings, args.feature, args.task)
    show = _printer(bool(args.json))
    events = event_log.task_events(settings.repo, plan.id, args.task, args.since)
    for event in events:
        show(event)
    if not args.follow:
        return 0
    last = max([e.id for e in events] + [args.since or 0])
    try:
        return follow(lambda since: event_log.task_events(settings.repo, plan.id, args.task, since),
                      lambda: event_log.task_has_ended(settings.repo, plan.id, args.task), show, last)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED  # Ctrl+C: the person stopped following; nothing to say


def follow(read: Callable[[int], list[event_log.LoggedEvent]], ended: Callable[[], bool],
           show: Callable[[event_log.LoggedEvent], None], last: int, poll_s: float = POLL_S) -> int:
    """Print what `read(last)` finds until `ended()` holds after a read (each event once, by id), then 0."""
    while True:
        finished = ended()  # asked before the read: an end written between the two is printed on this pass
        for event in read(last):
            show(event)
            last = max(last, event.id)
        if finished:
            return 0
        time.sleep(poll_s)


def plan_with_task(settings: Settings, feature: str, task: str) -> FeaturePlan:
    """The feature's plan (with the tasks replans added), which has `task`: else one line, exit 2."""
    from orchestrator.plan.model import load_plan
    from orchestrator.store import inspection
    from orchestrator.store.checkpoints import CheckpointStore

    plan = load_plan(settings.repo, feature)
    plan = inspection.replanned(CheckpointStore.for_repo(settings.repo, settings.db, feature), plan)
    if task not in plan.task_ids():
        raise InputError(f"{feature} has no task {task}: tasks are {', '.join(plan.task_ids())}")
    return plan


def _printer(as_json: bool) -> Callable[[event_log.LoggedEvent], None]:
    from orchestrator.cli import output

    if as_json:
        return lambda event: output.print_json(event.as_dict())
    return lambda event: print(line(event), flush=True)


def line(event: event_log.LoggedEvent) -> str:
    """One event as a person reads it: `#id time event [turn N] key=value…` (values cut to one short line)."""
    said = [f"{key}={one_line(str(event.fields[key]), 120)}" for key in _SHOWN_FIELDS
            if event.fields.get(key) not in (None, "", [])]  # `reason=` and `notes=[]` say nothing
    turn = f" turn {event.turn}" if event.turn is not None else ""
    return f"#{event.id:<5} {event.time}  {event.kind}{turn}{'  ' + ' '.join(said) if said else ''}"
