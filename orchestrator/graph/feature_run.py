"""The feature's run: the body of the workflow `graph/workflow.py` wires, and each task's `@task` body.

Under the repository's lock: the plan is loaded, the feature's lock taken, the base's gate decided and run, the
feature branch made; then one `run_task` per plan task, launched up front in plan order (task ids depend on call
order, so replays must issue them identically), each waiting in the scheduler for its prerequisites and a slot,
then running the task subgraph; last the feature's report. Questions, holds and a usage pause end the run as an
interrupt (resumable).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.errors import GraphDrained, GraphInterrupt
from langgraph.func import task
from langgraph.runtime import Runtime, get_runtime
from langgraph.types import Interrupt

from agents import ClaudeAgents
from agents.limits import UsageLimitGate, UsageLimitYield
from orchestrator import facts, sandbox
from orchestrator.errors import InputError, PlanError
from orchestrator.gate import GateChoice, GateRequest, GateResult, Gates, GateSetup, check_hidden_tests, choose_gate
from orchestrator.graph import attempts, by_url, pause, replan
from orchestrator.graph.active import ACTIVE, ActiveRun, TaskGraph
from orchestrator.graph.context import RunContext, Spend
from orchestrator.graph.events import EventLog
from orchestrator.graph.live_pause import LivePauses
from orchestrator.graph.scheduler import Held, Scheduler, hold
from orchestrator.graph.state import FeatureInput, FeatureOutput, TaskInput, TaskResult
from orchestrator.plan.model import FeaturePlan, load_target, plan_digest, remember_plan_file
from orchestrator.repo import watch
from orchestrator.repo.git import GitRepo
from orchestrator.settings import RunOptions
from orchestrator.store import receipts
from orchestrator.store import traces as trace
from orchestrator.store.feature_lock import feature_lock
from orchestrator.store.pause import pause_path
from orchestrator.store.paused_threads import interrupt_value, shared_paused_threads
from orchestrator.views import html_report, pictures, reports


class TaskGraphs(Protocol):
    """The compiled task graph for `(max_turns, precheck)`, or its landing entry (`workflow.task_graph`, passed in:
    it imports this)."""

    def __call__(self, max_turns: int, precheck: bool, landing: bool = False, /) -> TaskGraph: ...

_ACTIVE = ACTIVE
"""Task bodies find their run by key: task arguments stay plain strings, never live objects."""


@task
async def prepare_feature(repo: str, feature_id: str, base_branch: str | None, digest: str) -> dict[str, str]:
    """The feature branch, where it started and the plan it started from; recorded once, so a resume never
    re-decides the base and notices a changed plan."""
    git = GitRepo(Path(repo))
    base: str = base_branch if base_branch else await asyncio.to_thread(git.current_branch)
    await git.ensure_excluded()
    head = await git.ensure_branch(f"autobuild/{feature_id}", base)
    return {"base_branch": base, "feature_sha": head, "plan_digest": digest}


@task
async def gate_baseline(repo: str, feature_id: str, base_branch: str | None, *, plan_verify: str | None,
                        plan_setup: str | None, verify: str | None, setup: str | None,
                        timeout_s: float, judge_by_counts: bool = False, repairs_base: bool = False) -> GateSetup:
    """The run's gate, decided and run once on the base before any agent session (kept in the checkpoint,
    so a resume neither re-runs it nor re-decides it)."""
    git = GitRepo(Path(repo))
    base = await asyncio.to_thread(lambda: git.rev(base_branch or git.current_branch()))
    request = GateRequest(plan_verify=plan_verify, plan_setup=plan_setup, verify=verify, setup=setup,
                          timeout_s=timeout_s, judge_by_counts=judge_by_counts, repairs_base=repairs_base)
    return await Gates(git, request).check_base(feature_id, base)


@task
async def run_task(task_id: str, run_key: str) -> TaskResult:
    """One task: wait for readiness, run its subgraph, hand back its result. Never raises anything but an
    interrupt, so one task's failure can't cancel its siblings (graph-wide error policy)."""
    active = _ACTIVE[run_key]
    ctx, scheduler = active.ctx, active.scheduler
    runtime = get_runtime()
    events = ctx.events(runtime)
    try:
        skip_reason = await scheduler.wait_ready(task_id, lambda: runtime.drain_requested)
    except Held as held:
        await hold(scheduler, task_id, str(held))
    graph = active.task_graph
    # A trace shows the task's subgraph under its id, its runs tagged with it (neither reaches the checkpoints).
    config: RunnableConfig = {"recursion_limit": 12 * ctx.options.max_turns + 30, "run_name": f"task {task_id}",
                   "tags": [task_id]}
    count, launched = (1, 1) if skip_reason else await attempts.planned(ctx.options, ctx.plan, task_id)
    async with contextlib.nullcontext() if launched > 1 else scheduler.slot(task_id):  # attempts: one each
        try:
            events("task_ready", task_id)
            task_input = TaskInput(feature_id=ctx.feature_id, task_id=task_id, skip_reason=skip_reason,
                                   plan_digest=active.digest)
            final = await (attempts.run(task_id, run_key, count, launched) if launched > 1
                           else graph.ainvoke(task_input, config, context=ctx))
        except GraphInterrupt:
            await scheduler.hold(task_id, "waiting for an answer")
            raise
        except GraphDrained:
            await hold(scheduler, task_id, "interrupted")
        except UsageLimitYield as exc:  # a served run gives its slot back: held at this node, re-run on resume
            await hold(scheduler, task_id, str(exc))
        except Exception as exc:  # noqa: BLE001 - the graph-wide error policy: this task errs, siblings go on
            reason = f"{type(exc).__name__}: {exc}"
            await hold(scheduler, task_id, f"error: {reason}", error=True,
                       then=lambda: events("task_error", task_id, reason=reason, resumable=True))
    result: TaskResult = final["result"]
    if replan.replannable(result, task_id, ctx.options.replan):
        result = await replan.replace(task_id, result, final, run_key, launch=lambda ids: _collect(
            {new_id: run_task(new_id, run_key) for new_id in ids}, scheduler, ctx.spend))
    await scheduler.finish(task_id, result)
    await trace.flushed()
    return result


async def _collect(futures: dict[str, Awaitable[TaskResult]], scheduler: Scheduler, spend: Spend) -> list[Interrupt]:
    """Await every task as it completes; questions are gathered, never allowed to cancel siblings."""
    pending = {asyncio.ensure_future(future): task_id for task_id, future in futures.items()}
    questions: list[Interrupt] = []
    waiting = set(pending)
    while waiting:
        done, waiting = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        for future in done:
            try:
                result: TaskResult = future.result()
                spend.record(pending[future], float(result.get("cost_usd", 0.0)))
                await replan.settle(scheduler, pending[future], result)
            except GraphInterrupt as exc:
                questions.extend(exc.args[0] if exc.args else ())
                await scheduler.hold(pending[future], "interrupted")
            except UsageLimitYield as exc:  # a replanner's session in a served run's long pause
                await scheduler.hold(pending[future], str(exc))
    return questions


async def run_feature(inputs: FeatureInput, options: RunOptions, repo: GitRepo,
                      runtime: Runtime[RunOptions], task_graphs: TaskGraphs) -> FeatureOutput:
    """The workflow's body, under the repository lock: the plan, then the rest under the feature's lock."""
    plan_file = Path(inputs["plan"]) if inputs.get("plan") else None
    plan, only_task = await asyncio.to_thread(_load_plan, repo.root, inputs.get("target", ""), plan_file)
    # Workers sharing a store: one run per (repo, feature) across machines (a no-op without one). Keyed by the
    # plan's id, so a run of one of its tasks and a run of the whole feature exclude each other too.
    thread = thread_of(get_config())
    async with feature_lock(str(inputs.get("repo_url") or repo.root), plan.id, thread):
        if thread and (paused := shared_paused_threads()) is not None:
            trace.in_order(paused.forget, thread)  # this thread runs now: no waker resumes it again
        return await _run_plan(inputs, options, repo, runtime, plan=plan, only_task=only_task, thread=thread,
                               task_graphs=task_graphs)


async def _run_plan(inputs: FeatureInput, options: RunOptions, repo: GitRepo, runtime: Runtime[RunOptions], *,
                    plan: FeaturePlan, only_task: str | None, thread: str,
                    task_graphs: TaskGraphs) -> FeatureOutput:
    """The loaded plan's run: the base's gate, the feature branch, every task, the report."""
    run = await _start(inputs, options, repo, runtime, plan=plan, thread=thread)
    order = [only_task] if only_task else plan.task_ids()
    earlier = dict(inputs.get("earlier") or {})  # a run again of some tasks: the others' latest results
    order = [t for t in order if t in inputs.get("rerun", order)]
    await _announce(run, order)
    ignore_deps = options.ignore_deps or only_task is not None
    scheduler = Scheduler(plan, order, options.parallel, options.schedule, ignore_deps, earlier=earlier)
    run.ctx.slots = scheduler.slots  # a task waiting for an answer gives its slot up (RunContext)
    run.ctx.pauses = LivePauses(scheduler.slots, scheduler.moving)  # and so does a paused one, waiting in place
    run.ctx.landed = scheduler.landed  # a landed task's dependents start at once, in its slot (RunContext)
    questions = await _run_tasks(run, scheduler, order,
                                 task_graphs(options.max_turns, bool(options.precheck_model)),
                                 task_graphs(options.max_turns, bool(options.precheck_model), True))
    return await _finish(inputs, run, scheduler, questions, order=order, earlier=earlier, only_task=only_task)


@dataclass
class _Started:
    """What the run's start made, for its tasks and its end."""

    ctx: RunContext
    events: EventLog
    feature_sha: str
    """Where the feature branch was when the run started."""
    digest: str
    """The digest of the plan the run started from."""
    limit_gate: UsageLimitGate
    unrecorded: list[str]
    """Why the workers' store could not learn of a yield (then nothing re-queues it)."""


