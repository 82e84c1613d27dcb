"""The page on a worker (`autobuild serve`, at `/ui/`): the served runs in the workers' Postgres, each feature run's
pages as `autobuild ui` draws them (`/ui/THREAD/f/FEAT…`), read through the same readers from the folder the run
works in on this worker, behind the same door with the worker's own token (ORCHESTRATOR_AUTH_TOKEN: no token, no
page). Notes go into the store's steering queue as `autobuild steer --db` puts them; a question is answered as
`autobuild answer --server` answers it (a resume through the worker's own API: the run goes on on the workers)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from orchestrator.errors import InputError
from orchestrator.repo.remote import redact
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.store.served import ServedThread, served_threads, worked_in
from orchestrator.web.actions import Answers, Refusal
from orchestrator.web.app import _page, _static, page_app
from orchestrator.web.guard import App, Door, Guard, Receive, Scope, Send
from orchestrator.web.reading import Where

_THREAD = re.compile(r"/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(/.*)?$")
"""A served thread's pages: `/THREAD/…` (the engine names threads by UUID)."""


Resume = Callable[[str, str, str, str], Awaitable[str]]
"""A served thread resumed with a person's answer: (thread id, feature, question id, text) → the thread id. The
worker gives its own (orchestrator/server/page.py: `autobuild answer --server`'s path, through its own API)."""


@dataclass
class ServedAnswers(Answers):
    """A served run's question is answered as `autobuild answer --server` does: a resume of its thread through the
    worker's API (the run goes on on whichever worker takes it), the first answer given winning."""

    resume: Resume | None = None
    given: set[tuple[str, str]] = field(default_factory=set)
    _turn: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def answer_async(self, feature: str, question_id: str, text: str) -> str:
        if not text.strip():
            raise Refusal("the answer is empty: pick an option or say what the agent should do", 400)
        if self.resume is None:
            raise Refusal(f"this page can't resume a served run: `autobuild answer {feature} {question_id} \"…\""
                          " --server URL`")
        async with self._turn:  # held until the engine took the resume: a second answer waits, then is told
            if (feature, question_id) in self.given:
                raise Refusal(f"{question_id} was already answered")
            try:
                await self.resume(str(self.where.thread), feature, question_id, text.strip())
            except InputError as exc:
                raise Refusal(str(exc), 404) from None
            self.given.add((feature, question_id))
        return f"{question_id} answered: the run goes on on the workers"


@dataclass
class ServedPages:
    """The worker's `/ui` app: the list of served runs, and each run's pages by its thread (built once each)."""

    database_url: str
    workspace: Path
    resume: Resume | None = None
    """How a question answered on the page resumes its thread (the worker's own API)."""
    threads: dict[str, Starlette] = field(default_factory=dict)

    def store(self) -> CheckpointStore:
        return CheckpointStore(self.database_url)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path") or "")[len(str(scope.get("root_path") or "")):] or "/"
        matched = _THREAD.match(path)
        if matched is None:
            await self._list_app(scope, receive, send)
            return
        thread_id, rest = matched.group(1), matched.group(2) or "/"
        app = self.threads.get(thread_id) or await self._thread_app(thread_id)
        if app is None:
            await Response(f"no served run {thread_id} in this store\n", 404, media_type="text/plain")(
                scope, receive, send)
            return
        if rest == "/":  # the run's own page: its feature's
            feature = str(getattr(app.state, "feature", ""))
            await RedirectResponse(f"{scope.get('root_path', '')}/{thread_id}/f/{feature}", 303)(scope, receive, send)
            return
        await app(dict(scope) | {"root_path": f"{scope.get('root_path', '')}/{thread_id}"}, receive, send)

    async def _thread_app(self, thread_id: str) -> Starlette | None:
        found = [t for t in await asyncio.to_thread(served_threads, self.store()) if t.thread_id == thread_id]
        folder = worked_in(found[0], self.workspace) if found else None
        if folder is None:  # not a run of these workers, or not one on a folder it may read
            return None
        where = Where(folder, self.database_url, thread=thread_id)
        app = page_app(where, ServedAnswers(where, resume=self.resume))
        app.state.feature = found[0].feature
        self.threads[thread_id] = app
        return app

    async def _list_app(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = Starlette(routes=[Route("/", self.runs), Route("/static/{name}", _static)])
        await app(scope, receive, send)

    async def runs(self, request: Request) -> Response:
        rows = await asyncio.to_thread(served_threads, self.store())
        return _page(request, "served.html", rows=[_row(t) for t in rows])  # no store address: an environment value


def _row(thread: ServedThread) -> dict[str, Any]:
    """What the list shows of a served run: never a credential a repository URL may carry."""
    return {"thread": thread.thread_id, "feature": thread.feature, "repo": redact(thread.repo_url),
            "status": thread.status, "created": thread.created[:19]}


def served_page(database_url: str, workspace: Path, token: str, host: str, port: int, *,
                resume: Resume | None = None) -> App:
    """The worker's page behind its door: the worker's token, its host and port."""
    return Guard(ServedPages(database_url, workspace, resume), Door(token, host, port))
