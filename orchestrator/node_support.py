"""Shared by the task subgraph's node classes: failure wording, session summaries, the budget guard."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents import AgentResult
from orchestrator.context import RunContext
from orchestrator.state import TaskState

FAILURE_REASONS = {
    "max_turns": "the agent session hit its max turns",
    "budget": "budget exhausted",
    "timeout": "session timeout",
    "idle_timeout": "idle timeout: no activity from the agent",
    "auth_error": "authentication failed (401/403): check ANTHROPIC_API_KEY or the Claude login",
    "api_error": "model API error after retries",
    "cli_error": "the Claude Code CLI failed",
    "cancelled": "cancelled",
}


def failure_reason(role: str, result: AgentResult) -> str:
    base = FAILURE_REASONS.get(result.status, result.status)
    detail = result.errors[-1] if result.errors else ""
    return f"{role}: {base}" + (f" ({detail})" if detail else "")


def session_summary(result: AgentResult) -> dict[str, Any]:
    """The small part of a session kept in graph state (transcripts go to files)."""
    return {
        "status": result.status,
        "report": result.report,
        "files_modified": result.files_modified,
        "final_text": result.final_text[-2000:],
        "cost_usd": result.cost_usd,
        "tokens": result.input_tokens + result.output_tokens,
        "turns": result.num_turns,
        "duration_s": result.duration_s,
        "session_id": result.session_id,
        "errors": result.errors[-5:],
        "permission_denials": result.permission_denials[-10:],
        "attempts": result.attempts,
    }



class NodeBase:
    """The run context plus what every agent node needs before and around its session."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx

    def _transcript(self, state: TaskState, role: str) -> Path:
        return self.ctx.runs_dir(state["task_id"]) / f"turn-{state['turn']}-{role}.jsonl"

    def _out_of_budget(self, state: TaskState) -> dict[str, Any] | None:
        """Checked before every session: an exhausted budget never starts one."""
        exhausted = self.ctx.budget_exhausted(state["task_id"], float(state.get("cost_usd", 0.0)))
        return {"outcome": "aborted", "reason": exhausted} if exhausted else None
