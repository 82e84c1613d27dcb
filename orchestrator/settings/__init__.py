"""Settings, one model per reader: what a command is told (command.py: flags over `ORCHESTRATOR_*` variables over
the repo's `.autobuild/config.yaml` over defaults), how a feature runs (options.py: also the graph's context),
what `autobuild serve` is told (worker.py), and what a process reads from its own environment (environment.py).

command.py: `Settings` and `RunSettings`: flags over variables over the config file over defaults.
options.py: `RunOptions`, how a feature runs: also the graph's context.
worker.py: `WorkerSettings`, what `autobuild serve` is told.
environment.py: the variable names, and what a process reads from its own environment.
models.py: `ModelRouting`, the model of a task's sessions by its complexity (`models:` in the config file).
"""

from orchestrator.settings.command import CONFIG_FILE, RunSettings, Settings, load_settings
from orchestrator.settings.environment import (
    AUTH_TOKEN_VARIABLE,
    ENV_PREFIX,
    LOCK_DB_VARIABLE,
    SERVED_REPOS_VARIABLE,
    WAKE_VARIABLE,
    WORKSPACE_VARIABLE,
    YIELD_VARIABLE,
    Environment,
    environment,
    served_repo_root,
    worker_workspace,
)
from orchestrator.settings.models import ModelRouting, session_model
from orchestrator.settings.options import MAX_PARALLEL, Asker, AttemptsPolicy, RunOptions, RunStore, Schedule
from orchestrator.settings.worker import MIN_TOKEN_CHARS, WorkerSettings, is_loopback

__all__ = [
    "AUTH_TOKEN_VARIABLE", "CONFIG_FILE", "ENV_PREFIX", "LOCK_DB_VARIABLE", "MAX_PARALLEL", "MIN_TOKEN_CHARS",
    "SERVED_REPOS_VARIABLE", "WAKE_VARIABLE", "WORKSPACE_VARIABLE", "YIELD_VARIABLE", "Asker", "AttemptsPolicy",
    "Environment", "ModelRouting", "RunOptions", "RunSettings", "RunStore", "Schedule", "Settings", "WorkerSettings",
    "environment", "is_loopback", "load_settings", "served_repo_root", "session_model", "worker_workspace",
]
