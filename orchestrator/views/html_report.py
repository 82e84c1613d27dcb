"""The feature's HTML report (`report.html` beside AUTO-RUN.md): one self-contained page that draws the plan and the
timeline with the bundled mermaid.js and lists every task, its turns (the coach's verdicts) and its gate runs.
It opens in any browser, offline: nothing is fetched, every text from the run is escaped."""

from __future__ import annotations

import html
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from orchestrator.jsonout import iso_utc
from orchestrator.plan.model import FeaturePlan
from orchestrator.repo import run_files
from orchestrator.store import traces as trace
from orchestrator.text import plain_line
from orchestrator.views import attempt_report
from orchestrator.views.browser import mermaid_js
from orchestrator.views.mermaid import flowchart, gantt, style_of
from orchestrator.views.pictures import LEGEND, timeline
from orchestrator.views.timeline import latest_run, timed

REPORT_HTML = "report.html"
_STYLE = """
body {font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em; color: #1b1b1b}
table {border-collapse: collapse; margin: .5em 0 1em} th, td {border: 1px solid #ccc; padding: .25em .6em;
text-align: left; vertical-align: top} th {background: #f3f3f3} .num {text-align: right}
.status {font-weight: 600; white-space: nowrap} pre.mermaid {background: #fff} .muted {color: #666}
details {margin: .4em 0} summary {cursor: pointer} #render-error {color: #b71c1c}
"""
_RENDER = """
// A timeline's short bars sit side by side, and mermaid.js draws a label that doesn't fit its bar beside it, over
// its neighbours': on each row a label that would overlap the one before it is hidden, and every bar names its
// label on hover (an SVG <title>).
const untangle = (svg) => {
  const rows = new Map();
  svg.querySelectorAll("text[class*='taskText']").forEach((label) => {
    const box = label.getBBox();
    rows.set(Math.round(box.y), [...(rows.get(Math.round(box.y)) || []), [box, label]]);
    const bar = svg.querySelector(`rect[id="${CSS.escape(label.id.replace(/-text$/, ""))}"]`);
    if (bar !== null && bar.querySelector("title") === null) {
      bar.appendChild(document.createElementNS("http://www.w3.org/2000/svg", "title")).textContent =
        label.textContent.trim();
    }
  });
  rows.forEach((labels) => {
    let end = -Infinity;
    labels.sort((a, b) => a[0].x - b[0].x).forEach(([box, label]) => {
      if (box.x < end + 2) {
        label.style.display = "none";
      } else {
        end = box.x + box.width;
      }
    });
  });
};
mermaid.initialize({startOnLoad: false, securityLevel: "strict"});
mermaid.run({querySelector: "pre.mermaid"}).then(() => {
  document.querySelectorAll("svg[aria-roledescription='gantt']").forEach(untangle);
  document.body.dataset.rendered = "yes";
}).catch((error) => {
  document.body.dataset.rendered = "error";
  document.getElementById("render-error").textContent = "The pictures could not be drawn: " + error;
});
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def task_turns(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The latest run's turns of a task, from its trace: the coach's verdict and rationale, and the gate's run on
    an approval (summary, passed), one row per turn in order."""
    turns: dict[int, dict[str, Any]] = {}
    for _, event in latest_run(timed(events)):
        kind, turn = event.get("event"), event.get("turn")
        if not isinstance(turn, int):
            continue
        row = turns.setdefault(turn, {"turn": turn, "decision": "", "rationale": "", "gate": "", "passed": None})
        if kind == "coach_decision":
            row["decision"] = str(event.get("decision") or "")
            row["rationale"] = plain_line(str(event.get("rationale") or ""), 300)
        elif kind == "gate":
            row["gate"] = plain_line(str(event.get("summary") or ""), 300)
            row["passed"] = bool(event.get("passed"))
    return [turns[turn] for turn in sorted(turns)]


def _turns_table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return '<p class="muted">No turn recorded in this run.</p>'
    body = "".join(
        f"<tr><td class=num>{row['turn']}</td><td>{_e(row['decision'] or '-')}</td><td>{_e(row['rationale'])}</td>"
        f"<td>{'' if row['passed'] is None else ('passed: ' if row['passed'] else 'failed: ')}{_e(row['gate'])}</td>"
        "</tr>" for row in rows)
    return f"<table><tr><th>Turn</th><th>Coach</th><th>Why</th><th>Gate</th></tr>{body}</table>"