async def _start(inputs: FeatureInput, options: RunOptions, repo: GitRepo, runtime: Runtime[RunOptions], *,
                 plan: FeaturePlan, thread: str) -> _Started:
    """The run's start: the base's gate, the feature branch, the usage-limit pause, the run's context."""
    digest = plan_digest(plan)
    # Before the feature branch and any session: a gate that can't run stops the run having spent nothing.
    base_branch = plan.base_branch or inputs.get("base_branch")
    gate = await _base_gate(repo, plan, options, base_branch)
    setup = await prepare_feature(str(repo.root), plan.id, base_branch, digest)
    await by_url.feature_started(inputs, repo, plan.id, setup["feature_sha"])
    if setup.get("plan_digest", digest) != digest:
        raise PlanError(f"the plan of {plan.id} changed since its run started: put it back, or start over on a"
                        " new thread")
    events = EventLog(repo.root, plan.id, runtime.stream_writer)
    watch.forget(repo.root)
    unrecorded: list[str] = []
    limit_gate = await asyncio.to_thread(pause.limit_gate, options, pause_path(repo.root, plan.id), events,
                                         partial(pause.yielded, runtime, events, thread, unrecorded))
    ctx = RunContext(options=options, plan=plan, repo=repo, base_branch=setup["base_branch"],
                     agents=options.agents or ClaudeAgents(), gate=gate, spend=Spend(),
                     limit_gate=limit_gate, remote_url=inputs.get("repo_url"),
                     answers={t: dict(a) for t, a in (inputs.get("answers") or {}).items()})
    return _Started(ctx, events, setup["feature_sha"], digest, limit_gate, unrecorded)


