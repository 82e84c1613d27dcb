"""The live task board and the plain progress lines."""

from __future__ import annotations

import contextvars
import io
from typing import Any

import pytest
from rich.console import Console

from orchestrator.cli.output import wrapped
from orchestrator.cli.read import feedback_line
from orchestrator.graph.events import ATTEMPT, EventLog
from orchestrator.views.live_view import TaskBoard
from orchestrator.views.progress import Progress


def _shown(board: TaskBoard, now: float) -> str:
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(board.render(now, 200))
    return out.getvalue()


def test_board_follows_a_task_through_its_life() -> None:
    board = TaskBoard()
    board.update({"event": "feature_start", "tasks": ["T1", "T2"], "budget_usd": 5.0}, 0.0)
    assert board.rows["T1"].state == "queued"
    board.update({"event": "task_ready", "task": "T1"}, 0.5)
    assert board.rows["T1"].state == "ready"
    board.update({"event": "initialize", "task": "T1"}, 1.0)
    board.update({"event": "player_start", "task": "T1", "turn": 1}, 1.5)
    board.update({"event": "tool", "task": "T1", "role": "player", "tool": "Bash", "detail": "pytest -q"}, 2.0)
    assert board.rows["T1"].activity == "running `pytest -q`" and "⠋ player" in _shown(board, 2.0)
    board.update({"event": "session_end", "task": "T1", "role": "player", "turn": 1, "cost_usd": 0.25}, 3.0)
    board.update({"event": "retry", "task": "T1", "reason": "rate limited (429)"}, 3.5)
    assert board.rows["T1"].activity == "retrying: rate limited (429)"
    board.update({"event": "coach_validate", "task": "T1", "turn": 1}, 4.0)
    assert board.rows["T1"].role == "coach" and board.rows["T1"].activity == "reviewing"
    board.update({"event": "question_asked", "task": "T1", "question": "Which DB?"}, 4.5)
    assert board.rows["T1"].state == "waiting for an answer" and "Which DB?" in _shown(board, 4.6)
    board.update({"event": "question_answered", "task": "T1"}, 4.8)
    board.update({"event": "session_end", "task": "T1", "role": "coach", "turn": 1, "cost_usd": 0.5}, 5.0)
    board.update({"event": "finalize", "task": "T1", "status": "approved", "reason": "ok"}, 6.0)
    row = board.rows["T1"]
    assert row.cost_usd == 0.75 and row.state == "approved"
    assert row.elapsed(100.0) == "5s", "elapsed stops when the task ends"
    shown = _shown(board, 100.0)
    assert "✔ approved" in shown and "queued" in shown
    assert "spent $0.7500 / $5.00 budget · 1/2 tasks done" in shown


def test_the_board_escapes_what_agents_and_plans_say() -> None:
    board = TaskBoard()
    board.update({"event": "feature_start", "tasks": ["T1"]}, 0.0)
    board.update({"event": "initialize", "task": "T1"}, 1.0)
    board.update({"event": "tool", "task": "T1", "role": "player", "tool": "Bash",
                  "detail": "echo \x1b[2J\x1b]0;pwned\x07 [bold red]x[/]"}, 2.0)
    shown = _shown(board, 3.0)
    assert "\x1b" not in shown and "\\x1b[2J" in shown and "[bold red]x[/]" in shown


def test_a_resumed_run_counts_what_was_spent_before() -> None:
    board = TaskBoard()
    board.update({"event": "resume", "spent_usd": 1.5}, 0.0)
    board.update({"event": "feature_start", "tasks": ["T1"], "budget_usd": None}, 0.0)
    board.update({"event": "session_end", "task": "T1", "cost_usd": 0.25}, 1.0)
    assert board.footer() == "spent $1.7500 (no budget cap) · 0/1 tasks done"
    board.update({"event": "task_error", "task": "T1", "reason": "CLI crashed"}, 2.0)
    assert board.footer() == "spent $1.7500 (no budget cap) · 1/1 tasks done (1 not approved)"


