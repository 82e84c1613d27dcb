"""The steering queue: notes a person sends a running task's player (`autobuild steer`, the page), in tables of our own
beside the run's checkpoints (`autobuild_steering`, one row a note, and `autobuild_steering_deliveries`, one row per
note and attempt it reached), never in a thread's checkpoint: in the SQLite file here, in a Postgres store through
store/steering_pg.py. For each attempt a note is `accepted`, then `delivered` with a player's turn (at its start, or
at a tool boundary of its session), then `consumed` once that turn's checkpoint is written (the task's next node
finds the turn in its state): a note whose session died stays `delivered` and goes to the next turn again. A note
names one attempt, or none: then every attempt gets it."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from orchestrator.errors import InputError
from orchestrator.jsonout import iso_utc
from orchestrator.settings import environment

MAX_NOTE_BYTES = 8 * 1024
SOURCES = ("cli", "page")
"""Where a note, a pause or a cancel came from (kept with it, and in the task's trace)."""
_TABLES = ("""CREATE TABLE IF NOT EXISTS autobuild_steering (id INTEGER PRIMARY KEY AUTOINCREMENT,
feature TEXT NOT NULL, task TEXT NOT NULL, text TEXT NOT NULL, state TEXT NOT NULL,
created TEXT NOT NULL, updated TEXT NOT NULL, attempt INTEGER, source TEXT NOT NULL DEFAULT 'cli')""",
           """CREATE TABLE IF NOT EXISTS autobuild_steering_deliveries (note INTEGER NOT NULL,
attempt INTEGER NOT NULL, state TEXT NOT NULL, turn INTEGER NOT NULL, updated TEXT NOT NULL,
PRIMARY KEY (note, attempt))""")
_COLUMNS = "n.id, n.feature, n.task, n.text"
_AGGREGATE = ("CASE WHEN NOT EXISTS (SELECT 1 FROM autobuild_steering_deliveries d WHERE d.note = n.id)"
              " THEN 'accepted' WHEN EXISTS (SELECT 1 FROM autobuild_steering_deliveries d WHERE d.note = n.id"
              " AND d.state = 'delivered') THEN 'delivered' ELSE 'consumed' END")
"""A note's state over its attempts: accepted (no attempt got it yet), delivered (one holds it in a turn not yet
kept), consumed (every attempt that got it kept the turn)."""


@dataclass(frozen=True)
class Note:
    """One note to a task's player (its state: over every attempt, or for the attempt asked about)."""

    id: int
    feature: str
    task: str
    text: str
    state: str
    created: str
    updated: str
    attempt: int | None = None
    """The attempt it is for; None: every attempt of the task."""
    source: str = "cli"


def checked_note(text: str) -> str:
    """The note as sent, or one line saying why it can't be (empty, or over 8 KB)."""
    if not text.strip():
        raise InputError("the note is empty: say what the player should know, e.g. \"use the existing retry helper\"")
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_NOTE_BYTES:
        raise InputError(f"the note is {size} bytes, over the 8 KB a note may be: say it shorter")
    return text.strip()


def now_iso() -> str:
    return iso_utc(time.time()) or ""


def repo_identity(repo: Path) -> str:
    """Which repository a Postgres row belongs to (one store serves many): its folder, resolved."""
    return str(Path(repo).resolve())


def served_store() -> str | None:
    """The workers' shared Postgres inside `autobuild serve` (its runs' checkpoints are there), else None."""
    return environment().lock_db.strip() or None


class SteeringQueue:
    """The notes in one SQLite checkpoint file (short transactions, one connection a call)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def accept(self, feature: str, task: str, text: str, *, attempt: int | None = None, source: str = "cli") -> Note:
        """The note stored as `accepted` (for `attempt`, or every attempt of the task)."""
        now = now_iso()
        with Transaction(self.path, _TABLES) as conn:
            cursor = conn.execute("INSERT INTO autobuild_steering (feature, task, text, state, created, updated,"
                                  " attempt, source) VALUES (?, ?, ?, 'accepted', ?, ?, ?, ?)",
                                  (feature, task, text, now, now, attempt, source))
            note_id = int(cursor.lastrowid or 0)
        return Note(note_id, feature, task, text, "accepted", now, now, attempt, source)

    def open_notes(self, feature: str, task: str, attempt: int = 1) -> list[Note]:
        """The task's notes for `attempt` it has not consumed, oldest first, each with its state for that attempt
        (none when no note was ever sent: nothing is created)."""
        state = "COALESCE(d.state, 'accepted')"
        return [note for note in self._query(f"SELECT {_COLUMNS}, {state}, n.created, COALESCE(d.updated, n.updated),"
                                             " n.attempt, n.source FROM autobuild_steering n LEFT JOIN"
                                             " autobuild_steering_deliveries d ON d.note = n.id AND d.attempt = ?"
                                             " WHERE n.feature = ? AND n.task = ? AND (n.attempt IS NULL OR"
                                             " n.attempt = ?) ORDER BY n.id", (attempt, feature, task, attempt))
                if note.state != "consumed"]

    def all_notes(self, feature: str, task: str | None = None) -> list[Note]:
        """The feature's notes (or one task's), oldest first, each with its state over its attempts."""
        where, args = ("n.feature = ? AND n.task = ?", (feature, task)) if task else ("n.feature = ?", (feature,))
        return self._query(f"SELECT {_COLUMNS}, {_AGGREGATE}, n.created, n.updated, n.attempt, n.source"
                           f" FROM autobuild_steering n WHERE {where} ORDER BY n.id", args)

    def notes(self, note_ids: Sequence[int]) -> list[Note]:
        """These notes, oldest first (a turn's `notes_delivered`, for the coach)."""
        if not note_ids:
            return []
        marks = ", ".join("?" * len(note_ids))
        return self._query(f"SELECT {_COLUMNS}, {_AGGREGATE}, n.created, n.updated, n.attempt, n.source"
                           f" FROM autobuild_steering n WHERE n.id IN ({marks}) ORDER BY n.id", tuple(note_ids))

    def _query(self, sql: str, args: tuple[object, ...]) -> list[Note]:
        """Rows as notes; never creates the store (a file of an older version gets the new columns first)."""
        if not self.path.is_file():
            return []
        with Transaction(self.path, ()) as conn:
            if not _has_notes(conn):
                return []
            _upgrade(conn)
            rows = conn.execute(sql, args).fetchall()
        return [Note(*row) for row in rows]

    def claim(self, feature: str, task: str, attempt: int, turn: int) -> list[Note]:
        """The notes for `attempt` no turn of it holds yet (`accepted`), now `delivered` with `turn`, in one
        transaction: a note is handed to one session of the attempt only, whichever asks first."""
        if not self.path.is_file():
            return []
        with Transaction(self.path, (), immediate=True) as conn:
            if not _has_notes(conn):
                return []
            _upgrade(conn)
            rows = conn.execute(f"SELECT {_COLUMNS}, 'delivered', n.created, n.updated, n.attempt, n.source"
                                " FROM autobuild_steering n WHERE n.feature = ? AND n.task = ? AND (n.attempt IS"
                                " NULL OR n.attempt = ?) AND NOT EXISTS (SELECT 1 FROM autobuild_steering_deliveries"
                                " d WHERE d.note = n.id AND d.attempt = ?) ORDER BY n.id",
                                (feature, task, attempt, attempt)).fetchall()
            conn.executemany("INSERT INTO autobuild_steering_deliveries (note, attempt, state, turn, updated)"
                             " VALUES (?, ?, 'delivered', ?, ?)", [(row[0], attempt, turn, now_iso()) for row in rows])
        return [Note(*row) for row in rows]

    def mark(self, note_ids: Sequence[int], state: str, attempt: int = 1, turn: int = 0) -> list[int]:
        """Move these notes to `state` (`delivered`, `consumed`) for `attempt`; a consumed note stays consumed.
        The ids that moved (a note consumed already is not consumed again)."""
        if not note_ids or not self.path.is_file():
            return []
        moved = []
        with Transaction(self.path, _TABLES, immediate=True) as conn:
            _upgrade(conn)
            now = now_iso()
            for note_id in note_ids:
                held = conn.execute("SELECT state FROM autobuild_steering_deliveries WHERE note = ? AND attempt = ?",
                                    (note_id, attempt)).fetchone()
                if held is not None and (held[0] == "consumed" or held[0] == state):
                    continue
                conn.execute("INSERT OR REPLACE INTO autobuild_steering_deliveries (note, attempt, state, turn,"
                             " updated) VALUES (?, ?, ?, ?, ?)", (note_id, attempt, state, turn, now))
                conn.execute("UPDATE autobuild_steering SET state = ?, updated = ? WHERE id = ?", (state, now, note_id))
                moved.append(note_id)
        return moved


class Transaction:
    """One short transaction on the file, creating `tables` first: committed on the way out, rolled back on an
    error, always closed. `immediate` takes the write lock at once (a read-then-write that must not interleave)."""

    def __init__(self, path: Path, tables: Sequence[str], *, immediate: bool = False) -> None:
        self.path, self.tables, self.immediate = path, tables, immediate
        self.conn: sqlite3.Connection | None = None

    def __enter__(self) -> sqlite3.Connection:
        if self.tables:  # creating: a note or a control can come before the run's first checkpoint made the folder
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(self.path, timeout=30)
        if self.immediate:
            self.conn.execute("BEGIN IMMEDIATE")
        for table in self.tables:
            self.conn.execute(table)
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


def _has_notes(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'autobuild_steering'"
                        ).fetchone() is not None


def _upgrade(conn: sqlite3.Connection) -> None:
    """A notes table of the first version (no attempt, no source, one state a note) gets the new columns, and its
    notes' states become attempt 1's deliveries."""
    for table in _TABLES:
        conn.execute(table)
    columns = {row[1] for row in conn.execute("PRAGMA table_info(autobuild_steering)")}
    if "attempt" in columns:
        return
    conn.execute("ALTER TABLE autobuild_steering ADD COLUMN attempt INTEGER")
    conn.execute("ALTER TABLE autobuild_steering ADD COLUMN source TEXT NOT NULL DEFAULT 'cli'")
    conn.execute("INSERT OR IGNORE INTO autobuild_steering_deliveries (note, attempt, state, turn, updated)"
                 " SELECT id, 1, state, 0, updated FROM autobuild_steering WHERE state != 'accepted'")
