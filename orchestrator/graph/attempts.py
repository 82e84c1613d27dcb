"""One task as N independent attempts (issue 40): N player/coach loops, one verdict, only the pick lands.

`run_task` hands a task with `attempts` > 1 here. Each attempt is a `@task` of its own (`run_attempt`), launched up
front in attempt order (call order is identity on replay), running the task subgraph in its own worktree and branch
(`autobuild/FEAT.TASK` for the first, `….TASK.a2` for the second, …) with its own approach hint and, with
`attempt_models`, its own player model; each holds one `--parallel` slot while it runs and ends at its verdict
(`hold_landing`: the subgraph does not merge). A finished attempt is checkpointed as its `@task`'s result, so a
resume replays it and runs only the unfinished ones.

Policy `first`: the first verified approval wins at once; the attempts still running are cancelled (their sessions
end with the cancel, their worktrees stay for `show` until `discard`) and end as `cancelled`. An
`approved-unverified` attempt waits for its siblings and wins only if none is verified. Policy `best`: every attempt
reaches its verdict, then graph/selection.py ranks the candidates. The pick lands through the merge queue
(`land_attempt`: the task subgraph entered at `merge`); a refused landing (a conflict, the integration gate) tries
the next candidate before the last one may spend a turn on it. The task's result is the landing's, its cost every
attempt's, with each attempt's verdict and the pick (`attempts`, `picked`, `pick`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphDrained, GraphInterrupt
from langgraph.func import task
from langgraph.runtime import get_runtime

from agents.limits import UsageLimitYield
from orchestrator.facts import TaskState
from orchestrator.graph import attempt_choice
from orchestrator.graph.active import ACTIVE, ActiveRun
from orchestrator.graph.attempt_gates import LINE, GateLine
from orchestrator.graph.attempt_records import AttemptOutcome, approach, as_candidate, combined, record
from orchestrator.graph.events import ATTEMPT
from orchestrator.graph.selection import Selection, first_verified
from orchestrator.graph.state import TaskInput
from orchestrator.plan.model import FeaturePlan
from orchestrator.settings import RunOptions


def attempts_of(options: RunOptions, plan: FeaturePlan, task_id: str) -> int:
    """How many attempts this task gets: `--attempts`, else the task's `attempts`, else the feature's, else 1."""
    return options.attempts or plan.task(task_id).attempts or plan.attempts or 1


@dataclass
class _Group:
    """One task's attempts in this process (in memory; a resume rebuilds it from the replayed outcomes)."""

    policy: str
    limit: int = 1
    """The attempts this run may start (`--attempts` now): a resume with fewer finishes the started ones only."""
    fresh: set[int] = field(default_factory=set)
    """Attempts whose start `attempt_began` recorded in this process (not replayed: never started before)."""
    won: asyncio.Event = field(default_factory=asyncio.Event)
    outcomes: dict[int, AttemptOutcome] = field(default_factory=dict)
    raised: dict[int, BaseException] = field(default_factory=dict)
    gates: GateLine = field(default_factory=GateLine)
    """The attempts at their gates, in order (graph/attempt_gates.py: under `first`, one behind yields the CPU)."""


_GROUPS: dict[tuple[str, str], _Group] = {}


def _config(active: ActiveRun, task_id: str, attempt: int) -> RunnableConfig:
    return {"recursion_limit": 12 * active.ctx.options.max_turns + 30, "run_name": f"task {task_id} a{attempt}",
            "tags": [task_id]}


