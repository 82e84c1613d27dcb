"""AUTO-RUN.md's pictures and `autobuild graph`, checked by the real mermaid.js: the flowchart holds the plan's
nodes and edges, a hostile task name stays inside its label, and every Gantt bar sits at the time it says."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, writes
from orchestrator.cli import main as cli
from orchestrator.plan.model import load_plan
from tests import mermaid_js
from tests.graph.harness import CALC_FILES, Workflow, plan, task

HOSTILE = 'x"]; t9-->t0 %% <script>`#1`</script>\n;# é日本 \x1b[31m'
SCHEMA = Path(__file__).parents[2] / "orchestrator" / "schemas" / "graph.schema.json"
BAR = re.compile(r"^    (?P<label>[^:\n]+?) :(?P<tags>(?:[a-z]+, )*)(?P<start>[^,]+), (?P<end>[^,\n]+)$", re.M)
STAMP = "%Y-%m-%d %H:%M:%S.%f"


def graph_json(capsys: pytest.CaptureFixture[str], repo: Path, db: Path) -> dict[str, Any]:
    assert cli.main(["graph", "FEAT-001", "--repo", str(repo), "--db", str(db), "--json"]) == 0
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(document)
    return document


def epoch(stamp: str) -> float:
    return datetime.strptime(stamp, STAMP).replace(tzinfo=UTC).timestamp()


async def test_auto_run_pictures_parse_in_mermaid_js_and_match_the_plan(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    data = plan(task("A"), task("B-2", "A", name=HOSTILE), task("C_3", "A"), task("D", "B-2", "C_3"),
                task("E", "A"), verify=None)
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=data)
    feature = load_plan(repo, "FEAT-001")
    db = tmp_path / "db.sqlite"

    before = graph_json(capsys, repo, db)  # never ran: the plain plan
    assert (before["colored"], before["nodes"], before["edges"]) == (False, 5, 5)
    assert "classDef" not in before["mermaid"]

    agents = ScriptedAgents({("player", "A"): writes({"calc/a.py": "A = 1\n"}),
                             ("player", "B-2"): writes({"calc/b.py": "B = 1\n"}),
                             ("player", "C_3"): Turn(status="max_turns"),
                             ("player", "E"): writes({"calc/e.py": "E = 1\n"}, question="Which one?"),
                             "coach": approve()})
    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        workflow = Workflow(repo, agents, checkpointer=saver, options={"interactive": True, "parallel": 2})
        assert (await workflow.run()).interrupts, "E waits for an answer"
        run = await workflow.run(resume="this one")
    outcomes = {"A": "approved-unverified", "B-2": "approved-unverified", "C_3": "failed", "D": "skipped",
                "E": "approved-unverified"}
    assert {t: run.status(t) for t in outcomes} == outcomes

    flowchart, timeline = mermaid_js.blocks((repo / ".autobuild/runs/FEAT-001/AUTO-RUN.md").read_text())
    drawn = mermaid_js.flowchart(flowchart)
    ids = {f"t{index}": spec.id for index, spec in enumerate(feature.tasks)}
    assert len(drawn.labels) == len(feature.tasks)
    assert sorted(drawn.edges) == sorted((f"t{feature.task_ids().index(dep)}", node)
                                         for node, tid in ids.items() for dep in feature.task(tid).dependencies)
    assert drawn.scripts == 0
    for node, task_id in ids.items():
        name = " ".join(feature.task(task_id).name.split())  # newlines in a name become spaces
        assert drawn.labels[node] == [f"{task_id}: {name}", outcomes[task_id]], node
    assert '<script>`#1`</script>' in drawn.labels["t1"][0] and "%%" in drawn.labels["t1"][0]
    assert drawn.classes == {"t0": {"unverified"}, "t1": {"unverified"}, "t2": {"failed"}, "t3": {"skipped"},
                             "t4": {"unverified"}}

    lines = [match.groupdict() for match in BAR.finditer(timeline)]
    sections, bars = mermaid_js.gantt(timeline)
    assert sections == ["A", "B-2", "C_3", "D", "E"]
    assert [bar.label for bar in bars] == [line["label"] for line in lines]
    assert {"P1", "C1", "Q", "merged", "skipped"} <= {bar.label for bar in bars}
    starts = [epoch(line["start"]) for line in lines]
    for line, bar in zip(lines, bars, strict=True):
        if bar.milestone:
            assert line["end"] == "0s" and "milestone" in line["tags"]
        else:
            assert epoch(line["end"]) > epoch(line["start"]) and bar.width > 0, line
    # Where mermaid.js put each bar is where its start time says: the dates parsed as written.
    first, last = starts.index(min(starts)), starts.index(max(starts))
    scale = (bars[last].at - bars[first].at) / (starts[last] - starts[first])
    for start, bar in zip(starts, bars, strict=True):
        assert bar.at == pytest.approx(bars[first].at + (start - starts[first]) * scale, abs=2.5), bar

    after = graph_json(capsys, repo, db)
    assert (after["colored"], after["nodes"], after["edges"], after["outcomes"]) == (True, 5, 5, outcomes)
    assert after["mermaid"] == flowchart
