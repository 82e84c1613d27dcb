"""The usage-limit pause's glue for a run: its gate resumed from disk, its records, a served run's yield."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from langgraph.runtime import Runtime

from agents.limits import Pause, UsageLimitGate
from orchestrator.graph.events import EventLog
from orchestrator.jsonout import iso_utc
from orchestrator.settings import RunOptions
from orchestrator.store import traces as trace
from orchestrator.store.pause import PauseRecords, describe, quota_path, read_pause, shared_store
from orchestrator.store.paused_threads import PausedThreads, shared_paused_threads
from orchestrator.text import one_line


def limit_gate(options: RunOptions, path: Path, events: EventLog,
               on_yield: Callable[[Pause], None] | None = None) -> UsageLimitGate:
    """The run's usage-limit pause, resumed from disk (a kill during a pause resumes into the same wait); a quota
    pause is shared with every run of the same credential. Its records are written off the event loop, in order."""
    records = PauseRecords(path, quota_path(), store=shared_store())
    resumed = read_pause(path)
    if resumed is not None and resumed.until <= time.time():
        # The window reset while the run was stopped: no probe will end this pause, so its records end it now
        # (the credential's shared one too, unless another run has found a later window).
        records.write(None)
        resumed = None

    def changed(pause: Pause | None) -> None:
        trace.in_order(records.write, pause)
        if pause is None:
            events("usage_limit_over")
        else:
            events("usage_limit", until=iso_utc(pause.until), reason=pause.reason, status=describe(pause))

    return UsageLimitGate(options.max_wait, probe_interval_s=options.limit_probe, on_change=changed,
                          resume_from=resumed, max_utilization=options.max_utilization,
                          load_shared=records.read_shared, yield_after_s=options.yield_after(), on_yield=on_yield)


def yielded(runtime: Runtime[RunOptions], events: EventLog, thread: str, unrecorded: list[str], pause: Pause) -> None:
    """A served run gives its slot back for a long pause: no node starts any more (a drain, as on SIGTERM), and the
    workers' store learns when to re-queue the thread (if it can't, the run's interrupt says so: `unrecorded`)."""
    if runtime.control is not None:
        runtime.control.request_drain("usage pause")
    if thread and (paused := shared_paused_threads()) is not None:
        trace.in_order(record_yield, paused, thread, pause, unrecorded)
    events("usage_pause_yield", until=iso_utc(pause.until), reason=pause.reason, status=describe(pause))


def record_yield(paused: PausedThreads, thread: str, pause: Pause, unrecorded: list[str]) -> None:
    """On the run's writer thread: the row the waker re-queues from, tried three times (a database hiccup)."""
    for attempt in range(3):
        try:
            paused.record(thread, pause)
            return
        except Exception as exc:  # noqa: BLE001 - any store failure: said in the run's last interrupt
            if attempt == 2:
                unrecorded.append(f"{type(exc).__name__}: {one_line(exc, 200)}")
            else:
                time.sleep(1.0 + attempt)
