"""Progress output: one line per event (or JSON lines with --json) and the final table."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table

from orchestrator import jsonout
from orchestrator.graph.state import TaskResult

_MARK = {"approved": "✔", "approved-unverified": "✔?", "error": "!", "failed": "✘", "blocked": "⛔", "skipped": "↷",
         "conflict": "⚠", "aborted": "✘"}


class TaskBoard:
    """The live table's model: one row per task, updated from events (pure, so it is unit-tested)."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}
        self.gate = ""
        self.paused = ""

    def update(self, event: dict[str, Any], now: float) -> None:
        kind = event.get("event")
        if kind == "feature_start":
            for task_id in event.get("tasks") or []:
                self._row(task_id)
            self.gate = _gate_line(event)
            return
        if kind in ("usage_limit", "usage_limit_over"):
            self.paused = str(event.get("status") or "paused, usage limit") if kind == "usage_limit" else ""
            return
        task_id = event.get("task")
        if not task_id:
            return
        row = self._row(str(task_id))
        if kind == "task_ready":
            row["status"] = "starting"
        elif kind == "task_error":
            row.update(status=f"error: {event.get('reason')}", role="")
        elif kind == "initialize":
            row.update(started=now, status="starting")
        elif kind in ("player_start", "coach_validate"):
            role = "player" if kind == "player_start" else "coach"
            row.update(role=role, turn=event.get("turn", row["turn"]),
                       status="working" if role == "player" else "reviewing")
        elif kind == "session_end":
            row["cost_usd"] += float(event.get("cost_usd") or 0.0)
        elif kind == "retry":
            row["status"] = f"retrying: {event.get('reason')}"
        elif kind in ("finalize", "skipped"):
            row.update(status=event.get("status", "skipped"), role="")
        elif kind == "merge":
            row["status"] = "merged" if event.get("merged") else "not merged"

    def _row(self, task_id: str) -> dict[str, Any]:
        return self.rows.setdefault(task_id, {"role": "", "turn": 0, "cost_usd": 0.0, "started": None,
                                              "status": "queued"})

    def render(self, now: float) -> Table:
        caption = "\n".join(line for line in (self.paused.upper(), self.gate) if line)
        table = Table(title="AutoBuild", caption=escape(caption) or None, expand=False)
        for column in ("Task", "Role", "Turn", "Cost", "Elapsed", "Status"):
            table.add_column(column)
        for task_id, row in self.rows.items():
            elapsed = f"{now - row['started']:.0f}s" if row["started"] else "-"
            table.add_row(task_id, row["role"], str(row["turn"] or "-"),
                          f"${row['cost_usd']:.4f}", elapsed, row["status"])
        return table


class Progress:
    """Receives events from nodes and agent sessions and shows them: a live table on a terminal, plain
    lines otherwise, JSON lines with --json."""

    def __init__(self, json_mode: bool = False, stream: TextIO | None = None, live: bool = False) -> None:
        self.json_mode = json_mode
        self.stream = stream or sys.stdout
        self.started = time.monotonic()
        self.board = TaskBoard()
        self._live: Live | None = None
        if live and not json_mode:
            self._live = Live(self.board.render(0.0), console=Console(file=self.stream), refresh_per_second=4,
                              get_renderable=lambda: self.board.render(time.monotonic()))

    def __enter__(self) -> Progress:
        if self._live is not None:
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.stop()

    def __call__(self, event: dict[str, Any]) -> None:
        if self.json_mode:
            print(jsonout.dumps(event), file=self.stream, flush=True)
            return
        self.board.update(event, time.monotonic())
        line = self.describe(event)
        if not line:
            return
        text = f"{time.monotonic() - self.started:7.1f}s  {line}"
        if self._live is not None:
            if event.get("event") != "tool":  # the table shows activity; keep the log above it readable
                self._live.console.print(text, highlight=False, markup=False)
        else:
            print(text, file=self.stream, flush=True)

    @staticmethod
    def describe(event: dict[str, Any]) -> str | None:
        formatter = _FORMATS.get(str(event.get("event")))
        return formatter(event) if formatter else None


def _who(e: dict[str, Any]) -> str:
    return f"{e.get('task', '')} turn {e.get('turn')} {e.get('role', '')}".rstrip()


