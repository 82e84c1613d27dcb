"""What the user owns beyond refs, watched around setup, sessions and gate runs: the shared `.git/config`, hooks,
`info/` (beyond the exclude lines we own), the main checkout's venv and `node_modules`. Cheap: small files are
hashed, a venv or node_modules is a digest of its (path, size, mtime) listing, bounded. A change is reported,
never reverted: under the sandbox nothing of ours can write these, so a change is the user's (or, without the
sandbox, unattributable)."""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator import sandbox
from orchestrator.repo import guard
from orchestrator.repo.footing import common_git_dir
from orchestrator.repo.git import EXCLUDE_LINES, GitRepo

VENV_NAMES = (".venv", "venv", "env")
"""Where a repository's own virtualenv lives (the first one found is the main checkout's)."""
_MAX_ENTRIES = 100_000
_SHALLOW_DEPTH = 3  # .venv/lib/pythonX.Y/site-packages, node_modules/@scope/package
_SMALL = 1 << 20
# Written by interpreters and tools as a side effect of reading (bytecode, tool caches): not the user's state.
_SKIP_DIRS = frozenset({"__pycache__", ".cache", ".vite"})


@dataclass(frozen=True)
class Watched:
    """One snapshot: a digest per watched thing, and the config's text to say what changed in it."""

    digests: dict[str, str]
    config: str = field(default="", compare=False)


def _file_digest(path: Path) -> str:
    try:
        stat = path.stat()
        if stat.st_size <= _SMALL:
            return hashlib.sha256(path.read_bytes()).hexdigest()
        return f"{stat.st_size}:{stat.st_mtime_ns}"
    except OSError:
        return "absent"


def _folder_digest(folder: Path, exclude_ours: bool = False) -> str:
    """Every file of a small folder (hooks, info): names, modes and contents."""
    if not folder.is_dir():
        return "absent"
    digest = hashlib.sha256()
    top = len(folder.parts)  # each path's own parts, not relative_to (which builds every parent of each)
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes() if path.stat().st_size <= _SMALL else str(path.stat().st_mtime_ns).encode()
        if exclude_ours and path.name == "exclude":
            ours = set(EXCLUDE_LINES)
            data = b"\n".join(line for line in data.splitlines() if line.decode(errors="replace") not in ours)
        digest.update(f"{'/'.join(path.parts[top:])}\0{path.stat().st_mode:o}\0".encode() + data + b"\0")
    return digest.hexdigest()


def _listing(folder: Path, deep: bool) -> Iterator[str]:
    """One line per entry a tree's digest covers: every file (path, size, mtime), or, not `deep`, the folders down to
    `_SHALLOW_DEPTH` (path, inode, mtime) and the files at the top."""
    if not deep:
        yield from _folders(str(folder), 0)
        return
    for current, dirs, files in os.walk(folder):
        dirs[:] = sorted(name for name in dirs if name not in _SKIP_DIRS)
        for name in sorted(files):
            path = os.path.join(current, name)
            try:
                stat = os.lstat(path)
            except OSError:
                continue
            yield f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}"


def _folders(current: str, depth: int) -> Iterator[str]:
    """The shallow listing below `current`, pre-order by name. A folder at `_SHALLOW_DEPTH` is stat'ed, never
    listed: its line needs only its inode and mtime (listing each of site-packages' or node_modules' packages cost
    a venv's snapshot ~0.2 CPU-s, and a run takes dozens)."""
    try:  # the top itself may be a link to the venv (its target's folder is what changes)
        stat = os.stat(current) if depth == 0 else os.lstat(current)
    except OSError:
        return
    yield f"{current}\0{stat.st_ino}\0{stat.st_mtime_ns}"
    if depth >= _SHALLOW_DEPTH:
        return
    try:
        with os.scandir(current) as listed:
            entries = sorted(listed, key=lambda entry: entry.name)
    except OSError:
        return
    folders = [entry for entry in entries if entry.name not in _SKIP_DIRS and _is_folder(entry)]
    if depth == 0:
        for entry in entries:
            if _is_folder(entry):
                continue
            try:
                file_stat = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            yield f"{entry.path}\0{file_stat.st_size}\0{file_stat.st_mtime_ns}"
    for entry in folders:
        if not entry.is_symlink():  # as os.walk: a linked folder is not walked into
            yield from _folders(entry.path, depth + 1)


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def tree_digest(folder: Path, limit: int = _MAX_ENTRIES, deep: bool = True) -> str:
    """A digest of a big tree's listing (path, size, mtime), bounded to `limit` entries. Not `deep`: its folders
    down to `_SHALLOW_DEPTH` (each one's inode and mtime, which change with every entry added, removed or renamed in
    it: an install, upgrade or uninstall always adds or removes a package's folder in `site-packages`, `bin` or
    `node_modules/[@scope/]`) and the files at its top: a few system calls instead of one per file; a file
    rewritten in place is not seen."""
    if not folder.is_dir():
        return "absent"
    digest = hashlib.sha256()
    for count, line in enumerate(_listing(folder, deep), start=1):
        digest.update(line.encode() + b"\0")
        if count >= limit:
            return digest.hexdigest() + "+"
    return digest.hexdigest()


