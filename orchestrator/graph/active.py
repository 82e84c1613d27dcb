"""The workflow invocations running in this process, by key: what their task bodies share (in memory only).
Task arguments stay plain strings, never live objects; a task body finds its run here."""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.graph.context import RunContext
from orchestrator.graph.scheduler import Scheduler


@dataclass
class ActiveRun:
    """What the task bodies of one workflow invocation share."""

    ctx: RunContext
    scheduler: Scheduler
    digest: str = ""
    """The digest of the plan the run started from (a replan changes the plan in memory, never this)."""


ACTIVE: dict[str, ActiveRun] = {}
