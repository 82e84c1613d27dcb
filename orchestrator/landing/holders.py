"""What a dead `land` may have left running, for its recovery: the processes of the landing (by their tag) ended
and waited for, and the live processes that hold a file open (git's `index.lock`), which the recovery never
takes from them."""

from __future__ import annotations

import os
import time
from pathlib import Path

from agents import reaper

_PROC = Path("/proc")
_WAIT_S = 10.0
"""How long the recovery waits for a process it ended (SIGKILL: at once, unless the kernel is busy) or for a live
holder of `index.lock` (a git of the user's that is finishing) before it leaves things as they are."""


def end_landing(tag: str) -> int:
    """Kill every process that carries the dead landing's tag (its git, its hooks, its gate) and wait until they
    are gone, so none of them writes the checkout after the recovery put it right; how many there were."""
    killed = reaper.kill_session(tag)
    deadline = time.monotonic() + _WAIT_S
    while reaper.tagged_pids(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    return killed


def holders(path: Path) -> list[int]:
    """The live processes with `path` open (git holds its `index.lock` open while it writes the index)."""
    wanted = os.path.realpath(path)
    found = []
    for entry in _PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if any(os.readlink(fd) == wanted for fd in (entry / "fd").iterdir()):
                found.append(int(entry.name))
        except OSError:  # gone meanwhile, or not ours to look into
            continue
    return found


def held_after_waiting(path: Path) -> list[int]:
    """`holders(path)`, after giving them up to the wait to finish: empty when the file is free."""
    deadline = time.monotonic() + _WAIT_S
    while (held := holders(path)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return held
