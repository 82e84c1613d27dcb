"""Plan fields that only inform, and GuardKit's own fields: accepted with a warning, never an error.

GuardKit (whose feature YAML our plan format follows) writes its own values into fields AutoBuild never acts
on: a feature `status` of `paused`, a feature `complexity` past 10, task statuses of `completed` or `failed`,
and its execution state (`execution`, a task's `result`, `turns_completed`, …). Such a value is dropped or kept
aside with a warning; a structural problem (ids, dependencies, groups, a task's complexity, commands) is still
an error.
"""

from __future__ import annotations

from typing import Any

INFORMATIONAL_PLAN_FIELDS = frozenset({"description", "created", "status", "complexity", "estimated_tasks"})
INFORMATIONAL_TASK_FIELDS = frozenset({"status", "description"})
GUARDKIT_PLAN_FIELDS = frozenset({"execution", "preflight_strict", "bootstrap_extras", "evidence_repos", "file_path"})
GUARDKIT_GATES = {"smoke_gates": "GuardKit's smoke gate", "behavioural_oracle": "GuardKit's behavioural oracle"}
GUARDKIT_TASK_FIELDS = frozenset({
    "implementation_mode", "estimated_minutes", "requires_infrastructure", "result", "turns_completed",
    "current_turn", "started_at", "completed_at", "task_type",
})
GUARDKIT_ORCHESTRATION_FIELDS = frozenset({"estimated_duration_minutes", "recommended_parallel"})


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "…"


def drop_informational(data: dict[str, Any], errors: list[Any], notes: list[str]) -> bool:
    """Remove the informational values these validation errors are about, with a note each; False when none
    of the errors is about one (the plan is wrong where it matters)."""
    dropped = False
    for error in errors:
        loc = error["loc"]
        holder: Any = None
        key = label = ""
        if loc and loc[0] in INFORMATIONAL_PLAN_FIELDS:
            holder, key, label = data, loc[0], f"plan.{loc[0]}"
        elif len(loc) >= 3 and loc[0] == "tasks" and isinstance(loc[1], int) and loc[2] in INFORMATIONAL_TASK_FIELDS:
            tasks = data.get("tasks")
            holder = tasks[loc[1]] if isinstance(tasks, list) and loc[1] < len(tasks) else None
            key = loc[2]
            label = f"{holder.get('id') if isinstance(holder, dict) else loc[1]}.{key}"
        if isinstance(holder, dict) and key in holder:
            value = holder.pop(key)
            notes.append(f"{label} {_short(value)} ignored: it is only informational, and AutoBuild's must be"
                         f" {_expected(error)}")
            dropped = True
    return dropped


def _expected(error: Any) -> str:
    message = str(error["msg"]).removeprefix("Input should be ").removeprefix("Value error, ")
    return message[:120]


def guardkit_notes(data: dict[str, Any]) -> list[str]:
    """What a GuardKit plan carries that AutoBuild does not use (one line per kind, not per task)."""
    notes = [f"plan.{key} is {what}, which AutoBuild does not run: give its command as `verify` (or --verify)"
             " to gate with it" for key, what in GUARDKIT_GATES.items() if key in data]
    unused = [f"plan.{key}" for key in sorted(GUARDKIT_PLAN_FIELDS & data.keys()) if key != "file_path"]
    orchestration = data.get("orchestration")
    if isinstance(orchestration, dict):
        unused += [f"orchestration.{key}" for key in sorted(GUARDKIT_ORCHESTRATION_FIELDS & orchestration.keys())]
    tasks = [task for task in data.get("tasks") or [] if isinstance(task, dict)]
    task_keys = sorted({key for task in tasks for key in GUARDKIT_TASK_FIELDS & task.keys()})
    unused += [f"tasks' {key}" for key in task_keys]
    if unused:
        notes.append(f"GuardKit fields AutoBuild does not use (kept, ignored): {', '.join(unused)}")
    statuses = [f"{task.get('id')} {task['status']}" for task in tasks
                if isinstance(task.get("status"), str) and task["status"] != "pending"]
    if statuses:
        shown = ", ".join(statuses[:8]) + (f" and {len(statuses) - 8} more" if len(statuses) > 8 else "")
        notes.append(f"task statuses in the plan are only informational ({shown}): AutoBuild runs every task and"
                     " keeps its own progress in the checkpoints")
    return notes
