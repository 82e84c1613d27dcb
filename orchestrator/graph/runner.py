"""Runs a feature (or one task of it) through the feature graph, checkpointed to SQLite."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphDrained
from langgraph.runtime import RunControl
from langgraph.types import Command, StateSnapshot

from agents import AgentError, find_cli, reaper
from orchestrator import sandbox
from orchestrator.errors import InputError, StoreError
from orchestrator.events import EventSink, event_dict
from orchestrator.facts import run_order, settled
from orchestrator.gate import GateChoice, check_hidden_tests, choose_gate
from orchestrator.graph import control, rerun
from orchestrator.graph.accepted_answers import accepted_unstored
from orchestrator.graph.state import SUCCESS, FeatureInput, TaskResult
from orchestrator.graph.workflow import build_feature_workflow
from orchestrator.plan.model import FeaturePlan, load_target, plan_digest
from orchestrator.repo import confined, lfs
from orchestrator.repo.commands import git_sync
from orchestrator.repo.git import GitRepo, feature_branch, task_branch
from orchestrator.settings import RunOptions, RunSettings, RunStore
from orchestrator.store import inspection, outcomes
from orchestrator.store import traces as trace
from orchestrator.store.checkpoints import TABLES_MISSING, CheckpointStore
from orchestrator.text import chosen_option


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

    @cached_property
    def gate(self) -> GateChoice:
        """The command that will gate this run and where it came from (the workflow decides the same way)."""
        return choose_gate(self.settings.repo, self.plan.verify, self.settings.verify)


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
    paused: list[dict[str, Any]] = field(default_factory=list)
    """Tasks a person paused (`autobuild pause`), waiting for `unpause` and `resume` (exit 3, like a question)."""
    held: dict[str, str] = field(default_factory=dict)
    """Tasks that could not finish in this run and why (an error, a paused prerequisite): resumable."""
    store_lost: bool = False
    usage_limited: bool = False
    """A usage-limit pause outlasted --max-wait and stopped the run (exit 75)."""
    rerun: dict[str, str] = field(default_factory=dict)
    """What this run runs again of a finished thread, or (already finished) what `resume` would (`rerun_plan`)."""
    spent: dict[str, float] = field(default_factory=dict)
    """What each task cost over all its attempts, this run's included (the final table's costs)."""

    @property
    def exit_code(self) -> int:
        done = all(settled(dict(self.results), t) for t in self.order)
        return 0 if done else 1


def prepare(settings: RunSettings) -> RunPlan:
    """Validate settings, repo, plan and dependencies; raise InputError before anything is written."""
    settings.validate()
    resolved: dict[str, Any] = {"repo": settings.repo.expanduser().resolve()}
    if settings.plan is not None:
        resolved["plan"] = settings.plan.expanduser().resolve()  # as given on the command line: from the cwd
    settings = settings.model_copy(update=resolved)  # settings are frozen: the plan carries the resolved copy
    repo = GitRepo(settings.repo)
    unborn = checked_unless_unborn(repo)
    confined.check_own_folders(settings.repo)
    plan, only_task = load_target(settings.repo, settings.target, settings.plan)
    settings = settings.model_copy(update={"target": settings.target or plan.id})
    if unborn and not plan.base_branch:
        raise InputError(f"{settings.repo} has no commits on its branch yet (an orphan or new branch): commit"
                         " something first, or set base_branch in the plan to the branch to build on")
    base = plan.base_branch or GitRepo(_checkout(settings)).current_branch()
    if not repo.has_branch(base):
        raise InputError(f"base branch {base!r} does not exist: create it or fix base_branch in the plan")
    check_hidden_tests(repo, plan, sandboxed=sandbox.agents_available())
    missing = lfs.missing_objects(settings.repo, f"refs/heads/{base}")
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise InputError(f"{len(missing)} Git LFS object(s) of {base} are not in this repository ({shown}): no"
                         " worktree could check them out (git: smudge filter lfs failed). Fetch them (`git lfs"
                         " fetch`), or run with GIT_LFS_SKIP_SMUDGE=1 to work on their pointer files")
    store = CheckpointStore.for_repo(settings.repo, settings.db, plan.id)
    store.check()
    if not settings.dry_run:
        try:
            find_cli(settings.cli_path)
        except AgentError as exc:
            raise InputError(str(exc)) from None
    groups = [[only_task]] if only_task else plan.groups()
    thread_id = f"{plan.id}:{only_task}" if only_task else plan.id
    run_plan = RunPlan(settings, plan, base, groups, store, thread_id, only_task)
    known = store.exists() and read_thread_values(store, thread_id) is not None
    if settings.resume_only and not known:
        raise InputError(f"nothing to resume: {thread_id} has no checkpoint in {store}; use `run`")
    _check_agreement(run_plan, known)
    rerun.check_named(run_plan, known)
    if only_task and not settings.ignore_deps:
        missing = [dep for dep in plan.task(only_task).dependencies if dep not in approved_tasks(run_plan)]
        if missing:
            raise InputError(
                f"{only_task} depends on {', '.join(missing)}, not approved yet: `autobuild run {missing[0]}` (or"
                f" `autobuild resume {plan.id}`) first, or pass --ignore-deps"
            )
    return run_plan


def checked_unless_unborn(repo: GitRepo) -> bool:
    """`repo.check()`, except that a checkout on a branch with no commit yet (an orphan or unborn branch) is
    allowed: True then, and only a plan's `base_branch` can say what to build on."""
    return repo.check(allow_unborn=True)


