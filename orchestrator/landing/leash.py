"""`python -m orchestrator.landing.leash CMD`: run a shell command that dies with the process that started it.

`land` runs the user's setup and gate through this: the gate's processes live in their own session (so a
timeout can kill the whole group), which also means a kill -9 of `land` would leave them running. The leash
asks the kernel for a signal when its parent dies (prctl PR_SET_PDEATHSIG) and then kills its own process
group, the command's whole tree (what escaped into a new session is found by the tag `land` put in its
environment, when the next command finishes the landing).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys

_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the tag is the only way then
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m orchestrator.landing.leash CMD", file=sys.stderr)
        return 2
    parent = os.getppid()

    def end_group(signum: int, _frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.killpg(os.getpgrp(), signal.SIGKILL)

    signal.signal(signal.SIGTERM, end_group)
    _die_with_parent(parent)
    # close_fds=False: the command keeps what it was given through the leash, the gate's channel
    # (gate/observe/channel.py)
    with subprocess.Popen(["bash", "-c", argv[0]], close_fds=False) as child:
        return child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
