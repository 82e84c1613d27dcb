"""The player and coach roles: what each is told, which tools it gets, and its session."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.conventions import Conventions, load_conventions
from agents.limits import UsageLimitGate
from agents.prompts import PromptTemplate, load_prompt
from agents.request import EventSink, SessionRequest, run_session
from agents.types import AgentResult, SessionLimits, UsageMeter


@dataclass
class SessionSettings:
    """Per-run settings shared by every session of a role."""

    model: str | None = None
    limits: SessionLimits = field(default_factory=SessionLimits)
    cli_path: str | None = None
    retry_attempts: int = 3
    retry_max_wait_s: float = 60.0
    on_event: EventSink | None = None
    limit_gate: UsageLimitGate | None = None
    """The run's usage-limit gate: every session waits on it before it starts and reports limits to it."""
    repo_hooks: bool = False
    """Run the project's own `.claude/settings.json` hooks in sessions (off unless the user asks)."""
    project_root: Path | None = None
    """Where the repo's conventions are read (its main checkout): never the task's worktree, which the player
    writes (a CLAUDE.md it wrote must not instruct the coach). None: the session's own folder."""
    trace_metadata: dict[str, str] = field(default_factory=dict)
    """Metadata of the sessions' LangSmith runs when tracing is on (e.g. the feature id)."""
    sandbox_writable: tuple[Path, ...] | None = None
    """Run Bash in Claude Code's sandbox, writable beyond the worktree only here (the run's env, caches);
    None: no sandbox (bubblewrap can't run here)."""
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment of the session's commands (the run's tool caches)."""
    unreadable: tuple[Path, ...] = ()
    """Files and folders no tool and no command of the session may read (hidden acceptance tests)."""
    meter: UsageMeter | None = None
    """Told what each session of the call spent as it ends, a cancelled one too (None: no one asks)."""


@dataclass
class TaskBrief:
    """What both roles know about the task."""

    feature_name: str
    task_id: str
    task_name: str
    requirements: list[str]
    acceptance_criteria: list[str]
    verify: str | None
    file_scope: list[str] = field(default_factory=list)
    frozen_tests: list[str] = field(default_factory=list)
    hidden_tests: list[str] = field(default_factory=list)
    """Acceptance tests the agents can't read: only the gate runs them, failures come back redacted."""
    answers: dict[str, str] = field(default_factory=dict)
    """A person's answers to the task's questions, by question (in this run or before it, or to the task a replan
    replaced): part of the task for every later turn, run and replacement, never asked again."""


@dataclass
class PlayerInput:
    """One player turn: the brief plus the coach's feedback items, verbatim."""

    brief: TaskBrief
    turn: int
    max_turns: int
    worktree: Path
    feedback: list[dict[str, Any]] = field(default_factory=list)
    feedback_notes: list[str] = field(default_factory=list)
    answers: dict[str, str] = field(default_factory=dict)
    transcript_path: Path | None = None
    attempt: int = 1
    """Which of the task's independent attempts this turn belongs to (1 when there is one)."""
    approach: str = ""
    """The approach hint of this attempt: a prompt's name (`attempt_smallest`, …); empty: none (one attempt)."""
    supervisor_notes: list[str] = field(default_factory=list)
    """Notes from the person supervising the run, each as the prompt says it (orchestrator/graph/steering.py)."""
    pending_notes: Callable[[], Awaitable[list[str]]] | None = None
    """Asked after every tool call of the session: notes sent since it started, handed to the model at once
    (agents/notes_hook.py); None: only `supervisor_notes`, at the start."""


@dataclass
class CoachInput:
    """One coach turn: the brief, the player's report and the diff of the task branch."""

    brief: TaskBrief
    turn: int
    worktree: Path
    player_report: dict[str, Any] | None
    diff: str
    transcript_path: Path | None = None
    conflict: str = ""
    """Whether this turn resolved a merge conflict with the feature head, and where (empty: say nothing)."""
    test_changes: str = ""
    """The base's test files this task changed or deleted, with their diff (empty: none)."""
    attempt: int = 1
    """Which of the task's independent attempts it reviews (1 when there is one)."""
    supervisor_notes: list[str] = field(default_factory=list)
    """The notes the person supervising the run sent the player during this turn: the coach reads them as what
    the player was told, never as an acceptance of anything."""


