"""`autobuild clean [FEAT] [--db]`: leftover worktrees and task branches (never feature branches or backups),
and finished threads of the checkpoint DB when asked."""

from __future__ import annotations

import argparse
import asyncio
import shutil
from pathlib import Path

from orchestrator.cli import output
from orchestrator.cli.read import repo_and_db
from orchestrator.plan.ids import check_id
from orchestrator.repo.git import GitRepo
from orchestrator.repo.lock import repo_lock
from orchestrator.settings import Settings
from orchestrator.store import inspection
from orchestrator.store.checkpoints import CheckpointStore


def clean(args: argparse.Namespace, settings: Settings) -> int:
    """Remove worktrees and task branches left by interrupted runs; feature branches always stay."""
    GitRepo(settings.repo).check()
    with repo_lock(settings.repo, f"clean {args.feature or ''}".strip()):
        return _clean(args, settings)


def _clean(args: argparse.Namespace, settings: Settings) -> int:
    prune = args.prune_db or args.db is not None
    repo_path, db = repo_and_db(settings, args.feature)
    feature = check_id("feature", args.feature) if args.feature else None
    removed, kept = asyncio.run(_clean_repo(GitRepo(repo_path), feature))
    pruned = _prune_db(db, feature) if prune and db.exists() else []
    result = {"removed": removed, "kept": kept, "pruned_threads": pruned}
    return output.print_document(result, args.json, lambda r: "\n".join(
        [f"removed {item}" for item in r["removed"]] + [f"pruned thread {t}" for t in r["pruned_threads"]]
        + [f"kept {b}: it holds work merged nowhere else (delete it yourself: git branch -D {b})"
           for b in r["kept"]]) or "nothing to clean")


async def _clean_repo(repo: GitRepo, feature: str | None) -> tuple[list[str], list[str]]:
    """Through the repo's guarded write path: worktrees under ours, then task branches merged into their
    feature branch. Returns (removed, kept)."""
    removed: list[str] = []
    base = repo.worktrees_dir / feature if feature else repo.worktrees_dir
    for row in repo.worktree_list():
        if Path(row["path"]).is_relative_to(base):
            await repo.remove_worktree(Path(row["path"]))  # also prunes one whose folder is gone
            removed.append(row["path"])
    if base.is_dir():
        shutil.rmtree(base)
    pattern = f"refs/heads/autobuild/{feature}.*" if feature else "refs/heads/autobuild/*.*"
    kept: list[str] = []
    for branch in repo.read("for-each-ref", "--format=%(refname:short)", pattern).stdout.split():
        name = branch.removeprefix("autobuild/")
        if "/" in name or ".before-" in name or name.endswith(".AUTO-RUN.md"):
            continue  # backups (`run --fresh`), rescued refs and a run by URL's reports are never cleaned
        if await repo.is_ancestor(branch, f"autobuild/{name.split('.', 1)[0]}"):
            await repo.delete_branch(branch)
            removed.append(branch)
        else:  # its work exists nowhere else (a conflict, an interrupted task): the user decides
            kept.append(branch)
    return removed, kept


def _prune_db(db: CheckpointStore, feature: str | None) -> list[str]:
    finished = [row["thread"] for row in inspection.list_features(db) if row["finished"]]
    targets = [t for t in finished if feature is None or t == feature or t.startswith(f"{feature}:")]
    db.delete_threads(targets)
    return targets
