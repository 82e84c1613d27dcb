"""How a feature runs (`RunOptions`): the CLI's options, also the feature graph's LangGraph context."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from orchestrator.errors import InputError
from orchestrator.settings.environment import environment
from orchestrator.settings.models import ModelRouting

Schedule = Literal["dag", "groups"]
AttemptsPolicy = Literal["first", "best"]
"""How a task's attempts end: `first` lands the first verified approval at once, `best` lets all reach their
verdict and picks (graph/selection.py)."""
MAX_ATTEMPTS = 8

MAX_PARALLEL = 64
"""Tasks at once: each holds a few Claude Code processes (~220 MB each)."""


@dataclass(frozen=True)
class RunStore:
    """Where a run's checkpoints are (a SQLite path or a postgresql:// URL), as its command opened them."""

    location: str


class Asker(Protocol):
    """Asks a person a task's question and awaits the answer (None: no one answers now)."""

    async def __call__(self, question: dict[str, Any], /) -> str | None: ...


class RunOptions(BaseModel):
    """How a feature runs, by the CLI's option names: the feature graph's LangGraph context (`context_schema`).

    The served graph (`langgraph.json`) receives these as run context, all optional; the CLI fills them from
    flags and `ORCHESTRATOR_*` variables. `agents` is the agent seam: None means real Claude sessions.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid", frozen=True)

    parallel: int = 1
    max_turns: int = 10
    session_timeout: float = 1800.0
    idle_timeout: float = 600.0
    verify_timeout: float = 900.0
    verify: str | None = None
    """The gate command, over the plan's and the detected one; "none" runs without a gate (unverified)."""
    judge_by_counts: bool = False
    """Judge tasks on a red base by the number of failures when its runner names no failing test (shown in
    every report); without it such a run stops before any session."""
    repair_base: bool = False
    """The run repairs a base whose tests never ran (like a task's `repairs_base`): the base is not refused, and
    no failure is waived as already failing on it."""
    setup: str | None = None
    """Prepares each new worktree (e.g. `npm ci`), over the plan's `setup` and the default; "none": nothing."""
    budget_usd: float | None = None
    task_budget_usd: float | None = None
    session_budget_usd: float | None = None
    model: str | None = None
    coach_model: str | None = None
    precheck_model: str | None = None
    models: ModelRouting | None = None
    """Model routing by a task's complexity (`models:` in `.autobuild/config.yaml`, settings/models.py): off unless
    configured; `--model` and `--coach-model` win over it."""
    interactive: bool = True
    """Served runs ask (an interrupt per question); the CLI decides from the terminal and its flags."""
    keep_worktrees: bool = False
    ignore_deps: bool = False
    schedule: Schedule = "dag"
    cli_path: str | None = None
    drain_grace: float = 5.0
    max_wait: float = 6 * 3600.0
    """How long a usage-limit pause may last before the run stops (exit 75, resumable)."""
    repo_hooks: bool = False
    """Run the target repo's `.claude/settings.json` hooks in agent sessions (never its env or key helper)."""
    limit_probe: float = 60.0
    """While paused without a known reset time: at most one request per this many seconds, run-wide."""
    replan: int = 1
    """Replans per task: a task that ends at max turns or stalled is split by the planner into smaller tasks
    that replace it (0 switches it off)."""
    max_utilization: float = 0.9
    """A subscription quota window the CLI reports at or over this share stops new sessions until it resets
    (running ones finish); 1 switches it off. API keys report no utilization: nothing changes for them."""
    yield_pause: float | None = None
    """Served runs: a usage-limit or quota pause with more than this many seconds left ends the run, its worker
    slot freed, and the workers re-queue it when the pause is over. None: the worker's ORCHESTRATOR_YIELD_PAUSE_SECONDS
    (`autobuild serve` sets it, 300 by default); unset (the CLI) or 0: the run waits the pause out in-process."""
    attempts: int | None = None
    """Independent attempts per task (1-8), over the plan's `attempts` (None: the plan's, else 1)."""
    attempts_policy: AttemptsPolicy = "first"
    """`first`: a verified approval wins at once, the others are cancelled; `best`: every attempt reaches its
    verdict, then the selection picks."""
    pr: bool = False
    """A run by URL opens a pull request from its feature branch when it ends (with `gh` on PATH): `--pr`."""
    agents: Any = Field(default=None, exclude=True)
    """An `agents.Agents` implementation; None = `ClaudeAgents()` (tests pass scripted agents)."""
    asker: Any = Field(default=None, exclude=True)
    """An `Asker`: at a terminal, an agent's question waits in-process for the person's answer, so its task goes on
    as soon as it is answered while the others keep running. None (served and non-interactive runs): a question
    is an interrupt, answered by `Command(resume=…)` or `autobuild answer`."""
    notes_store: Any = Field(default=None, exclude=True)
    """The run's own checkpoint store as the CLI opened it (a `RunStore`): the notes and a person's pauses and
    cancels the run reads are the ones kept there, never another store's. None (served runs, whose JSON context
    can't make one): the store the repository remembers for the feature."""

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        """`parallel: true` in a config file is a mistake, not 1: a number setting takes a number."""
        if isinstance(value, bool) and info.field_name and "bool" not in str(cls.model_fields[info.field_name]
                                                                               .annotation):
            raise ValueError("a number or text is expected here, not true/false")
        return value

    def validate_options(self) -> None:
        """One-line errors naming the option, raised before anything is written."""
        numbers = {name: value for name in type(self).model_fields if isinstance(value := getattr(self, name), float)}
        for name, value in numbers.items():
            if not math.isfinite(value):
                raise InputError(f"--{name.replace('_', '-')} must be a finite number, not {value}")
        checks = [
            (1 <= self.parallel <= MAX_PARALLEL, f"--parallel must be between 1 and {MAX_PARALLEL}"),
            (1 <= self.max_turns <= 100, "--max-turns must be between 1 and 100"),
            (self.session_timeout > 0, "--session-timeout must be positive"),
            (self.idle_timeout > 0, "--idle-timeout must be positive"),
            (self.verify_timeout > 0, "--verify-timeout must be positive"),
            (self.budget_usd is None or self.budget_usd > 0, "--budget-usd must be positive"),
            (self.task_budget_usd is None or self.task_budget_usd > 0, "--task-budget-usd must be positive"),
            (self.session_budget_usd is None or self.session_budget_usd > 0, "--session-budget-usd must be positive"),
            (self.drain_grace >= 0, "--drain-grace must not be negative"),
            (self.verify is None or bool(self.verify.strip()), "--verify must be a command, or none"),
            (self.max_wait >= 0, "--max-wait must not be negative"),
            (self.limit_probe > 0, "ORCHESTRATOR_LIMIT_PROBE must be positive"),
            (0 <= self.replan <= 5, "--replan must be between 0 and 5"),
            (self.attempts is None or 1 <= self.attempts <= MAX_ATTEMPTS,
             f"--attempts must be between 1 and {MAX_ATTEMPTS} (1 is one attempt per task, as without it)"),
            (0 < self.max_utilization <= 1, "--max-utilization must be above 0 and at most 1 (1 switches it off)"),
            (self.setup is None or bool(self.setup.strip()), "--setup must be a command, or none"),
            (self.yield_pause is None or self.yield_pause >= 0, "yield_pause must not be negative"),
        ]
        for ok, message in checks:
            if not ok:
                raise InputError(message)

    def yield_after(self) -> float:
        """The yield threshold in force: this run's `yield_pause`, else the worker's, else 0 (wait in the run)."""
        if self.yield_pause is not None:
            return self.yield_pause
        return environment().yield_pause_seconds
