"""Checkpoint storage: SQLite (default) or Postgres, each with a writer for runs, a per-thread lock and a
read-only reader for status/history/show (safe while a run is live)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import zlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from orchestrator.errors import InputError, RunLockedError, StoreError, StoreUnavailableError
from orchestrator.settings import environment
from orchestrator.store.locations import POSTGRES_SCHEMES, choose_db, without_credentials
from orchestrator.store.sqlite_said import sqlite_said


class _Checked:
    """The saver's serializer, with a record that can't be read (a damaged blob or write) turned into one
    actionable line instead of a traceback from deep inside the serializer."""

    def __init__(self, inner: Any, store: str) -> None:
        self.inner, self.store = inner, store

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        typed: tuple[str, bytes] = self.inner.dumps_typed(obj)
        return typed

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        try:
            return self.inner.loads_typed(data)
        except Exception as exc:  # noqa: BLE001 - whatever the serializer raises on garbage
            raise InputError(damaged(self.store, exc)) from None


_GARBLED = (ValueError, TypeError, KeyError, UnicodeError)
"""What the savers raise on a row whose bytes are not what they wrote."""


def damaged(store: str, exc: BaseException) -> str:
    detail = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else type(exc).__name__
    return (f"the checkpoint DB {store} holds a record that can't be read ({detail}): it is damaged; move it"
            " aside (or pass another --db) and start over with `run --fresh`")


def checked(saver: BaseCheckpointSaver[Any], store: str) -> BaseCheckpointSaver[Any]:
    """`saver` reading through `_Checked` (see there)."""
    saver.serde = _Checked(saver.serde, store)
    return saver


class Reader:
    """Read-only queries over one checkpoint store."""

    def __init__(self, saver: BaseCheckpointSaver[Any], query: Any, writes_table: str, mark: str) -> None:
        self.saver = saver
        self._query = query
        self._writes = writes_table
        self._mark = mark

    def _rows(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        return list(self._query(sql.replace("?", self._mark), params))

    def threads(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id")]

    def namespaces(self, thread_id: str, mark: str) -> list[str]:
        """Checkpoint namespaces of the thread whose last segment starts with `mark` (e.g. task subgraphs)."""
        sql = "SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = ? AND checkpoint_ns LIKE ?"
        rows = [r[0] for r in self._rows(sql, thread_id, f"%{mark}%")]
        return [ns for ns in rows if ns.rsplit("|", 1)[-1].startswith(mark)]

    def latest(self, thread_id: str, namespace: str = "") -> CheckpointTuple | None:
        try:
            return self.saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": namespace}})
        except _GARBLED as exc:  # the saver's own parsing of a damaged row (its metadata JSON, say)
            raise InputError(damaged(str(getattr(self.saver.serde, "store", "")), exc)) from None

    def timeline(self, thread_id: str, namespace: str = "") -> list[CheckpointTuple]:
        config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": namespace}}
        try:
            return list(reversed(list(self.saver.list(config))))  # type: ignore[arg-type]
        except _GARBLED as exc:
            raise InputError(damaged(str(getattr(self.saver.serde, "store", "")), exc)) from None

    def produced_by(self, thread_id: str) -> dict[str, list[str]]:
        """checkpoint id -> the nodes whose writes were made from it (i.e. that produced its successor)."""
        found: dict[str, list[str]] = {}
        sql = f"SELECT DISTINCT checkpoint_id, task_path FROM {self._writes} WHERE thread_id = ?"
        for checkpoint_id, task_path in self._rows(sql, thread_id):
            node = task_path.split(", ")[1] if task_path.startswith("~__pregel_pull, ") else "task"
            if node not in found.setdefault(checkpoint_id, []):
                found[checkpoint_id].append(node)
        return found


@dataclass(frozen=True)
class CheckpointStore:
    """Where checkpoints live: a SQLite file path or a postgresql:// URL."""

    location: str

    @classmethod
    def for_repo(cls, repo: Path, chosen: str | None, feature: str | None = None) -> CheckpointStore:
        """The store a command on `repo` uses: the layered `db` setting, else the feature's remembered one,
        else the default file for the repo (see locations.choose_db)."""
        return cls(choose_db(repo, chosen, feature))

    @property
    def is_postgres(self) -> bool:
        return self.location.startswith(POSTGRES_SCHEMES)

    @property
    def path(self) -> Path:
        return Path(self.location)

    def __str__(self) -> str:
        return without_credentials(self.location)  # never print a password

    def check(self) -> None:
        """Fail with one line (credentials masked) unless this store can be used; writes nothing."""
        if "://" in self.location and not self.is_postgres:
            scheme = self.location.split("://", 1)[0]
            raise InputError(f"unsupported --db scheme {scheme}://: use a SQLite file path or postgresql://…")
        if self.is_postgres:
            self.saver_check()
            return
        path = self.path
        if path.is_dir():
            raise InputError(f"--db {path} is a directory: give a file path for the SQLite checkpoint DB")
        parent = next((p for p in path.parents if p.exists()), None)
        if parent is not None and not parent.is_dir():
            raise InputError(f"--db {path}: {parent} is a file, not a folder: choose another path")
        if parent is not None and not (os.access(parent, os.W_OK) and _can_create_in(parent)):
            raise InputError(f"--db {path}: {parent} is not writable: choose another path")
        if path.is_file() and path.stat().st_size:
            with path.open("rb") as handle:
                if handle.read(16) != b"SQLite format 3\x00":
                    raise InputError(f"--db {path} exists and is not a SQLite database: choose another path")

    def identity(self) -> tuple[int, int] | None:
        """(device, inode) of a SQLite store, to notice it being deleted or replaced mid-run."""
        if self.is_postgres:
            return (0, 0)
        try:
            stat = self.path.stat()
        except OSError:
            return None
        return (stat.st_dev, stat.st_ino)

    def exists(self) -> bool:
        if not self.is_postgres:
            return self.path.is_file() and _has_checkpoints(self.path)
        try:
            with self.reader() as reader:
                reader.threads()
        except InputError:
            return False
        return True

    @contextlib.asynccontextmanager
    async def saver(self) -> AsyncIterator[BaseCheckpointSaver[Any]]:
        """The writer a run uses (one connection; Postgres tables are created on first use)."""
        if self.is_postgres:
            import psycopg  # noqa: PLC0415 - optional dependency, only for postgresql:// stores

            postgres = _postgres()
            try:
                async with postgres.AsyncPostgresSaver.from_conn_string(self.location) as saver:
                    await saver.setup()
                    yield checked(saver, str(self))
            except psycopg.Error as exc:  # the run's own steps too: their connection is this one
                raise self.lost(exc) from None
            return
        try:
            async with AsyncSqliteSaver.from_conn_string(str(self.path)) as saver:
                # Another process holding a write lock is waited for, up to ORCHESTRATOR_DB_LOCK_TIMEOUT seconds.
                wait_ms = environment().db_lock_wait_ms()
                await saver.conn.execute(f"PRAGMA busy_timeout = {wait_ms}")
                try:
                    yield checked(saver, str(self))
                except sqlite3.Error as exc:  # the run's own steps: a lock held past the wait, say (exit 1)
                    raise StoreError(f"{sqlite_said(exc, self.path)}; the run stopped, `resume` goes on from"
                                     " its last checkpoint") from None
        except sqlite3.Error as exc:  # opening it (exit 2)
            raise unavailable(exc, self.path) from None

    @contextlib.contextmanager
    def lock(self, thread_id: str) -> Iterator[None]:
        """One orchestrator per thread: a second one refuses (flock for SQLite, an advisory lock on Postgres)."""
        if self.is_postgres:
            with self._pg_lock(thread_id):
                yield
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.lock_file(thread_id).open("a+") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                raise RunLockedError(
                    f"{thread_id} is already being run by pid {holder}: wait for it, or stop it and resume"
                ) from None
            handle.seek(0)
            handle.truncate()
            handle.write(str(os.getpid()))
            handle.flush()
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def lock_file(self, thread_id: str) -> Path:
        """A SQLite store's run lock of the thread (`lock`): an flock its run holds, naming the run's pid."""
        return self.path.with_name(f"{self.path.name}.{thread_id.replace(':', '.')}.lock")

    @contextlib.contextmanager
    def _pg_lock(self, thread_id: str) -> Iterator[None]:
        import psycopg  # noqa: PLC0415 - optional dependency, only for postgresql:// stores

        key = zlib.crc32(f"autobuild:{thread_id}".encode())
        try:
            conn = psycopg.connect(self.location, autocommit=True)
        except psycopg.Error as exc:
            raise self.lost(exc) from None
        with conn:
            row = conn.execute("SELECT pg_try_advisory_lock(%s), pg_backend_pid()", (key,)).fetchone()
            if not row or not row[0]:
                raise RunLockedError(f"{thread_id} is already being run by another orchestrator (Postgres advisory"
                                     " lock held): wait for it, or stop it and resume")
            try:
                yield
            finally:
                with contextlib.suppress(psycopg.Error):  # a lost session has released its advisory lock itself
                    conn.execute("SELECT pg_advisory_unlock(%s)", (key,))

    def unreadable(self, exc: Exception) -> StoreUnavailableError:
        """The Postgres driver's error while reading or pruning, as ours (exit 2): one line naming the store."""
        return StoreUnavailableError(f"checkpoint DB {self}: {self._said(exc)}: not a"
                                     " checkpoint store AutoBuild can read (another program's tables, or damaged)"
                                     " or the server went away")

    def lost(self, exc: Exception) -> StoreError:
        """The Postgres driver's error as ours: the server refused or ended the run's connection (exit 1)."""
        return StoreError(f"checkpoint DB {self}: {self._said(exc)}: the run stopped; `resume` goes on from its"
                          " last checkpoint once the server is back")

    def _said(self, exc: Exception) -> str:
        """The driver's first line, the store's password masked."""
        said = str(exc).strip()
        return (said.splitlines()[0] if said else type(exc).__name__).replace(self.location, str(self))

    @contextlib.contextmanager
    def reader(self) -> Iterator[Reader]:
        """Read-only access: never creates the store, never takes a write lock."""
        if self.is_postgres:
            import psycopg  # noqa: PLC0415 - optional dependency
            from psycopg.rows import dict_row  # noqa: PLC0415

            try:
                pg = psycopg.connect(self.location, autocommit=True, row_factory=dict_row)
            except psycopg.OperationalError as exc:
                raise InputError(f"cannot connect to {self}: {str(exc).strip().splitlines()[0]}") from None
            with pg:
                pg.execute("SET default_transaction_read_only = on")
                saver = checked(_postgres().PostgresSaver(pg), str(self))

                def query(sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
                    return [tuple(row.values()) for row in pg.execute(sql, params).fetchall()]

                try:
                    yield Reader(saver, query, "checkpoint_writes", "%s")
                except psycopg.errors.UndefinedTable:
                    raise InputError(f"no checkpoints in {self}: nothing has run there yet") from None
                except psycopg.Error as exc:  # tables of another shape, a lost connection: ours, one line
                    raise self.unreadable(exc) from None
            return
        if not self.path.is_file():
            raise InputError(f"no checkpoint DB at {self.path}: nothing has run for this repo yet (or pass --db)")
        try:
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False, timeout=5)
        except sqlite3.Error as exc:
            raise unavailable(exc, self.path) from None
        try:
            if not _has_checkpoints(self.path, conn):  # a run's first moment: the file made, its tables not yet
                raise InputError(f"no checkpoints in {self.path} yet: nothing has run for this repo yet (or pass"
                                 " --db)")
            saver = checked(SqliteSaver(conn), str(self))
            yield Reader(saver, lambda sql, params: conn.execute(sql, params).fetchall(), "writes", "?")
        except sqlite3.Error as exc:
            raise unavailable(exc, self.path) from None
        finally:
            conn.close()

    def saver_check(self) -> None:
        """Connect to a Postgres store once: unreachable is a user error, with the password masked."""
        try:
            import psycopg  # noqa: PLC0415 - optional dependency
        except ImportError:
            raise InputError("postgresql:// needs `pip install 'autobuild[postgres]'`") from None
        try:
            with psycopg.connect(self.location, connect_timeout=5):
                pass
        except psycopg.Error as exc:
            detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(f"cannot use {self}: {detail.replace(self.location, str(self))}") from None

    def delete_threads(self, thread_ids: list[str]) -> None:
        """Prune threads (clean --db); the only write outside a run."""
        if self.is_postgres:
            import psycopg  # noqa: PLC0415 - optional dependency

            try:
                with psycopg.connect(self.location, autocommit=True) as pg:
                    for table in ("checkpoint_writes", "checkpoint_blobs", "checkpoints"):
                        for thread in thread_ids:
                            pg.execute(f"DELETE FROM {table} WHERE thread_id = %s", (thread,))
            except psycopg.Error as exc:
                raise self.unreadable(exc) from None
            return
        try:
            with sqlite3.connect(self.path, timeout=5) as conn:
                for thread in thread_ids:
                    conn.execute("DELETE FROM checkpoints WHERE thread_id = ?", (thread,))
                    conn.execute("DELETE FROM writes WHERE thread_id = ?", (thread,))
        except sqlite3.Error as exc:
            raise unavailable(exc, self.path) from None


