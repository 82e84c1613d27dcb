"""Feature plan model: loads `.autobuild/features/<ID>.yaml` (or a plan file where it lies) per DESIGN §5."""

from __future__ import annotations

import hashlib
from datetime import datetime
from fnmatch import fnmatch
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, StringConstraints, ValidationError, field_validator

from orchestrator.errors import InputError, PlanError
from orchestrator.plan.fields import (
    GUARDKIT_GATES,
    GUARDKIT_PLAN_FIELDS,
    GUARDKIT_TASK_FIELDS,
    drop_informational,
    guardkit_notes,
)
from orchestrator.plan.files import (
    check_no_parent,
    escape_tree,
    read_plan_data,
    record_plan_source,
    recorded_feature_ids,
    recorded_plan_source,
    shown,
    task_markdown,
)
from orchestrator.plan.ids import ID_PATTERN, MAX_ID_LENGTH, check_id
from orchestrator.plan.rules import check_consistency, compute_groups
from orchestrator.repo import confined

Identifier = Annotated[str, StringConstraints(pattern=ID_PATTERN, min_length=1, max_length=MAX_ID_LENGTH)]
Complexity = Annotated[int, Field(ge=1, le=10)]
MAX_ATTEMPTS = 8
"""Independent attempts at one task at most (`attempts:`, `--attempts`)."""
Attempts = Annotated[int, Field(ge=1, le=MAX_ATTEMPTS)]
ModelName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100,
                                             pattern=r"^[A-Za-z0-9][A-Za-z0-9._:\[\]/-]*$")]


def _attempts_int(value: Any) -> Any:
    """`attempts: true` or `"3"` is a mistake, not a number: attempts are said as a whole number from 1 to 8."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(f"must be a whole number from 1 to {MAX_ATTEMPTS}")
    return value


def _not_blank(value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise ValueError("must not be empty or whitespace: give a command, or leave the field out")
    return value


TaskKind = Literal["feature", "fix", "refactor", "docs", "test", "chore"]
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
    hidden_tests: bool = False
    """Its `acceptance_tests` can't be read by the agents, only the gate runs them (gate/spec/hidden.py); else
    frozen."""
    repairs_base: bool = False
    """The task repairs a base whose tests never ran (import, collection or build errors): the run is not refused
    for it, and every test the gate runs must pass (nothing is waived as already failing on the base)."""
    verify: str | None = None
    kind: TaskKind = "feature"
    """What the task is: a feature's or fix's new tests must fail on the base's code, a refactor's pass there
    (gate/spec/new_tests.py); docs, test and chore tasks are judged as before."""
    budget_usd: float | None = Field(default=None, gt=0)
    description: str = ""
    file_path: str | None = None
    """The task's markdown, relative to the repo (GuardKit's field): its body joins the brief."""
    attempts: Attempts | None = None
    """Independent player/coach attempts at this task (1-8), over the feature's `attempts` (graph/attempts.py)."""
    attempt_models: list[ModelName] = Field(default_factory=list)
    """Models the attempts' players take in turn, over the feature's `attempt_models`."""

    _attempts_int = field_validator("attempts", mode="before")(_attempts_int)

    @field_validator("files", "acceptance_tests")
    @classmethod
    def _relative_paths(cls, paths: list[str]) -> list[str]:
        for path in paths:
            if path.startswith("/") or ".." in path.split("/"):
                raise ValueError(f"{path!r} must be a path inside the repo (relative, no '..')")
        return paths

    @field_validator("file_path")
    @classmethod
    def _markdown_in_repo(cls, path: str | None) -> str | None:
        return check_no_parent(path.strip()) if path and path.strip() else None

    _verify_not_blank = field_validator("verify")(_not_blank)

    @field_validator("hidden_tests", "repairs_base", mode="before")
    @classmethod
    def _bool_only(cls, value: Any) -> Any:
        # "yes" or 1 would otherwise pass as true: hiding tests is a decision, said as true or false.
        if not isinstance(value, bool):
            raise ValueError("must be true or false")
        return value

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


