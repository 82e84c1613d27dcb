"""The CLI's output stream: a reader that goes away early (`status | head`) ends the command quietly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import cli_env


def test_a_closed_pipe_ends_the_command_without_a_traceback(sample_repo: Path, tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line is written: every write gets EPIPE
    try:
        proc = subprocess.run([sys.executable, "-m", "orchestrator", "validate", "FEAT-001", "--repo",
                               str(sample_repo)], stdout=write_end, stderr=subprocess.PIPE, text=True,
                              env=cli_env(None, tmp_path), timeout=60, check=False)
    finally:
        os.close(write_end)
    assert proc.stderr == ""
    assert proc.returncode == 141


def test_validate_and_dry_run_say_which_command_gates_and_where_it_came_from(sample_repo: Path,
                                                                             tmp_path: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "orchestrator", *args, "--repo", str(sample_repo)],
                              capture_output=True, text=True, env=cli_env(None, tmp_path), timeout=60, check=False)

    shown = cli("validate", "FEAT-001")
    assert shown.returncode == 0 and "gate: `python -m pytest -q` (the plan's verify)" in shown.stdout
    assert json.loads(cli("validate", "FEAT-001", "--json").stdout)["gate"] == {
        "command": "python -m pytest -q", "source": "the plan's verify"}
    unverified = cli("validate", "FEAT-001", "--verify", "none")
    assert "no gate (--verify none): approvals are reported as unverified" in unverified.stdout
    dry = cli("run", "FEAT-001", "--dry-run", "--verify", "make check")
    assert dry.returncode == 0 and "gate: `make check` (--verify)" in dry.stdout


def test_a_gate_that_cannot_run_is_exit_2_with_its_output_before_any_session(sample_repo: Path,
                                                                            tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    proc = subprocess.run([sys.executable, "-m", "orchestrator", "run", "FEAT-001", "--repo", str(sample_repo),
                           "--db", str(db), "--autonomous", "--verify", "no-such-test-runner --all"],
                          capture_output=True, text=True, env=cli_env(None, tmp_path), timeout=120, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "can't run on the base" in proc.stderr and "no-such-test-runner: command not found" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (sample_repo / ".autobuild" / "runs").exists(), "no task started"


def test_autobuild_names_itself_its_version_exit_codes_and_variables(tmp_path: Path) -> None:
    cli = Path(sys.executable).parent / "autobuild"
    version = subprocess.run([str(cli), "--version"], capture_output=True, text=True, check=False, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("autobuild ")
    shown = subprocess.run([str(cli), "--help"], capture_output=True, text=True, check=False, timeout=60).stdout
    assert shown.startswith("usage: autobuild") and "75 a usage-limit pause" in shown and "ORCHESTRATOR_DB" in shown
