"""Folds the CLI's message stream into an AgentResult, and mirrors it to the session's transcript file."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import json
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from claude_agent_sdk import (
    AssistantMessage,
    RateLimitEvent,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

from agents.limits import quota_windows
from agents.policy import WRITE_TOOLS
from agents.request import SessionRequest, emit
from agents.sandbox import refusals as sandbox_refusals
from agents.tools import PREFIX, TOOL_OWNERS, ToolRecorder, role_tools
from agents.types import AgentResult


class QuestionSource(Protocol):
    """Where a question the agent asked is waiting (the session's question gate)."""

    pending: dict[str, Any] | None


_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _unlinked(path: Path) -> None:
    """OSError (ELOOP) when a symlink on `path` would take it elsewhere than its name says (the orchestrator names
    transcripts by resolved paths: a link there was planted, say a repository's `.autobuild/runs/FEAT -> ~`)."""
    if os.path.realpath(path) != os.path.abspath(path):
        raise OSError(errno.ELOOP, "a symlink on the transcript's path: refused, nothing written", str(path))


def _opened_at(folder: int, path: Path) -> None:
    """OSError (ELOOP) unless the folder opened as `path` is that folder: a link swapped into the path between the
    check above and the open took it elsewhere (Linux names an open descriptor's place in /proc)."""
    try:
        where = os.readlink(f"/proc/self/fd/{folder}")
    except OSError:
        where = os.path.realpath(path)  # no /proc: the name, checked again
    if where != os.path.abspath(path):
        raise OSError(errno.ELOOP, "a symlink on the transcript's path: refused, nothing written", str(path))


class Transcript:
    """Appends every message as a JSON line to the session's transcript file (never into graph state). Its folder
    is checked for links, made, and opened once: a link swapped in later can't take the lines elsewhere."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._folder: int | None = None
        if path is not None:
            _unlinked(next(p for p in (path.parent, *path.parent.parents) if p.exists() or p.is_symlink()))
            path.parent.mkdir(parents=True, exist_ok=True)
            folder = os.open(path.parent, _FOLDER)
            try:
                _opened_at(folder, path.parent)
            except OSError:
                os.close(folder)
                raise
            self._folder = folder

    def close(self) -> None:
        if self._folder is not None:
            os.close(self._folder)
            self._folder = None

    def write(self, message: object) -> None:
        if self.path is None or self._folder is None:
            return
        payload: dict[str, Any] = {"t": round(time.time(), 3), "type": type(message).__name__}
        if dataclasses.is_dataclass(message) and not isinstance(message, type):
            payload.update(dataclasses.asdict(message))
        else:
            payload["repr"] = repr(message)
        fd = os.open(self.path.name, _APPEND, 0o644, dir_fd=self._folder)
        if os.fstat(fd).st_nlink > 1:  # a hard link planted at its name (we never make one): a file of our own
            os.close(fd)
            os.unlink(self.path.name, dir_fd=self._folder)
            fd = os.open(self.path.name, _APPEND | os.O_EXCL, 0o644, dir_fd=self._folder)
        with os.fdopen(fd, "a", encoding="utf-8") as out:
            out.write(json.dumps(payload, default=str) + "\n")


class Collector:
    """Folds the message stream into an AgentResult."""

    def __init__(self, request: SessionRequest, result: AgentResult) -> None:
        self.request = request
        self.result = result
        self.pending_tools: dict[str, str] = {}
        """Tool calls started and not finished, by id: "Bash: pytest -q"."""
        self.questions: QuestionSource | None = None
        self.recorder: ToolRecorder | None = None
        self.on_answer: Callable[[], None] | None = None
        """Called once, on the model's first real answer (not a synthetic error message)."""
        self._finished = False

    @property
    def finished(self) -> bool:
        """The result arrived, or the agent asked a question no one has answered (nothing more to wait for)."""
        return self._finished or (self.questions is not None and self.questions.pending is not None)

    @finished.setter
    def finished(self, value: bool) -> None:
        self._finished = value

    def take(self, message: object) -> None:
        result = self.result
        if isinstance(message, SystemMessage):
            self._system(message)
        elif isinstance(message, AssistantMessage):
            if self.on_answer is not None and message.error is None:
                self.on_answer()
                self.on_answer = None
            texts = [block.text for block in message.content if isinstance(block, TextBlock)]
            if texts:
                result.final_text = "\n".join(texts)
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    detail = _tool_detail(block)
                    self.pending_tools[block.id] = f"{block.name}: {detail}" if detail else block.name
                    self._tool_use(block)
        elif isinstance(message, UserMessage) and isinstance(message.content, list):
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    tool = self.pending_tools.pop(block.tool_use_id, None)
                    refused = sandbox_refusals(tool, block.content)
                    result.permission_denials += refused
                    result.sandbox_refusals += refused
        elif isinstance(message, ResultMessage):
            self._final(message)
        elif isinstance(message, RateLimitEvent):
            self._rate_limit(message)

    def _rate_limit(self, message: RateLimitEvent) -> None:
        info = message.rate_limit_info
        # Subscriber (and gateway) sessions say when the window resets; API-key sessions never do.
        if info.status == "rejected" and info.resets_at:
            self.result.limit_resets_at = float(info.resets_at)
        if (gate := self.request.limit_gate) is not None:  # the quota windows' readings (--max-utilization)
            gate.observe(quota_windows(info.raw, info.rate_limit_type, info.utilization, info.resets_at),
                         self.request)

    def _system(self, message: SystemMessage) -> None:
        data = message.data if isinstance(message.data, dict) else {}
        if message.subtype == "init":
            self.result.session_id = str(data.get("session_id", ""))
        elif message.subtype == "api_retry":
            status = data.get("status") or data.get("error_status")
            self.result.errors.append(f"api status {status}: CLI retry notice")
            self._api_status(status)
            if status in (401, 403):
                self.result.status = "auth_error"
                self.finished = True

    def _tool_use(self, block: ToolUseBlock) -> None:
        emit(self.request, {"event": "tool", "tool": block.name, "detail": _tool_detail(block)})
        short = block.name.removeprefix(PREFIX)
        if self.recorder is not None and block.name.startswith(PREFIX) and short in TOOL_OWNERS \
                and short not in role_tools(self.request.role):
            # Not offered to this role, so the CLI refuses it before our server sees it: still a violation.
            self.recorder.handle(short, dict(block.input))
        if block.name in WRITE_TOOLS:
            raw = str(block.input.get("file_path", ""))
            path = Path(raw)
            with contextlib.suppress(ValueError):
                raw = path.relative_to(self.request.cwd).as_posix() if path.is_absolute() else raw
            inside = not Path(raw).is_absolute()
            if raw and inside and raw not in self.result.files_modified:
                self.result.files_modified.append(raw)

    def _final(self, message: ResultMessage) -> None:
        result = self.result
        result.num_turns = message.num_turns
        result.cost_usd = float(message.total_cost_usd or 0.0)
        usage = message.usage or {}
        result.cache_read_tokens = int(usage.get("cache_read_input_tokens") or 0)
        result.input_tokens = (int(usage.get("input_tokens") or 0) + result.cache_read_tokens
                               + int(usage.get("cache_creation_input_tokens") or 0))
        result.output_tokens = int(usage.get("output_tokens", 0))
        result.session_id = message.session_id or result.session_id
        for denial in message.permission_denials or []:
            # Our own hook's denials show up here too; keep only the ones the hook did not explain.
            name = denial.get("tool_name", "?") if isinstance(denial, dict) else str(denial)
            result.permission_denials.append(f"{name}: denied")
        if message.result and not result.final_text:
            result.final_text = message.result
        result.errors.extend(message.errors or [])
        if message.subtype == "error_max_turns":
            result.status = "max_turns"
        elif message.subtype == "error_max_budget_usd":
            result.status = "budget"
        elif message.is_error:
            status = message.api_error_status
            if status in (401, 403):
                result.status = "auth_error"
            elif message.subtype == "error_during_execution" and (message.terminal_reason or "").startswith(
                    "aborted"):  # the CLI's turn was aborted by a signal (we interrupt only after the stream)
                result.status = "interrupted"
            else:
                result.status = "api_error" if message.terminal_reason == "api_error" or status else "cli_error"
            result.errors.append(f"api status {status}: {message.result or message.terminal_reason}")
            result.terminal_reason = message.terminal_reason
            self._api_status(status)
        self.finished = True

    def _api_status(self, status: object) -> None:
        """Keep the first API status the session saw (what retries and the usage-limit gate decide on)."""
        if self.result.api_status is None and not isinstance(status, bool) and str(status).isdigit():
            self.result.api_status = int(str(status))


def _tool_detail(block: ToolUseBlock) -> str:
    """What a watcher needs to follow along: the command or the file, on one short line."""
    value = block.input.get("command") or block.input.get("file_path") or block.input.get("pattern") or ""
    first_line = str(value).strip().splitlines()[0] if str(value).strip() else ""
    return first_line if len(first_line) <= 100 else first_line[:99] + "…"



_SETTLE_S = 3.0
"""How long a cancelled session's CLI gets to say what it spent (measured: its result comes ~0.15 s after the
interrupt; the cleanup's own interrupt waits up to 2 s)."""


async def settle_cancelled(interrupt: Callable[[], Awaitable[None]], queue: asyncio.Queue[object],
                           collector: Collector, transcript: Transcript, end: object) -> None:
    """A session cancelled mid-way (a sibling attempt won, the run stopped): interrupted, and the messages still
    coming read to its result, which says what the session spent so far (`error_during_execution` with its
    `total_cost_usd`), so that usage is not lost. Bounded; cancelled again, it gives up at once."""
    async def read() -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(interrupt(), timeout=2.0)
        while not collector.finished:
            item = await queue.get()
            if item is end or isinstance(item, Exception):
                return
            transcript.write(item)
            collector.take(item)

    reading = asyncio.ensure_future(asyncio.wait_for(read(), timeout=_SETTLE_S))
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await asyncio.shield(reading)
    if not reading.done():
        reading.cancel()
    collector.result.status = "interrupted"
    emit(collector.request, {"event": "session_end", "status": "cancelled", "cost_usd": collector.result.cost_usd})