async def _base_gate(repo: GitRepo, plan: FeaturePlan, options: RunOptions, base_branch: str | None) -> GateSetup:
    """The run's gate, decided and checked on the base when the run started (`gate_baseline`), and the same
    gate `--verify` names now: a resume can't swap it silently."""
    gate = await gate_baseline(str(repo.root), plan.id, base_branch, plan_verify=plan.verify,
                               plan_setup=plan.setup, verify=options.verify, setup=options.setup,
                               timeout_s=options.verify_timeout, judge_by_counts=options.judge_by_counts,
                               repairs_base=options.repair_base or plan.repairs_base())
    chosen = None if options.verify is None else await asyncio.to_thread(choose_gate, repo.root, plan.verify,
                                                                          options.verify)
    if chosen is not None and chosen.command != gate["command"]:
        # The gate was decided and checked on the base when the run started; a resume can't swap it silently.
        raise InputError(f"this run's gate is {GateChoice(gate['command'], gate['source']).describe()}, decided"
                         f" when it started; --verify {options.verify!r} does not apply to it: resume without"
                         " --verify, or `run --fresh` to start over with the new gate")
    return gate


async def _announce(run: _Started, order: list[str]) -> None:
    """The run's `feature_start` event, and once per run start whether the agents' sandbox is missing."""
    ctx, events, gate = run.ctx, run.events, run.ctx.gate
    events("feature_start", branch=ctx.feature_branch, sha=run.feature_sha, tasks=order,
           budget_usd=ctx.options.budget_usd,
           gate=gate["command"], gate_source=gate["source"], setup=gate["setup"],
           gate_base=_base_line(gate["base"]) if gate["base"] else None,
           base_failing=(gate["base"]["failing"] if gate["base"] else None) or [])
    most = {task_id: attempts.attempts_of(ctx.options, ctx.plan, task_id) for task_id in order}
    if max(most.values(), default=1) > ctx.options.parallel:  # said at the start: attempts queue for slots
        events("attempts_queue", attempts=max(most.values()), parallel=ctx.options.parallel,
               tasks=[task_id for task_id, count in most.items() if count > ctx.options.parallel])
    if not await asyncio.to_thread(sandbox.agents_available):  # said once per run start; then a change around a
        # session fails its task
        events("sandbox_unavailable", detail=await asyncio.to_thread(sandbox.why_unavailable))


def _base_line(base: GateResult) -> str:
    """What the base's run showed, and, when it is no baseline a task repairs, why it is none (the refusal's cause,
    said again where the run starts: every test the gate runs must pass)."""
    cause = base.get("not_a_baseline")
    return base["summary"] + (f"; no baseline ({cause}): a task repairs it, every test the gate runs must pass"
                              if cause else "")


