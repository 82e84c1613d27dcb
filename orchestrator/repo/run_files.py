"""Files of a run under `.autobuild/runs/<FEAT>` (reports, report.html, pictures, the pause record, the PR body):
written and read with every level from the repository down opened without following a symlink (confined.py), and
written by a temporary file renamed over the old one, so a link planted at a file's own name is replaced.

A repository can commit `.autobuild -> ~`, `.autobuild/runs/FEAT-001 -> ~/.ssh` or an `AUTO-RUN.md` link, and a
link can be swapped in while a run goes on: a link on the way is refused (InputError, one line, nothing written),
one at the file itself replaced, never followed, so a run's files land in its own folder or nowhere. Traces go the
same way (store/traces.py, `append_under`: a hard link at a trace's name is replaced before a line is appended).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path, PurePosixPath

from orchestrator.errors import InputError
from orchestrator.repo.confined import open_folder, replace_at

RUNS = (".autobuild", "runs")


def split(path: Path) -> tuple[Path, PurePosixPath]:
    """The repository and the path below it of a file in a run's folder (`<repo>/.autobuild/runs/<FEAT>/…`)."""
    parts = path.parts
    for index in range(len(parts) - 4, -1, -1):  # the last `.autobuild/runs` with a feature and a name below it
        if parts[index:index + 2] == RUNS:
            return Path(*parts[:index]).resolve(), PurePosixPath(*parts[index:])
    raise ValueError(f"{path} is not a file of a run (.autobuild/runs/<FEAT>/…)")


def _refused(what: str, path: Path) -> InputError:
    return InputError(f"{what}: {path} is a symlink or not a file: refused (nothing written); remove it and run again")


def write(path: Path, data: str | bytes, what: str = "report") -> Path:
    """Write a run's file whole or not at all (`confined.replace_at`: a temporary file renamed over it, in its
    folder opened without following a link from the repository down): a link planted at the path, hard or
    symbolic, is replaced, never written through; a full disk leaves the old file or none. `path`."""
    root, relative = split(path)
    folder = open_folder(root, relative.parts[:-1], what, make=True)
    try:
        replace_at(folder, relative.name, data)
    except IsADirectoryError:
        raise _refused(what, path) from None
    except OSError as exc:  # a full disk, say: which file it was (the write itself names none)
        exc.filename = exc.filename or str(path)
        raise
    finally:
        os.close(folder)
    return path


def replace(path: Path, data: str | bytes, what: str) -> None:
    """`write`, for the records that are rewritten as a run goes on (the pause record)."""
    write(path, data, what)


def remove(path: Path, what: str) -> None:
    """Remove a run's file if it is there (a link planted in its place is removed itself); a link on the way to it
    is refused, so nothing outside the run is removed."""
    root, relative = split(path)
    try:
        folder = open_folder(root, relative.parts[:-1], what, make=False)
    except FileNotFoundError:
        return
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(relative.name, dir_fd=folder)
    finally:
        os.close(folder)


def read(path: Path, what: str = "report") -> str | None:
    """A run's file as text (None when it or its folder is missing); a link in the way is refused, not read (a
    report published in a pull request must not carry a file from outside the run)."""
    root, relative = split(path)
    try:
        folder = open_folder(root, relative.parts[:-1], what, make=False)
    except FileNotFoundError:
        return None
    try:
        fd = os.open(relative.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=folder)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(f"{what}: {path} is a symlink: refused (not read); remove it") from None
        raise
    finally:
        os.close(folder)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise InputError(f"{what}: {path} is not a regular file: refused (not read); remove it")
        return handle.read().decode("utf-8", errors="replace")
