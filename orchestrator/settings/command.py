"""What a command may be told (`Settings`, `RunSettings`): CLI flags over `ORCHESTRATOR_*` variables over the repo's
`.autobuild/config.yaml` over defaults (layered by pydantic-settings), loaded and checked by `load_settings`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import yaml
from pydantic import ValidationError, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from orchestrator.errors import InputError
from orchestrator.settings.environment import ENV_PREFIX
from orchestrator.settings.options import RunOptions

CONFIG_FILE = Path(".autobuild") / "config.yaml"
_CONFIG_MAX_BYTES = 256 * 1024


class Settings(RunOptions, BaseSettings):
    """What every command may be told, from flags, `ORCHESTRATOR_*` variables or `.autobuild/config.yaml`."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="forbid", arbitrary_types_allowed=True, frozen=True,
                                      validate_default=False)

    FLAG_ONLY: ClassVar[frozenset[str]] = frozenset({"agents", "asker", "interactive", "target", "plan", "dry_run",
                                                     "fresh", "json_output", "resume_only", "checkout", "yield_pause",
                                                     "rerun", "repair_base", "notes_store",
                                                     "answered_from"})
    """Decided per command from flags and the terminal, never from a variable or the config file."""
    NOT_FROM_REPO: ClassVar[frozenset[str]] = frozenset({"repo", "repo_hooks", "on_event", "cli_path"})
    """Never from `.autobuild/config.yaml`: that file is repo content (committed, cloned), and these would let a
    repo run its own hooks in sessions, a command on every event, or its own `claude` binary."""

    repo: Path = Path(".")
    """The target repo's main worktree top level (a `--repo` or the current folder, anywhere inside it)."""
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
    answered_from: str = "cli"
    """`answer`: where its text comes from, `cli` or `page` (the page runs `autobuild answer --from page`), written
    with it in the task's trace (`answer_given`)."""
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
        if "model" in values and "models" in values:  # `model` wins wherever it comes from: routing would be dead
            raise InputError(f"{self.path}: set `model` (one model) or `models` (routing by complexity), not both")
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