def test_plain_lines_when_not_a_terminal() -> None:
    out = io.StringIO()
    progress = Progress(stream=out)
    progress({"event": "retry", "task": "T1", "role": "player", "turn": 2, "reason": "overloaded (529)",
              "wait_s": 8, "attempt": 1})
    assert "T1 turn 2 player: overloaded (529), retrying in 8 s (attempt 1)" in out.getvalue()
    progress({"event": "tool", "task": "T1", "role": "player", "turn": 2, "tool": "Bash", "detail": "printf '\x1b[2J'"})
    assert "\x1b" not in out.getvalue() and "printf '\\x1b[2J'" in out.getvalue()


def test_a_watcher_sees_what_the_coach_ran_and_why_it_decided() -> None:
    out = io.StringIO()
    progress = Progress(stream=out)
    progress({"event": "tool", "task": "T1", "role": "coach", "turn": 1, "tool": "Bash",
              "detail": "python -m pytest -q"})
    progress({"event": "coach_decision", "task": "T1", "turn": 1, "decision": "feedback",
              "rationale": "1 test fails: add() subtracts\nmore detail",
              "feedback_items": [{"file": "calc.py", "line": 3, "issue": "returns a - b"}]})
    text = out.getvalue()
    assert "T1 turn 1 coach running `python -m pytest -q`" in text
    assert "coach decision: feedback (1 test fails: add() subtracts)" in text
    assert "more detail" not in text and "- calc.py:3: returns a - b" in text


def test_the_board_shows_the_gate_and_a_usage_limit_pause() -> None:
    board = TaskBoard()
    board.update({"event": "feature_start", "tasks": ["T1"], "gate": "python -m pytest [x]",
                  "gate_source": "pytest configuration in pytest.ini"}, 0.0)
    board.update({"event": "usage_limit", "status": "paused until 14:05, usage limit (rate limited (429))"}, 1.0)
    board.update({"event": "initialize", "task": "T1"}, 1.0)
    shown = _shown(board, 2.0)
    assert "PAUSED UNTIL 14:05" in shown and "gate `python -m pytest [x]`" in shown
    assert "‖ paused" in shown, "a running task shows the pause as its state"
    board.update({"event": "usage_limit_over"}, 3.0)
    assert "PAUSED" not in _shown(board, 4.0)


def test_the_board_shows_a_person_s_pause_of_a_task_until_it_is_unpaused() -> None:
    board = TaskBoard()
    board.update({"event": "feature_start", "tasks": ["T1", "T2"]}, 0.0)
    for task_id in ("T1", "T2"):
        board.update({"event": "initialize", "task": task_id}, 1.0)
    board.update({"event": "session_paused", "task": "T1", "turn": 1}, 2.0)
    board.update({"event": "task_paused", "task": "T2", "node": "coach"}, 2.0)
    rows = [line for line in _shown(board, 3.0).splitlines() if "T1" in line or "T2" in line]
    assert len(rows) == 2 and all("‖ paused" in row for row in rows), rows
    assert "its work kept" in rows[0] and "paused by a person" in rows[1]
    board.update({"event": "task_unpaused", "task": "T2"}, 4.0)
    assert "‖ paused" not in next(line for line in _shown(board, 5.0).splitlines() if "T2" in line)


@pytest.mark.parametrize("event", [
    {"event": "gate", "task": "TASK-001", "turn": None, "passed": True, "summary": "ok"},
    {"event": "tool", "task": "TASK-001", "role": "player", "tool": "Bash"},
    {"event": "player_start", "task": "TASK-001"},
    {"event": "session_end", "task": "TASK-001", "turn": None, "role": "coach", "status": "success"},
])
def test_an_event_outside_a_turn_says_no_turn_none(event: dict[str, Any]) -> None:
    line = Progress.describe(event)
    assert line is not None and "None" not in line and line.startswith("TASK-001")
    assert "turn 2" in str(Progress.describe({**event, "turn": 2}))


