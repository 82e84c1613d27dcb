"""Feature plan model: loads `.autobuild/features/<ID>.yaml` and validates it per DESIGN §5."""

from __future__ import annotations

import graphlib
import hashlib
import re
import unicodedata
from datetime import datetime
from fnmatch import fnmatch
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator

from orchestrator.errors import PlanError

MAX_PLAN_BYTES = 1_000_000
MAX_YAML_ALIASES = 100
# libyaml when the wheel has it (it does on the platforms we ship for); the pure-Python loader otherwise.
_SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_PLAN_NODES = 200_000
ID_PATTERN = r"^[A-Za-z0-9_-]+$"
_ID_RE = re.compile(ID_PATTERN)
Identifier = Annotated[str, StringConstraints(pattern=ID_PATTERN, min_length=1, max_length=64)]
Complexity = Annotated[int, Field(ge=1, le=10)]


def _visible(text: str) -> str:
    """Control characters (terminal escapes included) become visible `\\x1b`-style text; newlines and tabs stay."""
    return "".join(ch if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cf") else f"\\x{ord(ch):02x}"
                   if ord(ch) < 0x100 else f"\\u{ord(ch):04x}" for ch in text)


def _escape_tree(data: Any) -> Any:
    """Every string in parsed plan data, escaped (iteratively, with a bound on the expanded size)."""
    budget = MAX_PLAN_NODES
    root: list[Any] = [data]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        container, key = stack.pop()
        budget -= 1
        if budget < 0:
            raise PlanError(f"the plan expands to more than {MAX_PLAN_NODES} values: it is too large to be a plan")
        value = container[key]
        if isinstance(value, str):
            container[key] = _visible(value)
        elif isinstance(value, dict):
            copy = dict(value)
            container[key] = copy
            stack.extend((copy, k) for k in copy)
        elif isinstance(value, list):
            items = list(value)
            container[key] = items
            stack.extend((items, i) for i in range(len(items)))
    return root[0]


def _not_blank(value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise ValueError("must not be empty or whitespace: give a command, or leave the field out")
    return value


NonBlank = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]


class TaskSpec(BaseModel):
    """One task of a feature plan."""

    model_config = ConfigDict(extra="allow", strict=False)

    id: Identifier
    name: NonBlank
    complexity: Complexity = 5
    dependencies: list[Identifier] = Field(default_factory=list)
    status: str = "pending"
    requirements: list[str] = Field(default_factory=list)
    acceptance_criteria: list[str] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)
    acceptance_tests: list[str] = Field(default_factory=list)
    verify: str | None = None
    budget_usd: float | None = Field(default=None, gt=0)
    description: str = ""

    @field_validator("files", "acceptance_tests")
    @classmethod
    def _relative_paths(cls, paths: list[str]) -> list[str]:
        for path in paths:
            if path.startswith("/") or ".." in path.split("/"):
                raise ValueError(f"{path!r} must be a path inside the repo (relative, no '..')")
        return paths

    _verify_not_blank = field_validator("verify")(_not_blank)

    @field_validator("complexity", mode="before")
    @classmethod
    def _int_not_bool(cls, value: Any) -> Any:
        # YAML `true` would otherwise pass as complexity 1.
        if isinstance(value, bool):
            raise ValueError("must be an integer from 1 to 10")
        return value


class Orchestration(BaseModel):
    """Optional explicit grouping of tasks into parallel groups."""

    model_config = ConfigDict(extra="allow")

    parallel_groups: list[list[Identifier]] | None = None


class FeaturePlan(BaseModel):
    """A feature: its tasks, their dependencies and the order groups run in."""

    model_config = ConfigDict(extra="allow")

    id: Identifier
    name: NonBlank
    description: str = ""
    created: datetime | str | None = None
    status: Literal["planned", "in_progress", "completed", "failed"] = "planned"
    complexity: Complexity | None = None
    estimated_tasks: int | None = None
    base_branch: str | None = None
    verify: str | None = None
    setup: str | None = None
    tasks: list[TaskSpec] = Field(min_length=1)
    orchestration: Orchestration = Field(default_factory=Orchestration)

    _verify_not_blank = field_validator("verify", "setup")(_not_blank)

    def task(self, task_id: str) -> TaskSpec:
        """The task with this id (KeyError when absent)."""
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)

    def task_ids(self) -> list[str]:
        return [task.id for task in self.tasks]

    def groups(self) -> list[list[str]]:
        """The parallel groups: explicit ones when given (already validated), else computed."""
        if self.orchestration.parallel_groups:
            return [list(group) for group in self.orchestration.parallel_groups]
        return compute_groups(self.tasks)


