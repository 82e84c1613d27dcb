"""A turn's diff for the task page: the files the player's turn commit changed, a page of them at a time, each
file's diff cut at a cap; binary files are named, never shown. Read from the repository with our guarded git
(no external diff driver, no textconv: a hostile repo's attributes run nothing)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from orchestrator.repo.git import GitRepo

FILES_PER_PAGE = 20
MAX_FILE_LINES = 400
MAX_FILE_CHARS = 64_000
_SHA = re.compile(r"[0-9a-f]{7,64}")
_QUIET = ("--no-ext-diff", "--no-textconv", "--no-color", "--no-renames")


@dataclass(frozen=True)
class FileDiff:
    """One changed file: its path, lines added and removed (None for a binary file), its diff text (cut)."""

    path: str
    added: int | None
    removed: int | None
    text: str
    cut: bool

    @property
    def binary(self) -> bool:
        return self.added is None


@dataclass(frozen=True)
class TurnDiff:
    """The page of a turn's diff: its files, which page of how many, and why there is none when there is none."""

    files: list[FileDiff]
    page: int
    pages: int
    total_files: int
    missing: str = ""


def _numstat(git: GitRepo, before: str, after: str) -> list[tuple[str, int | None, int | None]] | None:
    done = git.read("diff", *_QUIET, "--numstat", "-z", before, after)
    if not done.ok:
        return None
    found: list[tuple[str, int | None, int | None]] = []
    for record in done.stdout.split("\0"):
        parts = record.split("\t", 2)
        if len(parts) != 3:
            continue
        added, removed, path = parts
        binary = added == "-" and removed == "-"
        found.append((path, None if binary else int(added), None if binary else int(removed)))
    return found


def _file_text(git: GitRepo, before: str, after: str, path: str) -> tuple[str, bool]:
    text = git.read("diff", *_QUIET, before, after, "--", f":(literal){path}").stdout
    lines = text.splitlines()
    cut = len(lines) > MAX_FILE_LINES or len(text) > MAX_FILE_CHARS
    if cut:
        text = "\n".join(lines[:MAX_FILE_LINES])[:MAX_FILE_CHARS]
    return text, cut


def turn_diff(repo: Path, before: str | None, after: str | None, page: int = 0) -> TurnDiff:
    """The diff `before`..`after` (the turn's commit against the one before it), page `page` of its files."""
    if not after or not _SHA.fullmatch(after) or (before is not None and not _SHA.fullmatch(before)):
        return TurnDiff([], 0, 0, 0, "this turn recorded no commit")
    git = GitRepo(repo)
    stats = _numstat(git, before or f"{after}^", after)
    if stats is None:
        return TurnDiff([], 0, 0, 0, f"the commit {after[:12]} is no longer in the repository (a discard or a gc)")
    pages = max(1, -(-len(stats) // FILES_PER_PAGE))
    page = min(max(0, page), pages - 1)
    shown = []
    for path, added, removed in stats[page * FILES_PER_PAGE:(page + 1) * FILES_PER_PAGE]:
        text, cut = ("", False) if added is None else _file_text(git, before or f"{after}^", after, path)
        shown.append(FileDiff(path, added, removed, text, cut))
    return TurnDiff(shown, page, pages, len(stats))
