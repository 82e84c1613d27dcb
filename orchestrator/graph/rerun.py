"""A finished feature's way on: which of its tasks `resume` runs again (and `run TASK` for one task), what the
named ones may be, the input of such a run, and what the feature's status counted before a run starts (the
live footer's start)."""

from __future__ import annotations

from typing import Protocol

from orchestrator.errors import InputError
from orchestrator.facts import SUCCESS, TaskResult
from orchestrator.graph.state import FeatureInput
from orchestrator.plan.model import FeaturePlan
from orchestrator.settings import RunSettings
from orchestrator.store import inspection, outcomes
from orchestrator.store.checkpoints import CheckpointStore


class RunPlan(Protocol):
    """What is read here of the runner's `RunPlan` (which imports this module)."""

    settings: RunSettings
    plan: FeaturePlan
    store: CheckpointStore
    thread_id: str
    only_task: str | None
    base_branch: str


RERUN: frozenset[str] = frozenset({"failed", "skipped", "conflict", "error", "cancelled"})
"""Outcomes `resume` of a finished feature runs again by itself. Blocked and aborted tasks wait for a person (a
blocker to lift, a budget to raise) and run again only when named: `resume FEAT-001 TASK-004`."""


def done(result: TaskResult | None) -> bool:
    return result is not None and result.get("status") in SUCCESS and bool(result.get("merged"))


def rerun_plan(run_plan: RunPlan) -> dict[str, str]:
    """What a new run of a finished thread runs, each task with why, in plan order: for a feature, its failed,
    skipped, conflicted and errored tasks and the ones named, with their dependents; a task whose dependency
    stays unsettled is left out (it would only be skipped again). For `run TASK`, the task unless it is done.
    Empty: nothing to run (read-only)."""
    plan = run_plan.plan
    results = outcomes.truth(run_plan.store, plan.id).outcomes()

    def why(task_id: str) -> str:
        return str((results.get(task_id) or {}).get("status") or "not run")

    if run_plan.only_task:
        return {} if done(results.get(run_plan.only_task)) else {run_plan.only_task: why(run_plan.only_task)}
    named = set(run_plan.settings.rerun)
    chosen = {t: why(t) for t in plan.task_ids()
              if not done(results.get(t)) and why(t) != "replaced" and (t in named or why(t) in RERUN | {"not run"})}
    changed = True
    while changed:  # dependents follow; what depends on work that stays unsettled stays as it is
        changed = False
        for task_id in plan.task_ids():
            deps = plan.task(task_id).dependencies
            if task_id not in chosen and not done(results.get(task_id)) and why(task_id) != "replaced" and any(
                    dep in chosen for dep in deps):
                chosen[task_id], changed = f"{why(task_id)}, after {next(d for d in deps if d in chosen)}", True
            elif task_id in chosen and any(dep not in chosen and not done(results.get(dep)) for dep in deps):
                del chosen[task_id]
                changed = True
    return {t: chosen[t] for t in plan.task_ids() if t in chosen}


def not_done(results: dict[str, TaskResult], order: list[str]) -> dict[str, str] | None:
    """A feature's first run after `run TASK` ones: its tasks not done yet, with what they came to (None: no
    task is done, the whole feature runs)."""
    if not any(done(results.get(t)) for t in order):
        return None
    return {t: str((results.get(t) or {}).get("status") or "not run") for t in order if not done(results.get(t))}


def planned_rerun(run_plan: RunPlan) -> dict[str, str] | None:
    """What this command will run of a thread that finished earlier, or of a feature whose tasks `run TASK` runs
    did in part (None: a plain run or resume): `rerun_plan` for `resume` and `run TASK` (`run FEAT` only reports
    a finished feature), `not_done` for the feature's first run."""
    if run_plan.settings.fresh or not run_plan.store.exists():
        return None
    if not outcomes.thread_finished(run_plan.store, run_plan.thread_id):
        known = outcomes.truth(run_plan.store, run_plan.plan.id)
        if run_plan.thread_id in known.threads:  # its own run, unfinished: resumed as it is
            return None
        if run_plan.only_task:  # `run TASK` of a task another run got done runs nothing (runner._starting)
            return {} if done(known.result_of(run_plan.only_task)) else None
        return not_done(known.outcomes(), run_plan.plan.task_ids())
    return rerun_plan(run_plan) if run_plan.settings.resume_only or run_plan.only_task else {}


