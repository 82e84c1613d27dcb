"""The graphs, wired at module level: the task `StateGraph` and the feature workflow (`@entrypoint`).

`graph` (no checkpointer: a LangGraph server brings its own) is what `langgraph.json` exports as `autobuild`;
the CLI calls `build_feature_workflow(saver)`. The workflow's body is `graph/feature_run.py`: it launches one
`@task` per plan task up front, in plan order (task ids depend on call order, so replays must issue them
identically); each waits in the in-memory scheduler for its prerequisites and a slot, then runs the task
subgraph (initialize → player → coach → … → finalize → merge). Finished tasks are replayed from the checkpoint
on resume, an in-flight one resumes at its interrupted node. A task the planner replaces (`--replan`) launches
its replacements from inside its own `@task`, so those calls too are issued in the same order on replay
(graph/replan.py). The usage-limit pause's glue is `graph/pause.py`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial, update_wrapper
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast, get_type_hints

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.func import entrypoint
from langgraph.graph import END, START, StateGraph
from langgraph.pregel import Pregel
from langgraph.runtime import Runtime

from orchestrator.errors import InputError, RunLockedError
from orchestrator.graph import by_url, feature_run, routing
from orchestrator.graph.active import TaskGraph
from orchestrator.graph.context import RunContext
from orchestrator.graph.events import EventLog
from orchestrator.graph.nodes import merge
from orchestrator.graph.nodes import review as review_nodes
from orchestrator.graph.nodes import task as task_nodes
from orchestrator.graph.state import FeatureInput, FeatureOutput, TaskInput, TaskState
from orchestrator.repo.git import GitRepo
from orchestrator.repo.lock import repo_lock_async
from orchestrator.settings import RunOptions
from orchestrator.store import traces as trace

FeatureWorkflow = Pregel[FeatureOutput, RunOptions, FeatureInput, FeatureOutput]
"""The compiled feature workflow: its stream's values and its output are the final value, its input `FeatureInput`."""


class TaskNode(Protocol):
    """A task graph node: the task's state and the run's context in, the state's update out."""

    def __call__(self, state: TaskState, runtime: Runtime[RunContext]) -> Awaitable[TaskState]: ...


Route = TypeVar("Route", bound=str)


def _router(func: Callable[..., Route], **bound: int | bool) -> Callable[[TaskState], Route]:
    """A router with its limits bound, keeping its name (what a trace shows for the edge, not "Unnamed")."""
    return update_wrapper(partial(func, **bound), func)


def _flushing(node: TaskNode) -> TaskNode:
    """A node whose trace lines (written off the event loop, store/traces.py) are on disk when it ends, before
    the checkpoint that follows it."""

    async def flushing(state: TaskState, runtime: Runtime[RunContext]) -> TaskState:
        try:
            return await node(state, runtime)
        finally:
            await trace.flushed()

    return update_wrapper(flushing, node)


def build_task_graph(max_turns: int, precheck: bool, landing: bool = False,
                     ) -> StateGraph[TaskState, RunContext, TaskInput, TaskState]:
    """initialize → player → [precheck →] coach → (feedback → player)* → finalize_success → merge | finalize_failure.
    `landing`: the same loop entered at `merge` with a whole task state (a picked attempt's, graph/attempts.py)."""
    graph: StateGraph[TaskState, RunContext, TaskInput, TaskState] = StateGraph(
        TaskState, context_schema=RunContext,
        input_schema=TaskState if landing else TaskInput)
    graph.add_node("initialize", _flushing(by_url.pushing(task_nodes.initialize)))
    graph.add_node("player", _flushing(by_url.pushing(task_nodes.player)))
    graph.add_node("coach", _flushing(by_url.pushing(review_nodes.coach)))
    graph.add_node("feedback", _flushing(by_url.pushing(task_nodes.feedback)))
    graph.add_node("ask_human", _flushing(by_url.pushing(task_nodes.ask_human)))
    graph.add_node("finalize_success", _flushing(by_url.pushing(task_nodes.finalize_success)))
    graph.add_node("finalize_failure", _flushing(by_url.pushing(task_nodes.finalize_failure)))
    graph.add_node("merge", _flushing(by_url.pushing(merge.merge)))
    graph.add_edge(START, "merge" if landing else "initialize")
    graph.add_conditional_edges("initialize", routing.after_initialize)
    after_player = ["coach", "feedback", "finalize_failure", "ask_human", "player"]
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


_TASK_GRAPHS: dict[tuple[int, bool, bool], TaskGraph] = {}


def task_graph(max_turns: int, precheck: bool, landing: bool = False) -> TaskGraph:
    """Compiled once per shape; checkpointed through the workflow's checkpointer (it runs inside a task)."""
    key = (max_turns, precheck, landing)
    if key not in _TASK_GRAPHS:
        _TASK_GRAPHS[key] = build_task_graph(max_turns, precheck, landing).compile(name="task")
    return _TASK_GRAPHS[key]


def build_feature_workflow(checkpointer: BaseCheckpointSaver[Any] | None = None, *,
                           served: bool = False) -> FeatureWorkflow:
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
                                        lambda local, repo: feature_run.run_feature(local, options, repo, runtime,
                                                                                    task_graph),
                                        lambda root, feature_id: EventLog(root, feature_id, runtime.stream_writer))
            repo = GitRepo(await asyncio.to_thread(Path(inputs["repo"]).resolve))
            async with repo_lock_async(repo.root, f"run {inputs.get('target') or inputs.get('plan', '')}"):
                return await feature_run.run_feature(inputs, options, repo, runtime, task_graph)
        except InputError as exc:
            if not served or isinstance(exc, RunLockedError):  # a second run of a feature errs: the first is the one
                raise
            return by_url.refused(inputs, exc)
        finally:
            await trace.flushed()  # whichever way the run ends, its trace lines are on disk

    # `entrypoint` reads the signature's annotations for the input and output schemas (Studio's input form); this
    # module's annotations are strings (`from __future__`), which pydantic can't resolve there: give it the types.
    autobuild.__annotations__ = get_type_hints(autobuild)
    # `entrypoint` returns an untyped Pregel: its types are the function's, which it read above.
    workflow = cast("FeatureWorkflow", entrypoint(checkpointer=checkpointer, context_schema=RunOptions)(autobuild))
    workflow.name = "autobuild"  # the root run's name in a trace (LangGraph's default is "LangGraph")
    return workflow


graph = build_feature_workflow(served=True)
"""The served graph (`langgraph.json`: `autobuild`)."""
