"""`autobuild serve`'s settings (`WorkerSettings`): the engine's variables and ours, checked before anything starts."""

from __future__ import annotations

import ipaddress
import math
import os
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from orchestrator.errors import InputError
from orchestrator.settings.environment import WAKE_VARIABLE, YIELD_VARIABLE

MIN_TOKEN_CHARS = 16
"""A worker listening beyond loopback needs a bearer token at least this long (after stripping)."""


def is_loopback(host: str) -> bool:
    """Whether `host` answers this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name (or nothing): it may resolve anywhere


def _unusable_folder(folder: Path) -> str | None:
    """Why `folder` can't hold what the worker writes (None: it can; a missing one is made under a writable
    parent)."""
    existing = next((path for path in (folder, *folder.parents) if path.exists()), None)
    if existing is None or not existing.is_dir():
        return "is a file, not a folder" if existing == folder else f"{existing} is not a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{existing} is not writable"
    return None


class WorkerSettings(BaseSettings):
    """`autobuild serve`: a worker of the engine (Aegra) on one store (`DATABASE_URL`) and one queue (`REDIS_URL`).

    The engine's own names for what it shares with its deployment (`DATABASE_URL`, `REDIS_URL`, `PORT`); ours with
    the `ORCHESTRATOR_` prefix. Flags win over variables."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True, frozen=True)

    database_url: str = Field(default="", validation_alias="DATABASE_URL")
    """The one store: Aegra's runs, threads and leases, the checkpoints, the per-feature advisory locks."""
    redis_url: str = Field(default="", validation_alias="REDIS_URL")
    """The job queue every worker takes runs from."""
    port: int = Field(default=2026, validation_alias="PORT")
    host: str = Field(default="127.0.0.1", validation_alias="ORCHESTRATOR_HOST")
    auth_token: str = Field(default="", validation_alias="ORCHESTRATOR_AUTH_TOKEN")
    """Clients send it as `Authorization: Bearer …`; required to listen on anything but loopback."""
    workspace: str = Field(default="", validation_alias="ORCHESTRATOR_WORKSPACE")
    """Where the worker keeps its clones (empty: a per-user data dir); passed through to the graph."""
    worker_runs: int = Field(default=2, validation_alias="ORCHESTRATOR_WORKER_RUNS")
    """Feature runs one worker holds at once (each holds a few Claude Code processes, ~220 MB each)."""
    run_timeout_hours: float = Field(default=24.0, validation_alias="ORCHESTRATOR_RUN_TIMEOUT_HOURS")
    lease_seconds: int = Field(default=30, validation_alias="ORCHESTRATOR_LEASE_SECONDS")
    """A dead worker's runs are taken over within about this (plus the reaper's interval, a third of it)."""
    yield_pause_seconds: float = Field(default=300.0, validation_alias=YIELD_VARIABLE)
    """A run paused (usage limit, quota) for longer than this ends and frees its slot; 0 waits in the run."""
    wake_seconds: float = Field(default=5.0, validation_alias=WAKE_VARIABLE)
    """How often the worker's waker looks for paused runs whose pause is over, to re-queue them."""
    log_level: str = Field(default="WARNING", validation_alias="LOG_LEVEL")
    """The engine's own log level, handed to it as it is."""
    state_dir: str = Field(default="", validation_alias="ORCHESTRATOR_SERVE_DIR")
    """The worker's own folder (empty: a per-user state dir): the engine's generated config, and beyond loopback the
    only folder a served `repo` may lie below (worked in place)."""

    @field_validator("auth_token")
    @classmethod
    def _stripped(cls, token: str) -> str:
        """What clients send is compared stripped; spaces are no token."""
        return token.strip()

    @classmethod
    def load(cls, **flags: Any) -> WorkerSettings:
        """From flags over the variables, checked: a bad value, even one that isn't a number, is one line naming the
        variable (InputError, exit 2)."""
        try:
            found = cls(**flags)
        except ValidationError as exc:
            problem = exc.errors()[0]
            name = str(problem["loc"][0]) if problem.get("loc") else "a worker variable"
            raise InputError(f"bad value for {name}: {problem['msg']} (got {problem.get('input')!r})") from None
        return found.checked()

    def checked(self) -> WorkerSettings:
        """One line naming the bad setting (InputError, exit 2) before anything is started or written."""
        if not self.database_url:
            raise InputError("DATABASE_URL is not set: `autobuild serve` needs a postgresql://… URL (its one store)")
        if not self.database_url.startswith(("postgresql://", "postgres://")):
            raise InputError(f"DATABASE_URL must be a postgresql://… URL, not {self.database_url.split('://')[0]}://…")
        if not self.redis_url:
            raise InputError("REDIS_URL is not set: `autobuild serve` needs a redis://… URL (the job queue)")
        if not self.redis_url.startswith(("redis://", "rediss://")):
            raise InputError(f"REDIS_URL must be a redis://… URL, not {self.redis_url.split('://')[0]}://…")
        if not 0 < self.port < 65536:
            raise InputError(f"--port (PORT) must be 1-65535, not {self.port}")
        self._check_access()
        if self.worker_runs < 1:
            raise InputError(f"ORCHESTRATOR_WORKER_RUNS must be at least 1, not {self.worker_runs}")
        if not 0 < self.run_timeout_hours <= 24 * 14:
            raise InputError(f"ORCHESTRATOR_RUN_TIMEOUT_HOURS must be between 0 and 336, not {self.run_timeout_hours}")
        if not 3 <= self.lease_seconds <= 3600:
            raise InputError(f"ORCHESTRATOR_LEASE_SECONDS must be between 3 and 3600, not {self.lease_seconds}")
        if not (math.isfinite(self.yield_pause_seconds) and self.yield_pause_seconds >= 0):
            raise InputError(f"{YIELD_VARIABLE} must be 0 or more seconds, not {self.yield_pause_seconds}")
        if not (math.isfinite(self.wake_seconds) and 0 < self.wake_seconds <= 3600):
            raise InputError(f"{WAKE_VARIABLE} must be above 0 and at most 3600, not {self.wake_seconds}")
        return self

    def _check_access(self) -> None:
        """Who may call the worker (a token off loopback) and where it writes (its folders)."""
        if not is_loopback(self.host) and not self.auth_token:
            raise InputError(f"--host {self.host} listens beyond this machine: set ORCHESTRATOR_AUTH_TOKEN (clients"
                             " send it) or keep 127.0.0.1")
        if not is_loopback(self.host) and len(self.auth_token) < MIN_TOKEN_CHARS:
            raise InputError(f"ORCHESTRATOR_AUTH_TOKEN has {len(self.auth_token)} characters: a worker on {self.host}"
                             f" needs at least {MIN_TOKEN_CHARS} (say, `openssl rand -hex 32`)")
        for name, folder in (("ORCHESTRATOR_SERVE_DIR", self.state_dir), ("ORCHESTRATOR_WORKSPACE", self.workspace)):
            if folder and (problem := _unusable_folder(Path(folder).expanduser())):
                raise InputError(f"{name} {folder}: {problem}: name a folder this user can write")
