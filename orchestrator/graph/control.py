"""A person's pause and cancel of a task (store/task_control.py keeps them), at the task's node boundaries: the first
thing a loop node (player, coach, feedback) does. A cancel stops the task `cancelled` (its dependents are skipped; a
`resume` runs it again). A paused task waits in place in a live run, its
`--parallel` slot given to another task, no session or timeout running for it, and goes on at `unpause`; once the run
has nothing else left it ends as an interrupt, like a question waiting (exit 3), and `unpause` then `resume` go on
from the node it stopped before. Before the interrupt nothing is written but the trace's `task_paused`: the node runs
again from its first line on resume."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from langgraph.types import interrupt

from orchestrator.facts import Stop, TaskState
from orchestrator.graph.context import RunContext
from orchestrator.graph.events import EventLog
from orchestrator.store import event_log
from orchestrator.text import one_line

PAUSED = "task_paused"
"""The `kind` of the interrupt value a paused task leaves (a question's value has a `question_id` instead)."""


async def at_boundary(ctx: RunContext, state: TaskState, events: EventLog, node: str,
                      draining: Callable[[], bool] = lambda: False) -> Stop | None:
    """A stop when a cancel waits for the task; while it is paused, a wait in place in a live run (graph/
    live_pause.py), else (or when the run ends meanwhile) an interrupt; None: go on."""
    controls = ctx.controls()
    task_id = state["task_id"]
    read = partial(asyncio.to_thread, controls.control, ctx.feature_id, task_id)
    control = await read()
    if control.paused is not None and control.cancel is None and ctx.pauses is not None:
        record = control.paused
        events("task_paused", task_id, node=node, source=record.source, requested=record.created, now=record.now)
        waited = await ctx.pauses.wait(task_id, read, draining, ctx.slot_given_up)
        if waited is not None and waited.paused is None:
            events("task_unpaused", task_id, node=node)
        control = waited or control
    if control.cancel is not None:
        record = control.cancel
        events("task_cancelled", task_id, node=node, source=record.source, requested=record.created)
        return Stop(outcome="cancelled", cause="cancelled",
                    reason=f"cancelled by a person ({record.source}, {record.created})")
    if control.paused is not None:
        record = control.paused
        interrupt({"kind": PAUSED, "task": task_id, "node": node, "since": record.created, "source": record.source})
    return None


async def cancel_applied(ctx: RunContext, task_id: str, status: str, events: EventLog) -> None:
    """The task ended (`cancelled`, or otherwise before a cancel reached a boundary): its pending cancels are
    closed, so a `resume` runs it again; and so is a pause it never reached (said: the person asked for one)."""
    controls = ctx.controls()
    await asyncio.to_thread(controls.apply_cancels, ctx.feature_id, task_id,
                            "applied" if status == "cancelled" else "late")
    if await asyncio.to_thread(controls.drop_pauses, ctx.feature_id, task_id):
        events("pause_dropped", task_id, status=status)


def paused_tasks(interrupt_values: list[Any]) -> list[dict[str, Any]]:
    """The paused tasks among a thread's pending interrupt values."""
    return [dict(value) for value in interrupt_values if isinstance(value, Mapping) and value.get("kind") == PAUSED]


async def supervision(ctx: RunContext, task_id: str, answers: Mapping[str, str] | None = None) -> list[str]:
    """The task's notes, its pauses, unpauses and cancels, and the answers a person gave its questions, one line
    each with when and where they came from (its AUTO-RUN.md's "Steering" section)."""
    queue = ctx.steering()
    controls = ctx.controls()
    notes = await asyncio.to_thread(queue.all_notes, ctx.feature_id, task_id)
    records = await asyncio.to_thread(controls.records, ctx.feature_id, task_id)
    lines = [(note.created, f"{note.created} note {note.id} ({note.source}"
                            f"{f', attempt a{note.attempt}' if note.attempt else ''}, {note.state}):"
                            f" {one_line(note.text, 200)}") for note in notes]
    lines += [(record.created, f"{record.created} {record.action}{' --now' if record.now else ''} ({record.source}"
                               f"{f', {record.state}' if record.action == 'cancel' else ''})") for record in records]
    given = await asyncio.to_thread(_answers_given, ctx, task_id)
    for question, answer in (answers or {}).items():
        when, source = given.get(question, ("", ""))
        said = f"answer ({source or 'given'}) to {one_line(question, 120)!r}: {one_line(answer, 200)}"
        lines.append((when or "~", f"{when} {said}" if when else said))
    return [line for _, line in sorted(lines)]


def _answers_given(ctx: RunContext, task_id: str) -> dict[str, tuple[str, str]]:
    """When and where each of the task's questions was answered, by question, from its trace: `answer_given`, which
    `autobuild answer` writes (`cli`, or `page` for the page's), else the task's `question_answered` (a terminal's
    answer says `cli`; a served run's resume, `api`)."""
    asked: dict[str, str] = {}
    given: dict[str, tuple[str, str]] = {}
    answered: dict[str, tuple[str, str]] = {}
    for event in event_log.task_events(ctx.repo.root, ctx.feature_id, task_id):
        question_id = str(event.fields.get("question_id") or "")
        if event.kind == "question_asked":
            asked[question_id] = str(event.fields.get("question") or "")
        elif event.kind == "answer_given":
            given[question_id] = (event.time, str(event.fields.get("source") or "cli"))
        elif event.kind == "question_answered":
            answered[question_id] = given.pop(question_id, (event.time, str(event.fields.get("source") or "api")))
    return {asked[question_id]: said for question_id, said in answered.items() if question_id in asked}
