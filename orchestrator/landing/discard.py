"""`autobuild discard FEAT`: remove a feature's worktrees, its branch and its task branches, keeping a backup
ref of the feature branch (and of every task branch whose work is merged nowhere else) under
`autobuild/discarded/`, printed so it can be restored. Idempotent; refused while the feature runs (repo lock).
Backups from `run --fresh` (`autobuild/FEAT.before-…`), rescued refs, reports and checkpoints stay."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator.errors import InputError
from orchestrator.landing import journal
from orchestrator.plan.ids import check_id
from orchestrator.repo.git import AUTOBUILD_REFS, GitRepo, feature_branch
from orchestrator.repo.lock import repo_lock
from orchestrator.settings import Settings

DISCARDED = "autobuild/discarded/"


def _free_name(repo: GitRepo, wanted: str) -> str:
    name, number = wanted, 1
    while repo.has_branch(name):
        number += 1
        name = f"{wanted}-{number}"
    return name


async def _discard(repo: GitRepo, feature_id: str) -> dict[str, Any]:
    branch = feature_branch(feature_id)
    listed = repo.read("for-each-ref", "--format=%(refname) %(objectname)", f"{AUTOBUILD_REFS}{feature_id}",
                       f"{AUTOBUILD_REFS}{feature_id}.*").stdout.splitlines()
    branches = {ref.removeprefix("refs/heads/"): sha for ref, sha in (line.split(" ", 1) for line in listed)}
    branches = {name: sha for name, sha in branches.items() if ".before-" not in name}
    folder = repo.worktrees_dir / feature_id
    await repo.git("worktree", "prune", check=False)  # forget worktrees whose folders are gone
    for row in repo.worktree_list():
        if row["branch"].removeprefix("refs/heads/") in branches and not Path(row["path"]).is_relative_to(folder):
            raise InputError(f"{row['path']} has {row['branch'].removeprefix('refs/heads/')} checked out: switch it"
                             " to another branch first. Nothing was discarded.")
    tip = branches.get(branch)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backups: list[dict[str, str]] = []
    for name, sha in sorted(branches.items(), key=lambda item: item[0] != branch):
        merged = tip is not None and name != branch and (await repo.is_ancestor(sha, tip))
        if not merged:  # the feature branch itself, and task work merged nowhere else
            suffix = name.removeprefix(branch)
            backup = _free_name(repo, f"{DISCARDED}{feature_id}-{stamp}{suffix}")
            await repo.ensure_branch(backup, sha)
            backups.append({"branch": name, "backup": backup, "sha": sha})
    removed_worktrees = [row["path"] for row in repo.worktree_list() if Path(row["path"]).is_relative_to(folder)]
    for path in removed_worktrees:
        await repo.remove_worktree(Path(path))
    if folder.is_dir():
        shutil.rmtree(folder)
    for name in sorted(branches, key=lambda item: item == branch):  # task branches first, the feature's last
        await repo.delete_branch(name)
    return {"feature": feature_id, "removed_branches": sorted(branches), "removed_worktrees": removed_worktrees,
            "backups": backups,
            "restore": [f"git branch {b['branch']} {b['backup']}" for b in backups]}


async def discard(feature: str, settings: Settings, note: Callable[[str], None]) -> dict[str, Any]:
    """The discard document (also the `--json` output, less its schema version); `note` hears what finishing an
    interrupted landing did. The checks and the lock stay on the caller's loop, as `land`'s do (landing/land.py)."""
    root = settings.repo
    repo = GitRepo(root)
    repo.check(allow_unborn=True)  # an orphan checkout of yours: the base is the plan's branch
    feature_id = check_id("feature", feature)
    with repo_lock(root, f"discard {feature_id}"):
        journal.finish_interrupted(repo, note)
        return await _discard(repo, feature_id)


def discard_text(data: dict[str, Any]) -> str:
    if not (data["removed_branches"] or data["removed_worktrees"]):
        return f"nothing to discard for {data['feature']}"
    lines = [f"removed worktree {path}" for path in data["removed_worktrees"]]
    lines += [f"removed branch {name}" for name in data["removed_branches"]]
    lines += [f"kept {b['branch']} as {b['backup']} ({b['sha'][:10]}); restore: git branch {b['branch']} {b['backup']}"
              for b in data["backups"]]
    lines.append(f"reports and checkpoints stay; `autobuild run {data['feature']} --fresh` starts it over")
    return "\n".join(lines)
