"""A question answered on the page resumes its task (issue 41, item 4), in Debian's Chromium over the DevTools
protocol: a real run stops at a question (exit 3), `autobuild ui` shows it with its options, a click answers it as
`autobuild answer` would, the task goes on to approved before the person's eyes, and a second answer is told the
question was already answered."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from tests.conftest import CliRun, cli_env, coach_from_pytest, git
from tests.devtools import Browser
from tests.integration.test_questions import asking_player, plan, qid, run

pytestmark = [pytest.mark.cli, pytest.mark.heavy]
RUN_S = 180.0
"""The answer's run: a player turn, the gate, a coach turn and the merge, on a loaded machine."""


def test_a_question_answered_on_the_page_resumes_its_task(
        tmp_path: Path, model_factory: Callable[..., ScriptedModel], run_cli: Callable[..., CliRun]) -> None:
    repo, db = make_sample_repo(tmp_path / "repo", plan=plan("TASK-1")), tmp_path / "db"
    model = model_factory({"sessions": [asking_player("TASK-1", "Which database?", "Postgres", "db.txt"),
                                        coach_from_pytest()]})
    paused = run(run_cli, tmp_path, model, "run", "FEAT-001", "--interactive")
    assert paused.returncode == 3, paused.stdout + paused.stderr
    question_id = qid(paused, "TASK-1")
    server = subprocess.Popen([sys.executable, "-m", "orchestrator", "ui", "--repo", str(repo), "--db", str(db)],
                              env=cli_env(model, tmp_path), stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    url = server.stdout.readline().split(": ", 1)[1].strip()
    browser = Browser()
    try:
        base = url.split("/?", 1)[0]
        browser.open(url)
        browser.open(f"{base}/f/FEAT-001")
        assert browser.wait("document.querySelector('section.question .asked').textContent") == "Which database?"
        if folder := os.environ.get("AUTOBUILD_SCREENSHOTS"):
            browser.width(390)
            browser.screenshot(Path(folder) / "question-390.png")
        browser.value("document.querySelector('section.question button[value=\"Postgres\"]').click()")
        said = browser.wait("document.querySelector('.said.ok, .said.refused')?.textContent")
        assert said.startswith(f"{question_id} answered"), said
        cell = "document.querySelector('[data-task=\"TASK-1\"] [data-field=status]')?.textContent"
        browser.wait(f"{cell} === 'approved'", timeout=RUN_S)
        again = browser.value(f"""fetch("/f/FEAT-001/answer", {{method: "POST",
            headers: {{"Accept": "application/json"}},
            body: new URLSearchParams({{question_id: {json.dumps(question_id)}, option: "SQLite"}})}})
            .then((r) => r.json().then((d) => r.status + " " + d.message))""")
        assert again == f"409 {question_id} was already answered", again
    finally:
        browser.close()
        server.terminate()
        server.wait(timeout=30)
    assert git(repo, "show", "autobuild/FEAT-001:db.txt") == "Postgres\n", "the agent saw the page's answer"
    answered = [r for r in model.requests if r.role == "player" and r.step == 1]
    assert '"Which database?"="Postgres"' in answered[-1].tool_results[0]
