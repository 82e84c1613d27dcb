"""Plain result/request types of the agent layer (no SDK types leak out of agents/)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

SessionStatus = Literal[
    "success",  # the session ended normally (completion is judged by the caller from report + artifacts)
    "max_turns",
    "budget",
    "timeout",
    "idle_timeout",
    "api_error",
    "auth_error",
    "cli_error",
    "cancelled",
    "interrupted",  # a signal stopped the CLI (Ctrl+C reaches its whole process group): never retried
    "usage_limit",  # the run's usage-limit pause would outlast its max wait: the session never started
    "question",  # the agent asked a human a question that has no answer yet; the session was stopped
]


@dataclass
class ToolCall:
    """One call the agent made to one of our autobuild tools."""

    name: str
    input: dict[str, Any]
    accepted: bool
    error: str = ""


@dataclass
class SessionLimits:
    """Limits of one session."""

    max_turns: int = 60
    session_timeout_s: float = 1800.0
    idle_timeout_s: float = 600.0
    max_budget_usd: float | None = None


@dataclass
class AgentResult:
    """What one agent session did: status, its structured report, cost and the evidence."""

    role: str
    status: SessionStatus
    report: dict[str, Any] | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    files_modified: list[str] = field(default_factory=list)
    final_text: str = ""
    cost_usd: float = 0.0
    input_tokens: int = 0
    """Every input token the session's model calls read: uncached, written to the cache and read from it."""
    output_tokens: int = 0
    cache_read_tokens: int = 0
    """The part of `input_tokens` read from the prompt cache (billed at a tenth of an input token)."""
    num_turns: int = 0
    duration_s: float = 0.0
    session_id: str = ""
    errors: list[str] = field(default_factory=list)
    """Human text of what went wrong, for reports: never parsed (decisions read the typed fields below)."""
    api_status: int | None = None
    """The HTTP status of the first API error the session saw (a CLI retry notice, or the error it ended on)."""
    terminal_reason: str | None = None
    """Why the CLI ended a session in error, as it said it (its `terminal_reason`, e.g. "api_error")."""
    permission_denials: list[str] = field(default_factory=list)
    sandbox_refusals: list[str] = field(default_factory=list)
    """What the Bash sandbox refused (writes outside the worktree), a line each; also in permission_denials."""
    promise_complete: bool = False
    blocker: dict[str, str] | None = None
    question: dict[str, Any] | None = None
    attempts: int = 1
    limit_resets_at: float | None = None
    """When a rate or usage limit this session hit resets (epoch seconds), if the API or the CLI said."""
    stuck_commands: list[str] = field(default_factory=list)
    """Tool calls still running when a timeout ended the session (e.g. "Bash: pytest -q"): the work hung."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class UsageMeter:
    """What one call's sessions spent, added as each session ends, cancelled ones too: a cancelled session's
    usage so far (the CLI's result at the interrupt) reaches the caller here, where no result is returned."""

    cost_usd: float = 0.0
    sessions: int = 0

    def add(self, cost_usd: float) -> None:
        self.cost_usd = round(self.cost_usd + cost_usd, 6)
        self.sessions += 1
