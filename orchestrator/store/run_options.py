"""The options a feature's run was started with, kept beside its reports: `resume` keeps them unless told otherwise."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchestrator.repo import run_files
from orchestrator.repo.run_files import RUNS

FILE = "options.json"
KEPT = ("parallel", "max_turns", "session_timeout", "idle_timeout", "budget_usd", "task_budget_usd",
        "session_budget_usd", "model", "coach_model", "precheck_model", "keep_worktrees", "ignore_deps", "schedule",
        "verify", "judge_by_counts", "setup", "max_wait", "replan", "max_utilization", "drain_grace",
        "attempts", "attempts_policy")
"""What a resumed run keeps of `run`'s flags. Never what the repo's own files may not set (`--repo-hooks`,
`--on-event`, the CLI's path: settings/command.py's NOT_FROM_REPO): this file lives in the repository's folder."""


def _path(repo: Path, feature: str) -> Path:
    return repo.joinpath(*RUNS, feature, FILE)


def record(repo: Path, feature: str, flags: Mapping[str, Any]) -> None:
    """Keep the flags `run` was given (those not given are not kept: the variables and the config file of the day
    the run resumes decide them, as they did)."""
    given = {name: flags[name] for name in KEPT if flags.get(name) is not None}
    run_files.replace(_path(repo, feature), json.dumps(given, sort_keys=True) + "\n", "the run's options")


def recorded(repo: Path, feature: str) -> dict[str, Any]:
    """The flags the feature's run was started with; none when it kept none or its record can't be read (then
    `resume` goes by its own flags, as before)."""
    try:
        text = run_files.read(_path(repo, feature), "the run's options")
        data = json.loads(text) if text else {}
    except (OSError, ValueError):
        return {}
    return {name: value for name, value in data.items() if name in KEPT} if isinstance(data, dict) else {}
