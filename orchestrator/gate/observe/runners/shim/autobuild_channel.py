"""The gate's channel in a Python runner's process (gate/observe/channel.py is the other end): the first runner here
takes the inherited pipe named by AUTOBUILD_GATE_CHANNEL, removes that variable from the environment and keeps the
descriptor from its children, then writes one JSON line per record as it happens. Plain code for any Python 3,
and nothing here may raise into the user's run."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys

TYPE_CHECKING = False  # importing typing would cost every Python process of a gate run ~8 ms
if TYPE_CHECKING:
    from typing import Any

CHANNEL = "AUTOBUILD_GATE_CHANNEL"
_LINE = 4000  # below PIPE_BUF: a line is written whole, never interleaved with another process's
_taken: list[int] = []
_sessions = [0]


def take() -> int | None:
    """The channel's descriptor in this process (taken once: the variable leaves the environment, the descriptor
    is not inherited by what this process starts); None when the run has none."""
    if _taken:
        return _taken[0]
    raw = os.environ.pop(CHANNEL, None)
    if raw is None:
        return None
    with contextlib.suppress(Exception):
        fd = int(raw)
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            os.set_inheritable(fd, False)
            _taken.append(fd)
            return fd
    return None


def named_runner() -> str | None:
    """The runner this interpreter was started as (`python -m pytest`, `pytest`, `python -m unittest`): its
    channel is taken before any project code loads."""
    argv = list(getattr(sys, "orig_argv", None) or [])
    for index, word in enumerate(argv[1:], 1):
        if word in ("-m", "-mpytest", "-munittest"):
            module = word[2:] or (argv[index + 1] if index + 1 < len(argv) else "")
            return {"pytest": "pytest", "py.test": "pytest", "unittest": "unittest"}.get(module)
        if not word.startswith("-"):
            base = os.path.basename(word)
            return "pytest" if base in ("pytest", "py.test") else None
    return None


class Session:
    """One runner's session on the channel: `open`, then a record per outcome, then `end` with its status."""

    def __init__(self, runner: str) -> None:
        self.runner = runner
        self.fd = take()
        _sessions[0] += 1
        self.key = f"{os.getpid()}-{_sessions[0]}"
        self.send("open")

    def send(self, event: str, **fields: Any) -> None:
        if self.fd is None:
            return
        record = {"s": self.key, "runner": self.runner, "event": event, **fields}
        with contextlib.suppress(Exception):
            line = json.dumps(record)
            if len(line) > _LINE:
                record.update({name: str(value)[:300] for name, value in fields.items() if isinstance(value, str)})
                line = json.dumps(record)
            os.write(self.fd, (line + "\n").encode("utf-8"))

    def test(self, **fields: Any) -> None:
        self.send("test", **fields)

    def end(self, status: int) -> None:
        self.send("end", status=status)
