"""A full disk, however a run met it (an OSError, or a git or store error saying so), as the one line it ends with."""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from pathlib import Path

from orchestrator.errors import AutobuildError

_FULL = (errno.ENOSPC, errno.EDQUOT)
_SAID = ("no space left on device", "database or disk is full", "disk quota exceeded")
"""What git, SQLite and the tools they run say when the disk fills: their errors reach us as text."""


def full_disk(exc: BaseException) -> BaseException | None:
    """The error in `exc` (its causes, its context, an exception group's members) that says the disk is full."""
    seen: set[int] = set()
    pending: list[BaseException] = [exc]
    while pending:
        error = pending.pop()
        if id(error) in seen:
            continue
        seen.add(id(error))
        if isinstance(error, OSError) and error.errno in _FULL:
            return error
        if isinstance(error, (AutobuildError, sqlite3.Error)) and any(said in str(error).lower() for said in _SAID):
            return error
        if isinstance(error, BaseExceptionGroup):
            pending.extend(error.exceptions)
        pending.extend(linked for linked in (error.__cause__, error.__context__) if linked is not None)
    return None


def _mount_of(path: Path) -> Path:
    """The mount point of the filesystem that holds `path` (or what of it exists)."""
    found = path.absolute()
    while not found.exists() and found != found.parent:
        found = found.parent
    while not os.path.ismount(found) and found != found.parent:
        found = found.parent
    return found


def _size(free: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if free < 1024 or unit == "GiB":
            return f"{free} {unit}" if unit == "bytes" else f"{free:.0f} {unit}"
        free /= 1024  # type: ignore[assignment]
    return f"{free} bytes"


def full_disk_line(error: BaseException, repo: Path, resume: str) -> str:
    """What filled, where, and what to do: `resume` goes on from the last checkpoint once there is room."""
    written = Path(os.fsdecode(error.filename)) if isinstance(error, OSError) and error.filename else None
    mount = _mount_of(written or repo)
    try:
        free = f"{_size(shutil.disk_usage(mount).free)} free"
    except OSError:
        free = "its free space unknown"
    what = f"writing {written}" if written else (str(error).splitlines() or ["a write"])[0][:160]
    return (f"the disk is full: {what} failed (no space left on {mount}, {free}); the run stopped, its reports whole"
            f" or not written. Free space on {mount}, then `{resume}` goes on from the last checkpoint")
