"""The live table and the final table fit the terminal: 80 columns and up, the columns that matter kept, cells cut
with intent, widths that don't jump, colour by state (none under NO_COLOR), a spinner, activity in words."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from rich.text import Text

from orchestrator.facts import TaskResult
from orchestrator.views.live_layout import SPINNER, cut_middle, layout, tool_words
from orchestrator.views.live_view import TaskBoard
from orchestrator.views.progress import render_table

COLOUR = re.compile(r"\x1b\[[0-9;]*3[0-7](;[0-9;]*)?m")


def plain(line: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", line)


def board_of(*task_ids: str) -> TaskBoard:
    board = TaskBoard()
    board.update({"event": "feature_start", "tasks": list(task_ids), "budget_usd": 5.0}, 0.0)
    return board


def shown(board: TaskBoard, now: float, width: int, colour: bool = False) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=colour, color_system="standard" if colour else None)
    console.print(board.render(now, console.width))
    return out.getvalue()


def running(board: TaskBoard, task_id: str, tool: str, detail: str = "") -> None:
    board.update({"event": "initialize", "task": task_id}, 1.0)
    board.update({"event": "player_start", "task": task_id, "turn": 3}, 1.0)
    board.update({"event": "tool", "task": task_id, "role": "player", "tool": tool, "detail": detail}, 2.0)


@pytest.mark.parametrize("width", [80, 100, 120])
def test_the_live_table_fits_the_terminal_keeping_what_matters(width: int) -> None:
    board = board_of("TASK-001", "TASK-002", "TASK-003")
    running(board, "TASK-001", "mcp__autobuild__report_progress")
    running(board, "TASK-002", "Bash", "pytest -q")
    board.update({"event": "finalize", "task": "TASK-003", "status": "approved-unverified",
                  "reason": "approved by the coach; no verify command could check it " * 3}, 3.0)
    text = shown(board, 4.0, width)
    lines = text.splitlines()
    assert all(len(line) <= width for line in lines), "\n".join(lines)
    header = next(line for line in lines if "Task" in line)
    assert all(name in header for name in ("State", "Turn", "Activity")), header
    assert "TASK-001" in text and "TASK-003" in text and "TAS…" not in text
    assert "reporting progress" in text and "running `pytest -q`" in text
    assert "✔ unverified" in text and "runn…" not in text
    if width >= 100:
        assert "Cost" in header and "Elapsed" in header


def test_widths_do_not_jump_between_redraws() -> None:
    board = board_of("TASK-001", "TASK-002")
    running(board, "TASK-001", "Bash", "ls")
    first = shown(board, 2.0, 80).splitlines()
    board.update({"event": "tool", "task": "TASK-001", "role": "player", "tool": "Bash",
                  "detail": "python -m pytest -q tests/test_a_very_long_name_indeed.py::test_something_long"}, 3.0)
    board.update({"event": "session_end", "task": "TASK-001", "cost_usd": 12.5}, 3.0)
    second = shown(board, 999.0, 80).splitlines()
    header = next(i for i, line in enumerate(first) if "Task" in line)
    assert first[header] == second[header]
    assert [len(line) for line in first[header:header + 3]] == [len(line) for line in second[header:header + 3]]
    assert "…" in second[header + 2], "the long command is cut at its end"


def test_long_ids_are_cut_in_the_middle_and_narrow_terminals_drop_cost_and_elapsed_first() -> None:
    assert cut_middle("TASK-2024-authentication-42", 16) == "TASK-20…ation-42"
    assert len(cut_middle("TASK-2024-authentication-42", 16)) == 16
    wide, narrow = layout(120, ["TASK-001"]), layout(60, ["TASK-001"])
    assert wide.cost and wide.elapsed and wide.width <= 120
    assert narrow.turn and narrow.state and not narrow.elapsed and narrow.width <= 60


def test_states_have_colours_and_running_work_a_spinner() -> None:
    board = board_of("A", "B", "C")
    running(board, "A", "Read", "calc/add.py")
    board.update({"event": "finalize", "task": "B", "status": "approved", "reason": "ok"}, 2.0)
    board.update({"event": "finalize", "task": "C", "status": "failed", "reason": "max turns"}, 2.0)
    text = shown(board, 2.0, 80, colour=True)
    rows = {plain(line).split()[0]: line for line in text.splitlines() if plain(line)[:2] in ("A ", "B ", "C ")}
    assert "\x1b[32m" in rows["B"] and "\x1b[31m" in rows["C"] and "\x1b[36m" in rows["A"], rows
    frames = {next(plain(line).split()[1] for line in shown(board, t, 80).splitlines() if line.startswith("A "))
              for t in (0.0, 0.1, 0.2)}
    assert len(frames) == 3 and frames <= set(SPINNER), frames


def test_no_colour_under_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    board = board_of("A", "B")
    board.update({"event": "finalize", "task": "B", "status": "failed", "reason": "max turns"}, 2.0)
    assert not COLOUR.search(shown(board, 2.0, 80, colour=True))
    out = io.StringIO()
    render_table({"B": TaskResult(status="failed", reason="x")}, ["B"], out, width=80, colour=True)
    assert not COLOUR.search(out.getvalue())


@pytest.mark.parametrize(("tool", "detail", "words"), [
    ("mcp__autobuild__report_progress", "", "reporting progress"),
    ("mcp__autobuild__record_decision", "", "recording its decision"),
    ("Bash", "pytest -q", "running `pytest -q`"),
    ("Read", "calc/add.py", "reading calc/add.py"),
    ("Edit", "calc/add.py", "editing calc/add.py"),
    ("TodoWrite", "", "planning its steps"),
    ("mcp__other__fetch_docs", "", "using fetch docs"),
])
def test_activity_in_words(tool: str, detail: str, words: str) -> None:
    assert tool_words(tool, detail) == words


def test_the_final_table_is_sized_to_the_terminal() -> None:
    results = {"TASK-001": TaskResult(status="approved-unverified", turns=2, cost_usd=0.1, duration_s=30.0,
                                      reason="approved by the coach; no verify command could check it " * 2),
               "TASK-002": TaskResult(status="failed", turns=10, cost_usd=1.25, duration_s=300.0,
                                      reason="max turns reached (10) without an approval")}
    for width in (80, 120):
        out = io.StringIO()
        render_table(results, ["TASK-001", "TASK-002", "TASK-003"], out, width=width)
        lines = out.getvalue().splitlines()
        assert lines and all(len(line) <= width for line in lines), "\n".join(lines)
        assert "TASK-003" in out.getvalue() and "not run" in out.getvalue() and "total" in out.getvalue()
    assert Text("✔ unverified").cell_len <= 12
