"""`autobuild pause --now`: a running player session is cut at once instead of at the task's next node boundary, and
its work is kept. While a player session runs its task's control records are read every `WATCH_S`; a pause `--now`
cancels the session (its processes end with it), the worktree's changes so far are committed on the task's branch
as the turn's head, and the player node ends there with `paused_turn`: the graph goes back to the player, whose
boundary holds the task paused (in place, or as the run's interrupt) and, once unpaused, runs the same turn again on
that commit, the new session told why. The notes the cut session got stay `delivered`: its replacement gets them
again. A cut session's cost so far (the CLI's result at the interrupt) counts in the turn's."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from pathlib import Path

from agents import AgentResult
from orchestrator.facts import TaskState
from orchestrator.graph.context import RunContext
from orchestrator.graph.events import EventLog

WATCH_S = 0.5
"""How often a running player session's task is looked at for a `pause --now` (a short SQLite read)."""
RESUMED = ("A person paused this task while your previous session of this turn ran, and it was stopped there; its"
           " work so far is kept, committed in your worktree. Go on from there: check what is done, then finish the"
           " task and report.")


async def watched(ctx: RunContext, task_id: str, session: Awaitable[AgentResult], *,
                  cuttable: bool = True) -> AgentResult | None:
    """The session's result, or None when a `pause --now` cut it (the session was cancelled and awaited). A turn
    resolving a merge conflict is not `cuttable` (half a merge is no work to keep): it pauses at its node's end."""
    controls = ctx.controls() if cuttable else None
    running = asyncio.ensure_future(session)
    try:
        while controls is not None:
            done, _ = await asyncio.wait({running}, timeout=WATCH_S)
            if done:
                break
            control = await asyncio.to_thread(controls.control, ctx.feature_id, task_id)
            if control.paused is not None and control.paused.now and not running.done():
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running
                return None if running.cancelled() else running.result()
        return await running
    finally:
        if not running.done():  # the node itself was cancelled (a drain, a sibling attempt won): the session too
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running


async def kept(events: EventLog, state: TaskState, worktree_sha: Awaitable[str],
               spent: float) -> TaskState:
    """The cut session's work committed (`worktree_sha`) as the turn's head; the graph goes back to the player."""
    sha = await worktree_sha
    events("session_paused", state["task_id"], turn=state["turn"], role="player", sha=sha)
    return TaskState(head_sha=sha, paused_turn=state["turn"], cost_usd=spent, notes_delivered=[])


def transcript(path: Path, state: TaskState) -> Path:
    """A cut turn's next session writes a transcript of its own (named by the commit it starts on)."""
    if state.get("paused_turn") != state.get("turn"):
        return path
    return path.with_name(f"{path.stem}-after-{str(state.get('head_sha') or '')[:7]}{path.suffix}")


def told(state: TaskState) -> list[str]:
    """What the session running a cut turn again is told first."""
    return [RESUMED] if state.get("paused_turn") == state.get("turn") else []
