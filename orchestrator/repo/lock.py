"""One lock per target repository, under its git dir: every command that writes holds it, whatever `--db`.

An flock (released by the kernel when its process dies, so a crashed holder never blocks anyone) on
`<git common dir>/autobuild.lock`, whose content names the holder (pid, command, since). Re-entrant within a
context: the CLI holds it and the workflow it runs (same asyncio context) takes it again, while two served
runs in one server process (separate contexts) exclude each other like two processes do.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import errno
import fcntl
import json
import os
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import IO

import psutil

from orchestrator.errors import InputError, RunLockedError
from orchestrator.repo import confined
from orchestrator.repo.commands import git_sync

_HELD: ContextVar[frozenset[Path]] = ContextVar("autobuild_repo_locks", default=frozenset())


def lock_path(root: Path) -> Path:
    common = git_sync(root, "rev-parse", "--git-common-dir")
    if not common.ok:
        raise RunLockedError(f"{root} is not a git repository: pass --repo PATH of a git repository")
    return (root / common.stdout.strip()).resolve() / "autobuild.lock"


def _describe(raw: str) -> tuple[str, int | None]:
    try:
        holder = json.loads(raw)
        pid = int(holder["pid"])
    except (ValueError, KeyError, TypeError):
        return "another process", None
    return f"pid {pid} (`{holder.get('command', '?')}` since {holder.get('since', '?')})", pid


def _unwritable(root: Path, git_dir: Path) -> InputError | None:
    """Why a command that writes can't work in `root` (its git dir, or the folder our runs go into, is read-only:
    a read-only mount, another user's checkout), checked before anything is written; None: it can."""
    own = root / ".autobuild"
    for folder in (git_dir, own if own.is_dir() else root):
        if not os.access(folder, os.W_OK | os.X_OK):
            return InputError(f"{root} can't be written ({folder} is read-only to this user): AutoBuild keeps its"
                              " branches, worktrees and runs in the repository; run it on a checkout you can write")
    return None


def _opened(path: Path, root: Path) -> IO[str]:
    """The lock's file, opened to be written; a checkout we can't write (a read-only mount, another user's files)
    is one line (InputError, exit 2) before anything is written, never a traceback."""
    if (problem := _unwritable(root, path.parent)) is not None:
        raise problem
    # Our folders a link or a file (`.autobuild -> ~`): clean's and discard's removals, plan's files and every
    # report would go through it. Refused for every command that writes, before it writes.
    confined.check_own_folders(root)
    try:
        return path.open("a+")
    except OSError as exc:
        if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise
        raise InputError(f"{root} can't be written ({exc.strerror} at {path.name} in its git dir): AutoBuild keeps"
                         " its branches, worktrees and runs in the repository; run it on a checkout you can write"
                         ) from None


@contextlib.contextmanager
def repo_lock(root: Path, command: str, notice: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold the repository's lock for the duration; refuse at once, naming the holder, if another has it."""
    path = lock_path(root)
    if path in _HELD.get():
        yield
        return
    with _opened(path, root) as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            who, _ = _describe(handle.read())
            raise RunLockedError(f"{root} is already being run by {who}: wait for it to finish, or stop it"
                                 " (Ctrl+C; its work can be resumed)") from None
        handle.seek(0)
        who, pid = _describe(handle.read())
        if pid is not None and pid != os.getpid() and notice is not None and not psutil.pid_exists(pid):
            notice(f"taking over the lock of {who}: that process is gone")
        handle.seek(0)
        handle.truncate()
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        handle.write(json.dumps({"pid": os.getpid(), "command": command, "since": since}))
        handle.flush()
        token = _HELD.set(_HELD.get() | {path})
        try:
            yield
        finally:
            _HELD.reset(token)
            handle.seek(0)
            handle.truncate()
            handle.flush()
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.asynccontextmanager
async def repo_lock_async(root: Path, command: str) -> AsyncIterator[None]:
    """`repo_lock` for a coroutine: taken and released off the event loop (git names the path; the flock and the
    holder's record are file work), both in one context (what a context holds is a context variable)."""
    lock = repo_lock(root, command)
    context = contextvars.copy_context()
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, context.run, lock.__enter__)
    try:
        yield
    except BaseException as exc:
        if not await loop.run_in_executor(None, context.run, lock.__exit__, type(exc), exc, exc.__traceback__):
            raise
    else:
        await loop.run_in_executor(None, context.run, lock.__exit__, None, None, None)
