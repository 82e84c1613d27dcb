"""The worker's own routes, mounted by Aegra beside the LangGraph Server API: `GET /ok` (200 once serving)."""

from __future__ import annotations

from fastapi import FastAPI

app = FastAPI()


@app.get("/ok")
async def ok() -> dict[str, bool]:
    """Uvicorn accepts connections only after the engine's start-up (migrations, store, queue): ready."""
    return {"ok": True}
