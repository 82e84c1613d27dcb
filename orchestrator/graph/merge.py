"""The merge node: an approved task's branch goes into the feature branch, one merge at a time, each followed
by the integration gate (the feature's `verify` on the merged result). A merge that breaks it is undone."""

from __future__ import annotations

from langgraph.runtime import Runtime

from orchestrator.graph.context import RunContext
from orchestrator.graph.events import EventLog
from orchestrator.graph.state import TaskResult, TaskState


async def merge(state: TaskState, runtime: Runtime[RunContext]) -> TaskState:
    ctx, task_id = runtime.context, state["task_id"]
    result = state.get("result") or TaskResult()
    events = ctx.events(runtime)
    async with ctx.merge_lock:
        if await ctx.repo.attach_worktree(ctx.integration_worktree, ctx.feature_branch):
            await ctx.setup_worktree(ctx.integration_worktree)
        merged = await _merge_one(ctx, events, task_id, result)
    events("merge", task_id, merged=bool(merged.get("merged")), reason=merged.get("reason", ""))
    if merged.get("merged") and not ctx.options.keep_worktrees:
        await ctx.repo.remove_worktree(ctx.worktree(task_id), ctx.task_branch(task_id))
    return TaskState(result=merged)


async def _merge_one(ctx: RunContext, events: EventLog, task_id: str, result: TaskResult) -> TaskResult:
    repo = ctx.repo
    worktree = ctx.integration_worktree
    before = repo.rev(ctx.feature_branch)
    if await repo.is_ancestor(result["sha"], before):
        # Resumed after a crash mid-merge: never merge twice. If this merge is the branch head, its
        # gate may not have run yet; an older one was covered by the gates of later merges.
        parents = await repo.parents(before)
        if result["sha"] not in parents[1:]:
            return result | TaskResult(merged=True)
        before = parents[0]
    else:
        outcome = await repo.merge(worktree, ctx.task_branch(task_id),
                                   f"autobuild: merge {task_id} into {ctx.feature_branch}")
        if not outcome.merged:
            files = ", ".join(outcome.conflicts) or outcome.detail
            return result | TaskResult(status="conflict", reason=f"merge conflict: {files}")
    gate = await ctx.run_gate(worktree)
    if gate["command"]:
        events("integration_gate", task_id, **gate)
    if gate["passed"]:
        await repo.reset(worktree, "HEAD")
        return result | TaskResult(merged=True)
    await repo.reset(worktree, before)  # undo this merge: the feature branch stays green
    reason = f"integration gate failed after merging {task_id}: {gate['summary']}\n{gate['output']}"
    return result | TaskResult(status="failed", merged=False, reason=reason)