def _checkout(settings: RunSettings) -> Path:
    """The worktree whose branch is the base when the plan names none: where the command ran if that is one of
    the user's linked worktrees, else the main worktree (also from a subfolder, or from one of our worktrees)."""
    if settings.checkout is None:
        return settings.repo
    top = git_sync(settings.checkout, "rev-parse", "--show-toplevel")
    where = Path(top.stdout.strip()).resolve() if top.ok and top.stdout.strip() else settings.repo
    ours = GitRepo(settings.repo).worktrees_dir.resolve()
    return settings.repo if where.is_relative_to(ours) else where


def _check_agreement(run_plan: RunPlan, known: bool) -> None:
    """State that disagrees with the checkpoints is refused, never guessed at (exit 2, with the choices)."""
    settings, plan = run_plan.settings, run_plan.plan
    if settings.fresh:
        return
    repo = GitRepo(settings.repo)
    branch = feature_branch(plan.id)
    again = settings.target + (f" --plan {settings.plan}" if settings.plan else "")
    choices = (f"resume with the --db it ran with, or `run {again} --fresh` (which keeps"
               f" {branch} as a backup branch)")
    if run_plan.only_task and run_plan.store.exists() and read_thread_values(run_plan.store, plan.id) is not None:
        fact = inspection.task_facts(run_plan.store, plan.id).get(run_plan.only_task)
        if fact is not None and not fact.get("result"):
            raise InputError(f"{run_plan.only_task} is unfinished in {plan.id}'s run (waiting for an answer, or"
                             f" interrupted): `resume {plan.id}` or `answer` it there instead")
    if not known and not run_plan.only_task and repo.has_branch(branch) and not outcomes.truth(
            run_plan.store, plan.id).threads:  # `run TASK` runs made it: the feature builds on their work
        raise InputError(f"{branch} already exists but {run_plan.store} has no run of {plan.id}: {choices}")
    if not known or not run_plan.store.exists():
        return
    facts = inspection.task_facts(run_plan.store, run_plan.thread_id)
    recorded = {fact.get("plan_digest") for fact in facts.values()} - {None}
    if recorded and recorded != {plan_digest(plan)}:
        raise InputError(f"the plan of {plan.id} changed since its run started: put it back, or `run"
                         f" {again} --fresh` to start over with the new plan (the old branch is kept)")
    merged = [fact["result"]["sha"] for fact in facts.values() if (fact.get("result") or {}).get("merged")]
    if merged and not repo.has_branch(branch):
        raise InputError(f"{branch} is gone but {run_plan.thread_id} merged work into it: restore the branch,"
                         f" or `run {again} --fresh`")
    for sha in merged:
        if not repo.read("merge-base", "--is-ancestor", sha, f"refs/heads/{branch}").ok:
            raise InputError(f"{branch} was moved: it no longer holds work {run_plan.thread_id} merged ({sha[:10]}):"
                             f" restore it, or `run {again} --fresh`")


def approved_tasks(run_plan: RunPlan) -> set[str]:
    """Tasks whose latest finished attempt (whichever run made it) was approved and merged (read-only; no DB is
    created)."""
    results = outcomes.truth(run_plan.store, run_plan.plan.id).outcomes()
    return {tid for tid, r in results.items() if r.get("status") in SUCCESS and r.get("merged")}


def read_thread_values(store: CheckpointStore, thread_id: str) -> dict[str, Any] | None:
    """The latest checkpointed values of a thread, through a read-only connection."""
    with store.reader() as reader:
        try:
            checkpoint = reader.latest(thread_id)
        except TABLES_MISSING:
            return None
    return dict(checkpoint.checkpoint.get("channel_values", {})) if checkpoint else None


