"""Traces: every event as a JSON line, a task's under `.autobuild/runs/FEAT/TASK/trace.jsonl`, the feature's own
(start, end, usage-limit pauses) under `.autobuild/runs/FEAT/trace.jsonl`."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any


def runs_dir(repo: Path, feature_id: str, task_id: str | None = None) -> Path:
    base = repo / ".autobuild" / "runs" / feature_id
    return base / task_id if task_id else base


def append(repo: Path, feature_id: str, task_id: str | None, event: dict[str, Any]) -> None:
    """One event into the task's trace, or the feature's when `task_id` is None."""
    folder = runs_dir(repo, feature_id, task_id)
    folder.mkdir(parents=True, exist_ok=True)
    line = {"time": round(time.time(), 3), **({"task": task_id} if task_id else {}), **event}
    with (folder / "trace.jsonl").open("a", encoding="utf-8") as out:
        out.write(json.dumps(line, default=str) + "\n")


def read(repo: Path, feature_id: str, task_id: str | None) -> list[dict[str, Any]]:
    """The task's trace, or the feature's when `task_id` is None. A line that is not a JSON object (one cut short
    by a kill mid-write) is left out: the feature report reads traces at the end of a run and must not fail on it."""
    path = runs_dir(repo, feature_id, task_id) / "trace.jsonl"
    if not path.is_file():
        return []
    events = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events
