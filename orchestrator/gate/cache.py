"""Gate runs as a function of the tree: a run is remembered by (tree, command, setup, environment digest), so the
same tree is never gated twice and the base's run is reused by later runs, resumes, other features and `land`,
as long as the verdict rules are the same (their version, gate/verdict.py VERDICT_RULES, is part of the key).

The tree is the commit's tree without `.autobuild/` (AutoBuild's own reports, committed on task branches, are
never what a gate tests). The environment digest covers the variables the gate sees (the worktree's own path
normalised away, terminal and session noise left out), the main checkout's lockfiles and the mtime of its
shared dependency folders (the repo's venv site-packages, node_modules), so a different command, setup,
environment or lockfile is a different key. A passing run is reused at once; a failing one only once the same
failure has repeated, so a flaky test is never frozen as "red on the base" (a task's run whose failures are all the
base's own is reused at once by a judge that says so, `run(settled=...)`: its verdict is a pass whatever a second
run of those tests shows, so the merge queue doesn't gate again the tree a red base's turn already gated). Stored
as JSON, one file per
repository (`.autobuild/runs/gate-cache.json`); only digests are kept, never a variable's value.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.facts import GateResult
from orchestrator.gate.prepare.environment import gate_env_of, repo_venv
from orchestrator.gate.verdict import VERDICT_RULES
from orchestrator.repo import confined
from orchestrator.repo.git import GitRepo

CACHE_NAME = "gate-cache.json"
"""In the repository's `.autobuild/runs/` (excluded from git): every feature's runs share it (a second feature on
the same base reuses the base's run)."""
MAX_ENTRIES = 500
LOCKFILES = ("uv.lock", "poetry.lock", "Pipfile.lock", "pdm.lock", "requirements.txt", "requirements-dev.txt",
             "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb", "bun.lock",
             "Cargo.lock", "go.sum", "Gemfile.lock", "composer.lock")
# Variables that say where a terminal or a login session is, not what the tests see.
_VOLATILE = frozenset({"PWD", "OLDPWD", "SHLVL", "_", "TERM", "COLORTERM", "COLUMNS", "LINES", "DISPLAY",
                       "WINDOWID", "TMUX", "TMUX_PANE", "STY", "PS1", "PROMPT_COMMAND", "INVOCATION_ID",
                       "JOURNAL_STREAM", "PYTEST_CURRENT_TEST", "XDG_SESSION_ID", "LS_COLORS", "MAIL", "LOGNAME"})
_VOLATILE_PREFIXES = ("SSH_", "TERM_", "ORCHESTRATOR_", "ANTHROPIC_", "CLAUDE", "LANGSMITH_", "LANGCHAIN_", "GPG_",
                      "DBUS_", "VSCODE_")
_WORKTREE = "<worktree>"
_RUN_ENV = "<run-env>"
_ENV_LAYOUT = b"gate-env-own\0"
"""Where the gate's Python environment lives (gate/prepare/environment.py): runs remembered when it was the agents' to
write (a `.pth` line they planted may have passed them) are never reused."""


def env_digest(root: Path, worktree: Path, env: Mapping[str, str]) -> str:
    """What the gate's environment adds to a run's key: its variables (values only as a digest), the main
    checkout's lockfiles, when its shared dependency folders last changed, and what the gate's own venv holds.
    The worktree's path and the run's environment folder are normalised away, so the same tree of another
    feature, in the same environment, has the same key."""
    digest = hashlib.sha256(_ENV_LAYOUT)
    place, run_env = str(worktree), gate_env_of(root, worktree)
    for name in sorted(env):
        if name in _VOLATILE or name.startswith(_VOLATILE_PREFIXES):
            continue
        value = env[name].replace(place, _WORKTREE)
        if run_env is not None:  # each worktree's own redirections, then the gate's env folder
            value = value.replace(str(run_env / "overlay" / worktree.name), f"{_RUN_ENV}/overlay/{_WORKTREE}")
            value = value.replace(str(run_env), _RUN_ENV)
        if name == "PYTHONPATH":  # the worktree's own folders: a function of the tree, not the environment
            value = os.pathsep.join(p for p in value.split(os.pathsep) if not p.startswith(_WORKTREE))
        digest.update(f"{name}={value}\0".encode())
    for lockfile in LOCKFILES:
        path = root / lockfile
        if path.is_file():
            digest.update(f"{lockfile}:".encode() + hashlib.sha256(path.read_bytes()).digest())
    venv = repo_venv(root)
    folders = [*(venv.glob("lib/python*/site-packages") if venv else []), root / "node_modules"]
    for folder in folders:
        with contextlib.suppress(OSError):
            digest.update(f"{folder.name}@{folder.stat().st_mtime_ns}".encode())
    # The gate's venv, layered over the user's, is made anew per feature: what it holds (setup's installs), not
    # when it was made.
    sites = sorted(run_env.glob("venv*/lib/python*/site-packages")) if run_env is not None else []
    for site in sites:
        with contextlib.suppress(OSError):
            digest.update(f"{site.parent.parent.parent.name}/{site.parent.name}:{sorted(os.listdir(site))}".encode())
    return digest.hexdigest()


async def gated_tree(repo: GitRepo, rev: str, cwd: Path | None = None) -> str:
    """A digest of `rev`'s tree without `.autobuild/`: what a gate run actually tests."""
    commit = await repo.head(cwd) if cwd is not None and rev == "HEAD" else rev
    kept = [line for line in await repo.listing(commit) if not line.endswith("\t.autobuild")]
    return hashlib.sha256("\n".join(kept).encode()).hexdigest()


async def worktree_tree(repo: GitRepo, worktree: Path) -> str | None:
    """The gated tree of the worktree's HEAD, or None when the worktree holds changes no commit has (then its
    run can't be keyed by a tree and is neither looked up nor stored)."""
    dirty = await repo.git("status", "--porcelain", "--untracked-files=normal", cwd=worktree, check=False)
    if not dirty.ok or dirty.stdout.strip():
        return None
    return await gated_tree(repo, "HEAD", cwd=worktree)


def cache_key(tree: str, command: str, setup: str | None, environment: str, rules: str = VERDICT_RULES) -> str:
    """A run's key; `rules`, the verdict rules' version (gate/verdict.py): a run remembered with its verdict under
    older rules is never reused (a resumed run gates its tree again)."""
    return hashlib.sha256(json.dumps([tree, command, setup or "", environment, rules]).encode()).hexdigest()[:32]


def _same_failure(a: GateResult, b: GateResult) -> bool:
    return (a["exit_code"], a["failing"], a["tests_failed"]) == (b["exit_code"], b["failing"], b["tests_failed"])


@dataclass
class GateCache:
    """The remembered gate runs of one repository, with what this process ran and reused."""

    path: Path
    runs: int = 0
    reused: int = 0
    _entries: dict[str, dict[str, Any]] | None = None
    _locks: dict[str, asyncio.Lock] = field(default_factory=dict)
    _writing: asyncio.Lock = field(default_factory=asyncio.Lock)
    _reading: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def for_repo(cls, root: Path) -> GateCache:
        return cls(root / ".autobuild" / "runs" / CACHE_NAME)

    def _load(self) -> dict[str, dict[str, Any]]:
        # Read on threads: two first loads at once must share one dict, or a store into the one replaced is lost.
        with self._reading:
            if self._entries is None:
                try:
                    data = json.loads(self.path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    data = {}
                self._entries = data.get("entries", {}) if isinstance(data, dict) else {}
            return self._entries

    def lookup(self, key: str, *, any_run: bool = False) -> GateResult | None:
        """A run to reuse: a pass, or a failure seen at least twice in a row (`any_run`: whatever was seen, for
        what passed in it: a test failing once there is simply not held against a task)."""
        entry = self._load().get(key)
        if not isinstance(entry, dict) or not isinstance(entry.get("result"), dict):
            return None
        result: GateResult = entry["result"]
        if result.get("passed") or any_run or int(entry.get("seen", 1)) >= 2:
            return result
        return None

    async def store(self, key: str, result: GateResult) -> None:
        entries = await asyncio.to_thread(self._load)
        previous = entries.get(key)
        seen = 1
        earlier = previous.get("result") if isinstance(previous, dict) else None
        if isinstance(earlier, dict) and not result["passed"] and not earlier.get("passed") \
                and _same_failure(earlier, result):  # type: ignore[arg-type]
            seen = int(previous.get("seen", 1)) + 1  # type: ignore[union-attr]
        entries.pop(key, None)
        entries[key] = {"result": result, "seen": seen}
        for old in list(entries)[:-MAX_ENTRIES]:
            del entries[old]
        async with self._writing:  # one write at a time, each of the snapshot as it is then (taken before the
            # lock, an older snapshot could be written last and lose a concurrent store's entry)
            text = json.dumps({"entries": entries}, indent=1, sort_keys=False)
            await asyncio.to_thread(_write_atomic, self.path, text)

    async def run(self, key: str | None, gate: Callable[[], Awaitable[GateResult]],
                  settled: Callable[[GateResult], bool] | None = None) -> GateResult:
        """The remembered run for `key`, else `gate()` run now (one at a time per key) and remembered; a failing
        run seen once is reused too when `settled` says it is a pass as it is (its failures all the base's)."""
        if key is None:
            self.runs += 1
            return await gate()
        async with self._locks.setdefault(key, asyncio.Lock()):
            found = await asyncio.to_thread(self.lookup, key)
            if found is None and settled is not None:
                seen = await asyncio.to_thread(self.lookup, key, any_run=True)
                found = seen if seen is not None and settled(seen) else None
            if found is not None:
                self.reused += 1
                return found
            self.runs += 1
            result = await gate()
            await self.store(key, result)
            return result

    def stats(self) -> dict[str, int]:
        return {"gate_runs": self.runs, "gate_runs_reused": self.reused}


def _write_atomic(path: Path, text: str) -> None:
    """As every run file is written (repo/confined.py): the folders from the repository down (`.autobuild/runs`)
    opened without following a link, the file replaced by a temporary one renamed over it (a link planted at its
    name is replaced, never written through)."""
    parts = path.parts
    top = next((i for i in range(len(parts) - 2, -1, -1) if parts[i] == ".autobuild"), None)
    root, below = (Path(*parts[:top]), parts[top:-1]) if top else (path.parent, ())
    root.mkdir(parents=True, exist_ok=True)
    folder = confined.open_folder(root.resolve(), below, "gate cache", make=True)
    try:
        confined.replace_at(folder, path.name, text)
    finally:
        os.close(folder)
