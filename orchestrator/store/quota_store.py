"""A credential's quota pause in the workers' shared Postgres, so a pause one worker found holds on every machine
(the file record under the checkpoint folder is one machine's). Keyed by the credential's hash, never the credential.

Reads never wait on the network where the caller runs (the run's event loop): `read()` answers from what the last
refresh found and hands a refresh to the run's ordered writer thread once the answer is older than REFRESH_S."""

from __future__ import annotations

import threading
import time
from typing import Any

from agents.limits import Pause
from orchestrator.store import traces as trace

REFRESH_S = 5.0
_TABLE = """CREATE TABLE IF NOT EXISTS autobuild_quota (credential text PRIMARY KEY, until double precision NOT NULL,
reason text NOT NULL, since double precision NOT NULL, kind text NOT NULL)"""


class StoreQuota:
    """The credential's shared quota pause in Postgres (`autobuild_quota`, one row per credential hash)."""

    def __init__(self, database_url: str, key: str) -> None:
        self.database_url = database_url
        self.key = key
        self._cached: Pause | None = None
        self._read_at = float("-inf")
        self._lock = threading.Lock()

    def read(self) -> Pause | None:
        """The pause the store held at the last refresh (a refresh is queued when that is over REFRESH_S old)."""
        with self._lock:
            stale = time.monotonic() - self._read_at > REFRESH_S
            if stale:
                self._read_at = time.monotonic()  # one refresh in flight at a time
        if stale:
            trace.in_order(self.refresh)  # outside an event loop: done by now
        with self._lock:
            return self._cached

    def refresh(self) -> None:
        """Read the row now (blocking: the writer thread's work, or a caller outside an event loop)."""
        row = self._run("SELECT until, reason, since, kind FROM autobuild_quota WHERE credential = %s", (self.key,),
                        fetch=True)
        pause = Pause(until=float(row[0]), reason=str(row[1]), since=float(row[2]), kind=str(row[3])) if row else None
        with self._lock:
            self._cached = pause if pause is not None and pause.until > time.time() else None
            self._read_at = time.monotonic()

    def write(self, pause: Pause | None) -> None:
        """Record a quota pause (the later reset wins), or remove one whose window is over (blocking)."""
        if pause is None:
            self._run("DELETE FROM autobuild_quota WHERE credential = %s AND until <= %s", (self.key, time.time()))
        else:
            self._run("INSERT INTO autobuild_quota VALUES (%s, %s, %s, %s, %s) ON CONFLICT (credential) DO UPDATE SET"
                      " until = EXCLUDED.until, reason = EXCLUDED.reason, since = EXCLUDED.since, kind = EXCLUDED.kind"
                      " WHERE autobuild_quota.until < EXCLUDED.until",
                      (self.key, pause.until, pause.reason, pause.since, pause.kind))
        self.refresh()

    def _run(self, sql: str, params: tuple[Any, ...], *, fetch: bool = False) -> Any:
        import psycopg  # noqa: PLC0415  # the `postgres` extra: only workers on a shared store get here

        with psycopg.connect(self.database_url, autocommit=True, connect_timeout=5) as conn:
            conn.execute(_TABLE)
            cursor = conn.execute(sql, params)
            return cursor.fetchone() if fetch else None