def pending_questions(snapshot: StateSnapshot) -> list[dict[str, Any]]:
    """Questions waiting for a human: the interrupts of the thread's paused task subgraphs."""
    found = []
    for pending in snapshot.interrupts:
        if isinstance(pending.value, dict) and pending.value.get("question_id"):
            found.append({**pending.value, "interrupt_id": pending.id})
    return sorted(found, key=lambda q: str(q["question_id"]))


async def execute(
    run_plan: RunPlan, emit: EventSink, control: RunControl | None = None, answer: tuple[str, str] | None = None
) -> RunSummary:
    """Run (or resume) the thread to its end; returns the summary from the final checkpoint, with what every
    attempt of each task cost (`status`'s figures)."""
    summary = await _execute(run_plan, emit, control, answer)
    if run_plan.store.exists():
        summary.spent = await asyncio.to_thread(lambda: outcomes.truth(run_plan.store, run_plan.plan.id).spent)
    return summary


async def _execute(
    run_plan: RunPlan, emit: EventSink, control: RunControl | None, answer: tuple[str, str] | None
) -> RunSummary:
    settings = run_plan.settings
    # Start-up hygiene: processes a crashed predecessor left behind, and worktrees whose folders are gone.
    reaper.reap_orphans()
    repo = GitRepo(settings.repo)
    await repo.git("worktree", "prune", check=False)
    order = [run_plan.only_task] if run_plan.only_task else run_plan.plan.task_ids()
    summary = RunSummary(
        run_plan.plan.id, feature_branch(run_plan.plan.id), run_plan.store, run_plan.thread_id, order
    )
    summary.report = trace.runs_dir(settings.repo, run_plan.plan.id) / "AUTO-RUN.md"
    with run_plan.store.lock(run_plan.thread_id):
        async with run_plan.store.saver() as saver:
            graph = build_feature_workflow(saver)
            config: RunnableConfig = {"configurable": {"thread_id": run_plan.thread_id}}
            snapshot = await graph.aget_state(config, subgraphs=True)
            graph_input: FeatureInput | Command[Any] | None
            if settings.fresh:  # from the base, whichever DB knew the feature: an old branch is set aside
                for thread in rerun.fresh_threads(run_plan):
                    await saver.adelete_thread(thread)
                await _set_aside_feature_branch(run_plan, emit)
                snapshot = await graph.aget_state(config)
            # An answer must match a waiting question, even on a finished thread:
            # saying "finished" with exit 0 would hide a mistyped question id.
            given = answer
            if answer is None:  # an answer accepted by a run killed before it was stored: this run takes it
                answer = accepted_unstored(settings.repo, run_plan.plan.id, pending_questions(snapshot))
            answer_input = _answer_command(snapshot, answer) if answer else None
            if given is not None:
                _answer_given(run_plan, snapshot, given)
            if not _starting(run_plan, snapshot, summary, emit):
                return summary
            graph_input = answer_input if snapshot.next else rerun.new_input(run_plan, summary.rerun)
            end: dict[str, Any] = {}
            control = control or RunControl()
            watcher = asyncio.create_task(_watch_store(run_plan.store, control, summary))
            try:
                async for _, event in graph.astream(graph_input, config, context=_options(run_plan),
                                                    durability="sync", stream_mode="custom", subgraphs=True,
                                                    control=control):
                    if isinstance(event, dict):
                        if event.get("event") == "feature_end":
                            end = event
                        emit(event)
            except GraphDrained:
                summary.interrupted = True
            finally:
                watcher.cancel()
            if summary.store_lost:
                raise StoreError(f"the checkpoint DB {run_plan.store} was deleted or replaced during the run:"
                                 " the run stopped; work merged so far is on the feature branch")
            summary.interrupted = summary.interrupted or control.drain_requested
            _conclude(summary, await graph.aget_state(config, subgraphs=True), end)
    return summary


def _options(run_plan: RunPlan) -> RunOptions:
    """The run's options, with its own store: the notes and a person's controls it reads are kept there."""
    return run_plan.settings.options().model_copy(update={"notes_store": RunStore(run_plan.store.location)})