def test_piped_tool_lines_say_what_the_agent_does_not_our_tool_names() -> None:
    line = Progress.describe({"event": "tool", "task": "TASK-001", "turn": 1, "role": "player",
                              "tool": "mcp__autobuild__report_progress"})
    assert line is not None and "mcp__" not in line and line.startswith("TASK-001 turn 1 player "), line
    bash = Progress.describe({"event": "tool", "task": "TASK-001", "turn": 1, "role": "coach", "tool": "Bash",
                              "detail": "python -m pytest -q"})
    assert bash == "TASK-001 turn 1 coach running `python -m pytest -q`"


@pytest.mark.parametrize(("item", "line"), [
    ({"file": "calc/a.py", "line": 3, "issue": "off by one"}, "calc/a.py:3: off by one"),
    ({"file": "calc/a.py", "line": None, "issue": "missing"}, "calc/a.py: missing"),
    ({"file": "", "line": None, "issue": "no tests"}, "no tests"),
])
def test_show_names_a_feedback_items_place_only_when_it_has_one(item: dict[str, Any], line: str) -> None:
    assert feedback_line(item) == line


def test_lines_after_the_table_wrap_between_words_and_commands_paste_whole() -> None:
    comment = "  # TASK-002 failed at max turns: read its feedback and the gate's output, then run it again with more"
    command = "  autobuild resume FEAT-001 TASK-002 --repo /a/very/long/path/to/the/users/repository/that/goes/on/on"
    prose = "FEAT-001 already finished; TASK-002 waits for a person: see `autobuild show FEAT-001 TASK-002` first"
    text = wrapped("\n".join([comment, command, prose]), 80)
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines if not line.lstrip().startswith("autobuild ")), lines
    assert command in lines, "a command is never cut"
    assert [line.split()[0] for line in lines[:2]] == ["#", "#"], "a continued comment stays a comment"
    def words(found: list[str]) -> list[str]:
        return [word for word in " ".join(found).split() if word != "#"]

    assert words(lines) == words([comment, command, prose]), "no word broken or lost"


def test_a_command_an_attempt_runs_says_which_attempt(tmp_path: Any) -> None:
    """Three attempts' coaches each run the tests: each line names its attempt, as their session lines do."""
    written: list[dict[str, Any]] = []
    log = EventLog(tmp_path, "FEAT-001", written.append)

    def in_attempt(attempt: int) -> None:
        ATTEMPT.set(attempt)
        log.session_event({"event": "tool", "task": "T4", "turn": 1, "role": "coach", "tool": "Bash",
                           "detail": "python -m pytest -q"})

    contextvars.copy_context().run(in_attempt, 2)
    log.session_event({"event": "tool", "task": "T4", "turn": 1, "role": "coach", "tool": "Bash", "detail": "ls"})
    lines = [Progress.describe(record) for record in written]
    assert lines[0] is not None and lines[0].startswith("T4 a2 turn 1 coach")
    assert lines[1] is not None and lines[1].startswith("T4 turn 1 coach"), "a task's only loop: as it always was"


def test_a_note_reaching_the_player_and_a_cancel_are_said_in_the_run_s_lines() -> None:
    """The person who sent a note sees in the run's own output when the player got it."""
    got = Progress.describe({"event": "note_delivered", "task": "T1", "turn": 1, "note": 3, "again": False,
                             "text": "use the existing\nretry helper"})
    assert got == "T1 turn 1 player got note 3: use the existing retry helper"
    again = Progress.describe({"event": "note_delivered", "task": "T1", "turn": 2, "note": 3, "again": True,
                               "text": "x"})
    assert again == "T1 turn 2 player got again (its session died) note 3: x"
    assert Progress.describe({"event": "task_cancelled", "task": "T2", "source": "page"}) == (
        "T2 cancelled by a person (page)")
