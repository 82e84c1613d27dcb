"""The live view: one row per task (state, activity, turn, cost, elapsed) and a footer, updated from events."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from orchestrator.facts import FAILED
from orchestrator.text import one_line
from orchestrator.views.live_layout import cut_end, cut_middle, elapsed_text, layout, state_cell, tool_words

MARK = {"approved": "✔", "approved-unverified": "✔?", "error": "!", "failed": "✘", "blocked": "⛔", "skipped": "↷",
        "conflict": "⚠", "aborted": "✘", "replaced": "⇉"}


@dataclass
class TaskRow:
    """What the view knows about one task."""

    state: str = "queued"
    """queued, ready, running, waiting for an answer, or how it ended (approved, failed, …)."""
    activity: str = ""
    """What it is doing now, e.g. `player Bash: pytest -q`."""
    role: str = ""
    turn: int = 0
    cost_usd: float = 0.0
    started: float | None = None
    ended: float | None = None

    def elapsed(self, now: float) -> str:
        if self.started is None:
            return "-"
        return elapsed_text((self.ended if self.ended is not None else now) - self.started)


class TaskBoard:
    """The live table's model, updated from events (pure: it is unit-tested without a terminal)."""

    def __init__(self) -> None:
        self.rows: dict[str, TaskRow] = {}
        self.gate = ""
        self.paused = ""
        self.budget_usd: float | None = None
        self.spent_before = 0.0
        """What status counted before the sessions this view saw (the `resume` event's `spent_usd`, less those)."""

    def update(self, event: dict[str, Any], now: float) -> None:
        kind = str(event.get("event"))
        if kind == "feature_start":
            for task_id in event.get("tasks") or []:
                self.rows.setdefault(str(task_id), TaskRow())
            self.gate = gate_line(event)
            self.budget_usd = event.get("budget_usd")
        elif kind == "resume":  # what status counted so far, of which the rows already hold this view's sessions
            self.spent_before = float(event.get("spent_usd") or 0.0) - sum(row.cost_usd for row in self.rows.values())
            for task_id, status in (event.get("finished") or {}).items():  # an earlier run's: not queued
                self.rows.setdefault(str(task_id), TaskRow()).state = str(status)
        elif kind == "usage_limit":
            self.paused = one_line(event.get("status") or "paused, usage limit", 100)
        elif kind == "usage_limit_over":
            self.paused = ""
        elif event.get("task"):
            self._task_event(self.rows.setdefault(str(event["task"]), TaskRow()), kind, event, now)

    def _task_event(self, row: TaskRow, kind: str, event: dict[str, Any], now: float) -> None:
        if kind == "task_ready":
            row.state = "ready"
        elif kind == "initialize":
            row.started, row.ended, row.state, row.activity = now, None, "running", "worktree ready"
        elif kind in ("player_start", "coach_validate"):
            row.role = "player" if kind == "player_start" else "coach"
            row.turn = int(event.get("turn") or row.turn)
            row.state, row.activity = "running", "working" if row.role == "player" else "reviewing"
        elif kind == "tool":  # who is at work shows in the state column; here, what it does, in words
            row.activity = one_line(tool_words(str(event.get("tool")), str(event.get("detail") or "")), 120)
        elif kind == "gate":
            row.activity = f"verify {'passed' if event.get('passed') else 'FAILED'}"
        elif kind == "retry":
            row.activity = one_line(f"retrying: {event.get('reason')}", 60)
        elif kind == "session_end":
            row.cost_usd += float(event.get("cost_usd") or 0.0)
        elif kind in _PERSON_EVENTS:
            _person_event(row, kind, event)
        elif kind in ("finalize", "skipped", "task_error"):
            row.ended = now if row.started is not None else None
            row.state = "error" if kind == "task_error" else str(event.get("status") or "skipped")
            row.activity, row.role = one_line(event.get("reason"), 60), ""
        elif kind == "merge":
            row.activity = "merged" if event.get("merged") else one_line(f"NOT merged: {event.get('reason')}", 60)
        elif kind.startswith("replan"):
            self._replan_event(row, kind, event)

    def _replan_event(self, row: TaskRow, kind: str, event: dict[str, Any]) -> None:
        """The planner splitting a task that ran out of turns: the new tasks get rows of their own."""
        if kind == "replan_start":
            row.activity = "the planner splits it"
        elif kind == "replan":
            row.state, row.activity = "replaced", one_line(f"by {', '.join(event.get('tasks') or [])}", 60)
            for task_id in event.get("tasks") or []:
                self.rows.setdefault(str(task_id), TaskRow())
        elif kind == "replan_refused":
            row.activity = one_line(f"replan refused: {event.get('reason')}", 60)

    def footer(self) -> str:
        spent = self.spent_before + sum(row.cost_usd for row in self.rows.values())
        budget = f" / ${self.budget_usd:.2f} budget" if self.budget_usd else " (no budget cap)"
        done = sum(1 for row in self.rows.values() if row.ended is not None or row.state in MARK)
        failed = sum(1 for row in self.rows.values() if row.state in FAILED)
        return (f"spent ${spent:.4f}{budget} · {done}/{len(self.rows)} tasks done"
                + (f" ({failed} not approved)" if failed else ""))

    def render(self, now: float, width: int = 100) -> Group:
        """The table laid out for `width` columns: widths fixed by the width and the task ids, so redraws don't
        shift; cells cut by us (ids in the middle, activity at its end), never by the terminal."""
        shape = layout(width, list(self.rows))
        table = Table(title="AutoBuild", box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1), expand=False,
                      show_edge=False)
        columns = [("Task", shape.task), ("State", shape.state), ("Turn", shape.turn), ("Cost", shape.cost),
                   ("Elapsed", shape.elapsed), ("Activity", shape.activity)]
        for name, column_width in columns:
            if column_width:
                table.add_column(name, width=column_width, no_wrap=True, overflow="ellipsis",
                                 justify="right" if name in ("Turn", "Cost", "Elapsed") else "left")
        for task_id, row in self.rows.items():
            # Text(), never markup: task ids, tool arguments and reasons come from plans and agents.
            cells = [Text(cut_middle(one_line(task_id, 200), shape.task)),
                     state_cell(row.state, row.role, now, bool(self.paused)), Text(str(row.turn or "-"))]
            if shape.cost:
                cells.append(Text(f"${row.cost_usd:.4f}"))
            if shape.elapsed:
                cells.append(Text(row.elapsed(now)))
            cells.append(Text(cut_end(row.activity, shape.activity), style="dim" if row.ended else ""))
            table.add_row(*cells)
        lines = [Text(self.footer(), style="bold")]
        lines += [Text(line) for line in (self.paused.upper(), self.gate) if line]
        return Group(table, *lines)