def _badge(outcome: str) -> str:
    style = dict(part.split(":", 1) for part in style_of(outcome)[1].split(",") if ":" in part)
    return (f'<span class="status" style="background:{_e(style.get("fill", "#fff"))};'
            f' border:1px solid {_e(style.get("stroke", "#999"))}; padding:0 .4em">{_e(outcome)}</span>')


def feature_html(repo: Path, plan: FeaturePlan, order: Sequence[str], outcomes: Mapping[str, str],
                 results: Mapping[str, Mapping[str, Any]], *, now: float | None = None,
                 attempts: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """The page: summary, the plan drawn (colored by outcome), the timeline drawn, one row per task, the tasks run
    as several attempts and their selection (`attempts`: by task, a person's pick laid over; else the results'),
    and each task's turns with their gate runs (blocking file work: the traces are read)."""
    now = time.time() if now is None else now
    names = {task.id: task.name for task in plan.tasks}
    chart = flowchart(plan, outcomes)
    sections = timeline(repo, plan.id, order, now)
    approved = sum(1 for task in order if outcomes.get(task, "").startswith("approved"))
    cost = sum(float(result.get("cost_usd", 0.0) or 0.0) for result in results.values())
    parts = [f"<h1>{_e(plan.id)} — {_e(plan.name)}</h1>",
             f'<p>{approved} of {len(order)} task(s) approved · total cost ${cost:.4f} ·'
             f' <span class="muted">made {_e(iso_utc(now))}</span></p><p id="render-error"></p>',
             f"<h2>Plan</h2><p>{chart.nodes} task(s), {chart.edges} dependency edge(s); an arrow points from a task"
             " to the one that waits for it, colors are outcomes.</p>",
             f'<pre class="mermaid">{_e(chart.text)}</pre>']
    if sections:
        parts += [f"<h2>Timeline</h2><p>What ran when, in UTC. {_e(LEGEND)}.</p>",
                  f'<pre class="mermaid">{_e(gantt(f"{plan.id} - what ran when (UTC)", sections))}</pre>']
    rows = []
    for task_id in order:
        result = results.get(task_id, {})
        rows.append(f"<tr><td>{_e(task_id)}</td><td>{_e(names.get(task_id, ''))}</td>"
                    f"<td>{_badge(outcomes.get(task_id) or 'not run')}</td>"
                    f"<td class=num>{_e(result.get('turns', 0))}</td>"
                    f"<td class=num>${float(result.get('cost_usd', 0.0) or 0.0):.4f}</td>"
                    f"<td class=num>{float(result.get('duration_s', 0.0) or 0.0):.1f} s</td>"
                    f"<td>{_e(plain_line(str(result.get('reason', '')), 300))}</td></tr>")
    parts += ["<h2>Tasks</h2><table><tr><th>Task</th><th>Name</th><th>Status</th><th>Turns</th><th>Cost</th>"
              f"<th>Duration</th><th>Reason</th></tr>{''.join(rows)}</table>",
              attempt_report.html_section(order, attempt_report.of_results(results) if attempts is None else attempts),
              "<h2>Turns and gate runs</h2>"]
    for task_id in order:
        turns = task_turns(trace.read(repo, plan.id, task_id))
        parts.append(f"<details open><summary><b>{_e(task_id)}</b> {_e(names.get(task_id, ''))}"
                     f" ({len(turns)} turn(s))</summary>{_turns_table(turns)}</details>")
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{_e(plan.id)} — AutoBuild'
            f"</title><style>{_STYLE}</style></head>\n<body>\n" + "\n".join(parts) +
            f"\n<script>{mermaid_js()}</script>\n<script>{_RENDER}</script>\n</body></html>\n")


def write(path: Path, page: str) -> Path:
    """The page into the run's folder, no symlink followed (repo/run_files.py)."""
    return run_files.write(path, page, "report.html")
