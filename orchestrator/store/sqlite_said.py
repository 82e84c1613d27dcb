"""SQLite's errors as the one line a command ends with: a lock, a damaged file and a full disk each said as itself."""

from __future__ import annotations

import sqlite3
from pathlib import Path

_DAMAGED = ("malformed", "not a database", "corrupt", "file is encrypted")
_LOCKED = ("locked", "busy")


def sqlite_said(exc: sqlite3.Error, path: Path | None) -> str:
    """`checkpoint DB <path>: <SQLite's words>: <what it means and what to do>`, one line."""
    words = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    lowered = words.lower()
    where = f"checkpoint DB {path}" if path is not None else "checkpoint DB"
    if any(said in lowered for said in _DAMAGED):
        aside = f"`mv {path} {path}.damaged`" if path is not None else "rename it"
        return (f"{where}: {words}: the file is damaged (no lock is involved): move it aside ({aside}) and run"
                " again, which starts its features over, or pass --db PATH to use another")
    if "disk is full" in lowered:
        return f"{where}: {words}: the disk that holds it is full: free space there, then try again"
    if "unable to open" in lowered or "readonly" in lowered:
        return (f"{where}: {words}: it can't be opened (permissions, a read-only disk, a missing folder): fix"
                " that, or pass --db PATH")
    if any(said in lowered for said in _LOCKED):
        return (f"{where}: {words}: another process holds it locked; try again when it is done"
                " (ORCHESTRATOR_DB_LOCK_TIMEOUT sets how long to wait)")
    return f"{where}: {words}: another process may hold it locked; try again when it is done"
