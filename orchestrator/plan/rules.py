"""The plan's cross-field rules pydantic can't express: unique ids, known dependencies, no cycles, groups that
agree with the dependencies; and the groups computed from the dependencies when a plan gives none."""

from __future__ import annotations

import graphlib
from collections.abc import Sequence
from typing import Protocol

from orchestrator.errors import PlanError


class TaskSpec(Protocol):
    """What the rules read of a task (the plan model's TaskSpec, or any task-shaped object): no import of the
    model, which calls these rules while it validates."""

    @property
    def id(self) -> str: ...

    @property
    def dependencies(self) -> list[str]: ...


def compute_groups(tasks: Sequence[TaskSpec]) -> list[list[str]]:
    """Topological layers (iterative, any plan size): each group holds the tasks whose dependencies all sit
    in earlier groups, in plan order."""
    sorter = graphlib.TopologicalSorter({task.id: task.dependencies for task in tasks})
    sorter.prepare()
    position = {task.id: index for index, task in enumerate(tasks)}
    groups: list[list[str]] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready(), key=position.__getitem__)
        groups.append(ready)
        sorter.done(*ready)
    return groups


def _find_cycle(tasks: Sequence[TaskSpec]) -> list[str] | None:
    try:
        graphlib.TopologicalSorter({task.id: task.dependencies for task in tasks}).prepare()
    except graphlib.CycleError as exc:
        return [str(node) for node in reversed(exc.args[1])]
    return None


def check_consistency(tasks: Sequence[TaskSpec], parallel_groups: list[list[str]]) -> None:
    """Cross-field rules pydantic can't express: ids, dependencies, cycles, groups."""
    ids = _check_ids(tasks)
    _check_dependencies(tasks, ids)
    if parallel_groups:  # GuardKit writes `[]` for "none given"
        _check_groups(tasks, ids, parallel_groups)


def _check_ids(tasks: Sequence[TaskSpec]) -> set[str]:
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise PlanError(f"duplicate task id {task.id}: every task needs its own id")
        if task.id.startswith("_"):  # our own worktrees under .autobuild/worktrees/<FEAT>/ are _baseline, _land, …
            raise PlanError(f"task id {task.id}: ids starting with _ are reserved for AutoBuild; rename the task")
        seen.add(task.id)
    return seen


def _check_dependencies(tasks: Sequence[TaskSpec], ids: set[str]) -> None:
    for task in tasks:
        for dep in task.dependencies:
            if dep == task.id:
                raise PlanError(f"task {task.id} depends on itself: remove it from its dependencies")
            if dep not in ids:
                raise PlanError(f"task {task.id} depends on unknown task {dep}: fix the id or add the task")
    cycle = _find_cycle(tasks)
    if cycle:
        raise PlanError(f"dependency cycle: {' -> '.join(cycle)}: break one of these dependencies")


def _check_groups(tasks: Sequence[TaskSpec], ids: set[str], groups: list[list[str]]) -> None:
    position: dict[str, int] = {}
    for index, group in enumerate(groups):
        for tid in group:
            if tid not in ids:
                raise PlanError(f"parallel group {index + 1} names unknown task {tid}")
            if tid in position:
                raise PlanError(f"task {tid} appears in more than one parallel group")
            position[tid] = index
    missing = [task.id for task in tasks if task.id not in position]
    if missing:
        raise PlanError(f"tasks missing from parallel_groups: {', '.join(missing)}: add them or drop the groups")
    for task in tasks:
        for dep in task.dependencies:
            if position[dep] == position[task.id]:
                raise PlanError(
                    f"task {task.id} depends on {dep} but both are in parallel group {position[task.id] + 1}:"
                    f" move {task.id} to a later group"
                )
            if position[dep] > position[task.id]:
                raise PlanError(
                    f"task {task.id} (group {position[task.id] + 1}) depends on {dep}, which runs later"
                    f" (group {position[dep] + 1}): reorder the groups"
                )
