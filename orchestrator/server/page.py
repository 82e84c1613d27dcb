"""The page on the worker, mounted at `/ui` (orchestrator/web/served.py): built on its first request from the
worker's own environment (its store, its clones' folder, its token, its address), or one line saying why there is
none (no ORCHESTRATOR_AUTH_TOKEN: the page's door is the worker's token, never a token of its own; the `ui` extra
not installed)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import MutableMapping
from typing import Any

from orchestrator.errors import InputError
from orchestrator.settings import environment, worker_workspace

PATH = "/ui"
_NO_TOKEN = ("the worker's page needs ORCHESTRATOR_AUTH_TOKEN (its door is the worker's token): set it and start"
             " `autobuild serve` again; then open /ui/?token=<that token>")


def page_address(host: str, port: int) -> str:
    """Where the page is, as `serve` prints it (the token is the operator's to add, never printed)."""
    shown = {"0.0.0.0": "127.0.0.1", "::": "[::1]", "": "127.0.0.1"}.get(host, host)
    return f"http://{shown}:{port}{PATH}/?token=$ORCHESTRATOR_AUTH_TOKEN"


class WorkerPage:
    """ASGI: the page's app once built, or a one-line refusal."""

    def __init__(self) -> None:
        self.app: Any = None
        self.refusal = ""
        self._building = asyncio.Lock()

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if self.app is None and not self.refusal:
            async with self._building:
                if self.app is None and not self.refusal:
                    self._build()
        if self.app is None:
            body = (self.refusal + "\n").encode()
            await send({"type": "http.response.start", "status": 503,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)

    def _build(self) -> None:
        given = environment()
        token = given.auth_token.strip()
        if not token:
            self.refusal = _NO_TOKEN
            return
        try:
            from orchestrator.web.serving import check_installed  # noqa: PLC0415  # the `ui` extra, checked first

            check_installed()
        except InputError as exc:
            self.refusal = f"the worker's page: {exc}"
            return
        from orchestrator.web.served import served_page  # noqa: PLC0415  # after the check above

        host = {"0.0.0.0": "127.0.0.1", "::": "[::1]", "": "127.0.0.1"}.get(given.host, given.host)
        from orchestrator.server import client  # noqa: PLC0415  # as served_page

        own = f"http://{host}:{int(given.port)}"  # a question answered on the page: a resume through our own API
        self.app = served_page(given.lock_db, worker_workspace(), token, host, int(given.port),
                               resume=functools.partial(client.answer_thread, own, source="page"))