def _bullets(items: list[str], empty: str) -> str:
    return "\n".join(f"- {item}" for item in items) if items else empty


def format_feedback(items: list[dict[str, Any]], notes: list[str]) -> str:
    """Feedback items rendered one per line: `file:line: issue` (verbatim from the coach)."""
    lines = []
    for item in items:
        where = str(item.get("file") or "")
        if item.get("line") not in (None, ""):
            where += f":{item['line']}"
        lines.append(f"- {where + ': ' if where else ''}{item.get('issue', '')}")
    lines.extend(f"- {note}" for note in notes)
    return "\n".join(lines) if lines else "None: this is the first turn."


def _common(brief: TaskBrief, turn: int) -> dict[str, object]:
    return {
        "feature_name": brief.feature_name,
        "task_id": brief.task_id,
        "task_name": brief.task_name,
        "turn": turn,
        "requirements": _bullets(brief.requirements, "- (none given beyond the task name)"),
        "acceptance_criteria": _bullets(brief.acceptance_criteria, "- (none given)"),
        "verify": brief.verify or "(no objective check configured)",
        "hidden_tests": _bullets(brief.hidden_tests, "None."),
        "answers": _answers(brief.answers),
    }


def _answers(answers: dict[str, str]) -> str:
    return "\n".join(f"- Q: {q}\n  A: {a}" for q, a in answers.items()) or "None."


async def run_player(data: PlayerInput, settings: SessionSettings) -> AgentResult:
    """Run one player session in the task's worktree."""
    system = load_prompt("player")
    answers = {**data.brief.answers, **data.answers}  # an AskUserQuestion already answered is answered again
    variables = _common(data.brief, data.turn) | {
        "max_turns": data.max_turns,
        "feedback": "\n\n".join([format_feedback(data.feedback, data.feedback_notes), *data.supervisor_notes]),
        "file_scope": _bullets(data.brief.file_scope, "Any file in the worktree except .autobuild/."),
        "frozen_tests": _bullets(data.brief.frozen_tests, "None."),
        "answers": _answers(answers),
        "approach": "\n" + load_prompt(data.approach).render() if data.approach else "",
    }
    return await run_session(
        _request(
            "player", task_id=data.brief.task_id, turn=data.turn, cwd=data.worktree, system=system,
            prompt=load_prompt("player_turn").render(**variables), settings=settings,
            transcript_path=data.transcript_path, file_scope=data.brief.file_scope, frozen=data.brief.frozen_tests,
            answers=answers, pending_notes=data.pending_notes,
        )
    )


async def run_coach(data: CoachInput, settings: SessionSettings) -> AgentResult:
    """Run one read-only coach session in the task's worktree."""
    system = load_prompt("coach")
    report = json.dumps(data.player_report, indent=2) if data.player_report else "(the player sent no report)"
    variables = _common(data.brief, data.turn) | {"player_report": report, "diff": data.diff or "(empty diff)",
                                                   "conflict": data.conflict or "No: an ordinary turn.",
                                                   "test_changes": data.test_changes or "None: no test file of the"
                                                   " base was changed or deleted.",
                                                   "supervisor_notes": _bullets(data.supervisor_notes, "None.")}
    return await run_session(
        _request(
            "coach", task_id=data.brief.task_id, turn=data.turn, cwd=data.worktree, system=system,
            prompt=load_prompt("coach_turn").render(**variables), settings=settings,
            transcript_path=data.transcript_path,
        )
    )


async def run_planner(
    description: str, *, feature_id: str, repo: Path, attempt: int, errors: list[str], settings: SessionSettings,
    transcript_path: Path | None = None,
) -> AgentResult:
    """A read-only planner session over the repo that submits a plan through submit_plan."""
    system = load_prompt("planner")
    prompt = load_prompt("planner_turn").render(
        feature_id=feature_id, description=description,
        errors="\n".join(f"- {e}" for e in errors) or "None: this is your first submission.",
    )
    return await run_session(
        _request("planner", task_id=feature_id, turn=attempt, cwd=repo, system=system, prompt=prompt,
                 settings=settings, transcript_path=transcript_path)
    )


