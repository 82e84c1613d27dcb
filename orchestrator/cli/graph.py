"""`autobuild graph FEAT`: the plan as a Mermaid flowchart, colored by outcome once it has run."""

from __future__ import annotations

import argparse
import time

from orchestrator.jsonout import iso_utc, print_document
from orchestrator.plan.model import load_plan
from orchestrator.settings import Settings
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.views.mermaid import flowchart
from orchestrator.views.pictures import checkpoint_outcomes


def graph_command(args: argparse.Namespace, settings: Settings) -> int:
    """`autobuild graph FEAT`: the plan as a Mermaid flowchart, colored by outcome once it has run."""
    plan = load_plan(settings.repo, args.feature)
    outcomes = checkpoint_outcomes(CheckpointStore.for_repo(settings.repo, settings.db, plan.id), plan)
    chart = flowchart(plan, outcomes)
    return print_document({"feature": plan.id, "generated": iso_utc(time.time()), "colored": outcomes is not None,
                           "nodes": chart.nodes, "edges": chart.edges, "outcomes": outcomes or {},
                           "node_ids": chart.node_ids, "mermaid": chart.text},
                          args.json, lambda document: document["mermaid"].rstrip("\n"))
