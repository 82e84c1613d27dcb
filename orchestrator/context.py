"""Run context: the non-serialized dependencies graph nodes need (repo, plan, settings, event sink)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents import SessionLimits, SessionSettings, TaskBrief
from orchestrator import trace
from orchestrator.gitrepo import GitRepo, feature_branch, task_branch
from orchestrator.plan import FeaturePlan
from orchestrator.settings import RunSettings

EventSink = Callable[[dict[str, Any]], None]


@dataclass
class RunContext:
    """Shared by every node of one run."""

    settings: RunSettings
    plan: FeaturePlan
    base_branch: str
    emit: EventSink = field(default=lambda event: None)
    spent_usd: float = 0.0
    """Cost of every session of this feature so far (seeded from the checkpoint on resume)."""

    @property
    def repo(self) -> GitRepo:
        return GitRepo(self.settings.repo)

    @property
    def feature_id(self) -> str:
        return self.plan.id

    @property
    def feature_branch(self) -> str:
        return feature_branch(self.plan.id)

    def task_branch(self, task_id: str) -> str:
        return task_branch(self.plan.id, task_id)

    def worktree(self, task_id: str) -> Path:
        return self.repo.worktrees_dir / self.plan.id / task_id

    @property
    def integration_worktree(self) -> Path:
        return self.repo.worktrees_dir / self.plan.id / "_integration"

    def runs_dir(self, task_id: str | None = None) -> Path:
        return trace.runs_dir(self.settings.repo, self.plan.id, task_id)

    def event(self, task_id: str, kind: str, **data: Any) -> None:
        """Record a trace event for the task and show it as progress."""
        record = {"event": kind, **data}
        trace.append(self.settings.repo, self.plan.id, task_id, record)
        self.emit({"task": task_id, **record})

    def brief(self, task_id: str) -> TaskBrief:
        task = self.plan.task(task_id)
        requirements = list(task.requirements)
        if task.description:
            requirements.append(task.description)
        return TaskBrief(
            feature_name=self.plan.name,
            task_id=task.id,
            task_name=task.name,
            requirements=requirements,
            acceptance_criteria=list(task.acceptance_criteria),
            verify=self.plan.verify_command(task_id),
            file_scope=list(task.files),
            frozen_tests=list(task.acceptance_tests),
        )

    def remaining_budget(self, task_id: str, task_spent: float) -> float | None:
        """What the next session of this task may still spend: the tightest of feature and task budgets."""
        limits = []
        if self.settings.budget_usd is not None:
            limits.append(self.settings.budget_usd - self.spent_usd)
        task_budget = self.plan.task(task_id).budget_usd or self.settings.task_budget_usd
        if task_budget is not None:
            limits.append(task_budget - task_spent)
        return min(limits) if limits else None

    def budget_exhausted(self, task_id: str, task_spent: float) -> str | None:
        """Why no new session may start, or None. Checked before every session."""
        remaining = self.remaining_budget(task_id, task_spent)
        if remaining is None or remaining > 0:
            return None
        if self.settings.budget_usd is not None and self.spent_usd >= self.settings.budget_usd:
            return f"budget exhausted: the feature spent ${self.spent_usd:.4f} of ${self.settings.budget_usd:.4f}"
        return f"budget exhausted: the task spent ${task_spent:.4f} of its budget"

    def session_settings(self, role: str, task_id: str, task_spent: float) -> SessionSettings:
        model = {"coach": self.settings.coach_model, "precheck": self.settings.precheck_model}.get(role)
        model = model or self.settings.model
        caps = [c for c in (self.settings.session_budget_usd, self.remaining_budget(task_id, task_spent)) if c]
        return SessionSettings(
            model=model,
            limits=SessionLimits(
                session_timeout_s=self.settings.session_timeout_s,
                idle_timeout_s=self.settings.idle_timeout_s,
                max_budget_usd=min(caps) if caps else None,
            ),
            cli_path=self.settings.cli_path,
            on_event=self.session_event,
        )

    def session_event(self, event: dict[str, Any]) -> None:
        """Agent-session events: retries and session ends go to the task's trace too."""
        if event.get("event") in ("retry", "session_end") and event.get("task"):
            trace.append(self.settings.repo, self.plan.id, str(event["task"]), dict(event))
        self.emit(event)

    def verify_env(self) -> dict[str, str]:
        """Environment for verify commands: ours, with this interpreter's bin dir first on PATH."""
        env = dict(os.environ)
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        return env
