"""The page's door (issue 41, item 3): a random token per launch, handed once in the printed URL and then kept in
an HttpOnly, SameSite=Strict cookie; the Host header must name the bound address or `localhost` (DNS rebinding);
every POST must come from the page's own origin; every answer carries a Content-Security-Policy with no inline
script and no other origin, and is never cached."""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:;"
       " font-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
"""Scripts only from the page's own origin, none inline; mermaid.js's SVG carries its own <style> elements."""
HEADERS = (("content-security-policy", CSP), ("x-content-type-options", "nosniff"),
           ("referrer-policy", "no-referrer"), ("cache-control", "no-store"), ("x-frame-options", "DENY"))
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


def new_token() -> str:
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Door:
    """Who may come in: the launch's token, the host:port the page is served on, and the cookie it is kept in
    (one name per port: two pages on one machine keep their tokens apart)."""

    token: str
    host: str
    port: int
    extra_hosts: tuple[str, ...] = field(default=())

    @property
    def cookie(self) -> str:
        return f"autobuild_ui_{self.port}"

    def allowed_hosts(self) -> set[str]:
        names = {self.host, *LOOPBACK_NAMES, *self.extra_hosts}
        return {f"{name}:{self.port}" for name in names} | set(self.extra_hosts)

    def url(self, path: str = "/") -> str:
        """The address to open, printed once: the token in it becomes a cookie on the first load."""
        shown = "127.0.0.1" if self.host in ("127.0.0.1", "0.0.0.0") else self.host
        return f"http://{shown}:{self.port}{path}?{urlencode({'token': self.token})}"


def _header(scope: Scope, name: bytes) -> str | None:
    return next((value.decode("latin-1") for key, value in scope.get("headers", []) if key == name), None)


class Guard:
    """ASGI middleware in front of every route (static files included)."""

    def __init__(self, app: App, door: Door) -> None:
        self.app, self.door = app, door

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            await _plain(send, *refusal)
            return
        given = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"))).get("token")
        if given is not None and scope["method"] == "GET":
            await self._welcome(scope, send, given)
            return
        if not self._has_cookie(scope):
            await _plain(send, 401, "open the address `autobuild ui` printed (it carries this launch's token)")
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []),
                                      *((key.encode(), value.encode()) for key, value in HEADERS)]
            await send(message)

        await self.app(scope, receive, secured)

    def _refusal(self, scope: Scope) -> tuple[int, str] | None:
        """Why the request is refused before its token is even looked at: a foreign Host, a foreign Origin."""
        host = (_header(scope, b"host") or "").lower()
        if host not in self.door.allowed_hosts():
            return 421, f"this page answers to {self.door.host}:{self.door.port} or localhost only, not {host!r}"
        if scope["method"] not in ("GET", "HEAD"):
            origin = _header(scope, b"origin")
            if origin != f"http://{host}":
                return 403, f"a change is taken from this page's own origin only (http://{host}), not {origin!r}"
        return None

    def _has_cookie(self, scope: Scope) -> bool:
        jar: SimpleCookie = SimpleCookie()
        jar.load(_header(scope, b"cookie") or "")
        kept = jar.get(self.door.cookie)
        return kept is not None and hmac.compare_digest(kept.value, self.door.token)

    async def _welcome(self, scope: Scope, send: Send, given: str) -> None:
        """The printed URL: its token, if right, becomes the cookie, and the page reloads without it (the token
        stays out of the history and of any link)."""
        if not hmac.compare_digest(given, self.door.token):
            await _plain(send, 401, "this token is not this launch's: open the address `autobuild ui` printed last")
            return
        cookie = f"{self.door.cookie}={self.door.token}; HttpOnly; SameSite=Strict; Path=/"
        await send({"type": "http.response.start", "status": 303,
                    "headers": [(b"location", local_path(scope.get("path") or "/").encode()),
                                (b"set-cookie", cookie.encode()),
                                *((key.encode(), value.encode()) for key, value in HEADERS)]})
        await send({"type": "http.response.body", "body": b""})


def local_path(path: str) -> str:
    """`path` when it is a path on this page (`/f/FEAT-001`), else `/`: `//host` and `/\\host` are other sites to a
    browser, and a redirect or a link there would leave the page."""
    return path if path.startswith("/") and not path.startswith("//") and "\\" not in path else "/"


async def _plain(send: Send, status: int, text: str) -> None:
    body = (text + "\n").encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()),
                            *((key.encode(), value.encode()) for key, value in HEADERS)]})
    await send({"type": "http.response.body", "body": body})
