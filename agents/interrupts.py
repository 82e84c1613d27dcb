"""A signal that stopped the Claude Code CLI (the person's Ctrl+C): told apart from a CLI failure, and kept quiet.

A terminal's Ctrl+C signals its whole foreground process group, the agent's CLI included (the SDK starts it in
ours). The CLI either ends its turn with an `aborted_*` result or dies of the signal before it can; either way the
session was stopped by the person, which no retry can fix: the graph drains, and `resume` runs the turn again.
"""

from __future__ import annotations

import logging
import signal

from claude_agent_sdk import ProcessError

_SIGINT_EXITS = frozenset({-signal.SIGINT, 128 + signal.SIGINT})
"""A process killed by SIGINT (-2 as Python reports it), or a shell-style 130 from a wrapper that handled it."""


def killed_by_interrupt(exc: BaseException) -> bool:
    """The CLI's process ended because of SIGINT (what the SDK raises when it dies before its result)."""
    return isinstance(exc, ProcessError) and exc.exit_code in _SIGINT_EXITS


class _ReaderErrorsAreOurs(logging.Filter):
    """Drops the SDK's `Fatal error in message reader: …` log line: the same error reaches the session as an
    exception and ends up in its result; logged raw (Python's last-resort handler prints it), it reaches the
    person's terminal mid-table, and on Ctrl+C it reads as a crash."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Fatal error in message reader")


def quiet_reader_errors() -> None:
    """Install the filter once on the SDK's query logger (where the record is made: a parent's filter would miss it)."""
    logger = logging.getLogger("claude_agent_sdk._internal.query")
    if not any(isinstance(f, _ReaderErrorsAreOurs) for f in logger.filters):
        logger.addFilter(_ReaderErrorsAreOurs())
