"""A SQLite checkpoint store whose file exists without its tables yet (a run's first moment, or a file that so far
holds only the steering queue) reads as no run yet: `status` and `steer` say what they say before the file exists,
never that it can't be opened."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agents.testing.repos import make_sample_repo
from orchestrator.cli.main import main
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.store.locations import default_checkpoint_dir, default_db
from orchestrator.store.pause import quota_path
from orchestrator.store.steering import SteeringQueue
from orchestrator.store.task_control import TaskControls
from tests.graph.harness import CALC_FILES, plan, task


def _tableless(path: Path, *, other_table: bool) -> Path:
    if other_table:  # what a store holds when only another table of ours was made in it
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("CREATE TABLE autobuild_steering (id INTEGER PRIMARY KEY)")
    else:  # the run's saver opened the file and has not made its tables yet
        path.touch()
    return path


@pytest.mark.parametrize("other_table", [False, True])
def test_status_and_steer_read_a_store_without_tables_as_no_run_yet(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], other_table: bool) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("A")))
    db = _tableless(tmp_path / "db.sqlite", other_table=other_table)
    where = ["--repo", str(repo), "--db", str(db)]

    assert not CheckpointStore(str(db)).exists()
    assert main(["status", "FEAT-001", *where]) == 2
    said = capsys.readouterr().err
    assert "nothing has run" in said and "can't be opened" not in said and "locked" not in said

    assert main(["steer", "FEAT-001", "A", "use the helper", *where]) == 2
    said = capsys.readouterr().err
    assert "FEAT-001 has not run yet" in said and "can't be opened" not in said


def test_a_note_or_a_control_sent_before_the_stores_folder_exists_makes_it(tmp_path: Path) -> None:
    """The first thing written to a store can be a note or a pause (a fresh machine's data folder, a `--db` in a new
    folder): it makes the folder, never `unable to open database file`."""
    notes = SteeringQueue(tmp_path / "new" / "notes.sqlite")
    notes.accept("FEAT-001", "TASK-001", "use the helper")
    assert [(n.text, n.state) for n in notes.all_notes("FEAT-001", "TASK-001")] == [("use the helper", "accepted")]
    controls = TaskControls(tmp_path / "other" / "controls.sqlite")
    controls.record("FEAT-001", "TASK-001", "pause")
    assert controls.control("FEAT-001", "TASK-001").paused is not None


def test_the_default_store_is_the_checkouts_own_folder_when_run_from_it(monkeypatch: pytest.MonkeyPatch,
                                                                         tmp_path: Path) -> None:
    """DESIGN's contract: installed from the checkout (`make install`), the SQLite files go in its `checkpoints/`
    (a package move once made it look one folder too low, so every run went to the per-user folder), unless
    ORCHESTRATOR_CHECKPOINT_DIR names another folder (the suite's own, tests/conftest.py)."""
    monkeypatch.delenv("ORCHESTRATOR_CHECKPOINT_DIR")
    checkout = Path(__file__).resolve().parents[2]
    assert (checkout / "checkpoints").is_dir()
    assert default_checkpoint_dir() == checkout / "checkpoints"
    assert Path(default_db(Path("/tmp/somewhere/repo"))).parent == checkout / "checkpoints"
    monkeypatch.setenv("ORCHESTRATOR_CHECKPOINT_DIR", str(tmp_path / "kept"))
    assert Path(default_db(Path("/tmp/somewhere/repo"))).parent == tmp_path / "kept"
    assert quota_path("k") == tmp_path / "kept" / "quota" / "k.json"
