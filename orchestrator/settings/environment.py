"""What a process reads from its own environment beyond a command's flags (`Environment`, read at once and
frozen): the variables `autobuild serve` checks and hands to the runs it serves, and where a command runs."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, field_validator

ENV_PREFIX = "ORCHESTRATOR_"
YIELD_VARIABLE = f"{ENV_PREFIX}YIELD_PAUSE_SECONDS"
"""A worker's yield threshold (`autobuild serve` sets it in its own environment for the runs it serves)."""
WAKE_VARIABLE = f"{ENV_PREFIX}WAKE_SECONDS"
"""How often a worker's waker looks for paused runs to re-queue (orchestrator/server/waker.py)."""
SERVED_REPOS_VARIABLE = f"{ENV_PREFIX}SERVED_REPOS_UNDER"
"""The only folder a served run's `repo` may be worked in place below: `autobuild serve` sets it to its serve dir
when it listens beyond loopback; an operator may set it for any server (a loopback worker, `langgraph dev`)."""
LOCK_DB_VARIABLE = f"{ENV_PREFIX}LOCK_DB"
"""The store whose advisory locks the workers share: `autobuild serve` sets it to its DATABASE_URL. Unset (a local
`run`, `langgraph dev`): only the repository's file lock applies."""
WORKSPACE_VARIABLE = f"{ENV_PREFIX}WORKSPACE"
CHECKPOINT_DIR_VARIABLE = f"{ENV_PREFIX}CHECKPOINT_DIR"
"""Where the default checkpoint DBs and the subscription's quota records go, instead of the checkout's
`checkpoints/` or the per-user data folder (a persistent disk in a container; a test suite's own folder)."""
AUTH_TOKEN_VARIABLE = f"{ENV_PREFIX}AUTH_TOKEN"


class Environment(BaseModel):
    """The variables a process is given rather than told by a flag, each taken as its readers always took it: a
    served run never stops over one (`serve` checked them in `WorkerSettings` before writing them)."""

    model_config = ConfigDict(frozen=True)

    repo: str = Field(default="", validation_alias=f"{ENV_PREFIX}REPO")
    """Where a command runs without `--repo` (empty: the current folder)."""
    workspace: str = Field(default="", validation_alias=WORKSPACE_VARIABLE)
    """Where a worker keeps its clones of repos run by URL (see `worker_workspace`)."""
    checkpoint_dir: str = Field(default="", validation_alias=CHECKPOINT_DIR_VARIABLE)
    """Where the default checkpoint DBs go (empty: see store/locations.py `default_checkpoint_dir`)."""
    served_repos_under: str = Field(default="", validation_alias=SERVED_REPOS_VARIABLE)
    lock_db: str = Field(default="", validation_alias=LOCK_DB_VARIABLE)
    db_lock_timeout: str = Field(default="30", validation_alias=f"{ENV_PREFIX}DB_LOCK_TIMEOUT")
    """Seconds a SQLite checkpoint writer waits for another process's write lock (see `db_lock_wait_ms`)."""
    auth_token: str = Field(default="", validation_alias=AUTH_TOKEN_VARIABLE)
    """The worker's bearer token: what its server compares a client's with (stripped), and what a client sends."""
    yield_pause_seconds: float = Field(default=0.0, validation_alias=YIELD_VARIABLE)
    wake_seconds: float = Field(default=5.0, validation_alias=WAKE_VARIABLE)
    host: str = Field(default="127.0.0.1", validation_alias="HOST")
    """The engine's address, which `serve` sets for it (the waker calls its own worker there)."""
    port: str = Field(default="2026", validation_alias="PORT")

    @field_validator("yield_pause_seconds", mode="before")
    @classmethod
    def _yield_or_wait(cls, value: str) -> float:
        try:
            return max(0.0, float(value or 0))
        except ValueError:
            return 0.0  # `serve` checked and wrote it; anything else set by hand means no yielding

    @field_validator("wake_seconds", mode="before")
    @classmethod
    def _wake_or_default(cls, value: str) -> float:
        try:
            return float(value or 5.0)
        except ValueError:
            return 5.0

    @classmethod
    def read(cls, environ: Mapping[str, str]) -> Environment:
        """The variables of `environ` this model names, each validated as its field says; the others are left."""
        names = {str(field.validation_alias) for field in cls.model_fields.values()}
        return cls.model_validate({name: value for name, value in environ.items() if name in names})

    def db_lock_wait_ms(self) -> int:
        """`db_lock_timeout` in milliseconds; a value that is no number raises ValueError where it is used, as it
        always did (a check at load would be new behaviour)."""
        return int(float(self.db_lock_timeout) * 1000)


def environment() -> Environment:
    """This process's environment now (read at each call: `serve` writes the engine's before it starts it)."""
    return Environment.read(os.environ)


def worker_workspace() -> Path:
    """Where this worker keeps its clones of repos run by URL: `ORCHESTRATOR_WORKSPACE`, else a per-user data
    folder. Read from the worker's own environment, never from a run's input or context (a client can't choose
    paths on a worker)."""
    if configured := environment().workspace.strip():
        return Path(configured).expanduser().resolve()
    return Path(platformdirs.user_data_dir("autobuild", appauthor=False)) / "workspace"


def served_repo_root() -> Path | None:
    """The folder a served run's `repo` (worked in place) must lie under (`ORCHESTRATOR_SERVED_REPOS_UNDER`). None:
    a server answering this machine only (a loopback worker, `langgraph dev`), whose callers could run the CLI on
    any of the worker user's repos, and `submit --repo-url /local/folder` sends that folder to be worked in place."""
    configured = environment().served_repos_under.strip()
    return Path(configured).expanduser().resolve() if configured else None
