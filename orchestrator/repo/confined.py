"""The one resolver for paths that come from outside (a plan, a served run's input): kept under a named root.

A path is resolved with its symlinks followed and refused unless it stays under its root (the clone for
`plan_files`, the repo for task markdown and plans found by id): a repository that commits `docs -> ~/.ssh`
can't carry a write or a read out. Writes then open each folder below the root with `dir_fd` and
`O_NOFOLLOW`, so a symlink swapped in between the check and the write is refused, never followed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import threading
from pathlib import Path, PurePosixPath

from agents.bounded import CONFIG_FILE
from orchestrator.errors import InputError

GIT_DIR = ".git"
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _relative(root: Path, given: str | PurePosixPath, what: str, named: str) -> PurePosixPath:
    text = str(given)
    if not text or "\0" in text:
        raise InputError(f"{what}: {text!r} is not a path: name a file inside {root}")
    pure = PurePosixPath(text.replace("\\", "/"))
    if pure.is_absolute():
        if not Path(pure).is_relative_to(root):
            raise InputError(f"{what}: {text} resolves outside {named} ({root}): name a file inside it")
        pure = PurePosixPath(Path(pure).relative_to(root).as_posix())
    if ".." in pure.parts or not pure.parts:
        raise InputError(f"{what}: {text!r} must be a path inside {named} (relative to it, no '..')")
    return pure


def resolve_under(root: Path, given: str | PurePosixPath, what: str, *, git_dir_ok: bool = False,
                  named: str = "the repo") -> Path:
    """`given` (relative to `root`, or absolute inside it) with symlinks followed; InputError (one line, calling
    the root `named`) unless it stays under `root`, and, unless `git_dir_ok`, outside the repository's `.git`."""
    top = root.resolve()
    relative = _relative(top, given, what, named)
    try:
        resolved = (top / relative).resolve()
    except (OSError, RuntimeError):
        raise InputError(f"{what}: {given} cannot be resolved (a symlink loop?): fix the path") from None
    if not resolved.is_relative_to(top):
        raise InputError(f"{what}: {given} resolves outside {named} ({resolved}): name a file inside it")
    inside = resolved.relative_to(top).parts
    if not git_dir_ok and (relative.parts[0].casefold() == GIT_DIR or (inside and inside[0].casefold() == GIT_DIR)):
        raise InputError(f"{what}: {given} is inside the repository's .git: name a file of the work tree")
    return resolved


def open_folder(root: Path, parts: tuple[str, ...], what: str, *, make: bool) -> int:
    """A descriptor of the folder root/parts, each level opened without following a symlink (made if `make`); a
    symlink or a file at a level is refused (InputError naming `what`)."""
    return _descend(root, parts, what, make=make, remove_planted=False)


def own_folder(root: Path, parts: tuple[str, ...]) -> int:
    """A descriptor of root/parts, a folder of the run's own (an environment it builds where agents also write):
    each level opened without following a symlink and made when missing. A symlink or a file found where a level
    should be (an agent's Bash can plant `_env/venv -> ~/repo/.venv`) is removed, never followed: only the run's
    own entry goes, whatever it pointed at is untouched. `root` itself may be reached through links (a checkout
    at a linked path): it is the user's, resolved first."""
    return _descend(root.resolve(), parts, "the run's own folder", make=True, remove_planted=True)


def _descend(root: Path, parts: tuple[str, ...], what: str, *, make: bool, remove_planted: bool) -> int:
    fd = os.open(root, _FOLDER)
    try:
        for part in parts:
            if make:
                with contextlib.suppress(FileExistsError):  # made already (by another task's thread, say)
                    os.mkdir(part, 0o755, dir_fd=fd)
            try:
                inner = os.open(part, _FOLDER, dir_fd=fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                if not remove_planted:
                    raise InputError(f"{what}: {part} turned into a symlink or a file under {root}: refused"
                                     " (nothing written)") from None
                remove_at(fd, part)
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
                inner = os.open(part, _FOLDER, dir_fd=fd)
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def remove_at(folder: int, name: str) -> None:
    """`name` in the open `folder` gone, whatever it is: a folder's tree (never followed out), a link or a file."""
    try:
        found = os.lstat(name, dir_fd=folder)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(found.st_mode):
        shutil.rmtree(name, dir_fd=folder)
    else:
        os.unlink(name, dir_fd=folder)


def link_at(folder: int, name: str, target: str | Path) -> None:
    """`name` in the open `folder` made a symlink to `target` in one step (a temporary link renamed over it):
    never a moment without it for a process that runs it, and two threads making it at once both succeed."""
    temp = f".{name}.{os.getpid()}.{threading.get_ident()}.tmp"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temp, dir_fd=folder)
    os.symlink(target, temp, dir_fd=folder)
    try:
        os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=folder)
        raise


