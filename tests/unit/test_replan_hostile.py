"""Replan proposals as a hostile or confused planner would submit them: each refused with a one-line reason
(the task then stays failed, tests/graph/test_replan.py), or kept as text (escape sequences), never applied."""

from __future__ import annotations

from typing import Any

import pytest

from orchestrator.errors import PlanError
from orchestrator.plan.model import parse_plan
from orchestrator.plan.planner import MAX_REPLACEMENT_TASKS, replacement_plan

PLAN = parse_plan({"id": "FEAT-001", "name": "f", "tasks": [
    {"id": "TASK-001", "name": "big", "complexity": 5},
    {"id": "TASK-002", "name": "after", "complexity": 2, "dependencies": ["TASK-001"]}]}, "plan")


@pytest.mark.parametrize(("tasks", "why"), [
    ([{"id": "a", "name": "x", "dependencies": ["b"]}, {"id": "b", "name": "y", "dependencies": ["a"]}], "cycle"),
    ([{"id": "a", "name": "x", "dependencies": ["TASK-404"]}], "unknown task"),
    ([{"id": "a", "name": "x", "dependencies": ["../../etc/passwd"]}], "ids may use only letters"),
    ([{"id": "a", "name": "x", "dependencies": ["TASK-002"]}], "cycle"),
    ([{"id": str(n), "name": "x"} for n in range(MAX_REPLACEMENT_TASKS + 1)], f"at most {MAX_REPLACEMENT_TASKS}"),
    ([], "proposed no tasks"),
    ("tasks", "proposed no tasks"),
])
def test_a_bad_replan_proposal_is_refused_in_one_line(tasks: Any, why: str) -> None:
    with pytest.raises(PlanError) as refused:
        replacement_plan(PLAN, "TASK-001", {"tasks": tasks}, 1)
    assert why in str(refused.value) and "\n" not in str(refused.value)


def test_traversal_ids_are_replaced_by_ours_and_escape_sequences_are_kept_as_text() -> None:
    proposed = [{"id": "../../x", "name": "evil \x1b[2J\x1b]0;title\x07 name", "requirements": ["\x1b[31mred"]},
                {"id": "/etc", "name": "y", "dependencies": ["../../x"]}]
    replanned, tasks = replacement_plan(PLAN, "TASK-001", {"tasks": proposed}, 1)
    assert [t["id"] for t in tasks] == ["TASK-001-R1-1", "TASK-001-R1-2"]
    assert replanned.task("TASK-001-R1-2").dependencies == ["TASK-001-R1-1"]
    shown = replanned.task("TASK-001-R1-1")
    assert "\x1b" not in shown.name and "\x07" not in shown.name and "\x1b" not in shown.requirements[0]
