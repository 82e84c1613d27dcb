"""Progress output: one line per event (or JSON lines with --json) and the final table."""

from __future__ import annotations

import json
import sys
import time
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table

from orchestrator.state import TaskResult

_MARK = {"approved": "✔", "failed": "✘", "blocked": "⛔", "skipped": "↷", "conflict": "⚠", "aborted": "✘"}


class Progress:
    """Receives events from nodes and agent sessions and prints them as they happen."""

    def __init__(self, json_mode: bool = False, stream: TextIO | None = None) -> None:
        self.json_mode = json_mode
        self.stream = stream or sys.stdout
        self.started = time.monotonic()

    def __call__(self, event: dict[str, Any]) -> None:
        if self.json_mode:
            print(json.dumps({"t": round(time.monotonic() - self.started, 3), **event}, default=str),
                  file=self.stream, flush=True)
            return
        line = self.describe(event)
        if line:
            print(f"{time.monotonic() - self.started:7.1f}s  {line}", file=self.stream, flush=True)

    @staticmethod
    def describe(event: dict[str, Any]) -> str | None:
        kind = event.get("event")
        task = event.get("task", "")
        turn = event.get("turn")
        who = f"{task} turn {turn} {event.get('role', '')}".rstrip()
        text: str | None
        if kind == "feature_start":
            text = f"feature branch {event['branch']} at {str(event['sha'])[:10]}"
        elif kind == "resume":
            text = f"resuming {event['thread']} at {', '.join(event['next']) or 'start'}"
        elif kind == "group_start":
            text = f"── group {event['group']}: {', '.join(event['tasks'])}"
        elif kind == "initialize":
            text = f"{task} worktree ready at {event['worktree']}"
        elif kind == "player_start":
            text = f"{task} turn {turn} player working"
        elif kind == "coach_validate":
            text = f"{task} turn {turn} coach reviewing"
        elif kind == "tool":
            text = f"{who} → {event['tool']}"
        elif kind == "retry":
            text = f"{who}: {event['reason']}, retrying in {float(event['wait_s']):.0f} s (attempt {event['attempt']})"
        elif kind == "session_end":
            text = f"{who} session {event['status']} (${float(event.get('cost_usd') or 0):.4f})"
        elif kind == "player_report":
            text = f"{task} turn {turn} player reported: {len(event.get('files') or [])} file(s) changed"
        elif kind == "gate":
            verdict = "passed" if event["passed"] else "FAILED"
            text = f"{task} turn {turn} verify {verdict}: {event['summary']}"
        elif kind == "coach_decision":
            items = event.get("feedback_items") or []
            text = f"{task} turn {turn} coach decision: {event['decision']}"
            for item in items[:8]:
                where = f"{item.get('file') or ''}{':' + str(item['line']) if item.get('line') else ''}"
                issue = str(item.get("issue", "")).splitlines()[0] if item.get("issue") else ""
                text += f"\n{'':11}- {where + ': ' if where else ''}{issue}"
        elif kind == "contract_violation":
            text = f"{task} contract violation: {event['detail']}"
        elif kind == "blocker":
            text = f"{task} blocker {event['hash']}: {event['description']}"
        elif kind == "finalize":
            text = f"{task} {_MARK.get(event['status'], '•')} {event['status']}: {event['reason']}"
        elif kind == "merge":
            text = f"{task} merged" if event["merged"] else f"{task} NOT merged: {event['reason']}"
        elif kind == "skipped":
            text = f"{task} skipped: {event['reason']}"
        elif kind == "feature_end":
            text = f"feature report: {event['report']}"
        elif kind == "branch_set_aside":
            text = f"--fresh: previous {event['branch']} kept as {event['backup']}"
        else:
            text = None
        return text


def render_table(results: dict[str, TaskResult], order: list[str], stream: TextIO | None = None) -> None:
    """The final table: task, status, turns, cost, duration."""
    table = Table(title="AutoBuild result", show_lines=False)
    for column in ("Task", "Status", "Turns", "Cost", "Duration", "Reason"):
        table.add_column(column, overflow="fold")
    total = 0.0
    for task_id in order:
        result = results.get(task_id, {})
        status = str(result.get("status", "not run"))
        cost = float(result.get("cost_usd", 0.0))
        total += cost
        table.add_row(
            task_id,
            f"{_MARK.get(status, '•')} {status}",
            str(result.get("turns", 0)),
            f"${cost:.4f}",
            f"{float(result.get('duration_s', 0.0)):.1f}s",
            str(result.get("reason", ""))[:80],
        )
    table.add_row("total", "", "", f"${total:.4f}", "", "")
    Console(file=stream or sys.stdout, width=120, highlight=False).print(table)
