"""Reading a file the task or the gate's commands could have made any size (a sparse file costs nothing on disk, a
report's path is in the tests' environment): at most a limit, never whole, never blocking on a FIFO."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

REPORT_MAX_BYTES = 100_000_000
"""The most the gate reads of one runner report: a suite of 100,000 tests writes a JUnit report of ~30 MB."""


def read_bounded(file: Path, limit: int) -> bytes:
    """The bytes of `file` (links followed); OSError when it is not a regular file or is larger than `limit`
    (EFBIG), as for a file that can't be read: every reader already treats that as no report (blocking)."""
    fd = os.open(file, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(file))
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than the {limit:,} bytes the gate reads", str(file))
    return data


def report_text(file: Path) -> str:
    """A runner report's text, read as `read_bounded` does with `REPORT_MAX_BYTES`."""
    return read_bounded(file, REPORT_MAX_BYTES).decode("utf-8")
