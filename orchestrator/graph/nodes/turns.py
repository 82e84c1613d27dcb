"""The one agent-turn helper shared by player, coach and pre-check: budget, reset, session, cost, violations."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from langgraph.errors import GraphDrained
from langgraph.runtime import Runtime

from agents import AgentResult, SessionSettings, UsageMeter
from orchestrator.causes import StopCause
from orchestrator.errors import InfrastructureError
from orchestrator.graph.context import RunContext
from orchestrator.graph.events import EventLog
from orchestrator.graph.nodes import budget_question
from orchestrator.graph.state import HistoryEntry, Stop, TaskState
from orchestrator.repo import sandbox_stubs, watch

FAILURE_REASONS = {
    "max_turns": "the agent session hit its max turns",
    "budget": "budget exhausted",
    "timeout": "session timeout",
    "idle_timeout": "idle timeout: no activity from the agent",
    "auth_error": "authentication failed (401/403): check ANTHROPIC_API_KEY or the Claude login",
    "api_error": "model API error after retries",
    "cli_error": "the Claude Code CLI failed",
    "cancelled": "cancelled",
    "interrupted": "the Claude Code CLI was stopped by a signal (Ctrl+C)",
    "usage_limit": "usage limit outlasted --max-wait",
}


def failure_reason(role: str, result: AgentResult) -> str:
    base = FAILURE_REASONS.get(result.status, result.status)
    detail = result.errors[-1] if result.errors else ""
    return f"{role}: {base}" + (f" ({detail})" if detail else "")


INFRASTRUCTURE = frozenset({"api_error", "auth_error", "cli_error", "idle_timeout", "cancelled", "usage_limit",
                            "interrupted"})
"""Session ends that say nothing about the work: the API, credentials, the CLI or the model went away."""


def hung_command_note(role: str, result: AgentResult) -> str | None:
    """A session the timeout ended while a command of its own still ran: the work hung, not the service.
    It is not retried; the next player turn is told which command hung (its work so far is kept)."""
    if result.status != "timeout" or not result.stuck_commands:
        return None
    commands = "; ".join(f"`{command}`" for command in result.stuck_commands)
    if role == "player":
        return (f"Your previous session was stopped by the session timeout while {commands} was still running;"
                " your work up to then is kept. Make every command end on its own (no test that waits forever,"
                " no server or watcher in the foreground, no interactive prompt), then finish the task.")
    return (f"The {role}'s review was stopped by the session timeout while {commands} was still running: the"
            " code or its tests hang. Make them finish on their own.")


def session_failure(role: str, result: AgentResult) -> Stop | None:
    """A session that did not end normally stops the task: a spent budget aborts; the loop's own failures
    (max turns, the agent's command hanging past the session timeout) fail it; an infrastructure failure
    raises, so the task ends as `error` and `resume` runs this turn again on the commit it started from."""
    if result.status in ("success", "question"):
        return None
    if result.status in INFRASTRUCTURE:
        raise InfrastructureError(failure_reason(role, result))
    return Stop(outcome="aborted" if result.status == "budget" else "failed", reason=failure_reason(role, result),
                cause=_session_cause(role, result))


def _session_cause(role: str, result: AgentResult) -> StopCause:
    """The cause of a session end that stops its task: max turns, budget or the session timeout."""
    if result.status == "max_turns":
        return "session_max_turns" if role == "player" else "review_max_turns"
    return "budget" if result.status == "budget" else "session_timeout"


@dataclass
class TurnSessions:
    """The sessions one node ran for one role (the coach may retry once) and what they add to state."""

    role: str
    turn: int
    results: list[AgentResult] = field(default_factory=list)

    @property
    def last(self) -> AgentResult:
        return self.results[-1]

    @property
    def cost_usd(self) -> float:
        return sum(result.cost_usd for result in self.results)

    def violations(self) -> list[str]:
        return [f"turn {self.turn} {self.role}: {call.error}"
                for result in self.results for call in result.tool_calls if not call.accepted]

    def history(self, status: str, sha: str, summary: str) -> HistoryEntry:
        tokens = sum(result.input_tokens + result.output_tokens for result in self.results)
        return HistoryEntry(turn=self.turn, role=self.role, status=status, cost_usd=round(self.cost_usd, 6),
                            tokens=tokens, sha=sha, summary=summary,
                            retry_cost_usd=round(sum(result.cost_usd for result in self.results[:-1]), 6),
                            input_tokens=sum(result.input_tokens for result in self.results),
                            cache_read_tokens=sum(result.cache_read_tokens for result in self.results))


_SANDBOXED_SESSIONS: dict[Path, tuple[int, list[Path]]] = {}
"""Per repo: how many sandboxed sessions run now, and the sandbox's stub paths that were absent before the first."""
_SANDBOXED_LOCK = threading.Lock()
"""Held by the bookkeeping (a thread, off the event loop): sessions starting and ending can't interleave, also
across the event loops of one server process."""


def _session_starts(repo: Path) -> None:
    with _SANDBOXED_LOCK:
        count, absent = _SANDBOXED_SESSIONS.get(repo, (0, []))
        _SANDBOXED_SESSIONS[repo] = (count + 1, absent if count else sandbox_stubs.absent_stubs(repo))


def _session_ends(repo: Path) -> None:
    with _SANDBOXED_LOCK:
        count, absent = _SANDBOXED_SESSIONS.pop(repo)
        if count > 1:
            _SANDBOXED_SESSIONS[repo] = (count - 1, absent)
        else:
            sandbox_stubs.remove_stubs(absent)


async def _sandboxed(repo: Path, call: Awaitable[AgentResult]) -> AgentResult:
    """A sandboxed session; when the last one of the repo ends, the empty mount points Claude Code's sandbox
    left in the shared git dir are removed (only those absent before; never while another session uses them)."""
    await asyncio.to_thread(_session_starts, repo)
    try:
        return await call
    finally:
        await asyncio.to_thread(_session_ends, repo)


def cut_short(result: AgentResult) -> bool:
    """A session that ended without its work: no report, question or blocker, or not normally."""
    if result.status not in ("success", "question"):
        return True
    return result.report is None and result.question is None and not result.blocker


class AgentTurn:
    """Runs a role's sessions for one turn of one task, with every guard the graph owes each session."""

    def __init__(self, state: TaskState, runtime: Runtime[RunContext], role: str) -> None:
        self.state = state
        self.ctx = runtime.context
        self.runtime = runtime
        self.events: EventLog = self.ctx.events(runtime)
        self.role = role
        self.task_id = state["task_id"]
        self.attempt = int(state.get("attempt") or 0)
        """One of the task's attempts (k > 0), or 0: the task's only loop."""
        self.spend_key = f"{self.task_id}.a{self.attempt}" if self.attempt else self.task_id
        """Where the run's spend counts this loop: each attempt its own, summed (graph/attempts.py)."""
        self.sessions = TurnSessions(role, state["turn"])
        self.user_state_changes: list[str] = []
        """Changes of the user's seen around an unsandboxed session: they fail the task (nothing is reverted)."""
        self.user_changes: list[str] = []
        """Changes of the user's seen around a sandboxed session: the user's own work, kept and noted."""
        self.cut_usd = 0.0
        """What a session cut short spent until then (the CLI's result at the interrupt): a `pause --now` turn's
        node goes on after it and checkpoints it; a node cancelled outright leaves it `unsaved`."""
        self.ctx.spend.record(self.spend_key, self.spent)

    @property
    def worktree(self) -> Path:
        return Path(self.state["worktree"])

    @property
    def spent(self) -> float:
        """The task's spend including this turn's sessions so far."""
        return float(self.state.get("cost_usd", 0.0)) + self.sessions.cost_usd + self.cut_usd

    @property
    def task_spent(self) -> float:
        """What the task spent: this loop's spend, and its sibling attempts' as they recorded it (the task's
        budget covers all its attempts)."""
        siblings = f"{self.task_id}.a"
        return self.spent + sum(usd for key, usd in self.ctx.spend.by_task.items()
                                if key.startswith(siblings) and key != self.spend_key)

    def transcript(self) -> Path:
        attempt = f"-{len(self.sessions.results) + 1}" if self.sessions.results else ""
        folder = self.ctx.runs_dir(self.task_id, max(self.attempt, 1))
        return folder / f"turn-{self.state['turn']}-{self.role}{attempt}.jsonl"

    async def budget_stop(self) -> Stop | None:
        """Checked at an agent node's start, before its session: an exhausted budget never starts one; an
        interactive run asks whether to raise it first (graph/nodes/budget_question.py)."""
        return await budget_question.stop_or_raise(self.ctx, self.events, self.task_id, self.task_spent,
                                                   self.sessions.turn)

    def out_of_budget(self) -> Stop | None:
        """Checked before a node's further sessions (a retry): an exhausted budget never starts one."""
        exhausted = self.ctx.budget_exhausted(self.task_id, self.task_spent)
        return Stop(outcome="aborted", reason=exhausted, cause="budget") if exhausted else None

    async def run(self, call: Callable[[SessionSettings], Awaitable[AgentResult]]) -> AgentResult:
        """One session on the worktree exactly as checkpointed (a resumed node starts where it started; a
        worktree that went missing is recreated first), with what the user owns watched around it. Under the
        sandbox the agent can't write any of it, so a change is the user's: kept and noted. Without it the change
        can't be told from the agent's: it fails the task with the evidence. Nothing is ever reverted."""
        repo = self.ctx.repo
        await self.ctx.ensure_worktree(self.worktree, self.state["branch"], self.state["head_sha"])
        await repo.reset(self.worktree, self.state["head_sha"])
        settings = await asyncio.to_thread(partial(self.ctx.session_settings, attempt=self.attempt), self.role,
                                           self.task_id, self.task_spent, self.events)  # env: from the venvs' files
        settings.meter = meter = UsageMeter()
        before = await watch.take(repo)
        try:
            sandboxed = settings.sandbox_writable is not None
            result = await (_sandboxed(repo.root, call(settings)) if sandboxed else call(settings))
        except asyncio.CancelledError:  # a sibling attempt won, a `pause --now`: what its sessions spent counts
            self.cut_usd += meter.cost_usd
            self.ctx.spend.record(self.spend_key, self.spent)
            self.ctx.spend.unsaved[self.spend_key] = self.sessions.cost_usd + self.cut_usd  # if the node never ends
            raise
        finally:
            changes = await watch.since(repo, before)
        turn = self.sessions.turn
        if changes and settings.sandbox_writable is not None:
            self.user_changes += [f"during turn {turn} {self.role}: {change}" for change in changes]
            self.events("user_state_changed", self.task_id, turn=turn, role=self.role, changes=changes,
                        during=f"{self.role} session", reverted=False)
        elif changes:
            self.user_state_changes += changes
            self.events("repo_tampering", self.task_id, turn=turn, role=self.role, changes=changes, reverted=False)
        if refused := result.sandbox_refusals:
            self.events("sandbox_refused", self.task_id, turn=turn, role=self.role, refused=refused)
        if self.runtime.drain_requested and cut_short(result):
            # A person stopped the run (Ctrl+C reaches the agent's CLI too: the terminal signals its whole process
            # group): the session's end is theirs, not the agent's. Nothing of it is judged or counted as a turn;
            # the node runs again on resume, from the commit it started on.
            self.events("session_interrupted", self.task_id, turn=turn, role=self.role, cost_usd=result.cost_usd)
            raise GraphDrained("interrupted by a person while a session ran")
        self.sessions.results.append(result)
        self.ctx.spend.record(self.spend_key, self.spent)
        if budget_question.unfinished_at_cap(self.ctx, self.task_id, self.spent, result):
            self.events("budget_reached", self.task_id, turn=turn, role=self.role, cost_usd=result.cost_usd)
        return result

    def tampering(self) -> Stop | None:
        """Without the sandbox, a session around which the user's refs, HEAD, index, config, hooks, venv or
        node_modules changed fails its task, with the evidence (kept as it is: it may be the user's own work)."""
        if not self.user_state_changes:
            return None
        return Stop(outcome="failed", reason=f"your repository changed outside autobuild/ during an unsandboxed"
                                             f" {self.role} session (nothing reverted): "
                                             + "; ".join(self.user_state_changes), cause="tampering")

    def record_violations(self, extra: Sequence[str] = ()) -> list[str]:
        violations = [*self.sessions.violations(), *extra]
        for violation in violations:
            self.events("contract_violation", self.task_id, turn=self.sessions.turn, detail=violation)
        return violations
