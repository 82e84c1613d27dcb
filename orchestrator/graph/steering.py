"""Notes from the person supervising a run, into a player's turn (store/steering.py keeps them): delivered at the
start of the player's next turn, consumed once a later node finds that turn in the task's checkpointed state."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from orchestrator.facts import TaskState
from orchestrator.graph.context import RunContext
from orchestrator.store.steering import SteeringQueue

NOTE_PREFIX = "A note from the person supervising this run: "


async def consume_kept(ctx: RunContext, state: TaskState, events: Callable[..., Any]) -> None:
    """The notes the task's last player turn carried are consumed: that turn's checkpoint holds them (a node of
    the task runs on it), so they are never delivered again."""
    kept = list(state.get("notes_delivered") or [])
    queue = SteeringQueue.for_feature(ctx.repo.root, ctx.feature_id)
    if not kept or queue is None:
        return
    await asyncio.to_thread(queue.mark, kept, "consumed")
    events("note_consumed", state["task_id"], notes=kept)


async def deliver(ctx: RunContext, state: TaskState, turn: int,
                  events: Callable[..., Any]) -> tuple[list[int], list[str]]:
    """At a player turn's start: the last kept turn's notes consumed (`consume_kept`), then the task's open notes
    (accepted, or delivered to a session that died), marked delivered for this turn: their ids (kept in the turn's
    state) and the lines the player's prompt gets."""
    await consume_kept(ctx, state, events)
    task_id = state["task_id"]
    queue = SteeringQueue.for_feature(ctx.repo.root, ctx.feature_id)
    if queue is None:
        return [], []
    notes = await asyncio.to_thread(queue.open_notes, ctx.feature_id, task_id)
    if not notes:
        return [], []
    ids = [note.id for note in notes]
    await asyncio.to_thread(queue.mark, ids, "delivered")
    for note in notes:
        events("note_delivered", task_id, turn=turn, note=note.id, text=note.text, again=note.state == "delivered")
    return ids, [NOTE_PREFIX + note.text for note in notes]