async def _attempt(task_id: str, attempt: int, run_key: str) -> AttemptOutcome:
    """One attempt: a slot, then the task loop to its verdict, or cancelled when a sibling won first. Never raises
    but an interrupt (a question re-raised; anything else noted for the group and held for resume)."""
    active, group = ACTIVE[run_key], _GROUPS[(run_key, task_id)]
    ctx = active.ctx
    runtime = get_runtime()
    events = ctx.events(runtime)
    ATTEMPT.set(attempt)  # this task body's own context: its subgraph's events carry the attempt
    if group.policy == "first":  # a sibling's verified gate ends this one: it need not compete for the CPU
        LINE.set((group.gates, attempt))
    spend_key = f"{task_id}.a{attempt}"
    try:
        async with active.scheduler.slots:
            if runtime.drain_requested:  # stopping: it starts on resume (or not, with fewer --attempts then)
                raise GraphDrained("the run is stopping")
            if group.won.is_set() or (await attempt_began(task_id, attempt, run_key) and attempt > group.limit
                                      and attempt in group.fresh):
                why = ("a sibling attempt was verified before it started" if group.won.is_set() else
                       f"not started: this run allows {group.limit} attempt(s)")
                events("attempt_cancelled", task_id, reason=why, cost_usd=0.0)
                return AttemptOutcome(attempt=attempt, state={}, cancelled=True, finished_at=time.time(),
                                      cost_usd=0.0)
            hint = approach(attempt)
            events("attempt_start", task_id, approach=hint, model=ctx.attempt_model(task_id, attempt))
            task_input = TaskInput(feature_id=ctx.feature_id, task_id=task_id, skip_reason=None,
                                   plan_digest=active.digest, attempt=attempt, approach=hint, hold_landing=True)
            final = await _unless_won(group, active.task_graph.ainvoke(task_input, _config(active, task_id, attempt),
                                                                       context=ctx))
    except GraphInterrupt as exc:
        if exc.args and exc.args[0]:
            raise  # a question: the run waits for its answer
        group.raised[attempt] = exc
        raise
    except (GraphDrained, UsageLimitYield, Exception) as exc:  # noqa: BLE001 - held for resume, siblings go on
        group.raised[attempt] = exc
        raise GraphInterrupt(()) from None
    cost = ctx.spend.by_task.get(spend_key, 0.0)
    if final is None:
        events("attempt_cancelled", task_id, reason="a sibling attempt was verified first", cost_usd=round(cost, 6))
        return AttemptOutcome(attempt=attempt, state={}, cancelled=True, finished_at=time.time(), cost_usd=cost,
                              unsaved_usd=ctx.spend.unsaved.pop(spend_key, 0.0))
    result = final.get("result") or {}
    events("attempt_end", task_id, status=result.get("status"), reason=result.get("reason", ""),
           cost_usd=result.get("cost_usd"))
    return AttemptOutcome(attempt=attempt, state=dict(final), cancelled=False, finished_at=time.time(),
                          cost_usd=float(result.get("cost_usd", cost)))


@task
async def attempt_began(task_id: str, attempt: int, run_key: str) -> bool:
    """An attempt's start, recorded once: replayed on resume, so a resume knows the attempts that had started (a
    resume with fewer `--attempts` finishes those, and starts no other)."""
    _GROUPS[(run_key, task_id)].fresh.add(attempt)
    return True


@task
async def attempts_started(task_id: str, count: int) -> int:
    """How many attempts the task's run started with, recorded once (a resume issues as many, in order)."""
    return count


_attempt.__name__ = "run_task"  # named as a task's own loop: status and the costs read it as one (store/outcomes.py)
run_attempt = task(_attempt)


async def _unless_won(group: _Group, loop: Any) -> dict[str, Any] | None:
    """The attempt's loop to its end, or None when a sibling won first (the loop is cancelled and awaited: its
    session ends, its worktree stays)."""
    running = asyncio.ensure_future(loop)
    won = asyncio.ensure_future(group.won.wait())
    try:
        await asyncio.wait({running, won}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        won.cancel()
        if not running.done():
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError, GraphDrained):
                await running
    if running.cancelled():
        return None
    final: dict[str, Any] = running.result()
    return final


async def _landing(task_id: str, attempt: int, run_key: str, more_candidates: bool,
                   unsaved_usd: float = 0.0) -> dict[str, Any]:
    """The picked attempt's landing: the task subgraph entered at `merge` with the attempt's final state (its
    conflict turns, if it is the last candidate, are its own); the first one's checkpoint also holds what
    cancelled siblings spent after their last checkpoints (`unsaved_usd`: `status` counts it from there)."""
    active, group = ACTIVE[run_key], _GROUPS[(run_key, task_id)]
    state: dict[str, Any] = dict(group.outcomes[attempt]["state"])
    carried = dict(state.get("result") or {})
    ATTEMPT.set(attempt)
    landing = {**state, **TaskState(hold_landing=False, more_candidates=more_candidates,
                                    carried_usd=float(carried.get("cost_usd", 0.0)),
                                    carried_turns=int(carried.get("turns", 0)), unsaved_usd=unsaved_usd)}
    graph = active.landing_graph
    assert graph is not None, "a run with attempts has a landing graph"
    # The landing graph takes a whole task state (workflow.build_task_graph(landing=True)); its type says TaskInput.
    final: dict[str, Any] = await graph.ainvoke(cast("TaskInput", landing), _config(active, task_id, attempt),
                                                context=active.ctx)
    return final


_landing.__name__ = "run_task"
land_attempt = task(_landing)


