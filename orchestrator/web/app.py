"""The page's routes on Starlette: runs, a feature, a task, a turn's diff, the live streams, and the changes (a note,
a pause, an unpause or a cancel, an answer), rendered from our own Jinja2 templates (autoescaped: everything from
agents and the repo is hostile text) with our own CSS and script, behind the guard (web/guard.py)."""

from __future__ import annotations

import asyncio
from functools import cache
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment, PackageLoader
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from orchestrator.errors import InputError, StoreError
from orchestrator.store.run_liveness import STOPPED
from orchestrator.store.supervise import Refusal
from orchestrator.views.mermaid import style_of
from orchestrator.web import live, reading
from orchestrator.web.actions import Answers, control_task, send_note
from orchestrator.web.diffs import turn_diff
from orchestrator.web.guard import Door, Guard, local_path
from orchestrator.web.reading import Where

STATIC = {"ui.css": "text/css", "ui.js": "text/javascript", "mermaid.min.js": "text/javascript"}
WAITING = "waiting for an answer"
CONTROLS = {"pause": "pauses at its next step; its slot goes to another task until unpaused",
            "pause-now": "pauses now: its session is stopped, its work kept for the same turn",
            "unpause": "goes on (if its run ended waiting: `autobuild resume`)",
            "cancel": "ends cancelled at its next step; `autobuild resume` runs it again"}
MAX_FORM_BYTES = 64 * 1024
"""A form larger than this is refused unread (a note is at most 8 KB)."""


def _usd(value: Any) -> str:
    return f"${float(value or 0.0):.4f}"


def _when(iso: Any) -> str:
    """An ISO-8601 UTC time as a person reads it: `2026-11-28 14:25:39 UTC`."""
    return f"{str(iso)[:19].replace('T', ' ')} UTC" if iso else "-"


def _duration(seconds: Any) -> str:
    if seconds is None:
        return "-"
    whole = int(float(seconds))
    hours, rest = divmod(whole, 3600)
    return f"{hours} h {rest // 60:02d} m" if hours else f"{rest // 60} m {rest % 60:02d} s"


def _state(outcome: Any) -> str:
    """A state's CSS class: the flowchart's colours; a question waiting stands out as a blocked task does."""
    return "blocked" if outcome == WAITING or str(outcome).startswith(STOPPED) else style_of(str(outcome or ""))[0]


@cache
def templates() -> Environment:
    env = Environment(loader=PackageLoader("orchestrator.web", "templates"), autoescape=True,
                      trim_blocks=True, lstrip_blocks=True)
    env.filters.update(usd=_usd, duration=_duration, when=_when, state=_state)
    return env


def _page(request: Request, name: str, status: int = 200, **values: Any) -> HTMLResponse:
    """A page; its links lead under where it is mounted (`root`: "" for `autobuild ui`, `/ui/…` on a worker)."""
    return HTMLResponse(templates().get_template(name).render(root=root_of(request), **values), status_code=status)


def root_of(request: Request) -> str:
    return str(request.scope.get("root_path") or "").rstrip("/")


