"""Refusals that need no work come at once (issue 39): with no key or login at all, `run` says so before the run's
modules (LangGraph, the store, the SDK) load, and after what is wrong with the input itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agents.testing.repos import DEMO_PLAN, make_sample_repo

PROBE = ("import sys; from orchestrator.cli.main import main; code = main(sys.argv[1:]);"
         " print('loaded:', sorted(m for m in ('langgraph', 'claude_agent_sdk') if m in sys.modules), code)")


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_CODE_"))}
    env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "no-login")
    return subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True, text=True,
                          check=False, timeout=120)


def test_no_credentials_is_refused_before_the_run_loads(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=DEMO_PLAN)
    done = _run(tmp_path, "run", "FEAT-001", "--repo", str(repo), "--autonomous")
    assert "loaded: [] 2" in done.stdout, done.stdout + done.stderr
    assert done.stderr.startswith("error: no credentials") and len(done.stderr.splitlines()) == 1, done.stderr
    assert not (repo / ".autobuild" / "runs").exists()


def test_the_input_is_refused_first(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=DEMO_PLAN)
    done = _run(tmp_path, "run", "FEAT-404", "--repo", str(repo), "--autonomous")
    assert "loaded: [] 2" in done.stdout and "FEAT-404" in done.stderr and "credentials" not in done.stderr, done
