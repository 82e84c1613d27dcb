"""A plan written for GuardKit runs as it is, in-process: the task markdown its `file_path` names reaches the
agents, and later commands find the plan by its id."""

from __future__ import annotations

from pathlib import Path

from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from orchestrator.demo import git, make_sample_repo
from orchestrator.plan import load_plan
from orchestrator.plan_files import plan_source_path
from tests.graph.harness import CALC_FILES, Workflow
from tests.guardkit import MARKER, PLAN_FILE, write_guardkit_plan


async def test_the_task_markdown_of_a_guardkit_plan_reaches_the_player(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES)
    write_guardkit_plan(repo)
    user_status = git(repo, "status", "--porcelain")
    agents = ScriptedAgents({
        ("player", "TASK-GK-001"): writes({"calc/sub.py": "def sub(a, b):\n    return a - b\n"}),
        ("player", "TASK-GK-002"): writes({"docs/sub.md": "# sub\n"}),
        "coach": approve(),
    })
    run = await Workflow(repo, agents, thread="FEAT-GK1").run(target="", plan=PLAN_FILE, verify="python check.py")
    assert run.status("TASK-GK-001") == "approved" and run.status("TASK-GK-002") == "approved"
    player = agents.prompts_of("player", "TASK-GK-001")[0].brief
    assert any(MARKER in requirement for requirement in player.requirements)
    assert not any("autobuild_state" in requirement for requirement in player.requirements)  # front-matter
    assert any(MARKER in r for r in agents.prompts_of("coach", "TASK-GK-001")[0].brief.requirements)
    assert agents.prompts_of("player", "TASK-GK-002")[0].brief.requirements == []  # its file was moved away
    # `status`, `show` and `resume` name the feature by id: the run remembered where its plan lies.
    assert plan_source_path(repo, "FEAT-GK1").read_text() == PLAN_FILE + "\n"
    assert load_plan(repo, "FEAT-GK1").task("TASK-GK-001").description.count(MARKER) == 1
    assert git(repo, "status", "--porcelain") == user_status