def compute_groups(tasks: list[TaskSpec]) -> list[list[str]]:
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


def _find_cycle(tasks: list[TaskSpec]) -> list[str] | None:
    try:
        graphlib.TopologicalSorter({task.id: task.dependencies for task in tasks}).prepare()
    except graphlib.CycleError as exc:
        return [str(node) for node in reversed(exc.args[1])]
    return None


def check_consistency(plan: FeaturePlan) -> None:
    """Cross-field rules pydantic can't express: ids, dependencies, cycles, groups."""
    ids = _check_ids(plan.tasks)
    _check_dependencies(plan.tasks, ids)
    if plan.orchestration.parallel_groups is not None:
        _check_groups(plan.tasks, ids, plan.orchestration.parallel_groups)


def _check_ids(tasks: list[TaskSpec]) -> set[str]:
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise PlanError(f"duplicate task id {task.id}: every task needs its own id")
        seen.add(task.id)
    return seen


def _check_dependencies(tasks: list[TaskSpec], ids: set[str]) -> None:
    for task in tasks:
        for dep in task.dependencies:
            if dep == task.id:
                raise PlanError(f"task {task.id} depends on itself: remove it from its dependencies")
            if dep not in ids:
                raise PlanError(f"task {task.id} depends on unknown task {dep}: fix the id or add the task")
    cycle = _find_cycle(tasks)
    if cycle:
        raise PlanError(f"dependency cycle: {' -> '.join(cycle)}: break one of these dependencies")


def _check_groups(tasks: list[TaskSpec], ids: set[str], groups: list[list[str]]) -> None:
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


def _describe(error: ValidationError, data: Any) -> str:
    first = error.errors()[0]
    parts: list[str] = []
    node = data
    for loc in first["loc"]:
        if isinstance(loc, int) and isinstance(node, list) and loc < len(node):
            item = node[loc]
            label = item.get("id") if isinstance(item, dict) else None
            parts.append(f"[{label or loc}]")
            node = item
        else:
            parts.append(f".{loc}" if parts else str(loc))
            node = node.get(loc) if isinstance(node, dict) else None
    where = "".join(parts) or "plan"
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "string_pattern_mismatch":
        message = "ids may use only letters, digits, '-' and '_'"
    elif first["type"] == "too_short" and first["loc"] == ("tasks",):
        message = "a plan needs at least one task"
    got = repr(first.get("input"))
    return f"{where}: {message} (got {got[:120] + '…' if len(got) > 120 else got})"


def parse_plan(data: Any, source: str) -> FeaturePlan:
    """Validate already-parsed plan data; raise PlanError with one line naming the problem."""
    if not isinstance(data, dict):
        raise PlanError(f"{source}: a plan must be a mapping with id, name and tasks")
    try:
        data = _escape_tree(data)
    except PlanError as exc:
        raise PlanError(f"{source}: {exc}") from None
    try:
        plan = FeaturePlan.model_validate(data)
    except ValidationError as exc:
        raise PlanError(f"{source}: {_describe(exc, data)}") from None
    try:
        check_consistency(plan)
    except PlanError as exc:
        raise PlanError(f"{source}: {exc}") from None
    return plan


def check_id(kind: str, value: str) -> str:
    """Reject ids that could escape a path or a branch name (`/`, `..`, spaces)."""
    if not _ID_RE.match(value):
        raise PlanError(f"invalid {kind} id {value!r}: use only letters, digits, '-' and '_'")
    return value


def plan_path(repo: Path, feature_id: str) -> Path:
    """Where the plan of this feature lives."""
    return repo / ".autobuild" / "features" / f"{check_id('feature', feature_id)}.yaml"


def _load_yaml(text: str) -> Any:
    """Parse plan YAML with libyaml's safe loader (a 1,000-task plan loads in milliseconds, not a second),
    refusing alias bombs first: a plan never needs more than a few aliases. Expansion is bounded later, by
    `_escape_tree`."""
    aliases = sum(isinstance(event, yaml.AliasEvent) for event in yaml.parse(text, Loader=_SAFE_LOADER))
    if aliases > MAX_YAML_ALIASES:
        raise PlanError(f"{aliases} YAML aliases: a plan has no use for more than {MAX_YAML_ALIASES}")
    return yaml.load(text, Loader=_SAFE_LOADER)


