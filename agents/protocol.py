"""The agents protocol: the one seam between the graph and agent sessions (real SDK or scripted results)."""

from __future__ import annotations

from typing import Protocol

from agents.replanner import ReplanInput, run_replanner
from agents.roles import (
    CoachInput,
    PlayerInput,
    PrecheckVerdict,
    SessionSettings,
    run_coach,
    run_player,
    run_precheck,
)
from agents.selector import SelectorInput, run_selector
from agents.types import AgentResult


class Agents(Protocol):
    """What the task graph needs from the agent layer: one session per call, its result back.

    The graph never knows whether a session ran the real Claude Code CLI (`ClaudeAgents`) or returned a
    scripted result (`agents.testing.ScriptedAgents`); the in-process test tier swaps one for the other.
    """

    async def player(self, data: PlayerInput, settings: SessionSettings) -> AgentResult: ...

    async def coach(self, data: CoachInput, settings: SessionSettings) -> AgentResult: ...

    async def precheck(self, data: CoachInput, settings: SessionSettings) -> tuple[AgentResult, PrecheckVerdict]: ...

    async def replan(self, data: ReplanInput, settings: SessionSettings) -> AgentResult:
        """A planner session proposing the tasks that replace one that ran out of turns (its report: the
        submit_plan input, `{"tasks": [...]}`)."""
        ...

    async def select(self, data: SelectorInput, settings: SessionSettings) -> AgentResult:
        """A selector session picking among a task's tied candidate attempts (its report: the record_selection
        input, `{"chosen": "2", "reasons": [{"attempt": "1", "why_not": ...}]}`)."""
        ...


class ClaudeAgents:
    """Real Claude Agent SDK sessions (each call starts the Claude Code CLI in the task's worktree)."""

    async def player(self, data: PlayerInput, settings: SessionSettings) -> AgentResult:
        return await run_player(data, settings)

    async def coach(self, data: CoachInput, settings: SessionSettings) -> AgentResult:
        return await run_coach(data, settings)

    async def precheck(self, data: CoachInput, settings: SessionSettings) -> tuple[AgentResult, PrecheckVerdict]:
        return await run_precheck(data, settings)

    async def replan(self, data: ReplanInput, settings: SessionSettings) -> AgentResult:
        return await run_replanner(data, settings)

    async def select(self, data: SelectorInput, settings: SessionSettings) -> AgentResult:
        return await run_selector(data, settings)
