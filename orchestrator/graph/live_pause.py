"""A paused task in a live run waits in place: its `--parallel` slot given back, no session and no timeout running,
until `unpause` (it goes on at once, no `resume` needed), a cancel, or until the run has nothing left but paused tasks
and the tasks waiting for them (or the run stops): then it ends as an interrupt, the run waits (exit 3), and
`unpause` then `resume` go on from the node it stopped before. `Slots` are the run's slots, knowing how many are held
or wanted, so "nothing left" is never said while a task runs or is about to."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Collection
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Literal

from orchestrator.store.task_control import TaskControl

POLL_S = 0.2
"""How often a paused task reads its control records (a short SQLite read): an unpause takes effect within this."""
SETTLED_POLLS = 2
"""Polls in a row that must find nothing but paused tasks before the run ends: a task handing its slot to the next
one, or a finished task's dependents waking, are never taken for the run's end."""


class Slots(asyncio.Semaphore):
    """The run's `--parallel` slots, counting the ones held and the tasks waiting for one."""

    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.held = 0
        self.wanted = 0

    async def acquire(self) -> Literal[True]:
        self.wanted += 1
        try:
            await super().acquire()
        finally:
            self.wanted -= 1
        self.held += 1
        return True

    def release(self) -> None:
        self.held -= 1
        super().release()

    @property
    def busy(self) -> bool:
        """A task holds a slot or waits for one: the run is not left to paused tasks."""
        return self.held > 0 or self.wanted > 0


@dataclass
class LivePauses:
    """The tasks of one live run paused in place, and whether anything else can still go on."""

    slots: Slots
    moving: Callable[[Collection[str]], bool]
    """Whether a task of the run, other than these paused ones, runs or can start (the scheduler knows)."""
    waiting: Counter[str] = field(default_factory=Counter)
    """The paused tasks waiting now (a task with several attempts counts each)."""

    def only_paused_left(self) -> bool:
        return bool(self.waiting) and not self.slots.busy and not self.moving(set(self.waiting))

    async def wait(self, task_id: str, read: Callable[[], Awaitable[TaskControl]], draining: Callable[[], bool],
                   lend: Callable[[], AbstractAsyncContextManager[None]]) -> TaskControl | None:
        """Wait, the slot lent out (`lend`: the run context's `slot_given_up`), while the task stays paused: the
        control that ended the pause (unpaused, or a cancel), with the slot taken back; None when the run ends
        instead (only paused tasks left, or the run stops)."""
        self.waiting[task_id] += 1
        try:
            async with lend():
                settled = 0
                while True:
                    await asyncio.sleep(POLL_S)
                    control = await read()
                    if control.paused is None or control.cancel is not None:
                        return control
                    if draining():
                        return None
                    settled = settled + 1 if self.only_paused_left() else 0
                    if settled >= SETTLED_POLLS:
                        return None
        finally:
            self.waiting[task_id] -= 1
            if self.waiting[task_id] <= 0:
                del self.waiting[task_id]

