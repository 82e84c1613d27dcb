"""A supervisor's note into a running session on the real CLI (issue 41): the PostToolUse hook asks for notes after
every tool call and the model reads one in its very next request, once, and the session's transcript has it once."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents import PlayerInput, SessionLimits, SessionSettings, TaskBrief, run_player
from agents.testing.scripted_model import ScriptedModel

pytestmark = [pytest.mark.cli, pytest.mark.heavy]

NOTE = "A note from the person supervising this run: use the existing retry helper"


async def test_a_note_reaches_the_model_right_after_the_next_tool_call_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        model_factory: Callable[[dict[str, Any]], ScriptedModel]) -> None:
    steps = [{"bash": "echo one"}, {"bash": "echo two"}, {"bash": "echo three"}, {"text": "Done."}]
    model = model_factory({"sessions": [{"role": "player", "task": "T-1", "steps": steps}]})
    monkeypatch.setenv("ANTHROPIC_BASE_URL", model.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-notes")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    worktree, transcript = tmp_path / "wt", tmp_path / "transcript.jsonl"
    worktree.mkdir()
    asked: list[int] = []

    async def pending() -> list[str]:  # the note is sent while the first command runs: handed once, after it
        asked.append(len(model.requests))
        return [NOTE] if len(asked) == 1 else []

    brief = TaskBrief("Feature", "T-1", "Task", ["do it"], [], None)
    settings = SessionSettings(model="claude-sonnet-4-5", limits=SessionLimits(session_timeout_s=60.0,
                                                                            idle_timeout_s=30.0))
    result = await run_player(PlayerInput(brief, 1, 10, worktree, transcript_path=transcript,
                                          pending_notes=pending), settings)
    assert result.status == "success", result.errors

    requests = [r for r in model.requests if r.role == "player"]
    assert len(asked) >= 3, "asked after every tool call"
    carrying = [r.step for r in requests if "use the existing retry helper" in r.new_input]
    assert carrying == [1], f"seen in the request right after the first tool call only: {carrying}"
    assert NOTE not in requests[0].prompt
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert [line["notes"] for line in lines if line["type"] == "SupervisorNotes"] == [[NOTE]]
