"""Nodes of the feature graph: prepare, next_group, after_group (merge), finish."""

from __future__ import annotations

import time
from typing import Any

from orchestrator import reports
from orchestrator.context import RunContext
from orchestrator.gate import run_verify
from orchestrator.state import FeatureState, TaskResult

_BLOCKING = {"failed", "blocked", "skipped", "conflict", "aborted"}


class FeatureNodes:
    """The feature graph's node functions, bound to one run's context."""

    def __init__(self, ctx: RunContext, groups: list[list[str]]) -> None:
        self.ctx = ctx
        self.groups = groups

    async def prepare(self, state: FeatureState) -> dict[str, Any]:
        repo = self.ctx.repo
        await repo.ensure_excluded()
        head = await repo.ensure_branch(self.ctx.feature_branch, self.ctx.base_branch)
        await repo.attach_worktree(self.ctx.integration_worktree, self.ctx.feature_branch)
        self.ctx.emit({"event": "feature_start", "branch": self.ctx.feature_branch, "sha": head})
        return {"started": time.time(), "group_index": 0, "feature_sha": head}

    def _dependency_problem(self, task_id: str, results: dict[str, TaskResult]) -> str | None:
        if self.ctx.settings.ignore_deps or state_only_task(self.ctx) == task_id:
            return None
        for dep in self.ctx.plan.task(task_id).dependencies:
            status = results.get(dep, {}).get("status")
            if status in _BLOCKING:
                return f"dependency {dep} {status}"
        return None

    async def next_group(self, state: FeatureState) -> dict[str, Any]:
        index = state.get("group_index", 0)
        if index >= len(self.groups):
            return {}
        results = state.get("results", {})
        skipped: dict[str, TaskResult] = {}
        for task_id in self.groups[index]:
            if task_id in results:
                continue
            problem = self._dependency_problem(task_id, results)
            if problem:
                skipped[task_id] = {"status": "skipped", "reason": problem, "turns": 0, "cost_usd": 0.0}
                self.ctx.event(task_id, "skipped", reason=problem)
        self.ctx.emit({"event": "group_start", "group": index + 1, "tasks": self.groups[index]})
        return {"results": skipped}

    async def after_group(self, state: FeatureState) -> dict[str, Any]:
        """Merge the group's approved task branches into the feature branch, one by one in plan order.

        After each merge the feature's `verify` runs on the merged result (the integration gate); a merge
        that breaks it is undone and its task marked failed, so the feature branch only ever holds work
        that passes together.
        """
        index = state.get("group_index", 0)
        results = state.get("results", {})
        updates: dict[str, TaskResult] = {}
        for task_id in self.groups[index]:
            result = results.get(task_id)
            if not result or result.get("status") != "approved" or result.get("merged"):
                continue
            updates[task_id] = await self._merge_one(task_id, result)
            merged = bool(updates[task_id].get("merged"))
            self.ctx.event(task_id, "merge", merged=merged, reason=updates[task_id].get("reason", ""))
            if merged and not self.ctx.settings.keep_worktrees:
                await self.ctx.repo.remove_worktree(self.ctx.worktree(task_id), self.ctx.task_branch(task_id))
        feature_sha = self.ctx.repo.rev(self.ctx.feature_branch)
        return {"results": updates, "group_index": index + 1, "feature_sha": feature_sha}

    async def _merge_one(self, task_id: str, result: TaskResult) -> TaskResult:
        repo = self.ctx.repo
        worktree = self.ctx.integration_worktree
        before = repo.rev(self.ctx.feature_branch)
        if await repo.is_ancestor(result["sha"], before):
            # Resumed after a crash mid-group: never merge twice. If this merge is the branch head, its
            # gate may not have run yet; an older one was covered by the gates of later merges.
            parents = (await repo.git("rev-list", "--parents", "-n", "1", before)).stdout.split()
            if result["sha"] not in parents[2:]:
                return {**result, "merged": True}
            before = parents[1]
        else:
            merge = await repo.merge(worktree, self.ctx.task_branch(task_id),
                                     f"autobuild: merge {task_id} into {self.ctx.feature_branch}")
            if not merge.merged:
                files = ", ".join(merge.conflicts) or merge.detail
                return {**result, "status": "conflict", "reason": f"merge conflict: {files}"}
        gate = await run_verify(self.ctx.plan.verify, worktree, self.ctx.settings.verify_timeout_s,
                                self.ctx.verify_env())
        if gate["command"]:
            self.ctx.event(task_id, "integration_gate", **gate)
        if gate["passed"]:
            await repo.reset(worktree, "HEAD")
            return {**result, "merged": True}
        async with repo.lock:
            await repo.reset(worktree, before)  # undo this merge: the feature branch stays green
        reason = f"integration gate failed after merging {task_id}: {gate['summary']}\n{gate['output']}"
        return {**result, "status": "failed", "merged": False, "reason": reason}

    async def finish(self, state: FeatureState) -> dict[str, Any]:
        results = state.get("results", {})
        order = [task_id for group in self.groups for task_id in group]
        text = reports.feature_report(
            self.ctx.feature_id, self.ctx.plan.name, results, order, self.ctx.feature_branch
        )
        path = reports.write(self.ctx.runs_dir() / reports.REPORT_NAME, text)
        if not self.ctx.settings.keep_worktrees:
            await self.ctx.repo.remove_worktree(self.ctx.integration_worktree)
            folder = self.ctx.integration_worktree.parent
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        self.ctx.emit({"event": "feature_end", "report": str(path)})
        return {"finished_at": time.time()}


def state_only_task(ctx: RunContext) -> str | None:
    """The single task `run TASK-ID` was asked for, if any."""
    target = ctx.settings.target
    return target if target != ctx.plan.id else None
