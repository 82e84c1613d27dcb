"""The steering queue and the task controls in a Postgres checkpoint store (a `--db postgresql://…` run, and the
workers' shared store for served runs): the same tables as beside SQLite checkpoints (store/steering.py,
store/task_control.py), the same states and answers, each row also naming its repository (one Postgres serves many).
Every call is one short transaction on a connection of its own, never a write into a thread's checkpoint; a claim
and a move of state are single statements whose primary key decides a race, so a note goes to one session of an
attempt and is consumed once however many workers ask at the same moment."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from orchestrator.store.steering import Note, SteeringQueue, now_iso
from orchestrator.store.task_control import ACTIONS, ControlRecord, TaskControls

_TABLES = ("""CREATE TABLE IF NOT EXISTS autobuild_steering (id BIGSERIAL PRIMARY KEY, repo TEXT NOT NULL,
feature TEXT NOT NULL, task TEXT NOT NULL, text TEXT NOT NULL, state TEXT NOT NULL, created TEXT NOT NULL,
updated TEXT NOT NULL, attempt INTEGER, source TEXT NOT NULL DEFAULT 'cli')""",
           """CREATE TABLE IF NOT EXISTS autobuild_steering_deliveries (note BIGINT NOT NULL, attempt INTEGER NOT NULL,
state TEXT NOT NULL, turn INTEGER NOT NULL, updated TEXT NOT NULL, PRIMARY KEY (note, attempt))""",
           """CREATE TABLE IF NOT EXISTS autobuild_task_control (id BIGSERIAL PRIMARY KEY, repo TEXT NOT NULL,
feature TEXT NOT NULL, task TEXT NOT NULL, action TEXT NOT NULL, now BOOLEAN NOT NULL DEFAULT FALSE,
source TEXT NOT NULL, state TEXT NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL)""")
_NOTE = "n.id, n.feature, n.task, n.text"
_AGGREGATE = ("CASE WHEN NOT EXISTS (SELECT 1 FROM autobuild_steering_deliveries d WHERE d.note = n.id)"
              " THEN 'accepted' WHEN EXISTS (SELECT 1 FROM autobuild_steering_deliveries d WHERE d.note = n.id"
              " AND d.state = 'delivered') THEN 'delivered' ELSE 'consumed' END")
_CONTROL = "id, feature, task, action, now, source, state, created, updated"
_made: set[str] = set()
"""The stores whose tables this process made already (one CREATE per store and process, not per call)."""


@contextlib.contextmanager
def transaction(url: str, *, create: bool = True) -> Iterator[Any]:
    """One short transaction on a connection of its own (committed on the way out, rolled back on an error), the
    tables made first unless it only reads (`create` False: a read never writes the store)."""
    import psycopg  # noqa: PLC0415  # the `postgres` extra: only a Postgres store gets here

    with psycopg.connect(url, connect_timeout=10) as conn:
        if create and url not in _made:
            for table in _TABLES:
                with contextlib.suppress(psycopg.errors.UniqueViolation), conn.transaction():
                    conn.execute(table)  # two processes making it at once: one wins, the table is there
            _made.add(url)
        with conn.transaction():
            yield conn


def read(url: str, sql: str, args: tuple[object, ...]) -> list[tuple[Any, ...]]:
    """A read's rows; none when nothing was ever sent (the tables are not made by a read)."""
    import psycopg  # noqa: PLC0415  # as transaction

    try:
        with transaction(url, create=False) as conn:
            return list(conn.execute(sql, args).fetchall())
    except psycopg.errors.UndefinedTable:
        return []


