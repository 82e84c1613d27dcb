"""Readiness scheduling: a task starts as soon as its prerequisites are merged and a `--parallel` slot is free.

In-memory and per run: it only coordinates the task bodies of one workflow invocation. What survives a crash
is in the checkpoints (finished tasks' results are replayed to it on resume).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Collection
from typing import NoReturn

from langgraph.errors import GraphInterrupt

from orchestrator.graph.live_pause import Slots
from orchestrator.graph.state import SUCCESS, TaskResult
from orchestrator.plan.model import FeaturePlan
from orchestrator.settings import Schedule


class Held(Exception):
    """A signal, not an error: a task can't start in this run (a prerequisite waits for an answer, failed to run,
    or the run drains). It is not a result: the task starts on resume."""


class Scheduler:
    """Who may start when. `order` is the run's tasks in plan order (one task for `run TASK-ID`)."""

    POLL_S = 0.5  # how often a waiting task looks at the drain flag

    def __init__(self, plan: FeaturePlan, order: list[str], parallel: int, schedule: Schedule,
                 ignore_deps: bool = False, *, earlier: dict[str, TaskResult] | None = None) -> None:
        self.plan = plan
        self.order = order
        self.schedule = schedule
        self.ignore_deps = ignore_deps
        self.results: dict[str, TaskResult] = {k: v for k, v in (earlier or {}).items() if k not in order}
        """This run's results, and the earlier ones of tasks that do not run now (they decide skips too)."""
        self.held: dict[str, str] = {}
        self.errored: set[str] = set()
        """Held tasks whose run raised an error (resumable): their outcome says so."""
        self.slots = Slots(parallel)
        self._holding: set[str] = set()
        """Tasks holding a slot they took with `slot()` (given back at their landing or their end)."""
        self._changed = asyncio.Condition()
        in_run = set(order)
        self._group_of = {task_id: index for index, group in enumerate(plan.groups()) for task_id in group}
        self._prerequisites = {task_id: self._compute_prerequisites(task_id, in_run) for task_id in order}

    def _compute_prerequisites(self, task_id: str, in_run: set[str]) -> list[str]:
        needed = set(self.plan.task(task_id).dependencies)
        if self.schedule == "groups":
            needed |= {other for other in in_run if self._group_of[other] < self._group_of[task_id]}
        return [other for other in self.order if other in needed and other in in_run]

    def prerequisites(self, task_id: str) -> list[str]:
        return self._prerequisites[task_id]

    async def wait_ready(self, task_id: str, draining: Callable[[], bool]) -> str | None:
        """Wait until every prerequisite finished; the reason to skip the task, or None to run it.
        Raises Held when it can't start in this run."""
        async with self._changed:
            while True:
                if draining():
                    raise Held("the run is stopping")
                pending = [p for p in self.prerequisites(task_id) if p not in self.results]
                for prerequisite in pending:
                    if prerequisite in self.held:
                        raise Held(f"waits for {prerequisite} ({self.held[prerequisite]})")
                if not pending:
                    return self._skip_reason(task_id)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), self.POLL_S)

    def moving(self, paused: Collection[str]) -> bool:
        """Whether a task of the run other than these paused ones runs or can start: unfinished, not held, its
        prerequisites finished (a task waiting for a paused one can't go on until it does)."""
        return any(task_id not in self.results and task_id not in self.held and task_id not in paused
                   and all(p in self.results for p in self.prerequisites(task_id)) for task_id in self.order)

    def _skip_reason(self, task_id: str) -> str | None:
        if self.ignore_deps:
            return None
        for dependency in self.plan.task(task_id).dependencies:
            result = self.results.get(dependency)
            if result is None:
                continue  # not part of this run (`run TASK-ID` checked it was merged before)
            if result.get("status") not in SUCCESS or not result.get("merged"):
                return f"dependency {dependency} {result.get('status', 'did not finish')}"
        return None

    async def extend(self, after: str, task_ids: list[str]) -> None:
        """Tasks a replan added to the plan (which already holds them, dependents rewired): they join the run
        right after the task they replace, and every task's prerequisites follow the new plan."""
        async with self._changed:
            at = self.order.index(after) + 1 if after in self.order else len(self.order)
            self.order[at:at] = [task_id for task_id in task_ids if task_id not in self.order]
            in_run = set(self.order)
            self._group_of = {task_id: index for index, group in enumerate(self.plan.groups()) for task_id in group}
            self._prerequisites = {task_id: self._compute_prerequisites(task_id, in_run) for task_id in self.order}
            self._changed.notify_all()

    @contextlib.asynccontextmanager
    async def slot(self, task_id: str) -> AsyncIterator[None]:
        """A `--parallel` slot for the task's run, given back at its landing (`landed`) or when its run ends."""
        await self.slots.acquire()
        self._holding.add(task_id)
        try:
            yield
        finally:
            self._give_back(task_id)

    def _give_back(self, task_id: str) -> None:
        if task_id in self._holding:
            self._holding.discard(task_id)
            self.slots.release()

    async def landed(self, task_id: str, result: TaskResult) -> None:
        """The task's work is on the feature branch: its dependents start now, in its slot; what is left of its
        run (its worktree's removal, the checkpoints that end its subgraph) runs no session and waits for none."""
        self._give_back(task_id)
        await self.finish(task_id, result)

    async def finish(self, task_id: str, result: TaskResult) -> None:
        async with self._changed:
            self.results[task_id] = result
            self._changed.notify_all()

    async def hold(self, task_id: str, why: str, *, error: bool = False) -> None:
        async with self._changed:
            self.held.setdefault(task_id, why)
            if error:
                self.errored.add(task_id)
            self._changed.notify_all()


async def hold(scheduler: Scheduler, task_id: str, why: str, *, then: Callable[[], object] | None = None,
               error: bool = False) -> NoReturn:
    """Hold a task for resume: the scheduler notes why (`then` runs next), and its `@task` body ends as an empty
    interrupt.

    An empty `GraphInterrupt` saves nothing, is no failure, and the task runs again on resume
    (docs/langgraph-facts.md, "Interrupts" and "Errors"). This is the one place that spells it.
    """
    await scheduler.hold(task_id, why, error=error)
    if then is not None:
        then()
    raise GraphInterrupt(()) from None
