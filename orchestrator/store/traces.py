"""Traces: every event as a JSON line, a task's under `.autobuild/runs/FEAT/TASK/trace.jsonl`, the feature's own
(start, end, usage-limit pauses) under `.autobuild/runs/FEAT/trace.jsonl`. Each line carries an `id`, one more than
the last line's in its file, whichever process wrote that (a resumed run, another worker): the durable event log that
`autobuild logs` reads and resumes from (store/event_log.py).

Inside a running event loop (a graph run, served or not) appends go to one writer thread, in order, so a node
never blocks the loop on a file write; `flushed()` waits until every line handed over so far is on disk (the graph
awaits it at the end of every node, so each checkpoint finds its trace as complete as a synchronous write left it).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath
from typing import Any

from orchestrator.errors import InputError
from orchestrator.repo import confined, run_files

_WRITER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="autobuild-trace")
"""One thread: lines land in the order they were handed over, across every trace file."""
_FAILED: list[BaseException] = []
_FAILED_LOCK = threading.Lock()
_LAST_IDS: dict[Path, tuple[int, int]] = {}
"""Per trace file: its size after our last append and the id that line took (a different size: another writer's
lines since, so the last id is read from the file again)."""
_IDS_LOCK = threading.Lock()


def runs_dir(repo: Path, feature_id: str, task_id: str | None = None) -> Path:
    base = repo / ".autobuild" / "runs" / feature_id
    return base / task_id if task_id else base


def append(repo: Path, feature_id: str, task_id: str | None, event: dict[str, Any]) -> None:
    """One event into the task's trace, or the feature's when `task_id` is None: written at once outside an event
    loop, by the writer thread inside one (its time is taken now either way)."""
    relative = PurePosixPath(runs_dir(Path(), feature_id, task_id).as_posix()) / "trace.jsonl"
    record = {"time": round(time.time(), 3), **({"task": task_id} if task_id else {}), **event}
    in_order(_write, repo, relative, record)


def in_order(write: Callable[..., object], *args: Any) -> None:
    """`write(*args)` now outside an event loop; inside one, on the writer thread after every write handed over
    before it (a failure raises at the next `flushed()`)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        write(*args)
        return
    _WRITER.submit(_noting_failure, write, *args)


def _write(repo: Path, relative: PurePosixPath, record: dict[str, Any]) -> None:
    """Under the repo, no symlink followed (repo/confined.py): a link put in `.autobuild/runs` can't take it. The
    line's `id` is taken here, where appends are in order, under a lock (a write outside an event loop)."""
    path = repo.resolve() / relative
    with _IDS_LOCK:
        size, last = _LAST_IDS.get(path, (-1, 0))
        if _size(path) != size:
            last = max((_id(line) for line in read_lines(path)), default=0)
        text = json.dumps({"id": last + 1, **{k: v for k, v in record.items() if k != "id"}}, default=str) + "\n"
        confined.append_under(repo, relative, text, "trace")
        _LAST_IDS[path] = (_size(path), last + 1)


def _size(path: Path) -> int:
    try:
        return path.stat(follow_symlinks=False).st_size
    except FileNotFoundError:
        return 0


def _id(event: dict[str, Any]) -> int:
    value = event.get("id")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _noting_failure(write: Callable[..., object], *args: Any) -> None:
    try:
        write(*args)
    except (OSError, InputError) as exc:  # raised where the caller waits (`flushed`), as a synchronous write would
        with _FAILED_LOCK:
            _FAILED.append(exc)


async def flushed() -> None:
    """Every line appended so far is written (the writer thread runs in order: a no-op behind them marks the
    point); a write that failed meanwhile raises here."""
    await asyncio.get_running_loop().run_in_executor(_WRITER, lambda: None)
    with _FAILED_LOCK:
        failed = _FAILED.pop(0) if _FAILED else None
        _FAILED.clear()
    if failed is not None:
        raise failed


def read(repo: Path, feature_id: str, task_id: str | None) -> list[dict[str, Any]]:
    """The task's trace, or the feature's when `task_id` is None. A line that is not a JSON object (one cut short
    by a kill mid-write) is left out: the feature report reads traces at the end of a run and must not fail on it."""
    return read_lines(runs_dir(repo, feature_id, task_id) / "trace.jsonl")


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of one trace file, in order (see `read`)."""
    try:
        text = run_files.read(path, "trace")
    except InputError:
        return []  # a link on its path: not read (the feature report and a pull request carry what is read)
    events = []
    for line in (text or "").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events
