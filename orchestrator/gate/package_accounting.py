"""A monorepo's accounting, package by package: every test that passed in a package's run on the base must pass in
its run on the tree (gate/accounting.py, with the package's files relative to its folder); test ids and files carry
the package's path (`arc::example.com/arc.TestPack`, `arc/arc_test.go`). Not overlaid or screened yet: a changed
expectation in a package shows as its failing base version only where the run itself shows it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from orchestrator.facts import GateResult, PackageGate, TestChange
from orchestrator.gate import accounting
from orchestrator.repo.git import GitRepo


def _inside(folder: str, path: str) -> str | None:
    """`path` relative to the package's folder (None: outside it)."""
    if folder == ".":
        return path
    return path[len(folder) + 1:] if path.startswith(folder + "/") else None


async def account_packages(repo: GitRepo, worktree: Path, against: str,
                           runs: Sequence[tuple[PackageGate, GateResult]]) -> tuple[list[TestChange], list[str]]:
    """What became of each package's base tests in its run on the tree, and the test files the tree changed."""
    renamed, deleted, modified, added = accounting.parse_name_status(await repo.name_status(worktree, against))
    every = await repo.files_at(against)
    changes: list[TestChange] = []
    changed_files: list[str] = []
    for package, run in runs:
        folder, base = package["path"], package["base"]
        if base is None:
            continue
        files = [inner for path in every if (inner := _inside(folder, path)) is not None]

        def local(paths: set[str], folder: str = folder) -> frozenset[str]:
            return frozenset(inner for path in paths if (inner := _inside(folder, path)) is not None)

        moved = {inner: (new, similarity) for old, (new_path, similarity) in renamed.items()
                 if (inner := _inside(folder, old)) is not None and (new := _inside(folder, new_path)) is not None}
        touched = sorted(local({*deleted, *modified, *added, *(new for new, _ in renamed.values())}))
        config = {path: accounting.first_changed_line(await repo.patch_of(worktree, against, _joined(folder, path)))
                  for path in touched if accounting.is_runner_config(path)}
        hosts = accounting.test_hosts(base, files)
        texts = await asyncio.to_thread(_texts, worktree / folder, [p for p in touched
                                                                    if accounting.is_test_file(p) or p in hosts])
        new_of = {old: new for old, (new, _) in moved.items()}
        names = {old: texts[new_of.get(old, old)] for old in {*local(modified), *moved}
                 if new_of.get(old, old) in texts}
        diff = accounting.TreeDiff(renamed=moved, deleted=local(deleted), modified=local(modified),
                                   added=local(added), config_lines=config, names=names, hosts=hosts)
        changed_files += [_joined(folder, path) for path in diff.test_files_changed]
        for change in accounting.account(base, run, diff, files, unstable=base.get("unstable") or []):
            change["test"] = change["test"] if folder == "." else f"{folder}::{change['test']}"
            change["file"] = _joined(folder, change["file"]) if change["file"] else None
            changes.append(change)
    return changes, changed_files


def _joined(folder: str, path: str) -> str:
    return path if folder == "." else f"{folder}/{path}"


def _texts(folder: Path, paths: Sequence[str]) -> dict[str, str]:
    """The text of each of `paths` that is a file under `folder` (blocking: callers run it in a thread)."""
    return {path: (folder / path).read_text(encoding="utf-8", errors="replace") for path in paths
            if (folder / path).is_file()}
