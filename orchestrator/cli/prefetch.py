"""The Agent SDK loaded on a thread while a run's start-up waits on git, the credentials check and the base's gate:
its import (with `mcp`: about a third of the run command's imports) is needed by no step before the first session."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable

AHEAD = ("agents.session",)
"""What the first session loads (agents/request.py's `run_session`): the SDK, `mcp`, `mcp_types`, starlette."""


def load_ahead(then: Callable[[], None], modules: tuple[str, ...] = AHEAD) -> threading.Thread:
    """Start loading `modules` on a daemon thread, then call `then` (on that thread), however the loading ended.

    Started once the command's own modules are in (langgraph, pydantic, httpx: the ones the SDK shares), so the two
    threads import disjoint modules. The GIL lets the thread run while the main thread waits on a process or a
    socket; a session that starts first waits for the module, as it would have loaded it itself."""

    def load() -> None:
        try:
            for name in modules:
                importlib.import_module(name)
        except Exception:  # noqa: BLE001  # the session's own import raises it again, where it is reported
            pass
        finally:
            then()

    thread = threading.Thread(target=load, name="autobuild-load-ahead", daemon=True)
    thread.start()
    return thread
