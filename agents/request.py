"""What one agent session is asked to do (SessionRequest) and where its progress events go: the types the
session, its stream reader and its question gate share, so none of them imports another."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.limits import UsageLimitGate
from agents.types import AgentResult, SessionLimits, UsageMeter

EventSink = Callable[[dict[str, Any]], None]


@dataclass
class SessionRequest:
    """Everything one session needs; built by roles.py."""

    role: str
    task_id: str
    turn: int
    cwd: Path
    system_prompt: str
    prompt: str
    tools: list[str]
    limits: SessionLimits = field(default_factory=SessionLimits)
    model: str | None = None
    file_scope: list[str] = field(default_factory=list)
    frozen: list[str] = field(default_factory=list)
    answers: dict[str, str] = field(default_factory=dict)
    """Answers a human already gave, by question text: AskUserQuestion gets them in the SDK's format."""
    transcript_path: Path | None = None
    denied_rules: list[str] = field(default_factory=list)
    """The repo's `permissions.deny` rules (e.g. "Bash(rm:*)"), passed to the CLI as disallowed tools."""
    extra_settings: str | None = None
    """Settings JSON handed to the CLI as flag settings: only ever the project's `hooks`, when asked for."""
    cli_path: str | None = None
    retry_attempts: int = 3
    retry_max_wait_s: float = 60.0
    on_event: EventSink | None = None
    limit_gate: UsageLimitGate | None = None
    resume_session: str | None = None
    """Continue this CLI session (by id) instead of starting a new one: a retry after a transient failure."""
    sandbox_writable: tuple[Path, ...] | None = None
    """Bash runs in Claude Code's sandbox, writable: the worktree, its git admin folder, the object store and
    these; None: unsandboxed."""
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment for the session's commands (ours wins where they overlap)."""
    unreadable: tuple[Path, ...] = ()
    """Files and folders (absolute) the session can't read: denied to Read/Grep/Glob by the tool policy and to
    Bash by the sandbox's denyRead (hidden acceptance tests and the gate's folder of their runs)."""
    trace_metadata: dict[str, str] = field(default_factory=dict)
    """What the session's LangSmith run carries besides role, task and turn (e.g. the feature id), when on."""
    pending_notes: Callable[[], Awaitable[list[str]]] | None = None
    """Asked after every tool call for notes from the person supervising the run (agents/notes_hook.py)."""
    meter: UsageMeter | None = None
    """Told what the session spent when it ends, also when it is cancelled (the caller then gets no result)."""


def emit(request: SessionRequest, event: dict[str, Any]) -> None:
    """Hand a progress event to the caller's sink, tagged with role, task and turn."""
    if request.on_event is not None:
        request.on_event({"role": request.role, "task": request.task_id, "turn": request.turn, **event})



async def run_session(request: SessionRequest) -> AgentResult:
    """`agents.session.run_session`, its module loaded by the first session, on a thread (the loop runs on): it
    loads the Agent SDK with `mcp`, a third of a run's imports, which nothing before a session needs. `autobuild run`
    loads it beside its start-up's waits (orchestrator/cli/prefetch.py); then this finds it loaded."""
    session = await asyncio.to_thread(importlib.import_module, "agents.session")
    run: Callable[[SessionRequest], Awaitable[AgentResult]] = session.run_session
    return await run(request)