def _static(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in STATIC:
        return Response("no such file\n", 404, media_type="text/plain")
    package = "orchestrator.views" if name == "mermaid.min.js" else "orchestrator.web"
    folder = "assets" if name == "mermaid.min.js" else "static"
    return Response((resources.files(package) / folder / name).read_bytes(), media_type=STATIC[name],
                    headers={"cache-control": "no-store"})


class Pages:
    """The routes over one repository and store."""

    def __init__(self, where: Where, answers: Answers) -> None:
        self.where, self.answers = where, answers

    async def _read(self, title: str, reader: Any, *args: Any) -> Any:
        try:
            return await asyncio.to_thread(reader, self.where, *args)
        except InputError as exc:
            raise _NotFound(title, str(exc)) from None

    async def runs(self, request: Request) -> Response:
        rows = await self._read("runs", reading.runs)
        return _page(request, "runs.html", rows=rows, repo=self.where.repo, store=str(self.where.store()))

    async def feature(self, request: Request) -> Response:
        feature = request.path_params["feature"]
        return _page(request, "feature.html", view=await self._read(feature, reading.feature, feature), feature=feature)

    async def task(self, request: Request) -> Response:
        feature, task_id = request.path_params["feature"], request.path_params["task"]
        view = await self._read(task_id, reading.task, feature, task_id)
        return _page(request, "task.html", view=view, feature=feature, task=task_id)

    async def diff(self, request: Request) -> Response:
        feature, task_id = request.path_params["feature"], request.path_params["task"]
        view = await self._read(task_id, reading.task, feature, task_id)
        number = _int(request.query_params.get("turn"))
        turns = view["shown"]["turns"]
        index = next((i for i, turn in enumerate(turns) if turn["turn"] == number
                      and str(turn.get("attempt") or "") == request.query_params.get("attempt", "")), None)
        if index is None:
            raise _NotFound(task_id, f"{task_id} has no turn {number}")
        before = next((str((t["player"] or {}).get("sha") or "") or None for t in reversed(turns[:index])
                       if t.get("attempt") == turns[index].get("attempt") and (t["player"] or {}).get("sha")), None)
        after = str((turns[index]["player"] or {}).get("sha") or "") or None
        shown = await asyncio.to_thread(turn_diff, self.where.repo, before, after,
                                        _int(request.query_params.get("page")))
        return _page(request, "diff.html", diff=shown, feature=feature, task=task_id, turn=turns[index])

    async def events(self, request: Request) -> Response:
        feature, task_id = request.path_params["feature"], request.path_params["task"]
        given = request.query_params.get("page")
        log = await self._read(task_id, reading.log_page, feature, task_id, _int(given) if given else None)
        return _page(request, "events.html", log=log, feature=feature, task=task_id)

    async def feature_live(self, request: Request) -> Response:
        feature = request.path_params["feature"]
        await self._read(feature, Where.plan, feature)  # an unknown feature: 404, not a stream that waits forever
        return EventSourceResponse(live.feature_states(self.where, feature), ping=15)

    async def task_log(self, request: Request) -> Response:
        feature, task_id = request.path_params["feature"], request.path_params["task"]
        if task_id not in (await self._read(feature, Where.plan, feature)).task_ids():
            raise _NotFound(task_id, f"{feature} has no task {task_id}")
        since = live.since_id(request.headers.get("last-event-id"), request.query_params.get("since"))
        return EventSourceResponse(live.task_log(self.where, feature, task_id, since), ping=15)

    async def note(self, request: Request) -> Response:
        feature, task_id = request.path_params["feature"], request.path_params["task"]
        form = await _form(request)
        note = await asyncio.to_thread(send_note, self.where, feature, task_id, form.get("text", ""),
                                       form.get("attempt") or None)
        whom = f"attempt a{note.attempt} of {task_id}" if note.attempt else task_id
        return _said(request, 202, f"note {note.id} accepted: {whom}'s player reads it at its next turn",
                     f"{root_of(request)}/f/{feature}/t/{task_id}")

    async def control(self, request: Request) -> Response:
        feature, task_id = request.path_params["feature"], request.path_params["task"]
        action = (await _form(request)).get("control", "")  # not "action": a form's field would hide form.action
        if action not in CONTROLS:
            raise Refusal(f"{action!r} is no action: pause, pause-now, unpause or cancel", 400)
        await asyncio.to_thread(control_task, self.where, feature, task_id, action.removesuffix("-now"),
                                now=action == "pause-now")
        return _said(request, 202, f"{task_id} {CONTROLS[action]}", f"{root_of(request)}/f/{feature}/t/{task_id}")

    async def answer(self, request: Request) -> Response:
        feature = request.path_params["feature"]
        form = await _form(request)
        said = await self.answers.answer_async(feature, form.get("question_id", ""),
                                               form.get("option") or form.get("text", ""))
        return _said(request, 202, said, f"{root_of(request)}/f/{feature}")


class _NotFound(Exception):
    def __init__(self, title: str, message: str) -> None:
        super().__init__(message)
        self.title = title


def _int(given: str | None) -> int:
    return int(given) if given and given.isdigit() else 0


async def _form(request: Request) -> dict[str, str]:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_FORM_BYTES:
        raise Refusal(f"the form is {declared} bytes, over the {MAX_FORM_BYTES} this page takes", 413)
    async with request.form(max_files=0, max_fields=8, max_part_size=MAX_FORM_BYTES) as form:
        return {key: value for key, value in form.items() if isinstance(value, str)}


def _said(request: Request, status: int, message: str, back: str) -> Response:
    """A change's outcome: JSON for the page's script, a small page for a plain form."""
    if "application/json" in request.headers.get("accept", ""):
        return JSONResponse({"ok": status < 400, "message": message}, status_code=status)
    return _page(request, "said.html", status, message=message, back=back, ok=status < 400)


async def _refused(request: Request, exc: Exception) -> Response:
    status = exc.status if isinstance(exc, Refusal) else 400
    back = urlsplit(request.headers.get("referer") or "/")
    home = root_of(request) + "/"
    return _said(request, status, str(exc), local_path(back.path) if back.netloc in ("", request.url.netloc) else home)


async def _store_down(request: Request, exc: Exception) -> Response:
    """The store could not be read or written now (locked, down, being made by a run starting): said, never a
    traceback; the page can be loaded again."""
    return _said(request, 503, f"{exc} (load the page again in a moment)", root_of(request) + "/")


async def _not_found(request: Request, exc: Exception) -> Response:
    return _page(request, "said.html", 404, message=str(exc), back=root_of(request) + "/", ok=False)


def create_app(where: Where, door: Door, answers: Answers | None = None) -> Guard:
    """The page's ASGI app for one repository, behind its door."""
    return Guard(page_app(where, answers), door)


def page_app(where: Where, answers: Answers | None = None) -> Starlette:
    """The page's routes for one repository (and thread), with no door: behind `create_app`'s, or the worker's
    (web/served.py)."""
    pages = Pages(where, answers or Answers(where))
    routes = [
        Route("/", pages.runs), Route("/static/{name}", _static),
        Route("/f/{feature}", pages.feature), Route("/f/{feature}/live", pages.feature_live),
        Route("/f/{feature}/answer", pages.answer, methods=["POST"]),
        Route("/f/{feature}/t/{task}", pages.task), Route("/f/{feature}/t/{task}/diff", pages.diff),
        Route("/f/{feature}/t/{task}/log", pages.task_log), Route("/f/{feature}/t/{task}/events", pages.events),
        Route("/f/{feature}/t/{task}/note", pages.note, methods=["POST"]),
        Route("/f/{feature}/t/{task}/control", pages.control, methods=["POST"]),
    ]
    return Starlette(routes=routes, exception_handlers={InputError: _refused, _NotFound: _not_found,
                                                         StoreError: _store_down})
