"""Plans written for GuardKit load as they are: task markdown by `file_path`, informational values with a warning,
structural problems still errors, and a plan file run from where it lies (`--plan`) found again by its id."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from orchestrator.errors import InputError, PlanError
from orchestrator.plan.files import MAX_TASK_MARKDOWN_BYTES
from orchestrator.plan.model import (
    load_given_plan,
    load_plan,
    load_target,
    parse_plan,
    plan_digest,
    remember_plan_file,
    unknown_fields,
)
from tests.guardkit import MARKER, PLAN_FILE, guardkit_plan, write_guardkit_plan


def test_a_guardkit_plan_loads_with_its_task_markdown_and_warnings(tmp_path: Path) -> None:
    plan = load_given_plan(tmp_path, write_guardkit_plan(tmp_path))
    first, second = plan.tasks
    assert MARKER in first.description and "## Acceptance Criteria" in first.description
    assert "autobuild_state" not in first.description and "in_review" not in first.description  # front-matter
    assert second.description == ""
    notes = "\n".join(plan.notes)
    assert "plan.status 'paused' ignored" in notes and "plan.complexity 12 ignored" in notes
    assert "TASK-GK-002.file_path tasks/backlog/sub/TASK-GK-002-docs.md does not exist" in notes
    assert "TASK-GK-001 in_progress, TASK-GK-002 completed" in notes
    assert "plan.execution" in notes and "tasks' turns_completed" in notes
    assert unknown_fields(plan) == []  # GuardKit's fields are one note, not a warning per task
    assert (plan.status, plan.complexity, plan.estimated_tasks) == ("planned", None, 2)


@pytest.mark.parametrize(("changes", "expected"), [
    ({"created": ["not", "a", "date"]}, "plan.created"),
    ({"estimated_tasks": "two"}, "plan.estimated_tasks"),
    ({"status": "merged", "complexity": True}, "plan.status 'merged'"),
    ({"description": None}, "plan.description None"),
])
def test_informational_values_that_do_not_fit_are_warnings(changes: dict[str, Any], expected: str) -> None:
    plan = parse_plan(guardkit_plan(**changes), PLAN_FILE)
    assert any(note.startswith(expected) for note in plan.notes), plan.notes


def test_a_task_status_that_is_not_text_is_a_warning_too() -> None:
    data = guardkit_plan()
    data["tasks"][0]["status"] = None
    assert any(n.startswith("TASK-GK-001.status None ignored") for n in parse_plan(data, PLAN_FILE).notes)


def _task_change(**fields: Any) -> dict[str, Any]:
    data = guardkit_plan()
    data["tasks"][1].update(fields)
    return data


@pytest.mark.parametrize(("data", "expected"), [
    (_task_change(dependencies=["TASK-GK-404"]), "unknown task TASK-GK-404"),
    (_task_change(complexity=12), "complexity"),
    (_task_change(file_path="../elsewhere/TASK.md"), "inside the repo"),
    (guardkit_plan(orchestration={"parallel_groups": [["TASK-GK-001", "TASK-GK-002"]]}), "both are in parallel group"),
    (guardkit_plan(id="FEAT/GK"), "id"),
])
def test_structural_problems_are_still_errors(data: dict[str, Any], expected: str) -> None:
    with pytest.raises(PlanError, match=expected) as caught:
        parse_plan(data, PLAN_FILE)
    assert "\n" not in str(caught.value)


def test_empty_parallel_groups_mean_none_given() -> None:
    plan = parse_plan(guardkit_plan(orchestration={"parallel_groups": []}), PLAN_FILE)
    assert plan.groups() == [["TASK-GK-001"], ["TASK-GK-002"]]


def _repoint(tmp_path: Path, file_path: str) -> Path:
    data = guardkit_plan()
    data["tasks"][1]["file_path"] = file_path
    return write_guardkit_plan(tmp_path, data)


def test_an_absolute_file_path_must_lie_in_the_repo(tmp_path: Path) -> None:
    plan_file = _repoint(tmp_path, str(tmp_path / "tasks/backlog/sub/TASK-GK-001-add-sub.md"))
    assert MARKER in load_given_plan(tmp_path, plan_file).task("TASK-GK-002").description
    plan_file = _repoint(tmp_path, "/etc/passwd")
    with pytest.raises(PlanError, match="resolves outside the repo"):
        load_given_plan(tmp_path, plan_file)


def test_a_file_path_escaping_through_a_symlink_is_refused(tmp_path: Path) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "secret.md"
    outside.write_text("the host's secrets\n")
    plan_file = _repoint(repo, "tasks/backlog/sub/link.md")
    (repo / "tasks/backlog/sub/link.md").symlink_to(outside)
    with pytest.raises(PlanError, match="resolves outside the repo"):
        load_given_plan(repo, plan_file)
    (repo / "tasks/backlog/sub/link.md").unlink()
    (repo / "tasks/backlog/sub/link.md").symlink_to(repo / "tasks/backlog/sub/TASK-GK-001-add-sub.md")
    assert MARKER in load_given_plan(repo, plan_file).task("TASK-GK-002").description


def test_task_markdown_is_size_limited_and_kept_as_text(tmp_path: Path) -> None:
    plan_file = _repoint(tmp_path, "tasks/big.md")
    (tmp_path / "tasks/big.md").write_text("x" * (MAX_TASK_MARKDOWN_BYTES + 1))
    with pytest.raises(PlanError, match="byte limit for a task's markdown"):
        load_given_plan(tmp_path, plan_file)
    (tmp_path / "tasks/big.md").write_bytes(b"evil \x1b[2J title \xff\xfe end\n")
    body = load_given_plan(tmp_path, plan_file).task("TASK-GK-002").description
    assert body == "evil \\x1b[2J title \ufffd\ufffd end"
    (tmp_path / "tasks/big.md").unlink()
    (tmp_path / "tasks/big.md").mkdir()
    with pytest.raises(PlanError, match="not a regular file"):
        load_given_plan(tmp_path, plan_file)


def test_file_path_and_the_autobuild_task_file_both_join_the_brief(tmp_path: Path) -> None:
    plan_file = write_guardkit_plan(tmp_path)
    own = tmp_path / ".autobuild/tasks/TASK-GK-001.md"
    own.parent.mkdir(parents=True)
    own.write_text("Also: keep it in calc/sub.py.\n")
    description = load_given_plan(tmp_path, plan_file).task("TASK-GK-001").description
    assert description.index(MARKER) < description.index("keep it in calc/sub.py")


def test_a_plan_run_from_elsewhere_is_found_again_by_its_id(tmp_path: Path) -> None:
    plan_file = write_guardkit_plan(tmp_path)
    with pytest.raises(PlanError, match="not found"):
        load_plan(tmp_path, "FEAT-GK1")
    plan = load_given_plan(tmp_path, plan_file)
    remember_plan_file(tmp_path, plan, plan_file)  # what a run does
    assert plan_digest(load_plan(tmp_path, "FEAT-GK1")) == plan_digest(plan)
    found, only = load_target(tmp_path, "TASK-GK-002")
    assert (found.id, only) == ("FEAT-GK1", "TASK-GK-002")
    plan_file.rename(plan_file.with_suffix(".moved"))
    with pytest.raises(PlanError, match=r"was run from \.guardkit/features/FEAT-GK1\.yaml, which is gone"):
        load_plan(tmp_path, "FEAT-GK1")


def test_the_target_must_belong_to_the_plan_file(tmp_path: Path) -> None:
    plan_file = write_guardkit_plan(tmp_path)
    assert load_target(tmp_path, "", plan_file)[1] is None
    assert load_target(tmp_path, "FEAT-GK1", plan_file)[1] is None
    assert load_target(tmp_path, "TASK-GK-001", Path(PLAN_FILE))[1] == "TASK-GK-001"  # served input: repo-relative
    with pytest.raises(InputError, match="neither the id of the plan"):
        load_target(tmp_path, "FEAT-001", plan_file)
    with pytest.raises(InputError, match="or give --plan PATH"):
        load_target(tmp_path, "", None)


def test_two_plans_may_not_share_an_id(tmp_path: Path) -> None:
    plan_file = write_guardkit_plan(tmp_path)
    own = tmp_path / ".autobuild/features/FEAT-GK1.yaml"
    own.parent.mkdir(parents=True)
    own.write_text(yaml.safe_dump(guardkit_plan(name="Another")))
    with pytest.raises(PlanError, match="another plan with that id"):
        load_given_plan(tmp_path, plan_file)
    assert load_given_plan(tmp_path, own).name == "Another"  # `--plan` naming the usual file is just that plan


def test_plans_without_file_path_keep_their_digest() -> None:
    data = {"id": "F", "name": "n", "tasks": [{"id": "A", "name": "a"}, {"id": "B", "name": "b",
                                                                         "dependencies": ["A"]}]}
    assert plan_digest(parse_plan(data, "p")) == "3e775871e21cef0e"  # as before file_path was a field
