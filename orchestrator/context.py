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
        )

    def session_settings(self, role: str) -> SessionSettings:
        model = self.settings.coach_model if role == "coach" and self.settings.coach_model else self.settings.model
        return SessionSettings(
            model=model,
            limits=SessionLimits(
                session_timeout_s=self.settings.session_timeout_s,
                idle_timeout_s=self.settings.idle_timeout_s,
                max_budget_usd=self.settings.budget_usd,
            ),
            cli_path=self.settings.cli_path,
            on_event=self.emit,
        )

    def verify_env(self) -> dict[str, str]:
        """Environment for verify commands: ours, with this interpreter's bin dir first on PATH."""
        env = dict(os.environ)
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        return env
