"""The pull request's body: the base tests the coach accepted changing, found in results and traces wherever the
coach's decision recorded them, each once; a report too long for a forge loses its timeline first, then its tail."""

from __future__ import annotations

import json
from pathlib import Path

from orchestrator.views.pr_body import MAX_BODY, accepted_test_changes, pull_request_body, write_body

REPORT = "# AUTO-RUN: FEAT-001 — Calc\n\n- **Receipt:** approved attempt $0.0100\n"


def trace(repo: Path, task: str, *events: dict[str, object]) -> None:
    folder = repo / ".autobuild/runs/FEAT-001" / task
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trace.jsonl").write_text("".join(json.dumps(event) + "\n" for event in events) + "{cut short")


def test_accepted_test_changes_are_read_from_results_and_traces_each_once(tmp_path: Path) -> None:
    change = {"test": "tests/test_add.py::test_add", "reason": "REQ-2:\nnegatives now raise"}
    trace(tmp_path, "A", {"event": "coach_decision", "decision": "approve", "test_changes_accepted": [change]},
          {"event": "coach_decision", "review": {"test_changes_accepted": [change, {"test": "tests/test_b.py"}]}})
    results = {"B": {"status": "approved", "test_changes_accepted": [{"test": "tests/test_c.py", "reason": "R"}]}}
    found = accepted_test_changes(tmp_path, "FEAT-001", ["A", "B", "C"], results)
    assert found == {"A": [("tests/test_add.py::test_add", "REQ-2: negatives now raise"), ("tests/test_b.py", "")],
                     "B": [("tests/test_c.py", "R")]}


def test_the_body_names_what_it_holds_the_tests_changed_and_carries_the_report(tmp_path: Path) -> None:
    (tmp_path / ".autobuild/runs/FEAT-001").mkdir(parents=True)
    (tmp_path / ".autobuild/runs/FEAT-001/AUTO-RUN.md").write_text(REPORT)
    path, report = write_body(tmp_path, "FEAT-001", ["A"], {"B": "failed"}, {})
    body = path.read_text()
    assert report == REPORT and path.name == "PULL-REQUEST.md"
    assert body.startswith("Built by AutoBuild: 1 approved task(s) (A)")
    assert "**Left out (not approved):**\n- B: failed" in body
    assert "None: no approval recorded a change to a test that was already there." in body
    assert body.rstrip().endswith(REPORT.rstrip())
    with_changes = pull_request_body(REPORT, ["A"], {}, {"A": [("tests/t.py::x", "because | why")]})
    assert "| A | `tests/t.py::x` | because / why |" in with_changes


def test_a_report_too_long_for_a_forge_loses_its_timeline_then_its_tail() -> None:
    timeline = "## Timeline\n\n```mermaid\n" + "    bar :0, 1\n" * 6000 + "```\n"
    report = f"{REPORT}\n## Plan\n\n```mermaid\nflowchart TD\n```\n\n{timeline}\n## After\n\ntail\n"
    body = pull_request_body(report, ["A"], {}, {})
    assert len(body) <= MAX_BODY and "## Plan" in body and "bar :0" not in body and "## After" in body
    assert "The timeline is left out" in body
    huge = pull_request_body(REPORT + "\n```mermaid\n" + "x\n" * 40000 + "```\n", ["A"], {}, {})
    assert len(huge) <= MAX_BODY and huge.count("```") % 2 == 0 and "cut here" in huge
