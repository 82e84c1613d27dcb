"""Settings, one model: CLI flags over `ORCHESTRATOR_*` variables over the repo's `.autobuild/config.yaml` over
defaults (layered by pydantic-settings); the run options are also the graph's context."""

from __future__ import annotations

import ipaddress
import math
import os
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

import platformdirs
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from orchestrator.errors import InputError

ENV_PREFIX = "ORCHESTRATOR_"
CONFIG_FILE = Path(".autobuild") / "config.yaml"
_CONFIG_MAX_BYTES = 256 * 1024


Schedule = Literal["dag", "groups"]
YIELD_VARIABLE = f"{ENV_PREFIX}YIELD_PAUSE_SECONDS"
"""A worker's yield threshold (`autobuild serve` sets it in its own environment for the runs it serves)."""
WAKE_VARIABLE = f"{ENV_PREFIX}WAKE_SECONDS"
"""How often a worker's waker looks for paused runs to re-queue (orchestrator/server/waker.py)."""
SERVED_REPOS_VARIABLE = f"{ENV_PREFIX}SERVED_REPOS_UNDER"
"""The only folder a served run's `repo` may be worked in place below: `autobuild serve` sets it to its serve dir
when it listens beyond loopback; an operator may set it for any server (a loopback worker, `langgraph dev`)."""


MAX_PARALLEL = 64
"""Tasks at once: each holds a few Claude Code processes (~220 MB each)."""


class Asker(Protocol):
    """Asks a person a task's question and awaits the answer (None: no one answers now)."""

    async def __call__(self, question: dict[str, Any], /) -> str | None: ...


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
    judge_by_counts: bool = False
    """Judge tasks on a red base by the number of failures when its runner names no failing test (shown in
    every report); without it such a run stops before any session."""
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
    pr: bool = False
    """A run by URL opens a pull request from its feature branch when it ends (with `gh` on PATH): `--pr`."""
    agents: Any = Field(default=None, exclude=True)
    """An `agents.Agents` implementation; None = `ClaudeAgents()` (tests pass scripted agents)."""
    asker: Any = Field(default=None, exclude=True)
    """An `Asker`: at a terminal, an agent's question waits in-process for the person's answer, so its task goes on
    as soon as it is answered while the others keep running. None (served and non-interactive runs): a question
    is an interrupt, answered by `Command(resume=…)` or `autobuild answer`."""

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
        try:
            return max(0.0, float(os.environ.get(YIELD_VARIABLE) or 0))
        except ValueError:
            return 0.0  # `serve` checked and wrote it; anything else set by hand means no yielding


class Settings(RunOptions, BaseSettings):
    """What every command may be told, from flags, `ORCHESTRATOR_*` variables or `.autobuild/config.yaml`."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="forbid", arbitrary_types_allowed=True,
                                      validate_default=False)

    FLAG_ONLY: ClassVar[frozenset[str]] = frozenset({"agents", "asker", "interactive", "target", "plan", "dry_run",
                                                     "fresh", "json_output", "resume_only", "checkout", "yield_pause",
                                                     "rerun"})
    """Decided per command from flags and the terminal, never from a variable or the config file."""
    NOT_FROM_REPO: ClassVar[frozenset[str]] = frozenset({"repo", "repo_hooks", "on_event", "cli_path", "workspace"})
    """Never from `.autobuild/config.yaml`: that file is repo content (committed, cloned), and these would let a
    repo run its own hooks in sessions, a command on every event, or its own `claude` binary."""

    repo: Path = Path(".")
    """The target repo's main worktree top level (a `--repo` or the current folder, anywhere inside it)."""
    workspace: Path | None = None
    """`ORCHESTRATOR_WORKSPACE`: where a worker keeps its clones of repos run by URL (see `worker_workspace`)."""
    db: str | None = None
    """A SQLite path or a postgresql:// URL; None: the one the feature's run used, else one file per repo."""
    est_session_usd: float = 0.25
    """What `--dry-run` assumes one agent session costs."""
    trace_flush_timeout: float = 10.0
    """With LANGSMITH_TRACING on: the longest a command waits at its end for traces still queued."""

    @model_validator(mode="after")
    def _checked(self) -> Settings:
        """Every command's settings are checked like flags, wherever they came from (flag, variable, file), so
        a bad value in the config file is one line naming it, and a finished run always exits."""
        self.validate_options()
        if self.est_session_usd < 0:
            raise InputError(f"ORCHESTRATOR_EST_SESSION_USD must not be negative, not {self.est_session_usd}")
        if not 0 <= self.trace_flush_timeout <= 300:
            raise InputError("ORCHESTRATOR_TRACE_FLUSH_TIMEOUT must be between 0 and 300 seconds, not"
                             f" {self.trace_flush_timeout}")
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        repo = Path(getattr(init_settings, "init_kwargs", {}).get("repo") or ".")
        return (init_settings, _Layered(env_settings, cls.FLAG_ONLY),
                _ConfigFile(settings_cls, repo / CONFIG_FILE, cls.FLAG_ONLY | cls.NOT_FROM_REPO))