async def planned(options: RunOptions, plan: FeaturePlan, task_id: str) -> tuple[int, int]:
    """The attempts this run may start, and how many to launch: as many as the task's first run started (recorded
    once, so a resume with fewer `--attempts` still finishes those), or more. A task of one attempt where no
    `--attempts` was given is today's loop: nothing is recorded."""
    count = attempts_of(options, plan, task_id)
    if count == 1 and options.attempts is None:
        return 1, 1
    return count, max(count, await attempts_started(task_id, count))


async def run(task_id: str, run_key: str, count: int, launched: int) -> dict[str, Any]:
    """Every attempt of the task (`launched`, of which this run may start `count`), the pick, its landing: the
    final state `run_task` takes a task loop's from."""
    active = ACTIVE[run_key]
    policy = active.ctx.options.attempts_policy
    group = _GROUPS[(run_key, task_id)] = _Group(policy, limit=count)
    events = active.ctx.events(get_runtime())
    try:
        events("attempts_start", task_id, attempts=launched, policy=policy,
               queued=max(0, min(count, launched) - active.ctx.options.parallel))
        await _settle(group, {k: asyncio.ensure_future(run_attempt(task_id, k, run_key))
                              for k in range(1, launched + 1)})
        candidates = [as_candidate(outcome) for _, outcome in sorted(group.outcomes.items())]
        verified = first_verified(candidates) if policy == "first" else None
        if group.raised and verified is None:  # an unfinished attempt could still change the pick: resume it
            raise next(iter(group.raised.values()))
        selection, decided = await attempt_choice.select(task_id, run_key, candidates, group.outcomes, verified)
        events("selection", task_id, picked=selection.picked, order=list(selection.order), reason=selection.reason,
               policy=policy, verdicts={c.attempt: c.status for c in candidates}, by=decided.get("by"))
        return attempt_choice.with_selection(await _land(task_id, run_key, group, selection), decided,
                                             selection=selection, candidates=candidates, task_id=task_id,
                                             run_key=run_key)
    finally:
        del _GROUPS[(run_key, task_id)]
        _count_spend(active, task_id, max([count, *group.outcomes]))


async def _settle(group: _Group, pending: dict[int, asyncio.Future[AttemptOutcome]]) -> None:
    """Await every attempt as it ends; under policy `first` a verified one cancels those still running. A question
    is re-raised once every attempt settled."""
    questions: list[Any] = []
    by_future = {future: attempt for attempt, future in pending.items()}
    waiting: set[asyncio.Future[AttemptOutcome]] = set(by_future)
    while waiting:
        done, waiting = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        for future in done:
            try:
                group.outcomes[by_future[future]] = future.result()
            except GraphInterrupt as exc:
                questions.extend(exc.args[0] if exc.args else ())
        finished = [as_candidate(outcome) for outcome in group.outcomes.values()]
        if group.policy == "first" and first_verified(finished) is not None:
            group.won.set()
    if questions:
        raise GraphInterrupt(tuple(questions))


async def _land(task_id: str, run_key: str, group: _Group, selection: Selection) -> dict[str, Any]:
    """The pick lands; refused, the next candidate is tried. The task's final state, with every attempt's record."""
    records = {attempt: record(outcome, selection) for attempt, outcome in sorted(group.outcomes.items())}
    events = ACTIVE[run_key].ctx.events(get_runtime())
    final: dict[str, Any] | None = None
    unsaved = round(sum(outcome.get("unsaved_usd", 0.0) for outcome in group.outcomes.values()), 6)
    for index, attempt in enumerate(selection.order):
        more = index + 1 < len(selection.order)
        final = await land_attempt(task_id, attempt, run_key, more, 0.0 if index else unsaved)
        result: dict[str, Any] = final.get("result") or {}
        if result.get("merged") or not more:
            records[attempt]["landed"] = bool(result.get("merged"))
            break
        records[attempt]["refused"] = str(result.get("reason", ""))
        events("attempt_refused", task_id, reason=result.get("reason", ""), next=selection.order[index + 1])
    if final is None:  # no candidate: the first attempt's failure stands for the task
        final = dict(group.outcomes[min(group.outcomes, key=lambda a: (group.outcomes[a]["cancelled"], a))]["state"])
    return combined(final, records, selection, group.outcomes, group.policy)


def _count_spend(active: ActiveRun, task_id: str, count: int) -> None:
    """The attempts' spend, counted apart while they ran, becomes the task's (the run's `_collect` records the
    task's result cost, every attempt's, under the task)."""
    by_task = active.ctx.spend.by_task
    spent = sum(by_task.pop(f"{task_id}.a{attempt}", 0.0) for attempt in range(1, count + 1))
    by_task[task_id] = max(by_task.get(task_id, 0.0), spent)
