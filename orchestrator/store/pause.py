"""The run's usage-limit pause on disk, beside its reports: a kill during the pause resumes into the same wait,
and `status` shows it ("paused until 14:05, usage limit")."""

from __future__ import annotations

import json
import time
from pathlib import Path

from agents.limits import Pause
from orchestrator.store import traces as trace

PAUSE_NAME = "usage-limit.json"


def pause_path(repo: Path, feature_id: str) -> Path:
    return trace.runs_dir(repo, feature_id) / PAUSE_NAME


def write_pause(path: Path, pause: Pause | None) -> None:
    """Record the pause (atomically), or remove the record when the limit is over."""
    if pause is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(".tmp")
    temp.write_text(json.dumps({"until": pause.until, "reason": pause.reason, "since": pause.since}))
    temp.replace(path)


def read_pause(path: Path) -> Pause | None:
    try:
        data = json.loads(path.read_text())
        return Pause(until=float(data["until"]), reason=str(data["reason"]), since=float(data["since"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def describe(pause: Pause | None, now: float | None = None) -> str | None:
    """"paused until 14:05, usage limit (rate limited (429))" while the pause is in force, else None."""
    if pause is None or pause.until <= (now or time.time()):
        return None
    return f"paused until {time.strftime('%H:%M', time.localtime(pause.until))}, usage limit ({pause.reason})"
