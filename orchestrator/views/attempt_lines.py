"""The progress lines of a task's attempts (issue 40): the run's queue note, each attempt's start and end, the pick."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _queue(e: dict[str, Any]) -> str:
    return (f"note: {e['attempts']} attempts per task ({', '.join(e.get('tasks') or [])}) but --parallel"
            f" {e['parallel']}: {int(e['attempts']) - int(e['parallel'])} attempt(s) of a task wait for a slot;"
            f" --parallel {e['attempts']} runs them side by side")


def _attempt(e: dict[str, Any]) -> str:
    return f"{e.get('task') or ''} attempt {e.get('attempt')}"


def _start(e: dict[str, Any]) -> str:
    model = f", model {e['model']}" if e.get("model") else ""
    return f"{_attempt(e)} started ({e.get('approach') or 'no approach hint'}{model})"


def _selection(e: dict[str, Any]) -> str:
    if e.get("picked") is None:
        return f"{e['task']}: no attempt approved ({e.get('reason') or ''})"
    return f"{e['task']}: attempt {e['picked']} picked: {e.get('reason') or ''}"


FORMATS: dict[str, Callable[[dict[str, Any]], str]] = {
    "attempts_queue": _queue,
    "attempts_start": lambda e: f"{e['task']} runs as {e['attempts']} attempts (policy {e['policy']})"
    + (f", {e['queued']} waiting for a slot" if e.get("queued") else ""),
    "attempt_start": _start,
    "attempt_end": lambda e: f"{_attempt(e)} ended {e.get('status')}"
    + (f": {e['reason']}" if e.get("reason") else ""),
    "attempt_cancelled": lambda e: f"{_attempt(e)} cancelled: {e.get('reason') or ''} (worktree kept until"
    " `discard`)",
    "selection": _selection,
    "attempt_refused": lambda e: f"{_attempt(e)} refused at landing ({e.get('reason') or ''});"
    f" trying attempt {e.get('next')}",
}
"""Progress formatters by event kind (views/progress.py takes them in)."""
