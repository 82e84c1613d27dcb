"""The replanner: a planner session that splits one task that ran out of turns (or stalled) into smaller tasks,
told what the failed turns taught (the coach's last feedback, the diff so far). It submits through submit_plan."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agents.prompts import load_prompt
from agents.request import run_session
from agents.roles import SessionSettings, TaskBrief, _bullets, _common, _request
from agents.types import AgentResult

DIFF_LIMIT = 20_000
"""The diff so far is information, not the new tasks' start: past this many characters it is cut."""


@dataclass
class ReplanInput:
    """What the planner is told about the task it replaces."""

    brief: TaskBrief
    round: int
    """1 for the first replan of this line of tasks."""
    reason: str
    """Why the task stopped (max turns, a stall)."""
    turns: int
    repo: Path
    """The main checkout (read-only for the planner)."""
    feedback: str = ""
    """The coach's last feedback, as the player got it."""
    diff: str = ""
    """The task's diff from its base when it stopped (discarded: the new tasks start from the feature head)."""
    dependencies: list[str] = field(default_factory=list)
    other_tasks: list[str] = field(default_factory=list)
    """`ID: name` of the plan's other tasks (the new ones may depend on them)."""
    transcript_path: Path | None = None


async def run_replanner(data: ReplanInput, settings: SessionSettings) -> AgentResult:
    """A read-only planner session over the repo that submits the replacement tasks through submit_plan."""
    system = load_prompt("replanner")
    diff = data.diff if len(data.diff) <= DIFF_LIMIT else data.diff[:DIFF_LIMIT] + "\n… (diff cut)"
    variables = _common(data.brief, data.round) | {
        "reason": data.reason,
        "turns": data.turns,
        "feedback": data.feedback or "(none recorded)",
        "diff": diff or "(no changes)",
        "dependencies": _bullets(data.dependencies, "- (none)"),
        "other_tasks": _bullets(data.other_tasks, "- (none)"),
    }
    return await run_session(_request(
        "planner", task_id=data.brief.task_id, turn=data.round, cwd=data.repo, system=system,
        prompt=load_prompt("replanner_turn").render(**variables), settings=settings,
        transcript_path=data.transcript_path,
    ))
