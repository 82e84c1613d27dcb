"""Mermaid text for people who look rather than read: the plan as a flowchart (tasks colored by outcome) and a run
as a Gantt chart. Pure functions over plain data; every label is escaped, whatever the plan's YAML held.

Both diagrams use syntax that GitHub's and the IDEs' mermaid.js (v10+) render: quoted flowchart labels with
Mermaid's entity codes (`#34;` for `"`), `classDef`/`class` lines, and a Gantt chart in compact display mode (one
row per task, its sessions side by side) with millisecond dates written in UTC.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from orchestrator.plan.model import FeaturePlan
from orchestrator.text import plain_line

MAX_NAME = 60
"""Longer task names are cut (with an ellipsis) so a 40-task flowchart stays legible."""
MAX_GANTT_BARS = 500
"""mermaid.js refuses diagrams longer than 50,000 characters (`maxTextSize`); past this many bars the sessions of
each task are drawn as one bar."""

# Characters kept as they are inside a quoted flowchart label; every other ASCII character becomes an entity code.
_LABEL_SAFE = frozenset(string.ascii_letters + string.digits + " -_.,/+=!?@()'")
# Characters that end or break a Gantt title, section name or bar label (`:` starts a bar's data, `#` and `%%`
# start comments, `;` ends a statement), or that Mermaid treats as markup.
_GANTT_UNSAFE = frozenset(':;#%"`<>{}[]\\')

Style = tuple[str, str]
"""A class name and its `classDef` style."""

STYLES: dict[str, Style] = {
    "approved": ("approved", "fill:#c8e6c9,stroke:#2e7d32,color:#1b1b1b"),
    "approved-unverified": ("unverified", "fill:#f0f4c3,stroke:#827717,stroke-dasharray:5 3,color:#1b1b1b"),
    "failed": ("failed", "fill:#ffcdd2,stroke:#c62828,color:#1b1b1b"),
    "aborted": ("aborted", "fill:#ffcdd2,stroke:#c62828,stroke-dasharray:5 3,color:#1b1b1b"),
    "blocked": ("blocked", "fill:#ffe0b2,stroke:#e65100,color:#1b1b1b"),
    "conflict": ("conflict", "fill:#e1bee7,stroke:#6a1b9a,color:#1b1b1b"),
    "error": ("erred", "fill:#ffab91,stroke:#b71c1c,stroke-width:3px,color:#1b1b1b"),
    "skipped": ("skipped", "fill:#eeeeee,stroke:#9e9e9e,stroke-dasharray:5 3,color:#555555"),
    "replaced": ("replaced", "fill:#e0f2f1,stroke:#00695c,stroke-dasharray:5 3,color:#1b1b1b"),
    "not run": ("notrun", "fill:#f5f5f5,stroke:#bdbdbd,color:#555555"),
    "running": ("running", "fill:#bbdefb,stroke:#1565c0,color:#1b1b1b"),
}


def style_of(outcome: str) -> Style:
    """The class of an outcome as `status` shows it ("approved", "error (resumable)", "running (coach)", …)."""
    if outcome in STYLES:
        return STYLES[outcome]
    if outcome.startswith("error"):
        return STYLES["error"]
    if outcome in ("pending", ""):
        return STYLES["not run"]
    return STYLES["running"]  # running (…), waiting for an answer, not finished


def label_text(text: str, limit: int = MAX_NAME) -> str:
    """Text for inside a quoted flowchart label: printable, cut to `limit` characters, every ASCII character that
    is not a letter, digit or plain punctuation written as a Mermaid entity code (`"` → `#34;`, `#` → `#35;`,
    `<` → `#60;`), so nothing in it can end the label, start a comment or become markup."""
    short = plain_line(text, limit)
    return "".join(ch if ch in _LABEL_SAFE or ord(ch) > 0x7F else f"#{ord(ch)};" for ch in short)


def gantt_text(text: str, limit: int = MAX_NAME) -> str:
    """Text for a Gantt title, section name or bar label: printable, without the characters that end one."""
    return plain_line("".join(" " if ch in _GANTT_UNSAFE else ch for ch in plain_line(text)), limit) or "-"


@dataclass(frozen=True)
class Flowchart:
    """A plan's dependency graph as Mermaid text, with what it holds (for `--json` and tests)."""

    text: str
    nodes: int
    edges: int
    node_ids: dict[str, str]
    """Task id → Mermaid node id (`t0`, `t1`, … in plan order: task ids may hold characters Mermaid ids can't)."""


