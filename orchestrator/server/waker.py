"""The worker's waker: every `autobuild serve` re-queues the served runs that gave their slot back during a long
usage-limit or quota pause, once the pause is over. It runs beside the engine in the worker (the custom app's
lifespan, orchestrator/server/app.py) and speaks to it through its own LangGraph Server API.

Several workers' wakers racing for one thread start one run: each claims the thread's row in the shared store and
only one claim succeeds (orchestrator/store/paused_threads.py); the feature lock would refuse a second run anyway.
A thread paused by anything else (a question waiting for its human) has no row: it is never resumed here."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from agents.limits import Pause
from orchestrator.server.client import api_client
from orchestrator.server.worker import GRAPH_ID
from orchestrator.settings import environment
from orchestrator.store.paused_threads import PausedThreads, shared_paused_threads

log = logging.getLogger("autobuild.waker")
_TERMINAL = frozenset({"success", "error", "interrupted", "timeout"})


def own_url() -> str:
    """This worker's API as seen from inside it (`serve` sets HOST and PORT for the engine)."""
    given = environment()
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(given.host, given.host)  # bind-all: loopback
    return f"http://{f'[{host}]' if ':' in host else host}:{given.port}"


async def wake_due(paused: PausedThreads, client: Any, now: float | None = None) -> list[str]:
    """Resume every thread whose pause is over and whose yielding run has ended; the threads resumed here."""
    now = time.time() if now is None else now
    resumed: list[str] = []
    for thread_id in await asyncio.to_thread(paused.due, now):
        runs = await client.runs.list(thread_id, limit=1)
        last = dict(runs[0]) if runs else {}
        if last and last.get("status") not in _TERMINAL:
            continue  # the yielding run is still draining (or another run is on the thread): next time
        if last.get("status") != "interrupted":
            await asyncio.to_thread(paused.forget, thread_id)  # finished, failed or gone since: nothing to resume
            continue
        if not await asyncio.to_thread(paused.claim, thread_id, now):
            continue  # another worker's waker took it
        try:
            # Input None continues from the thread's latest checkpoint (held tasks at their node), with the options
            # the paused run had. Aegra 0.11 wants input, a command or a checkpoint: an empty checkpoint is
            # "the latest" (a command would have to name each pending interrupt when a question waits too).
            await client.runs.create(thread_id, GRAPH_ID, input=None, checkpoint={},
                                     context=last.get("context") or None, multitask_strategy="reject")
        except Exception:
            # Not re-queued: put the thread back so the next look tries again.
            await asyncio.to_thread(paused.record, thread_id, Pause(until=now, reason="re-queue failed", since=now))
            raise
        log.warning("re-queued thread %s: its usage pause is over", thread_id)
        resumed.append(thread_id)
    return resumed


async def run(interval_s: float, paused: PausedThreads, url: str) -> None:
    """Look every `interval_s` until cancelled; a failed look is logged and tried again."""
    client = api_client(url)
    while True:
        await asyncio.sleep(interval_s)
        try:
            await wake_due(paused, client)
        except Exception as exc:  # noqa: BLE001 - the waker outlives a store or API hiccup
            log.warning("waker: %s: %s", type(exc).__name__, exc)


def start() -> asyncio.Task[None] | None:
    """The waker of this worker, or None outside one (no shared store) or when switched off (0 seconds)."""
    paused = shared_paused_threads()
    interval = environment().wake_seconds
    if paused is None or interval <= 0:
        return None
    return asyncio.create_task(run(interval, paused, own_url()), name="autobuild-waker")


async def stop(task: asyncio.Task[None] | None) -> None:
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
