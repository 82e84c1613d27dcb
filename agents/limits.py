"""The usage-limit gate: one per run, shared by every session. A rate or usage limit hit anywhere pauses all
sessions (none starts, a waiting one doesn't retry) until the reset time the API or the CLI gave, or, when
nothing says, with exponential backoff; then a single session probes before the others follow. A pause
longer than the run's `max_wait` ends in `UsageLimitExceeded`.

Pure asyncio with an injectable clock, so the run's policy is tested without waiting for real time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from agents.types import AgentResult

PROBE_INTERVAL_S = 60.0
"""Never more than one request per this many seconds while paused, across the whole run."""
MAX_BACKOFF_S = 1800.0


class UsageLimitExceeded(Exception):
    """The limit would keep the run waiting longer than its `max_wait`."""


@dataclass(frozen=True)
class Pause:
    """A pause in force: until when (epoch seconds), why, and since when the run has been limited."""

    until: float
    reason: str
    since: float


def limit_hit(result: AgentResult) -> bool:
    """Did this session end on a rate or usage limit (not on another API error)?"""
    if result.status == "success":
        return False  # a rate-limit notice in a session that still got through is not a stop
    if result.limit_resets_at is not None:
        return True
    text = " ".join(result.errors).lower()
    return result.status == "api_error" and ("api status 429" in text or "usage limit" in text)


class UsageLimitGate:
    """Run-wide pause for rate and usage limits."""

    def __init__(self, max_wait_s: float, *, probe_interval_s: float = PROBE_INTERVAL_S,
                 on_change: Callable[[Pause | None], None] | None = None,
                 clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 resume_from: Pause | None = None) -> None:
        self.max_wait_s = max_wait_s
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
        raise UsageLimitExceeded past `max_wait`."""
        while self.pause is not None:
            now = self.clock()
            if self.pause.until - self.pause.since > self.max_wait_s:
                self.exceeded = True
                raise UsageLimitExceeded(
                    f"usage limit ({self.pause.reason}): the run would wait until"
                    f" {time.strftime('%H:%M', time.localtime(self.pause.until))}, past --max-wait"
                    f" {self.max_wait_s:.0f}s")
            if now < self.pause.until:
                await self.sleep(min(self.pause.until - now, 5.0))
            elif self._probing is None or self._probing is owner:
                self._probing = owner  # this session probes; the others wait for what it finds
                return True
            else:
                await self.sleep(1.0)
        return False

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
