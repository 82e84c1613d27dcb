"""Ctrl+C reaches the agent's CLI too (the terminal signals its whole process group): the session it stops is the
person's doing. It is never retried, and the SDK's raw `Fatal error in message reader` line never reaches them.
(The whole run under a real terminal's Ctrl+C: tests/integration/test_ctrl_c_group.py.)"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ResultMessage

from agents.request import SessionRequest
from agents.retry import is_retryable
from agents.session import run_session
from agents.stream import Collector
from agents.types import AgentResult

# A stand-in for the CLI at the process boundary: it answers the SDK's initialize, then, at the prompt, dies of
# SIGINT before writing any result (as the real CLI does when the signal lands at the wrong moment).
DIES_OF_SIGINT = """\
import json, os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
for line in sys.stdin:
    message = json.loads(line)
    if message.get("type") == "control_request":
        reply = {"subtype": "success", "request_id": message["request_id"], "response": {}}
        print(json.dumps({"type": "control_response", "response": reply}), flush=True)
    elif message.get("type") == "user":
        os.kill(os.getpid(), signal.SIGINT)
"""


def test_a_cli_killed_by_ctrl_c_is_not_retried_and_its_raw_sdk_line_is_not_shown(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]) -> None:
    cli = tmp_path / "claude"
    cli.write_text(f"#!{sys.executable}\n{DIES_OF_SIGINT}")
    cli.chmod(0o755)
    events: list[dict[str, Any]] = []
    request = SessionRequest(role="player", task_id="TASK-001", turn=1, cwd=tmp_path, system_prompt="", prompt="go",
                             tools=[], cli_path=str(cli), retry_attempts=3, retry_max_wait_s=0.01,
                             on_event=events.append)
    result = asyncio.run(run_session(request))
    assert result.status == "interrupted", result.errors
    assert (result.attempts, [e for e in events if e["event"] == "retry"]) == (1, []), "no retry after Ctrl+C"
    assert "Fatal error in message reader" not in caplog.text + "".join(capfd.readouterr())


def test_a_turn_the_cli_aborted_on_ctrl_c_is_interrupted_not_a_cli_failure(tmp_path: Path) -> None:
    """The CLI that handles the signal ends its turn with an `aborted_*` result (measured on the bundled CLI)."""
    request = SessionRequest(role="player", task_id="T", turn=1, cwd=tmp_path, system_prompt="", prompt="", tools=[])
    collector = Collector(request, AgentResult(role="player", status="success"))
    collector.take(ResultMessage(subtype="error_during_execution", duration_ms=1, duration_api_ms=1, is_error=True,
                                 num_turns=3, session_id="s", terminal_reason="aborted_tools",
                                 errors=["[ede_diagnostic] result_type=user last_content_type=n/a"]))
    assert collector.result.status == "interrupted" and not is_retryable(collector.result)