_NOT_IN_BRANCH = frozenset("~^:?*[\\")


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
    attempts: Attempts | None = None
    """Independent attempts at each task (1-8; default 1); a task's own `attempts` and `--attempts` win."""
    attempt_models: list[ModelName] = Field(default_factory=list)
    """Models the attempts' players take in turn (attempt 1 the first, …); empty: the run's model for all."""

    _verify_not_blank = field_validator("verify", "setup")(_not_blank)
    _attempts_int = field_validator("attempts", mode="before")(_attempts_int)
    _notes: list[str] = PrivateAttr(default_factory=list)

    @field_validator("base_branch")
    @classmethod
    def _plain_branch(cls, name: str | None) -> str | None:
        """A branch name git would take (its rules, checked without git: plans are parsed everywhere), never a
        pattern, a full ref or one of ours: refspecs and commands built from it name that one branch."""
        if name is None:
            return None
        bad = (not name or name.startswith(("-", "/", "refs/", "autobuild/")) or name == "autobuild"
               or name.endswith(("/", ".", ".lock")) or ".." in name or "@{" in name or "//" in name
               or any(ch in _NOT_IN_BRANCH or ord(ch) < 33 or ord(ch) == 127 for ch in name))
        if bad:
            raise ValueError("not a plain branch name (e.g. main): never a pattern, refs/… or autobuild/…")
        return name

    @property
    def notes(self) -> list[str]:
        """Warnings found while loading: informational values ignored, GuardKit fields, missing task files."""
        return self._notes

    def task(self, task_id: str) -> TaskSpec:
        """The task with this id (KeyError when absent)."""
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)

    def task_ids(self) -> list[str]:
        return [task.id for task in self.tasks]

    def repairs_base(self) -> bool:
        """A task of the plan repairs a base whose tests never ran (`repairs_base`)."""
        return any(task.repairs_base for task in self.tasks)

    def groups(self) -> list[list[str]]:
        """The parallel groups: explicit ones when given (already validated), else computed."""
        if self.orchestration.parallel_groups:
            return [list(group) for group in self.orchestration.parallel_groups]
        return compute_groups(self.tasks)


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
    """Validate already-parsed plan data; raise PlanError with one line naming the problem. Informational values
    that don't fit ours (GuardKit's) are dropped with a note instead (`plan.notes`)."""
    if not isinstance(data, dict):
        raise PlanError(f"{source}: a plan must be a mapping with id, name and tasks")
    try:
        data = escape_tree(data)
    except PlanError as exc:
        raise PlanError(f"{source}: {exc}") from None
    notes = guardkit_notes(data)
    while True:
        try:
            plan = FeaturePlan.model_validate(data)
            break
        except ValidationError as exc:
            if not drop_informational(data, exc.errors(), notes):
                raise PlanError(f"{source}: {_describe(exc, data)}") from None
    try:
        check_consistency(plan.tasks, plan.orchestration.parallel_groups or [])
    except PlanError as exc:
        raise PlanError(f"{source}: {exc}") from None
    plan.notes.extend(notes)
    return plan


def plan_path(repo: Path, feature_id: str) -> Path:
    """Where the plan of this feature lives (unless it was run from a plan file elsewhere: `--plan`)."""
    return repo / ".autobuild" / "features" / f"{check_id('feature', feature_id)}.yaml"


def load_plan(repo: Path, feature_id: str) -> FeaturePlan:
    """Load and validate a feature plan: `.autobuild/features/<ID>.yaml`, else the plan file a `--plan` run of
    this feature was started from."""
    path = plan_path(repo, feature_id)
    if not path.is_file():
        source = recorded_plan_source(repo, feature_id)
        if source is not None:
            if not source.is_file():
                raise PlanError(f"{feature_id} was run from {shown(repo, source)}, which is gone: put it back, or"
                                " give --plan PATH")
            return load_plan_file(repo, source, expect_id=feature_id)
    return load_plan_file(repo, path, expect_id=feature_id)


def load_plan_file(repo: Path, path: Path, expect_id: str | None = None) -> FeaturePlan:
    """Load and validate the plan in this file; each task's markdown (`file_path`, then
    `.autobuild/tasks/<ID>.md`) becomes its description, which joins its brief."""
    label = shown(repo, path)
    if path.is_relative_to(repo):  # in the repo: a link in it may not lead the read out (a clone's plan by id)
        try:
            confined.resolve_under(repo, path.relative_to(repo).as_posix(), "plan", git_dir_ok=True)
        except InputError as exc:
            raise PlanError(str(exc)) from None
    plan = parse_plan(read_plan_data(path, label), label)
    if expect_id is not None and plan.id != expect_id:
        raise PlanError(f"{label}: id is {plan.id!r} but the file is named for {expect_id!r}: make them match")
    for task in plan.tasks:
        if task.hidden_tests and not task.acceptance_tests:
            raise PlanError(f"{label}: task {task.id}: hidden_tests is true but acceptance_tests names no file: list"
                            " the hidden tests, or drop hidden_tests")
        for test in task.acceptance_tests:  # a link in the repo may not lead the gate's copy or a revert out of it
            try:
                confined.resolve_under(repo, test, f"{label}: task {task.id}: acceptance_tests")
            except InputError as exc:
                raise PlanError(str(exc)) from None
        bodies = []
        if task.file_path:
            body = task_markdown(repo, task.file_path, f"{label}: task {task.id}: file_path")
            if body is None:
                plan.notes.append(f"{task.id}.file_path {task.file_path} does not exist (GuardKit moves a finished"
                                  " task's file): the task runs from the plan's fields alone")
            bodies.append(body or "")
        own = repo / ".autobuild" / "tasks" / f"{task.id}.md"
        if own.is_file():
            bodies.append(task_markdown(repo, shown(repo, own), f"{label}: task {task.id}") or "")
        if any(bodies):
            task.description = "\n\n".join(body for body in bodies if body)
    return plan


def _feature_ids(repo: Path) -> list[str]:
    features = repo / ".autobuild" / "features"
    own = [path.stem for path in features.glob("*.yaml")] if features.is_dir() else []
    return sorted({*own, *recorded_feature_ids(repo)})


