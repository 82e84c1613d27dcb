"""Run settings: CLI flags over `ORCHESTRATOR_*` environment variables over defaults."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from orchestrator.errors import InputError
from orchestrator.store import POSTGRES_SCHEMES, CheckpointStore

ENV_PREFIX = "ORCHESTRATOR_"


def env_default(name: str, default: str | None = None) -> str | None:
    """`ORCHESTRATOR_<NAME>` from the environment, else the default."""
    return os.environ.get(ENV_PREFIX + name.upper().replace("-", "_"), default)


@dataclass
class RunSettings:
    """Everything `run`/`resume` needs, validated before anything is written."""

    repo: Path
    target: str
    db: str | None = None
    parallel: int = 1
    max_turns: int = 10
    session_timeout_s: float = 1800.0
    idle_timeout_s: float = 600.0
    verify_timeout_s: float = 900.0
    budget_usd: float | None = None
    task_budget_usd: float | None = None
    session_budget_usd: float | None = None
    model: str | None = None
    coach_model: str | None = None
    precheck_model: str | None = None
    interactive: bool = False
    dry_run: bool = False
    fresh: bool = False
    keep_worktrees: bool = False
    json: bool = False
    ignore_deps: bool = False
    cli_path: str | None = None
    resume_only: bool = False
    drain_grace_s: float = 5.0

    def validate(self) -> None:
        checks = [
            (self.parallel >= 1, "--parallel must be at least 1"),
            (1 <= self.max_turns <= 100, "--max-turns must be between 1 and 100"),
            (self.session_timeout_s > 0, "--session-timeout must be positive"),
            (self.idle_timeout_s > 0, "--idle-timeout must be positive"),
            (self.budget_usd is None or self.budget_usd > 0, "--budget-usd must be positive"),
            (self.task_budget_usd is None or self.task_budget_usd > 0, "--task-budget-usd must be positive"),
            (self.session_budget_usd is None or self.session_budget_usd > 0, "--session-budget-usd must be positive"),
        ]
        for ok, message in checks:
            if not ok:
                raise InputError(message)


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
        if chosen.startswith(POSTGRES_SCHEMES):
            return CheckpointStore(chosen)
        return CheckpointStore(str(Path(chosen).expanduser().resolve()))
    real = str(repo.resolve())
    digest = hashlib.sha1(real.encode(), usedforsecurity=False).hexdigest()[:8]
    return CheckpointStore(str(default_checkpoint_dir() / f"{repo.resolve().name}-{digest}.sqlite"))