async def _run_tasks(run: _Started, scheduler: Scheduler, order: list[str], task_graph: TaskGraph,
                     landing_graph: TaskGraph) -> list[Interrupt]:
    """Every task of the run, one `run_task` each, launched up front in `order`; the questions they leave."""
    key = uuid.uuid4().hex
    _ACTIVE[key] = ActiveRun(run.ctx, scheduler, task_graph, run.digest, landing_graph)
    try:
        return await _collect({task_id: run_task(task_id, key) for task_id in order}, scheduler,
                              run.ctx.spend)
    finally:
        del _ACTIVE[key]


async def _finish(inputs: FeatureInput, run: _Started, scheduler: Scheduler, questions: list[Interrupt], *,
                  order: list[str], earlier: dict[str, TaskResult], only_task: str | None) -> FeatureOutput:
    """The run's end: the feature's report and `feature_end`, then an interrupt while anything waits (questions,
    held tasks, a usage pause), else the integration worktree removed and the output."""
    ctx, limit_gate, unrecorded = run.ctx, run.limit_gate, run.unrecorded
    results = {task_id: scheduler.results[task_id] for task_id in order if task_id in scheduler.results}
    # The feature's report covers all its tasks, whichever run finished them last: never one run's share.
    everything = {**{k: v for k, v in earlier.items() if k not in order}, **results}
    counted = receipts.counting_attempts(everything, results, inputs.get("spent") or {},  # every attempt's cost
                                         inputs.get("spent_turns") or {})
    report = await _feature_reports(ctx, ctx.gate, scheduler, everything=everything, counted=counted, order=order)
    run.events("feature_end", report=str(report), results=results, held=scheduler.held,
               usage_limit_exceeded=bool(ctx.limit_gate and ctx.limit_gate.exceeded),
               gate_cache=ctx.gates.cache.stats() if ctx.gates.cache else None)
    if limit_gate.yielded is not None:  # the run's last word: paused until then, the workers re-queue it
        await trace.flushed()  # the yield's record in the workers' store was written (or failed) in order
        value = interrupt_value(limit_gate.yielded) | ({"requeued": False, "unrecorded": unrecorded[-1]}
                                                      if unrecorded else {})
        questions.append(Interrupt(value, id=uuid.uuid4().hex))
    if questions or scheduler.held:
        raise GraphInterrupt(tuple(questions))
    if not ctx.options.keep_worktrees:
        await ctx.repo.remove_worktree(ctx.integration_worktree)
    return FeatureOutput(feature_id=ctx.feature_id, results=results if only_task else everything)


async def _feature_reports(ctx: RunContext, gate: GateSetup, scheduler: Scheduler, *,
                           everything: dict[str, TaskResult], counted: dict[str, Any], order: list[str]) -> Path:
    """The feature's AUTO-RUN.md and HTML page over all its tasks, costs counting every attempt (`counted`)."""
    plan, root = ctx.plan, ctx.repo.root
    shown = facts.run_order([*plan.task_ids(), *[t for t in order if t not in plan.task_ids()]], everything)
    text = reports.feature_report(plan.id, plan.name, counted, shown, ctx.feature_branch, held=scheduler.held,
                                  gate=gate)
    await trace.flushed()  # the pictures read the traces
    outcomes = pictures.run_outcomes(everything, scheduler.held, shown, errored=scheduler.errored)
    text += await asyncio.to_thread(pictures.report_section, root, plan, shown, outcomes)
    report = await asyncio.to_thread(reports.write, ctx.runs_dir() / reports.REPORT_NAME, text)
    page = await asyncio.to_thread(html_report.feature_html, root, plan, shown, outcomes, counted)
    await asyncio.to_thread(html_report.write, ctx.runs_dir() / html_report.REPORT_HTML, page)  # the pictures drawn
    return report


def _load_plan(root: Path, target: str, plan_file: Path | None) -> tuple[FeaturePlan, str | None]:
    """The run's plan and single task, from the repo's files (blocking: the workflow runs it in a thread)."""
    plan, only_task = load_target(root, target, plan_file)
    # A served run has no CLI to check them first; a clone has no untracked files, so it refuses hidden tests.
    check_hidden_tests(GitRepo(root), plan, sandboxed=sandbox.agents_available())
    if plan_file is not None:
        remember_plan_file(root, plan, plan_file)  # so `status`, `show` and `resume` find it by its id
    return plan, only_task


def thread_of(config: RunnableConfig) -> str:
    """The thread the run's config names ("" for none: then no workers' lock or pause record is keyed by it)."""
    return str(config.get("configurable", {}).get("thread_id", ""))
