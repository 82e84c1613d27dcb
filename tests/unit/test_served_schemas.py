"""What LangGraph Studio reads from the served graphs (`langgraph.json`): the input, output and context JSON schemas
(its input form) and each graph's drawing (its graph view), in-process, as the server computes them."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from langgraph.pregel import Pregel

PROJECT = Path(__file__).resolve().parents[2]


def served() -> dict[str, Any]:
    """Every graph langgraph.json exports, loaded the way the server loads it (`module:attribute`)."""
    graphs = json.loads((PROJECT / "langgraph.json").read_text())["graphs"]
    loaded = {}
    for name, ref in graphs.items():
        module, _, attribute = ref.partition(":")
        value = vars(importlib.import_module(module))[attribute]  # a graph, or a factory the server calls
        loaded[name] = value() if callable(value) and not isinstance(value, Pregel) else value
    return loaded


def resolved(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema's root object, following a root `$ref` into `$defs` as a JSON Schema form does."""
    ref = schema.get("$ref", "")
    return dict(schema["$defs"][ref.rsplit("/", 1)[-1]]) if ref else schema


def test_the_feature_graph_input_schema_offers_repo_target_and_plan() -> None:
    schema = resolved(served()["autobuild"].get_input_jsonschema())
    assert {"repo", "target", "plan", "repo_url"} <= set(schema["properties"])
    assert schema["properties"]["repo"]["type"] == "string"
    assert schema["properties"]["repo"].get("description"), "Studio shows what the field is for"
    assert schema["properties"]["target"].get("description")


def test_the_feature_graph_output_schema_names_the_results() -> None:
    schema = served()["autobuild"].get_output_jsonschema()
    text = json.dumps(schema)
    assert "results" in text and "feature_id" in text
    assert "status" in text, "a task result's status is part of the schema"


def test_the_feature_graph_context_schema_takes_the_cli_settings() -> None:
    schema = served()["autobuild"].get_context_jsonschema()
    assert {"parallel", "max_turns", "interactive"} <= set(schema["properties"])


def test_the_task_graph_is_served_and_draws_the_player_coach_loop() -> None:
    graphs = served()
    assert "task" in graphs, "langgraph.json exports the task graph as its own graph"
    task = graphs["task"]
    assert task.checkpointer is None, "the server brings its own checkpointer"
    drawing = task.get_graph(xray=True)  # Studio draws the loop inside the node that runs it
    nodes = set(drawing.nodes)
    assert {"prepare", *(f"loop:{node}" for node in ("initialize", "player", "coach", "feedback", "finalize_success",
                                                     "finalize_failure", "merge"))} <= nodes
    edges = {(edge.source, edge.target) for edge in drawing.edges}
    assert {("loop:player", "loop:coach"), ("loop:coach", "loop:feedback"), ("loop:feedback", "loop:player"),
            ("prepare", "loop:initialize")} <= edges
    input_schema = resolved(task.get_input_jsonschema())
    assert {"repo", "target", "plan"} <= set(input_schema["properties"]), "what runs one task on its own"
    assert {"feature_id", "task_id", "result"} <= set(resolved(task.get_output_jsonschema())["properties"])
