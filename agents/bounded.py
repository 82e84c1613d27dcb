"""Reading a file agents or the tests can write: at most up to a size, links followed, a regular file only, never
blocking on a FIFO (a sparse file of any size costs them nothing; a link may lead to /dev/zero). Here, below both
layers, so the agents' sandbox and the orchestrator read such files alike."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

SMALL_FILE = 65_536
"""The most read of a file that holds a line or a few (a worktree's `.git`, HEAD, commondir, a loose ref, a venv's
`pyvenv.cfg`): agents and the gate's commands can make any of them a sparse file or a FIFO."""

CONFIG_FILE = 1_000_000
"""The most read of a config or listing file agents can write (a worktree's config, `.gitmodules`, a `.pth`)."""


def read_bounded(file: Path, limit: int) -> bytes:
    """The bytes of `file` (links followed); OSError when it is not a regular file (a FIFO never blocks) or is
    larger than `limit` (EFBIG): a file agents or the tests can write may be any size, and none is read whole."""
    fd = os.open(file, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(file))
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than the {limit:,} bytes read of it", str(file))
    return data


def read_text_bounded(file: Path, limit: int = SMALL_FILE) -> str:
    """`read_bounded`'s bytes as text (undecodable bytes replaced)."""
    return read_bounded(file, limit).decode("utf-8", errors="replace")
