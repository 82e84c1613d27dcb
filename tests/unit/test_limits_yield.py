"""A served run's yield: the usage-limit gate on a fake clock gives the slot back only for a pause longer than the
threshold, says so once, stops every later session too, and leaves the CLI (no threshold) waiting as before; the
settings that carry the threshold to the run."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from agents.limits import Pause, UsageLimitExceeded, UsageLimitYield, Window
from orchestrator.errors import InputError
from orchestrator.graph.pause import record_yield as _record_yield
from orchestrator.server.client import RemoteStatus
from orchestrator.settings import RunOptions, RunSettings, WorkerSettings, load_settings
from orchestrator.store.paused_threads import PausedThreads, interrupt_value, is_pause
from tests.unit.test_limits import FakeClock, gate_on


async def test_a_quota_pause_longer_than_the_threshold_yields_once_and_stops_every_later_session() -> None:
    clock = FakeClock()
    yielded: list[Pause] = []
    gate = gate_on(clock, max_wait=3 * 3600, max_utilization=0.9, yield_after_s=300, on_yield=yielded.append)
    gate.observe([Window("five_hour", 0.95, clock.now + 3600)], "running")
    with pytest.raises(UsageLimitYield) as first:
        await gate.wait("next")
    with pytest.raises(UsageLimitYield):
        await gate.wait("another")
    assert [p.until for p in yielded] == [clock.now + 3600], "said once"
    assert first.value.pause.kind == "quota" and gate.yielded == yielded[0]
    assert clock.now == 1_000_000.0, "nothing waited"
    # A running session reports the weekly window full too: the pause now ends later, and that is said again (the
    # workers' store must not re-queue the thread at the first reset).
    gate.observe([Window("seven_day", 0.97, clock.now + 7200)], "running")  # within --max-wait
    with pytest.raises(UsageLimitYield):
        await gate.wait("later")
    assert [p.until for p in yielded] == [clock.now + 3600, clock.now + 7200]


async def test_a_pause_within_the_threshold_is_waited_out_and_none_yields_without_one() -> None:
    for threshold, reset_in in ((300.0, 200.0), (0.0, 3000.0)):
        clock = FakeClock()
        gate = gate_on(clock, max_utilization=0.9, yield_after_s=threshold)
        start = clock.now
        gate.observe([Window("five_hour", 0.95, start + reset_in)], "running")
        assert await gate.wait("next") is True  # waited, then probes
        assert clock.now >= start + reset_in and gate.yielded is None


async def test_a_limit_with_a_known_reset_yields_but_max_wait_still_bounds_the_pause() -> None:
    clock = FakeClock()
    gate = gate_on(clock, max_wait=600, yield_after_s=60)
    gate.hit(clock.now + 120, "usage limit", "a")
    with pytest.raises(UsageLimitYield):
        await gate.wait("b")
    clock = FakeClock()
    gate = gate_on(clock, max_wait=600, yield_after_s=60)
    gate.hit(clock.now + 7200, "usage limit", "a")
    with pytest.raises(UsageLimitExceeded):
        await gate.wait("b")


def test_the_interrupt_value_says_what_and_until_when() -> None:
    value = interrupt_value(Pause(until=1_800_000_000.0, reason="five_hour quota at 95%", since=0.0, kind="quota"))
    assert value == {"kind": "usage_pause", "until": 1_800_000_000.0, "until_iso": "2027-01-15T08:00:00.000Z",
                     "reason": "five_hour quota at 95%", "pause_kind": "quota"}
    assert is_pause(value) and not is_pause({"question_id": "A-1", "question": "?"})


def test_the_threshold_comes_from_the_run_else_the_worker_else_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ORCHESTRATOR_YIELD_PAUSE_SECONDS", raising=False)
    assert RunOptions().yield_after() == 0.0, "the CLI waits in the run"
    monkeypatch.setenv("ORCHESTRATOR_YIELD_PAUSE_SECONDS", "300")
    assert RunOptions().yield_after() == 300.0
    assert RunOptions(yield_pause=5).yield_after() == 5.0
    with pytest.raises(InputError, match="yield_pause"):
        RunOptions(yield_pause=-1).validate_options()


def test_the_cli_waits_a_pause_out_whatever_its_environment_says(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORCHESTRATOR_YIELD_PAUSE_SECONDS", "300")
    monkeypatch.setenv("ORCHESTRATOR_YIELD_PAUSE", "300")
    settings = load_settings(RunSettings, tmp_path, target="FEAT-001")
    assert settings.yield_pause is None and settings.options().yield_after() == 0.0


def test_worker_settings_check_the_threshold_and_the_wakers_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    base = {"DATABASE_URL": "postgresql://x/y", "REDIS_URL": "redis://x"}
    for name, value in (("ORCHESTRATOR_YIELD_PAUSE_SECONDS", "-1"), ("ORCHESTRATOR_WAKE_SECONDS", "0")):
        for key, setting in {**base, name: value}.items():
            monkeypatch.setenv(key, setting)
        with pytest.raises(InputError, match=name):
            WorkerSettings().checked()
        monkeypatch.delenv(name)
    settings = WorkerSettings().checked()
    assert (settings.yield_pause_seconds, settings.wake_seconds) == (300.0, 5.0)


def test_a_yield_the_workers_store_could_not_record_says_so_and_is_not_called_re_queued() -> None:
    unreachable = PausedThreads("postgresql://u@127.0.0.1:1/nothing")  # nothing listens on port 1
    now = time.time()
    pause = Pause(until=now + 600, reason="five_hour quota at 95%", since=now, kind="quota")
    unrecorded: list[str] = []
    _record_yield(unreachable, "thread-1", pause, unrecorded)
    assert len(unrecorded) == 1 and "OperationalError" in unrecorded[0], unrecorded
    status = RemoteStatus("thread-1", "interrupted", paused_until=pause.until, pause_reason=pause.reason,
                          pause_unrecorded=unrecorded[0])
    assert "NOT re-queued" in status.paused() and "submit it again" in status.paused()
    assert "re-queued automatically" in RemoteStatus("t", "interrupted", paused_until=pause.until).paused()
