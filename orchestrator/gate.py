"""The objective gate: a plan's `verify` command run by the orchestrator itself (never by an agent)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from orchestrator.processes import run_shell

_NO_TESTS = re.compile(r"\bno tests ran\b|\bcollected 0 items\b|\bRan 0 tests\b", re.IGNORECASE)


async def run_verify(command: str | None, cwd: Path, timeout_s: float, env: dict[str, str]) -> dict[str, Any]:
    """Run `command` in `cwd`: passed only on exit 0 with tests actually run. A small dict for state/trace."""
    if not command:
        return {"passed": True, "command": None, "summary": "no verify command configured", "output": ""}
    completed = await run_shell(command, cwd, timeout_s, env)
    output = completed.tail(30)
    passed = completed.ok and not _NO_TESTS.search(output)
    if completed.timed_out:
        summary = f"`{command}` timed out after {timeout_s:.0f}s"
    elif completed.ok and not passed:
        summary = f"`{command}` ran no tests"
    else:
        summary = f"`{command}` exited {completed.returncode}"
    return {"passed": passed, "command": command, "summary": summary, "output": output}
