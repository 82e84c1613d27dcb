"""The merge node: an approved task lands by fast-forward, so the feature branch only ever holds trees a gate passed.

Landings are one at a time. The task's branch is first brought up to the current feature head (the head merged
into it, in its worktree) when the head moved since the task's tree was gated (another task landed during its
turn or its gate); the gate then judges exactly the tree that lands (remembered from the coach's turn when no
bring-up was needed: no second run), and the feature branch moves to it by compare-and-swap (should anything
else have moved it meanwhile, the task is brought up and gated again). A conflict while bringing it up gives
the player a conflict turn; a gate that fails on the brought-up tree (a semantic conflict) is ordinary feedback
for the next turn; with no turn left the task ends as `conflict` (branch kept) or `failed`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from langgraph.runtime import Runtime

from orchestrator.facts import review_of
from orchestrator.gate import GateResult, no_gate
from orchestrator.graph.context import RunContext
from orchestrator.graph.events import EventLog
from orchestrator.graph.nodes import bring_up
from orchestrator.graph.state import ConflictTurn, FeedbackItem, TaskResult, TaskState

MAX_ATTEMPTS = 20
"""Bring-ups of one landing: each failed attempt means another task landed, so the run as a whole progresses."""


@dataclass
class Landing:
    """One task's landing in progress: where its branch stands (`sha`, brought up onto `base`)."""

    ctx: RunContext
    events: EventLog
    state: TaskState
    result: TaskResult
    sha: str
    base: str
    brought_up: int = 0
    batch: list[str] = field(default_factory=list)
    """Other approved tasks that landed with this one (one gate run for all)."""

    @property
    def task_id(self) -> str:
        return self.state["task_id"]

    @property
    def turn(self) -> int:
        return int(self.state.get("turn", 1))


async def merge(state: TaskState, runtime: Runtime[RunContext]) -> TaskState:
    ctx = runtime.context
    result = state.get("result") or TaskResult()
    repo, worktree = ctx.repo, Path(state["worktree"])
    land = Landing(ctx, ctx.events(runtime), state, result, result["sha"], state["base_sha"])
    await ctx.ensure_worktree(worktree, state["branch"], land.sha)
    if await repo.head(worktree) != land.sha:
        await repo.reset(worktree, land.sha)  # resumed: redo the bring-up from the approved commit, deterministically
    ctx.landing_queue[land.task_id] = land.sha  # others landing meanwhile may take it along in their batch
    ctx.accepted_tests[land.task_id] = list(result.get("test_changes_accepted") or [])
    land.events("landing", land.task_id, queued=True, reason="approved, waiting to land")
    try:
        async with ctx.merge_lock:  # one landing at a time: the head can't move under a landing gate in this run
            return await _land(land, worktree)
    finally:
        ctx.landing_queue.pop(land.task_id, None)
        ctx.accepted_tests.pop(land.task_id, None)