TABLES_MISSING: tuple[type[Exception], ...] = (sqlite3.OperationalError,)
"""What reading a SQLite store whose tables were never made raises (a Postgres one says so as an InputError)."""


def unavailable(exc: sqlite3.Error, path: Path | None = None) -> StoreUnavailableError:
    """SQLite's error as ours: the one line a command ends with (exit 2), a damaged file said as one."""
    return StoreUnavailableError(sqlite_said(exc, path))


def _has_checkpoints(path: Path, conn: sqlite3.Connection | None = None) -> bool:
    """Whether the SQLite file holds the checkpoint table: a run makes the file a moment before its tables, and a
    note or a pause sent first makes only their own (read as no run yet, never as a file that can't be opened)."""
    sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'"
    if conn is not None:
        return conn.execute(sql).fetchone() is not None
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)) as probe:
            return probe.execute(sql).fetchone() is not None
    except sqlite3.Error:
        return True  # unreadable: the reader says why in its own words


def _can_create_in(folder: Path) -> bool:
    """Whether a file can really be made in `folder` (root passes os.access checks where the kernel or a
    read-only mount still refuses: /proc, /sys, a read-only volume); the probe file is removed at once."""
    probe = folder / f".autobuild-probe-{os.getpid()}"
    try:
        probe.touch(exist_ok=False)
    except OSError:
        return False
    probe.unlink(missing_ok=True)
    return True


def _postgres() -> Any:
    try:
        import langgraph.checkpoint.postgres as sync  # noqa: PLC0415 - optional dependency
        from langgraph.checkpoint.postgres import aio  # noqa: PLC0415
    except ImportError:
        raise InputError("postgresql:// needs `pip install 'autobuild[postgres]'`") from None

    class Namespace:
        AsyncPostgresSaver = aio.AsyncPostgresSaver
        PostgresSaver = sync.PostgresSaver

    return Namespace
