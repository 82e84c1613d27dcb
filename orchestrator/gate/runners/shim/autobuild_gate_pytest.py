"""A pytest plugin the gate's sitecustomize adds to pytest's default plugins (only where that shim was imported,
so this module is importable too): no fail-fast (`-x`, `--maxfail`), so the base's run and each task's see the same
tests. Options given on the command line come after PYTEST_ADDOPTS, so only a plugin can overrule them.

A run the gate's timeout would kill (SIGKILL, through the sandbox) writes no JUnit report; so just before that
deadline (AUTOBUILD_GATE_DEADLINE, seconds since the epoch) pytest is interrupted as by Ctrl+C, and still writes the
report of the tests that finished: a test that hangs leaves the others' results, and its own id unreported. It
says so last (STOPPED), for the gate to call the run timed out."""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

import pytest

DEADLINE = "AUTOBUILD_GATE_DEADLINE"
STOPPED = "autobuild: pytest interrupted at the gate's deadline"
_fired = threading.Event()


def _interrupt() -> None:
    _fired.set()
    os.kill(os.getpid(), signal.SIGINT)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: Any) -> None:
    config.option.maxfail = 0
    deadline = os.environ.get(DEADLINE, "")
    try:
        delay = float(deadline) - time.time()
    except ValueError:
        return
    if delay > 0:
        timer = threading.Timer(delay, _interrupt)
        timer.daemon = True
        timer.start()


def pytest_unconfigure(config: Any) -> None:
    if _fired.is_set():  # after pytest's own capture ended: straight to the run's output
        os.write(1, f"\n{STOPPED}\n".encode())
