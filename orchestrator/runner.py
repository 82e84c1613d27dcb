"""Runs a feature (or one task of it) through the feature graph, checkpointed to SQLite."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphDrained
from langgraph.runtime import RunControl
from langgraph.types import Command, StateSnapshot

from agents import AgentError, find_cli, reaper
from orchestrator.context import EventSink, RunContext
from orchestrator.errors import InputError
from orchestrator.gitrepo import GitRepo, feature_branch
from orchestrator.graph import build_feature_graph
from orchestrator.plan import FeaturePlan, find_feature_of_task, load_plan, plan_path
from orchestrator.settings import RunSettings, resolve_db
from orchestrator.state import TaskResult
from orchestrator.store import CheckpointStore

OK_STATUSES = {"approved"}


@dataclass
class RunPlan:
    """A validated run: what will execute, where, and in which thread. Building it writes nothing."""

    settings: RunSettings
    plan: FeaturePlan
    base_branch: str
    groups: list[list[str]]
    store: CheckpointStore
    thread_id: str
    only_task: str | None = None


@dataclass
class RunSummary:
    """How a run ended."""

    feature_id: str
    branch: str
    store: CheckpointStore
    thread_id: str
    order: list[str]
    results: dict[str, TaskResult] = field(default_factory=dict)
    report: Path | None = None
    already_finished: bool = False
    interrupted: bool = False
    pending_questions: list[dict[str, Any]] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        done = all(self.results.get(t, {}).get("status") in OK_STATUSES for t in self.order)
        return 0 if done else 1


def _load_target(repo: Path, target: str) -> tuple[FeaturePlan, str | None]:
    if plan_path(repo, target).is_file():
        return load_plan(repo, target), None
    if (repo / ".autobuild" / "features").is_dir():
        try:
            return find_feature_of_task(repo, target), target
        except InputError:
            pass
    return load_plan(repo, target), None  # raises "feature plan not found" naming the path


def prepare(settings: RunSettings) -> RunPlan:
    """Validate settings, repo, plan and dependencies; raise InputError before anything is written."""
    settings.validate()
    settings.repo = settings.repo.expanduser().resolve()
    repo = GitRepo(settings.repo)
    repo.check()
    plan, only_task = _load_target(settings.repo, settings.target)
    base = plan.base_branch or repo.current_branch()
    if not repo.has_branch(base):
        raise InputError(f"base branch {base!r} does not exist: create it or fix base_branch in the plan")
    store = resolve_db(settings.repo, settings.db)
    if not settings.dry_run:
        try:
            find_cli(settings.cli_path)
        except AgentError as exc:
            raise InputError(str(exc)) from None
    groups = [[only_task]] if only_task else plan.groups()
    thread_id = f"{plan.id}:{only_task}" if only_task else plan.id
    run_plan = RunPlan(settings, plan, base, groups, store, thread_id, only_task)
    if settings.resume_only and (not store.exists() or read_thread_values(store, thread_id) is None):
        raise InputError(f"nothing to resume: {thread_id} has no checkpoint in {store}; use `run`")
    if only_task and not settings.ignore_deps:
        missing = [dep for dep in plan.task(only_task).dependencies if dep not in approved_tasks(run_plan)]
        if missing:
            raise InputError(
                f"{only_task} depends on {', '.join(missing)}, not approved yet: run them first or pass --ignore-deps"
            )
    return run_plan


def approved_tasks(run_plan: RunPlan) -> set[str]:
    """Tasks approved and merged in the feature's checkpoint (read-only; no DB is created)."""
    if not run_plan.store.exists():
        return set()
    values = read_thread_values(run_plan.store, run_plan.plan.id)
    results: dict[str, Any] = values.get("results", {}) if values else {}
    return {tid for tid, r in results.items() if r.get("status") == "approved" and r.get("merged")}


def read_thread_values(store: CheckpointStore, thread_id: str) -> dict[str, Any] | None:
    """The latest checkpointed values of a thread, through a read-only connection."""
    with store.reader() as reader:
        try:
            checkpoint = reader.latest(thread_id)
        except sqlite3.OperationalError:
            return None
    return dict(checkpoint.checkpoint.get("channel_values", {})) if checkpoint else None


def pending_questions(snapshot: StateSnapshot) -> list[dict[str, Any]]:
    """Questions waiting for a human: the interrupts of the thread's paused task subgraphs."""
    found = []
    for pending in snapshot.interrupts:
        if isinstance(pending.value, dict) and pending.value.get("question_id"):
            found.append({**pending.value, "interrupt_id": pending.id})
    return sorted(found, key=lambda q: str(q["question_id"]))


