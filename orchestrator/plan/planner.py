"""`plan "description"`: a planner session submits a plan; we validate, regroup, renumber, then write files."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agents import SessionLimits, SessionSettings, run_planner
from orchestrator.errors import GateUnusableError, PlanError
from orchestrator.events import EventSink, event_dict
from orchestrator.gate import GateRequest, Gates
from orchestrator.plan.model import FeaturePlan, parse_plan
from orchestrator.plan.replacement import replace_task, replacement_ids
from orchestrator.plan.rules import compute_groups
from orchestrator.repo import confined
from orchestrator.repo.git import GitRepo

_NUMBERED = re.compile(r"^(FEAT|TASK)-(\d+)$")


@dataclass
class PlanOutcome:
    """What the planner produced: the written plan, or the reasons nothing was written."""

    plan: FeaturePlan | None
    path: Path | None = None
    errors: list[str] = field(default_factory=list)
    cost_usd: float = 0.0
    attempts: int = 0


def next_id(repo: Path, prefix: str) -> str:
    """The next free FEAT-/TASK- number in this repo (plans and task files both count)."""
    used = [0]
    autobuild = repo / ".autobuild"
    for path in [*autobuild.glob("features/*.yaml"), *autobuild.glob("tasks/*.md")]:
        found = _NUMBERED.fullmatch(path.stem)
        if found and found.group(1) == prefix:
            used.append(int(found.group(2)))
        if path.suffix == ".yaml" and prefix == "TASK":
            used.extend(_task_numbers(path))
    return f"{prefix}-{max(used) + 1:03d}"


def _task_numbers(plan_file: Path) -> list[int]:
    try:
        data = yaml.safe_load(plan_file.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, OSError):
        return []
    numbers = []
    for task in data.get("tasks", []) if isinstance(data, dict) else []:
        found = _NUMBERED.fullmatch(str(task.get("id", ""))) if isinstance(task, dict) else None
        if found and found.group(1) == "TASK":
            numbers.append(int(found.group(2)))
    return numbers


def normalize(submitted: dict[str, Any], feature_id: str, first_task: int) -> dict[str, Any]:
    """Our rules over the model's: our feature id, fresh task ids, complexity kept in 1-10, no groups."""
    data = dict(submitted)
    data.pop("orchestration", None)  # groups are always computed from dependencies
    data.pop("task_id", None)
    data["id"] = feature_id
    data.setdefault("status", "planned")
    tasks = [dict(t) for t in data.get("tasks", []) if isinstance(t, dict)]
    renamed = {str(t.get("id")): f"TASK-{first_task + n:03d}" for n, t in enumerate(tasks)}
    for task in tasks:
        task["id"] = renamed[str(task.get("id"))]
        task["dependencies"] = [renamed.get(str(d), str(d)) for d in task.get("dependencies", []) or []]
        if isinstance(task.get("complexity"), int | float) and not isinstance(task.get("complexity"), bool):
            task["complexity"] = min(10, max(1, round(task["complexity"])))
    data["tasks"] = tasks
    complexities = [t["complexity"] for t in tasks if isinstance(t.get("complexity"), int)]
    if isinstance(data.get("complexity"), int | float) and not isinstance(data.get("complexity"), bool):
        data["complexity"] = min(10, max(1, round(data["complexity"])))
    elif complexities:
        data["complexity"] = max(complexities)
    data["estimated_tasks"] = len(tasks)
    return data


def _session_events(emit: EventSink, feature_id: str) -> Callable[[dict[str, Any]], None]:
    """The planner session's plain-dict events (agents/), made Events: versioned, timed, schema-valid."""

    def forward(data: dict[str, Any]) -> None:
        fields = {key: value for key, value in data.items() if key not in ("event", "feature")}
        emit(event_dict(data["event"], feature=feature_id, **fields))

    return forward


async def make_plan(repo: Path, description: str, *, feature_id: str | None, model: str | None,
                    cli_path: str | None, emit: EventSink) -> PlanOutcome:
    """Run the planner (once more with the errors if its plan is invalid) and write the plan if valid."""
    feature_id = feature_id or next_id(repo, "FEAT")
    first_task = int(next_id(repo, "TASK").split("-")[1])
    settings = SessionSettings(model=model, cli_path=cli_path, on_event=_session_events(emit, feature_id),
                               limits=SessionLimits(session_timeout_s=1800, idle_timeout_s=600),
                               trace_metadata={"feature_id": feature_id})
    outcome = PlanOutcome(plan=None)
    errors: list[str] = []
    for attempt in (1, 2):
        outcome.attempts = attempt
        # No transcript file: nothing may land in the repo unless the plan is valid.
        result = await run_planner(description, feature_id=feature_id, repo=repo, attempt=attempt, errors=errors,
                                   settings=settings)
        outcome.cost_usd += result.cost_usd
        if result.status != "success" or result.report is None:
            errors = [f"the planner session ended without submit_plan ({result.status})"]
            continue
        data = normalize(result.report, feature_id, first_task)
        try:
            plan = parse_plan(data, "submitted plan")
        except PlanError as exc:
            errors = [str(exc)]
            emit(event_dict("plan_invalid", attempt=attempt, error=str(exc)))
            continue
        problem = await gate_problem(repo, plan)
        if problem and attempt == 1:
            errors = [problem]
            emit(event_dict("plan_invalid", attempt=attempt, error=problem))
            continue
        if problem:
            # Asked once already: a verify that can't run would stop every run of this plan, so it is left
            # out and the run's gate is the repo's detected test command (`validate` shows which).
            emit(event_dict("plan_warning", attempt=attempt, error=f"{problem}; verify left out of the plan"))
            plan.verify = None
        outcome.plan = plan
        outcome.path = write_plan(repo, plan)
        return outcome
    outcome.errors = errors
    return outcome


