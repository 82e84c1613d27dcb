"""A plan written for GuardKit runs as it is, in-process through the CLI's runner: the task markdown its
`file_path` names reaches the agents, and `resume` finds the plan again by the feature's id."""

from __future__ import annotations

from pathlib import Path

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from orchestrator.graph import runner
from orchestrator.plan.files import plan_source_path
from orchestrator.settings import RunSettings
from tests.graph.harness import CALC_FILES
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
    db = str(tmp_path / "db.sqlite")
    settings = RunSettings(repo=repo, target="", plan=repo / PLAN_FILE, db=db, agents=agents, interactive=False,
                           verify="python check.py")
    summary = await runner.execute(runner.prepare(settings), lambda event: None)
    assert [summary.results[t]["status"] for t in ("TASK-GK-001", "TASK-GK-002")] == ["approved", "approved"]
    player = agents.prompts_of("player", "TASK-GK-001")[0].brief
    assert any(MARKER in requirement for requirement in player.requirements)
    assert not any("autobuild_state" in requirement for requirement in player.requirements)  # front-matter
    assert any(MARKER in r for r in agents.prompts_of("coach", "TASK-GK-001")[0].brief.requirements)
    assert agents.prompts_of("player", "TASK-GK-002")[0].brief.requirements == []  # its file was moved away
    assert git(repo, "status", "--porcelain") == user_status
    # Later commands name the feature by its id: the run remembered where its plan lies.
    assert plan_source_path(repo, "FEAT-GK1").read_text() == PLAN_FILE + "\n"
    again = RunSettings(repo=repo, target="FEAT-GK1", db=db, agents=agents, interactive=False, resume_only=True)
    assert (await runner.execute(runner.prepare(again), lambda event: None)).already_finished
