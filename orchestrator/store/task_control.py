"""Pause, unpause and cancel of a task (`autobuild pause|unpause|cancel`, the page): records in a table of our own
beside the steering notes (`autobuild_task_control`, in SQLite here, in Postgres through store/steering_pg.py),
never in a thread's checkpoint. The task reads them at its next node boundary: the latest pause or unpause says
whether it is paused; a cancel waits (`pending`) until the task ends `cancelled` with it (`applied`), so a `resume`
after it runs the task again."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from orchestrator.store.steering import Transaction, now_iso

ACTIONS = ("pause", "unpause", "cancel")
_TABLE = """CREATE TABLE IF NOT EXISTS autobuild_task_control (id INTEGER PRIMARY KEY AUTOINCREMENT,
feature TEXT NOT NULL, task TEXT NOT NULL, action TEXT NOT NULL, now INTEGER NOT NULL DEFAULT 0,
source TEXT NOT NULL, state TEXT NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL)"""


@dataclass(frozen=True)
class ControlRecord:
    """One pause, unpause or cancel of a task."""

    id: int
    feature: str
    task: str
    action: str
    now: bool
    """A pause that interrupts the running session (its work kept) instead of waiting for the node's end."""
    source: str
    state: str
    """`pending` (a cancel not yet applied), `applied`, `late` (the task ended before it applied: a cancel, or a
    pause that found no node boundary left, as an approval on its way to the merge), or `recorded` (pause and
    unpause)."""
    created: str
    updated: str


@dataclass(frozen=True)
class TaskControl:
    """What the records say a task should do now."""

    paused: ControlRecord | None = None
    """The pause in force (the latest pause or unpause is a pause); None: not paused."""
    cancel: ControlRecord | None = None
    """A cancel not yet applied."""


class TaskControls:
    """The control records in one SQLite checkpoint file (short transactions, one connection a call)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def record(self, feature: str, task: str, action: str, *, now: bool = False, source: str = "cli") -> ControlRecord:
        if action not in ACTIONS:
            raise ValueError(f"unknown control action {action!r}")
        stamp = now_iso()
        state = "pending" if action == "cancel" else "recorded"
        with Transaction(self.path, (_TABLE,)) as conn:
            cursor = conn.execute("INSERT INTO autobuild_task_control (feature, task, action, now, source, state,"
                                  " created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                  (feature, task, action, int(now), source, state, stamp, stamp))
            record_id = int(cursor.lastrowid or 0)
        return ControlRecord(record_id, feature, task, action, now, source, state, stamp, stamp)

    def records(self, feature: str, task: str | None = None) -> list[ControlRecord]:
        """The feature's records (or one task's), oldest first; never creates the store."""
        if not self.path.is_file():
            return []
        where, args = ("feature = ? AND task = ?", (feature, task)) if task else ("feature = ?", (feature,))
        with Transaction(self.path, ()) as conn:
            if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'autobuild_task_control'"
                            ).fetchone() is None:
                return []
            rows = conn.execute("SELECT id, feature, task, action, now, source, state, created, updated FROM"
                                f" autobuild_task_control WHERE {where} ORDER BY id", args).fetchall()
        return [ControlRecord(row[0], row[1], row[2], row[3], bool(row[4]), *row[5:]) for row in rows]

    def control(self, feature: str, task: str) -> TaskControl:
        """Whether the task is paused, and a cancel waiting for it."""
        paused: ControlRecord | None = None
        cancel: ControlRecord | None = None
        for record in self.records(feature, task):
            if record.action in ("pause", "unpause"):
                paused = record if record.action == "pause" and record.state != "late" else None
            elif record.state == "pending":
                cancel = record
        return TaskControl(paused=paused, cancel=cancel)

    def apply_cancels(self, feature: str, task: str, state: str = "applied") -> int:
        """The task's pending cancels are closed: `applied` (it ended `cancelled`) or `late` (it ended otherwise
        before reaching a node boundary: an approval already on its way to the merge). How many were."""
        if not self.path.is_file():
            return 0
        with Transaction(self.path, (_TABLE,), immediate=True) as conn:
            cursor = conn.execute("UPDATE autobuild_task_control SET state = ?, updated = ? WHERE"
                                  " feature = ? AND task = ? AND action = 'cancel' AND state = 'pending'",
                                  (state, now_iso(), feature, task))
            return cursor.rowcount

    def drop_pauses(self, feature: str, task: str) -> int:
        """The task ended with a pause in force (sent after its last node boundary): it is closed `late`, so a
        `resume` that runs the task again does not stop at a pause meant for the run that ended. How many were."""
        if not self.path.is_file():
            return 0
        with Transaction(self.path, (_TABLE,), immediate=True) as conn:
            cursor = conn.execute("UPDATE autobuild_task_control SET state = 'late', updated = ? WHERE id = (SELECT"
                                  " MAX(id) FROM autobuild_task_control WHERE feature = ? AND task = ? AND action IN"
                                  " ('pause', 'unpause')) AND action = 'pause' AND state = 'recorded'",
                                  (now_iso(), feature, task))
            return cursor.rowcount
