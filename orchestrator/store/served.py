"""Served runs in the workers' Postgres: which engine thread (an id, not the feature's name as a CLI run's) holds a
feature of a repository, read from the engine's own `thread` table by the `{repo_url, feature}` metadata `submit`
gives it; and the repository folder a served thread works in on this worker. Read-only."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from orchestrator.settings import served_repo_root
from orchestrator.store.checkpoints import CheckpointStore


@dataclass(frozen=True)
class ServedThread:
    """One feature run queued on the workers."""

    thread_id: str
    feature: str
    repo_url: str
    """What `submit` named: a folder the workers share, or a git URL (the worker works in its own clone)."""
    status: str
    created: str
    given: str = ""
    """What its first run was given to work on (`repo`, a folder; `repo_url`, a URL), as the worker checked it;
    "" when no run took input (the metadata is the client's word, not what ran)."""


def served_threads(store: CheckpointStore, feature: str | None = None, repo_url: str | None = None,
                   limit: int = 200) -> list[ServedThread]:
    """The engine's threads in the store, newest first (of one feature, of one repository); none in a store no
    worker uses (no `thread` table: a CLI run's Postgres)."""
    if not store.is_postgres:
        return []
    import psycopg  # noqa: PLC0415  # the `postgres` extra: only a Postgres store gets here

    where, args = ["metadata_json ? 'feature'"], []
    for key, value in (("feature", feature), ("repo_url", repo_url)):
        if value is not None:
            where.append(f"metadata_json->>'{key}' = %s")
            args.append(value)
    try:
        with psycopg.connect(store.location, autocommit=True, connect_timeout=10) as conn:
            conn.execute("SET default_transaction_read_only = on")
            rows = conn.execute("SELECT thread_id, metadata_json->>'feature', COALESCE(metadata_json->>'repo_url', ''),"
                                " status, created_at::text, COALESCE((SELECT COALESCE(r.input->>'repo_url',"
                                " r.input->>'repo') FROM runs r WHERE r.thread_id = thread.thread_id AND"
                                " (r.input ? 'repo' OR r.input ? 'repo_url') ORDER BY r.created_at LIMIT 1), '')"
                                " FROM thread WHERE " + " AND ".join(where) +
                                " ORDER BY created_at DESC LIMIT %s", (*args, limit)).fetchall()
    except psycopg.errors.UndefinedTable:
        return []
    return [ServedThread(*(str(value) for value in row)) for row in rows]


def thread_of(store: CheckpointStore, repo: Path, feature: str) -> str:
    """The thread a feature's checkpoints are in: its own name (a CLI run's), else the newest served thread of it
    on this repository that did not err (a run the feature lock refused leaves an errored one), else its name."""
    if not store.is_postgres:
        return feature
    with store.reader() as reader:
        if reader.latest(feature) is not None:
            return feature
    found = sorted(served_threads(store, feature, str(Path(repo).resolve())), key=lambda t: t.status == "error")
    return found[0].thread_id if found else feature


def worked_in(thread: ServedThread, workspace: Path) -> Path | None:
    """The folder a served thread's run works in on this worker: the folder its run was given (only below the
    folder the worker works on in place, when it has one: as the run itself was checked), or this worker's clone of
    its URL; None when no run of it took input, or its folder is not one this worker may work in."""
    given = thread.given
    if not given:
        return None
    if "://" in given or "@" in given.split("/", 1)[0]:
        from orchestrator.repo.remote import clone_path  # noqa: PLC0415  # only for a run by URL

        return clone_path(workspace, given)
    folder, allowed = Path(given).resolve(), served_repo_root()
    return None if allowed is not None and not folder.is_relative_to(allowed) else folder