def check_named(run_plan: RunPlan, known: bool) -> None:
    """`resume FEAT-001 TASK-004`: tasks of this plan that a finished run has not done yet."""
    named = run_plan.settings.rerun
    if not named:
        return
    plan = run_plan.plan
    if run_plan.only_task:
        raise InputError(f"name the tasks to run again after the feature (`resume {plan.id} {' '.join(named)}`)")
    unknown = [t for t in named if t not in plan.task_ids()]
    if unknown:
        raise InputError(f"{plan.id} has no task {', '.join(unknown)}: tasks are {', '.join(plan.task_ids())}")
    if known and not outcomes.thread_finished(run_plan.store, run_plan.thread_id):
        raise InputError(f"{plan.id}'s run has not finished: `resume {plan.id}` continues it first; name tasks to"
                         " run again once it has")
    results = outcomes.truth(run_plan.store, plan.id).outcomes()
    finished = [t for t in named if done(results.get(t))]
    if finished:
        raise InputError(f"{', '.join(finished)} already approved and merged: nothing to run again (`review {plan.id}`"
                         f" shows the work, `land {plan.id}` lands it)")


def spent_before(run_plan: RunPlan) -> float:
    """What `status` counts for the feature before this run's new sessions: every attempt of every task (a task
    run again starts a new attempt beside its old ones). The live footer adds the new sessions to this, so it
    shows what status shows."""
    if not run_plan.store.exists():
        return 0.0
    try:
        table = inspection.feature_status(run_plan.store, run_plan.plan)
    except InputError:
        return 0.0
    return round(sum(float(row["cost_usd"]) for row in table["tasks"]), 6)


def new_input(run_plan: RunPlan, rerun: dict[str, str]) -> FeatureInput:
    """A new run of the thread: the whole feature, the tasks `rerun_plan` chose, or one task; with the latest
    results of the plan's other tasks (`earlier`: for skips and for the feature report) and what every task's
    attempts so far cost (`spent`: the report's costs count them all)."""
    settings = run_plan.settings
    graph_input = FeatureInput(repo=str(settings.repo), target=settings.target, base_branch=run_plan.base_branch)
    if settings.plan is not None:
        graph_input["plan"] = str(settings.plan)
    if rerun:
        graph_input["rerun"] = list(rerun)
    if rerun or run_plan.only_task:
        running = set(rerun) | {run_plan.only_task}
        known = outcomes.truth(run_plan.store, run_plan.plan.id)
        graph_input["earlier"] = {t: r for t, r in known.outcomes().items() if t not in running}
        if answers := {t: dict(r["answers"]) for t, r in known.outcomes().items() if t in running and r.get("answers")}:
            graph_input["answers"] = answers  # nothing a person answered is asked again
        if spent := {t: usd for t, usd in known.spent.items() if usd}:  # the feature report counts every attempt
            graph_input["spent"] = spent
            graph_input["spent_turns"] = {t: turns for t, turns in known.spent_turns.items() if turns}
    return graph_input


def fresh_threads(run_plan: RunPlan) -> list[str]:
    """What `--fresh` forgets: the thread; for the whole feature also its `run TASK` threads, whose work is on the
    branch it sets aside (left in the store, their results would still count as the tasks' latest)."""
    if run_plan.only_task or not run_plan.store.exists():
        return [run_plan.thread_id]
    with run_plan.store.reader() as reader:
        return [run_plan.thread_id, *(t for t in outcomes.feature_threads(reader, run_plan.plan.id)
                                      if t != run_plan.thread_id)]