def read_at(folder: int, name: str, limit: int = CONFIG_FILE) -> str | None:
    """The text of the regular file `name` in the open `folder` (None: missing, a symlink, not a file, or larger
    than `limit`)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=folder)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        data = handle.read(limit + 1)
    return data.decode("utf-8", errors="replace") if len(data) <= limit else None


def write_resolved(root: Path, resolved: Path, data: str | bytes, what: str) -> None:
    """Write `resolved` (from `resolve_under`): every folder from `root` down opened with O_NOFOLLOW, missing ones
    made, the file itself never a symlink."""
    top = root.resolve()
    parts = resolved.relative_to(top).parts
    payload = data.encode("utf-8") if isinstance(data, str) else data
    folder = open_folder(top, parts[:-1], what, make=True)
    try:
        try:
            out = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                          dir_fd=folder)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EISDIR):
                raise InputError(f"{what}: {resolved} is a symlink or a folder: refused (nothing written)") from None
            raise
        with os.fdopen(out, "wb") as handle:
            handle.write(payload)
    finally:
        os.close(folder)


def write_under(root: Path, given: str | PurePosixPath, data: str | bytes, what: str) -> Path:
    """Resolve `given` under `root` (`resolve_under`) and write it there (`write_resolved`); the path written."""
    resolved = resolve_under(root, given, what)
    write_resolved(root, resolved, data, what)
    return resolved


def append_under(root: Path, relative: PurePosixPath, text: str, what: str) -> None:
    """Append `text` to a file of ours below `root` (a trace): every folder from `root` down opened with
    O_NOFOLLOW, missing ones made, the file never a symlink, so a link swapped in is refused, never followed; a hard
    link planted at its name is replaced by a file of our own (`_opened_own`), never written through."""
    parts = relative.parts
    folder = open_folder(root.resolve(), parts[:-1], what, make=True)
    try:
        try:
            fd = _opened_own(folder, parts[-1])
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
                raise InputError(f"{what}: {root / relative} is a symlink or not a file: refused (nothing"
                                 " written)") from None
            raise
        with os.fdopen(fd, "a", encoding="utf-8") as out:
            out.write(text)
    except OSError as exc:  # a full disk, say: which file it was (the write itself names none)
        exc.filename = exc.filename or str(root / relative)
        raise
    finally:
        os.close(folder)


_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _opened_own(folder: int, name: str) -> int:
    """`name` in `folder` opened to append. A file we made has one name; one with more is a hard link planted there
    (we never make one): its name is unlinked and a file of our own made in its place, so nothing reaches the
    file it shares (a FIFO planted there fails the open, ENXIO, instead of blocking it)."""
    fd = os.open(name, _APPEND, 0o644, dir_fd=folder)
    found = os.fstat(fd)
    if stat.S_ISREG(found.st_mode) and found.st_nlink == 1:
        return fd
    os.close(fd)
    if not stat.S_ISREG(found.st_mode):
        raise OSError(errno.ENXIO, "not a regular file", name)
    os.unlink(name, dir_fd=folder)
    return os.open(name, _NEW_FILE | os.O_APPEND, 0o644, dir_fd=folder)


def replace_at(folder: int, name: str, data: str | bytes) -> None:
    """Write `name` in the open `folder` whole or not at all: a temporary file beside it, renamed over it. A link
    planted at the name (hard or symbolic) is replaced, never written through; a write that fails (a full disk)
    leaves the old file or none, never part of one, and no temporary file behind."""
    temp = f".{name}.{os.getpid()}.{threading.get_ident()}.tmp"  # two runs (or two threads) may write it at once
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd = os.open(temp, _NEW_FILE | os.O_TRUNC, 0o644, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(payload)
        os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=folder)
        raise


def read_under(root: Path, given: str | PurePosixPath, what: str, *, limit: int) -> bytes:
    """The first `limit` + 1 bytes of a regular file under `root` (symlinks inside it followed, none swapped in)."""
    top = root.resolve()
    resolved = resolve_under(root, given, what, git_dir_ok=True)
    parts = resolved.relative_to(top).parts
    folder = open_folder(top, parts[:-1], what, make=False)
    try:
        try:
            fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=folder)
        except OSError as exc:
            if exc.errno in (errno.ELOOP,):
                raise InputError(f"{what}: {given} turned into a symlink: refused") from None
            raise
    finally:
        os.close(folder)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InputError(f"{what}: {given} is not a regular file: name a file")
    with os.fdopen(fd, "rb") as handle:
        return handle.read(limit + 1)


OWN_FOLDERS = (".autobuild", ".autobuild/runs", ".autobuild/worktrees", ".autobuild/submitted")
"""What a run writes under in the repo (reports, traces, worktrees, a plan sent along): never through a link."""


def check_own_folders(root: Path) -> None:
    """InputError (one line, nothing written) when one of our folders in the repo is a file or a symlink (a
    repository can commit `.autobuild -> /elsewhere`): reports and worktrees would be written through it."""
    for relative in OWN_FOLDERS:
        path = root / relative
        if path.is_symlink():
            raise InputError(f"{path} is a symlink (to {os.readlink(path)}): AutoBuild writes its runs there; remove"
                             " the link (and commit the removal) first")
        if path.exists() and not path.is_dir():
            raise InputError(f"{path} is a file, not a folder: AutoBuild keeps its plans and runs there; move it"
                             " away first")
    runs = root / ".autobuild" / "runs"
    for folder, names, files in os.walk(runs):  # a committed `runs/FEAT-001 -> ~/.ssh` would take the reports
        for name in (*names, *files):
            if (Path(folder) / name).is_symlink():
                raise InputError(f"{Path(folder) / name} is a symlink: AutoBuild writes its reports there; remove"
                                 " the link (and commit the removal) first")
