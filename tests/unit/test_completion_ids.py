"""Completion offers feature and task ids: bash's own completion, sourced in a real bash, asks the real CLI for the
repo and the checkpoint DB the line names (the repo's plans, a plan run from elsewhere, the DB's threads, a feature's
tasks); a hostile plan file's name is never handed to the shell."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver

from agents.testing.repos import make_sample_repo
from tests.graph.harness import plan, task
from tests.unit.test_completion import PROJECT, complete_in_bash, complete_in_zsh, script


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """FEAT-001 (TASK-001, TASK-002), FEAT-002 (TASK-009), a DB with a thread of FEAT-007, `autobuild` on PATH."""
    found = make_sample_repo(tmp_path / "repo", plan=plan(task("TASK-001"), task("TASK-002", "TASK-001")))
    other = plan(task("TASK-009")) | {"id": "FEAT-002"}
    (found / ".autobuild/features/FEAT-002.yaml").write_text(yaml.safe_dump(other))
    (found / ".autobuild/features/$(touch pwned).yaml").write_text("id: x\n")
    with SqliteSaver.from_conn_string(str(tmp_path / "db.sqlite")) as saver:
        saver.put({"configurable": {"thread_id": "FEAT-007", "checkpoint_ns": ""}}, empty_checkpoint(), {}, {})
    shim = tmp_path / "bin" / "autobuild"
    shim.parent.mkdir()
    shim.write_text(f"#!/bin/sh\nPYTHONPATH={PROJECT} exec {sys.executable} -m orchestrator \"$@\"\n")
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim.parent}:{os.environ['PATH']}")
    return found


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completes_features_from_the_repo_and_the_store_and_a_feature_s_tasks(
        repo: Path, tmp_path: Path) -> None:
    where = ["--repo", str(repo), "--db", str(tmp_path / "db.sqlite")]
    assert complete_in_bash(tmp_path, ["status", *where, ""]) == ["FEAT-001", "FEAT-002", "FEAT-007"]
    assert complete_in_bash(tmp_path, ["show", *where, "FEAT-001", "TASK"]) == ["TASK-001", "TASK-002"]
    assert not (tmp_path / "pwned").exists(), "a plan file's name never reaches the shell"


@pytest.mark.heavy  # an interactive zsh in a pseudo-terminal, a CLI start per Tab
@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completes_a_feature_s_tasks(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "_autobuild").write_text(script("zsh").stdout)
    line = f"autobuild show --repo {repo} --db {tmp_path / 'db.sqlite'} "
    assert complete_in_zsh(tmp_path, line + "FE") == {"FEAT-001", "FEAT-002", "FEAT-007"}
    assert complete_in_zsh(tmp_path, line + "FEAT-001 ") == {"TASK-001", "TASK-002"}
    assert complete_in_zsh(tmp_path, line.replace("show", "run") + "T") == {"TASK-001", "TASK-002", "TASK-009"}