def gate_line(event: dict[str, Any]) -> str:
    if not event.get("gate"):
        return f"no gate ({event.get('gate_source')}): approvals will be reported as unverified"
    line = f"gate `{one_line(event['gate'], 100)}` ({event.get('gate_source')})"
    if event.get("setup"):
        line += f", worktree setup `{one_line(event['setup'], 60)}`"
    if event.get("gate_base"):
        line += f"; on the base: {one_line(event['gate_base'], 100)}"
    failing = event.get("base_failing") or []
    if failing:
        line += f"; already failing there: {', '.join(failing[:5])}{' …' if len(failing) > 5 else ''}"
    return line


_PERSON_EVENTS = frozenset({"question_asked", "question_answered", "task_paused", "session_paused", "task_unpaused"})


def _person_event(row: TaskRow, kind: str, event: dict[str, Any]) -> None:
    """A task waiting for a person: a question, or a pause (its slot is another task's meanwhile)."""
    if kind == "question_asked":
        row.state, row.activity = "waiting for an answer", one_line(f"asks: {event.get('question')}", 120)
    elif kind in ("task_paused", "session_paused"):
        row.state = "paused"
        row.activity = "session stopped, its work kept" if kind == "session_paused" else "paused by a person"
    else:
        row.state, row.activity = "running", "answered" if kind == "question_answered" else "unpaused"
