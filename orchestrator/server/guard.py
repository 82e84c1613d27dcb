"""In front of every route of a worker (the engine's and ours): a body size limit, a JSON depth limit, and no NUL in
a JSON body, each refused with one line (`detail`) before the engine parses anything.

Without it a 10 MB body had the connection reset, a deeply nested JSON body on a run's cancel route answered 500
(the parser's recursion), and a NUL in a `plan_files` key was silently dropped on the way to Postgres."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_BODY_BYTES = 8 * 1024 * 1024
"""A run's input carries a plan and its task markdown (1 MB and 100 kB each at most when loaded): many times over."""
MAX_JSON_DEPTH = 64
"""An input, a config or a command is a few levels deep; the parsers' recursion ends near a thousand."""

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(rb"[\[\]{}]")


def json_depth(body: bytes) -> int:
    """How deeply the arrays and objects of a JSON text nest (its strings skipped), without parsing it."""
    depth = deepest = 0
    for found in _BRACKET.finditer(_STRING.sub(b'""', body)):
        depth += 1 if found.group() in (b"[", b"{") else -1
        deepest = max(deepest, depth)
    return deepest


def nul_at(value: Any, where: str = "body") -> str | None:
    """Where a NUL character is in a parsed JSON value (a key or a string), or None."""
    pending: list[tuple[Any, str]] = [(value, where)]
    while pending:
        item, path = pending.pop()
        if isinstance(item, str) and "\0" in item:
            return path
        if isinstance(item, dict):
            for key, inner in item.items():
                if "\0" in key:
                    return f"a key of {path} ({key!r})"
                pending.append((inner, f"{path}.{key}"))
        elif isinstance(item, list):
            pending.extend((inner, f"{path}[{index}]") for index, inner in enumerate(item))
    return None


def refusal(body: bytes, declared: int | None) -> tuple[int, str] | None:
    """(status, one line) when the body must not reach a route, else None."""
    if (declared or len(body)) > MAX_BODY_BYTES:
        return _over()
    if body.lstrip()[:1] not in (b"{", b"["):
        return None
    if json_depth(body) > MAX_JSON_DEPTH:
        return 400, f"the JSON body nests deeper than {MAX_JSON_DEPTH} levels: send the input as documented"
    if b"\\u0000" in body or b"\x00" in body:
        try:
            where = nul_at(json.loads(body))
        except ValueError:
            return None  # not JSON after all: the route says so
        if where is not None:
            return 422, f"{where}: a NUL character is not allowed in a path or a text: remove it"
    return None


class RequestGuard:
    """Pure ASGI: the body is read (up to the limit) and checked, then handed on as it came."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = int(headers[b"content-length"]) if headers.get(b"content-length", b"").isdigit() else None
        if declared is not None and declared > MAX_BODY_BYTES:
            await _refuse(send, *_over())
            return
        chunks: list[bytes] = []
        size, more = 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay(message, receive), send)  # gone before its body: theirs to see
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = bool(message.get("more_body"))
            if size > MAX_BODY_BYTES:
                await _refuse(send, *_over())
                return
        body = b"".join(chunks)
        refused = refusal(body, declared) if body else None
        if refused is not None:
            await _refuse(send, *refused)
            return
        await self.app(scope, _replay({"type": "http.request", "body": body, "more_body": False}, receive), send)


def _over() -> tuple[int, str]:
    return 413, f"the request body is over {MAX_BODY_BYTES} bytes: send the plan and its task markdown only"


def _replay(first: Message, receive: Receive) -> Receive:
    """`first` (the body read, as one message), then the client's own messages (a streaming route waits for the
    disconnect)."""
    queued: list[Message] = [first]

    async def replayed() -> Message:
        return queued.pop(0) if queued else await receive()

    return replayed


async def _refuse(send: Send, status: int, line: str) -> None:
    data = json.dumps({"detail": line}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": data})
