"""A task replaced by smaller ones (`--replan`): the plan a run works from after a replan, and the replacements a
run recorded. The plan file is never rewritten: a run keeps its replacements in the checkpoint, and readers
(`status`, `graph`, `show`, land) apply them to the plan they load, so everyone sees the same tasks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from orchestrator.errors import PlanError
from orchestrator.plan.model import FeaturePlan, TaskSpec, parse_plan

MARK = "replan_of"
"""The key that marks a replan's recorded outcome (a checkpointed task return value)."""


def replacement_ids(task_id: str, round_: int, count: int) -> list[str]:
    """`TASK-003-R1-1`, `TASK-003-R1-2`, …: the replaced task's id, the replan round, the new task's number."""
    return [f"{task_id}-R{round_}-{number}" for number in range(1, count + 1)]


def replan_round(task_id: str) -> int:
    """How many replans made this task: 0 for a task of the plan file, 1 for `TASK-003-R1-2`, …"""
    return task_id.count("-R")


def replace_task(plan: FeaturePlan, task_id: str, new_tasks: list[dict[str, Any]]) -> FeaturePlan:
    """`plan` with `task_id` replaced by `new_tasks` (final ids and dependencies), validated like any plan. The
    replaced task stays (it ran, and shows as `replaced`) but nothing depends on it any more: its dependents
    depend on every new task instead. Explicit parallel groups give way to computed ones."""
    data = plan.model_dump(mode="json", exclude_none=True)
    data.pop("orchestration", None)
    new_ids = [str(task["id"]) for task in new_tasks]
    tasks: list[dict[str, Any]] = []
    for task in data["tasks"]:
        dependencies = [str(d) for d in task.get("dependencies") or []]
        if task_id in dependencies:
            task["dependencies"] = [d for d in dependencies if d != task_id] + [n for n in new_ids
                                                                                if n not in dependencies]
        tasks.append(task)
        if task["id"] == task_id:
            tasks.extend(new_tasks)
    if len(tasks) == len(data["tasks"]):
        raise PlanError(f"{plan.id} has no task {task_id} to replace")
    data["tasks"] = tasks
    return parse_plan(data, f"the replan of {task_id}")


def adopt(plan: FeaturePlan, replanned: FeaturePlan) -> None:
    """Make `plan` (the object the run shares) the replanned plan, in place."""
    plan.tasks[:] = replanned.tasks
    plan.orchestration.parallel_groups = None


def recorded(values: Iterable[Any]) -> list[Mapping[str, Any]]:
    """The accepted replans among checkpointed task return values, in the order they were made."""
    return [value for value in values if isinstance(value, Mapping) and value.get(MARK) and value.get("tasks")]


def with_replacements(plan: FeaturePlan, replans: Iterable[Mapping[str, Any]]) -> FeaturePlan:
    """The plan a run worked from: `plan` with its recorded replans applied (a reader's view; `plan` itself is
    left as loaded). A replan that no longer applies (the plan was edited since) is skipped."""
    current = plan
    for replan in replans:
        try:
            current = replace_task(current, str(replan[MARK]), [dict(t) for t in replan["tasks"]])
        except PlanError:
            continue
    return current


def replaced_by(plan: FeaturePlan, task_id: str) -> list[TaskSpec]:
    """The tasks that replaced `task_id` in a replanned plan (none when it was not replaced)."""
    prefix = f"{task_id}-R{replan_round(task_id) + 1}-"
    return [task for task in plan.tasks if task.id.startswith(prefix) and "-R" not in task.id[len(prefix):]]
