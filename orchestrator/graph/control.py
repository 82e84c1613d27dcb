"""A person's pause and cancel of a task (store/task_control.py keeps them), at the task's node boundaries: the first
thing a loop node (player, coach, feedback) does. A cancel stops the task `cancelled` (its dependents are skipped; a
`resume` runs it again). A pause ends the task's body in this run as an interrupt, like a question waiting: its
`--parallel` slot goes to another task, no session or timeout runs for it, and a run with nothing else left ends
waiting (exit 3); `unpause` then `resume` goes on from the node it stopped before. Nothing here may run before the
interrupt but reads: the node runs again from its first line on resume."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from langgraph.types import interrupt

from orchestrator.facts import Stop, TaskState
from orchestrator.graph.context import RunContext
from orchestrator.graph.events import EventLog
from orchestrator.store.steering_stores import run_controls, run_notes
from orchestrator.text import one_line

PAUSED = "task_paused"
"""The `kind` of the interrupt value a paused task leaves (a question's value has a `question_id` instead)."""


async def at_boundary(ctx: RunContext, state: TaskState, events: EventLog, node: str) -> Stop | None:
    """A stop when a cancel waits for the task; an interrupt while it is paused; else None (go on)."""
    controls = run_controls(ctx.repo.root, ctx.feature_id)
    task_id = state["task_id"]
    control = await asyncio.to_thread(controls.control, ctx.feature_id, task_id)
    if control.cancel is not None:
        record = control.cancel
        events("task_cancelled", task_id, node=node, source=record.source, requested=record.created)
        return Stop(outcome="cancelled", cause="cancelled",
                    reason=f"cancelled by a person ({record.source}, {record.created})")
    if control.paused is not None:
        record = control.paused
        interrupt({"kind": PAUSED, "task": task_id, "node": node, "since": record.created, "source": record.source})
    return None


async def cancel_applied(ctx: RunContext, task_id: str, status: str) -> None:
    """The task ended (`cancelled`, or otherwise before a cancel reached a boundary): its pending cancels are
    closed, so a `resume` runs it again."""
    controls = run_controls(ctx.repo.root, ctx.feature_id)
    await asyncio.to_thread(controls.apply_cancels, ctx.feature_id, task_id,
                            "applied" if status == "cancelled" else "late")


def paused_tasks(interrupt_values: list[Any]) -> list[dict[str, Any]]:
    """The paused tasks among a thread's pending interrupt values."""
    return [dict(value) for value in interrupt_values if isinstance(value, Mapping) and value.get("kind") == PAUSED]


async def supervision(ctx: RunContext, task_id: str, answers: Mapping[str, str] | None = None) -> list[str]:
    """The task's notes and its pauses, unpauses and cancels, one line each with where and when they came from, then
    the answers a person gave its questions (its AUTO-RUN.md's "Steering" section)."""
    queue = run_notes(ctx.repo.root, ctx.feature_id)
    controls = run_controls(ctx.repo.root, ctx.feature_id)
    notes = await asyncio.to_thread(queue.all_notes, ctx.feature_id, task_id)
    records = await asyncio.to_thread(controls.records, ctx.feature_id, task_id)
    lines = [(note.created, f"{note.created} note {note.id} ({note.source}"
                            f"{f', attempt a{note.attempt}' if note.attempt else ''}, {note.state}):"
                            f" {one_line(note.text, 200)}") for note in notes]
    lines += [(record.created, f"{record.created} {record.action} ({record.source}"
                               f"{f', {record.state}' if record.action == 'cancel' else ''})") for record in records]
    given = [f"answer to {one_line(question, 120)!r}: {one_line(answer, 200)}" for question, answer in
             (answers or {}).items()]
    return [line for _, line in sorted(lines)] + given
