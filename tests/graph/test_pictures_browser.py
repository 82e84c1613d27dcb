"""Pictures that open, checked in headless Chromium: the feature's report.html (mermaid.js inside, nothing fetched)
draws the plan and the timeline and lists the tasks, their turns and gate runs; `graph --format svg|png` writes a
standalone SVG and a PNG of it; without a Chromium the command refuses in one line and writes nothing."""

from __future__ import annotations

import asyncio
import html
import itertools
import json
import os
import re
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, feedback, writes
from orchestrator.cli.main import main
from orchestrator.views.browser import PNG_SCALE, svg_size
from tests import chromium
from tests.graph.harness import Workflow, plan, task
from tests.graph.test_landing import FILES, MUL, SUB, VERIFY, valid

pytestmark = pytest.mark.heavy  # Chromium is there: `make test-heavy` runs `make install`, which installs it


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A run of A, then C and D (both waiting for A) with its gate: A approved on its second turn."""
    root = tmp_path_factory.mktemp("pictures")
    repo = make_sample_repo(root / "repo", files=FILES, plan=plan(
        task("A", name='Subtract <b>"safely"</b>'), task("C", "A"), task("D", "A"), verify=VERIFY))
    agents = ScriptedAgents({("player", "A"): writes(SUB), ("player", "C"): writes(MUL),
                             ("player", "D"): writes({"calc/d.py": "D = 1\n"}),
                             ("coach", "A", 1): feedback(("calc/sub.py", 1, "say why in a docstring")),
                             "coach": approve()})

    async def run() -> None:
        async with AsyncSqliteSaver.from_conn_string(str(root / "db.sqlite")) as saver:
            await Workflow(repo, agents, checkpointer=saver).run(max_turns=3)

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        asyncio.run(run())
    return repo, root / "db.sqlite"


def test_the_feature_report_page_draws_the_plan_and_the_timeline_offline(finished: tuple[Path, Path]) -> None:
    repo, _ = finished
    page = repo / ".autobuild/runs/FEAT-001/report.html"
    source = page.read_text()
    assert not re.findall(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", source), "nothing fetched: no CDN"
    assert "<b>" not in source.split("<script>", 1)[0].replace("<b>A</b>", "").replace(
        "<b>C</b>", "").replace("<b>D</b>", ""), "the task's name is escaped, never markup"
    dom = chromium.dump_dom(page)
    assert 'data-rendered="yes"' in dom, re.findall(r'id="render-error">[^<]*', dom)
    assert dom.count('aria-roledescription="flowchart-v2"') == 1 and dom.count('aria-roledescription="gantt"') == 1
    flowchart = dom[dom.index('aria-roledescription="flowchart-v2"'):dom.index('aria-roledescription="gantt"')]
    assert 'A: Subtract &lt;b&gt;"safely"&lt;/b&gt;' in flowchart and "C: Task C" in flowchart
    assert flowchart.count("approved") >= 3, "each task's outcome drawn in its box"
    gantt = dom[dom.index('aria-roledescription="gantt"'):]
    assert all(f">{name}<" in gantt for name in ("A", "C", "D")), "one row per task on the timeline"
    assert re.search(r"<td>A</td><td>[^<]*</td><td><span[^>]*>approved</span></td><td class=\"num\">2</td>", dom)
    turns = dom[dom.index("Turns and gate runs"):]
    assert "<td>feedback</td>" in turns and "<td>approve</td>" in turns and "passed: " in turns


def test_graph_draws_the_flowchart_to_svg_and_png(finished: tuple[Path, Path], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    repo, db = finished
    code = main(["graph", "FEAT-001", "--repo", str(repo), "--db", str(db), "--format", "svg", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    document = valid(out, "graph")
    svg = Path(document["file"])
    assert svg == repo / ".autobuild/runs/FEAT-001/graph.svg"
    root = ET.fromstring(svg.read_text().split("\n", 1)[1])
    assert root.tag.endswith("svg") and "C: Task C" in "".join(root.itertext())
    assert "C: Task C" in chromium.dump_dom(svg), "the file opens in a browser as the picture"
    code = main(["graph", "FEAT-001", "--repo", str(repo), "--db", str(db), "--format", "png", "-o",
                 str(tmp_path / "plan.png")])
    out, err = capsys.readouterr()
    assert code == 0 and out.strip() == f"wrote {tmp_path / 'plan.png'}", err
    data = (tmp_path / "plan.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == tuple(PNG_SCALE * side for side in svg_size(svg.read_text()))


def test_without_chromium_svg_and_png_refuse_in_one_line_and_write_nothing(
        finished: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    repo, db = finished
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in ("git", "python3"):
        found = next(Path(d) / tool for d in os.environ["PATH"].split(os.pathsep) if (Path(d) / tool).exists())
        (folder / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(folder))
    code = main(["graph", "FEAT-001", "--repo", str(repo), "--db", str(db), "--format", "png", "-o",
                 str(tmp_path / "plan.png"), "--json"])
    out, _ = capsys.readouterr()
    assert code == 2 and "needs Chromium" in json.loads(out)["error"] and "--format html" in json.loads(out)["error"]
    assert not (tmp_path / "plan.png").exists()
    code = main(["graph", "FEAT-001", "--repo", str(repo), "--db", str(db), "--format", "html", "-o",
                 str(tmp_path / "page.html")])
    assert code == 0 and (tmp_path / "page.html").is_file(), "the HTML report needs no browser to be made"


def test_a_large_plan_s_png_is_painted_whole_and_the_same_every_time(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A wide plan (62 tasks, ~19,000 by 2,000 device pixels): every task's box is painted, and a second drawing is
    the same file. Chromium's screenshot left the last tiles blank about one run in four (the bottom-right boxes)."""
    tasks = [task(f"T{i}", *([f"T{(i - 1) // 2}"] if i else []),
                  name=f"task number {i} with a much longer name that wraps onto several lines") for i in range(62)]
    repo = make_sample_repo(tmp_path / "repo", plan=plan(*tasks))
    where = ["--repo", str(repo), "--db", str(tmp_path / "db.sqlite")]
    assert main(["graph", "FEAT-001", *where, "--format", "svg", "-o", str(tmp_path / "plan.svg")]) == 0
    centres = [(round(float(x)) * PNG_SCALE, round(float(y)) * PNG_SCALE) for x, y in re.findall(
        r'<g class="node[^"]*" id="[^"]*" [^>]*transform="translate\(([\d.]+), ([\d.]+)\)"',
        (tmp_path / "plan.svg").read_text())]
    assert len(centres) == 62
    pictures = []
    for name in ("plan.png", "again.png"):
        code = main(["graph", "FEAT-001", *where, "--format", "png", "-o", str(tmp_path / name)])
        assert code == 0, capsys.readouterr().err
        pictures.append((tmp_path / name).read_bytes())
    assert chromium.blank_points(tmp_path / "plan.png", centres) == [], "every task's box is in the picture"
    assert pictures[0] == pictures[1], "the same plan, the same picture: nothing left to chance"


