"""The page's server: uvicorn on the bound address with the launch's door; and, before anything is imported, what
is missing when the `ui` extra is not installed (one line that says how to install it)."""

from __future__ import annotations

import importlib.util
from typing import Any

from orchestrator.errors import InputError

NEEDED = ("starlette", "jinja2", "sse_starlette", "uvicorn")
INSTALL = "pip install 'autobuild[ui]'"


def check_installed() -> None:
    """One line, exit 2, when a library the page needs is missing."""
    missing = [name for name in NEEDED if importlib.util.find_spec(name) is None]
    if missing:
        raise InputError(f"the page needs {', '.join(missing)}: install them with `{INSTALL}`")


async def serve(app: Any, host: str, port: int) -> None:
    """Serve `app` until interrupted (Ctrl+C ends it; runs the page started go on)."""
    import uvicorn  # noqa: PLC0415  # checked by check_installed first

    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False,
                                           server_header=False, proxy_headers=False))
    await server.serve()
