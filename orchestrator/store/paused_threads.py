"""Served runs that gave their worker slot back during a long usage-limit or quota pause: the interrupt value the run
ends with, and one row per thread in the workers' shared Postgres (`autobuild_paused_threads`), written as the run
yields and claimed by exactly one worker's waker once the pause is over (orchestrator/server/waker.py)."""

from __future__ import annotations

import contextlib
from typing import Any

from agents.limits import Pause
from orchestrator.jsonout import iso_utc
from orchestrator.settings import environment

KIND = "usage_pause"
"""The `kind` of the interrupt value a yielded run ends with (a question's value has a `question_id` instead)."""
_TABLE = """CREATE TABLE IF NOT EXISTS autobuild_paused_threads (thread_id text PRIMARY KEY,
until double precision NOT NULL, reason text NOT NULL)"""


def interrupt_value(pause: Pause) -> dict[str, Any]:
    """What the run's last interrupt says: a usage pause, until when (epoch and ISO), and why."""
    return {"kind": KIND, "until": pause.until, "until_iso": iso_utc(pause.until), "reason": pause.reason,
            "pause_kind": pause.kind}


def is_pause(value: object) -> bool:
    return isinstance(value, dict) and value.get("kind") == KIND and isinstance(value.get("until"), int | float)


CLAIM_LEASE_S = 300.0
"""How long a claimed thread waits for the run its waker starts before another waker may take it."""


class PausedThreads:
    """The threads waiting out a pause off their workers, in the shared Postgres (blocking calls: the run hands them
    to its ordered writer thread, the waker to a thread)."""

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url

    def record(self, thread_id: str, pause: Pause) -> None:
        """This thread's run yields until `pause.until` (a later yield of the same thread replaces it)."""
        self._run("INSERT INTO autobuild_paused_threads VALUES (%s, %s, %s) ON CONFLICT (thread_id) DO UPDATE SET"
                  " until = EXCLUDED.until, reason = EXCLUDED.reason", (thread_id, pause.until, pause.reason))

    def forget(self, thread_id: str) -> None:
        """A run of this thread started (re-queued, answered, resubmitted): nothing left to wake."""
        self._run("DELETE FROM autobuild_paused_threads WHERE thread_id = %s", (thread_id,))

    def due(self, now: float, limit: int = 20) -> list[str]:
        """Threads whose pause is over, longest-waiting first."""
        rows = self._run("SELECT thread_id FROM autobuild_paused_threads WHERE until <= %s ORDER BY until LIMIT %s",
                         (now, limit), fetch=True)
        return [str(row[0]) for row in rows]

    def claim(self, thread_id: str, now: float, lease_s: float = CLAIM_LEASE_S) -> bool:
        """Take the thread to resume it: True for exactly one caller however many workers race. The row stays, due
        again only after `lease_s`: the resumed run forgets it as it starts, so a worker that dies between its claim
        and the run it meant to start loses nothing (another waker takes the thread once the lease is over)."""
        rows = self._run("UPDATE autobuild_paused_threads SET until = %s WHERE thread_id = %s AND until <= %s"
                         " RETURNING thread_id", (now + lease_s, thread_id, now), fetch=True)
        return bool(rows)

    def _run(self, sql: str, params: tuple[Any, ...], *, fetch: bool = False) -> Any:
        import psycopg  # noqa: PLC0415  # the `postgres` extra: only workers on a shared store get here

        with psycopg.connect(self.database_url, autocommit=True, connect_timeout=5) as conn:
            with contextlib.suppress(psycopg.errors.UniqueViolation):  # two workers created it at once
                conn.execute(_TABLE)
            cursor = conn.execute(sql, params)
            return cursor.fetchall() if fetch else None


def shared_paused_threads() -> PausedThreads | None:
    """The workers' store (`autobuild serve` sets ORCHESTRATOR_LOCK_DB), else None (a CLI run: nothing to wake)."""
    url = environment().lock_db
    return PausedThreads(url) if url else None
