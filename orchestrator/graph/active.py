"""The workflow invocations running in this process, by key: what their task bodies share (in memory only).
Task arguments stay plain strings, never live objects; a task body finds its run here."""

from __future__ import annotations

from dataclasses import dataclass

from langgraph.graph.state import CompiledStateGraph

from orchestrator.graph.context import RunContext
from orchestrator.graph.scheduler import Scheduler
from orchestrator.graph.state import TaskInput, TaskState

TaskGraph = CompiledStateGraph[TaskState, RunContext, TaskInput, TaskState]
"""The compiled task subgraph a task body runs (`graph/workflow.py` builds it)."""


@dataclass
class ActiveRun:
    """What the task bodies of one workflow invocation share."""

    ctx: RunContext
    scheduler: Scheduler
    task_graph: TaskGraph
    """The task subgraph of the run's shape (its max turns, its precheck)."""
    digest: str = ""
    """The digest of the plan the run started from (a replan changes the plan in memory, never this)."""
    landing_graph: TaskGraph | None = None
    """The task subgraph entered at `merge`: a picked attempt's landing (graph/attempts.py)."""


ACTIVE: dict[str, ActiveRun] = {}
