"""The page's live parts as server-sent events: a task's durable event log from any id on (an `EventSource` that
reconnects sends the last id it saw, as `Last-Event-ID`, and gets only what came after: nothing lost, nothing
twice), and a feature's task table and flowchart whenever they change. Both read what `logs` and `status` read."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from sse_starlette import ServerSentEvent

from orchestrator.errors import InputError, StoreError
from orchestrator.store import event_log
from orchestrator.store.run_liveness import STOPPED
from orchestrator.views.mermaid import flowchart
from orchestrator.web.reading import Where, going_on, questions, run_state

POLL_S = 0.5
"""How often a stream looks at the log and the store again."""
MAX_FIELD_CHARS = 4000
"""An event's long fields (a gate's output, a report) are cut in the stream: the turn's section has them whole."""


def _cut(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_FIELD_CHARS:
        return value[:MAX_FIELD_CHARS] + f"… ({len(value) - MAX_FIELD_CHARS} more characters)"
    if isinstance(value, dict):
        return {key: _cut(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_cut(item) for item in value[:200]]
    return value


def since_id(last_event_id: str | None, since: str | None) -> int:
    """Where a stream starts: after the id the browser saw last (a reconnect), else after `?since=`, else 0."""
    for given in (last_event_id, since):
        if given and given.strip().isdigit():
            return int(given.strip())
    return 0


async def task_log(where: Where, feature: str, task_id: str, since: int,
                   poll_s: float = POLL_S) -> AsyncIterator[ServerSentEvent]:
    """Every event of the task's log after `since`, each with its id, until its attempt ended: then `end`."""
    last = since
    while True:
        ended = await asyncio.to_thread(event_log.task_has_ended, where.repo, feature, task_id)
        for event in await asyncio.to_thread(event_log.task_events, where.repo, feature, task_id, last):
            last = max(last, event.id)
            yield ServerSentEvent(json.dumps(_cut(event.as_dict()), default=str), event="log", id=str(event.id))
        if ended:
            yield ServerSentEvent(json.dumps({"last": last}), event="end")
            return
        await asyncio.sleep(poll_s)


def feature_state(where: Where, feature: str) -> dict[str, Any]:
    """What the feature page keeps current: each task's row of `status`, the total, the flowchart, the questions."""
    plan = where.plan(feature)
    table = where.status(plan)
    fields = ("status", "turn", "cost_usd", "last_decision", "cause", "reason")
    state = "finished" if table["finished"] else going_on(where, plan.id, table["thread"], run_state(table))
    return {"finished": table["finished"], "cost_usd": table["cost_usd"],
            "stopped": state if state.startswith(STOPPED) else None,  # a `kill -9` while the page was open
            "tasks": {row["task"]: {key: row.get(key) for key in fields} for row in table["tasks"]},
            "questions": [q["question_id"] for q in questions(table)],
            "flowchart": flowchart(plan, {row["task"]: row["status"] for row in table["tasks"]}).text}


async def feature_states(where: Where, feature: str, poll_s: float = POLL_S) -> AsyncIterator[ServerSentEvent]:
    """The feature's state now, then again each time it changes, until the run has finished."""
    shown = None
    while True:
        try:
            state = await asyncio.to_thread(feature_state, where, feature)
        except (InputError, StoreError) as exc:  # not run yet, or the store busy: said once, then looked at again
            state = {"missing": str(exc)}
        if state != shown:
            shown = state
            yield ServerSentEvent(json.dumps(state), event="state")
        if state.get("finished"):
            yield ServerSentEvent("{}", event="end")
            return
        await asyncio.sleep(poll_s)