def snapshot(root: Path, deep: bool = True) -> Watched:
    """The watched state of the repository at `root` (its main checkout). Blocking: call it in a thread. Not
    `deep` (where the sandbox makes the venv and node_modules read-only to everything the run starts, so a change
    can only be the user's, and is only noted): their folders' listing, not every file's."""
    digests: dict[str, str] = {}
    config = ""
    common = common_git_dir(root)
    if common is not None:
        config_path = common / "config"
        config = config_path.read_text(errors="replace") if config_path.is_file() else ""
        digests[".git/config"] = _file_digest(config_path)
        digests[".git/hooks"] = _folder_digest(common / "hooks")
        digests[".git/info"] = _folder_digest(common / "info", exclude_ours=True)
    for name in VENV_NAMES:
        if (root / name / "pyvenv.cfg").is_file():
            digests[f"{name} (your virtualenv)"] = tree_digest(root / name, deep=deep)
    if (root / "node_modules").is_dir():
        digests["node_modules"] = tree_digest(root / "node_modules", deep=deep)
    return Watched(digests, config)


def differences(before: Watched, after: Watched) -> list[str]:
    """One line per watched thing that changed (empty: nothing did)."""
    changes: list[str] = []
    for name in sorted(set(before.digests) | set(after.digests)):
        old, new = before.digests.get(name, "absent"), after.digests.get(name, "absent")
        if old == new:
            continue
        if name == ".git/config":
            diff = [line for line in difflib.unified_diff(before.config.splitlines(), after.config.splitlines(),
                                                          lineterm="", n=0)
                    if line[:1] in "+-" and not line.startswith(("+++", "---"))]
            shown = "; ".join(line[0] + line[1:].strip() for line in diff[:6])
            changes.append(f"{name} changed: {shown or 'rewritten'}")
        else:
            changes.append(f"{name} changed")
    return changes


@dataclass(frozen=True)
class UserSide:
    """Everything of the user's we watch: refs, HEAD and index (guard.py) and the files above."""

    refs: guard.UserState
    files: Watched


REUSE_S = 2.0
"""A watched operation may start from the last snapshot of the repo taken within this many seconds instead of a
new one: the snapshot that ended the previous operation (of this task or a concurrent one) is the next one's start.
A venv listing costs 50-100 ms and there were two per session and per gate run; this halves them, and at
--parallel 8 most sessions start from one. The price: a change of the user's in those seconds before an operation
is noted as seen during it. Only under both sandboxes, where such a change is only noted: without them a change
seen around a session fails its task, so every operation starts from a snapshot of its own."""
_latest: dict[Path, tuple[float, UserSide]] = {}


def forget(root: Path) -> None:
    """A run starts from a snapshot of its own, never from one an earlier run in this process took."""
    _latest.pop(root, None)


async def take(repo: GitRepo, fresh: bool = False) -> UserSide:
    """The user's side now (`fresh`), or as the last snapshot of this repo found it within `REUSE_S`."""
    # Under both sandboxes (the agents' and the gate's) a change seen is only noted, never a task's failure: only
    # there may a listing be shallow and a snapshot reused.
    sandboxed = await asyncio.to_thread(sandbox.agents_available)
    last = _latest.get(repo.root)
    if not fresh and sandboxed and last is not None and time.monotonic() - last[0] <= REUSE_S:
        return last[1]
    started = time.monotonic()
    side = UserSide(await guard.snapshot(repo), await asyncio.to_thread(snapshot, repo.root, not sandboxed))
    current = _latest.get(repo.root)
    if current is None or started >= current[0]:  # dated by when it started: never younger than what it saw
        _latest[repo.root] = (started, side)
    return side


async def since(repo: GitRepo, before: UserSide) -> list[str]:
    """What of the user's changed since `before`, one line each (always a new snapshot); nothing is put back."""
    after = await take(repo, fresh=True)
    return guard.differences(before.refs, after.refs) + differences(before.files, after.files)
