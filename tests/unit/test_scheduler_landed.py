"""A landed task gives its `--parallel` slot back once, at its landing, and its dependents are ready then."""

from __future__ import annotations

from orchestrator.graph.scheduler import Scheduler
from orchestrator.graph.state import TaskResult
from orchestrator.plan.model import parse_plan

PLAN = parse_plan({"id": "FEAT-001", "name": "f", "tasks": [
    {"id": "A", "name": "a"}, {"id": "B", "name": "b", "dependencies": ["A"]}]}, "test")


async def test_the_slot_comes_back_at_the_landing_and_only_once() -> None:
    scheduler = Scheduler(PLAN, ["A", "B"], 1, "dag")
    async with scheduler.slot("A"):
        assert scheduler.slots.locked()
        await scheduler.landed("A", TaskResult(status="approved", merged=True))
        assert not scheduler.slots.locked(), "B's start needs no slot from A's cleanup"
        assert await scheduler.wait_ready("B", lambda: False) is None, "B is ready to run on A's work"
        async with scheduler.slot("B"):  # B runs while A's run ends
            assert scheduler.slots.locked()
    await scheduler.slots.acquire()
    assert scheduler.slots.locked(), "--parallel 1 is still one slot: A's was given back once"
