"""Base checks shared by a test session's runs: a base an earlier test already checked is not run again.

Every feature run (and `judged()`) checks its base before judging a task: the gate runs twice on the base tree
(the second run finds unstable tests). A second feature on the same base reuses that run from the repository's
gate cache, but tests build a fresh repository each, so each paid both runs again for the same few bases. Here,
after a test's base check, the base's run its repository's gate cache holds (only what the cache would reuse: a
pass, or a failure both runs showed) is remembered under a key that holds everything the cache's key holds but the
repository's own path (its tree, command, setup, the environment with that path normalised away), in the session's
folder all xdist workers share. A later test's fresh repository with that key gets the run in its gate cache before
its run starts, as an earlier run of its own would have left it: the base check reuses it (unless it could not
gate: then it runs). What the tests judge, the tasks' runs, still runs in every test. Tests about the base check
itself (`pytest.mark.base_check`) always run it: tests/graph/conftest.py sets `folder` to None for them.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from orchestrator.facts import GateResult
from orchestrator.gate import GateRequest, Gates
from orchestrator.gate.baseline import choose_setup
from orchestrator.gate.cache import GateCache, env_digest, gated_tree
from orchestrator.gate.choose.detect import choose_gate
from orchestrator.gate.prepare.environment import gate_env
from orchestrator.repo.git import GitRepo

folder: Path | None = None
"""Where the session's checked bases are kept (None: not shared, a test about the base check)."""
_ROOT = "<repo>"


@dataclass(frozen=True)
class BaseKeys:
    """Where a repository's gate cache files its base's run (`filed`), and the file of the place-free key."""

    root: Path
    filed: str
    known: Path


async def seed(gates: Gates, feature_id: str, base_sha: str) -> BaseKeys | None:
    """The base's keys (None: nothing to share); the repository's gate cache given the base's run if known."""
    cache = gates.cache
    if folder is None or cache is None or (filed := await gates.base_key(feature_id, base_sha)) is None:
        return None
    shared = await _shared_key(gates.repo, feature_id, base_sha, gates.request)
    keys = BaseKeys(gates.repo.root, filed, folder / f"base-{hashlib.sha256(shared.encode()).hexdigest()[:32]}.json")
    known = await asyncio.to_thread(_read, keys.known)
    if known is not None and await asyncio.to_thread(cache.lookup, filed) is None:
        for _ in range(1 if known["passed"] else 2):  # a failure is reused once seen twice, as the base check's
            await cache.store(filed, known)  # two runs saw it
    return keys


async def remember(keys: BaseKeys | None) -> None:
    """Keep the base's run the repository's gate cache now holds, when the cache would reuse it."""
    if keys is None or keys.known.exists():
        return
    found = await asyncio.to_thread(GateCache.for_repo(keys.root).lookup, keys.filed)  # as the run left it
    if found is not None:
        part = keys.known.with_name(f"{keys.known.name}.{os.getpid()}")
        await asyncio.to_thread(part.write_text, json.dumps(found))
        await asyncio.to_thread(part.replace, keys.known)  # whole or absent for another worker


async def before_run(repo: Path, target: str, options: dict[str, Any]) -> BaseKeys | None:
    """`seed` for a workflow run of `target`'s plan in `repo` from its current branch, with the run's `options`."""
    if folder is None or not (plan := repo / ".autobuild" / "features" / f"{target}.yaml").is_file():
        return None
    data = yaml.safe_load(plan.read_text()) or {}
    if not isinstance(data, dict):
        return None
    request = GateRequest(plan_verify=data.get("verify"), plan_setup=data.get("setup"),
                          verify=options.get("verify"), setup=options.get("setup"))
    git = GitRepo(repo)
    base = await asyncio.to_thread(lambda: git.rev(git.current_branch()))
    return await seed(Gates(git, request), target, base)


def _read(path: Path) -> GateResult | None:
    try:
        found: GateResult = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return found


async def _shared_key(git: GitRepo, feature_id: str, base: str, request: GateRequest) -> str:
    """The cache key's parts with the repository's path normalised out of the environment."""
    root = git.root
    worktree = git.worktrees_dir / feature_id / "_baseline"

    def parts() -> list[str | None]:
        choice = choose_gate(root, request.plan_verify, request.verify)
        env = {name: value.replace(str(root), _ROOT) for name, value in gate_env(root, worktree).items()}
        return [choice.command, choose_setup(root, request.plan_setup, request.setup), env_digest(root, worktree, env)]

    return json.dumps([await gated_tree(git, base), *await asyncio.to_thread(parts)])
