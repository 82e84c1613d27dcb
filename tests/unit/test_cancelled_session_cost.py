"""A session cancelled mid-way (policy `first` cancels a task's other attempts, issue 40) still says what it spent:
it is interrupted, the CLI's result at the interrupt (`error_during_execution` with its `total_cost_usd`, as the
bundled CLI sends ~0.15 s after an interrupt) is read, and the caller's meter gets its cost though no result is
returned. The CLI is a stand-in at the process boundary."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agents.request import SessionRequest
from agents.session import run_session
from agents.types import UsageMeter

# Answers the SDK's control requests; at the prompt, starts a tool call and waits; at the interrupt, ends the turn
# with the result the real CLI sends then (what the session spent so far).
WAITS_THEN_INTERRUPTED = """\
import json, sys
def say(message):
    print(json.dumps(message), flush=True)
for line in sys.stdin:
    message = json.loads(line)
    if message.get("type") == "control_request":
        say({"type": "control_response", "response": {"subtype": "success", "request_id": message["request_id"],
                                                       "response": {}}})
        if message["request"].get("subtype") == "interrupt":
            open(sys.argv[0] + ".interrupted", "w").close()
            say({"type": "result", "subtype": "error_during_execution", "duration_ms": 9, "duration_api_ms": 5,
                 "is_error": True, "num_turns": 2, "session_id": "s-1", "total_cost_usd": 0.0123,
                 "usage": {"input_tokens": 900, "output_tokens": 40}, "terminal_reason": "aborted_tools"})
    elif message.get("type") == "user":
        say({"type": "assistant", "session_id": "s-1", "message": {
            "id": "m-1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": "t-1", "name": "Bash", "input": {"command": "pytest -q"}}],
            "usage": {"input_tokens": 900, "output_tokens": 40}}})
"""


async def test_a_cancelled_session_s_usage_so_far_reaches_the_meter(tmp_path: Path) -> None:
    cli = tmp_path / "claude"
    cli.write_text(f"#!{sys.executable}\n{WAITS_THEN_INTERRUPTED}")
    cli.chmod(0o755)
    events: list[dict[str, Any]] = []
    working = asyncio.Event()

    def heard(event: dict[str, Any]) -> None:
        events.append(event)
        if event["event"] == "tool":
            working.set()

    meter = UsageMeter()
    request = SessionRequest(role="player", task_id="TASK-001", turn=1, cwd=tmp_path, system_prompt="", prompt="go",
                             tools=[], cli_path=str(cli), on_event=heard, meter=meter,
                             transcript_path=tmp_path / "runs" / "turn-1-player.jsonl")
    session = asyncio.ensure_future(run_session(request))
    await asyncio.wait_for(working.wait(), 30)
    session.cancel()
    with pytest.raises(asyncio.CancelledError):
        await session
    assert Path(f"{cli}.interrupted").exists(), "the session was interrupted, not only closed"
    assert (meter.cost_usd, meter.sessions) == (0.0123, 1)
    assert [e["cost_usd"] for e in events if e["event"] == "session_end"] == [0.0123]
    lines = [json.loads(line) for line in request.transcript_path.read_text().splitlines()]  # type: ignore[union-attr]
    assert lines[-1]["type"] == "ResultMessage" and lines[-1]["total_cost_usd"] == 0.0123