class RunSettings(Settings):
    """Everything `run`/`resume`/`answer` needs: the settings plus what and how (flags only)."""

    target: str
    """A feature or task id; empty with `plan`: the plan file's feature."""
    plan: Path | None = None
    """`--plan PATH`: the plan file where it lies (default `.autobuild/features/<target>.yaml`)."""
    dry_run: bool = False
    fresh: bool = False
    json_output: bool = False
    resume_only: bool = False
    rerun: list[str] = []
    """`resume FEAT-001 TASK-004`: tasks of a finished feature to run again whatever they came to (a blocked or
    aborted one, too), with their dependents."""
    checkout: Path | None = None
    """Where the command ran (`--repo` or the current folder): in one of the user's linked worktrees, its branch
    is the base when the plan names none (`repo` is always the main worktree)."""
    notify: bool = False
    """Ring the terminal bell (and show a desktop notification where one is available) when the feature
    finishes, a question waits, a task fails, a budget is reached or a usage limit pauses the run."""
    on_event: str | None = None
    """A shell command run on those same events with the event as JSON on stdin (`orchestrator/views/notify.py`)."""
    on_event_timeout: float = 10.0
    """Seconds an `--on-event` command may take before its process group is killed."""

    def validate(self) -> None:  # type: ignore[override]  # pydantic's classmethod `validate` is deprecated
        self.validate_options()
        if self.on_event is not None and not self.on_event.strip():
            raise InputError("--on-event must be a command (or leave it out)")
        if self.on_event_timeout <= 0:
            raise InputError("ORCHESTRATOR_ON_EVENT_TIMEOUT must be positive")

    def options(self) -> RunOptions:
        """The graph's context: the options only (what a served run would receive). The CLI waits a pause out in
        its own process whatever the environment says (no waker would re-queue it)."""
        return RunOptions(**{name: getattr(self, name) for name in RunOptions.model_fields} | {"yield_pause": 0.0})


class _Layered(PydanticBaseSettingsSource):
    """Another source without the flag-only fields (so `ORCHESTRATOR_FRESH=1` can't start runs over)."""

    def __init__(self, inner: PydanticBaseSettingsSource, excluded: frozenset[str]) -> None:
        super().__init__(inner.settings_cls)
        self.inner = inner
        self.excluded = excluded

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self.inner.get_field_value(field, field_name)

    def __call__(self) -> dict[str, Any]:
        return {k: v for k, v in self.inner().items() if k not in self.excluded}


