"""Wires the task subgraph and the feature graph (DESIGN §3); nodes live in task_nodes/feature_nodes."""

from __future__ import annotations

from functools import partial
from typing import Any

from langgraph.graph import END, START, StateGraph

from orchestrator import routing
from orchestrator.context import RunContext
from orchestrator.feature_nodes import FeatureNodes
from orchestrator.state import FeatureState, TaskInput, TaskOutput, TaskState
from orchestrator.task_nodes import TaskNodes


def build_task_graph(ctx: RunContext) -> StateGraph[Any, Any, Any, Any]:
    """initialize → player → coach → (feedback → player)* → finalize_success | finalize_failure."""
    nodes = TaskNodes(ctx)
    graph: StateGraph[Any, Any, Any, Any] = StateGraph(TaskState, input_schema=TaskInput, output_schema=TaskOutput)
    graph.add_node("initialize", nodes.initialize)
    graph.add_node("player", nodes.player)
    graph.add_node("coach", nodes.coach)
    precheck = bool(ctx.settings.precheck_model)
    if precheck:
        graph.add_node("precheck", nodes.precheck)
        graph.add_conditional_edges(
            "precheck",
            partial(routing.after_precheck, max_turns=ctx.settings.max_turns),
            ["coach", "feedback", "finalize_failure"],
        )
    graph.add_node("feedback", nodes.feedback)
    graph.add_node("ask_human", nodes.ask_human)
    graph.add_edge("ask_human", "player")
    graph.add_node("finalize_success", nodes.finalize_success)
    graph.add_node("finalize_failure", nodes.finalize_failure)
    graph.add_edge(START, "initialize")
    graph.add_conditional_edges("initialize", routing.after_initialize)
    graph.add_conditional_edges(
        "player",
        partial(routing.after_player, max_turns=ctx.settings.max_turns, precheck=precheck),
        ["coach", "feedback", "finalize_failure", "ask_human", *(["precheck"] if precheck else [])],
    )
    graph.add_conditional_edges(
        "coach",
        partial(routing.after_coach, max_turns=ctx.settings.max_turns),
        ["finalize_success", "feedback", "finalize_failure"],
    )
    graph.add_conditional_edges("feedback", routing.after_feedback, ["player", "finalize_failure"])
    graph.add_edge("finalize_success", END)
    graph.add_edge("finalize_failure", END)
    return graph


def build_feature_graph(ctx: RunContext, groups: list[list[str]]) -> StateGraph[Any, Any, Any, Any]:
    """prepare → next_group → Send(run_task)… → after_group (merge) → next_group … → finish."""
    nodes = FeatureNodes(ctx, groups)
    graph: StateGraph[Any, Any, Any, Any] = StateGraph(FeatureState)
    graph.add_node("prepare", nodes.prepare)
    graph.add_node("next_group", nodes.next_group)
    graph.add_node("run_task", build_task_graph(ctx).compile())
    graph.add_node("after_group", nodes.after_group)
    graph.add_node("finish", nodes.finish)
    graph.add_edge(START, "prepare")
    graph.add_edge("prepare", "next_group")
    graph.add_conditional_edges(
        "next_group", partial(routing.dispatch_group, groups=groups), ["run_task", "after_group", "finish"]
    )
    graph.add_edge("run_task", "after_group")
    graph.add_edge("after_group", "next_group")
    graph.add_edge("finish", END)
    return graph
