"""Two workers never run one feature: a Postgres advisory lock per (repo identity, feature), held by the run for
its life on a connection of its own, so a dead worker's lock goes with its connection."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import socket
from collections.abc import AsyncIterator
from typing import Any

from orchestrator.errors import RunLockedError
from orchestrator.settings import environment

_MARK = "autobuild-holder"
_KEEPALIVE = {"keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2, "keepalives_count": 3}
"""A machine that vanishes without closing its socket: the server drops its lock within ~11 s, inside a lease."""


def lock_key(repo_identity: str, feature: str) -> int:
    """A signed 64-bit key (what `pg_try_advisory_lock(bigint)` takes) for one feature of one repository."""
    digest = hashlib.blake2b(f"autobuild\0{repo_identity}\0{feature}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def holder_text(thread_id: str) -> str:
    """Who holds the lock, as the refused run names it: worker host, pid and thread (only safe characters: it is
    written into the statement text that `pg_stat_activity` shows)."""
    raw = f"host={socket.gethostname()} pid={os.getpid()} thread={thread_id}"
    return re.sub(r"[^A-Za-z0-9 =._:-]", "_", raw)[:300]


@contextlib.asynccontextmanager
async def feature_lock(repo_identity: str, feature: str, thread_id: str,
                       database_url: str | None = None) -> AsyncIterator[None]:
    """Hold the feature's advisory lock for the block (no-op without a shared store).

    Raises RunLockedError naming the holder when another run has it."""
    url = database_url if database_url is not None else environment().lock_db
    if not url:
        yield
        return
    import psycopg  # noqa: PLC0415  # the `postgres` extra: only a run on a shared store needs it

    key = lock_key(repo_identity, feature)
    conninfo = psycopg.conninfo.make_conninfo(url, application_name="autobuild feature lock", **_KEEPALIVE)
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
        row = await (await conn.execute("SELECT pg_try_advisory_lock(%s)", (key,))).fetchone()
        if not (row and row[0]):
            raise RunLockedError(f"{feature} of {repo_identity} is already running: {await _holder(conn, key)};"
                                 " wait for it, or answer/resume that thread")
        # The statement text stays in pg_stat_activity while the connection idles: that is how a refused run
        # names this one (no table to clean up after a dead worker).
        await conn.execute(f"SELECT 1 /* {_MARK} {holder_text(thread_id)} */".encode())
        yield


async def _holder(conn: Any, key: int) -> str:
    """The holder's mark from `pg_stat_activity` (the backend that holds the advisory lock `key`)."""
    high, low = (key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF
    cursor = await conn.execute(
        "SELECT a.query FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory'"
        " AND l.granted AND l.classid::bigint = %s AND l.objid::bigint = %s AND l.objsubid = 1", (high, low))
    row = await cursor.fetchone()
    text = str(row[0]) if row else ""
    found = re.search(rf"{_MARK} ([^*]*)\*/", text)
    return f"worker {found.group(1).strip()}" if found else "another worker (starting up)"
