"""Where things are: the target repo from any folder inside it, and its checkpoint DB (remembered per feature)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

import platformdirs

from orchestrator.errors import InputError
from orchestrator.repo.commands import git_sync
from orchestrator.settings.environment import environment

POSTGRES_SCHEMES = ("postgres://", "postgresql://")
REMEMBERED_DB = Path(".autobuild") / "db.json"
"""Which checkpoint DB each feature's run used (a custom `--db`), so later commands need no flag."""


def find_repo(start: Path) -> Path:
    """The repo `start` is in, as its main worktree's top level (from a subfolder or a task worktree too);
    `start` itself when it is not inside a git repository (the command then says so)."""
    start = start.expanduser()
    if not start.exists():
        raise InputError(f"--repo {start} does not exist: pass the folder of your git repository")
    listed = git_sync(start if start.is_dir() else Path("."), "-C", str(start), "worktree", "list", "--porcelain")
    first = next((line for line in listed.stdout.splitlines() if line.startswith("worktree ")), None)
    if not listed.ok or first is None or "\nbare" in listed.stdout.split("\n\n", 1)[0]:
        return start.resolve()
    return Path(first.removeprefix("worktree ")).resolve()


def default_checkpoint_dir() -> Path:
    """`ORCHESTRATOR_CHECKPOINT_DIR` when set, else the checkout's own `checkpoints/` when installed from it, else
    the per-user data folder."""
    if configured := environment().checkpoint_dir.strip():
        return Path(configured).expanduser().resolve()
    checkout = Path(__file__).resolve().parents[2]  # orchestrator/store/locations.py → the checkout
    if (checkout / "pyproject.toml").is_file() and (checkout / "checkpoints").is_dir():
        return checkout / "checkpoints"
    return Path(platformdirs.user_data_dir("autobuild", appauthor=False)) / "checkpoints"


def default_db(repo: Path) -> str:
    """One SQLite file per repository, named after it."""
    real = str(repo.resolve())
    digest = hashlib.sha1(real.encode(), usedforsecurity=False).hexdigest()[:8]
    return str(default_checkpoint_dir() / f"{repo.resolve().name}-{digest}.sqlite")


def normalize_db(location: str) -> str:
    """A SQLite path made absolute, or a postgresql:// URL as given; other schemes are refused."""
    if "://" in location and not location.startswith(POSTGRES_SCHEMES):
        scheme = location.split("://", 1)[0]
        raise InputError(f"unsupported --db scheme {scheme}://: use a SQLite file path or postgresql://…")
    if location.startswith(POSTGRES_SCHEMES):
        return location
    return str(Path(location).expanduser().resolve())


def without_credentials(location: str) -> str:
    """A DB location safe to write down: a URL loses its password (user info and `password=` parameter)."""
    if not location.startswith(POSTGRES_SCHEMES):
        return location
    parts = urlsplit(location)
    host = parts.netloc.rpartition("@")[2]
    user = parts.username or ""
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k.lower() not in ("password", "sslpassword")])
    # Built by hand: urlunsplit drops the `//` of a host-less URL (postgresql:///db?host=/run/postgresql).
    return f"{parts.scheme}://{f'{user}@{host}' if user else host}{parts.path}{'?' + query if query else ''}"


def _remembered(repo: Path) -> dict[str, object]:
    path = repo / REMEMBERED_DB
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.stat().st_size < 1_000_000 else {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def remembered_db(repo: Path, feature: str | None) -> str | None:
    """The DB the feature's last run used (or, without a feature, the last run's), if it was not the default."""
    data = _remembered(repo)
    features = data.get("features")
    if feature is not None:
        chosen = features.get(feature) if isinstance(features, dict) else None
    else:
        chosen = data.get("last")
    return chosen if isinstance(chosen, str) and chosen else None


def remember_db(repo: Path, feature: str, location: str) -> None:
    """Note the DB a run uses, so `status`/`show`/`history`/`resume` find it without `--db` (no password)."""
    data = _remembered(repo)
    features = data.get("features") if isinstance(data.get("features"), dict) else {}
    assert isinstance(features, dict)
    safe = without_credentials(location)
    if features.get(feature) == safe and data.get("last") == safe:
        return
    features[feature] = safe
    path = repo / REMEMBERED_DB
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(f".{os.getpid()}.tmp")
    temp.write_text(json.dumps({"schema_version": 1, "features": features, "last": safe}, indent=2) + "\n")
    try:
        temp.replace(path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


def choose_db(repo: Path, chosen: str | None, feature: str | None = None) -> str:
    """The DB a command uses: the layered setting (`--db`, ORCHESTRATOR_DB, config), else the one the
    feature's run remembered, else the default file for this repo."""
    if chosen:
        return normalize_db(chosen)
    remembered = remembered_db(repo, feature)
    if remembered:
        return remembered
    return default_db(repo)