@dataclass
class PrecheckVerdict:
    """A pre-check's answer: plausible or not, and why."""

    plausible: bool
    reason: str


def parse_precheck(text: str) -> PrecheckVerdict:
    """`YES` / `NO: reason` on the first non-empty line; anything else counts as plausible (the coach decides)."""
    for line in text.splitlines():
        stripped = line.strip().strip("`*")
        if not stripped:
            continue
        head, _, reason = stripped.partition(":")
        if head.strip().upper() == "NO":
            return PrecheckVerdict(False, reason.strip() or "the pre-check found the work implausible")
        return PrecheckVerdict(True, "")
    return PrecheckVerdict(True, "")


async def run_precheck(data: CoachInput, settings: SessionSettings) -> tuple[AgentResult, PrecheckVerdict]:
    """A one-shot, tool-less session on a fast model: does the work plausibly meet the requirements?"""
    system = load_prompt("precheck")
    report = json.dumps(data.player_report, indent=2) if data.player_report else "(the player sent no report)"
    variables = _common(data.brief, data.turn) | {"player_report": report, "diff": data.diff or "(empty diff)"}
    result = await run_session(
        _request(
            "precheck", task_id=data.brief.task_id, turn=data.turn, cwd=data.worktree, system=system,
            prompt=load_prompt("precheck_turn").render(**variables), settings=settings,
            transcript_path=data.transcript_path,
        )
    )
    return result, parse_precheck(result.final_text)


async def check_model(cwd: Path, settings: SessionSettings) -> AgentResult:
    """`doctor`'s live check: one tool-less, one-turn session; does a model answer with these credentials?"""
    system = load_prompt("doctor")
    return await run_session(_request("doctor", task_id="doctor", turn=1, cwd=cwd, system=system,
                                      prompt="Reply with OK.", settings=settings, transcript_path=None))


def _request(
    role: str, *, task_id: str, turn: int, cwd: Path, system: PromptTemplate, prompt: str,
    settings: SessionSettings, transcript_path: Path | None, **extra: Any,
) -> SessionRequest:
    """One session of a role: its system prompt, tools and limits from the prompt's front-matter, plus the
    repo's own conventions (CLAUDE.md, denied tools) as Claude Code would give them."""
    conventions = load_conventions(settings.project_root or cwd)
    return SessionRequest(
        role=role,
        task_id=task_id,
        turn=turn,
        cwd=cwd,
        system_prompt=system.render(task_id=task_id, feature_id=task_id, turn=turn) + _memory_section(conventions),
        denied_rules=conventions.deny,
        extra_settings=json.dumps({"hooks": conventions.hooks}) if settings.repo_hooks and conventions.hooks
        else None,
        prompt=prompt,
        tools=list(system.meta.get("tools") or []),
        limits=_limits(settings.limits, system.meta),
        model=settings.model,
        transcript_path=transcript_path,
        cli_path=settings.cli_path,
        retry_attempts=settings.retry_attempts,
        retry_max_wait_s=settings.retry_max_wait_s,
        on_event=settings.on_event,
        limit_gate=settings.limit_gate,
        trace_metadata=dict(settings.trace_metadata),
        sandbox_writable=settings.sandbox_writable,
        env=dict(settings.env),
        unreadable=settings.unreadable,
        meter=settings.meter,
        **extra,
    )


def _memory_section(conventions: Conventions) -> str:
    if not conventions.memory:
        return ""
    return ("\n\n# The project's conventions (its CLAUDE.md and AGENTS.md files)\n\nFollow them. Where they"
            " conflict with the rules above (work only in this worktree, the coach never writes, report through the"
            f" autobuild tools), the rules above win.\n\n{conventions.memory}\n")


def _limits(limits: SessionLimits, meta: dict[str, Any]) -> SessionLimits:
    max_turns = int(meta.get("max_turns", limits.max_turns))
    return SessionLimits(
        max_turns=min(limits.max_turns, max_turns),
        session_timeout_s=limits.session_timeout_s,
        idle_timeout_s=limits.idle_timeout_s,
        max_budget_usd=limits.max_budget_usd,
    )
