"""Runner reports, which the tests can make any size (their paths are in the tests' environment): read at most
up to a size, never whole, never blocking on a FIFO."""

from __future__ import annotations

from pathlib import Path

from agents.bounded import read_bounded

REPORT_MAX_BYTES = 100_000_000
"""The most the gate reads of one runner report: a suite of 100,000 tests writes a JUnit report of ~30 MB."""


def report_bytes(file: Path) -> bytes:
    """A runner report; OSError when it can't be read, is not a regular file or is larger than `REPORT_MAX_BYTES`
    (as for a file that can't be read: every reader already takes that as no report)."""
    return read_bounded(file, REPORT_MAX_BYTES)


def report_text(file: Path) -> str:
    """`report_bytes` as UTF-8 text."""
    return report_bytes(file).decode("utf-8")
