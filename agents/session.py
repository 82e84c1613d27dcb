"""Runs one agent session on the real Claude Code CLI: options, timeouts, transcript, cleanup, retries."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
import os
import time
import warnings
from collections.abc import Callable

from claude_agent_sdk import (
    CanUseToolShadowedWarning,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    CLINotFoundError,
    HookMatcher,
)
from claude_agent_sdk import ClaudeSDKError as _SDKError
from tenacity import RetryCallState

from agents import reaper, sandbox, tracing
from agents.cli_binary import cli_wrapper, find_cli
from agents.errors import AgentSetupError
from agents.interrupts import killed_by_interrupt, quiet_reader_errors
from agents.limits import UsageLimitExceeded, limit_hit
from agents.markers import has_promise, parse_blocker
from agents.notes_hook import NoteHook, boundary_hooks
from agents.policy import WRITE_TOOLS, ToolPolicy
from agents.questions import QuestionGate
from agents.request import SessionRequest, emit
from agents.retry import retrying, short_reason
from agents.stream import Collector, Transcript, settle_cancelled
from agents.tools import ToolRecorder, build_server, tool_names
from agents.types import AgentResult

# We run under bypassPermissions with our own PreToolUse policy and set can_use_tool only for
# AskUserQuestion, which reaches it regardless (DESIGN §4); the SDK's generic warning doesn't apply.
warnings.filterwarnings("ignore", category=CanUseToolShadowedWarning)
quiet_reader_errors()
_END = object()
_CLEANUP_GRACE_S = 2.0


CONTINUE_PROMPT = ("Your previous request failed because of a transient API or connection error ({reason});"
                   " nothing you did is lost. Continue the task exactly where you stopped.")


async def run_session(request: SessionRequest) -> AgentResult:
    """Run the session: wait while the run is paused by a usage limit, retry transient failures with one
    tenacity policy, and on a rate or usage limit pause the whole run and try again after it (bounded by the
    run's max wait, not by attempts). Never raises for outcomes; a served run giving its slot back during a long
    pause raises UsageLimitYield (from the gate, before a session starts): its task is held, not failed."""
    gate = request.limit_gate
    attempts = 0
    limited: AgentResult | None = None  # the session a limit stopped: the next try continues it
    spent = 0.0
    while True:
        try:
            result = await _with_retries(request, limited)
        except UsageLimitExceeded as exc:
            # What the limited session did and spent stays on the record.
            stopped = limited or AgentResult(role=request.role, status="usage_limit")
            stopped.status, stopped.attempts, stopped.cost_usd = "usage_limit", attempts, round(spent, 6)
            stopped.errors.append(str(exc))
            emit(request, {"event": "session_end", "status": "usage_limit", "cost_usd": 0.0})
            return stopped
        except BaseException:
            if gate is not None:
                gate.abandon_probe(request)
            raise
        attempts += result.attempts
        spent += result.cost_usd
        if gate is None or not limit_hit(result):
            if gate is not None:
                gate.cleared(request)
            result.attempts = attempts
            result.cost_usd = round(spent, 6)
            return result
        limited = result
        reason = short_reason(result)
        gate.hit(result.limit_resets_at, reason, request)
        emit(request, {"event": "retry", "attempt": attempts, "reason": f"{reason}: the run pauses",
                       "wait_s": max(0.0, (gate.pause.until if gate.pause else 0.0) - time.time())})


async def _with_retries(request: SessionRequest, previous: AgentResult | None = None) -> AgentResult:
    """One session, retried by the tenacity policy on transient failures (never on a usage limit when the
    run has a gate: that pauses the run instead). A retry continues the same CLI session by id, so the work
    and the model calls already made are not repeated; only a session that never started is started again."""
    attempts = 0
    spent = 0.0

    def on_retry(state: RetryCallState) -> None:
        result = state.outcome.result() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        reason = short_reason(result) if result else "error"
        how = f"continuing session {result.session_id}" if result and result.session_id else "starting it again"
        emit(request, {"event": "retry", "attempt": state.attempt_number, "reason": reason, "wait_s": wait,
                       "continues": bool(result and result.session_id), "how": how})

    result: AgentResult | None = None
    skip_limits = request.limit_gate is not None
    async for attempt in retrying(request.retry_attempts, request.retry_max_wait_s, on_retry, skip_limits):
        with attempt:
            answered: Callable[[], None] | None = None
            if (gate := request.limit_gate) is not None and await gate.wait(request):  # waits out a pause
                # This session probes the limit: its first answer lifts the pause for everyone at once, not
                # the end of the whole session.
                answered = functools.partial(gate.cleared, request)
            attempts += 1
            result = await _attempt(_continuation(request, previous, spent), previous, answered)
            spent += result.cost_usd
            if result.session_id:  # an attempt that never started must not lose the session to continue
                previous = result
        outcome = attempt.retry_state.outcome
        if outcome is not None and not outcome.failed:
            attempt.retry_state.set_result(result)
    assert result is not None
    result.attempts = attempts
    result.cost_usd = round(spent, 6)
    return result


def _continuation(request: SessionRequest, previous: AgentResult | None, spent: float) -> SessionRequest:
    """The request for the next attempt: the same session continued when the failed one got an id, with what
    is left of the session's budget (each CLI process reports its own cost; measured on the bundled CLI)."""
    cap = request.limits.max_budget_usd
    limits = dataclasses.replace(request.limits, max_budget_usd=max(cap - spent, 1e-4)) if cap and spent else None
    if previous is None or not previous.session_id:
        return dataclasses.replace(request, limits=limits) if limits else request
    return dataclasses.replace(request, resume_session=previous.session_id, limits=limits or request.limits,
                               prompt=CONTINUE_PROMPT.format(reason=short_reason(previous)))


def _settings(request: SessionRequest) -> str | None:
    """The flag settings: the project's hooks when asked for, and the sandbox."""
    if request.sandbox_writable is None:
        return request.extra_settings
    settings = json.loads(request.extra_settings) if request.extra_settings else {}
    settings["sandbox"] = sandbox.settings(request.cwd, request.sandbox_writable, request.unreadable)
    return json.dumps(settings)


def _options(
    request: SessionRequest, recorder: ToolRecorder, policy: ToolPolicy, tag: str, questions: QuestionGate,
    *, notes: NoteHook | None = None,
) -> ClaudeAgentOptions:
    cli = find_cli(request.cli_path)
    env = {
        **request.env,
        # bypassPermissions is refused as root without this; our PreToolUse policy still applies.
        "IS_SANDBOX": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        # One retry layer: ours (retry.py). The CLI would otherwise retry 10x over ~3 minutes.
        "CLAUDE_CODE_MAX_RETRIES": "0",
        reaper.SESSION_TAG_ENV: tag,
        # A `prepare` script (husky) an agent's install runs would write core.hooksPath into the shared config.
        "HUSKY": "0",
        # The CLI's shells are login shells: a pyenv user's profile runs `pyenv rehash`, which waits up to 60 s for
        # a lock that any SIGKILLed shell leaves behind, so a session would idle out before its first command.
        "PYENV_REHASH_TIMEOUT": os.environ.get("PYENV_REHASH_TIMEOUT", "2"),
    }
    return ClaudeAgentOptions(
        cwd=str(request.cwd),
        cli_path=cli_wrapper(cli),
        system_prompt={"type": "preset", "preset": "claude_code", "append": request.system_prompt},
        # Never let the CLI load the target repo's .claude/settings.json (its hooks, env, apiKeyHelper) or user
        # settings: its CLAUDE.md and permissions.deny reach the session through conventions.py instead.
        setting_sources=[],
        permission_mode="bypassPermissions",
        tools=list(request.tools),
        # AskUserQuestion stays out of allowed_tools so that it always reaches can_use_tool.
        allowed_tools=[*(t for t in request.tools if t != "AskUserQuestion"), *tool_names(request.role)],
        disallowed_tools=[*(sorted(WRITE_TOOLS) if policy.read_only else []), *request.denied_rules],
        mcp_servers={"autobuild": build_server(recorder)},
        strict_mcp_config=True,
        max_turns=request.limits.max_turns,
        resume=request.resume_session,
        settings=_settings(request),
        max_budget_usd=request.limits.max_budget_usd,
        model=request.model,
        env=env,
        hooks={"PreToolUse": [HookMatcher(matcher=None, hooks=[policy.hook])],  # type: ignore[list-item]
               **boundary_hooks(notes, HookMatcher)},  # type: ignore[dict-item]
        # Setting can_use_tool is what offers AskUserQuestion to the model; it always reaches the callback.
        can_use_tool=questions.can_use_tool,
    )


async def _attempt(request: SessionRequest, previous: AgentResult | None = None,
                   answered: Callable[[], None] | None = None) -> AgentResult:
    continued = previous if request.resume_session and previous is not None else None
    # A continued session keeps what the failed attempt already did: its tool calls and files.
    recorder = ToolRecorder(request.role, request.task_id, calls=list(continued.tool_calls) if continued else [])
    policy = ToolPolicy(request.cwd, read_only=request.role != "player", file_scope=request.file_scope,
                        frozen=request.frozen, unreadable=request.unreadable)
    tag = reaper.new_tag()
    result = AgentResult(role=request.role, status="success",
                         files_modified=list(continued.files_modified) if continued else [])
    questions = QuestionGate(request)
    notes = NoteHook(request, request.pending_notes) if request.pending_notes is not None else None
    tracing.instrument()  # before the client exists: the integration adds its hooks to the options
    # Finding the CLI and writing its wrapper is file work: off the event loop (a served graph never blocks it).
    client = ClaudeSDKClient(await asyncio.to_thread(_options, request, recorder, policy, tag, questions, notes=notes))
    started = time.monotonic()
    emit(request, {"event": "session_start"})
    pump_task: asyncio.Task[None] | None = None
    try:
        try:
            await client.connect()
            await client.query(request.prompt)
        except CLINotFoundError as exc:
            raise AgentSetupError(f"Claude Code CLI not found: {exc}") from None
        except _SDKError as exc:
            result.status = "interrupted" if killed_by_interrupt(exc) else "cli_error"
            result.errors.append(f"could not start the CLI: {exc}")
            return result
        queue: asyncio.Queue[object] = asyncio.Queue()
        # The session's run starts in the pump task (at its first message): it inherits this scope.
        with tracing.session_scope(request.role, request.task_id, request.turn, request.trace_metadata):
            pump_task = asyncio.create_task(_pump(client, queue))
        collector = Collector(request, result)
        collector.questions = questions
        collector.recorder = recorder
        collector.on_answer = answered
        transcript = await asyncio.to_thread(Transcript, request.transcript_path)  # makes its folder
        if notes is not None:
            notes.transcript = transcript
        try:
            await _consume(request, queue, collector, transcript, started)
        except asyncio.CancelledError:
            await settle_cancelled(client.interrupt, queue, collector, transcript, _END)  # its usage so far
            raise
        finally:
            transcript.close()
    finally:
        if request.meter is not None:
            request.meter.add(result.cost_usd)
        await _shutdown(client, pump_task, tag)
        result.duration_s = round(time.monotonic() - started, 3)
    _conclude(request, result, recorder, policy, questions)
    return result


async def _pump(client: ClaudeSDKClient, queue: asyncio.Queue[object]) -> None:
    """Move the CLI's messages onto a queue, so the reader can apply timeouts without breaking the stream."""
    try:
        async for message in client.receive_response():
            await queue.put(message)
        await queue.put(_END)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - handed to the reader, which classifies it
        await queue.put(exc)


async def _consume(
    request: SessionRequest, queue: asyncio.Queue[object], collector: Collector, transcript: Transcript,
    started: float,
) -> None:
    """Read messages until the result, an error, the wall-clock limit or the idle limit."""
    result = collector.result
    limits = request.limits
    last_activity = time.monotonic()
    while not collector.finished:
        now = time.monotonic()
        wall_left = limits.session_timeout_s - (now - started)
        idle_left = limits.idle_timeout_s - (now - last_activity)
        # A running tool is activity: a long test run is bounded by the session timeout only.
        waiting = wall_left if collector.pending_tools else min(wall_left, idle_left)
        try:
            item = await asyncio.wait_for(queue.get(), timeout=max(0.0, waiting))
        except TimeoutError:
            if wall_left <= idle_left or collector.pending_tools:
                result.status = "timeout"
                result.stuck_commands = list(collector.pending_tools.values())
                running = f": still running {'; '.join(result.stuck_commands)}" if result.stuck_commands else ""
                result.errors.append(f"session timeout after {limits.session_timeout_s:.0f}s{running}")
            else:
                result.status = "idle_timeout"
                result.errors.append(f"no activity for {limits.idle_timeout_s:.0f}s")
            return
        last_activity = time.monotonic()
        if item is _END:
            return
        if isinstance(item, Exception):
            if result.status == "success" and not collector.finished:
                result.status = "interrupted" if killed_by_interrupt(item) else "cli_error"
            result.errors.append(f"{type(item).__name__}: {item}")
            return
        transcript.write(item)
        collector.take(item)


def _conclude(
    request: SessionRequest, result: AgentResult, recorder: ToolRecorder, policy: ToolPolicy, questions: QuestionGate
) -> None:
    """Attach the tool calls, denials, structured report and markers to the result."""
    result.tool_calls = list(recorder.calls)
    explained = {denial.split(":", 1)[0] for denial in policy.denials}
    unexplained = [d for d in result.permission_denials
                   if d.split(":", 1)[0] not in explained or d in result.sandbox_refusals]
    result.permission_denials = [*policy.denials, *unexplained]
    report_tool = {"player": "report_progress", "coach": "record_decision", "planner": "submit_plan",
                   "selector": "record_selection"}
    reports = recorder.accepted(report_tool.get(request.role, ""))
    result.report = reports[-1].input if reports else None
    result.promise_complete = has_promise(result.final_text)
    if questions.pending is not None:
        result.question = questions.pending
        result.status = "question"
    blocker = parse_blocker(result.final_text)
    result.blocker = dataclasses.asdict(blocker) | {"hash": blocker.hash} if blocker else None
    emit(request, {"event": "session_end", "status": result.status, "cost_usd": result.cost_usd})


async def _shutdown(client: ClaudeSDKClient, pump_task: asyncio.Task[None] | None, tag: str) -> None:
    """Interrupt, close, then kill every process of the session; completes even if cancelled again.

    The cleanup runs as its own task and is awaited through shield() until it is done: a second
    Ctrl+C while it runs cannot abandon the CLI or its tools half-closed.
    """
    cleanup = asyncio.ensure_future(_cleanup(client, pump_task, tag))
    cancelled = False
    while not cleanup.done():
        try:
            await asyncio.shield(cleanup)
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError


async def _cleanup(client: ClaudeSDKClient, pump_task: asyncio.Task[None] | None, tag: str) -> None:
    if pump_task is not None and not pump_task.done():
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.interrupt(), timeout=2.0)
        pump_task.cancel()
        with contextlib.suppress(BaseException):
            await pump_task
        # Kill tool processes first: a CLI waiting on a hung tool delays its own exit.
        await asyncio.to_thread(reaper.kill_session, tag, _CLEANUP_GRACE_S)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(client.disconnect(), timeout=10.0)
    await asyncio.to_thread(reaper.kill_session, tag, _CLEANUP_GRACE_S)
