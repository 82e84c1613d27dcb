"""Settings, one model per reader: what a command is told (command.py: flags over `ORCHESTRATOR_*` variables over
the repo's `.autobuild/config.yaml` over defaults), how a feature runs (options.py: also the graph's context),
what `autobuild serve` is told (worker.py), and what a process reads from its own environment (environment.py)."""

from orchestrator.settings.command import CONFIG_FILE, RunSettings, Settings, load_settings
from orchestrator.settings.environment import (
    ENV_PREFIX,
    SERVED_REPOS_VARIABLE,
    WAKE_VARIABLE,
    YIELD_VARIABLE,
    served_repo_root,
    worker_workspace,
)
from orchestrator.settings.options import MAX_PARALLEL, Asker, RunOptions, Schedule
from orchestrator.settings.worker import MIN_TOKEN_CHARS, WorkerSettings, is_loopback

__all__ = [
    "CONFIG_FILE", "ENV_PREFIX", "MAX_PARALLEL", "MIN_TOKEN_CHARS", "SERVED_REPOS_VARIABLE", "WAKE_VARIABLE",
    "YIELD_VARIABLE", "Asker", "RunOptions", "RunSettings", "Schedule", "Settings", "WorkerSettings", "is_loopback",
    "load_settings", "served_repo_root", "worker_workspace",
]