async def gate_problem(repo: Path, plan: FeaturePlan) -> str | None:
    """Why the plan's `verify` can't gate on the base (run there as a run would, in a throwaway worktree),
    or None when it runs or the plan names none."""
    if not plan.verify:
        return None
    git = GitRepo(repo)
    try:
        request = GateRequest(plan_verify=plan.verify, plan_setup=plan.setup, repairs_base=plan.repairs_base())
        await Gates(git, request).check_base(plan.id, git.rev(plan.base_branch or "HEAD"))
    except GateUnusableError as exc:
        return f"the plan's verify `{plan.verify}` does not run on the base: {exc.reason}; propose one that does"
    return None


def write_plan(repo: Path, plan: FeaturePlan) -> Path:
    """`.autobuild/features/<ID>.yaml` with computed groups, plus `.autobuild/tasks/<TASK>.md` per task."""
    data = plan.model_dump(mode="json", exclude_none=True, exclude={"orchestration"})
    descriptions = {task["id"]: task.pop("description", "") for task in data["tasks"]}
    data["orchestration"] = {"parallel_groups": compute_groups(plan.tasks)}
    for task in plan.tasks:
        # The body is added to the task's requirements when the plan is loaded, so it holds only the
        # planner's free-text description; requirements and criteria live in the plan itself.
        front = yaml.safe_dump({"feature": plan.id, "task": task.id, "name": task.name,
                                "complexity": task.complexity, "dependencies": task.dependencies}, sort_keys=False)
        text = f"---\n{front}---\n{descriptions.get(task.id) or ''}\n"
        # Through the resolver: a committed `.autobuild/tasks -> ~` can't take the file (repo/confined.py).
        confined.write_under(repo, f".autobuild/tasks/{task.id}.md", text, "task file")
    return confined.write_under(repo, f".autobuild/features/{plan.id}.yaml",
                                yaml.safe_dump(data, sort_keys=False, allow_unicode=True), "plan")


_REPLACEMENT_FIELDS = ("name", "complexity", "requirements", "acceptance_criteria", "files", "verify", "description",
                       "acceptance_tests")
MAX_REPLACEMENT_TASKS = 8


def replacement_plan(plan: FeaturePlan, task_id: str, submitted: Any, round_: int) -> tuple[FeaturePlan,
                                                                                             list[dict[str, Any]]]:
    """The replan entry point: the planner's proposed tasks for `task_id` given our ids (`TASK-003-R1-1`, …),
    their local dependencies renamed, the replaced task's own dependencies added, and the whole plan validated
    with them (unknown ids, cycles, bad fields: PlanError naming the problem). Returns the replanned plan and
    the new tasks as recorded."""
    proposed = submitted.get("tasks") if isinstance(submitted, dict) else None
    if not isinstance(proposed, list) or not proposed or not all(isinstance(t, dict) for t in proposed):
        raise PlanError("the replan proposed no tasks: submit `tasks`, a list of task objects")
    if len(proposed) > MAX_REPLACEMENT_TASKS:
        raise PlanError(f"the replan proposed {len(proposed)} tasks: at most {MAX_REPLACEMENT_TASKS}")
    new_ids = replacement_ids(task_id, round_, len(proposed))
    local = {str(task.get("id", number)): new_id
             for number, (task, new_id) in enumerate(zip(proposed, new_ids, strict=True), 1)}
    replaced = plan.task(task_id)
    inherited = list(replaced.dependencies)
    # How the replaced task ran is how its replacements run: its own attempts (and their models), if it had them.
    runs_as = {key: value for key, value in (("attempts", replaced.attempts),
                                             ("attempt_models", list(replaced.attempt_models))) if value}
    tasks = []
    for task, new_id in zip(proposed, new_ids, strict=True):
        fields = {key: task[key] for key in _REPLACEMENT_FIELDS if task.get(key) is not None}
        if isinstance(fields.get("complexity"), int | float) and not isinstance(fields["complexity"], bool):
            fields["complexity"] = min(10, max(1, round(fields["complexity"])))
        own = [local.get(str(dep), str(dep)) for dep in task.get("dependencies") or []]
        if task_id in own:
            raise PlanError(f"replacement task {new_id} depends on {task_id}, the task it replaces")
        tasks.append({"id": new_id, **fields, **runs_as,
                      "dependencies": [*inherited, *[d for d in own if d not in inherited]]})
    return replace_task(plan, task_id, tasks), tasks