_LABELS_PROBE = """<script>
const probe = () => {
  if (!document.body.dataset.rendered) return setTimeout(probe, 50);
  const shown = [...document.querySelectorAll("svg[aria-roledescription='gantt'] text[class*='taskText']")]
    .filter((label) => getComputedStyle(label).display !== "none")
    .map((label) => { const box = label.getBBox(); return [label.textContent.trim(), box.x, box.y, box.width]; });
  const named = [...document.querySelectorAll("svg[aria-roledescription='gantt'] text[class*='taskText']")]
    .map((label) => document.getElementById(label.id.replace(/-text$/, ""))?.querySelector("title")?.textContent);
  const out = document.body.appendChild(document.createElement("pre"));
  out.id = "label" + "s";  // the DOM read back holds this script too: only the result may match
  out.textContent = JSON.stringify({shown, named});
};
probe();
</script></body>"""


def test_the_report_s_timeline_labels_never_overlap(finished: tuple[Path, Path], tmp_path: Path) -> None:
    """A fast run's bars (P1, C1, G, the merge) lie side by side, and mermaid.js draws each label that doesn't fit
    its bar beside it: a label that would cover another on its row is hidden, and its bar names it on hover."""
    repo, _ = finished
    page = tmp_path / "report.html"
    head, _, tail = (repo / ".autobuild/runs/FEAT-001/report.html").read_text().rpartition("</body>")
    page.write_text(head + _LABELS_PROBE + tail)  # the page's last </body>: mermaid.js's code holds the text too
    found = re.search(r'<pre id="labels">(.*?)</pre>', chromium.dump_dom(page))
    assert found, "the timeline was drawn"
    labels = json.loads(html.unescape(found.group(1)))
    rows: dict[float, list[tuple[float, float, str]]] = {}
    for text, x, y, width in labels["shown"]:
        rows.setdefault(round(y), []).append((x, x + width, text))
    assert len(labels["shown"]) >= 3, labels
    for row in rows.values():
        row.sort()
        overlaps = [(a[2], b[2]) for a, b in itertools.pairwise(row) if b[0] < a[1]]
        assert overlaps == [], f"labels drawn over each other: {overlaps}"
    assert labels["named"] and all(labels["named"]), f"every bar names its label on hover: {labels['named']}"
