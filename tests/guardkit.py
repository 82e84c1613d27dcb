"""A plan shaped like the ones GuardKit writes: `.guardkit/features/<ID>.yaml` whose tasks keep their requirements
in markdown named by `file_path` (front-matter with GuardKit's own task state, then the body), plus GuardKit's
informational and execution-state fields. Modelled on the feature files in the guardkit/guardkit and
guardkit/forge repositories (`.guardkit/features/FEAT-*.yaml`, `tasks/backlog/<slug>/TASK-*.md`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

PLAN_FILE = ".guardkit/features/FEAT-GK1.yaml"
MARKER = "MARKER-7f3a: subtract must reject strings"

FRONT_MATTER = """---
id: {task_id}
title: {title}
task_type: feature
feature_id: FEAT-GK1
wave: 1
implementation_mode: task-work
complexity: 3
status: in_review
autobuild_state:
  current_turn: 1
  worktree_path: /somewhere/else/.guardkit/worktrees/FEAT-GK1
  turns:
  - turn: 1
    decision: approve
---
"""


def task_markdown(task_id: str, title: str, requirement: str) -> str:
    body = f"\n# Task: {title}\n\n## Requirements\n\n1. {requirement}\n\n## Acceptance Criteria\n\n- [ ] tests pass\n"
    return FRONT_MATTER.format(task_id=task_id, title=title) + body


def guardkit_plan(**changes: Any) -> dict[str, Any]:
    """Two tasks; the second's file was moved by GuardKit when it finished (its `file_path` is gone)."""
    plan: dict[str, Any] = {
        "id": "FEAT-GK1",
        "name": "Subtraction",
        "description": "Add subtraction to calc.",
        "created": "2026-03-02T10:11:46.545384",
        "status": "paused",  # GuardKit's own feature status; ours has no `paused`
        "complexity": 12,  # the sum of its tasks, past our 1-10
        "estimated_tasks": 2,
        "tasks": [
            {"id": "TASK-GK-001", "name": "Add sub", "file_path": "tasks/backlog/sub/TASK-GK-001-add-sub.md",
             "complexity": 3, "dependencies": [], "status": "in_progress", "description": "",
             "implementation_mode": "task-work", "estimated_minutes": 50, "requires_infrastructure": [],
             "result": None, "turns_completed": 0, "current_turn": 0, "started_at": None, "completed_at": None},
            {"id": "TASK-GK-002", "name": "Document sub", "file_path": "tasks/backlog/sub/TASK-GK-002-docs.md",
             "complexity": 9, "dependencies": ["TASK-GK-001"], "status": "completed", "description": "",
             "implementation_mode": "direct", "estimated_minutes": 22,
             "result": {"total_turns": 1, "final_decision": "approved", "error": None}},
        ],
        "orchestration": {"parallel_groups": [["TASK-GK-001"], ["TASK-GK-002"]],
                          "estimated_duration_minutes": 72, "recommended_parallel": 1},
        "execution": {"started_at": "2026-03-02T13:29:04", "worktree_path": "/somewhere/else", "total_turns": 1,
                      "tasks_completed": 1, "tasks_failed": 0, "current_wave": 2, "completed_waves": [1]},
    }
    plan.update(changes)
    return plan


def write_guardkit_plan(repo: Path, plan: dict[str, Any] | None = None) -> Path:
    """The plan and the first task's markdown (the second's is gone), into `repo`; returns the plan file."""
    path = repo / PLAN_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(plan or guardkit_plan(), sort_keys=False))
    markdown = repo / "tasks/backlog/sub/TASK-GK-001-add-sub.md"
    markdown.parent.mkdir(parents=True, exist_ok=True)
    markdown.write_text(task_markdown("TASK-GK-001", "Add sub", MARKER))
    return path
