"""The graphs, wired at module level: the task `StateGraph` and the feature workflow (`@entrypoint`).

`graph` (no checkpointer: a LangGraph server brings its own) is what `langgraph.json` exports as `autobuild`;
the CLI calls `build_feature_workflow(saver)`. The workflow launches one `@task` per plan task up front, in
plan order (task ids depend on call order, so replays must issue them identically); each waits in the
in-memory scheduler for its prerequisites and a slot, then runs the task subgraph (initialize → player →
coach → … → finalize → merge). Finished tasks are replayed from the checkpoint on resume, an in-flight one
resumes at its interrupted node. A task the planner replaces (`--replan`) launches its replacements from inside
its own `@task`, so those calls too are issued in the same order on replay (graph/replan.py).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from functools import partial, update_wrapper
from pathlib import Path
from typing import Any, get_type_hints

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import get_config
from langgraph.errors import GraphDrained, GraphInterrupt
from langgraph.func import entrypoint, task
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.pregel import Pregel
from langgraph.runtime import Runtime, get_runtime
from langgraph.types import Interrupt

from agents import ClaudeAgents
from agents.limits import Pause, UsageLimitGate, UsageLimitYield
from orchestrator import facts, sandbox
from orchestrator.errors import InputError, PlanError, RunLockedError
from orchestrator.gate import GateChoice, GateRequest, Gates, GateSetup, check_hidden_tests, choose_gate
from orchestrator.graph import by_url, replan, routing
from orchestrator.graph.active import ACTIVE, ActiveRun
from orchestrator.graph.context import RunContext, Spend
from orchestrator.graph.events import EventLog
from orchestrator.graph.nodes import merge
from orchestrator.graph.nodes import review as review_nodes
from orchestrator.graph.nodes import task as task_nodes
from orchestrator.graph.scheduler import Held, Scheduler
from orchestrator.graph.state import FeatureInput, FeatureOutput, TaskInput, TaskResult, TaskState
from orchestrator.jsonout import iso_utc
from orchestrator.plan.model import FeaturePlan, load_target, plan_digest, remember_plan_file
from orchestrator.repo import watch
from orchestrator.repo.git import GitRepo
from orchestrator.repo.lock import repo_lock_async
from orchestrator.settings import RunOptions
from orchestrator.store import receipts
from orchestrator.store import traces as trace
from orchestrator.store.feature_lock import feature_lock
from orchestrator.store.pause import PauseRecords, describe, pause_path, quota_path, read_pause, shared_store
from orchestrator.store.paused_threads import PausedThreads, interrupt_value, shared_paused_threads
from orchestrator.text import one_line
from orchestrator.views import html_report, pictures, reports


def _router(func: Callable[..., Any], **bound: Any) -> Callable[..., Any]:
    """A router with its limits bound, keeping its name (what a trace shows for the edge, not "Unnamed")."""
    return update_wrapper(partial(func, **bound), func)


def _flushing(node: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """A node whose trace lines (written off the event loop, store/traces.py) are on disk when it ends, before
    the checkpoint that follows it."""

    async def flushing(state: Any, runtime: Runtime[RunContext]) -> Any:
        try:
            return await node(state, runtime)
        finally:
            await trace.flushed()

    return update_wrapper(flushing, node)


def build_task_graph(max_turns: int, precheck: bool) -> StateGraph[Any, Any, Any, Any]:
    """initialize → player → [precheck →] coach → (feedback → player)* → finalize_success → merge | finalize_failure."""
    graph: StateGraph[Any, Any, Any, Any] = StateGraph(TaskState, context_schema=RunContext, input_schema=TaskInput)
    graph.add_node("initialize", _flushing(by_url.pushing(task_nodes.initialize)))
    graph.add_node("player", _flushing(by_url.pushing(task_nodes.player)))
    graph.add_node("coach", _flushing(by_url.pushing(review_nodes.coach)))
    graph.add_node("feedback", _flushing(by_url.pushing(task_nodes.feedback)))
    graph.add_node("ask_human", _flushing(by_url.pushing(task_nodes.ask_human)))
    graph.add_node("finalize_success", _flushing(by_url.pushing(task_nodes.finalize_success)))
    graph.add_node("finalize_failure", _flushing(by_url.pushing(task_nodes.finalize_failure)))
    graph.add_node("merge", _flushing(by_url.pushing(merge.merge)))
    graph.add_edge(START, "initialize")
    graph.add_conditional_edges("initialize", routing.after_initialize)
    after_player = ["coach", "feedback", "finalize_failure", "ask_human"]
    if precheck:
        graph.add_node("precheck", _flushing(by_url.pushing(review_nodes.precheck)))
        graph.add_conditional_edges("precheck", _router(routing.after_precheck, max_turns=max_turns),
                                    ["coach", "feedback", "finalize_failure"])
        after_player.append("precheck")
    graph.add_conditional_edges("player", _router(routing.after_player, max_turns=max_turns, precheck=precheck),
                                after_player)
    graph.add_edge("ask_human", "player")
    graph.add_conditional_edges("coach", _router(routing.after_coach, max_turns=max_turns),
                                ["finalize_success", "feedback", "finalize_failure"])
    graph.add_conditional_edges("feedback", routing.after_feedback, ["player", "finalize_failure"])
    graph.add_conditional_edges("finalize_success", routing.after_finalize_success, ["merge", END])
    graph.add_edge("finalize_failure", END)
    graph.add_conditional_edges("merge", routing.after_merge, ["feedback", END])
    return graph


_TASK_GRAPHS: dict[tuple[int, bool], CompiledStateGraph[Any, Any, Any, Any]] = {}


def task_graph(max_turns: int, precheck: bool) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compiled once per shape; checkpointed through the workflow's checkpointer (it runs inside a task)."""
    key = (max_turns, precheck)
    if key not in _TASK_GRAPHS:
        _TASK_GRAPHS[key] = build_task_graph(max_turns, precheck).compile(name="task")
    return _TASK_GRAPHS[key]


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
                        timeout_s: float, judge_by_counts: bool = False) -> GateSetup:
    """The run's gate, decided and run once on the base before any agent session (kept in the checkpoint,
    so a resume neither re-runs it nor re-decides it)."""
    git = GitRepo(Path(repo))
    base = await asyncio.to_thread(lambda: git.rev(base_branch or git.current_branch()))
    request = GateRequest(plan_verify=plan_verify, plan_setup=plan_setup, verify=verify, setup=setup,
                          timeout_s=timeout_s, judge_by_counts=judge_by_counts)
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
        await scheduler.hold(task_id, str(held))
        raise GraphInterrupt(()) from None
    graph = task_graph(ctx.options.max_turns, bool(ctx.options.precheck_model))
    # A trace shows the task's subgraph under its id, its runs tagged with it (neither reaches the checkpoints).
    config: Any = {"recursion_limit": 12 * ctx.options.max_turns + 30, "run_name": f"task {task_id}",
                   "tags": [task_id]}
    async with scheduler.slots:
        try:
            events("task_ready", task_id)
            task_input = TaskInput(feature_id=ctx.feature_id, task_id=task_id, skip_reason=skip_reason,
                                   plan_digest=active.digest)
            final = await graph.ainvoke(task_input, config, context=ctx)
        except GraphInterrupt:
            await scheduler.hold(task_id, "waiting for an answer")
            raise
        except GraphDrained:
            await scheduler.hold(task_id, "interrupted")
            raise GraphInterrupt(()) from None
        except UsageLimitYield as exc:  # a served run gives its slot back: held at this node, re-run on resume
            await scheduler.hold(task_id, str(exc))
            raise GraphInterrupt(()) from None
        except Exception as exc:  # noqa: BLE001 - the graph-wide error policy: this task errs, siblings go on
            reason = f"{type(exc).__name__}: {exc}"
            await scheduler.hold(task_id, f"error: {reason}")
            events("task_error", task_id, reason=reason, resumable=True)
            raise GraphInterrupt(()) from None
    result: TaskResult = final["result"]
    if replan.replannable(result, task_id, ctx.options.replan):
        result = await replan.replace(task_id, result, final, run_key, launch=lambda ids: _collect(
            {new_id: run_task(new_id, run_key) for new_id in ids}, scheduler, ctx.spend))
    await scheduler.finish(task_id, result)
    await trace.flushed()
    return result