class _ConfigFile(PydanticBaseSettingsSource):
    """The repo's `.autobuild/config.yaml`: settings by their option names (`parallel: 2`, `model: …`)."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path, excluded: frozenset[str]) -> None:
        super().__init__(settings_cls)
        self.path = path
        self.excluded = excluded

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # the whole file is read at once in __call__

    def __call__(self) -> dict[str, Any]:
        try:
            if not self.path.is_file():
                return {}
            if self.path.stat().st_size > _CONFIG_MAX_BYTES:
                raise InputError(f"{self.path} is over {_CONFIG_MAX_BYTES // 1024} KB: it holds settings only")
            data = yaml.safe_load(self.path.read_text(encoding="utf-8", errors="replace"))
        except (OSError, yaml.YAMLError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise InputError(f"{self.path} can't be read: {first}: fix or remove it") from None
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise InputError(f"{self.path} must be a mapping of settings (e.g. `parallel: 2`)")
        # Every setting is known here, also the run's own when a read command loads the file.
        known = set(RunSettings.model_fields) - self.excluded
        values: dict[str, Any] = {}
        for key, value in data.items():
            name = str(key).replace("-", "_")
            if name not in known:
                raise InputError(f"{self.path}: unknown setting {str(key)[:60]!r}; known: {', '.join(sorted(known))}")
            if name in self.settings_cls.model_fields:
                values[name] = value
        if isinstance(values.get("db"), str) and "://" not in values["db"]:
            # Relative to the repo, not to wherever the command runs (a subfolder would otherwise get its own DB).
            values["db"] = str((self.path.parent.parent / Path(values["db"]).expanduser()).resolve())
        return values


def load_settings(kind: type[Settings], repo: Path, /, **flags: Any) -> Any:
    """`kind` from flags (None = not given) over `ORCHESTRATOR_*` over the config file over defaults.

    Raises InputError naming the setting when a value is bad, wherever it came from."""
    given = {name: value for name, value in flags.items() if value is not None}
    try:
        return kind(repo=repo, **given)
    except InputError as exc:  # a value checked like a flag (Settings._checked): say where it may have come from
        if str(CONFIG_FILE) in str(exc):
            raise
        raise InputError(f"{exc} (from the flag, an {ENV_PREFIX}* variable or {CONFIG_FILE})") from None
    except ValidationError as exc:
        problem = exc.errors()[0]
        name = str(problem["loc"][0]) if problem.get("loc") else "a setting"
        raise InputError(f"bad value for --{name.replace('_', '-')} (from the flag, {ENV_PREFIX}{name.upper()}"
                         f" or {CONFIG_FILE}): {problem['msg']}") from None


def worker_workspace() -> Path:
    """Where this worker keeps its clones of repos run by URL: `ORCHESTRATOR_WORKSPACE`, else a per-user data
    folder. Read from the worker's own environment, never from a run's input or context (a client can't choose
    paths on a worker)."""
    if configured := os.environ.get(f"{ENV_PREFIX}WORKSPACE", "").strip():
        return Path(configured).expanduser().resolve()
    return Path(platformdirs.user_data_dir("autobuild", appauthor=False)) / "workspace"


def served_repo_root() -> Path | None:
    """The folder a served run's `repo` (worked in place) must lie under (`ORCHESTRATOR_SERVED_REPOS_UNDER`). None:
    a server answering this machine only (a loopback worker, `langgraph dev`), whose callers could run the CLI on
    any of the worker user's repos, and `submit --repo-url /local/folder` sends that folder to be worked in place."""
    configured = os.environ.get(SERVED_REPOS_VARIABLE, "").strip()
    return Path(configured).expanduser().resolve() if configured else None


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

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

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
    state_dir: str = Field(default="", validation_alias="ORCHESTRATOR_SERVE_DIR")
    """The worker's own folder (empty: a per-user state dir): the engine's generated config, and beyond loopback the
    only folder a served `repo` may lie below (worked in place)."""

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
        self.auth_token = self.auth_token.strip()  # what clients send is compared stripped; spaces are no token
        if not is_loopback(self.host) and not self.auth_token:
            raise InputError(f"--host {self.host} listens beyond this machine: set ORCHESTRATOR_AUTH_TOKEN (clients"
                             " send it) or keep 127.0.0.1")
        if not is_loopback(self.host) and len(self.auth_token) < MIN_TOKEN_CHARS:
            raise InputError(f"ORCHESTRATOR_AUTH_TOKEN has {len(self.auth_token)} characters: a worker on {self.host}"
                             f" needs at least {MIN_TOKEN_CHARS} (say, `openssl rand -hex 32`)")
        for name, folder in (("ORCHESTRATOR_SERVE_DIR", self.state_dir), ("ORCHESTRATOR_WORKSPACE", self.workspace)):
            if folder and (problem := _unusable_folder(Path(folder).expanduser())):
                raise InputError(f"{name} {folder}: {problem}: name a folder this user can write")
