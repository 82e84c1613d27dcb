"""Progress output: one line per event (or JSON lines with --json) and the final table."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Collection
from typing import Any, TextIO

from rich import box
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from orchestrator import jsonout
from orchestrator.facts import TaskResult
from orchestrator.text import one_line, visible
from orchestrator.views.attempt_lines import FORMATS as ATTEMPT_FORMATS
from orchestrator.views.live_layout import cut_middle, elapsed_text, state_cell, tool_words
from orchestrator.views.live_view import MARK, TaskBoard, gate_line


class Progress:
    """Receives events from nodes and agent sessions and shows them: a live table on a terminal, plain
    lines otherwise, JSON lines with --json."""

    def __init__(self, json_mode: bool = False, stream: TextIO | None = None, live: bool = False) -> None:
        self.json_mode = json_mode
        self.stream = stream or sys.stdout
        self.started = time.monotonic()
        self.board = TaskBoard()
        self._live: Live | None = None
        self._lock = threading.Lock()
        self._held: list[str] | None = None
        """While a person answers a question: the lines that wait to be shown (None: not held)."""
        self._prompt: list[str] = []
        """A question being answered inside the live view: its lines under the table, the typed text last."""
        if live and not json_mode:
            self._live = self._new_live(Console(file=self.stream))  # the terminal's width; NO_COLOR: no colour

    def _new_live(self, console: Console) -> Live:
        return Live(self.board.render(0.0, console.width), console=console, refresh_per_second=8,
                    get_renderable=lambda: self._frame(console.width))

    def _frame(self, width: int) -> RenderableType:
        table = self.board.render(time.monotonic(), width)
        prompt = self._prompt
        return Group(table, Text("\n".join(["", *prompt]))) if prompt else table

    @property
    def prompts_live(self) -> bool:
        """A question can be answered inside the live view (a live table on a terminal the person types in)."""
        return self._live is not None and sys.stdin.isatty()

    def prompt(self, lines: list[str]) -> None:
        """Show a question's lines under the table (the last one: the prompt and what was typed), redrawn as the
        table is; empty: the question is gone."""
        self._prompt = [visible(line) for line in lines]
        if self._live is not None:
            self._live.refresh()

    def asked(self, lines: list[str]) -> None:
        """The question answered: its lines move above the table, where the run's lines are, and stay."""
        with self._lock:
            self._prompt = []
            for line in lines:
                self._show(visible(line))

    def __enter__(self) -> Progress:
        if self._live is not None:
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            if self._held is not None:  # the run ended (Ctrl+C, say) while a question was being answered
                waiting, self._held = self._held, None
                for text in waiting:
                    self._show(text)
            elif self._live is not None:
                self._live.stop()

    def hold(self) -> None:
        """Stop drawing (a person is typing an answer below the table): lines wait until release()."""
        with self._lock:
            if self._held is None:
                self._held = []
                if self._live is not None:
                    self._live.stop()

    def release(self) -> None:
        """Show the lines that waited, and draw the table again."""
        with self._lock:
            waiting, self._held = self._held or [], None
            for text in waiting:
                self._show(text)
            if self._live is not None:
                # A new Live: a restarted one would move up over its last frame's height, over the question
                # and the answer printed below that frame.
                self._live = self._new_live(self._live.console)
                self._live.start()

    def __call__(self, event: dict[str, Any]) -> None:
        if self.json_mode:
            self._write(jsonout.dumps(event))
            return
        self.board.update(event, time.monotonic())
        line = self.describe(event)
        if not line:
            return
        # Agent text and tool arguments may carry terminal escapes: shown visibly, never interpreted.
        text = f"{time.monotonic() - self.started:7.1f}s  {visible(line)}"
        if self._live is not None and event.get("event") == "tool":
            return  # the table shows activity; keep the log above it readable
        with self._lock:
            if self._held is not None:
                self._held.append(text)
            else:
                self._show(text)

    def _show(self, text: str) -> None:
        if self._live is not None:
            self._live.console.print(text, highlight=False, markup=False)
        else:
            self._write(text)

    def _write(self, line: str) -> None:
        """One line on the stream this view was given (the command line's stdout by default)."""
        self.stream.write(line + "\n")
        self.stream.flush()

    @staticmethod
    def describe(event: dict[str, Any]) -> str | None:
        formatter = _FORMATS.get(str(event.get("event")))
        return formatter(event) if formatter else None


