"""Scripted agent results behind the `Agents` protocol: the in-process test tier's fake at the agent seam.

A script maps (role, task, turn) to what that session does: files it writes into the worktree, the report it
sends (report_progress / record_decision input), its status, cost, blocker, question or an exception. The
graph, git, the gate and the checkpointer are all real; only the model's work is scripted.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.markers import Blocker
from agents.replanner import ReplanInput
from agents.roles import CoachInput, PlayerInput, PrecheckVerdict, SessionSettings
from agents.selector import SelectorInput
from agents.types import AgentResult, SessionStatus, ToolCall, UsageMeter

AgentInput = PlayerInput | CoachInput | ReplanInput | SelectorInput
_session_ids = itertools.count(1)


@dataclass
class Turn:
    """What one scripted session does."""

    files: dict[str, str | None] = field(default_factory=dict)
    """Written into the worktree before the session ends (None deletes the file)."""
    report: dict[str, Any] | None = None
    """report_progress input (player) or record_decision input (coach)."""
    status: SessionStatus = "success"
    cost_usd: float = 0.01
    cache_read_tokens: int = 0
    """Of the session's 100 input tokens plus these: the ones read from the prompt cache."""
    text: str = "done"
    blocker: dict[str, str] | None = None
    question: str | None = None
    options: list[str] = field(default_factory=list)
    """The question's options (AskUserQuestion's labels)."""
    plausible: bool = True
    """The pre-check's verdict."""
    delay_s: float = 0.0
    spent_when_cancelled: float | None = None
    """What the session had spent when cancelled during its delay (the CLI's result at the interrupt says it, and
    the settings' meter is told, as a real session's is); None: its whole cost."""
    raises: BaseException | None = None
    rejected_calls: list[str] = field(default_factory=list)
    """Our tools refusing a call (a contract violation), by error message."""
    stuck_commands: list[str] = field(default_factory=list)
    """With status "timeout": the commands still running when the session timed out."""
    effect: Callable[[Path], None] | None = None
    """Anything else the session does in its worktree (e.g. git commands an agent should never run)."""
    tool_calls: int = 1
    """Tool calls the session makes after its effect: a player's `pending_notes` is asked after each."""
    hangs_s: float = 0.0
    """Sleeps this long after its files and effect (a long tool call): a session cut meanwhile leaves them on disk."""
    dies: BaseException | None = None
    """Raised after the session's tool calls (a session that died mid-way, its hook's notes already handed)."""


def writes(files: Mapping[str, str | None], notes: str = "done", **extra: Any) -> Turn:
    """A player turn that writes files and reports them."""
    report = {"files_modified": list(files), "tests_written": [], "implementation_notes": notes}
    return Turn(files=dict(files), report=report, **extra)


def approve(rationale: str = "requirements met, tests pass", tests_verified: dict[str, int] | None = None, *,
            accepts: Mapping[str, str] | None = None) -> Turn:
    """A coach approving; `accepts` maps a base test (id or file) whose change it accepts to the reason."""
    report: dict[str, Any] = {"decision": "approve", "rationale": rationale, "feedback_items": []}
    if tests_verified is not None:
        report["tests_verified"] = tests_verified
    if accepts is not None:
        report["test_changes_accepted"] = [{"test": test, "reason": reason} for test, reason in accepts.items()]
    return Turn(report=report)


def feedback(*items: tuple[str, int | None, str], rationale: str = "changes needed") -> Turn:
    listed = [{"file": file, "line": line, "issue": issue} for file, line, issue in items]
    return Turn(report={"decision": "feedback", "rationale": rationale, "feedback_items": listed})


def replacement(*tasks: dict[str, Any], cost_usd: float = 0.02) -> Turn:
    """A replanner session submitting `tasks` (local ids, dependencies among them or on the plan's tasks)."""
    return Turn(report={"tasks": list(tasks)}, cost_usd=cost_usd)


def selects(chosen: int, cost_usd: float = 0.02, **why_not: str) -> Turn:
    """A selector session picking attempt `chosen`; `why_not` gives each other candidate's reason (`a1="..."`)."""
    reasons = [{"attempt": name.removeprefix("a"), "why_not": why} for name, why in why_not.items()]
    return Turn(report={"chosen": str(chosen), "reasons": reasons}, cost_usd=cost_usd)


def blocked(description: str, action: str = "a human must decide", resume: str = "continue", **kinds: str) -> Turn:
    """A player's blocker; `kinds` adds its optional lines (kind, test, requirement)."""
    block = Blocker(description, action, resume, **kinds)
    fields = {"description": description, "action": action, "resume": resume, **kinds}
    return Turn(blocker=fields | {"hash": block.hash}, text=f"<blocker>{description}</blocker>")


Script = Turn | list[Turn] | Callable[[AgentInput], Turn]


@dataclass
class Call:
    """One session the graph asked for."""

    role: str
    task: str
    turn: int
    input: AgentInput
    attempt: int = 1
    """Which of the task's attempts asked (1 when there is one)."""
    model: str | None = None
    """The model the session was given (its settings')."""
    boundary_notes: list[str] = field(default_factory=list)
    """What the session's tool-boundary hook handed it (a player's `pending_notes`, asked after each tool call)."""


