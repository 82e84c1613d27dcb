"""The CLI's `main` run in the test's own process, in the environment `run_cli` gives a CLI process: the same
commands and refusals without a process's ~2 CPU-s of start-up each."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import pytest

from agents.testing.scripted_model import ScriptedModel
from orchestrator.cli.main import main
from tests.conftest import CliRun, cli_env


def cli_in_process(workspace: Path, *args: str, cwd: Path | None = None, model: ScriptedModel | None = None,
                   **extra_env: str) -> CliRun:
    """`main(args)`'s exit code, stdout and stderr, run from `cwd`, in `cli_env(model, workspace)` and
    `extra_env`, as `run_cli` runs its process."""
    env = {**cli_env(model, workspace), **extra_env}
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        for name in set(os.environ) - set(env):
            patch.delenv(name)
        for name, value in env.items():
            patch.setenv(name, value)
        if cwd is not None:
            patch.chdir(cwd)
        try:
            code = main(list(args))
        except SystemExit as exit_:  # argparse's own refusals
            code = exit_.code if isinstance(exit_.code, int) else 2
    return CliRun(code, out.getvalue(), err.getvalue())
