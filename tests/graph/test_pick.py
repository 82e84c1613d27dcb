"""`autobuild pick FEAT TASK a2` (issue 40): a person replaces the selection's pick before landing; the new pick is
re-merged on the feature branch (the old one's change taken back) and gated; bad input is one line, exit 2,
nothing written."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, feedback, selects, writes
from orchestrator.cli.main import main
from orchestrator.graph import runner
from orchestrator.settings import RunSettings
from tests import schemas
from tests.graph.harness import CALC_FILES, plan, task

FIRST = "def sub(a, b):\n    return a + -b\n"
SECOND = "def sub(a, b):\n    return a - b\n"


def test_a_person_replaces_the_pick_and_bad_picks_are_refused(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_sample_repo(tmp_path / "repo", files={**CALC_FILES, "calc/mul.py": "def mul(a, b):\n    return a*b\n"},
                            plan=plan(task("TASK-001", attempts=3)))
    db = tmp_path / "db.sqlite"
    agents = ScriptedAgents({("player", "TASK-001.a1"): writes({"calc/sub.py": FIRST}),
                             ("player", "TASK-001.a2"): writes({"calc/sub.py": SECOND}),
                             ("player", "TASK-001.a3"): writes({"calc/x.py": "X = 1\n"}),
                             ("coach", "TASK-001.a3"): feedback(("calc/x.py", None, "no")), "coach": approve(),
                             "selector": selects(1, a2="same thing, approved later")})
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(db), agents=agents, interactive=False,
                           attempts_policy="best", max_turns=1, replan=0)
    asyncio.run(runner.execute(runner.prepare(settings), lambda event: None))  # `pick` runs its own loop
    before = git(repo, "rev-parse", "autobuild/FEAT-001").strip()
    assert git(repo, "show", "autobuild/FEAT-001:calc/sub.py") == FIRST
    common = ["--repo", str(repo), "--db", str(db)]
    for attempt, said in (("a9", "has no attempt 9"), ("second", "is no attempt"), ("a3", "is not a candidate"),
                          ("a1", "already the pick")):
        assert main(["pick", "FEAT-001", "TASK-001", attempt, *common]) == 2, attempt
        assert said in capsys.readouterr().err
    assert main(["pick", "FEAT-001", "TASK-009", "a2", *common]) == 2
    capsys.readouterr()
    assert git(repo, "rev-parse", "autobuild/FEAT-001").strip() == before, "a refusal moved the feature branch"
    assert not (repo / ".autobuild/runs/FEAT-001/picks.json").exists()

    assert main(["pick", "FEAT-001", "TASK-001", "a2", *common]) == 0
    assert "attempt 2 now on autobuild/FEAT-001" in capsys.readouterr().out
    assert git(repo, "show", "autobuild/FEAT-001:calc/sub.py") == SECOND
    assert git(repo, "merge-base", "--is-ancestor", before, "autobuild/FEAT-001") == "", "history kept"
    assert main(["status", "FEAT-001", *common, "--json"]) == 0
    row = schemas.valid("status", json.loads(capsys.readouterr().out))["tasks"][0]
    assert row["picked"] == 2 and "picked by a person (was 1" in row["pick"]
    assert [v["landed"] for v in row["attempt_verdicts"]] == [False, True, False]
    assert main(["pick", "FEAT-001", "TASK-001", "a2", *common]) == 2, "already the pick now"
    capsys.readouterr()
    # `review` and the page `graph --format html` writes again say the person's pick too.
    assert main(["review", "FEAT-001", *common, "--json"]) == 0
    assert "picked by a person (was 1" in json.loads(capsys.readouterr().out)["tasks"][0]["pick"]
    assert main(["graph", "FEAT-001", "--format", "html", *common]) == 0
    assert "Picked: attempt 2: attempt 2 picked by a person (was 1" in (
        repo / ".autobuild/runs/FEAT-001/report.html").read_text()
    assert "TASK-001: attempt 2 picked by a person (replacing attempt 1)" in (
        repo / ".autobuild/runs/FEAT-001/AUTO-RUN.md").read_text()
    # Back to attempt 1: the person's second pick takes attempt 2's change back.
    assert main(["pick", "FEAT-001", "TASK-001", "a1", *common]) == 0
    assert git(repo, "show", "autobuild/FEAT-001:calc/sub.py") == FIRST