def _decision(e: dict[str, Any]) -> str:
    text = f"{e['task']} turn {e['turn']} coach decision: {e['decision']}"
    rationale = str(e.get("rationale") or "").strip()
    if rationale:
        first_line = rationale.splitlines()[0]
        text += f" ({first_line[:117] + '…' if len(first_line) > 120 else first_line})"
    for item in (e.get("feedback_items") or [])[:8]:
        where = f"{item.get('file') or ''}{':' + str(item['line']) if item.get('line') else ''}"
        issue = str(item.get("issue") or "").splitlines()[0] if item.get("issue") else ""
        text += f"\n{'':11}- {where + ': ' if where else ''}{issue}"
    return text


def _gate_line(event: dict[str, Any]) -> str:
    if not event.get("gate"):
        return f"no gate ({event.get('gate_source')}): approvals will be reported as unverified"
    line = f"gate `{event['gate']}` ({event.get('gate_source')})"
    if event.get("setup"):
        line += f", worktree setup `{event['setup']}`"
    if event.get("gate_base"):
        line += f"; on the base: {event['gate_base']}"
    failing = event.get("base_failing") or []
    if failing:
        line += f"; already failing there: {', '.join(failing[:5])}{' …' if len(failing) > 5 else ''}"
    return line


_FORMATS: dict[str, Callable[[dict[str, Any]], str]] = {
    "feature_start": lambda e: f"feature branch {e['branch']} at {str(e['sha'])[:10]}; {_gate_line(e)}",
    "resume": lambda e: f"resuming {e['thread']} at {', '.join(e['next']) or 'start'}"
    f" (${float(e.get('spent_usd') or 0):.4f} spent so far)",
    "task_ready": lambda e: f"{e['task']} ready: its dependencies are merged",
    "task_error": lambda e: f"{e['task']} ERROR (resumable): {e['reason']}",
    "initialize": lambda e: f"{e['task']} worktree ready at {e['worktree']}",
    "player_start": lambda e: f"{e['task']} turn {e['turn']} player working",
    "coach_validate": lambda e: f"{e['task']} turn {e['turn']} coach reviewing",
    "tool": lambda e: f"{_who(e)} → {e['tool']}{': ' + str(e['detail']) if e.get('detail') else ''}",
    "retry": lambda e: f"{_who(e)}: {e['reason']}, retrying in {float(e['wait_s']):.0f} s (attempt {e['attempt']}"
    f"{', ' + str(e['how']) if e.get('how') else ''})",
    "session_end": lambda e: f"{_who(e)} session {e['status']} (${float(e.get('cost_usd') or 0):.4f})",
    "player_report": lambda e: f"{e['task']} turn {e['turn']} player reported: {len(e.get('files') or [])} file(s)",
    "gate": lambda e: f"{e['task']} turn {e['turn']} verify {'passed' if e['passed'] else 'FAILED'}: {e['summary']}",
    "coach_decision": _decision,
    "contract_violation": lambda e: f"{e['task']} contract violation: {e['detail']}",
    "usage_limit": lambda e: f"{e.get('status') or 'paused'}: no session starts until then",
    "usage_limit_over": lambda e: "usage limit over: sessions go on",
    "command_hung": lambda e: f"{e['task']} turn {e['turn']} {e['role']} stopped by the session timeout;"
    f" still running: {'; '.join(e['commands'])} (not retried; the next turn is told)",
    "blocker": lambda e: f"{e['task']} blocker {e['hash']}: {e['description']}",
    "finalize": lambda e: f"{e['task']} {_MARK.get(e['status'], '•')} {e['status']}: {e['reason']}",
    "integration_gate": lambda e: f"{e['task']} integration gate {'passed' if e['passed'] else 'FAILED'}:"
    f" {e['summary']}",
    "merge": lambda e: f"{e['task']} merged" if e["merged"] else f"{e['task']} NOT merged: {e['reason']}",
    "skipped": lambda e: f"{e['task']} skipped: {e['reason']}",
    "feature_end": lambda e: f"feature report: {e['report']}",
    "plan_invalid": lambda e: f"planner attempt {e['attempt']} rejected: {e['error']}",
    "plan_warning": lambda e: f"warning: {e['error']}",
    "branch_set_aside": lambda e: f"--fresh: previous {e['branch']} kept as {e['backup']}",
    "question_asked": lambda e: f"{e['task']} asks {e['question_id']}: {e['question']}",
    "question_answered": lambda e: f"{e['task']} got an answer to {e['question_id']}: {e['answer']}",
    "question_aborted": lambda e: f"{e['task']} question {e['question_id']} has no one to answer it (autonomous)",
    "interrupt": lambda e: "second interrupt: stopping now" if e.get("forced") else
    f"interrupt: finishing running steps for up to {e.get('grace_s')} s, then stopping (Ctrl+C again to stop now)",
}


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
