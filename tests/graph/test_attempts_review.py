"""`review` and the HTML report show a task's attempts as `show` and `status --json` do (issue 40 item 3): the pick
and its reasons, every attempt's verdict and cost, the cross-test matrix and the selector's cost (a person's `pick`
said over the selection's in both: tests/graph/test_pick.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, feedback, selects, writes
from orchestrator.cli.main import main
from orchestrator.graph import runner
from orchestrator.settings import RunSettings
from tests import schemas
from tests.graph.harness import CALC_FILES, plan, task

WHY = "<b>a + -b</b> negates where a - b says it"


def test_review_and_the_html_report_show_the_selection(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=dict(CALC_FILES), plan=plan(task("TASK-001", attempts=3)))
    db = tmp_path / "db.sqlite"
    agents = ScriptedAgents({("player", "TASK-001.a1"): writes({"calc/sub.py": "def sub(a, b):\n    return a + -b\n"}),
                             ("player", "TASK-001.a2"): writes({"calc/sub.py": "def sub(a, b):\n    return a - b\n"}),
                             ("player", "TASK-001.a3"): writes({"calc/x.py": "X = 1\n"}),
                             ("coach", "TASK-001.a3"): feedback(("calc/x.py", None, "no")), "coach": approve(),
                             "selector": selects(2, a1=WHY)})
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(db), agents=agents, interactive=False,
                           attempts_policy="best", max_turns=1, replan=0)
    asyncio.run(runner.execute(runner.prepare(settings), lambda event: None))
    common = ["--repo", str(repo), "--db", str(db)]
    assert main(["status", "FEAT-001", *common, "--json"]) == 0
    status = json.loads(capsys.readouterr().out)["tasks"][0]

    assert main(["review", "FEAT-001", *common, "--json"]) == 0
    row = schemas.valid("review", json.loads(capsys.readouterr().out))["tasks"][0]
    # One reader: review's fields are status's, to the letter.
    assert {key: row[key] for key in ("attempt_verdicts", "picked", "pick", "attempts_policy", "selection")} == {
        key: status[key] for key in ("attempt_verdicts", "picked", "pick", "attempts_policy", "selection")}
    assert (row["picked"], row["selection"]["by"]) == (2, "selector")
    assert [v["status"] for v in row["attempt_verdicts"]] == ["approved", "approved", "failed"]
    assert main(["review", "FEAT-001", *common]) == 0
    text = capsys.readouterr().out
    assert "TASK-001 attempts (best): picked attempt 2: attempt 2 picked by the selector" in text
    assert f"not picked: {WHY}" in text and "  attempt 3 [attempt_test_first]: failed, 1 turn(s)" in text
    assert "cross-test: attempt 1's tests on attempt 2's code: no tests" in text
    assert "selector: success, chose 2, $0.0200" in text

    page = (repo / ".autobuild/runs/FEAT-001/report.html").read_text()
    section = page[page.index("<h2>Attempts</h2>"):page.index("<h2>Turns and gate runs</h2>")]
    assert "TASK-001: 3 attempts (best)" in section and "Picked: attempt 2: attempt 2 picked by the selector" in section
    assert "&lt;b&gt;a + -b&lt;/b&gt; negates" in section and "<b>a + -b" not in section, "run text is escaped"
    matrix_row = "<th>attempt 1's tests</th><td class=\"muted\">-</td><td>no tests</td>"
    assert matrix_row in section, "the matrix: a row per candidate's tests, a column per candidate's code"
    assert "Decided by: selector (tied: 1, 2)" in section and "Selector: success, chose 2, $0.0200" in section
    for verdict in status["attempt_verdicts"]:
        assert f"${verdict['cost_usd']:.4f}" in section

