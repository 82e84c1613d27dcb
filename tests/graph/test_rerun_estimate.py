"""A re-run's dry run (issue 33): `resume FEAT --dry-run`, `run FEAT --dry-run` of a finished feature and
`run TASK --dry-run` list in their estimate only the tasks the command would run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from orchestrator.cli.main import main
from tests import schemas
from tests.graph.test_one_truth import failing_second, run, three_tasks


def dry_run(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    capsys.readouterr()
    assert main([*args, "--dry-run", "--json"]) == 0
    return schemas.valid("dry-run", capsys.readouterr().out)


def test_a_rerun_s_estimate_lists_only_the_tasks_it_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, db = three_tasks(tmp_path), tmp_path / "db.sqlite"
    first = asyncio.run(run(repo, db, "FEAT-001", failing_second()))
    assert first.results["TASK-001"]["status"] == "approved" and first.results["TASK-002"]["status"] == "failed"
    where = ["--repo", str(repo), "--db", str(db)]

    again = dry_run(capsys, "resume", "FEAT-001", *where)
    assert [row["task"] for row in again["tasks"]] == ["TASK-002", "TASK-004"]  # type: ignore[attr-defined]
    assert [row["why"] for row in again["tasks"]] == ["failed", "skipped"]  # type: ignore[attr-defined]
    assert again["estimate"]["sessions_max"] == 2 * 10 * 2, "two tasks of at most 10 turns"  # type: ignore[index]

    reported = dry_run(capsys, "run", "FEAT-001", *where)  # `run` of a finished feature only reports it
    assert reported["tasks"] == [] and reported["estimate"]["sessions_max"] == 0  # type: ignore[index]
    assert "`resume` runs again" in str(reported["previous_run"])

    single = dry_run(capsys, "run", "TASK-002", *where)
    assert [row["task"] for row in single["tasks"]] == ["TASK-002"]  # type: ignore[attr-defined]
    done = dry_run(capsys, "run", "TASK-001", *where)  # approved by the feature's run: `run TASK-001` runs nothing
    assert done["tasks"] == [], done
    forced = dry_run(capsys, "run", "TASK-001", *where, "--fresh")
    assert [row["task"] for row in forced["tasks"]] == ["TASK-001"]  # type: ignore[attr-defined]

    assert main(["resume", "FEAT-001", *where, "--dry-run"]) == 0
    said = capsys.readouterr().out
    assert "TASK-002" in said and "TASK-004" in said and "group 1  TASK-001" not in said, said
    assert "sessions: ~" in said and "at most 40;" in said, said
    assert main(["run", "FEAT-001", *where, "--dry-run"]) == 0
    said = capsys.readouterr().out
    assert "nothing to run" in said and "complexity" not in said, said
    assert json.loads(json.dumps(again))  # plain JSON all the way
