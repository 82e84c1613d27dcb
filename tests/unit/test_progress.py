"""The live task board and the plain progress lines."""

from __future__ import annotations

import io

from orchestrator.progress import Progress, TaskBoard


def test_board_follows_a_task_through_its_life() -> None:
    board = TaskBoard()
    board.update({"event": "feature_start", "tasks": ["T1", "T2"]}, 0.0)
    board.update({"event": "initialize", "task": "T1"}, 1.0)
    board.update({"event": "player_start", "task": "T1", "turn": 1}, 1.5)
    board.update({"event": "session_end", "task": "T1", "role": "player", "turn": 1, "cost_usd": 0.25}, 3.0)
    board.update({"event": "retry", "task": "T1", "reason": "rate limited (429)"}, 3.5)
    assert board.rows["T1"]["status"] == "retrying: rate limited (429)"
    board.update({"event": "coach_validate", "task": "T1", "turn": 1}, 4.0)
    assert board.rows["T1"]["role"] == "coach" and board.rows["T1"]["status"] == "reviewing"
    board.update({"event": "session_end", "task": "T1", "role": "coach", "turn": 1, "cost_usd": 0.5}, 5.0)
    board.update({"event": "finalize", "task": "T1", "status": "approved", "reason": "ok"}, 6.0)
    assert board.rows["T1"]["cost_usd"] == 0.75 and board.rows["T1"]["status"] == "approved"
    assert board.rows["T2"]["status"] == "queued"
    assert board.render(10.0).row_count == 2


def test_plain_lines_when_not_a_terminal() -> None:
    out = io.StringIO()
    progress = Progress(stream=out)
    progress({"event": "retry", "task": "T1", "role": "player", "turn": 2, "reason": "overloaded (529)",
              "wait_s": 8, "attempt": 1})
    assert "T1 turn 2 player: overloaded (529), retrying in 8 s (attempt 1)" in out.getvalue()


def test_a_watcher_sees_what_the_coach_ran_and_why_it_decided() -> None:
    out = io.StringIO()
    progress = Progress(stream=out)
    progress({"event": "tool", "task": "T1", "role": "coach", "turn": 1, "tool": "Bash",
              "detail": "python -m pytest -q"})
    progress({"event": "coach_decision", "task": "T1", "turn": 1, "decision": "feedback",
              "rationale": "1 test fails: add() subtracts\nmore detail",
              "feedback_items": [{"file": "calc.py", "line": 3, "issue": "returns a - b"}]})
    text = out.getvalue()
    assert "T1 turn 1 coach → Bash: python -m pytest -q" in text
    assert "coach decision: feedback (1 test fails: add() subtracts)" in text
    assert "more detail" not in text and "- calc.py:3: returns a - b" in text


def test_the_board_shows_the_gate_and_a_usage_limit_pause() -> None:
    board = TaskBoard()
    board.update({"event": "feature_start", "tasks": ["T1"], "gate": "python -m pytest [x]",
                  "gate_source": "pytest configuration in pytest.ini"}, 0.0)
    board.update({"event": "usage_limit", "status": "paused until 14:05, usage limit (rate limited (429))"}, 1.0)
    caption = str(board.render(2.0).caption)
    assert "PAUSED UNTIL 14:05" in caption and "gate `python -m pytest \\[x]`" in caption
    board.update({"event": "usage_limit_over"}, 3.0)
    assert "PAUSED" not in str(board.render(4.0).caption)
