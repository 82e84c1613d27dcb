"""Where the Claude Code CLI is: the binary in the claude-agent-sdk wheel or the one configured, found without
importing the SDK (its import is most of a run's start-up: the sessions' module loads it)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from agents.errors import AgentSetupError


def bundled_cli() -> Path | None:
    """The claude binary shipped in the claude-agent-sdk wheel (its package found, not imported)."""
    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "_bundled" / "claude"
    return path if path.is_file() else None


def find_cli(cli_path: str | None) -> str:
    """The CLI binary sessions will run; AgentSetupError with what to do when it is missing."""
    bundled = None if cli_path else bundled_cli()
    cli = cli_path or (str(bundled) if bundled else None)
    if cli is None or not Path(cli).is_file() or not os.access(cli, os.X_OK):
        raise AgentSetupError(
            f"Claude Code CLI not found at {cli or 'the claude-agent-sdk bundle'}: reinstall claude-agent-sdk"
            " or point ORCHESTRATOR_CLI_PATH at an executable claude binary"
        )
    return cli
