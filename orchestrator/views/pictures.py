"""The feature's pictures: the plan flowchart and the run's timeline in AUTO-RUN.md, and `autobuild graph`."""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from orchestrator.errors import InputError
from orchestrator.facts import TaskResult
from orchestrator.plan.model import FeaturePlan
from orchestrator.store import inspection
from orchestrator.store import traces as trace
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.views.mermaid import Bar, flowchart, gantt
from orchestrator.views.timeline import pause_bars, task_bars

LEGEND = ("P1, C1: the player's and the coach's session of turn 1 · G: the gate run on the coach's approval ·"
          " Q: waiting for an answer · paused: a usage limit · ◆ merged (red: not merged) or skipped")


def run_outcomes(results: Mapping[str, TaskResult], held: Mapping[str, str], order: Sequence[str], *,
                 errored: Collection[str] = ()) -> dict[str, str]:
    """What each task of a run came to, in the words of the feature report's table (`errored`: held tasks whose
    run raised an error, resumable)."""
    outcomes = {}
    for task_id in order:
        if task_id in results:
            outcomes[task_id] = str(results[task_id].get("status", "not run"))
        elif task_id in held:
            outcomes[task_id] = "error (resumable)" if task_id in errored else "not finished"
    return outcomes


def timeline(repo: Path, feature_id: str, order: Sequence[str], now: float) -> list[tuple[str, list[Bar]]]:
    """The run's bars by section: the usage-limit pauses of this run (if any), then one section per task."""
    sections = [(task_id, task_bars(trace.read(repo, feature_id, task_id), now)) for task_id in order]
    first = min((bar.start for _, bars in sections for bar in bars), default=None)
    if first is None:
        return []
    pauses = [bar for bar in pause_bars(trace.read(repo, feature_id, None), now) if bar.end >= first]
    return [("usage limit", pauses), *sections] if pauses else sections


def report_section(repo: Path, plan: FeaturePlan, order: Sequence[str], outcomes: Mapping[str, str],
                   now: float | None = None) -> str:
    """The pictures of a feature's AUTO-RUN.md: the plan colored by outcome, then what ran when."""
    now = time.time() if now is None else now
    chart = flowchart(plan, outcomes)
    lines = ["", "## Plan", "", f"{chart.nodes} task(s), {chart.edges} dependency edge(s); an arrow points from a"
             " task to the one that waits for it, colors are outcomes.", "", "```mermaid", chart.text.rstrip(), "```"]
    sections = timeline(repo, plan.id, order, now)
    if sections:
        lines += ["", "## Timeline", "", f"What ran when, in UTC. {LEGEND}.", "", "```mermaid",
                  gantt(f"{plan.id} - what ran when (UTC)", sections).rstrip(), "```"]
    return "\n".join(lines) + "\n"


def checkpoint_outcomes(store: CheckpointStore, plan: FeaturePlan) -> dict[str, str] | None:
    """Each task's status in the feature's checkpoints (also mid-run), or None when it never ran there."""
    if not store.exists():
        return None
    try:
        table = inspection.feature_status(store, plan)
    except InputError:
        return None
    return {str(row["task"]): str(row["status"]) for row in table["tasks"]}
