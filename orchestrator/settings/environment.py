"""The names of the variables a process reads from its own environment, beyond a command's flags, and their
reader (a worker's folders and the thresholds `autobuild serve` hands to the runs it serves)."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

ENV_PREFIX = "ORCHESTRATOR_"
YIELD_VARIABLE = f"{ENV_PREFIX}YIELD_PAUSE_SECONDS"
"""A worker's yield threshold (`autobuild serve` sets it in its own environment for the runs it serves)."""
WAKE_VARIABLE = f"{ENV_PREFIX}WAKE_SECONDS"
"""How often a worker's waker looks for paused runs to re-queue (orchestrator/server/waker.py)."""
SERVED_REPOS_VARIABLE = f"{ENV_PREFIX}SERVED_REPOS_UNDER"
"""The only folder a served run's `repo` may be worked in place below: `autobuild serve` sets it to its serve dir
when it listens beyond loopback; an operator may set it for any server (a loopback worker, `langgraph dev`)."""


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
