"""Whether a run that has not finished still goes on: its thread's run lock (`CheckpointStore.lock`, an flock the
kernel drops when its process dies) held by a live process, or left by one that is gone (a `kill -9`, a crash, a
machine that went down). `status` and the page both say a run is stopped from here, never from a second reading."""

from __future__ import annotations

import contextlib
import fcntl

from orchestrator.store.checkpoints import CheckpointStore

STOPPED = "stopped (its process is gone)"


def run_is_gone(store: CheckpointStore, thread_id: str) -> bool:
    """True when no process holds the thread's run lock (the run that wrote its checkpoints ended without
    finishing); False while one holds it, or when this can't be told here (a Postgres store's advisory lock is
    its server's: such a run shows as going on)."""
    if store.is_postgres:
        return False
    try:
        handle = store.lock_file(thread_id).open("r")
    except OSError:  # no run took this store's lock for it (checkpoints written some other way): can't tell
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        with contextlib.suppress(OSError):
            fcntl.flock(handle, fcntl.LOCK_UN)
    return True


def stopped_line(feature: str, thread_id: str) -> str:
    """What a stopped run is said as, with the command that goes on from its last checkpoint."""
    _, _, task = thread_id.partition(":")
    return f"{STOPPED} — resume with `autobuild resume {feature}{f' {task}' if task else ''}`"


def said_state(store: CheckpointStore, feature: str, thread_id: str, state: str) -> str:
    """`state` (a run's "in progress" / "not finished"), or the stopped line when the run's process is gone."""
    return stopped_line(feature, thread_id) if run_is_gone(store, thread_id) else state
