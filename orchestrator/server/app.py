"""The worker's own routes, mounted by Aegra beside the LangGraph Server API: `GET /ok` (200 once serving), the page
on the served runs at `/ui` (server/page.py), and the
pending questions of a thread (Aegra 0.11's thread state answers 500 while a functional-API graph is interrupted:
its values are not yet a dict); and its lifespan (run by Aegra inside its own), which starts the worker's waker."""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Header, HTTPException

from orchestrator.server import page, waker
from orchestrator.server.guard import RequestGuard
from orchestrator.settings import environment
from orchestrator.store.paused_threads import is_pause


@asynccontextmanager
async def _lifespan(_app: FastAPI) -> AsyncIterator[None]:
    """Aegra runs this inside its own lifespan, after its store and queue are up: the waker re-queues paused runs."""
    task = waker.start()
    try:
        yield
    finally:
        await waker.stop(task)


# With a token, the API's description is a token holder's too: the engine leaves /docs and /openapi.json public on
# the app it is given (ours), so that app has none (`serve` sets the token before the engine imports this).
_PUBLIC_DOCS = not environment().auth_token.strip()
app = FastAPI(lifespan=_lifespan, docs_url="/docs" if _PUBLIC_DOCS else None,
              redoc_url="/redoc" if _PUBLIC_DOCS else None, openapi_url="/openapi.json" if _PUBLIC_DOCS else None)
app.add_middleware(RequestGuard)  # the engine's routes join this app: the guard stands in front of them too
app.mount(page.PATH, page.WorkerPage())  # the page on the served runs, behind the worker's token (server/page.py)
_workflow: list[Any] = []


@app.get("/ok")
async def ok() -> dict[str, bool]:
    """Uvicorn accepts connections only after the engine's start-up (migrations, store, queue): ready."""
    return {"ok": True}


@app.get("/autobuild/threads/{thread_id}/questions")
async def questions(thread_id: str, authorization: str | None = Header(default=None)) -> dict[str, Any]:
    """The thread's pending questions (`question_id`, `question`, `interrupt_id`) and the usage pause it yielded for
    (`pause`: `until`, `until_iso`, `reason`, or None), read from the shared store."""
    expected = environment().auth_token.strip()
    if expected and not hmac.compare_digest((authorization or "").removeprefix("Bearer ").strip(), expected):
        raise HTTPException(status_code=401, detail="send ORCHESTRATOR_AUTH_TOKEN as a bearer token")
    if not _workflow:
        from aegra_api.core.database import db_manager  # noqa: PLC0415  # only inside a running worker

        from orchestrator.graph.workflow import build_feature_workflow  # noqa: PLC0415  # heavy: on first use

        _workflow.append(build_feature_workflow(checkpointer=db_manager.get_checkpointer()))
    snapshot = await _workflow[0].aget_state({"configurable": {"thread_id": thread_id}}, subgraphs=True)
    pending = list(snapshot.interrupts) or [i for task in snapshot.tasks for i in task.interrupts]
    return {"questions": [{"question_id": str(i.value.get("question_id", "")),
                           "question": str(i.value.get("question", "")), "interrupt_id": str(i.id)}
                          for i in pending if isinstance(i.value, dict) and not is_pause(i.value)],
            "pause": next((i.value for i in pending if is_pause(i.value)), None)}
