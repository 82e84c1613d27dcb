"""Where a run's time goes, read from its own timeline: each task's trace events (when it became ready, when each
session's node started and its `session_end` came, when it merged) against the scripted model's own record of each
session's first request and last response; the overhead cut into phases that tile the run's critical chain.

Phases: start-up (process start to the first task ready: imports, checks, the base's gate, the feature branch),
scheduling (a dependency's merge to its dependent ready), worktree and setup (ready to the first session's node),
session start-up (a session's node to its first model request: the CLI's start), the model (first request to last
response: what the bare CLI takes too), session end (last response to `session_end`), between sessions (commit,
checks, the next prompt), landing (the last session's end to the merge: decision, gate, landing queue, merge) and
end (the last merge to the process's exit: reports, teardown)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from orchestrator.views.timeline import task_bars, timed

PHASES = ("start-up", "scheduling", "worktree and setup", "session start-up", "model", "session end",
          "between sessions", "landing", "end")
ROLES = ("player", "coach")
OURS = tuple(p for p in PHASES if p != "model")
"""Every phase but the model's: what the orchestrator adds (the CLI's own start-up included)."""


class ModelSession(Protocol):
    """One session as the scripted model saw it (overhead_bench.Session)."""

    role: str
    task: str
    turn: int
    first: float
    last: float


@dataclass
class TaskTimeline:
    """One task's times (epoch seconds): ready, merged, and its sessions as (node event, first request, last
    response, `session_end`)."""

    task: str
    dependencies: list[str]
    ready: float
    merged: float
    sessions: list[tuple[float, float, float, float]] = field(default_factory=list)


def read_timelines(runs_dir: Path, plan: Mapping[str, Any], sessions: Iterable[ModelSession]) -> list[TaskTimeline]:
    """Every merged task's timeline from `runs_dir/TASK-*/trace.jsonl` and the model's sessions."""
    by_key = {(s.role, s.task, s.turn): s for s in sessions}
    dependencies = {t["id"]: list(t.get("dependencies", [])) for t in plan["tasks"]}
    found = []
    for trace in sorted(runs_dir.glob("*/trace.jsonl")):
        events = [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]
        task = trace.parent.name
        stamps = {e["event"]: at for at, e in timed(events)}
        if "task_ready" not in stamps or "merge" not in stamps:
            continue
        timeline = TaskTimeline(task, dependencies.get(task, []), stamps["task_ready"], stamps["merge"])
        for bar in task_bars(events, now=stamps["merge"]):
            model = by_key.get((str(bar.kind), task, int(bar.label[1:] or 1))) if bar.kind in ROLES else None
            if model is not None:
                timeline.sessions.append((bar.start, model.first, model.last, bar.end))
        found.append(timeline)
    return found


def critical_chain(timelines: Sequence[TaskTimeline]) -> list[TaskTimeline]:
    """The chain the run's end waited on: the last task to merge, then each one's latest-merging dependency."""
    by_task = {t.task: t for t in timelines}
    chain = [max(timelines, key=lambda t: t.merged)]
    while deps := [by_task[d] for d in chain[-1].dependencies if d in by_task]:
        chain.append(max(deps, key=lambda t: t.merged))
    return chain[::-1]


def _task_phases(task: TaskTimeline, into: dict[str, float]) -> None:
    """Add one task's phases, from its ready to its merge, to `into`."""
    previous_end = None
    for node, first, last, end in task.sessions:
        if previous_end is None:
            into["worktree and setup"] += node - task.ready
        else:
            into["between sessions"] += node - previous_end
        into["session start-up"] += first - node
        into["model"] += last - first
        into["session end"] += end - last
        previous_end = end
    into["landing"] += task.merged - (previous_end if previous_end is not None else task.ready)


