"""LangSmith tracing through the real CLI: with LANGSMITH_TRACING the graph's runs, the agent sessions, their
model turns and tool calls arrive at the endpoint as one trace; an endpoint that is stuck never holds a command.
(Without LANGSMITH_TRACING nothing is sent at all: test_walking_skeleton's key-hygiene run checks that.)"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from tests.conftest import SECRET_KEY, CliRun, approve_scenario, one_task_plan
from tests.fake_langsmith import LANGSMITH_KEY, fake_langsmith, langsmith_env

pytestmark = pytest.mark.cli

def children(runs: dict[str, dict[str, Any]], parent: dict[str, Any]) -> list[dict[str, Any]]:
    return [run for run in runs.values() if run.get("parent_run_id") == parent["id"]]


def metadata(run: dict[str, Any]) -> dict[str, Any]:
    return dict((run.get("extra") or {}).get("metadata") or {})


@pytest.mark.heavy
def test_graph_runs_sessions_and_tool_calls_arrive(tmp_path: Path, model_factory: Callable[..., ScriptedModel],
                                                   run_cli: Callable[..., CliRun]) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=one_task_plan())
    model = model_factory(approve_scenario())
    with fake_langsmith() as langsmith:
        result = run_cli("run", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "ck.sqlite"), model=model,
                         **langsmith_env(langsmith.url, LANGSMITH_TRACING="true"))
        assert result.returncode == 0, result.stdout + result.stderr
        # Flushed before the command exited: everything is here once it has.
        runs = langsmith.runs
        bodies = b"".join(langsmith.bodies)
    assert "not sent" not in result.stderr
    assert all("end_time" in run for run in runs.values()), "every run that started also ended"

    # LangGraph's own runs: the workflow at the root, the task's subgraph named after it, its nodes.
    [root] = [run for run in runs.values() if not run.get("parent_run_id")]
    assert (root["name"], root["run_type"], metadata(root)["thread_id"]) == ("autobuild", "chain", "FEAT-001")
    assert {run["trace_id"] for run in runs.values()} == {root["id"]}, "one run is one trace"
    [task] = [run for run in runs.values() if run["name"] == "task TASK-001"]
    nodes = {run["name"]: run for run in children(runs, task)}
    assert {"initialize", "player", "coach", "finalize_success", "merge"} <= set(nodes)
    assert all("TASK-001" in run["tags"] for run in nodes.values())

    # Each agent session: LangSmith's Agent SDK integration's run, inside the node that ran it.
    for role, tools in (("player", ["Write", "mcp__autobuild__report_progress"]),
                        ("coach", ["Bash", "mcp__autobuild__record_decision"])):
        [session] = [run for run in children(runs, nodes[role]) if run["name"] == "claude.conversation"]
        assert session["run_type"] == "chain"
        found = metadata(session)
        assert {k: found.get(k) for k in ("feature_id", "task_id", "role", "turn", "ls_integration")} == {
            "feature_id": "FEAT-001", "task_id": "TASK-001", "role": role, "turn": 1,
            "ls_integration": "claude-agent-sdk"}
        assert role in session["tags"]
        inside = children(runs, session)
        turns = [run for run in inside if run["run_type"] == "llm"]
        assert len(turns) == 3 and all(run["name"] == "claude.assistant.turn" for run in turns), role
        assert [run["name"] for run in sorted(inside, key=lambda r: r["dotted_order"]) if run["run_type"] == "tool"]\
            == tools
    decision = next(run for run in runs.values() if run["name"] == "mcp__autobuild__record_decision")
    assert json.dumps(decision["inputs"]).count('"approve"') == 1, "a tool run carries the call's input"
    assert SECRET_KEY.encode() not in bodies and LANGSMITH_KEY.encode() not in bodies


def test_a_stuck_endpoint_never_holds_the_command(tmp_path: Path, model_factory: Callable[..., ScriptedModel],
                                                  run_cli: Callable[..., CliRun]) -> None:
    """An endpoint that takes requests and never answers: the session still runs, the command ends after its
    bounded flush and says traces were not sent. (With langsmith's defaults this command took 132 s.)"""
    repo = make_sample_repo(tmp_path / "repo")
    model = model_factory({"sessions": []})
    with fake_langsmith(hang=True) as langsmith:
        result = run_cli("doctor", "--repo", str(repo), "--db", str(tmp_path / "db.sqlite"), "--json", model=model,
                         timeout=60, ORCHESTRATOR_TRACE_FLUSH_TIMEOUT="1",
                         **langsmith_env(langsmith.url, LANGSMITH_TRACING="true"))
        sent = list(langsmith.requests)
    assert result.returncode == 0, result.stdout + result.stderr
    checks = {c["check"]: c for c in json.loads(result.stdout)}
    assert checks["model call"]["ok"] and checks["tracing"]["ok"]
    assert "on: project autobuild-test" in checks["tracing"]["detail"]
    assert LANGSMITH_KEY not in result.stdout + result.stderr
    assert ("POST", "/runs/multipart") in sent, "the session was traced"
    assert "some LangSmith traces were not sent within 1s" in result.stderr
