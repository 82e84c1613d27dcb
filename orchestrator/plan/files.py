"""Plan files on disk: bounded YAML, plan text kept as text, task markdown and where a `--plan` run's plan lies."""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from orchestrator.errors import InputError, PlanError
from orchestrator.repo import confined
from orchestrator.text import visible

MAX_PLAN_BYTES = 1_000_000
MAX_YAML_ALIASES = 100
MAX_PLAN_NODES = 200_000
MAX_TASK_MARKDOWN_BYTES = 100_000
"""A task's markdown joins every prompt of the task: 100 kB is already ~25k tokens per session."""
# libyaml when the wheel has it (it does on the platforms we ship for); the pure-Python loader otherwise.
_SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n.*?^---[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)
PLAN_SOURCE = "plan-source"
"""`.autobuild/runs/<FEAT>/plan-source`: the plan file a `--plan` run was started from (one path, one line)."""


def escape_tree(data: Any) -> Any:
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
            container[key] = visible(value)
        elif isinstance(value, dict):
            copy = dict(value)
            container[key] = copy
            stack.extend((copy, k) for k in copy)
        elif isinstance(value, list):
            items = list(value)
            container[key] = items
            stack.extend((items, i) for i in range(len(items)))
    return root[0]


def shown(repo: Path, path: Path) -> str:
    """A path as messages show it: relative to the repo when inside it."""
    return str(path.relative_to(repo)) if path.is_relative_to(repo) else str(path)


def _load_yaml(text: str) -> Any:
    """Parse plan YAML with libyaml's safe loader (a 1,000-task plan loads in milliseconds, not a second),
    refusing alias bombs first: a plan never needs more than a few aliases. Expansion is bounded later, by
    `escape_tree`."""
    aliases = sum(isinstance(event, yaml.AliasEvent) for event in yaml.parse(text, Loader=_SAFE_LOADER))
    if aliases > MAX_YAML_ALIASES:
        raise PlanError(f"{aliases} YAML aliases: a plan has no use for more than {MAX_YAML_ALIASES}")
    return yaml.load(text, Loader=_SAFE_LOADER)


def read_plan_data(path: Path, label: str) -> Any:
    """The parsed YAML of a plan file; PlanError (one line, starting with `label`) when it can't be."""
    if not path.is_file():
        raise PlanError(f"feature plan not found: {label}: create it (`plan \"...\"`) or check the id")
    size = path.stat().st_size
    if size > MAX_PLAN_BYTES:
        raise PlanError(f"{label}: {size} bytes is over the {MAX_PLAN_BYTES}-byte limit for a plan")
    try:
        return _load_yaml(path.read_text(encoding="utf-8"))
    except PlanError as exc:
        raise PlanError(f"{label}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        raise PlanError(f"{label}: malformed YAML{line}: fix the syntax") from None
    except UnicodeDecodeError:
        raise PlanError(f"{label}: not UTF-8 text") from None


def strip_front_matter(text: str) -> str:
    """The markdown without its leading `---` YAML block (GuardKit keeps its own task state there)."""
    found = _FRONT_MATTER.match(text)
    return text[found.end():] if found else text


def check_no_parent(path: str) -> str:
    """A markdown path the plan names never climbs (`..`); whether it stays inside the repo is checked on load."""
    if ".." in PurePosixPath(path.replace("\\", "/")).parts:
        raise ValueError(f"{path!r} must be a path inside the repo (relative to it, no '..')")
    return path


def task_markdown(repo: Path, relative: str, label: str) -> str | None:
    """The body of a task's markdown file (relative to the repo; absolute only if inside it), front-matter dropped
    and control characters shown as text, or None when the file does not exist. A path that resolves outside the
    repo (`..`, elsewhere, a symlink), that is not a regular file or that is over the size limit is a PlanError:
    a plan may only hand the agents the repo's own files (repo/confined.py resolves and reads it)."""
    try:
        target = confined.resolve_under(repo, check_no_parent(relative), label, git_dir_ok=True)
        if not os.path.lexists(target):
            return None
        data = confined.read_under(repo, relative, label, limit=MAX_TASK_MARKDOWN_BYTES)
    except ValueError as exc:
        raise PlanError(f"{label}: {exc}") from None
    except InputError as exc:
        raise PlanError(str(exc)) from None
    except OSError as exc:
        raise PlanError(f"{label}: {relative} can't be read ({exc.strerror}): fix the path") from None
    if len(data) > MAX_TASK_MARKDOWN_BYTES:
        raise PlanError(f"{label}: {relative} is over the {MAX_TASK_MARKDOWN_BYTES}-byte limit for a task's"
                        " markdown: shorten it (the agents read it on every turn)")
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    return visible(strip_front_matter(text)).strip()


def plan_source_path(repo: Path, feature_id: str) -> Path:
    return repo / ".autobuild" / "runs" / feature_id / PLAN_SOURCE


def record_plan_source(repo: Path, feature_id: str, plan_file: Path) -> None:
    """Remember where a `--plan` run's plan lies, so `status`, `show` and `resume` find it by the feature's id."""
    root = repo.resolve()
    target = plan_file.resolve()
    text = (str(target.relative_to(root)) if target.is_relative_to(root) else str(target)) + "\n"
    record = plan_source_path(repo, feature_id)
    if not record.is_file() or record.read_text(encoding="utf-8") != text:
        confined.write_under(repo, record.relative_to(repo).as_posix(), text, "the run's plan-source record")


def recorded_plan_source(repo: Path, feature_id: str) -> Path | None:
    """The plan file a `--plan` run of this feature was started from, if one was."""
    record = plan_source_path(repo, feature_id)
    if not record.is_file():
        return None
    text = record.read_text(encoding="utf-8", errors="replace").strip()
    return (repo / text) if text else None


def recorded_feature_ids(repo: Path) -> list[str]:
    """Features run from a plan file elsewhere (`--plan`), by id."""
    runs = repo / ".autobuild" / "runs"
    return sorted(path.parent.name for path in runs.glob(f"*/{PLAN_SOURCE}")) if runs.is_dir() else []
