"""`autobuild graph FEAT`: the plan as a Mermaid flowchart, colored by outcome once it has run."""

from __future__ import annotations

import argparse
import time

from orchestrator.jsonout import iso_utc, print_document
from orchestrator.plan.model import FeaturePlan, load_plan
from orchestrator.settings import Settings
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.store.inspection import replanned
from orchestrator.views.mermaid import flowchart
from orchestrator.views.pictures import checkpoint_outcomes


def graph_command(args: argparse.Namespace, settings: Settings) -> int:
    """`autobuild graph FEAT`: the plan as a Mermaid flowchart, colored by outcome once it has run."""
    plan = load_plan(settings.repo, args.feature)
    store = CheckpointStore.for_repo(settings.repo, settings.db, plan.id)
    plan = replanned(store, plan)  # with the tasks replans added (the plan file is never edited)
    return print_chart(plan, checkpoint_outcomes(store, plan), as_json=args.json)


def print_chart(plan: FeaturePlan, outcomes: dict[str, str] | None, *, as_json: bool) -> int:
    """The plan's flowchart, colored by `outcomes` (task id → status) when there are any: Mermaid, or the JSON
    document with its nodes and edges."""
    chart = flowchart(plan, outcomes)
    return print_document({"feature": plan.id, "generated": iso_utc(time.time()), "colored": outcomes is not None,
                           "nodes": chart.nodes, "edges": chart.edges, "outcomes": outcomes or {},
                           "node_ids": chart.node_ids, "mermaid": chart.text},
                          as_json, lambda document: document["mermaid"].rstrip("\n"))