def spent_so_far(snapshot: StateSnapshot) -> float:
    """What the thread has spent per its checkpoints: finished tasks, plus the checkpointed turns of tasks
    that were still running when the run stopped (their results are not written yet)."""
    finished = snapshot.values.get("results", {})
    spent = sum(float(result.get("cost_usd", 0.0)) for result in finished.values())
    for task in snapshot.tasks:
        if isinstance(task.state, StateSnapshot) and task.state.values.get("task_id") not in finished:
            spent += float(task.state.values.get("cost_usd", 0.0))
    return spent


async def execute(
    run_plan: RunPlan, emit: EventSink, control: RunControl | None = None, answer: tuple[str, str] | None = None
) -> RunSummary:
    """Run (or resume) the thread to its end; returns the summary from the final checkpoint."""
    settings = run_plan.settings
    # Start-up hygiene: processes a crashed predecessor left behind, and worktrees whose folders are gone.
    reaper.reap_orphans()
    await GitRepo(settings.repo).git("worktree", "prune", check=False)
    ctx = RunContext(settings=settings, plan=run_plan.plan, base_branch=run_plan.base_branch, emit=emit)
    order = [task_id for group in run_plan.groups for task_id in group]
    summary = RunSummary(
        run_plan.plan.id, feature_branch(run_plan.plan.id), run_plan.store, run_plan.thread_id, order
    )
    with run_plan.store.lock(run_plan.thread_id):
        async with run_plan.store.saver() as saver:
            graph = build_feature_graph(ctx, run_plan.groups).compile(checkpointer=saver)
            config: RunnableConfig = {
                "configurable": {"thread_id": run_plan.thread_id},
                # Must be top-level: inside `configurable` it is silently ignored (DESIGN §3).
                "max_concurrency": settings.parallel,
                "recursion_limit": 10 * (len(run_plan.groups) + 2) + 4 * settings.max_turns + 50,
            }
            snapshot = await graph.aget_state(config, subgraphs=True)
            graph_input: dict[str, Any] | Command[Any] | None
            if snapshot.values and settings.fresh:
                await saver.adelete_thread(run_plan.thread_id)
                await _set_aside_feature_branch(ctx)
                snapshot = await graph.aget_state(config)
            # An answer must match a waiting question, even on a finished thread:
            # saying "finished" with exit 0 would hide a mistyped question id.
            answer_input = _answer_command(snapshot, answer) if answer else None
            if snapshot.values and not snapshot.next:
                summary.results = dict(snapshot.values.get("results", {}))
                summary.already_finished = True
                summary.report = ctx.runs_dir() / "AUTO-RUN.md"
                return summary
            if snapshot.values:
                ctx.spent_usd = spent_so_far(snapshot)
                emit({"event": "resume", "thread": run_plan.thread_id, "next": list(snapshot.next),
                      "spent_usd": round(ctx.spent_usd, 6)})
                graph_input = answer_input
            else:
                graph_input = {"feature_id": run_plan.plan.id, "only_task": run_plan.only_task, "results": {}}
            try:
                async for _ in graph.astream(
                    graph_input, config, durability="sync", stream_mode="updates", control=control
                ):
                    pass
            except GraphDrained:
                summary.interrupted = True
            final = await graph.aget_state(config, subgraphs=True)
            summary.pending_questions = pending_questions(final)
            summary.results = dict(final.values.get("results", {}))
            summary.report = ctx.runs_dir() / "AUTO-RUN.md"
    return summary


def _answer_command(snapshot: StateSnapshot, answer: tuple[str, str]) -> Command[Any]:
    question_id, text = answer
    pending = pending_questions(snapshot)
    for question in pending:
        if question["question_id"] == question_id:
            return Command(resume={question["interrupt_id"]: text})
    waiting = ", ".join(q["question_id"] for q in pending) or "none"
    raise InputError(f"no pending question {question_id}: questions waiting for an answer: {waiting}")


async def _set_aside_feature_branch(ctx: RunContext) -> None:
    """--fresh never deletes work: the old feature branch is renamed, not removed."""
    repo = ctx.repo
    await repo.remove_worktree(ctx.integration_worktree)
    if repo.has_branch(ctx.feature_branch):
        backup = f"{ctx.feature_branch}.before-{time.strftime('%Y%m%d-%H%M%S')}"
        await repo.git("branch", "-m", ctx.feature_branch, backup)
        ctx.emit({"event": "branch_set_aside", "branch": ctx.feature_branch, "backup": backup})
    for task_id in ctx.plan.task_ids():
        await repo.remove_worktree(ctx.worktree(task_id), ctx.task_branch(task_id))