def _starting(run_plan: RunPlan, snapshot: StateSnapshot, summary: RunSummary, emit: EventSink) -> bool:
    """Whether the thread runs now, said with a `resume` event (what status counted so far: the live footer's
    start). A finished thread runs again only for `resume` or `run TASK`, and only when `rerun_plan` finds work;
    a feature's first run after `run TASK` ones runs only what they did not get done, and `run TASK` of a task
    another run got done runs nothing. Else the summary says it finished, with each task's latest result and
    what `resume` would run."""
    finished = bool(snapshot.values) and not snapshot.next
    feature, thread = run_plan.plan.id, run_plan.thread_id
    truth = outcomes.truth(run_plan.store, feature).outcomes()
    if snapshot.next:  # with how each finished task ended: the live table shows them so, not queued
        emit(event_dict("resume", feature=feature, thread=thread, next=list(snapshot.next),
                        spent_usd=rerun.spent_before(run_plan), finished=_finished(truth, summary.order)))
        return True
    if finished:
        summary.rerun = rerun.rerun_plan(run_plan)
        runs = bool(summary.rerun) and (run_plan.settings.resume_only or bool(run_plan.only_task))
    else:
        left: dict[str, str] | None
        if run_plan.settings.fresh:  # starts over, whatever other runs did
            left = None
        elif run_plan.only_task:  # `run TASK` of a task another run got done: nothing to do again
            left = {} if rerun.done(truth.get(run_plan.only_task)) else None
        else:
            left = rerun.not_done(truth, summary.order)
        summary.rerun, runs = left or {}, left != {}
    if not runs:
        summary.order = run_order(summary.order, truth)
        summary.results = {t: truth[t] for t in summary.order if t in truth}
        summary.already_finished = True
        return False
    if (before := rerun.spent_before(run_plan)) or summary.rerun:
        emit(event_dict("resume", feature=feature, thread=thread, next=[], rerun=summary.rerun, spent_usd=before,
                        finished=_finished(truth, [task for task in summary.order if task not in summary.rerun])))
    return True


def _finished(truth: Mapping[str, Mapping[str, Any]], order: Sequence[str]) -> dict[str, str]:
    """How each task of `order` that an earlier run finished ended (its latest result's status)."""
    return {task: str(truth[task].get("status")) for task in order if task in truth and truth[task].get("status")}


def _conclude(summary: RunSummary, final: StateSnapshot, end: dict[str, Any]) -> None:
    """The summary from the final checkpoint and the workflow's `feature_end` event."""
    summary.pending_questions = pending_questions(final)
    summary.paused = control.paused_tasks([pending.value for pending in final.interrupts])
    summary.results = dict((final.values or {}).get("results") or end.get("results") or {})
    summary.order = run_order(summary.order, summary.results)  # with the tasks replans added
    summary.held = {task: why for task, why in (end.get("held") or {}).items() if task not in summary.results}
    summary.usage_limited = bool(end.get("usage_limit_exceeded"))


async def _watch_store(store: CheckpointStore, control: RunControl, summary: RunSummary) -> None:
    """A checkpoint DB deleted or replaced mid-run stops the run: nothing may go on unrecorded."""
    start = store.identity()
    while True:
        await asyncio.sleep(1.0)
        if store.identity() != start:
            summary.store_lost = True
            control.request_drain("the checkpoint DB was deleted or replaced")
            return


def _answer_command(snapshot: StateSnapshot, answer: tuple[str, str]) -> Command[Any]:
    question_id, text = answer
    pending = pending_questions(snapshot)
    # `answer FEAT Q 2`: the second option, as at the prompt; sibling attempts asking in the same words share the id
    asked = [question for question in pending if question["question_id"] == question_id]
    if asked:
        options = [str(option) for option in asked[0].get("options") or []]
        return Command(resume={question["interrupt_id"]: chosen_option(text, options) for question in asked})
    waiting = ", ".join(q["question_id"] for q in pending) or "none"
    raise InputError(f"no pending question {question_id}: questions waiting for an answer: {waiting}")


def _answer_given(run_plan: RunPlan, snapshot: StateSnapshot, answer: tuple[str, str]) -> None:
    """The answer in its task's trace (`answer_given`) with where it came from (`answer --from`) and when, before the
    run takes it (the task's `question_answered` follows)."""
    for question in pending_questions(snapshot):
        if question["question_id"] == answer[0] and question.get("task"):
            trace.append(run_plan.settings.repo, run_plan.plan.id, str(question["task"]), event_dict(
                "answer_given", feature=run_plan.plan.id, task=str(question["task"]), question_id=answer[0],
                answer=answer[1], source=run_plan.settings.answered_from))
            return


async def _set_aside_feature_branch(run_plan: RunPlan, emit: EventSink) -> None:
    """--fresh never deletes work: the old feature branch is renamed, not removed."""
    repo = GitRepo(run_plan.settings.repo)
    plan = run_plan.plan
    worktrees = repo.worktrees_dir / plan.id
    await repo.remove_worktree(worktrees / "_integration")
    branch = feature_branch(plan.id)
    if repo.has_branch(branch):
        backup = f"{branch}.before-{time.strftime('%Y%m%d-%H%M%S')}"
        await repo.rename_branch(branch, backup)
        emit(event_dict("branch_set_aside", branch=branch, backup=backup))
    for task_id in plan.task_ids():
        await repo.remove_worktree(worktrees / task_id, task_branch(plan.id, task_id))