def chain_phases(timelines: Sequence[TaskTimeline], started: float, ended: float) -> dict[str, float]:
    """Seconds per phase along the critical chain; they add up to the run's wall time (`ended - started`)."""
    chain = critical_chain(timelines)
    found = dict.fromkeys(PHASES, 0.0)
    found["start-up"] = chain[0].ready - started
    for before, task in zip([None, *chain[:-1]], chain, strict=True):
        if before is not None:
            found["scheduling"] += task.ready - before.merged
        _task_phases(task, found)
    found["end"] = ended - chain[-1].merged
    return found


def mean_task_phases(timelines: Sequence[TaskTimeline]) -> dict[str, float]:
    """Seconds per phase per task, over every task (start-up and end are the run's, once)."""
    found = dict.fromkeys(PHASES, 0.0)
    by_task = {t.task: t for t in timelines}
    for task in timelines:
        merged = [by_task[d].merged for d in task.dependencies if d in by_task]
        if merged:
            found["scheduling"] += task.ready - max(merged)
        _task_phases(task, found)
    return {phase: seconds / max(len(timelines), 1) for phase, seconds in found.items()}


def bare_phases(spans: Sequence[tuple[float, float]], sessions: Sequence[ModelSession]) -> dict[str, float]:
    """The bare CLI's sessions run one after another: each process's start to its first request (session
    start-up), the model, its last response to its exit (session end); `spans` are the processes' (start, exit) in
    the order of `sessions`."""
    found = dict.fromkeys(PHASES, 0.0)
    for (start, end), session in zip(spans, sessions, strict=True):
        found["session start-up"] += session.first - start
        found["model"] += session.last - session.first
        found["session end"] += end - session.last
    return found


def lines(title: str, phases: Mapping[str, float], bare: Mapping[str, float] | None = None) -> list[str]:
    """A markdown table of the phases (and the bare CLI's, when given), with the orchestrator's share."""
    total = sum(phases.values())
    ours = sum(phases[p] for p in OURS)
    head = ["| phase | AutoBuild | share |" + (" bare CLI |" if bare else ""),
            "|---|---|---|" + ("---|" if bare else "")]
    rows = [f"| {p} | {phases[p]:.2f} s | {phases[p] / total:.0%} |"
            + (f" {bare[p]:.2f} s |" if bare else "") for p in PHASES if phases[p] or (bare and bare[p])]
    return [title, "", *head, *rows,
            f"| all | {total:.2f} s | outside the model: {ours:.2f} s |"
            + (f" {sum(bare.values()):.2f} s |" if bare else ""), ""]


class TimedRun(Protocol):
    """What overhead_bench.Run has of a run: its repo, the model's sessions, its process's start and exit."""

    @property
    def repo(self) -> Path: ...
    @property
    def sessions(self) -> Sequence[ModelSession]: ...
    @property
    def started(self) -> float: ...
    @property
    def ended(self) -> float: ...


def row_phases(run: TimedRun, plan: Mapping[str, Any], bare: Sequence[tuple[ModelSession, float, float]],
               ) -> dict[str, dict[str, float]]:
    """`phases`: per task, each phase's mean over the run's tasks (start-up and end are the run's, once);
    `bare_phases`: the bare CLI's per task (`bare` as overhead_bench.run_bare's `spans` fills it)."""
    timelines = read_timelines(run.repo / ".autobuild" / "runs" / str(plan["id"]), plan, run.sessions)
    found = mean_task_phases(timelines)
    found["start-up"] = min(t.ready for t in timelines) - run.started
    found["end"] = run.ended - max(t.merged for t in timelines)
    tasks = max(len(plan["tasks"]), 1)
    replayed = bare_phases([(start, end) for _, start, end in bare], [session for session, _, _ in bare])
    return {"phases": found, "bare_phases": {phase: seconds / tasks for phase, seconds in replayed.items()}}


def concurrency_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """overhead_bench's rows' phase tables."""
    return [line for row in rows for line in lines(
        f"Where the time goes at concurrency {row['parallel']}, per task (the run's own timeline; start-up and end"
        f" are the run's, once; the bare CLI under our Bash sandbox beside it; load {row['load']:.1f}):",
        row["phases"], row["bare_phases"])]
