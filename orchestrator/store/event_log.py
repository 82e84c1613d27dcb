"""A task's durable event log, read: its trace's events with their increasing ids, from any id on, and whether the
task's latest attempt has ended (what `autobuild logs --follow` polls)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.facts import SUCCESS
from orchestrator.store import traces as trace

ENDING_EVENTS = frozenset({"merge", "skipped", "task_error"})
"""The events after which a task's attempt writes nothing more until it runs again; so does a `finalize` whose task
failed (an approved one goes on to `merge`, whose every way out that ends the task says `merge`; one that hands the
player a turn says `landing`)."""
_STARTING_EVENTS = frozenset({"initialize"})


@dataclass(frozen=True)
class LoggedEvent:
    """One event of a task's log: its id (0 for a line written before lines carried ids), its kind, when, at which
    turn, and the event's own fields."""

    id: int
    kind: str
    time: str
    turn: int | None
    fields: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "event": self.kind, "time": self.time,
                **({"turn": self.turn} if self.turn is not None else {}), **self.fields}


def _logged(raw: dict[str, Any]) -> LoggedEvent:
    raw_id, turn = raw.get("id"), raw.get("turn")
    return LoggedEvent(
        id=raw_id if isinstance(raw_id, int) and not isinstance(raw_id, bool) else 0,
        kind=str(raw.get("event") or "?"), time=str(raw.get("time") or ""),
        turn=turn if isinstance(turn, int) and not isinstance(turn, bool) else None,
        fields={k: v for k, v in raw.items() if k not in ("id", "event", "time", "turn", "schema_version")})


def task_events(repo: Path, feature_id: str, task_id: str, since: int | None = None) -> list[LoggedEvent]:
    """The task's events in the order written; with `since`, only those whose id is above it (a line without an id,
    written before ids were, is given only on a full read)."""
    events = [_logged(raw) for raw in trace.read(repo, feature_id, task_id)]
    return events if since is None else [e for e in events if e.id > since]


def has_ended(events: list[LoggedEvent]) -> bool:
    """The latest attempt in `events` has ended (a start after the last end: it runs again)."""
    for event in reversed(events):
        if event.kind in ENDING_EVENTS or (event.kind == "finalize" and event.fields.get("status") not in SUCCESS):
            return True
        if event.kind in _STARTING_EVENTS:
            return False
    return False


def task_has_ended(repo: Path, feature_id: str, task_id: str) -> bool:
    """The task's latest attempt has ended, by its whole log (an attempt's start may precede a `--since`)."""
    return has_ended(task_events(repo, feature_id, task_id))
