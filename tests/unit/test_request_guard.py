"""The worker's guard in front of every route (server/guard.py), in-process over ASGI: a body over the limit is
413, a deeply nested JSON body 400 (a route parsing it answered 500), a NUL in a `plan_files` key 422 (it was
dropped silently on the way to Postgres), each one line; what passes reaches the route as it was sent."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from orchestrator.server.app import app as worker_app
from orchestrator.server.guard import MAX_BODY_BYTES, MAX_JSON_DEPTH, RequestGuard, json_depth


async def _cancel(request: Request) -> JSONResponse:
    """As an engine route does: the body parsed whole (json's recursion fails past ~1000 levels: a 500)."""
    body = await request.json()
    keys = sorted(body.get("input", {}).get("plan_files", {}))
    return JSONResponse({"keys": keys, "size": len(await request.body())})


_ROUTES = [Route("/threads/{thread}/runs/{run}/cancel", _cancel, methods=["POST"])]


def _post(content: bytes | AsyncIterator[bytes], guarded: bool = True) -> httpx.Response:
    inner = Starlette(routes=_ROUTES)
    transport = httpx.ASGITransport(app=RequestGuard(inner) if guarded else inner, raise_app_exceptions=False)

    async def post() -> httpx.Response:
        async with httpx.AsyncClient(transport=transport, base_url="http://worker") as client:
            return await client.post("/threads/t/runs/r/cancel", content=content,
                                     headers={"content-type": "application/json"})

    return asyncio.run(post())


def _one_line(response: httpx.Response) -> str:
    detail = response.json()["detail"]
    assert isinstance(detail, str) and "\n" not in detail
    return detail


def test_a_deeply_nested_body_is_refused_before_the_route() -> None:
    deep = b'{"input": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    assert _post(deep, guarded=False).status_code == 500  # what the engine's route answered
    refused = _post(deep)
    assert refused.status_code == 400 and str(MAX_JSON_DEPTH) in _one_line(refused)


def test_a_body_over_the_limit_is_refused_declared_or_streamed() -> None:
    big = b'{"input": {"plan_yaml": "' + b"x" * (10 * 1024 * 1024) + b'"}}'
    refused = _post(big)
    assert refused.status_code == 413 and str(MAX_BODY_BYTES) in _one_line(refused)

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: counted as it comes
        for _ in range(10):
            yield b" " * (1024 * 1024)

    assert _post(chunks()).status_code == 413


def test_a_nul_in_a_plan_files_key_is_refused_in_one_line() -> None:
    body = {"input": {"target": "FEAT-001", "plan_files": {"docs/a\u0000.md": "x", "docs/b.md": "y"}}}
    assert _post(json.dumps(body).encode(), guarded=False).json()["keys"] == ["docs/a\x00.md", "docs/b.md"]
    refused = _post(json.dumps(body).encode())
    assert refused.status_code == 422 and "plan_files" in _one_line(refused)


def test_what_passes_reaches_the_route_as_sent() -> None:
    body = json.dumps({"input": {"plan_files": {"docs/a.md": "\\u0000 is text here", "x": [[{"y": 1}]]}}}).encode()
    passed = _post(body)
    assert passed.status_code == 200 and passed.json() == {"keys": ["docs/a.md", "x"], "size": len(body)}


@pytest.mark.parametrize(("text", "depth"), [(b'{"a": "[[[[", "b": [1, {"c": []}]}', 4), (b'"{{"', 0),
                                             (b'["\\"]]]"]', 1)])
def test_json_depth_skips_strings(text: bytes, depth: int) -> None:
    assert json_depth(text) == depth


def test_the_worker_app_stands_the_guard_in_front_of_its_routes() -> None:
    """The engine adds its routes to this app (Aegra's `http.app`), so its middleware runs before theirs."""
    assert RequestGuard in [middleware.cls for middleware in worker_app.user_middleware]
