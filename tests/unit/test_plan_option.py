"""`--plan PATH` through the command: commands that start no agent. One through the real process (`python -m
orchestrator`, what a person sees whole); the rest through `main` in this process (tests/cli_in_process.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from tests.cli_in_process import cli_in_process
from tests.conftest import cli_env
from tests.guardkit import PLAN_FILE, guardkit_plan, write_guardkit_plan


def cli(tmp_path: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "orchestrator", *args], cwd=cwd, capture_output=True, text=True,
                          env=cli_env(None, tmp_path), timeout=120, check=False)


def test_validate_and_dry_run_take_a_plan_where_it_lies(sample_repo: Path, tmp_path: Path) -> None:
    write_guardkit_plan(sample_repo)
    valid = cli(tmp_path, sample_repo, "validate", "--plan", PLAN_FILE)
    assert valid.returncode == 0 and "FEAT-GK1 is valid: 2 task(s) in 2 group(s)" in valid.stdout
    assert "warning: plan.status 'paused' ignored" in valid.stderr
    assert "warning: TASK-GK-002.file_path tasks/backlog/sub/TASK-GK-002-docs.md does not exist" in valid.stderr
    # From elsewhere: --plan is relative to the current directory, like any path argument.
    dry = cli_in_process(tmp_path, "run", "--plan", str(sample_repo / PLAN_FILE), "--repo", str(sample_repo),
                         "--dry-run", "--json", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    shown = json.loads(dry.stdout)
    assert shown["feature"] == "FEAT-GK1" and shown["groups"] == [["TASK-GK-001"], ["TASK-GK-002"]]
    assert not (sample_repo / ".autobuild" / "runs").exists()  # a dry run writes nothing
    wrong = cli_in_process(tmp_path, "validate", "FEAT-001", "--plan", PLAN_FILE, cwd=sample_repo)
    assert wrong.returncode == 2
    assert wrong.stderr == f"error: {PLAN_FILE} is plan FEAT-GK1, not FEAT-001: give its id, or none\n"


def test_a_plan_pointing_outside_the_repo_is_refused_in_one_line(sample_repo: Path, tmp_path: Path) -> None:
    data = guardkit_plan()
    data["tasks"][0]["file_path"] = "tasks/link.md"
    write_guardkit_plan(sample_repo, data)
    (sample_repo / "tasks/link.md").symlink_to(tmp_path / "elsewhere.md")
    refused = cli_in_process(tmp_path, "validate", "--plan", PLAN_FILE, cwd=sample_repo)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "task TASK-GK-001: file_path: tasks/link.md resolves outside the repo" in refused.stderr
    (sample_repo / PLAN_FILE).write_text(yaml.safe_dump(guardkit_plan(id="FEAT-001")))
    clash = cli_in_process(tmp_path, "validate", "--plan", PLAN_FILE, cwd=sample_repo)
    assert clash.returncode == 2 and "another plan with that id" in clash.stderr
