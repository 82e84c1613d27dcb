"""The CLI's output stream: a reader that goes away early (`status | head`) ends the command quietly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agents.testing.scripted_model import ScriptedModel
from tests import schemas
from tests.cli_in_process import cli_in_process
from tests.conftest import CliRun, cli_env


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
    def cli(*args: str) -> CliRun:
        return cli_in_process(tmp_path, *args, "--repo", str(sample_repo))

    shown = cli("validate", "FEAT-001")
    assert shown.returncode == 0 and "gate: `python -m pytest -q` (the plan's verify)" in shown.stdout
    gate = schemas.valid("validate", cli("validate", "FEAT-001", "--json").stdout)["gate"]
    assert (gate["command"], gate["source"]) == ("python -m pytest -q", "the plan's verify")
    schemas.valid("dry-run", cli("run", "FEAT-001", "--dry-run", "--json").stdout)
    unverified = cli("validate", "FEAT-001", "--verify", "none")
    assert "no gate (--verify none): approvals are reported as unverified" in unverified.stdout
    dry = cli("run", "FEAT-001", "--dry-run", "--verify", "make check")
    assert dry.returncode == 0 and "gate: `make check` (--verify)" in dry.stdout


def test_a_gate_that_cannot_run_is_exit_2_with_its_output_before_any_session(
        sample_repo: Path, tmp_path: Path, answering_endpoint: ScriptedModel) -> None:
    db = tmp_path / "db.sqlite"
    proc = cli_in_process(tmp_path, "run", "FEAT-001", "--repo", str(sample_repo), "--db", str(db), "--autonomous",
                          "--verify", "no-such-test-runner --all", model=answering_endpoint)
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


def test_commands_find_the_repo_from_a_subfolder_and_take_settings_from_its_config(sample_repo: Path,
                                                                                  tmp_path: Path) -> None:
    inside = sample_repo / "calc"
    (sample_repo / ".autobuild" / "config.yaml").write_text("verify: make check\nest_session_usd: 0.5\n")

    def cli(*args: str) -> CliRun:
        return cli_in_process(tmp_path, *args, cwd=inside)

    assert "gate: `make check` (--verify)" in cli("validate", "FEAT-001").stdout
    dry = schemas.valid("dry-run", cli("run", "FEAT-001", "--dry-run", "--json").stdout)
    assert dry["estimate"]["cost_per_session_usd"] == 0.5 and dry["gate"]["command"] == "make check"
    (sample_repo / ".autobuild" / "config.yaml").write_text("paralel: 2\n")
    typo = cli("status", "FEAT-001")
    assert typo.returncode == 2 and typo.stderr.count("\n") == 1 and "unknown setting 'paralel'" in typo.stderr


def test_errors_under_json_are_json_with_the_exit_code(sample_repo: Path, tmp_path: Path) -> None:
    def cli(*args: str) -> CliRun:
        return cli_in_process(tmp_path, *args)

    missing = cli("status", "FEAT-404", "--repo", str(sample_repo), "--json")
    assert missing.returncode == 2
    assert schemas.valid("error", missing.stdout) == {"schema_version": 1, "exit_code": 2,
                                                      "error": missing.stderr.removeprefix("error: ").strip()}
    usage = cli("status", "--repo", str(sample_repo), "--json", "--no-such-flag")
    assert usage.returncode == 2 and "--no-such-flag" in schemas.valid("error", usage.stdout)["error"]
    bad_value = cli("run", "FEAT-001", "--repo", str(sample_repo), "--dry-run", "--parallel", "0", "--json")
    assert bad_value.returncode == 2 and schemas.valid("error", bad_value.stdout)["error"].startswith("--parallel")
