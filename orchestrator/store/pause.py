"""The run's usage-limit pause on disk, beside its reports: a kill during the pause resumes into the same wait,
and `status` shows it ("paused until 14:05, usage limit").

A quota pause (`--max-utilization`) is also kept per credential, in the checkpoint folder under a hash of the
credential (never the credential itself), so every run of the same subscription honours it; on workers sharing a
Postgres store, in that store too, so every machine does."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agents.limits import Pause
from orchestrator.repo import run_files
from orchestrator.settings import environment
from orchestrator.store import traces as trace
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.store.locations import default_checkpoint_dir
from orchestrator.store.quota_store import StoreQuota
from orchestrator.store.run_liveness import run_is_gone

PAUSE_NAME = "usage-limit.json"
QUOTA_DIR = "quota"
_CREDENTIALS = ("CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY")


def pause_path(repo: Path, feature_id: str) -> Path:
    return trace.runs_dir(repo, feature_id) / PAUSE_NAME


def write_pause(path: Path, pause: Pause | None, *, in_run: bool = False) -> None:
    """Record the pause (atomically), or remove the record when the limit is over. `in_run`: the feature's record,
    in its run's folder, written as its reports are (repo/run_files.py: no link followed, one planted in its place
    replaced or removed itself); else the credential's shared record (the checkpoints' folder)."""
    text = None if pause is None else json.dumps({"until": pause.until, "reason": pause.reason, "since": pause.since,
                                                  "kind": pause.kind})
    if in_run and text is None:
        run_files.remove(path, "usage-limit record")
    elif in_run and text is not None:
        run_files.replace(path, text, "usage-limit record")
    elif text is None:
        path.unlink(missing_ok=True)
    else:
        _write_shared(path, text)


def _write_shared(path: Path, text: str) -> None:
    """The credential's record, in the checkpoints' folder (ours, not the repository's)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")  # two runs may write the shared record at once
    temp.write_text(text)
    temp.replace(path)


def read_pause(path: Path) -> Pause | None:
    try:
        data = json.loads(path.read_text())
        return Pause(until=float(data["until"]), reason=str(data["reason"]), since=float(data["since"]),
                     kind=str(data.get("kind") or "limit"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def credential_key(env: Mapping[str, str] | None = None) -> str:
    """Who the sessions' quota belongs to, as a hash: the endpoint and the first credential the CLI would use
    (an OAuth token, an auth token, an API key), else the Claude Code login of its config folder."""
    env = os.environ if env is None else env
    secret = next((f"{name}={env[name]}" for name in _CREDENTIALS if env.get(name)), None)
    login = env.get("CLAUDE_CONFIG_DIR") or str(Path("~/.claude").expanduser())
    identity = f"{env.get('ANTHROPIC_BASE_URL', '')}\n{secret or 'login:' + login}"
    return hashlib.sha256(identity.encode()).hexdigest()[:32]


def quota_path(key: str | None = None, folder: Path | None = None) -> Path:
    """The credential's shared quota pause: `<checkpoint folder>/quota/<hash>.json`."""
    return (folder or default_checkpoint_dir()) / QUOTA_DIR / f"{key or credential_key()}.json"


@dataclass(frozen=True)
class PauseRecords:
    """Where a run keeps its pause: its own record (for `status` and a resume), and the credential's shared
    quota record (for every run of the same subscription)."""

    feature: Path
    shared: Path
    store: StoreQuota | None = None
    """Workers on a shared Postgres: the credential's record there too, so every machine honours it."""

    def write(self, pause: Pause | None) -> None:
        write_pause(self.feature, pause, in_run=True)
        shared = read_pause(self.shared)
        if pause is not None and pause.kind == "quota":
            if shared is None or shared.until < pause.until:
                write_pause(self.shared, pause)
            if self.store is not None:
                self.store.write(pause)
        elif pause is None:
            if shared is not None and shared.until <= time.time():
                write_pause(self.shared, None)  # over for everyone (a later window another run found stays)
            if self.store is not None:
                self.store.write(None)

    def read_shared(self) -> Pause | None:
        found = [p for p in (read_pause(self.shared), self.store.read() if self.store else None) if p is not None]
        return max(found, key=lambda pause: pause.until) if found else None


def shared_store(key: str | None = None) -> StoreQuota | None:
    """The workers' shared store for quota pauses (`autobuild serve` sets ORCHESTRATOR_LOCK_DB), else None."""
    url = environment().lock_db
    return StoreQuota(url, key or credential_key()) if url else None


def describe(pause: Pause | None, now: float | None = None) -> str | None:
    """"paused until 14:05, usage limit (rate limited (429))" while the pause is in force, else None."""
    if pause is None or pause.until <= (now or time.time()):
        return None
    return f"paused until {time.strftime('%H:%M', time.localtime(pause.until))}, {_what(pause)}"


def of_run(repo: Path, feature_id: str, store: CheckpointStore, thread: str, now: float | None = None) -> str | None:
    """What `status` says of a run's pause: while in force, `describe`'s line; a usage limit past its time, "paused
    since 14:02, usage limit (…): probing whether it is over" (the session that hit it asks again, the others wait;
    the run removes the record once one gets through); None without a record, for a quota past its reset (the
    session that read it runs on), or once the run's process is gone (`status` then says it stopped, and `resume`
    waits out what is left of the pause). A Postgres store can't tell a gone run: only a pause in force shows."""
    pause = read_pause(pause_path(repo, feature_id))
    if pause is None or run_is_gone(store, thread):
        return None
    if (said := describe(pause, now)) is not None or pause.kind != "limit" or store.is_postgres:
        return said
    return (f"paused since {time.strftime('%H:%M', time.localtime(pause.since))}, {_what(pause)}: probing whether"
            " it is over")


def _what(pause: Pause) -> str:
    return f"{'quota' if pause.kind == 'quota' else 'usage limit'} ({pause.reason})"