async def _collect(futures: dict[str, Any], scheduler: Scheduler, spend: Spend) -> list[Interrupt]:
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


def build_feature_workflow(checkpointer: BaseCheckpointSaver[Any] | None = None, *,
                           served: bool = False) -> Pregel[Any, Any, Any, Any]:
    """The feature workflow. Input `{"repo", "target", "plan"?}` (`FeatureInput`); context: `RunOptions`; output:
    every task's result. `served`: the input comes from an API caller, checked as the CLI checks its own, and a
    refusal is the run's final value (`refused`), so the thread's state says why (an InputError raised would
    leave the thread without a value, which the engine answers with HTTP 500)."""

    async def autobuild(inputs: FeatureInput, runtime: Runtime[RunOptions]) -> FeatureOutput:
        options = runtime.context or RunOptions()
        try:
            if served:  # an API caller's input: checked as the CLI checks its own (a refusal is returned below)
                await asyncio.to_thread(by_url.check_served, inputs, options)
            if inputs.get("repo_url"):  # the worker's own clone of the URL; every commit pushed there
                return await by_url.run(inputs, options,
                                        lambda local, repo: _run_feature(local, options, repo, runtime),
                                        lambda root, feature_id: EventLog(root, feature_id, runtime.stream_writer))
            repo = GitRepo(await asyncio.to_thread(Path(inputs["repo"]).resolve))
            async with repo_lock_async(repo.root, f"run {inputs.get('target') or inputs.get('plan', '')}"):
                return await _run_feature(inputs, options, repo, runtime)
        except InputError as exc:
            if not served or isinstance(exc, RunLockedError):  # a second run of a feature errs: the first is the one
                raise
            return by_url.refused(inputs, exc)
        finally:
            await trace.flushed()  # whichever way the run ends, its trace lines are on disk

    # `entrypoint` reads the signature's annotations for the input and output schemas (Studio's input form); this
    # module's annotations are strings (`from __future__`), which pydantic can't resolve there: give it the types.
    autobuild.__annotations__ = get_type_hints(autobuild)
    workflow = entrypoint(checkpointer=checkpointer, context_schema=RunOptions)(autobuild)
    workflow.name = "autobuild"  # the root run's name in a trace (LangGraph's default is "LangGraph")
    return workflow