def flowchart(plan: FeaturePlan, outcomes: Mapping[str, str] | None = None) -> Flowchart:
    """One node per task (id, name and, when `outcomes` is given, its outcome and color), one edge per dependency,
    from the dependency to the task that waits for it. Tasks missing from `outcomes` show as "not run"."""
    ids = {task.id: f"t{index}" for index, task in enumerate(plan.tasks)}
    lines = ["flowchart TD"]
    classes: dict[Style, list[str]] = {}
    for task in plan.tasks:
        label = f"{label_text(task.id)}: {label_text(task.name)}"
        if outcomes is not None:
            outcome = outcomes.get(task.id) or "not run"
            label += f"<br/>{label_text(outcome, 40)}"
            classes.setdefault(style_of(outcome), []).append(ids[task.id])
        lines.append(f'    {ids[task.id]}["{label}"]')
    edges = 0
    for task in plan.tasks:
        for dependency in task.dependencies:
            lines.append(f"    {ids[dependency]} --> {ids[task.id]}")
            edges += 1
    for (name, style), members in classes.items():
        lines += [f"    classDef {name} {style}", f"    class {','.join(members)} {name}"]
    return Flowchart("\n".join(lines) + "\n", len(plan.tasks), edges, ids)


BarKind = Literal["player", "coach", "gate", "wait", "pause", "work", "merged", "not merged", "skipped"]
MILESTONES: frozenset[str] = frozenset({"merged", "not merged", "skipped"})
_TAGS: dict[str, str] = {
    "player": "", "coach": "active, ", "gate": "done, ", "wait": "crit, ", "pause": "crit, ", "work": "",
    "merged": "milestone, ", "not merged": "crit, milestone, ", "skipped": "milestone, ",
}
MIN_BAR_SHARE = 1 / 400
"""Shorter bars are drawn this share of the chart's span long: mermaid.js needs a nonzero length, and a person
needs to see them (0.25% is a few pixels wide)."""


@dataclass(frozen=True)
class Bar:
    """One thing on the timeline: a session, a gate run, a wait, a pause (start < end) or a milestone."""

    label: str
    kind: BarKind
    start: float
    """Epoch seconds."""
    end: float


def _stamp(epoch_ms: int) -> str:
    moment = datetime.fromtimestamp(epoch_ms // 1000, UTC)
    return f"{moment:%Y-%m-%d %H:%M:%S}.{epoch_ms % 1000:03d}"


def _axis(span_s: float) -> str:
    if span_s < 3600:
        return "%H:%M:%S"
    return "%H:%M" if span_s < 86400 else "%m-%d %H:%M"


def _bar_line(bar: Bar, shortest_ms: int) -> str:
    """One bar (or milestone) with its start and end in whole milliseconds, the end at least `shortest_ms` on."""
    label = gantt_text(bar.label, 30)
    start = round(bar.start * 1000)
    if bar.kind in MILESTONES:
        return f"    {label} :{_TAGS[bar.kind]}{_stamp(start)}, 0s"
    end = max(round(bar.end * 1000), start + shortest_ms)
    return f"    {label} :{_TAGS[bar.kind]}{_stamp(start)}, {_stamp(end)}"


def _collapse(bars: Sequence[Bar]) -> list[Bar]:
    """A task's sessions (and gate runs) as one bar from the first start to the last end; the rest as it is."""
    work = [bar for bar in bars if bar.kind in ("player", "coach", "gate")]
    rest = [bar for bar in bars if bar.kind not in ("player", "coach", "gate")]
    if not work:
        return list(rest)
    merged = Bar(f"{len(work)} sessions", "work", min(b.start for b in work), max(b.end for b in work))
    return sorted([merged, *rest], key=lambda bar: bar.start)


def gantt(title: str, sections: Sequence[tuple[str, Sequence[Bar]]]) -> str:
    """A Gantt chart with one section (one row, in compact mode) per named group of bars; empty sections are
    left out. Times are written in UTC, which mermaid.js draws as they are written."""
    sections = [(name, list(bars)) for name, bars in sections if bars]
    if sum(len(bars) for _, bars in sections) > MAX_GANTT_BARS:
        sections = [(name, _collapse(bars)) for name, bars in sections]
    every = [bar for _, bars in sections for bar in bars]
    span = max((bar.end for bar in every), default=0.0) - min((bar.start for bar in every), default=0.0)
    shortest_ms = max(round(span * MIN_BAR_SHARE * 1000), 1)
    lines = ["---", "displayMode: compact", "---", "gantt", f"    title {gantt_text(title, 100)}",
             "    dateFormat YYYY-MM-DD HH:mm:ss.SSS", f"    axisFormat {_axis(span)}", "    todayMarker off"]
    room = MAX_GANTT_BARS
    for name, bars in sections:
        if room <= 0:
            break
        lines.append(f"    section {gantt_text(name)}")
        lines += [_bar_line(bar, shortest_ms) for bar in bars[:room]]
        room -= len(bars)
    if len(every) > MAX_GANTT_BARS:
        lines.append(f"    %% {len(every) - MAX_GANTT_BARS} more bars left out (mermaid's size limit)")
    return "\n".join(lines) + "\n"
