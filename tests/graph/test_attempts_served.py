"""A served run resumed with fewer attempts (issue 40, item 4), in-process on the served graph: the API's way to
resume a thread is a new run on it with input None and the run's options as its context (a dict, as the API
passes it); `attempts` there is `resume --attempts M`: the attempts the run started finish, none other starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.runtime import RunControl

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, feedback, writes
from orchestrator.graph.workflow import build_feature_workflow
from tests.graph.harness import CALC_FILES, plan, stream_run, task

SUB = {"calc/sub.py": "def sub(a, b):\n    return a - b\n"}
WRONG = {"calc/other.py": "X = 1\n"}


async def test_a_served_run_resumed_with_fewer_attempts_finishes_the_started_ones_and_starts_no_other(
        tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=dict(CALC_FILES), plan=plan(task("TASK-001", attempts=3)))
    graph = build_feature_workflow(InMemorySaver(), served=True)
    config: Any = {"configurable": {"thread_id": "served-thread"}}
    control = RunControl()

    def stopping(data: Any) -> Turn:  # the run stops while attempt 2 works; attempt 3 waits for the one slot
        control.request_drain("worker shutting down")
        return Turn(report=None, text="[Request interrupted by user]", delay_s=0.2)

    before = ScriptedAgents({("player", "TASK-001.a1"): writes(WRONG), ("player", "TASK-001.a2"): stopping,
                             "coach": feedback(("x", None, "no"))})
    first = await stream_run(graph, {"repo": str(repo), "target": "FEAT-001"}, config,
                             {"agents": before, "interactive": False, "max_turns": 1, "replan": 0}, control)
    assert "TASK-001" not in first.results
    after = ScriptedAgents({("player", "TASK-001.a2"): writes(SUB), "coach": approve()})
    second = await stream_run(graph, None, config, {"agents": after, "interactive": False, "max_turns": 1,
                                                    "replan": 0, "attempts": 1})
    assert [(c.role, c.attempt) for c in after.calls] == [("player", 2), ("coach", 2)]
    result = second.results["TASK-001"]
    assert [(r["attempt"], r["status"]) for r in result["attempts"]] == [(1, "failed"), (2, "approved"),
                                                                         (3, "cancelled")]
    assert (result["picked"], result["merged"]) == (2, True)
