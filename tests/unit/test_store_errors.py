"""A driver's error (sqlite3) surfacing from the checkpoint store is one of our own errors, raised by the store:
the command line maps only our error tree to exit codes."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agents.testing.repos import DEMO_PLAN, make_sample_repo
from orchestrator.errors import StoreError, StoreUnavailableError
from orchestrator.store.checkpoints import CheckpointStore

UNREADABLE = "checkpoint DB: file is not a database: another process may hold it locked; try again when it is done"


def _not_a_database(tmp_path: Path) -> Path:
    db = tmp_path / "bad.sqlite"
    db.write_bytes(b"not a database at all " * 100)
    return db


def test_reading_a_store_that_is_not_a_database_raises_our_store_error(tmp_path: Path) -> None:
    store = CheckpointStore.for_repo(tmp_path, str(_not_a_database(tmp_path)))
    with pytest.raises(StoreUnavailableError) as raised, store.reader() as reader:
        reader.threads()
    assert str(raised.value) == UNREADABLE
    assert isinstance(raised.value, StoreError) and not isinstance(raised.value, sqlite3.Error)


def test_pruning_a_store_that_is_not_a_database_raises_our_store_error(tmp_path: Path) -> None:
    store = CheckpointStore.for_repo(tmp_path, str(_not_a_database(tmp_path)))
    with pytest.raises(StoreUnavailableError, match="file is not a database"):
        store.delete_threads(["FEAT-001"])


def test_a_command_on_an_unreadable_store_says_so_in_one_line_and_exits_2(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=DEMO_PLAN)
    db = _not_a_database(tmp_path)
    for command in ("status", "history", "review"):
        done = subprocess.run([sys.executable, "-m", "orchestrator", command, "FEAT-001", "--repo", str(repo),
                               "--db", str(db)], capture_output=True, text=True, check=False)
        assert (done.returncode, done.stderr, done.stdout) == (2, f"error: {UNREADABLE}\n", ""), command
