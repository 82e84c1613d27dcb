"""The task loop on its own (`langgraph.json`: `task`): one task of a plan, run end to end, so Studio can draw and
run initialize → player → coach → (feedback → player)* → finalize → merge for one task.

`prepare` does what a feature run does first (the gate decided and checked on the base, the feature branch made);
`loop` runs the task loop as its subgraph, which makes the task's worktree (`initialize`) and merges approved work
into `autobuild/<FEAT>`. Questions are interrupts, answered with `Command(resume=…)`. The task's dependencies are
not waited for (as `run TASK --ignore-deps`): the `autobuild` graph schedules a whole feature.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, TypedDict, get_type_hints

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from pydantic import ConfigDict, with_config

from agents import ClaudeAgents
from orchestrator.errors import InputError
from orchestrator.facts import GateSetup, TaskResult
from orchestrator.gate import GateRequest, Gates
from orchestrator.graph.context import RunContext
from orchestrator.graph.state import TaskInput
from orchestrator.graph.workflow import task_graph
from orchestrator.plan.model import FeaturePlan, load_target, plan_digest
from orchestrator.repo.git import GitRepo, feature_branch
from orchestrator.repo.lock import repo_lock_async
from orchestrator.settings import RunOptions


@with_config(ConfigDict(use_attribute_docstrings=True))  # the docstrings below are the input form's help (Studio)
class TaskRunInput(TypedDict, total=False):
    """The task graph's input: which repo, and which task of which plan."""

    repo: str
    """The target git repository on the server's machine (an absolute path)."""
    target: str
    """The task to run (`TASK-002`), found in the repo's `.autobuild/features/*.yaml` or in `plan`."""
    plan: str
    """A plan file where it lies (relative to the repo unless absolute), holding `target`."""
    base_branch: str
    """The base when the plan names none (default: the branch checked out in `repo`)."""


@with_config(ConfigDict(use_attribute_docstrings=True))
class TaskRunOutput(TypedDict, total=False):
    """The task graph's final value."""

    feature_id: str
    """The plan the task belongs to."""
    task_id: str
    """The task that ran."""
    result: TaskResult
    """Its result: `status` is the outcome; approved work is merged into `autobuild/<feature_id>`."""


class TaskRunState(TaskRunInput, TaskRunOutput, total=False):
    """What `prepare` decided once (checkpointed, so a resume neither re-checks the gate nor re-decides the base)."""

    gate: GateSetup
    base: str
    digest: str


async def _plan(state: TaskRunState) -> tuple[GitRepo, FeaturePlan, str]:
    repo = GitRepo(await asyncio.to_thread(Path(state.get("repo") or ".").resolve))
    plan_file = Path(state["plan"]) if state.get("plan") else None
    plan, task_id = await asyncio.to_thread(load_target, repo.root, state.get("target") or "", plan_file)
    if task_id is None:
        raise InputError(f"the task graph runs one task: give `target` one of {plan.id}'s tasks"
                         f" ({', '.join(plan.task_ids())}); the `autobuild` graph runs the whole feature")
    return repo, plan, task_id


async def prepare(state: TaskRunState, runtime: Runtime[RunOptions]) -> TaskRunState:
    """The gate checked on the base and the feature branch, as a feature run starts (before any session)."""
    options = runtime.context or RunOptions()
    repo, plan, task_id = await _plan(state)
    base = plan.base_branch or state.get("base_branch") or await asyncio.to_thread(repo.current_branch)
    if not base:
        raise InputError(f"{repo.root} has no branch checked out and {plan.id} names no base_branch: give"
                         " `base_branch` in the input, or set it in the plan")
    request = GateRequest(plan_verify=plan.verify, plan_setup=plan.setup, verify=options.verify,
                          setup=options.setup, timeout_s=options.verify_timeout,
                          judge_by_counts=options.judge_by_counts,
                          repairs_base=options.repair_base or plan.task(task_id).repairs_base)
    async with repo_lock_async(repo.root, f"run {task_id}"):
        gate = await Gates(repo, request).check_base(plan.id, await asyncio.to_thread(repo.rev, base))
        await repo.ensure_excluded()
        await repo.ensure_branch(feature_branch(plan.id), base)
    return TaskRunState(feature_id=plan.id, task_id=task_id, gate=gate, base=base, digest=plan_digest(plan))


def build_task_run(checkpointer: BaseCheckpointSaver[Any] | None = None) -> CompiledStateGraph[Any, Any, Any, Any]:
    """prepare → loop (the task loop as a subgraph, drawn inside it); served without a checkpointer (the server
    brings its own)."""
    drawn = task_graph(max_turns=10, precheck=False)  # the loop Studio draws (the default shape)

    async def loop(state: TaskRunState, runtime: Runtime[RunOptions]) -> TaskRunState:
        """The task loop with a run's context; a question interrupts it, a resume goes on where it stopped."""
        options = runtime.context or RunOptions()
        repo, plan, task_id = await _plan(state)
        shape = (options.max_turns, bool(options.precheck_model))
        subgraph = drawn if shape == (10, False) else task_graph(*shape)
        ctx = RunContext(options=options, plan=plan, repo=repo, base_branch=state["base"],
                         agents=options.agents or ClaudeAgents(), gate=state["gate"])
        config: Any = {"recursion_limit": 12 * options.max_turns + 30, "run_name": f"task {task_id}",
                       "tags": [task_id]}
        task_input = TaskInput(feature_id=plan.id, task_id=task_id, skip_reason=None, plan_digest=state["digest"])
        async with repo_lock_async(repo.root, f"run {task_id}"):
            final = await subgraph.ainvoke(task_input, config, context=ctx)
        return TaskRunState(result=final["result"])

    # The state's annotations are strings here (`from __future__`): pydantic needs the types (Studio's input form).
    for schema in (TaskRunInput, TaskRunOutput, TaskRunState):
        schema.__annotations__ = get_type_hints(schema)
    graph: StateGraph[Any, Any, Any, Any] = StateGraph(TaskRunState, context_schema=RunOptions,
                                                        input_schema=TaskRunInput, output_schema=TaskRunOutput)
    graph.add_node("prepare", prepare)
    graph.add_node("loop", loop)
    graph.add_edge(START, "prepare")
    graph.add_edge("prepare", "loop")
    graph.add_edge("loop", END)
    return graph.compile(checkpointer=checkpointer, name="task")


def task_run() -> CompiledStateGraph[Any, Any, Any, Any]:
    """`langgraph.json`'s `task` (a graph factory the server calls: a CLI run doesn't compile it)."""
    return build_task_run()