async def _metered(turn: Turn, meter: UsageMeter | None) -> None:
    """The session's delay; its meter told what it spent, as a real session's is: when it ends, or what it had
    spent when cancelled."""
    spent = turn.cost_usd
    try:
        if turn.delay_s:
            await asyncio.sleep(turn.delay_s)
    except asyncio.CancelledError:
        spent = turn.cost_usd if turn.spent_when_cancelled is None else turn.spent_when_cancelled
        raise
    finally:
        if meter is not None:
            meter.add(spent)


class ScriptedAgents:
    """Agents whose sessions play a script. Keys: (role, task, turn), (role, task) or role; most specific wins.
    One attempt of several is keyed by `TASK-001.a2` before its task's keys (`(role, "TASK-001.a2", turn)`).

    A list plays one entry per call of that key (the last repeats); a callable decides from the session input.
    A session with nothing scripted ends without a report (an incomplete turn).
    """

    def __init__(self, script: Mapping[Any, Script]) -> None:
        self.script: dict[Any, Script] = dict(script)
        self.calls: list[Call] = []
        self._used: dict[Any, int] = {}

    def _turn(self, role: str, data: AgentInput, model: str | None = None) -> Turn:
        task, turn = data.brief.task_id, data.round if isinstance(data, ReplanInput) else data.turn
        attempt = getattr(data, "attempt", 1)
        self.calls.append(Call(role, task, turn, data, attempt, model))
        one = f"{task}.a{attempt}"
        for key in ((role, one, turn), (role, one), (role, task, turn), (role, task), role):
            if key in self.script:
                entry = self.script[key]
                if isinstance(entry, list):
                    index = self._used.get(key, 0)
                    self._used[key] = index + 1
                    return entry[min(index, len(entry) - 1)]
                return entry(data) if callable(entry) else entry
        return Turn(report=None, text="nothing scripted")

    async def _play(self, role: str, data: AgentInput, settings: SessionSettings | None = None
                    ) -> tuple[AgentResult, Turn]:
        turn = self._turn(role, data, settings.model if settings is not None else None)
        await _metered(turn, settings.meter if settings is not None else None)
        if turn.raises is not None:
            raise turn.raises
        for path, content in turn.files.items():
            assert isinstance(data, (PlayerInput, CoachInput)), "only a task's sessions write files"
            target = data.worktree / path
            if content is None:
                target.unlink(missing_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(content)
        if turn.effect is not None:
            turn.effect(data.repo if isinstance(data, (ReplanInput, SelectorInput)) else data.worktree)
        if turn.hangs_s:
            await asyncio.sleep(turn.hangs_s)
        if isinstance(data, PlayerInput) and data.pending_notes is not None:
            for _ in range(turn.tool_calls):  # the hook the real session runs after each tool call
                self.calls[-1].boundary_notes.extend(await data.pending_notes())
        if turn.dies is not None:
            raise turn.dies
        tool = {"player": "report_progress", "coach": "record_decision", "replan": "submit_plan",
                "selector": "record_selection"}.get(role, "")
        calls = [ToolCall(tool, dict(turn.report), True)] if turn.report is not None else []
        calls += [ToolCall(tool, {}, False, error) for error in turn.rejected_calls]
        question = None
        if turn.question is not None and turn.question not in getattr(data, "answers", {}):
            question = {"question": turn.question, "options": list(turn.options)}
        number = data.round if isinstance(data, ReplanInput) else data.turn
        digest = hashlib.md5(f"{role}{data.brief.task_id}{number}".encode(), usedforsecurity=False).hexdigest()
        result = AgentResult(
            role=role, status="question" if question else turn.status, report=turn.report, tool_calls=calls,
            files_modified=list(turn.files), final_text=turn.text, cost_usd=turn.cost_usd,
            input_tokens=100 + turn.cache_read_tokens, cache_read_tokens=turn.cache_read_tokens,
            output_tokens=50, num_turns=1, session_id=f"scripted-{next(_session_ids)}-{digest[:6]}",
            blocker=turn.blocker, question=question, stuck_commands=list(turn.stuck_commands),
        )
        return result, turn

    async def player(self, data: PlayerInput, settings: SessionSettings) -> AgentResult:
        return (await self._play("player", data, settings))[0]

    async def coach(self, data: CoachInput, settings: SessionSettings) -> AgentResult:
        return (await self._play("coach", data, settings))[0]

    async def precheck(self, data: CoachInput, settings: SessionSettings) -> tuple[AgentResult, PrecheckVerdict]:
        result, turn = await self._play("precheck", data)
        return result, PrecheckVerdict(turn.plausible, "" if turn.plausible else turn.text)

    async def replan(self, data: ReplanInput, settings: SessionSettings) -> AgentResult:
        """Scripted under the role "replan", keyed by the replaced task and the replan round."""
        return (await self._play("replan", data))[0]

    async def select(self, data: SelectorInput, settings: SessionSettings) -> AgentResult:
        """Scripted under the role "selector", keyed by the task (turn 1)."""
        return (await self._play("selector", data, settings))[0]

    def prompts_of(self, role: str, task: str) -> list[AgentInput]:
        return [call.input for call in self.calls if call.role == role and call.task == task]
