"""`--dry-run` with attempts (issue 40, item 1): the peak sessions and memory are the slots', the cost every
attempt's, and fewer slots than attempts is said."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.testing.repos import DEMO_PLAN, make_sample_repo
from orchestrator.cli.main import main


def test_the_dry_run_says_the_peak_and_that_attempts_queue(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=DEMO_PLAN)
    where = ["--repo", str(repo), "--db", str(tmp_path / "db.sqlite"), "--dry-run"]
    assert main(["run", "FEAT-001", *where, "--attempts", "3", "--parallel", "2"]) == 0
    said = capsys.readouterr().out
    assert "x 3 attempts" in said and "at most 2 at once (~440 MB)" in said, said
    assert "note: 3 attempts per task but --parallel 2: a task's attempts queue for slots" in said
    assert main(["run", "FEAT-001", *where, "--attempts", "3", "--parallel", "6"]) == 0
    said = capsys.readouterr().out
    assert "at most 6 at once (~1320 MB)" in said and "queue for slots" not in said, said
    assert not (tmp_path / "db.sqlite").exists()