class PostgresNotes(SteeringQueue):
    """The notes of one repository in a Postgres store (the SQLite queue's methods, with its answers)."""

    def __init__(self, url: str, repo: str) -> None:
        self.url, self.repo = url, repo

    def accept(self, feature: str, task: str, text: str, *, attempt: int | None = None, source: str = "cli") -> Note:
        now = now_iso()
        with transaction(self.url) as conn:
            row = conn.execute("INSERT INTO autobuild_steering (repo, feature, task, text, state, created, updated,"
                               " attempt, source) VALUES (%s, %s, %s, %s, 'accepted', %s, %s, %s, %s) RETURNING id",
                               (self.repo, feature, task, text, now, now, attempt, source)).fetchone()
        return Note(int(row[0]), feature, task, text, "accepted", now, now, attempt, source)

    def open_notes(self, feature: str, task: str, attempt: int = 1) -> list[Note]:
        rows = self._rows(f"SELECT {_NOTE}, COALESCE(d.state, 'accepted'), n.created, COALESCE(d.updated, n.updated),"
                          " n.attempt, n.source FROM autobuild_steering n LEFT JOIN autobuild_steering_deliveries d"
                          " ON d.note = n.id AND d.attempt = %s WHERE n.repo = %s AND n.feature = %s AND n.task = %s"
                          " AND (n.attempt IS NULL OR n.attempt = %s) ORDER BY n.id",
                          (attempt, self.repo, feature, task, attempt))
        return [note for note in rows if note.state != "consumed"]

    def all_notes(self, feature: str, task: str | None = None) -> list[Note]:
        where, args = ("AND n.task = %s", (self.repo, feature, task)) if task else ("", (self.repo, feature))
        return self._rows(f"SELECT {_NOTE}, {_AGGREGATE}, n.created, n.updated, n.attempt, n.source FROM"
                          f" autobuild_steering n WHERE n.repo = %s AND n.feature = %s {where} ORDER BY n.id", args)

    def notes(self, note_ids: Sequence[int]) -> list[Note]:
        if not note_ids:
            return []
        return self._rows(f"SELECT {_NOTE}, {_AGGREGATE}, n.created, n.updated, n.attempt, n.source FROM"
                          " autobuild_steering n WHERE n.repo = %s AND n.id = ANY(%s) ORDER BY n.id",
                          (self.repo, list(note_ids)))

    def _rows(self, sql: str, args: tuple[object, ...]) -> list[Note]:
        return [Note(*row) for row in read(self.url, sql, args)]

    def claim(self, feature: str, task: str, attempt: int, turn: int) -> list[Note]:
        """The attempt's notes no turn holds yet, now `delivered` with `turn`: the delivery's primary key decides
        between two sessions asking at once (the second one's insert does nothing), so each gets only its own."""
        import psycopg  # noqa: PLC0415  # as transaction

        with contextlib.suppress(psycopg.errors.UndefinedTable), transaction(self.url, create=False) as conn:
            claimed = [int(row[0]) for row in conn.execute(
                "INSERT INTO autobuild_steering_deliveries (note, attempt, state, turn, updated) SELECT n.id, %s,"
                " 'delivered', %s, %s FROM autobuild_steering n WHERE n.repo = %s AND n.feature = %s AND n.task = %s"
                " AND (n.attempt IS NULL OR n.attempt = %s) AND NOT EXISTS (SELECT 1 FROM"
                " autobuild_steering_deliveries d WHERE d.note = n.id AND d.attempt = %s) ORDER BY n.id"
                " ON CONFLICT (note, attempt) DO NOTHING RETURNING note",
                (attempt, turn, now_iso(), self.repo, feature, task, attempt, attempt)).fetchall()]
            rows = conn.execute(f"SELECT {_NOTE}, 'delivered', n.created, n.updated, n.attempt, n.source FROM"
                                " autobuild_steering n WHERE n.id = ANY(%s) ORDER BY n.id", (claimed,)).fetchall()
            return [Note(*row) for row in rows]
        return []  # no note was ever sent to this store

    def mark(self, note_ids: Sequence[int], state: str, attempt: int = 1, turn: int = 0) -> list[int]:
        """As the SQLite queue's: a consumed note stays consumed, and of two callers moving one note at once only
        one is told it moved (the upsert's condition is read under the row's lock)."""
        if not note_ids:
            return []
        now, moved = now_iso(), []
        with transaction(self.url) as conn:
            for note_id in note_ids:
                row = conn.execute(
                    "INSERT INTO autobuild_steering_deliveries AS d (note, attempt, state, turn, updated) VALUES"
                    " (%s, %s, %s, %s, %s) ON CONFLICT (note, attempt) DO UPDATE SET state = EXCLUDED.state,"
                    " turn = EXCLUDED.turn, updated = EXCLUDED.updated WHERE d.state <> 'consumed' AND d.state <>"
                    " EXCLUDED.state RETURNING note", (note_id, attempt, state, turn, now)).fetchone()
                if row is not None:
                    conn.execute("UPDATE autobuild_steering SET state = %s, updated = %s WHERE id = %s",
                                 (state, now, note_id))
                    moved.append(int(note_id))
        return moved


class PostgresControls(TaskControls):
    """The pause, unpause and cancel records of one repository in a Postgres store."""

    def __init__(self, url: str, repo: str) -> None:
        self.url, self.repo = url, repo

    def record(self, feature: str, task: str, action: str, *, now: bool = False, source: str = "cli") -> ControlRecord:
        if action not in ACTIONS:
            raise ValueError(f"unknown control action {action!r}")
        stamp, state = now_iso(), "pending" if action == "cancel" else "recorded"
        with transaction(self.url) as conn:
            row = conn.execute("INSERT INTO autobuild_task_control (repo, feature, task, action, now, source, state,"
                               " created, updated) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                               (self.repo, feature, task, action, now, source, state, stamp, stamp)).fetchone()
        return ControlRecord(int(row[0]), feature, task, action, now, source, state, stamp, stamp)

    def records(self, feature: str, task: str | None = None) -> list[ControlRecord]:
        where, args = ("AND task = %s", (self.repo, feature, task)) if task else ("", (self.repo, feature))
        rows = read(self.url, f"SELECT {_CONTROL} FROM autobuild_task_control WHERE repo = %s AND feature = %s"
                              f" {where} ORDER BY id", args)
        return [ControlRecord(row[0], row[1], row[2], row[3], bool(row[4]), *row[5:]) for row in rows]

    def apply_cancels(self, feature: str, task: str, state: str = "applied") -> int:
        import psycopg  # noqa: PLC0415  # as transaction

        with contextlib.suppress(psycopg.errors.UndefinedTable), transaction(self.url, create=False) as conn:
            cursor = conn.execute("UPDATE autobuild_task_control SET state = %s, updated = %s WHERE repo = %s AND"
                                  " feature = %s AND task = %s AND action = 'cancel' AND state = 'pending'",
                                  (state, now_iso(), self.repo, feature, task))
            return int(cursor.rowcount)
        return 0  # no record was ever made in this store

    def drop_pauses(self, feature: str, task: str) -> int:
        import psycopg  # noqa: PLC0415  # as transaction

        with contextlib.suppress(psycopg.errors.UndefinedTable), transaction(self.url, create=False) as conn:
            cursor = conn.execute("UPDATE autobuild_task_control SET state = 'late', updated = %s WHERE id = (SELECT"
                                  " MAX(id) FROM autobuild_task_control WHERE repo = %s AND feature = %s AND task = %s"
                                  " AND action IN ('pause', 'unpause')) AND action = 'pause' AND state = 'recorded'",
                                  (now_iso(), self.repo, feature, task))
            return int(cursor.rowcount)
        return 0
