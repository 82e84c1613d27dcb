"""One path for a person's changes (issue 41, item 2): the page and the CLI refuse a note, a pause, an unpause or a
cancel with the same reason (the page's 4xx, the CLI's one line and exit 2), and every note, pause, unpause, cancel
and answer is in the task's trace and AUTO-RUN.md with where it came from and when."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from orchestrator.cli.main import main
from orchestrator.graph import runner
from orchestrator.settings import RunSettings
from orchestrator.store import event_log
from orchestrator.store.locations import remember_db
from tests.graph.test_one_truth import SUB
from tests.graph.test_ui_page import QUESTION, asked, client, post

STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"


def test_the_page_and_the_cli_refuse_with_the_same_reason(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    repo, db = asyncio.run(asked(tmp_path))
    browser = client(repo, db)
    cases = [(["steer", "TASK-1", "  "], "note", {"text": "  "}, 400),
             (["steer", "TASK-1", "x" * (8 * 1024 + 1)], "note", {"text": "x" * (8 * 1024 + 1)}, 400),
             (["steer", "TASK-9", "hello"], "note", {"text": "hello"}, 404),
             (["steer", "TASK-2", "hello"], "note", {"text": "hello"}, 409),
             (["pause", "TASK-2"], "control", {"control": "pause"}, 409),
             (["unpause", "TASK-1"], "control", {"control": "unpause"}, 409),
             (["cancel", "TASK-9"], "control", {"control": "cancel"}, 404)]
    for argv, route, form, status in cases:
        capsys.readouterr()
        command, task_id, *rest = argv
        assert main([command, "FEAT-001", task_id, *rest, "--repo", str(repo), "--db", str(db)]) == 2
        said = capsys.readouterr().err.strip()
        assert len(said.splitlines()) == 1 and said.startswith("error: "), said
        answered = post(browser, f"/f/FEAT-001/t/{task_id}/{route}", form)
        assert (answered.status_code, answered.json()["message"]) == (status, said.removeprefix("error: ")), argv
    assert post(browser, "/f/FEAT-001/t/TASK-1/control", {"control": "halt"}).status_code == 400
    assert not event_log.task_events(repo, "FEAT-001", "TASK-2")[-1].kind.endswith("_requested"), "nothing written"


async def test_every_change_is_recorded_with_its_source_and_time(tmp_path: Path) -> None:
    repo, db = await asked(tmp_path)
    remember_db(repo, "FEAT-001", str(db))
    browser = client(repo, db)
    for route, form in [("note", {"text": "use the existing helper"}), ("control", {"control": "pause"}),
                        ("control", {"control": "unpause"})]:
        assert post(browser, f"/f/FEAT-001/t/TASK-1/{route}", form).status_code == 202
    question_id = next(e.fields["question_id"] for e in event_log.task_events(repo, "FEAT-001", "TASK-1")
                       if e.kind == "question_asked")
    agents = ScriptedAgents({("player", "TASK-1"): writes(SUB), "coach": approve()})
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(db), agents=agents, interactive=True, replan=0,
                           resume_only=True, answered_from="page")
    summary = await runner.execute(runner.prepare(settings), lambda event: None, answer=(question_id, "SQLite"))
    assert summary.results["TASK-1"]["status"] == "approved"
    kinds = {e.kind: e.fields for e in event_log.task_events(repo, "FEAT-001", "TASK-1")}
    assert kinds["answer_given"]["source"] == "page" and kinds["note_accepted"]["source"] == "page"
    assert kinds["pause_requested"]["source"] == kinds["unpause_requested"]["source"] == "page"
    report = (repo / ".autobuild/runs/FEAT-001/TASK-1/AUTO-RUN.md").read_text()
    steering = report.split("## Steering", 1)[1].split("\n## ", 1)[0]
    for said in [r"note 1 \(page, consumed\): use the existing helper", r"pause \(page\)", r"unpause \(page\)",
                 rf"answer \(page\) to '{re.escape(QUESTION)}': SQLite"]:
        assert re.search(rf"^- {STAMP}\S* {said}$", steering, re.MULTILINE), (said, steering)
