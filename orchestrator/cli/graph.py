"""`autobuild graph FEAT [--format mermaid|svg|png|html] [--output PATH]`: the plan as a Mermaid flowchart, colored
by outcome once it has run; drawn to SVG or PNG by a headless Chromium, or the feature's HTML report (the plan,
the timeline, the tasks, their turns and gate runs) in one self-contained page."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from orchestrator.cli.output import print_document
from orchestrator.errors import InputError
from orchestrator.jsonout import iso_utc
from orchestrator.landing.pick import on_rows
from orchestrator.plan.model import FeaturePlan, load_plan
from orchestrator.repo import run_files
from orchestrator.settings import Settings
from orchestrator.store import inspection
from orchestrator.store import traces as trace
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.store.inspection import replanned
from orchestrator.views import attempt_report, browser, html_report
from orchestrator.views.mermaid import flowchart
from orchestrator.views.pictures import checkpoint_outcomes


def graph_command(args: argparse.Namespace, settings: Settings) -> int:
    """`autobuild graph FEAT`: the plan as a Mermaid flowchart, colored by outcome once it has run."""
    plan = load_plan(settings.repo, args.feature)
    store = CheckpointStore.for_repo(settings.repo, settings.db, plan.id)
    plan = replanned(store, plan)  # with the tasks replans added (the plan file is never edited)
    outcomes = checkpoint_outcomes(store, plan)
    folder = trace.runs_dir(settings.repo, plan.id)
    if args.format == "html":
        results = inspection.task_results(store, plan.id) if outcomes is not None else {}
        order = [task.id for task in plan.tasks]
        picked = on_rows([{"task": task, **fields} for task, fields in attempt_report.of_results(results).items()],
                         settings.repo, plan.id)  # a person's `pick` over the selection's
        page = html_report.feature_html(settings.repo, plan, order, outcomes or {}, results,
                                        attempts={row["task"]: row for row in picked})
        path = _write(_target(args.output, folder / html_report.REPORT_HTML), page, args.output is None)
        document = _document(plan, outcomes) | {"file": str(path)}
        return print_document(document, args.json, lambda found: f"wrote {found['file']}")
    return print_chart(plan, outcomes, as_json=args.json, picture=args.format, output=args.output, folder=folder)


def _write(path: Path, data: str | bytes, in_run: bool) -> Path:
    """Into the run's folder, no symlink followed (repo/run_files.py); or to the file the user named with --output,
    as given (theirs to choose, as any command's output file)."""
    if in_run:
        return run_files.write(path, data, "picture")
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


def _target(output: Path | None, default: Path | None) -> Path:
    path = output.expanduser().resolve() if output is not None else default
    if path is None:
        raise InputError("--format svg|png writes a file: name it with --output PATH")
    if path.is_dir():
        raise InputError(f"--output {path} is a folder: name the file to write")
    return path


def _document(plan: FeaturePlan, outcomes: dict[str, str] | None) -> dict[str, Any]:
    chart = flowchart(plan, outcomes)
    return {"feature": plan.id, "generated": iso_utc(time.time()), "colored": outcomes is not None,
            "nodes": chart.nodes, "edges": chart.edges, "outcomes": outcomes or {}, "node_ids": chart.node_ids,
            "mermaid": chart.text}


def print_chart(plan: FeaturePlan, outcomes: dict[str, str] | None, *, as_json: bool, picture: str = "mermaid",
                output: Path | None = None, folder: Path | None = None) -> int:
    """The plan's flowchart, colored by `outcomes` (task id → status) when there are any: Mermaid, or the JSON
    document with its nodes and edges; drawn to `output` (else `folder`/graph.svg|png) for `picture` svg or png."""
    if picture == "html":
        raise InputError("--format html is made from a local run's checkpoints and traces: run it in the repo")
    document = _document(plan, outcomes)
    if picture in ("svg", "png"):
        path = _target(output, folder / f"graph.{picture}" if folder else None)
        svg = browser.render_svg(document["mermaid"])
        _write(path, svg if picture == "svg" else browser.render_png(svg), output is None)
        document["file"] = str(path)
        return print_document(document, as_json, lambda found: f"wrote {found['file']}")
    return print_document(document, as_json, lambda found: found["mermaid"].rstrip("\n"))