def _at(e: dict[str, Any]) -> str:
    """The task and its turn (no `turn None` for an event outside a turn: the merge queue's, a setup's)."""
    # One of a task's several attempts (a `retry`'s `attempt` is the session's own retry count).
    turn, attempt = e.get("turn"), f" a{e['attempt']}" if e.get("attempt") and e.get("event") != "retry" else ""
    return f"{e.get('task') or ''}{attempt} turn {turn}" if turn is not None else f"{e.get('task') or ''}{attempt}"


def _who(e: dict[str, Any]) -> str:
    return f"{_at(e)} {e.get('role') or ''}".strip()


def _decision(e: dict[str, Any]) -> str:
    text = f"{_at(e)} coach decision: {e['decision']}"
    rationale = str(e.get("rationale") or "").strip()
    if rationale:
        first_line = rationale.splitlines()[0]
        text += f" ({first_line[:117] + '…' if len(first_line) > 120 else first_line})"
    for item in (e.get("feedback_items") or [])[:8]:
        where = f"{item.get('file') or ''}{':' + str(item['line']) if item.get('line') else ''}"
        issue = str(item.get("issue") or "").splitlines()[0] if item.get("issue") else ""
        text += f"\n{'':11}- {where + ': ' if where else ''}{issue}"
    return text


def _resumed(e: dict[str, Any]) -> str:
    """A run that continues (at its next nodes), runs tasks again, or starts beside earlier runs of the feature."""
    if e.get("rerun"):
        what = "running again " + ", ".join(f"{task} ({why})" for task, why in e["rerun"].items())
    elif e.get("next"):
        what = f"resuming {e['thread']} at {', '.join(e['next'])}"
    else:
        what = f"starting {e['thread']}"
    return f"{what} (${float(e.get('spent_usd') or 0):.4f} spent so far on {e.get('feature') or 'the feature'})"


_FORMATS: dict[str, Callable[[dict[str, Any]], str]] = {
    "feature_start": lambda e: f"feature branch {e['branch']} at {str(e['sha'])[:10]}; {gate_line(e)}",
    "resume": _resumed,
    "task_ready": lambda e: f"{e['task']} ready: its dependencies are merged",
    "task_error": lambda e: f"{e['task']} ERROR (resumable): {e['reason']}",
    "initialize": lambda e: f"{e['task']} worktree ready at {e['worktree']}",
    "player_start": lambda e: f"{_at(e)} player working",
    "coach_validate": lambda e: f"{_at(e)} coach reviewing",
    "tool": lambda e: f"{_who(e)} {tool_words(str(e['tool']), str(e.get('detail') or ''))}",
    "retry": lambda e: f"{_who(e)}: {e['reason']}, retrying in {float(e['wait_s']):.0f} s (attempt {e['attempt']}"
    f"{', ' + str(e['how']) if e.get('how') else ''})",
    "session_end": lambda e: f"{_who(e)} session {e['status']} (${float(e.get('cost_usd') or 0):.4f})",
    "player_report": lambda e: f"{_at(e)} player reported: {len(e.get('files') or [])} file(s)",
    "gate": lambda e: f"{_at(e)} verify {'passed' if e['passed'] else 'FAILED'}: {e['summary']}",
    "coach_decision": _decision,
    "contract_violation": lambda e: f"{e['task']} contract violation: {e['detail']}",
    "usage_limit": lambda e: f"{e.get('status') or 'paused'}: no session starts until then",
    "usage_pause_yield": lambda e: f"{e.get('status') or 'paused'}: the run ends here, re-queued after the pause",
    "usage_limit_over": lambda e: "usage limit over: sessions go on",
    "command_hung": lambda e: f"{_at(e)} {e['role']} stopped by the session timeout;"
    f" still running: {'; '.join(e['commands'])} (not retried; the next turn is told)",
    "blocker": lambda e: f"{e['task']} blocker {e['hash']}: {e['description']}",
    "finalize": lambda e: f"{e['task']} {MARK.get(e['status'], '•')} {e['status']}: {e['reason']}",
    "integration_gate": lambda e: f"{e['task']} integration gate {'passed' if e['passed'] else 'FAILED'}:"
    f" {e['summary']}",
    "merge": lambda e: f"{e['task']} merged" if e["merged"] else f"{e['task']} NOT merged: {e['reason']}",
    "landing": lambda e: f"{e['task']} landing: {e['reason']}",
    "skipped": lambda e: f"{e['task']} skipped: {e['reason']}",
    "user_state_changed": lambda e: f"{e.get('task') or 'run'}: your repository changed during {e['during']} (yours:"
    f" kept, not reverted): {'; '.join(e['changes'])}",
    "repo_tampering": lambda e: f"{_at(e)} {e['role']}: your repository changed during an"
    f" unsandboxed session (the task fails, nothing reverted): {'; '.join(e['changes'])}",
    "sandbox_refused": lambda e: f"{_who(e)}: the sandbox refused {'; '.join(e['refused'])}",
    "sandbox_unavailable": lambda e: f"warning: no sandbox: {e['detail']}",
    "replan_start": lambda e: f"{e['task']} goes to the planner to be split ({e['reason']})",
    "replan": lambda e: f"{e['task']} replaced by {', '.join(e['tasks'])} (replan ${float(e['cost_usd']):.4f})",
    "replan_refused": lambda e: f"{e['task']} not replaced: {e['reason']}",
    "feature_end": lambda e: f"feature report: {e['report']}",
    "plan_invalid": lambda e: f"planner attempt {e['attempt']} rejected: {e['error']}",
    "plan_warning": lambda e: f"warning: {e['error']}",
    "branch_set_aside": lambda e: f"--fresh: previous {e['branch']} kept as {e['backup']}",
    "question_asked": lambda e: f"{e['task']} asks {e['question_id']}: {e['question']}",
    "question_answered": lambda e: f"{e['task']} got an answer to {e['question_id']}: {e['answer']}",
    "question_aborted": lambda e: f"{e['task']} question {e['question_id']} has no one to answer it (autonomous)",
    "note_delivered": lambda e: f"{_at(e)} player {'got again (its session died)' if e.get('again') else 'got'}"
    f" note {e['note']}: {one_line(' '.join(str(e.get('text') or '').split()), 100)}",
    "task_cancelled": lambda e: f"{e['task']} cancelled by a person ({e.get('source') or 'cli'})",
    "pause_dropped": lambda e: f"{e['task']} ended {e.get('status')} before its pause took effect (no step was"
    " left to pause at): the pause is dropped",
    "interrupt": lambda e: "second interrupt: stopping now" if e.get("forced") else
    f"interrupt: finishing running steps for up to {e.get('grace_s')} s, then stopping (Ctrl+C again to stop now)",
    **ATTEMPT_FORMATS,
}


