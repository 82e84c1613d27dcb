"""The task graph on its own (issue 33, item 8: `langgraph.json`'s `task`): one task runs end to end from
`{"repo", "target"}`, its worktree set up by the graph, its approved work merged into the feature branch; a question
is an interrupt that `Command(resume=…)` answers. (`tests/integration/test_served_graph.py` runs it in `langgraph
dev` with the real CLI.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from orchestrator.errors import InputError
from orchestrator.graph.task_alone import build_task_run
from orchestrator.settings import RunOptions
from tests.conftest import git
from tests.graph.harness import CALC_FILES, plan, task

SUB = {"calc/sub.py": "def sub(a, b):\n    return a - b\n"}


async def test_one_task_runs_end_to_end_from_repo_and_target(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-1"), task("TASK-2", "TASK-1")))
    agents = ScriptedAgents({"player": writes(SUB, question="Tabs or spaces?"), "coach": approve()})
    graph = build_task_run(InMemorySaver())
    config = {"configurable": {"thread_id": "t1"}}
    context = RunOptions(agents=agents, interactive=True)
    first = await graph.ainvoke({"repo": str(repo), "target": "TASK-1"}, config, context=context)
    [question] = first["__interrupt__"]
    assert question.value["question"] == "Tabs or spaces?" and question.value["task"] == "TASK-1"
    assert (repo / ".autobuild/worktrees/FEAT-001/TASK-1").is_dir(), "the graph set the worktree up itself"
    final = await graph.ainvoke(Command(resume="spaces"), config, context=context)
    assert final["feature_id"] == "FEAT-001" and final["task_id"] == "TASK-1"
    assert final["result"]["status"] == "approved" and final["result"]["merged"], final["result"]
    assert git(repo, "show", "autobuild/FEAT-001:calc/sub.py").startswith("def sub")
    assert agents.prompts_of("player", "TASK-1")[-1].answers == {"Tabs or spaces?": "spaces"}
    assert git(repo, "status", "--porcelain", "--", ".", ":!.autobuild") == "", "the user's checkout is untouched"


async def test_a_feature_id_is_refused_with_the_tasks_to_give(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-1")))
    with pytest.raises(InputError, match="give `target` one of FEAT-001's tasks \\(TASK-1\\)"):
        await build_task_run().ainvoke({"repo": str(repo), "target": "FEAT-001"},
                                       context=RunOptions(agents=ScriptedAgents({})))
    assert "autobuild/" not in git(repo, "branch", "--list"), "nothing made"
