"""Where the Claude Code CLI is: the binary in the claude-agent-sdk wheel or the one configured, found without
importing the SDK (its import is most of a run's start-up: the sessions' module loads it), and the wrapper that
starts it."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shlex
import shutil
import stat
import tempfile
import uuid
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


def cli_wrapper(cli: str) -> str:
    """A wrapper that runs the CLI with a parent-death signal, so it dies with a SIGKILLed orchestrator."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return cli
    folder = Path(tempfile.gettempdir()) / f"autobuild-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    # Sessions run the script kept here: in a shared /tmp the folder must be ours alone (another user could have
    # made it first, or made it a link), or they could swap the script and run as us.
    found = folder.lstat()
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
        raise AgentSetupError(
            f"{folder} is not a private folder of yours (a link, another user's, or open to others), and AutoBuild"
            " keeps the script that starts the Claude Code CLI there: remove it, or set TMPDIR to a folder of yours")
    # Named by a digest of the CLI's path, the same in every process (hash() is salted per process, which left a
    # wrapper behind for every run); sessions build their options on threads, so each writer has its own temp.
    wrapper = folder / f"claude-{hashlib.sha256(cli.encode()).hexdigest()[:16]}.sh"
    text = f"#!/bin/sh\nexec {shlex.quote(setpriv)} --pdeathsig TERM -- {shlex.quote(cli)} \"$@\"\n"
    if not wrapper.is_file() or wrapper.read_text() != text:
        temp = wrapper.with_name(f"{wrapper.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            temp.write_text(text)
            temp.chmod(0o700)
            temp.replace(wrapper)
        finally:
            temp.unlink(missing_ok=True)
    return str(wrapper)
