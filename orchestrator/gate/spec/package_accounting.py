"""A monorepo's accounting, package by package: the tree's diff seen from inside a package's folder (its paths
relative to it, as its runner names tests and files), and each of its test changes named back with the package's
path (`arc::example.com/arc.TestPack`, `arc/arc_test.go`). gate/spec/spec_check.py judges each package with these as
it judges the top: the accounting, the base-test overlay and the tamper screen."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from orchestrator.facts import TestChange
from orchestrator.gate.spec import accounting


def inside(folder: str, path: str) -> str | None:
    """`path` relative to the package's folder (None: outside it)."""
    if folder == ".":
        return path
    return path[len(folder) + 1:] if path.startswith(folder + "/") else None


def joined(folder: str, path: str) -> str:
    """A package-relative path as the repository names it."""
    return path if folder == "." else f"{folder}/{path}"


def local_files(folder: str, paths: Iterable[str]) -> list[str]:
    """The paths under the package's folder, relative to it."""
    return [inner for path in paths if (inner := inside(folder, path)) is not None]


def local_diff(diff: accounting.TreeDiff, folder: str) -> accounting.TreeDiff:
    """The tree's diff as the package sees it: only its own paths, relative to its folder (a rename out of it is a
    deletion there)."""
    if folder == ".":
        return diff

    def local(paths: Iterable[str]) -> frozenset[str]:
        return frozenset(local_files(folder, paths))

    renamed = {inner: (new, similarity) for old, (new_path, similarity) in diff.renamed.items()
               if (inner := inside(folder, old)) is not None and (new := inside(folder, new_path)) is not None}
    out = {old for old, (new_path, _) in diff.renamed.items() if inside(folder, new_path) is None}
    return accounting.TreeDiff(
        renamed=renamed, deleted=local({*diff.deleted, *out}), modified=local(diff.modified),
        added=local(diff.added),
        config_lines={inner: line for path, line in diff.config_lines.items() if (inner := inside(folder, path))},
        names={inner: text for path, text in diff.names.items() if (inner := inside(folder, path))},
        hosts=local(diff.hosts),
        inherited={f"{inner}::{name}": module for key, path in diff.inherited.items()
                   for test_file, _, name in [key.rpartition("::")]
                   if (inner := inside(folder, test_file)) and (module := inside(folder, path))})


def named_in_repo(changes: Sequence[TestChange], folder: str) -> list[TestChange]:
    """A package's test changes with the package's path in their test ids and files."""
    if folder == ".":
        return list(changes)
    return [TestChange(test=f"{folder}::{change['test']}", fate=change["fate"], detail=change["detail"],
                       file=joined(folder, change["file"]) if change["file"] else None, accepted=change["accepted"])
            for change in changes]
