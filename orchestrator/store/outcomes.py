"""The one truth about a feature's tasks: each task's latest finished attempt, whichever run made it.

A feature's tasks run in its own thread (`FEAT-001`) and in one-task threads (`run TASK-002` → `FEAT-001:TASK-002`),
all merging into the same feature branch. `status`, `show`, `graph`, `review`, `land`, `run TASK`, `resume` and the
feature report read a task's outcome here, so they tell the same story: the attempt that finished last wins, and
an attempt still running (or waiting, or stopped by an error) shows as such while it is newer than that.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from orchestrator.facts import TaskResult
from orchestrator.store.checkpoints import CheckpointStore, Reader

TASK_NS_MARK = "run_task:"


def next_nodes(values: dict[str, Any]) -> list[str]:
    return sorted(key.removeprefix("branch:to:") for key in values if key.startswith("branch:to:"))


def output_of(values: dict[str, Any]) -> dict[str, Any] | None:
    """The workflow's return value once it finished (the functional API keeps it in `__end__`). A new run of a
    finished thread (`resume` running failed tasks again) keeps the old value there until it ends: pending input
    (`__start__`) says the thread runs, or waits, again."""
    end = values.get("__end__")
    return end if isinstance(end, dict) and "__start__" not in values else None


def task_snapshots(reader: Reader, thread_id: str) -> dict[str, dict[str, Any]]:
    """Latest state of every task subgraph of the thread (including tasks still running), with `_ts` (when it was
    checkpointed), `_next` (the nodes still to run) and `_error` (what stopped it, if something raised)."""
    return _scan(reader, thread_id)[0]


def _attempt_cost(values: dict[str, Any]) -> float:
    """A loop's cost; a picked attempt's landing (graph/attempts.py) counts only what it added (`carried_usd`:
    its attempt's own loop counted the rest), and what cancelled siblings spent that no checkpoint of theirs holds
    (`unsaved_usd`)."""
    cost = float(values.get("cost_usd") or (values.get("result") or {}).get("cost_usd") or 0.0)
    return max(0.0, cost - float(values.get("carried_usd") or 0.0)) + float(values.get("unsaved_usd") or 0.0)


def _attempt_turns(values: dict[str, Any]) -> int:
    turns = int((values.get("result") or {}).get("turns") or values.get("turn") or 0)
    return max(0, turns - int(values.get("carried_turns") or 0))


def _scan(reader: Reader, thread_id: str
          ) -> tuple[dict[str, dict[str, Any]], dict[str, float], dict[str, int]]:
    """`task_snapshots`, and what every attempt of each task in the thread cost, summed. Each attempt is a task
    subgraph of its own (a run again of a finished task starts a new one; a resumed attempt goes on in its own),
    so a task run three times counts three times."""
    snapshots: dict[str, dict[str, Any]] = {}
    spent: dict[str, float] = {}
    turns: dict[str, int] = {}
    for namespace in reader.namespaces(thread_id, TASK_NS_MARK):
        latest = reader.latest(thread_id, namespace)
        if latest is None:
            continue
        values = dict(latest.checkpoint.get("channel_values", {}))
        task_id = values.get("task_id")
        if not task_id:
            continue
        spent[task_id] = spent.get(task_id, 0.0) + _attempt_cost(values)
        turns[task_id] = turns.get(task_id, 0) + _attempt_turns(values)
        if task_id not in snapshots or latest.checkpoint["ts"] > snapshots[task_id]["_ts"]:
            errors = [str(value) for _, channel, value in latest.pending_writes or [] if channel == "__error__"]
            snapshots[task_id] = values | {"_ts": latest.checkpoint["ts"], "_next": next_nodes(values),
                                           "_error": errors[-1] if errors else None, "_thread": thread_id}
    return snapshots, spent, turns


def feature_threads(reader: Reader, feature_id: str, also: tuple[str, ...] = ()) -> list[str]:
    """The feature's own thread and its one-task threads that have checkpoints, the feature's first; `also`: a
    served run's thread (the workers name theirs by id, store/served.py), read as the feature's own."""
    threads = reader.threads()
    own = [t for t in threads if t == feature_id or t in also]
    return own + sorted(t for t in threads if t.startswith(f"{feature_id}:") and t not in own)


def finished(snapshot: dict[str, Any]) -> bool:
    """Did this attempt end (its result recorded and, for an approved task, the merge done)?"""
    result = snapshot.get("result") or {}
    return bool(result) and (bool(result.get("merged")) or not snapshot["_next"])


@dataclass
class Attempt:
    """A task's result in one thread, and when it was recorded (ISO time, comparable as text)."""

    result: TaskResult
    ts: str
    thread: str


@dataclass
class FeatureTruth:
    """What a feature's threads say about its tasks."""

    results: dict[str, Attempt]
    """Each task's latest finished attempt."""
    live: dict[str, dict[str, Any]]
    """Each task's latest snapshot when it is newer than that attempt and not finished: running, waiting for an
    answer, or stopped by an error (resumable)."""
    threads: list[str]
    snapshots: dict[str, dict[str, Any]]
    """Each task's latest snapshot in any of the threads (its last review, turn and cost so far)."""
    spent: dict[str, float] = field(default_factory=dict)
    """What each task cost over every attempt in the feature's threads (finished, running or stopped): what
    `status`, `show`, the reports, `stats` and the live footer count."""
    spent_turns: dict[str, int] = field(default_factory=dict)
    """The turns those attempts took, summed (their receipts' turns)."""

    def result_of(self, task_id: str) -> TaskResult | None:
        attempt = self.results.get(task_id)
        return attempt.result if attempt else None

    def outcomes(self) -> dict[str, TaskResult]:
        return {task_id: attempt.result for task_id, attempt in self.results.items()}


def _thread_attempts(reader: Reader, thread_id: str
                     ) -> tuple[dict[str, Attempt], dict[str, dict[str, Any]], dict[str, float], dict[str, int]]:
    latest = reader.latest(thread_id)
    values = dict(latest.checkpoint.get("channel_values", {})) if latest else {}
    snapshots, spent, turns = _scan(reader, thread_id)
    output = output_of(values)
    attempts: dict[str, Attempt] = {}
    if output is not None:  # results the run carried over from earlier attempts keep their own time
        for task_id, result in dict(output.get("results") or {}).items():
            when = snapshots.get(task_id, {}).get("_ts") or (latest.checkpoint["ts"] if latest else "")
            attempts[task_id] = Attempt(result, str(when), thread_id)
    for task_id, snap in snapshots.items():
        if finished(snap) and (task_id not in attempts or snap["_ts"] > attempts[task_id].ts):
            attempts[task_id] = Attempt(snap["result"], str(snap["_ts"]), thread_id)
    return attempts, snapshots, spent, turns


def read_truth(reader: Reader, feature_id: str, also: tuple[str, ...] = ()) -> FeatureTruth:
    """Every task's latest finished attempt across the feature's threads (and `also`'s), and what runs now."""
    results: dict[str, Attempt] = {}
    latest_snaps: dict[str, dict[str, Any]] = {}
    spent: dict[str, float] = {}
    spent_turns: dict[str, int] = {}
    threads = feature_threads(reader, feature_id, also)
    for thread_id in threads:
        attempts, snapshots, costs, turns = _thread_attempts(reader, thread_id)
        for task_id, cost in costs.items():
            spent[task_id] = spent.get(task_id, 0.0) + cost
            spent_turns[task_id] = spent_turns.get(task_id, 0) + turns.get(task_id, 0)
        for task_id, attempt in attempts.items():
            if task_id not in results or attempt.ts >= results[task_id].ts:
                results[task_id] = attempt
        for task_id, snap in snapshots.items():
            if task_id not in latest_snaps or snap["_ts"] > latest_snaps[task_id]["_ts"]:
                latest_snaps[task_id] = snap
    live = {task_id: snap for task_id, snap in latest_snaps.items()
            if not finished(snap) and (task_id not in results or snap["_ts"] > results[task_id].ts)}
    for task_id, attempt in results.items():
        # A result whose attempt's thread is gone (`--fresh` of a one-task run) counts its own cost; a result of
        # several attempts counts each one's whole cost, a cancelled sibling's sessions cut short included, which
        # its subgraph's last checkpoint may not hold.
        spent[task_id] = max(spent.get(task_id, 0.0), _attempt_cost({"result": attempt.result}))
        spent_turns.setdefault(task_id, _attempt_turns({"result": attempt.result}))
    return FeatureTruth(results, live, threads, latest_snaps, {t: round(usd, 6) for t, usd in spent.items()},
                        spent_turns)


def truth(store: CheckpointStore, feature_id: str) -> FeatureTruth:
    """`read_truth` through a read-only connection (an empty truth when the store does not exist yet)."""
    if not store.exists():
        return FeatureTruth({}, {}, [], {})
    with store.reader() as reader:
        return read_truth(reader, feature_id)


def thread_finished(store: CheckpointStore, thread_id: str) -> bool:
    """Did the thread's last run end (not running, nor waiting, nor interrupted)? False when it has none."""
    if not store.exists():
        return False
    with store.reader() as reader:
        latest = reader.latest(thread_id)
    return latest is not None and output_of(dict(latest.checkpoint.get("channel_values", {}))) is not None
