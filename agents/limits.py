"""The usage-limit gate: one per run, shared by every session. A rate or usage limit hit anywhere pauses all
sessions (none starts, a waiting one doesn't retry) until the reset time the API or the CLI gave, or, when
nothing says, with exponential backoff; then a single session probes before the others follow. A pause
longer than the run's `max_wait` ends in `UsageLimitExceeded`.

Quota-aware (`max_utilization` < 1): a subscription's quota window the CLI reports at or over that share
pauses the start of new sessions until the window resets, while running sessions finish (a "quota" pause,
also adopted from other runs of the same credential through `load_shared`).

Served runs (`yield_after_s` > 0): a pause longer than that gives the run's worker slot back instead of waiting in
it: `wait` raises `UsageLimitYield` (the session doesn't start; the graph holds its task at the node boundary and
ends the run, to be re-queued when the pause is over).

Pure asyncio with an injectable clock, so the run's policy is tested without waiting for real time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agents.types import AgentResult

PROBE_INTERVAL_S = 60.0
"""Never more than one request per this many seconds while paused, across the whole run."""
MAX_BACKOFF_S = 1800.0


class UsageLimitExceeded(Exception):
    """A signal, not an error: the limit would keep the run waiting longer than its `max_wait`."""


class UsageLimitYield(Exception):
    """A signal, not an error: the pause outlasts the run's yield threshold (served runs). This session doesn't
    start; its task is held and runs again when the run resumes after the pause. Nothing is recorded as failed."""

    def __init__(self, pause: Pause) -> None:
        super().__init__(f"paused until {time.strftime('%H:%M', time.localtime(pause.until))} ({pause.reason}):"
                         " the run yields its slot and resumes after the pause")
        self.pause = pause


@dataclass(frozen=True)
class Pause:
    """A pause in force: until when (epoch seconds), why, and since when the run has been limited."""

    until: float
    reason: str
    since: float
    kind: str = "limit"
    """"limit": the API refused (a 429, a usage limit); "quota": a window reached --max-utilization."""


@dataclass(frozen=True)
class Window:
    """One quota window as the CLI reported it: its name (five_hour, seven_day, …), the share used, its reset."""

    name: str
    utilization: float
    resets_at: float


def quota_windows(raw: Mapping[str, Any] | None, rate_limit_type: str | None = None,
                  utilization: float | None = None, resets_at: float | None = None) -> list[Window]:
    """The windows a rate-limit event reports. The SDK's `utilization` is only filled when the CLI warns (measured,
    CLI 2.1.330: five_hour >= 0.9 early in the window, seven_day >= 0.25/0.5/0.75 early, or the server's
    surpassed-threshold header); the event's raw `unifiedWindows` carries every window's reading whenever
    the response headers do, so both are read. API-key sessions send no event at all."""
    found: dict[str, Window] = {}
    windows = (raw or {}).get("unifiedWindows")
    for name, reading in (windows.items() if isinstance(windows, dict) else ()):
        if isinstance(reading, dict) and isinstance(reading.get("utilization"), int | float) \
                and isinstance(reading.get("resetsAt"), int | float):
            found[str(name)] = Window(str(name), float(reading["utilization"]), float(reading["resetsAt"]))
    if rate_limit_type and utilization is not None and resets_at and rate_limit_type not in found:
        found[rate_limit_type] = Window(rate_limit_type, float(utilization), float(resets_at))
    return list(found.values())


def limit_hit(result: AgentResult) -> bool:
    """Did this session end on a rate or usage limit (not on another API error)?"""
    if result.status == "success":
        return False  # a rate-limit notice in a session that still got through is not a stop
    if result.limit_resets_at is not None:
        return True
    return result.status == "api_error" and result.api_status == 429


class UsageLimitGate:
    """Run-wide pause for rate and usage limits."""

    def __init__(self, max_wait_s: float, *, probe_interval_s: float = PROBE_INTERVAL_S,
                 on_change: Callable[[Pause | None], None] | None = None,
                 clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 resume_from: Pause | None = None, max_utilization: float = 1.0,
                 load_shared: Callable[[], Pause | None] | None = None, yield_after_s: float = 0.0,
                 on_yield: Callable[[Pause], None] | None = None) -> None:
        self.max_wait_s = max_wait_s
        self.yield_after_s = yield_after_s
        """Served runs: a pause with more than this many seconds left ends the run instead (0: wait in it)."""
        self.on_yield = on_yield
        self.yielded: Pause | None = None
        """The pause the run gave its slot back for (told to `on_yield` once)."""
        self.max_utilization = max_utilization
        self.load_shared = load_shared
        self.probe_interval_s = probe_interval_s
        self.on_change = on_change
        self.clock = clock
        self.sleep = sleep
        self.pause: Pause | None = resume_from if resume_from and resume_from.until > clock() else None
        self.exceeded = False
        self._backoff = probe_interval_s
        self._probing: object | None = None  # the session sending the one request allowed after a pause

    async def wait(self, owner: object) -> bool:
        """Return when `owner` (a session) may send requests, True when it is the one probing the limit;
        raise UsageLimitExceeded past `max_wait`, UsageLimitYield when a served run gives its slot back."""
        self._adopt_shared()
        while self.pause is not None:
            now = self.clock()
            if self.pause.until - self.pause.since > self.max_wait_s:
                self.exceeded = True
                raise UsageLimitExceeded(
                    f"usage limit ({self.pause.reason}): the run would wait until"
                    f" {time.strftime('%H:%M', time.localtime(self.pause.until))}, past --max-wait"
                    f" {self.max_wait_s:.0f}s")
            if self.yielded is not None or (0 < self.yield_after_s < self.pause.until - now):
                self._yield(self.pause)
            if now < self.pause.until:
                await self.sleep(min(self.pause.until - now, 5.0))
            elif self._probing is None or self._probing is owner:
                self._probing = owner  # this session probes; the others wait for what it finds
                return True
            else:
                await self.sleep(1.0)
        return False

    def _yield(self, pause: Pause) -> None:
        """Give the run's slot back: said once (the run drains), then every session that would wait stops too; said
        again when a window found later extends the pause (so the thread isn't re-queued before it ends)."""
        said = self.yielded
        self.yielded = pause
        if self.on_yield is not None and (said is None or pause.until > said.until):
            self.on_yield(pause)
        raise UsageLimitYield(pause)

    def hit(self, resets_at: float | None, reason: str, owner: object) -> None:
        """A session hit the limit: pause everything until `resets_at`, else back off exponentially (never
        probing more than once per `probe_interval_s`). Only the first hit or a failed probe grows the
        backoff: sessions that were already running when the limit struck just join the pause."""
        now = self.clock()
        probe_failed = self._probing is owner
        if resets_at is not None and resets_at > now:
            until = max(resets_at, now + 1.0)
        elif self.pause is None or probe_failed:
            until = now + self._backoff
            self._backoff = min(self._backoff * 2, MAX_BACKOFF_S)
        else:
            until = self.pause.until
        if probe_failed:
            until = max(until, now + self.probe_interval_s)
            self._probing = None
        since = self.pause.since if self.pause is not None else now
        self.pause = Pause(until=max(until, self.pause.until if self.pause else 0.0), reason=reason, since=since)
        if self.on_change is not None:
            self.on_change(self.pause)

    def observe(self, windows: list[Window], owner: object) -> None:
        """A session reported its credential's quota windows: one at or over `max_utilization` (below 1) stops
        new sessions until it resets. The reporting session goes on; a probe that finds the quota still spent
        stops probing (its answer doesn't lift the pause)."""
        if self.max_utilization >= 1.0:
            return
        now = self.clock()
        full = [w for w in windows if w.utilization >= self.max_utilization and w.resets_at > now]
        if not full:
            return
        worst = max(full, key=lambda w: w.resets_at)
        if self._probing is owner:
            self._probing = None
        if self.pause is not None and self.pause.until >= worst.resets_at:
            return
        reason = (f"{worst.name} quota at {worst.utilization:.0%}, at or over --max-utilization"
                  f" {self.max_utilization:g}")
        since = self.pause.since if self.pause is not None else now
        self.pause = Pause(until=worst.resets_at, reason=reason, since=since, kind="quota")
        if self.on_change is not None:
            self.on_change(self.pause)

    def _adopt_shared(self) -> None:
        """Another run on the same credential found the quota spent: honour its pause too."""
        if self.load_shared is None or self.max_utilization >= 1.0:
            return
        shared = self.load_shared()
        now = self.clock()
        if shared is None or shared.until <= now or (self.pause is not None and self.pause.until >= shared.until):
            return
        since = self.pause.since if self.pause is not None else now
        self.pause = Pause(until=shared.until, reason=shared.reason, since=since, kind=shared.kind)
        if self.on_change is not None:
            self.on_change(self.pause)

    def abandon_probe(self, owner: object) -> None:
        """The probing session ended without an answer from the API (an error of ours): let another probe."""
        if self._probing is owner:
            self._probing = None

    def cleared(self, owner: object) -> None:
        """`owner`'s session went through. Only the probe's says the limit is over: a session that was
        already running when the limit struck proves nothing about requests sent now."""
        if self.pause is None or self._probing is not owner:
            return
        self._probing = None
        self.pause = None
        self._backoff = self.probe_interval_s
        if self.on_change is not None:
            self.on_change(None)
