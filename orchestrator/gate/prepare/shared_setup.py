"""One setup for a task's attempts (issue 40): a new worktree at the same commit as a sibling that setup already
made ready takes that sibling's setup products (what its record says setup made: top entries outside git, and
tracked files setup rewrote) by copy, instead of running setup again.

Only what can be shared is: a product that names the sibling's own path (an editable build's folder, a CMake or
meson cache, a link into it) would tie the copy to the sibling, and a product changed since setup made it (the
sibling's agent is at work there) is no longer setup's. Either way nothing is copied (what was is removed again)
and setup runs in the new worktree as it always did. Links are copied as links, never followed; only regular files
are read; the copies are the new worktree's own files (`cp --reflink=auto`: shared blocks where the filesystem can,
so one attempt's writes never reach another's)."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
from pathlib import Path

from orchestrator.gate.prepare import checkout, fresh_tree
from orchestrator.processes import run_async
from orchestrator.repo.git import GitRepo

SCAN_LIMIT = 4 << 20
"""Files larger than this are not searched for the sibling's path (archives and binaries, not configuration)."""


def _read_scanned(path: Path) -> bytes:
    """The file at `path`, as the `lstat` before found it: the sibling's agent may swap in a link, a FIFO or a larger
    file meanwhile, so what is opened is checked again (OSError: not that file any more, so not known to be free)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > SCAN_LIMIT:
            raise OSError(f"{path} changed while it was scanned")
        data = file.read(SCAN_LIMIT + 1)
    if len(data) > SCAN_LIMIT:
        raise OSError(f"{path} grew while it was scanned")
    return data


def _names_path(entry: Path, needles: tuple[bytes, ...]) -> str | None:
    """The first file or link at or under `entry` that names one of `needles` (a worktree's absolute path), or
    can't be read (not known to be free of it); None when none does."""
    paths = [entry]
    if entry.is_dir() and not entry.is_symlink():
        paths += [Path(folder) / name for folder, dirs, files in os.walk(entry) for name in (*dirs, *files)]
    for path in paths:
        try:
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                data = os.fsencode(os.readlink(path))
            elif stat.S_ISREG(info.st_mode) and info.st_size <= SCAN_LIMIT:
                data = _read_scanned(path)
            else:
                continue
        except OSError:
            return str(path)
        if any(needle in data for needle in needles):
            return str(path)
    return None


def _unchanged(worktree: Path, entries: dict[str, float]) -> bool:
    """Has nothing under setup's entries changed since setup made them (ctime: can't be set back)?"""
    return all(fresh_tree.newest_change(worktree / entry) <= float(when) for entry, when in entries.items())


def _remove(target: Path, entries: list[str]) -> None:
    for entry in entries:
        path = target / entry.rstrip("/")
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def _tied(source: Path, entries: dict[str, float]) -> bool:
    """Does one of setup's products in `source` name `source`'s own path?"""
    needles = tuple({os.fsencode(str(source)), os.fsencode(str(source.resolve()))})
    return any(_names_path(source / entry.rstrip("/"), needles) is not None for entry in entries)


async def copy_products(repo: GitRepo, source: Path, target: Path) -> list[str] | None:
    """`source`'s setup products copied into `target` (both of the run's worktrees, at the same commit, `target`
    fresh): the entries copied, or None when they can't be shared (nothing of them is then left in `target`)."""
    known = await asyncio.to_thread(fresh_tree.products, source)
    if known is None or not await asyncio.to_thread(_unchanged, source, known[0]):
        return None
    entries, tracked = known
    tied = asyncio.ensure_future(asyncio.to_thread(_tied, source, entries))  # read while the copies are made
    copied: list[str] = []
    shared = False
    try:
        for entry in entries:
            name = entry.rstrip("/")
            if await asyncio.to_thread((target / name).exists):  # git ignores it: a fresh checkout lacks it
                return None
            copied.append(entry)
            done = await run_async(["cp", "-a", "--reflink=auto", "--", str(source / name), str(target / name)],
                                   cwd=target)
            if not done.ok:
                return None
        for path in tracked:
            await asyncio.to_thread(shutil.copyfile, source / path, target / path, follow_symlinks=False)
        # Still as setup made them (the sibling's agent may be at work there): else not setup's, not shared.
        shared = not await tied and await asyncio.to_thread(_unchanged, source, entries) and \
            await checkout.changed_tracked(repo, target) == tracked
        return copied if shared else None
    finally:
        if not tied.done():
            await asyncio.wait({tied})  # a thread can't be stopped: it ends on its own
        if not shared:
            await asyncio.to_thread(_remove, target, copied)
            await checkout.put_back(repo, target)