def find_feature_of_task(repo: Path, task_id: str) -> FeaturePlan:
    """The plan that contains this task (the CLI's `run TASK-002`)."""
    check_id("task", task_id)
    matches = []
    for feature_id in _feature_ids(repo):
        plan = load_plan(repo, feature_id)
        if any(task.id == task_id for task in plan.tasks):
            matches.append(plan)
    if not matches:
        raise PlanError(f"no feature plan under .autobuild/features contains task {task_id}")
    if len(matches) > 1:
        names = ", ".join(plan.id for plan in matches)
        raise PlanError(f"task {task_id} is in several features ({names}): run the feature instead")
    return matches[0]


def unknown_fields(plan: FeaturePlan) -> list[str]:
    """Keys the schema doesn't know (kept, but worth a warning: often a typo). GuardKit's own fields are noted
    once in `plan.notes` instead."""
    guardkit = GUARDKIT_PLAN_FIELDS | GUARDKIT_GATES.keys()
    found = [f"plan.{key}" for key in (plan.model_extra or {}) if key not in guardkit]
    for task in plan.tasks:
        found.extend(f"{task.id}.{key}" for key in (task.model_extra or {}) if key not in GUARDKIT_TASK_FIELDS)
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


def load_target(repo: Path, target: str, plan_file: Path | None = None) -> tuple[FeaturePlan, str | None]:
    """`FEAT-001` → its plan; `TASK-002` → the plan holding it, and the task (the single-task run). With a plan
    file (`--plan`; relative to the repo unless absolute) the plan is that file's, and the target, when given,
    must be its id or one of its tasks."""
    if plan_file is not None:
        plan = load_given_plan(repo, plan_file)
        if not target or target == plan.id:
            return plan, None
        if target in plan.task_ids():
            return plan, target
        raise InputError(f"{target} is neither the id of the plan in {shown(repo, repo / plan_file)} ({plan.id})"
                         " nor one of its tasks: give one of those, or no target")
    if not target:
        raise InputError("name a feature (FEAT-001) or a task (TASK-002) to run, or give --plan PATH")
    if plan_path(repo, target).is_file() or recorded_plan_source(repo, target) is not None:
        return load_plan(repo, target), None
    if _feature_ids(repo):
        try:
            return find_feature_of_task(repo, target), target
        except PlanError:
            pass
    return load_plan(repo, target), None  # raises "feature plan not found" naming the path


def load_given_plan(repo: Path, plan_file: Path) -> FeaturePlan:
    """The plan in a file named on the command line or in the served graph's input, wherever it lies. Its id
    must not be taken by another plan under `.autobuild/features/`: the id names the branch and the thread."""
    path = plan_file if plan_file.is_absolute() else repo / plan_file
    plan = load_plan_file(repo, path)
    own = plan_path(repo, plan.id)
    if own.is_file() and own.resolve() != path.resolve():
        raise PlanError(f"{shown(repo, path)} is plan {plan.id}, but {shown(repo, own)} is another plan with that id:"
                        " run that one without --plan, or give one of them another id")
    return plan


def load_named_plan(repo: Path, feature_id: str, plan_file: Path | None) -> FeaturePlan:
    """`validate`'s plan: the feature's, or the file given with --plan (relative to the current directory), whose
    id must be the feature's when one is named too."""
    if plan_file is None:
        if not feature_id:
            raise InputError("name the feature (FEAT-001), or give --plan PATH")
        return load_plan(repo, feature_id)
    path = plan_file.expanduser().resolve()
    plan = load_given_plan(repo, path)
    if feature_id and feature_id != plan.id:
        raise InputError(f"{shown(repo, path)} is plan {plan.id}, not {feature_id}: give its id, or none")
    return plan


def remember_plan_file(repo: Path, plan: FeaturePlan, plan_file: Path) -> None:
    """Record where a run's plan lies when it is not `.autobuild/features/<ID>.yaml`, so later commands find it."""
    path = plan_file if plan_file.is_absolute() else repo / plan_file
    if path.resolve() != plan_path(repo, plan.id).resolve():
        record_plan_source(repo, plan.id, path)


def plan_digest(plan: FeaturePlan) -> str:
    """What a run was started from: any change to the plan (or its task files) changes it. A task's `file_path`
    counts through the markdown it brought (its description), so plans without one keep their digest; so do plans
    whose tasks don't hide their tests, repair the base (`hidden_tests`, `repairs_base` count only when true) or say
    they are features (`kind`). How many attempts a task gets (`attempts`, `attempt_models`) is how it runs, not
    what it is: left out, as `--attempts` is."""
    left_out = {"file_path"} if any(task.hidden_tests for task in plan.tasks) else {"file_path", "hidden_tests"}
    left_out |= {"attempts", "attempt_models"}
    left_out |= set() if any(task.repairs_base for task in plan.tasks) else {"repairs_base"}
    dump = plan.model_dump_json(exclude={"attempts": True, "attempt_models": True,
                                         "tasks": {index: left_out | ({"kind"} if task.kind == "feature" else set())
                                                   for index, task in enumerate(plan.tasks)}})
    return hashlib.sha256(dump.encode()).hexdigest()[:16]
