"""Run settings: CLI flags over `ORCHESTRATOR_*` environment variables over defaults; the graph's context."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.errors import InputError
from orchestrator.store import POSTGRES_SCHEMES, CheckpointStore

ENV_PREFIX = "ORCHESTRATOR_"


def env_default(name: str, default: str | None = None) -> str | None:
    """`ORCHESTRATOR_<NAME>` from the environment, else the default."""
    return os.environ.get(ENV_PREFIX + name.upper().replace("-", "_"), default)


Schedule = Literal["dag", "groups"]


class RunOptions(BaseModel):
    """How a feature runs, by the CLI's option names: the feature graph's LangGraph context (`context_schema`).

    The served graph (`langgraph.json`) receives these as run context, all optional; the CLI fills them from
    flags and `ORCHESTRATOR_*` variables. `agents` is the agent seam: None means real Claude sessions.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    parallel: int = 1
    max_turns: int = 10
    session_timeout: float = 1800.0
    idle_timeout: float = 600.0
    verify_timeout: float = 900.0
    verify: str | None = None
    """The gate command, over the plan's and the detected one; "none" runs without a gate (unverified)."""
    setup: str | None = None
    """Prepares each new worktree (e.g. `npm ci`), over the plan's `setup` and the default; "none": nothing."""
    budget_usd: float | None = None
    task_budget_usd: float | None = None
    session_budget_usd: float | None = None
    model: str | None = None
    coach_model: str | None = None
    precheck_model: str | None = None
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
    agents: Any = Field(default=None, exclude=True)
    """An `agents.Agents` implementation; None = `ClaudeAgents()` (tests pass scripted agents)."""

    def validate_options(self) -> None:
        """One-line errors naming the option, raised before anything is written."""
        checks = [
            (self.parallel >= 1, "--parallel must be at least 1"),
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
            (self.setup is None or bool(self.setup.strip()), "--setup must be a command, or none"),
        ]
        for ok, message in checks:
            if not ok:
                raise InputError(message)


class RunSettings(RunOptions):
    """Everything `run`/`resume` needs: the run options plus where and what (CLI only)."""

    repo: Path
    target: str
    """A feature or task id; empty with `plan`: the plan file's feature."""
    plan: Path | None = None
    """`--plan PATH`: the plan file where it lies (default `.autobuild/features/<target>.yaml`)."""
    db: str | None = None
    dry_run: bool = False
    fresh: bool = False
    json_output: bool = False
    resume_only: bool = False

    def validate(self) -> None:  # type: ignore[override]  # pydantic's classmethod `validate` is deprecated
        self.validate_options()

    def options(self) -> RunOptions:
        """The graph's context: the options only (what a served run would receive)."""
        return RunOptions(**{name: getattr(self, name) for name in RunOptions.model_fields})


def default_checkpoint_dir() -> Path:
    """The checkout's own `checkpoints/` when installed from it, else a per-user data folder."""
    checkout = Path(__file__).resolve().parent.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "checkpoints").is_dir():
        return checkout / "checkpoints"
    data_home = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return data_home / "autobuild" / "checkpoints"


def resolve_db(repo: Path, db: str | None) -> CheckpointStore:
    """--db, ORCHESTRATOR_DB (a SQLite path or a postgresql:// URL), or one SQLite file per repo."""
    chosen = db or env_default("db")
    if chosen:
        if "://" in chosen and not chosen.startswith(POSTGRES_SCHEMES):
            scheme = chosen.split("://", 1)[0]
            raise InputError(f"unsupported --db scheme {scheme}://: use a SQLite file path or postgresql://…")
        if chosen.startswith(POSTGRES_SCHEMES):
            return CheckpointStore(chosen)
        return CheckpointStore(str(Path(chosen).expanduser().resolve()))
    real = str(repo.resolve())
    digest = hashlib.sha1(real.encode(), usedforsecurity=False).hexdigest()[:8]
    return CheckpointStore(str(default_checkpoint_dir() / f"{repo.resolve().name}-{digest}.sqlite"))