async def _land(land: Landing, worktree: Path) -> TaskState:
    ctx, repo = land.ctx, land.ctx.repo
    for _ in range(MAX_ATTEMPTS):
        head = await asyncio.to_thread(repo.rev, ctx.feature_branch)
        if await repo.is_ancestor(land.sha, head):  # resumed after it landed
            return await _landed(land)
        if not await repo.is_ancestor(head, land.sha):
            merged = await repo.merge(worktree, head, bring_up.bring_up_message(land.task_id, ctx.feature_branch,
                                                                                head))
            if not merged.merged:
                return await _conflict(land, head, merged.conflicts or [])
            land.sha, land.base, land.brought_up = merged.sha, head, land.brought_up + 1
        own = land.sha
        taken = await _take_along(land, worktree)
        gate = await _landing_gate(land, worktree, [other for other, _ in taken])
        while taken and not gate["passed"]:
            # Split: the first half of the batch (each merge is its own commit, so every prefix is a tree at
            # hand), down to this task alone; the tasks left out land (or fail) on their own later, so a culprit
            # is isolated in log2(batch) gate runs rather than one run per task behind it.
            failed, taken = [other for other, _ in taken], taken[:len(taken) // 2]
            land.sha = taken[-1][1] if taken else own
            with_ = f"with {', '.join(other for other, _ in taken)}" if taken else "alone"
            land.events("landing", land.task_id,
                        reason=f"the gate failed on the batch with {', '.join(failed)}: landing {land.task_id}"
                               f" {with_}")
            await repo.reset(worktree, land.sha)
            gate = await _landing_gate(land, worktree, [other for other, _ in taken])
        batch = [other for other, _ in taken]
        if gate["command"]:
            land.events("integration_gate", land.task_id, brought_up=land.brought_up, batch=batch, **gate)
        if not gate["passed"]:
            return _gate_failed(land, gate)
        land.batch = batch
        if await repo.advance_branch(ctx.feature_branch, land.sha, head):  # compare-and-swap: moved by nobody else
            return await _landed(land)
        land.events("landing", land.task_id, moved=True,
                    reason=f"{ctx.feature_branch} moved during the gate: bringing {land.task_id} up again")
    reason = f"{ctx.feature_branch} kept moving: {land.task_id} could not land after {MAX_ATTEMPTS} bring-ups"
    land.events("merge", land.task_id, merged=False, reason=reason, cause="feature_moved")
    return TaskState(result=land.result | TaskResult(status="failed", merged=False, reason=reason,
                                                     cause="feature_moved"))


async def _take_along(land: Landing, worktree: Path) -> list[tuple[str, str]]:
    """Approved tasks waiting to land with the same gate, merged into this landing one commit each (one gate run
    for all of them; each then finds its work already on the feature branch): (task, the landing's commit once
    it was merged). One that conflicts is left to land on its own."""
    ctx, task_id = land.ctx, land.task_id
    batch: list[tuple[str, str]] = []
    for other, sha in list(ctx.landing_queue.items()):
        if other == task_id or ctx.gate_command(other) != ctx.gate_command(task_id):
            continue
        if await ctx.repo.is_ancestor(sha, land.sha):
            continue
        merged = await ctx.repo.merge(worktree, sha, f"autobuild({task_id}): land together with {other}")
        if merged.merged:
            land.sha = merged.sha
            batch.append((other, merged.sha))
    return batch


async def _landing_gate(land: Landing, worktree: Path, batch: list[str]) -> GateResult:
    """The task's gate and the feature's on the tree that lands (each remembered by tree: a tree the coach's
    turn already gated is not run again); every test that passed on the feature head it lands on must pass,
    or be a change the approving coaches of the tasks in it accepted."""
    ctx, task_id, sha = land.ctx, land.task_id, land.sha
    accepted = [entry for task in (task_id, *batch) for entry in ctx.accepted_tests.get(task, [])]
    # The hidden tests of every task in the tree that lands: never in a tree, the base's accounting can't keep an
    # earlier task's hidden tests green, so they run again on every landing.
    landed_before = await bring_up.tasks_on(ctx, land.base) if ctx.hidden.by_task else set()
    gate = no_gate(ctx.gate["source"])
    for command in dict.fromkeys(c for c in (ctx.gate_command(task_id), ctx.gate["command"]) if c):
        run = await ctx.gates.run(worktree, command, against=land.base, accepted=accepted,
                                  hidden_tests=ctx.hidden_of([task_id, *batch, *sorted(landed_before)]))
        if run.ran:  # whatever it left behind goes
            await ctx.repo.reset(worktree, sha)
        gate = run.result
        if not gate["passed"]:
            break
    return gate


async def _landed(land: Landing) -> TaskState:
    ctx, task_id = land.ctx, land.task_id
    land.events("merge", task_id, merged=True, reason="", fast_forward=True, brought_up=land.brought_up,
                sha=land.sha, batch=land.batch)
    result = land.result | TaskResult(merged=True, sha=land.sha)
    if ctx.landed is not None:  # its dependents start now, while its worktree goes and its subgraph ends
        await ctx.landed(task_id, result)
    if not ctx.options.keep_worktrees:  # its own (one of several attempts has its own worktree and branch)
        await ctx.repo.remove_worktree(Path(land.state["worktree"]), land.state["branch"])
    return TaskState(result=result, head_sha=land.sha, base_sha=land.base, conflict=None)


async def _conflict(land: Landing, head: str, files: list[str]) -> TaskState:
    """A conflict with the feature head: the player's next turn resolves it, or, with no turn left, the task
    ends as `conflict` with its branch kept."""
    ctx, task_id, turn, state = land.ctx, land.task_id, land.turn, land.state
    listed = ", ".join(files) or "(git named no file)"
    if turn >= ctx.options.max_turns or not files or state.get("more_candidates"):  # else the next candidate
        land.events("merge", task_id, merged=False, reason=f"merge conflict: {listed}", cause="merge_conflict")
        return TaskState(result=land.result | TaskResult(
            status="conflict", merged=False, reason=f"merge conflict: {listed} (no turn left to resolve it)",
            cause="merge_conflict"))
    description = await bring_up.describe(ctx, Path(state["worktree"]), task_id, head, files)
    conflict = ConflictTurn(turn=turn + 1, head=head, files=files, description=description)
    land.events("landing", task_id, reason=f"merge conflict: {listed}; conflict turn {turn + 1}",
                conflict_turn=turn + 1)
    review = review_of(turn, "merge", f"bringing the approved work up to {ctx.feature_branch} conflicts in {listed}",
                       items=[FeedbackItem(file=path, line=None, issue="merge conflict: resolve the markers, keeping"
                                                                        " both sides' changes") for path in files],
                       notes=[description])
    return TaskState(result=None, review=review, conflict=conflict, head_sha=land.sha, base_sha=land.base,
                     conflict_turns=int(state.get("conflict_turns", 0)) + 1)


def _gate_failed(land: Landing, gate: GateResult) -> TaskState:
    """The gate failed on the brought-up tree (a semantic conflict): feedback for the next turn, or, with no
    turn left, the task fails (the feature branch never saw it)."""
    ctx, task_id, turn = land.ctx, land.task_id, land.turn
    why = f"the gate failed on {task_id} brought up to {ctx.feature_branch}: {gate['summary']}"
    if turn >= ctx.options.max_turns or land.state.get("more_candidates"):  # else the next candidate is tried
        land.events("merge", task_id, merged=False, reason=why, cause="integration_gate")
        return TaskState(result=land.result | TaskResult(status="failed", merged=False,
                                                         reason=f"{why}\n{gate['output']}", cause="integration_gate"))
    land.events("landing", task_id, reason=f"{why}; back to the player")
    review = review_of(turn, "merge", why, gate=gate,
                       items=[FeedbackItem(file="", line=None, issue=f"{why}. Your work was merged with the tasks"
                                                                     f" that landed meanwhile:\n{gate['output']}")])
    return TaskState(result=None, review=review, head_sha=land.sha, base_sha=land.base)
