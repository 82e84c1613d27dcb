"""Agent layer: Claude Agent SDK sessions for the planner, player and coach roles. Never imports langgraph.

The public API is small: the `Agents` protocol and its SDK implementation `ClaudeAgents` (protocol.py),
`run_player`, `run_coach`, `run_precheck` (roles.py), the request/result types (types.py),
`reap_orphans` (reaper.py) and the error tree (errors.py).

Names are imported on first use (PEP 562), so `import agents.limits` or a read-only command never pays for
the Agent SDK.

Its modules:

protocol.py: the `Agents` protocol: the one seam between the graph and agent sessions.
roles.py: the player and coach roles: what each is told, its tools, its session.
replanner.py: the replanner: a planner session that splits one task into smaller ones.
selector.py: the selector: a fresh read-only coach session that picks among a task's tied attempts.
request.py: what one session is asked to do, and where its progress events go.
types.py: plain result and request types (no SDK type leaks out of agents/).
session.py: one session on the real Claude Code CLI: options, timeouts, transcript, cleanup.
cli_binary.py: where the Claude Code CLI is, found without importing the SDK, and the wrapper that starts it.
stream.py: the CLI's message stream folded into an `AgentResult`, mirrored to the transcript.
interrupts.py: a signal that stopped the CLI (Ctrl+C), told apart from a CLI failure and kept quiet.
retry.py: which session failures are worth another attempt, and the one tenacity policy.
limits.py: the run-wide usage-limit gate shared by every session.
reaper.py: every process a session started, found by its tag and killed.
tools.py: the in-process `autobuild` MCP server, per role.
policy.py: the permission policy (a PreToolUse hook): stay in the worktree, no push.
notes_hook.py: a supervisor's notes into a running session at its next tool boundary (a PostToolUse hook).
questions.py: AskUserQuestion answered in the SDK's format, or recorded and stopped.
markers.py: completion and blocker markers in an agent's final text.
prompts.py: markdown prompt templates loaded by name and rendered strictly.
conventions.py: the target repo's CLAUDE.md and permissions, as Claude Code gives them.
sandbox.py: Claude Code's own Bash sandbox for a session in a task's worktree.
bounded.py: reading a file agents can write: at most up to a size, never blocking on a FIFO.
credentials.py: is there a key or a login, and does the endpoint answer? Spends nothing.
tracing.py: LangSmith tracing of agent sessions, when tracing is on.
errors.py: the agent layer's error tree.
testing/: the scripted model server and scenarios (test and demo infrastructure).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agents.cli_binary import find_cli
    from agents.errors import AgentError, AgentSetupError, PromptError
    from agents.protocol import Agents, ClaudeAgents
    from agents.replanner import ReplanInput
    from agents.roles import (
        CoachInput,
        PlayerInput,
        PrecheckVerdict,
        SessionSettings,
        TaskBrief,
        check_model,
        format_feedback,
        run_coach,
        run_planner,
        run_player,
        run_precheck,
    )
    from agents.selector import SelectorCandidate, SelectorInput
    from agents.types import AgentResult, SessionLimits, SessionStatus, ToolCall, UsageMeter

_EXPORTS = {
    "AgentError": "agents.errors",
    "AgentSetupError": "agents.errors",
    "PromptError": "agents.errors",
    "Agents": "agents.protocol",
    "ClaudeAgents": "agents.protocol",
    "ReplanInput": "agents.replanner",
    "SelectorCandidate": "agents.selector",
    "SelectorInput": "agents.selector",
    "CoachInput": "agents.roles",
    "PlayerInput": "agents.roles",
    "PrecheckVerdict": "agents.roles",
    "SessionSettings": "agents.roles",
    "TaskBrief": "agents.roles",
    "check_model": "agents.roles",
    "format_feedback": "agents.roles",
    "run_coach": "agents.roles",
    "run_planner": "agents.roles",
    "run_player": "agents.roles",
    "run_precheck": "agents.roles",
    "find_cli": "agents.cli_binary",
    "AgentResult": "agents.types",
    "SessionLimits": "agents.types",
    "SessionStatus": "agents.types",
    "ToolCall": "agents.types",
    "UsageMeter": "agents.types",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agents' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "AgentError",
    "AgentResult",
    "AgentSetupError",
    "Agents",
    "ClaudeAgents",
    "CoachInput",
    "PlayerInput",
    "PrecheckVerdict",
    "PromptError",
    "ReplanInput",
    "SelectorCandidate",
    "SelectorInput",
    "SessionLimits",
    "SessionSettings",
    "SessionStatus",
    "TaskBrief",
    "ToolCall",
    "UsageMeter",
    "check_model",
    "find_cli",
    "format_feedback",
    "run_coach",
    "run_planner",
    "run_player",
    "run_precheck",
]
