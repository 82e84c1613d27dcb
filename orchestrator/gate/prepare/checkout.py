"""A gate run judges the commit's own files: every tracked file of a task's worktree whose content, mode or type
is not the commit's is put back, whatever the worktree's index says. The index is the agents' to write (a
worktree's git admin folder is writable in their sandbox): a `--skip-worktree` or `--assume-unchanged` flag, or a
forged stat, hides an edit from `git status` and from `git reset --hard`. So the index is read again from the
commit (no flag, no stat), every file hashed against it, and what differs checked out; the same inside each
checked-out submodule, at the commit the tree records for it (its own index and HEAD are the agents' too), and a
submodule that is not checked out is emptied again. A tracked file setup changed (an install rewriting a lockfile)
is kept while it holds what setup made of it."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Mapping
from pathlib import Path

from orchestrator.errors import GitError
from orchestrator.repo.git import GitRepo


def _emptied(folder: Path) -> list[str]:
    """What lies in a submodule's folder that is not checked out (git made it empty), removed: the names."""
    if folder.is_symlink() or not folder.is_dir():
        return []
    names = []
    for child in sorted(folder.iterdir()):
        shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
        names.append(child.name)
    return names


async def _submodule_commits(repo: GitRepo, worktree: Path) -> dict[str, str]:
    """The submodules the worktree's commit records: path -> the commit it records for each (read once per commit:
    every gate run on a tree asks)."""
    try:
        entries = await repo.listing(await repo.head(worktree), "-r")
    except GitError:  # no commit to read: no submodule either
        return {}
    found = {}
    for entry in entries:
        meta, _, path = entry.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "commit":
            found[path] = parts[2]
    return found


async def _differing(repo: GitRepo, checkout: Path, commit: str) -> list[str]:
    """`checkout`'s index read again from `commit` and its files hashed against it: the paths that differ (edited,
    deleted, another mode or type; submodules aside)."""
    await repo.git("read-tree", commit, cwd=checkout)
    await repo.git("update-index", "-q", "--really-refresh", cwd=checkout, check=False)  # hashes every file
    listed = await repo.git("diff-files", "--name-only", "-z", "--ignore-submodules=all", cwd=checkout, check=False)
    return [path for path in listed.stdout.split("\0") if path]


async def _blobs(repo: GitRepo, checkout: Path, paths: list[str]) -> dict[str, str]:
    """The blob id of each of `paths` that is a file in `checkout`, as its content is now."""
    files = [path for path in paths if (checkout / path).is_file() and not (checkout / path).is_symlink()]
    hashed = await repo.git("hash-object", "--no-filters", "--", *files, cwd=checkout, check=False) if files else None
    return dict(zip(files, hashed.stdout.split(), strict=False)) if hashed is not None and hashed.ok else {}


async def changed_tracked(repo: GitRepo, worktree: Path) -> dict[str, str]:
    """The tracked files of a worktree that differ from its commit now (after setup), by their content's blob."""
    return await _blobs(repo, worktree, await _differing(repo, worktree, "HEAD"))


async def _files_back(repo: GitRepo, checkout: Path, commit: str, keep: Mapping[str, str] | None = None
                      ) -> list[str]:
    """The files of `checkout` that differ from `commit` checked out as it has them, but those `keep` names by the
    content they still hold (what setup made of them): the paths put back."""
    paths = await _differing(repo, checkout, commit)
    if keep:
        now = await _blobs(repo, checkout, [path for path in paths if path in keep])
        paths = [path for path in paths if path not in keep or now.get(path) != keep[path]]
    for start in range(0, len(paths), 500):  # a command line of bounded length
        await repo.git("checkout-index", "-f", "--", *paths[start:start + 500], cwd=checkout, check=False)
    if paths:
        await repo.git("update-index", "-q", "--refresh", cwd=checkout, check=False)
    return paths


async def put_back(repo: GitRepo, worktree: Path, keep: Mapping[str, str] | None = None) -> list[str]:
    """Every tracked file of `worktree` (and of its checked-out submodules) back to what its commit holds, but
    those setup changed while they hold what it made (`keep`: path -> blob): the paths that were not (a
    submodule's named below its path)."""
    changed = await _files_back(repo, worktree, "HEAD", keep)
    for path, commit in sorted((await _submodule_commits(repo, worktree)).items()):
        inside = worktree / path
        if not (inside / ".git").exists():  # not checked out: git sees nothing written there, the gate would
            changed += [f"{path}/{name}" for name in await asyncio.to_thread(_emptied, inside)]
            continue
        moved = await repo.git("rev-parse", "HEAD", cwd=inside, check=False)
        if moved.stdout.strip() != commit:
            await repo.git("reset", "-q", "--hard", commit, cwd=inside, check=False)
            changed.append(path)
        changed += [f"{path}/{inner}" for inner in await _files_back(repo, inside, commit)]
        left = await repo.git("clean", "-ffdx", cwd=inside, check=False)  # a submodule's untracked files too
        changed += [f"{path}/{line.removeprefix('Removing ')}" for line in left.stdout.splitlines() if line]
    return changed
