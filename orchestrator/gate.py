"""The objective gate: a plan's `verify` command run by the orchestrator itself (never by an agent)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TypedDict

from orchestrator.processes import run_shell


class GateResult(TypedDict):
    """The orchestrator's own run of a verify command."""

    passed: bool
    command: str | None
    summary: str
    output: str


_NO_TESTS = re.compile(r"\bno tests ran\b|\bcollected 0 items\b|\bRan 0 tests\b", re.IGNORECASE)


async def run_verify(command: str | None, cwd: Path, timeout_s: float, env: dict[str, str]) -> GateResult:
    """Run `command` in `cwd`: passed only on exit 0 with tests actually run. A small dict for state/trace."""
    if not command:
        return GateResult(passed=True, command=None, summary="no verify command configured", output="")
    completed = await run_shell(command, cwd, timeout_s, env)
    output = completed.tail(30)
    passed = completed.ok and not _NO_TESTS.search(output)
    if completed.timed_out:
        summary = f"`{command}` timed out after {timeout_s:.0f}s"
    elif completed.ok and not passed:
        summary = f"`{command}` ran no tests"
    else:
        summary = f"`{command}` exited {completed.returncode}"
    return GateResult(passed=passed, command=command, summary=summary, output=output)
