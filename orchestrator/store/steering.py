"""The steering queue: notes a person sends a running task's player (`autobuild steer`), in a table of our own in
the run's SQLite checkpoint file (`autobuild_steering`), never in a thread's checkpoint. A note is `accepted`, then
`delivered` with a player's turn, then `consumed` once that turn's checkpoint is written (the task's next node
finds the turn in its state): a note whose session died stays `delivered` and goes to the next turn again."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from orchestrator.errors import InputError
from orchestrator.jsonout import iso_utc
from orchestrator.store.locations import POSTGRES_SCHEMES, choose_db

MAX_NOTE_BYTES = 8 * 1024
_TABLE = """CREATE TABLE IF NOT EXISTS autobuild_steering (id INTEGER PRIMARY KEY AUTOINCREMENT,
feature TEXT NOT NULL, task TEXT NOT NULL, text TEXT NOT NULL, state TEXT NOT NULL,
created TEXT NOT NULL, updated TEXT NOT NULL)"""
_OPEN = ("accepted", "delivered")


@dataclass(frozen=True)
class Note:
    """One note to a task's player."""

    id: int
    feature: str
    task: str
    text: str
    state: str
    created: str
    updated: str


def checked_note(text: str) -> str:
    """The note as sent, or one line saying why it can't be (empty, or over 8 KB)."""
    if not text.strip():
        raise InputError("the note is empty: say what the player should know, e.g. \"use the existing retry helper\"")
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_NOTE_BYTES:
        raise InputError(f"the note is {size} bytes, over the 8 KB a note may be: say it shorter")
    return text.strip()


class SteeringQueue:
    """The notes in one SQLite checkpoint file (short transactions, one connection a call)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def for_feature(cls, repo: Path, feature: str, chosen: str | None = None) -> SteeringQueue | None:
        """The queue beside the feature's checkpoints (as `status` finds them); None on Postgres (not kept there
        yet)."""
        location = choose_db(repo, chosen, feature)
        return None if location.startswith(POSTGRES_SCHEMES) else cls(Path(location))

    def accept(self, feature: str, task: str, text: str) -> Note:
        now = iso_utc(time.time()) or ""
        with self._connected(create=True) as conn:
            cursor = conn.execute("INSERT INTO autobuild_steering (feature, task, text, state, created, updated)"
                                  " VALUES (?, ?, ?, 'accepted', ?, ?)", (feature, task, text, now, now))
            note_id = int(cursor.lastrowid or 0)
        return Note(note_id, feature, task, text, "accepted", now, now)

    def open_notes(self, feature: str, task: str) -> list[Note]:
        """The task's notes not yet consumed, oldest first (none when no note was ever sent: nothing is created)."""
        return self._notes(feature, task, _OPEN)

    def all_notes(self, feature: str, task: str) -> list[Note]:
        return self._notes(feature, task)

    def _notes(self, feature: str, task: str, states: tuple[str, ...] = ()) -> list[Note]:
        """The task's notes, oldest first, in one of `states` (all without); never creates the store."""
        if not self.path.is_file():
            return []
        with self._connected(create=False) as conn:
            if not _has_table(conn):
                return []
            among = f" AND state IN ({', '.join('?' * len(states))})" if states else ""
            rows = conn.execute("SELECT id, feature, task, text, state, created, updated FROM autobuild_steering"
                                f" WHERE feature = ? AND task = ?{among} ORDER BY id",  # placeholders only
                                (feature, task, *states)).fetchall()
        return [Note(*row) for row in rows]

    def mark(self, note_ids: list[int], state: str) -> None:
        """Move these notes to `state` (`delivered`, `consumed`); a consumed note stays consumed."""
        if not note_ids or not self.path.is_file():
            return
        marks = ", ".join("?" * len(note_ids))
        with self._connected(create=False) as conn:
            conn.execute(f"UPDATE autobuild_steering SET state = ?, updated = ? WHERE id IN ({marks})"
                         " AND state != 'consumed'", (state, iso_utc(time.time()), *note_ids))

    def _connected(self, *, create: bool) -> _Transaction:
        return _Transaction(self.path, create)


class _Transaction:
    """One short transaction on the file: committed on the way out, rolled back on an error, always closed."""

    def __init__(self, path: Path, create: bool) -> None:
        self.path, self.create = path, create
        self.conn: sqlite3.Connection | None = None

    def __enter__(self) -> sqlite3.Connection:
        self.conn = sqlite3.connect(self.path, timeout=30)
        if self.create:
            self.conn.execute(_TABLE)
        return self.conn

    def __exit__(self, kind: object, *_: object) -> None:
        assert self.conn is not None
        try:
            if kind is None:
                self.conn.commit()
            else:
                self.conn.rollback()
        finally:
            self.conn.close()


def _has_table(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'autobuild_steering'"
                        ).fetchone() is not None
