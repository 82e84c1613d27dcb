"""A driver's error (sqlite3) surfacing from the checkpoint store is one of our own errors, raised by the store:
the command line maps only our error tree to exit codes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agents.testing.repos import DEMO_PLAN, make_sample_repo
from orchestrator.errors import StoreError, StoreUnavailableError
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.store.sqlite_said import sqlite_said
from tests.cli_in_process import cli_in_process


def _unreadable(db: Path) -> str:
    """A damaged file is said to be one, never blamed on a lock: the file named, and what to do."""
    return (f"checkpoint DB {db}: file is not a database: the file is damaged (no lock is involved): move it aside"
            f" (`mv {db} {db}.damaged`) and run again, which starts its features over, or pass --db PATH to use"
            " another")


def _not_a_database(tmp_path: Path) -> Path:
    db = tmp_path / "bad.sqlite"
    db.write_bytes(b"not a database at all " * 100)
    return db


def test_reading_a_store_that_is_not_a_database_raises_our_store_error(tmp_path: Path) -> None:
    db = _not_a_database(tmp_path)
    store = CheckpointStore.for_repo(tmp_path, str(db))
    with pytest.raises(StoreUnavailableError) as raised, store.reader() as reader:
        reader.threads()
    assert str(raised.value) == _unreadable(db)
    assert isinstance(raised.value, StoreError) and not isinstance(raised.value, sqlite3.Error)


def test_pruning_a_store_that_is_not_a_database_raises_our_store_error(tmp_path: Path) -> None:
    store = CheckpointStore.for_repo(tmp_path, str(_not_a_database(tmp_path)))
    with pytest.raises(StoreUnavailableError, match="file is not a database"):
        store.delete_threads(["FEAT-001"])


def test_a_command_on_an_unreadable_store_says_so_in_one_line_and_exits_2(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=DEMO_PLAN)
    db = _not_a_database(tmp_path)
    for command in ("status", "history", "review"):
        done = cli_in_process(tmp_path, command, "FEAT-001", "--repo", str(repo), "--db", str(db))
        assert (done.returncode, done.stderr, done.stdout) == (2, f"error: {_unreadable(db)}\n", ""), command


def test_a_store_damaged_inside_is_said_to_be_damaged(tmp_path: Path) -> None:
    """A real SQLite file whose pages were overwritten (SQLite: "database disk image is malformed")."""
    db = tmp_path / "damaged.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE checkpoints (thread_id TEXT, body BLOB)")
        conn.executemany("INSERT INTO checkpoints VALUES (?, ?)", [(str(n), b"x" * 3000) for n in range(40)])
    conn.close()
    data = bytearray(db.read_bytes())
    data[4096:] = b"A" * (len(data) - 4096)
    db.write_bytes(bytes(data))
    with pytest.raises(StoreUnavailableError) as raised, CheckpointStore.for_repo(tmp_path, str(db)).reader() as r:
        r.threads()
    assert "damaged" in str(raised.value) and "lock" not in str(raised.value).replace("no lock is involved", "")
    assert str(db) in str(raised.value)


@pytest.mark.parametrize(("said", "meaning"), [("database is locked", "holds it locked"),
                                               ("database or disk is full", "is full"),
                                               ("database disk image is malformed", "is damaged")])
def test_each_sqlite_error_is_said_as_itself(said: str, meaning: str) -> None:
    line = sqlite_said(sqlite3.OperationalError(said), Path("/x/db.sqlite"))
    assert meaning in line and "\n" not in line and "/x/db.sqlite" in line
