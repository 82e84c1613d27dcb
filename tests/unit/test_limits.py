"""The run-wide usage-limit gate on a fake clock: everyone waits for the reset, one session probes, the pause
is bounded by max wait, and a recorded pause is resumed into."""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path

import pytest
from claude_agent_sdk import AssistantMessage, RateLimitEvent, RateLimitInfo, TextBlock

from agents.limits import Pause, UsageLimitExceeded, UsageLimitGate, Window, quota_windows
from agents.request import SessionRequest
from agents.stream import Collector
from agents.types import AgentResult
from orchestrator.store.pause import PauseRecords, credential_key, describe, pause_path, quota_path, read_pause


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


def quota_event(utilization: float, resets_at: float, *, warned: bool = False) -> RateLimitEvent:
    """A rate-limit event as the bundled CLI sends it for a subscription (measured): every window's reading in
    `unifiedWindows`; the typed `utilization` only when it warns."""
    raw = {"status": "allowed_warning" if warned else "allowed", "resetsAt": int(resets_at),
           "unifiedWindows": {"five_hour": {"utilization": utilization, "resetsAt": int(resets_at)},
                              "seven_day": {"utilization": 0.1, "resetsAt": int(resets_at) + 86400}}}
    info = RateLimitInfo(status=raw["status"], resets_at=int(resets_at),  # type: ignore[arg-type]
                         rate_limit_type="five_hour" if warned else None,
                         utilization=utilization if warned else None, raw=raw)
    return RateLimitEvent(rate_limit_info=info, uuid="u", session_id="s")


def test_quota_windows_are_read_from_the_raw_readings_and_the_typed_warning() -> None:
    event = quota_event(0.5, 2_000_000.0)
    windows = quota_windows(event.rate_limit_info.raw)
    assert windows == [Window("five_hour", 0.5, 2_000_000.0), Window("seven_day", 0.1, 2_086_400.0)]
    assert quota_windows({}, "seven_day", 0.8, 3_000_000) == [Window("seven_day", 0.8, 3_000_000.0)]
    assert quota_windows(None) == [] and quota_windows({"unifiedWindows": {"x": {"utilization": "high"}}}) == []


async def test_a_window_at_the_threshold_stops_new_sessions_until_it_resets_running_ones_go_on(
        tmp_path: Path) -> None:
    clock = FakeClock()
    changes: list[Pause | None] = []
    gate = gate_on(clock, max_utilization=0.9, on_change=changes.append)
    request = SessionRequest(role="player", task_id="T", turn=1, cwd=tmp_path, system_prompt="", prompt="", tools=[],
                             limit_gate=gate)
    running = Collector(request, AgentResult(role="player", status="success"))
    running.take(quota_event(0.89, clock.now + 30))
    assert gate.pause is None, "below the threshold nothing changes"
    running.take(quota_event(0.9, clock.now + 30))
    assert gate.pause is not None and gate.pause.kind == "quota" and gate.pause.until == clock.now + 30
    assert "five_hour quota at 90%" in gate.pause.reason and len(changes) == 1
    running.take(quota_event(0.95, clock.now + 30))  # the running session goes on reporting: no new pause
    assert len(changes) == 1
    assert await gate.wait("new session") and clock.now >= 1_000_030.0, "a new session waits for the reset"
    gate.cleared("new session")
    assert gate.pause is None and changes[-1] is None


async def test_a_probe_that_finds_the_quota_still_spent_does_not_lift_the_pause() -> None:
    clock = FakeClock()
    gate = gate_on(clock, max_utilization=0.8)
    gate.observe([Window("five_hour", 0.85, clock.now + 10)], "running")
    assert await gate.wait("probe")
    gate.observe([Window("seven_day", 0.81, clock.now + 100)], "probe")  # its answer: another window is full
    gate.cleared("probe")
    assert gate.pause is not None and gate.pause.until == clock.now + 100


async def test_max_utilization_1_and_api_keys_change_nothing() -> None:
    clock = FakeClock()
    off = gate_on(clock, max_utilization=1.0, load_shared=lambda: Pause(clock.now + 50, "shared", 0, "quota"))
    off.observe([Window("five_hour", 1.0, clock.now + 60)], "s")
    assert off.pause is None and not await off.wait("s") and clock.now == 1_000_000.0
    on = gate_on(clock, max_utilization=0.9)
    on.observe([], "s")  # an API-key session reports no windows at all
    assert on.pause is None


async def test_a_quota_pause_another_run_shared_is_honoured_and_bounded_by_max_wait() -> None:
    clock = FakeClock()
    shared = Pause(until=clock.now + 20, reason="five_hour quota at 95%", since=clock.now - 100, kind="quota")
    gate = gate_on(clock, max_utilization=0.9, load_shared=lambda: shared)
    await gate.wait("s")
    assert clock.now >= shared.until and gate.pause is not None and gate.pause.kind == "quota"
    weekly = Pause(until=clock.now + 5 * 86400, reason="seven_day quota at 91%", since=clock.now, kind="quota")
    bounded = gate_on(clock, max_wait=3600, max_utilization=0.9, load_shared=lambda: weekly)
    with pytest.raises(UsageLimitExceeded, match="past --max-wait 3600s"):
        await bounded.wait("s")


def test_the_quota_pause_is_shared_per_credential_by_a_hash_never_the_credential(tmp_path: Path) -> None:
    token = "sk-ant-oat01-SECRET-never-on-disk"
    key = credential_key({"CLAUDE_CODE_OAUTH_TOKEN": token, "ANTHROPIC_BASE_URL": "http://127.0.0.1:1"})
    assert token not in key and len(key) == 32
    assert key != credential_key({"CLAUDE_CODE_OAUTH_TOKEN": token + "x", "ANTHROPIC_BASE_URL": "http://127.0.0.1:1"})
    assert credential_key({"CLAUDE_CONFIG_DIR": "/a"}) != credential_key({"CLAUDE_CONFIG_DIR": "/b"})
    (tmp_path / "a").mkdir()  # two repositories: each run's record is in its own
    (tmp_path / "b").mkdir()
    first = PauseRecords(pause_path(tmp_path / "a", "FEAT-001"), quota_path(key, tmp_path))
    second = PauseRecords(pause_path(tmp_path / "b", "FEAT-001"), quota_path(key, tmp_path))
    first.write(Pause(until=time.time() + 600, reason="rate limited (429)", since=time.time()))
    assert second.read_shared() is None, "a 429 of one run is its own affair"
    quota = Pause(until=time.time() + 600, reason="five_hour quota at 93%", since=time.time(), kind="quota")
    first.write(quota)
    assert second.read_shared() == quota and token not in first.shared.read_text()
    first.write(None)
    assert first.feature.exists() is False and second.read_shared() == quota, "kept until the window resets"
    assert describe(quota) is not None and ", quota (five_hour quota at 93%" in str(describe(quota))


async def test_a_quota_pause_on_disk_is_resumed_into_after_a_crash(tmp_path: Path) -> None:
    clock = FakeClock()
    records = PauseRecords(pause_path(tmp_path, "FEAT-001"), tmp_path / "quota" / "key.json")
    records.write(Pause(until=clock.now + 30, reason="five_hour quota at 95%", since=clock.now, kind="quota"))
    resumed = read_pause(records.feature)
    assert resumed is not None and resumed.kind == "quota"
    gate = gate_on(clock, max_utilization=0.9, resume_from=resumed, load_shared=records.read_shared)
    assert await gate.wait("first session after the restart")
    assert clock.now >= 1_000_030.0, "no session before the window reset"