def render_table(results: dict[str, TaskResult], order: list[str], stream: TextIO | None = None, *,
                 width: int | None = None, colour: bool | None = None, spent: dict[str, float] | None = None,
                 paused: Collection[str] = ()) -> None:
    """The final table: task, status, turns, cost, duration, reason; as wide as the terminal (a pipe or a file
    gets COLUMNS, else 120), the reason wrapped inside its column. `colour` forces colour (NO_COLOR still wins).
    `spent`: each task's cost over all its attempts (as `status` counts it), else the result's own. `paused`: the
    tasks a person paused in place (no result of this run: shown paused, as the live table does, not `not run`)."""
    console = Console(file=stream or sys.stdout, highlight=False, width=width, force_terminal=colour)
    if width is None and not console.is_terminal:
        console.width = int(os.environ.get("COLUMNS") or 0) or 120
    table = Table(title="AutoBuild result", box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for column in ("Task", "Status", "Turns", "Cost", "Duration"):
        table.add_column(column, no_wrap=True, justify="right" if column in ("Turns", "Cost", "Duration") else "left")
    table.add_column("Reason", overflow="fold", min_width=12)
    total = 0.0
    for task_id in order:
        result = results.get(task_id, {})
        status = "paused" if task_id in paused else str(result.get("status", "not run"))
        reason = "paused by a person: `autobuild unpause` lets it go on" if task_id in paused else result.get("reason")
        cost = float((spent or {}).get(task_id, result.get("cost_usd", 0.0)))
        total += cost
        # Reasons hold agent text: shown visibly, never as markup.
        table.add_row(Text(cut_middle(visible(task_id), 16)), state_cell(status, "", 0.0), str(result.get("turns", 0)),
                      f"${cost:.4f}", elapsed_text(float(result.get("duration_s", 0.0))),
                      Text(one_line(reason or "", 160)), end_section=task_id == order[-1])
    table.add_row("total", "", "", f"${total:.4f}", "", "")
    console.print()
    console.print(table)
