"""Notes from the person supervising a run, into a player's turn (store/steering.py keeps them): delivered at the
start of the player's next turn, or at a tool boundary of its running session (`TurnNotes`, which the agent layer's
hook asks), consumed once a later node finds that turn in the task's checkpointed state. Each attempt of a
task gets a note of its own, unless the note names one. The coach reads the turn's notes as what the player was told:
they never reach the gate nor count as an acceptance."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.facts import TaskState
from orchestrator.graph.context import RunContext
from orchestrator.store import event_log
from orchestrator.store.steering import Note

NOTE_PREFIX = "A note from the person supervising this run: "


def _attempt(state: TaskState) -> int:
    return int(state.get("attempt") or 1)


async def consume_kept(ctx: RunContext, state: TaskState, events: Callable[..., Any]) -> None:
    """The notes the task's last player turn carried are consumed: that turn's checkpoint holds them (a node of
    the task runs on it), so they are never delivered again. Said once, by the first node that finds them."""
    kept = list(state.get("notes_delivered") or [])
    if not kept:
        return
    task_id, attempt = state["task_id"], _attempt(state)
    await asyncio.to_thread(ctx.steering().mark, kept, "consumed", attempt, int(state.get("turn") or 0))
    # Said from the trace, not from what moved: a run killed between the mark and its event says it on resume.
    said = await asyncio.to_thread(_said_consumed, ctx.repo.root, ctx.feature_id, task_id, attempt)
    if unsaid := [note for note in kept if note not in said]:
        events("note_consumed", task_id, notes=unsaid)


def _said_consumed(root: Path, feature_id: str, task_id: str, attempt: int) -> set[int]:
    """The notes the task's trace already records consumed for `attempt`."""
    return {note for event in event_log.task_events(root, feature_id, task_id)
            if event.kind == "note_consumed" and int(event.fields.get("attempt") or 1) == attempt
            for note in event.fields.get("notes") or []}


@dataclass
class TurnNotes:
    """A player turn's notes: those it got at its start (`lines`), and what its running session's hook asks after
    each tool call (`__call__`): the notes accepted since, claimed for this attempt and turn (a note goes to one
    session of the attempt once). `ids`: every note the turn got, kept as its `notes_delivered`."""

    ctx: RunContext
    task_id: str
    attempt: int
    turn: int
    events: Callable[..., Any]
    ids: list[int] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    async def __call__(self) -> list[str]:
        queue = self.ctx.steering()
        notes: list[Note] = await asyncio.to_thread(queue.claim, self.ctx.feature_id, self.task_id, self.attempt,
                                                    self.turn)
        for note in notes:
            self.ids.append(note.id)
            self.events("note_delivered", self.task_id, turn=self.turn, note=note.id, text=note.text, again=False,
                        at="tool_boundary")
        return [NOTE_PREFIX + note.text for note in notes]


async def deliver(ctx: RunContext, state: TaskState, turn: int, events: Callable[..., Any]) -> TurnNotes:
    """At a player turn's start: the last kept turn's notes consumed (`consume_kept`), then the attempt's open notes
    (accepted, or delivered to a session that died), marked delivered for this turn: the turn's notes, whose lines
    the player's prompt gets and whose hook hands the session the notes sent while it runs."""
    await consume_kept(ctx, state, events)
    task_id, attempt = state["task_id"], _attempt(state)
    turn_notes = TurnNotes(ctx, task_id, attempt, turn, events)
    queue = ctx.steering()
    notes = await asyncio.to_thread(queue.open_notes, ctx.feature_id, task_id, attempt)
    if not notes:
        return turn_notes
    turn_notes.ids = [note.id for note in notes]
    await asyncio.to_thread(queue.mark, turn_notes.ids, "delivered", attempt, turn)
    for note in notes:
        events("note_delivered", task_id, turn=turn, note=note.id, text=note.text, again=note.state == "delivered",
               at="turn_start")
    turn_notes.lines = [NOTE_PREFIX + note.text for note in notes]
    return turn_notes


async def for_coach(ctx: RunContext, state: TaskState, events: Callable[..., Any]) -> list[str]:
    """The notes the player got this turn, for the coach to read (consumed now: the turn is checkpointed)."""
    kept = list(state.get("notes_delivered") or [])
    queue = ctx.steering()
    if not kept:
        return []
    await consume_kept(ctx, state, events)
    return [note.text for note in await asyncio.to_thread(queue.notes, kept)]
