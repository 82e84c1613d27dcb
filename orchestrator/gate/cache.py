"""Gate runs as a function of the tree: a run is remembered by (tree, command, setup, environment digest), so the
same tree is never gated twice in a run and the base's run is reused by later runs, resumes and `land`.

The tree is the commit's tree without `.autobuild/` (AutoBuild's own reports, committed on task branches, are
never what a gate tests). The environment digest covers the variables the gate sees (the worktree's own path
normalised away, terminal and session noise left out), the main checkout's lockfiles and the mtime of its
shared dependency folders (the repo's venv site-packages, node_modules), so a different command, setup,
environment or lockfile is a different key. A passing run is reused at once; a failing one only once the same
failure has repeated, so a flaky test is never frozen as "red on the base". Stored as JSON with the run's
reports (`.autobuild/runs/<FEAT>/gate-cache.json`); only digests are kept, never a variable's value.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.facts import GateResult, GateSetup
from orchestrator.gate.baseline import check_gate, choose_setup
from orchestrator.gate.detect import choose_gate
from orchestrator.gate.environment import gate_env, repo_venv
from orchestrator.gate.judge import unusable_base
from orchestrator.repo.git import GitRepo

CACHE_NAME = "gate-cache.json"
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


def env_digest(root: Path, worktree: Path, env: Mapping[str, str]) -> str:
    """What the gate's environment adds to a run's key: its variables (values only as a digest), the main
    checkout's lockfiles, and when its shared dependency folders last changed."""
    digest = hashlib.sha256()
    place = str(worktree)
    for name in sorted(env):
        if name in _VOLATILE or name.startswith(_VOLATILE_PREFIXES):
            continue
        value = env[name].replace(place, _WORKTREE)
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
    return digest.hexdigest()


async def gated_tree(repo: GitRepo, rev: str, cwd: Path | None = None) -> str:
    """A digest of `rev`'s tree without `.autobuild/`: what a gate run actually tests."""
    listing = (await repo.git("ls-tree", rev, cwd=cwd)).stdout
    kept = [line for line in listing.splitlines() if not line.endswith("\t.autobuild")]
    return hashlib.sha256("\n".join(kept).encode()).hexdigest()


async def worktree_tree(repo: GitRepo, worktree: Path) -> str | None:
    """The gated tree of the worktree's HEAD, or None when the worktree holds changes no commit has (then its
    run can't be keyed by a tree and is neither looked up nor stored)."""
    dirty = await repo.git("status", "--porcelain", "--untracked-files=normal", cwd=worktree, check=False)
    if not dirty.ok or dirty.stdout.strip():
        return None
    return await gated_tree(repo, "HEAD", cwd=worktree)


def cache_key(tree: str, command: str, setup: str | None, environment: str) -> str:
    return hashlib.sha256(json.dumps([tree, command, setup or "", environment]).encode()).hexdigest()[:32]


def _same_failure(a: GateResult, b: GateResult) -> bool:
    return (a["exit_code"], a["failing"], a["tests_failed"]) == (b["exit_code"], b["failing"], b["tests_failed"])


@dataclass
class GateCache:
    """The remembered gate runs of one feature's runs, with what this process ran and reused."""

    path: Path
    runs: int = 0
    reused: int = 0
    _entries: dict[str, dict[str, Any]] | None = None
    _locks: dict[str, asyncio.Lock] = field(default_factory=dict)
    _writing: asyncio.Lock = field(default_factory=asyncio.Lock)

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._entries is None:
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                data = {}
            self._entries = data.get("entries", {}) if isinstance(data, dict) else {}
        return self._entries

    def lookup(self, key: str) -> GateResult | None:
        """A run to reuse: a pass, or a failure seen at least twice in a row."""
        entry = self._load().get(key)
        if not isinstance(entry, dict) or not isinstance(entry.get("result"), dict):
            return None
        result: GateResult = entry["result"]
        if result.get("passed") or int(entry.get("seen", 1)) >= 2:
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
        text = json.dumps({"entries": entries}, indent=1, sort_keys=False)
        async with self._writing:  # one write at a time: the file always holds one whole snapshot
            await asyncio.to_thread(_write_atomic, self.path, text)

    async def run(self, key: str | None, gate: Callable[[], Awaitable[GateResult]]) -> GateResult:
        """The remembered run for `key`, else `gate()` run now (one at a time per key) and remembered."""
        if key is None:
            self.runs += 1
            return await gate()
        async with self._locks.setdefault(key, asyncio.Lock()):
            found = await asyncio.to_thread(self.lookup, key)
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
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


async def check_gate_cached(repo: GitRepo, cache: GateCache, feature_id: str, base_sha: str, *,
                            plan_verify: str | None, plan_setup: str | None, verify: str | None, setup: str | None,
                            timeout_s: float, judge_by_counts: bool = False) -> GateSetup:
    """`check_gate`, with the base's run taken from the cache when this base tree was already gated with the same
    command, setup and environment (its summary then says so); a fresh run is remembered for the next one."""
    choice = await asyncio.to_thread(choose_gate, repo.root, plan_verify, verify)
    if choice.command is None or choice.packages:  # a monorepo's base runs are per package: not cached (yet)
        return await check_gate(repo, feature_id, base_sha, plan_verify=plan_verify, plan_setup=plan_setup,
                                verify=verify, setup=setup, timeout_s=timeout_s, judge_by_counts=judge_by_counts,
                                choice=choice)
    setup_command = await asyncio.to_thread(choose_setup, repo.root, plan_setup, setup)
    worktree = repo.worktrees_dir / feature_id / "_baseline"
    environment = await asyncio.to_thread(lambda: env_digest(repo.root, worktree, gate_env(repo.root, worktree)))
    key = cache_key(await gated_tree(repo, base_sha), choice.command, setup_command, environment)
    found = await asyncio.to_thread(cache.lookup, key)
    if found is not None and unusable_base(found, detected=choice.detected, judge_by_counts=judge_by_counts) is None:
        cache.reused += 1
        base = found.copy()
        base["summary"] = f"{found['summary']} (reused: this base tree was gated by an earlier run)"
        return GateSetup(command=choice.command, source=choice.source, setup=setup_command, base=base)
    decided = await check_gate(repo, feature_id, base_sha, plan_verify=plan_verify, plan_setup=plan_setup,
                               verify=verify, setup=setup, timeout_s=timeout_s, judge_by_counts=judge_by_counts,
                               choice=choice)
    if decided["base"] is not None:
        cache.runs += 1
        await cache.store(key, decided["base"])
    return decided