def load_plan(repo: Path, feature_id: str) -> FeaturePlan:
    """Load and validate a feature plan; task files under `.autobuild/tasks/` extend requirements."""
    path = plan_path(repo, feature_id)
    shown = path.relative_to(repo) if path.is_relative_to(repo) else path
    if not path.is_file():
        raise PlanError(f"feature plan not found: {shown}: create it (`plan \"...\"`) or check the id")
    if path.stat().st_size > MAX_PLAN_BYTES:
        raise PlanError(f"{shown}: {path.stat().st_size} bytes is over the {MAX_PLAN_BYTES}-byte limit for a plan")
    try:
        data = _load_yaml(path.read_text(encoding="utf-8"))
    except PlanError as exc:
        raise PlanError(f"{shown}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        raise PlanError(f"{shown}: malformed YAML{line}: fix the syntax") from None
    except UnicodeDecodeError:
        raise PlanError(f"{shown}: not UTF-8 text") from None
    plan = parse_plan(data, str(shown))
    if plan.id != feature_id:
        raise PlanError(f"{shown}: id is {plan.id!r} but the file is named for {feature_id!r}: make them match")
    for task in plan.tasks:
        task_file = repo / ".autobuild" / "tasks" / f"{task.id}.md"
        if task_file.is_file():
            body = _strip_front_matter(task_file.read_text(encoding="utf-8")).strip()
            if body:
                task.description = body
    return plan


def find_feature_of_task(repo: Path, task_id: str) -> FeaturePlan:
    """The plan that contains this task (the CLI's `run TASK-002`)."""
    check_id("task", task_id)
    features = repo / ".autobuild" / "features"
    matches = []
    for path in sorted(features.glob("*.yaml")) if features.is_dir() else []:
        plan = load_plan(repo, path.stem)
        if any(task.id == task_id for task in plan.tasks):
            matches.append(plan)
    if not matches:
        raise PlanError(f"no feature plan under .autobuild/features contains task {task_id}")
    if len(matches) > 1:
        names = ", ".join(plan.id for plan in matches)
        raise PlanError(f"task {task_id} is in several features ({names}): run the feature instead")
    return matches[0]


def _strip_front_matter(text: str) -> str:
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            return text[end + 4 :]
    return text


def unknown_fields(plan: FeaturePlan) -> list[str]:
    """Keys the schema doesn't know (kept, but worth a warning: often a typo)."""
    found = [f"plan.{key}" for key in (plan.model_extra or {})]
    for task in plan.tasks:
        found.extend(f"{task.id}.{key}" for key in (task.model_extra or {}))
    return found


def _scope_prefix(pattern: str) -> str:
    """The literal folder part of a glob (`src/auth/**` -> `src/auth/`)."""
    cut = min((pattern.find(ch) for ch in "*?[" if ch in pattern), default=len(pattern))
    return pattern[:cut]


def _scopes_overlap(first: str, second: str) -> bool:
    a, b = _scope_prefix(first), _scope_prefix(second)
    return a.startswith(b) or b.startswith(a) or fnmatch(a, second) or fnmatch(b, first)


def scope_overlaps(plan: FeaturePlan) -> list[str]:
    """Pairs of tasks in one parallel group whose declared file scopes can touch the same files."""
    found = []
    for number, group in enumerate(plan.groups(), 1):
        tasks = [plan.task(task_id) for task_id in group]
        for i, first in enumerate(tasks):
            for second in tasks[i + 1 :]:
                shared = [f"{a} ~ {b}" for a in first.files for b in second.files if _scopes_overlap(a, b)]
                if shared:
                    found.append(f"group {number}: {first.id} and {second.id} may write the same files"
                                 f" ({'; '.join(shared)})")
    return found


def load_target(repo: Path, target: str) -> tuple[FeaturePlan, str | None]:
    """`FEAT-001` → its plan; `TASK-002` → the plan holding it, and the task (the single-task run)."""
    if plan_path(repo, target).is_file():
        return load_plan(repo, target), None
    if (repo / ".autobuild" / "features").is_dir():
        try:
            return find_feature_of_task(repo, target), target
        except PlanError:
            pass
    return load_plan(repo, target), None  # raises "feature plan not found" naming the path


def plan_digest(plan: FeaturePlan) -> str:
    """What a run was started from: any change to the plan (or its task files) changes it."""
    return hashlib.sha256(plan.model_dump_json().encode()).hexdigest()[:16]
