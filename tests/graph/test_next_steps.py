"""The next step is printed: after a run (approved: review, then land or pr; not approved: what to look at and how
to go on; a question: how to answer it, by an option's number too) and after `plan`, naming commands that work from
the state the run left."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, feedback, writes
from orchestrator.cli.demo import next_commands
from orchestrator.cli.next_steps import after_plan, after_run
from orchestrator.cli.run import run_command
from orchestrator.settings import RunSettings
from tests.graph.harness import CALC_FILES, plan, task


def run(tmp_path: Path, agents: ScriptedAgents, *tasks: dict[str, object]) -> tuple[int, Path]:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(*tasks, verify=None))
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(tmp_path / "db.sqlite"), interactive=False,
                           max_turns=1, agents=agents)
    return run_command(argparse.Namespace(command="run"), settings), repo


def test_an_approved_run_points_at_review_then_land_or_pr(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    code, repo = run(tmp_path, ScriptedAgents({"player": writes({"calc/a.py": "A = 1\n"}), "coach": approve()}),
                     task("A"))
    out = capsys.readouterr().out
    assert code == 0, out
    steps = out[out.index("next steps:"):]
    assert f"autobuild review FEAT-001 --repo {repo}" in steps
    assert steps.index("autobuild review") < steps.index(f"autobuild land FEAT-001 --repo {repo}")
    assert f"autobuild pr FEAT-001 --repo {repo}" in steps


def test_a_failed_run_says_what_to_look_at_and_how_to_go_on(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    agents = ScriptedAgents({("player", "A"): writes({"calc/a.py": "A = 1\n"}), ("coach", "A"): approve(),
                             ("player", "B"): writes({"calc/b.py": "B = 1\n"}),
                             ("coach", "B"): feedback(("calc/b.py", 1, "wrong"))})
    code, repo = run(tmp_path, agents, task("A"), task("B"), task("C", "B"))
    out = capsys.readouterr().out
    assert code == 1, out
    steps = out[out.index("next steps:"):]
    assert f"autobuild show FEAT-001 B --repo {repo}" in steps and "# B failed, C skipped:" in steps
    assert f"autobuild show FEAT-001 C --repo {repo}" in steps, "the skipped dependent too"
    assert f"autobuild resume FEAT-001 --repo {repo}" in steps
    assert f"autobuild land FEAT-001 --partial --repo {repo}" in steps, "A was approved"
    assert "review" not in steps


def test_a_blocked_task_is_resumed_by_name_once_a_person_acted() -> None:
    lines = after_run("FEAT-001", {"A": {"status": "blocked"}}, ["A"])
    assert "  autobuild resume FEAT-001 A" in lines, lines
    assert "  autobuild resume FEAT-001" not in lines, "resume alone skips a blocked task"
    assert not any("--partial" in line for line in lines), "nothing approved to land"


def test_after_plan_the_dry_run_comes_first(tmp_path: Path) -> None:
    lines = after_plan("FEAT-002", tmp_path)
    commands = [line.strip() for line in lines if line.startswith("  autobuild")]
    assert commands == [f"autobuild run FEAT-002 --dry-run --repo {tmp_path}",
                        f"autobuild run FEAT-002 --repo {tmp_path}"]


def test_the_demo_ends_with_review_then_land() -> None:
    commands = [line for line in next_commands(0) if not line.startswith("#")]
    assert [command.split()[-2:] for command in commands] == [["review", "FEAT-001"], ["land", "FEAT-001"]]
    assert [command.split()[-2:] for command in next_commands(1) if not command.startswith("#")] == [
        ["status", "FEAT-001"], ["resume", "FEAT-001"]]


def test_a_paused_question_lists_numbered_options_and_answer_takes_a_number(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def player(data: Any) -> Turn:
        if data.answers:
            return writes({"calc/a.py": f"DB = {data.answers['Which DB?']!r}\n"})
        return writes({}, question="Which DB?", options=["Postgres", "SQLite"])

    agents = ScriptedAgents({"player": player, "coach": approve()})
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("A"), verify=None))
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(tmp_path / "db.sqlite"), interactive=True,
                           agents=agents)
    assert run_command(argparse.Namespace(command="run"), settings) == 3  # stdin is no terminal here
    out = capsys.readouterr().out
    assert "Which DB? [1) Postgres | 2) SQLite]" in out and "an option by its number" in out
    question_id = out.split("A asks ", 1)[1].split(":", 1)[0]
    answer = RunSettings(repo=repo, target="FEAT-001", db=str(tmp_path / "db.sqlite"), interactive=True,
                         resume_only=True, agents=agents)
    assert run_command(argparse.Namespace(command="answer", question_id=question_id, text="2"), answer) == 0
    assert git(repo, "show", "autobuild/FEAT-001:calc/a.py") == "DB = 'SQLite'\n"