async def _run_feature(inputs: FeatureInput, options: RunOptions, repo: GitRepo,
                       runtime: Runtime[RunOptions]) -> FeatureOutput:
    """The workflow's body, under the repository lock: the plan, then the rest under the feature's lock."""
    plan_file = Path(inputs["plan"]) if inputs.get("plan") else None
    plan, only_task = await asyncio.to_thread(_load_plan, repo.root, inputs.get("target", ""), plan_file)
    # Workers sharing a store: one run per (repo, feature) across machines (a no-op without one). Keyed by the
    # plan's id, so a run of one of its tasks and a run of the whole feature exclude each other too.
    thread = thread_of(get_config())
    async with feature_lock(str(inputs.get("repo_url") or repo.root), plan.id, thread):
        if thread and (paused := shared_paused_threads()) is not None:
            trace.in_order(paused.forget, thread)  # this thread runs now: no waker resumes it again
        return await _run_plan(inputs, options, repo, runtime, plan=plan, only_task=only_task, thread=thread)


async def _run_plan(inputs: FeatureInput, options: RunOptions, repo: GitRepo, runtime: Runtime[RunOptions], *,
                    plan: FeaturePlan, only_task: str | None, thread: str) -> FeatureOutput:
    """The loaded plan's run: the base's gate, the feature branch, every task, the report."""
    digest = plan_digest(plan)
    # Before the feature branch and any session: a gate that can't run stops the run having spent nothing.
    base_branch = plan.base_branch or inputs.get("base_branch")
    gate = await gate_baseline(str(repo.root), plan.id, base_branch, plan_verify=plan.verify,
                               plan_setup=plan.setup, verify=options.verify, setup=options.setup,
                               timeout_s=options.verify_timeout, judge_by_counts=options.judge_by_counts)
    chosen = None if options.verify is None else await asyncio.to_thread(choose_gate, repo.root, plan.verify,
                                                                          options.verify)
    if chosen is not None and chosen.command != gate["command"]:
        # The gate was decided and checked on the base when the run started; a resume can't swap it silently.
        raise InputError(f"this run's gate is {GateChoice(gate['command'], gate['source']).describe()}, decided"
                         f" when it started; --verify {options.verify!r} does not apply to it: resume without"
                         " --verify, or `run --fresh` to start over with the new gate")
    setup = await prepare_feature(str(repo.root), plan.id, base_branch, digest)
    await by_url.feature_started(inputs, repo, plan.id, setup["feature_sha"])
    if setup.get("plan_digest", digest) != digest:
        raise PlanError(f"the plan of {plan.id} changed since its run started: put it back, or start over on a"
                        " new thread")
    events = EventLog(repo.root, plan.id, runtime.stream_writer)
    watch.forget(repo.root)
    unrecorded: list[str] = []  # why the workers' store could not learn of a yield (then nothing re-queues it)
    limit_gate = await asyncio.to_thread(_limit_gate, options, pause_path(repo.root, plan.id), events,
                                         partial(_yielded, runtime, events, thread, unrecorded))
    ctx = RunContext(options=options, plan=plan, repo=repo, base_branch=setup["base_branch"],
                     agents=options.agents or ClaudeAgents(), gate=gate, spend=Spend(),
                     limit_gate=limit_gate, remote_url=inputs.get("repo_url"))
    order = [only_task] if only_task else plan.task_ids()
    earlier = dict(inputs.get("earlier") or {})  # a run again of some tasks: the others' latest results
    order = [t for t in order if t in inputs.get("rerun", order)]
    events("feature_start", branch=ctx.feature_branch, sha=setup["feature_sha"], tasks=order,
           budget_usd=options.budget_usd,
           gate=gate["command"], gate_source=gate["source"], setup=gate["setup"],
           gate_base=gate["base"]["summary"] if gate["base"] else None,
           base_failing=(gate["base"]["failing"] if gate["base"] else None) or [])
    if not await asyncio.to_thread(sandbox.agents_available):  # said once per run start; then a change around a
        # session fails its task
        events("sandbox_unavailable", detail=await asyncio.to_thread(sandbox.why_unavailable))
    ignore_deps = options.ignore_deps or only_task is not None
    scheduler = Scheduler(plan, order, options.parallel, options.schedule, ignore_deps, earlier=earlier)
    key = uuid.uuid4().hex
    _ACTIVE[key] = ActiveRun(ctx, scheduler, digest)
    try:
        questions = await _collect({task_id: run_task(task_id, key) for task_id in order}, scheduler,
                                   ctx.spend)
    finally:
        del _ACTIVE[key]
    results = {task_id: scheduler.results[task_id] for task_id in order if task_id in scheduler.results}
    # The feature's report covers all its tasks, whichever run finished them last: never one run's share.
    everything = {**{k: v for k, v in earlier.items() if k not in order}, **results}
    counted = receipts.counting_attempts(everything, results, inputs.get("spent") or {},  # every attempt's cost
                                         inputs.get("spent_turns") or {})
    report = await _feature_reports(ctx, gate, scheduler.held, everything=everything, counted=counted, order=order)
    events("feature_end", report=str(report), results=results, held=scheduler.held,
           usage_limit_exceeded=bool(ctx.limit_gate and ctx.limit_gate.exceeded),
           gate_cache=ctx.gates.cache.stats() if ctx.gates.cache else None)
    if limit_gate.yielded is not None:  # the run's last word: paused until then, the workers re-queue it
        await trace.flushed()  # the yield's record in the workers' store was written (or failed) in order
        value = interrupt_value(limit_gate.yielded) | ({"requeued": False, "unrecorded": unrecorded[-1]}
                                                      if unrecorded else {})
        questions.append(Interrupt(value, id=uuid.uuid4().hex))
    if questions or scheduler.held:
        raise GraphInterrupt(tuple(questions))
    if not options.keep_worktrees:
        await repo.remove_worktree(ctx.integration_worktree)
    return FeatureOutput(feature_id=plan.id, results=results if only_task else everything)


