"""Replan instead of failing (`--replan N`): a task that ended at max turns or stalled goes to the planner with its
requirements, the coach's last feedback and the diff so far; the smaller tasks it proposes (validated like any
plan) replace it, its dependents wait for all of them, and they run. The replaced task ends `replaced`.

Determinism on replay: the planner session is its own `@task` (checkpointed: a resume never asks again), called
from inside the replaced task's own `@task`, which then launches the new tasks; so every call is issued in the
same order on replay. A replaced task's result carries its replacement (the new tasks and their results), so a
replayed result rebuilds the plan and the schedule without running anything again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from langgraph.errors import GraphInterrupt
from langgraph.func import task
from langgraph.runtime import get_runtime
from langgraph.types import interrupt

from agents import ReplanInput, format_feedback
from orchestrator.causes import REPLANNABLE, cause_of
from orchestrator.errors import PlanError
from orchestrator.graph.active import ACTIVE, ActiveRun
from orchestrator.graph.given_answer import given_answer
from orchestrator.graph.scheduler import Scheduler
from orchestrator.graph.state import TaskResult, TaskState
from orchestrator.plan.planner import replacement_plan
from orchestrator.plan.replacement import MARK, adopt, replace_task, replan_round
from orchestrator.settings import Asker
from orchestrator.store import receipts
from orchestrator.views import reports


def replannable(result: TaskResult, task_id: str, limit: int) -> bool:
    """Should the planner split this finished task? (`limit`: --replan, replans per line of tasks.)"""
    return (limit > 0 and result.get("status") == "failed" and replan_round(task_id) < limit
            and cause_of(result) in REPLANNABLE and int(result.get("false_approvals", 0) or 0) == 0)


@task
async def propose_replacement(task_id: str, run_key: str, round_: int, failure: dict[str, Any]) -> dict[str, Any]:
    """The planner's replacement for `task_id`, validated against the run's current plan: `{replan_of, round,
    tasks, error, cost_usd}` (`tasks` empty and `error` set when refused)."""
    active = ACTIVE[run_key]
    ctx = active.ctx
    events = ctx.events(get_runtime())
    spent = float(failure["cost_usd"])
    outcome: dict[str, Any] = {MARK: task_id, "round": round_, "tasks": [], "error": "", "cost_usd": 0.0}
    exhausted = ctx.budget_exhausted(task_id, spent)
    if exhausted:
        return outcome | {"error": f"no replan: {exhausted}"}
    diff = (await ctx.repo.git("diff", "--stat", "-p", f"{failure['base_sha']}..{failure['last_sha']}",
                               check=False)).stdout if failure["base_sha"] and failure["last_sha"] else ""
    task_spec = ctx.plan.task(task_id)
    data = ReplanInput(
        brief=ctx.brief(task_id, failure.get("answers")), round=round_, reason=str(failure["reason"]),
        turns=int(failure["turns"]),
        repo=ctx.repo.root, feedback=str(failure["feedback"]), diff=diff, dependencies=list(task_spec.dependencies),
        other_tasks=[f"{t.id}: {t.name}" for t in ctx.plan.tasks if t.id != task_id],
        transcript_path=ctx.runs_dir(task_id) / f"replan-{round_}.jsonl",
    )
    events("replan_start", task_id, round=round_, reason=str(failure["reason"]))
    settings = await asyncio.to_thread(ctx.session_settings, "planner", task_id, spent, events)
    result = await ctx.agents.replan(data, settings)
    outcome["cost_usd"] = round(result.cost_usd, 6)
    if result.status != "success" or result.report is None:
        return outcome | {"error": f"the planner session ended without submit_plan ({result.status})"}
    try:
        _, tasks = replacement_plan(ctx.plan, task_id, result.report, round_)
    except PlanError as exc:
        return outcome | {"error": str(exc)}
    return outcome | {"tasks": tasks}


def _failure(result: TaskResult, final: TaskState) -> dict[str, Any]:
    """What the planner is told about the attempt (plain data: a task's argument)."""
    review: dict[str, Any] = dict(final.get("review") or {})
    history = final.get("history") or []
    return {"reason": str(result.get("reason", "")), "turns": int(result.get("turns", 0)),
            "cost_usd": float(result.get("cost_usd", 0.0)), "base_sha": str(final.get("base_sha") or ""),
            "last_sha": str(history[-1].get("sha") or "") if history else "",
            "feedback": format_feedback([dict(i) for i in review.get("items") or []], list(review.get("notes") or []))
            if review else "", "answers": dict(final.get("answers") or {})}


def _with_replan_cost(result: TaskResult, final: TaskState, cost: float, replans: int) -> TaskResult:
    total = round(float(result.get("cost_usd", 0.0)) + cost, 6)
    receipt = receipts.task_receipt(final.get("history") or [], str(result.get("status")), int(result.get("turns", 0)),
                                    total, replan_cost_usd=cost, replans=replans)
    return result | TaskResult(cost_usd=total, receipt=receipt)


async def replace(task_id: str, result: TaskResult, final: Any, run_key: str, *,
                  launch: Callable[[list[str]], Awaitable[list[Any]]]) -> TaskResult:
    """Ask the planner for `task_id`'s replacement; if valid, run it (`launch` runs tasks by id and returns
    their questions) and return the replaced task's result; else the failed result, with why."""
    active = ACTIVE[run_key]
    ctx = active.ctx
    events = ctx.events(get_runtime())
    proposal = await propose_replacement(task_id, run_key, replan_round(task_id) + 1, _failure(result, final))
    cost = float(proposal["cost_usd"])
    tasks = [dict(t) for t in proposal["tasks"]]
    ctx.spend.record(task_id, float(result.get("cost_usd", 0.0)) + cost)
    if not tasks:
        events("replan_refused", task_id, reason=proposal["error"], cost_usd=cost)
        refused = _with_replan_cost(result, final, cost, replans=0)
        return refused | TaskResult(reason=f"{result.get('reason')}; replan refused: {proposal['error']}")
    new_ids = [str(t["id"]) for t in tasks]
    if ctx.options.interactive and not await _agreed(ctx.options.asker, task_id, proposal, tasks):
        events("replan_refused", task_id, reason="a person declined the replacement", cost_usd=cost)
        declined = _with_replan_cost(result, final, cost, replans=0)
        return declined | TaskResult(reason=f"{result.get('reason')}; replan declined: {', '.join(new_ids)} not run")
    await _apply(active.scheduler, task_id, tasks)
    for new_id in new_ids:  # what a person answered the replaced task holds for the tasks that do its work
        ctx.answers[new_id] = {**ctx.answers.get(new_id, {}), **dict(final.get("answers") or {})}
    events("replan", task_id, tasks=new_ids, cost_usd=cost, reason=str(result.get("reason", "")))
    replaced = _with_replan_cost(result, final, cost, replans=1) | TaskResult(
        status="replaced", reason=f"replaced by {', '.join(new_ids)} ({result.get('reason')})", replaced_by=new_ids)
    await active.scheduler.finish(task_id, replaced)  # its dependents now wait for the new tasks
    if result.get("report"):
        await asyncio.to_thread(reports.note_replacement, Path(str(result["report"])), new_ids, cost)
    questions = await launch(new_ids)
    if questions:
        raise GraphInterrupt(tuple(questions))
    done = {new_id: active.scheduler.results[new_id] for new_id in new_ids if new_id in active.scheduler.results}
    return replaced | TaskResult(replacement={"tasks": tasks, "results": done})


async def _agreed(asker: Asker | None, task_id: str, proposal: dict[str, Any], tasks: list[dict[str, Any]]) -> bool:
    """Interactive runs ask before replacing a task, as an agent's question is asked: at a terminal in-process (the
    run's asker: the other tasks keep running), else as an interrupt (`answer` it with yes or no). Nothing before
    this in the task's body calls an agent again on resume: the proposal is checkpointed."""
    listed = "; ".join(f"{t['id']}: {t.get('name', '')}" for t in tasks)
    question = {"question_id": f"{task_id}-replan-{proposal['round']}", "task": task_id,
                "question": f"{task_id} ran out of turns. Replace it by {listed}?", "options": ["yes", "no"]}
    answer = await asker(question) if callable(asker) else None
    if answer is None:
        answer = given_answer(interrupt(question))[0]
    return str(answer).strip().lower() in ("y", "yes")


async def _apply(scheduler: Scheduler, task_id: str, tasks: list[dict[str, Any]]) -> None:
    """The run's plan (shared by its context and scheduler) with `task_id` replaced, and the schedule with it."""
    if not any(t.id == tasks[0]["id"] for t in scheduler.plan.tasks):
        adopt(scheduler.plan, replace_task(scheduler.plan, task_id, tasks))
    await scheduler.extend(task_id, [str(t["id"]) for t in tasks])


async def settle(scheduler: Scheduler, task_id: str, result: TaskResult) -> None:
    """A task's result reached the workflow (live, or replayed from the checkpoint): a replaced task's
    replacement is put back into the plan and the schedule first, with its tasks' results."""
    replacement = result.get("replacement")
    if result.get("status") == "replaced" and isinstance(replacement, dict) and replacement.get("tasks"):
        await _apply(scheduler, task_id, [dict(t) for t in replacement["tasks"]])
        for new_id, new_result in (replacement.get("results") or {}).items():
            if new_id not in scheduler.results:
                await settle(scheduler, new_id, new_result)
    await scheduler.finish(task_id, result)


__all__ = ["ActiveRun", "propose_replacement", "replace", "replannable", "settle"]
