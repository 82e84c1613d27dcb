"""The run-wide usage-limit gate on a fake clock: everyone waits for the reset, one session probes, the pause
is bounded by max wait, and a recorded pause is resumed into."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest
from claude_agent_sdk import AssistantMessage, TextBlock

from agents.limits import Pause, UsageLimitExceeded, UsageLimitGate
from agents.request import SessionRequest
from agents.stream import Collector
from agents.types import AgentResult


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)


def gate_on(clock: FakeClock, max_wait: float = 3600.0, **kwargs: object) -> UsageLimitGate:
    return UsageLimitGate(max_wait, clock=clock, sleep=clock.sleep, **kwargs)  # type: ignore[arg-type]


async def test_everyone_waits_for_the_reset_then_one_probes_before_the_rest() -> None:
    clock = FakeClock()
    changes: list[Pause | None] = []
    gate = gate_on(clock, on_change=changes.append)
    gate.hit(clock.now + 25, "rate limited (429)", "a")
    released: list[tuple[str, float]] = []

    async def session(name: str) -> None:
        probe = await gate.wait(name)
        released.append((name, clock.now))
        gate.cleared(name)  # only the probe's success lifts the pause
        if probe:
            await clock.sleep(2)
            gate.cleared(name)

    await asyncio.wait_for(asyncio.gather(session("a"), session("b"), session("c")), timeout=10)
    first_at = released[0][1]
    assert len(released) == 3 and first_at >= 1_000_025.0, "no one goes before the reset"
    assert all(at >= first_at + 2 for _, at in released[1:]), "the others follow only after the probe went through"
    assert changes[0] is not None and changes[0].until == 1_000_025.0 and changes[-1] is None


async def test_without_a_reset_time_it_backs_off_exponentially_one_probe_a_minute_at_most() -> None:
    clock = FakeClock()
    gate = gate_on(clock)
    probes: list[float] = []
    for _ in range(4):
        gate.hit(None, "overloaded", "s")
        assert await gate.wait("s")
        probes.append(clock.now)
    gaps = [later - earlier for earlier, later in itertools.pairwise(probes)]
    assert all(gap >= 60 for gap in gaps) and gaps == sorted(gaps) and gaps[-1] > gaps[0]


async def test_a_pause_past_max_wait_stops_the_run() -> None:
    clock = FakeClock()
    gate = gate_on(clock, max_wait=600)
    gate.hit(clock.now + 3600, "usage limit reached", "s")
    with pytest.raises(UsageLimitExceeded, match="past --max-wait 600s"):
        await gate.wait("s")
    assert gate.exceeded


async def test_a_recorded_pause_is_resumed_into_for_the_remaining_time_only() -> None:
    clock = FakeClock()
    recorded = Pause(until=clock.now + 40, reason="rate limited (429)", since=clock.now - 20)
    gate = gate_on(clock, resume_from=recorded)
    await gate.wait("s")
    assert clock.now == pytest.approx(1_000_040.0, abs=5.0)
    assert gate_on(clock, resume_from=Pause(until=clock.now - 1, reason="x", since=0)).pause is None


async def test_sessions_already_running_join_the_pause_without_growing_it_or_lifting_it() -> None:
    clock = FakeClock()
    gate = gate_on(clock)
    for name in ("a", "b", "c", "d"):  # four sessions refused at nearly the same moment
        gate.hit(None, "rate limited (429)", name)
    assert gate.pause is not None and gate.pause.until == clock.now + 60, "one backoff, not four doublings"
    gate.cleared("e")  # a session that started before the limit finishing fine proves nothing
    assert gate.pause is not None


def test_the_probes_first_real_answer_lifts_the_pause_not_the_end_of_its_session(tmp_path: Path) -> None:
    request = SessionRequest(role="player", task_id="T", turn=1, cwd=tmp_path, system_prompt="", prompt="", tools=[])
    collector = Collector(request, AgentResult(role="player", status="success"))
    answers: list[str] = []
    collector.on_answer = lambda: answers.append("lifted")
    collector.take(AssistantMessage(content=[TextBlock("API Error: 429")], model="<synthetic>", error="rate_limit"))
    assert answers == [], "a synthetic error message is not an answer"
    collector.take(AssistantMessage(content=[TextBlock("working")], model="claude"))
    collector.take(AssistantMessage(content=[TextBlock("still working")], model="claude"))
    assert answers == ["lifted"]