async def _feature_reports(ctx: RunContext, gate: GateSetup, held: dict[str, str], *,
                           everything: dict[str, TaskResult], counted: dict[str, Any], order: list[str]) -> Path:
    """The feature's AUTO-RUN.md and HTML page over all its tasks, costs counting every attempt (`counted`)."""
    plan, root = ctx.plan, ctx.repo.root
    shown = facts.run_order([*plan.task_ids(), *[t for t in order if t not in plan.task_ids()]], everything)
    text = reports.feature_report(plan.id, plan.name, counted, shown, ctx.feature_branch, held=held, gate=gate)
    await trace.flushed()  # the pictures read the traces
    outcomes = pictures.run_outcomes(everything, held, shown)
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


def _limit_gate(options: RunOptions, path: Path, events: EventLog,
                on_yield: Callable[[Pause], None] | None = None) -> UsageLimitGate:
    """The run's usage-limit pause, resumed from disk (a kill during a pause resumes into the same wait); a quota
    pause is shared with every run of the same credential. Its records are written off the event loop, in order."""
    records = PauseRecords(path, quota_path(), store=shared_store())

    def changed(pause: Pause | None) -> None:
        trace.in_order(records.write, pause)
        if pause is None:
            events("usage_limit_over")
        else:
            events("usage_limit", until=iso_utc(pause.until), reason=pause.reason, status=describe(pause))

    return UsageLimitGate(options.max_wait, probe_interval_s=options.limit_probe, on_change=changed,
                          resume_from=read_pause(path), max_utilization=options.max_utilization,
                          load_shared=records.read_shared, yield_after_s=options.yield_after(), on_yield=on_yield)


