"""Agent layer: Claude Agent SDK sessions for the planner, player and coach roles. Never imports langgraph.

The public API is small: the `Agents` protocol and its SDK implementation `ClaudeAgents` (protocol.py),
`run_player`, `run_coach`, `run_precheck` (roles.py), the request/result types (types.py),
`reap_orphans` (reaper.py) and the error tree (errors.py).
"""

from agents.errors import AgentError, AgentSetupError, PromptError
from agents.protocol import Agents, ClaudeAgents
from agents.roles import (
    CoachInput,
    PlayerInput,
    PrecheckVerdict,
    SessionSettings,
    TaskBrief,
    format_feedback,
    run_coach,
    run_planner,
    run_player,
    run_precheck,
)
from agents.session import find_cli
from agents.types import AgentResult, SessionLimits, SessionStatus, ToolCall

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
    "SessionLimits",
    "SessionSettings",
    "SessionStatus",
    "TaskBrief",
    "ToolCall",
    "find_cli",
    "format_feedback",
    "run_coach",
    "run_planner",
    "run_player",
    "run_precheck",
]