def thread_of(config: Any) -> str:
    return str(config.get("configurable", {}).get("thread_id", ""))


def _yielded(runtime: Runtime[RunOptions], events: EventLog, thread: str, unrecorded: list[str], pause: Pause) -> None:
    """A served run gives its slot back for a long pause: no node starts any more (a drain, as on SIGTERM), and the
    workers' store learns when to re-queue the thread (if it can't, the run's interrupt says so: `unrecorded`)."""
    if runtime.control is not None:
        runtime.control.request_drain("usage pause")
    if thread and (paused := shared_paused_threads()) is not None:
        trace.in_order(_record_yield, paused, thread, pause, unrecorded)
    events("usage_pause_yield", until=iso_utc(pause.until), reason=pause.reason, status=describe(pause))


def _record_yield(paused: PausedThreads, thread: str, pause: Pause, unrecorded: list[str]) -> None:
    """On the run's writer thread: the row the waker re-queues from, tried three times (a database hiccup)."""
    for attempt in range(3):
        try:
            paused.record(thread, pause)
            return
        except Exception as exc:  # noqa: BLE001 - any store failure: said in the run's last interrupt
            if attempt == 2:
                unrecorded.append(f"{type(exc).__name__}: {one_line(exc, 200)}")
            else:
                time.sleep(1.0 + attempt)


graph = build_feature_workflow(served=True)
"""The served graph (`langgraph.json`: `autobuild`)."""
